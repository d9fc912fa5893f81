/*
 * The date/time types in the server's ISO DateStyle and postgres
 * IntervalStyle (EncodeDateOnly, EncodeTimeOnly, EncodeDateTime,
 * EncodeInterval): "2024-03-10 01:59:59.5-06", "0044-03-15 BC",
 * "-1 years -2 mons +3 days -04:05:06". A timestamptz is shown in the
 * context's zone, with the offset the server writes ("+05:30", "-05:50:36").
 */
#include "types/text_out_internal.h"

#define USEC_PER_SEC  INT64_C(1000000)
#define USEC_PER_MIN  (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MIN)
#define USEC_PER_DAY  (24 * USEC_PER_HOUR)
/* timetz offsets: the server accepts less than 16 hours either way. */
#define TZ_DISP_LIMIT (16 * 3600)

static int put2(pgw__text_out_t *t, int64_t v)
{
    return pgw__text_put_u64(t, (uint64_t)v, 0, 2);
}

/* AppendSeconds: two digits, then up to six fraction digits without
 * trailing zeros (signs are the caller's). */
static int put_seconds(pgw__text_out_t *t, int64_t sec, int64_t usec)
{
    int rc = put2(t, sec < 0 ? -sec : sec);
    if (rc < 0 || usec == 0) return rc;
    char frac[7] = {'.'};
    uint64_t u = (uint64_t)(usec < 0 ? -usec : usec);
    int n = 6;
    for (int i = 6; i >= 1; i--, u /= 10)
        frac[i] = (char)('0' + u % 10);
    while (frac[n] == '0')
        n--;
    return pgw__text_put(t, frac, (size_t)n + 1);
}

/* EncodeTimezone: the offset east of UTC as +hh, +hh:mm or +hh:mm:ss. */
static int put_offset(pgw__text_out_t *t, int64_t gmtoff)
{
    int64_t a = gmtoff < 0 ? -gmtoff : gmtoff;
    int64_t h = a / 3600, m = a / 60 % 60, s = a % 60;
    int rc = pgw__text_putc(t, gmtoff >= 0 ? '+' : '-');
    if (rc == 0) rc = put2(t, h);
    if (rc == 0 && (m || s)) {
        rc = pgw__text_putc(t, ':');
        if (rc == 0) rc = put2(t, m);
    }
    if (rc == 0 && s) {
        rc = pgw__text_putc(t, ':');
        if (rc == 0) rc = put2(t, s);
    }
    return rc;
}

/* The date of days since 1970-01-01: yyyy-mm-dd, years before 1 as BC
 * years (the " BC" suffix is the caller's, after the time). */
static int put_ymd(pgw__text_out_t *t, int64_t unix_days, bool *bc)
{
    int64_t y;
    int32_t m, d;
    pgw__civil_from_days(unix_days, &y, &m, &d);
    *bc = y <= 0;
    int rc = pgw__text_put_u64(t, (uint64_t)(y > 0 ? y : 1 - y), 0, 4);
    if (rc == 0) rc = pgw__text_putc(t, '-');
    if (rc == 0) rc = put2(t, m);
    if (rc == 0) rc = pgw__text_putc(t, '-');
    return rc == 0 ? put2(t, d) : rc;
}

/* hh:mm:ss[.ffffff] of usec since midnight (0..24:00:00). */
static int put_hms(pgw__text_out_t *t, int64_t usec)
{
    int rc = put2(t, usec / USEC_PER_HOUR);
    if (rc == 0) rc = pgw__text_putc(t, ':');
    if (rc == 0) rc = put2(t, usec / USEC_PER_MIN % 60);
    if (rc == 0) rc = pgw__text_putc(t, ':');
    return rc == 0 ? put_seconds(t, usec / USEC_PER_SEC % 60, usec % USEC_PER_SEC) : rc;
}

static int put_bc(pgw__text_out_t *t, bool bc)
{
    return bc ? pgw__text_puts(t, " BC") : 0;
}

/* date_out */
static int put_date(pgw__text_out_t *t, int32_t days)
{
    if (days == PGW_DATE_NEG_INFINITY) return pgw__text_puts(t, "-infinity");
    if (days == PGW_DATE_INFINITY) return pgw__text_puts(t, "infinity");
    bool bc;
    int rc = put_ymd(t, (int64_t)days + PGW_EPOCH_DIFF_DAYS, &bc);
    return rc == 0 ? put_bc(t, bc) : rc;
}

/* The fields of local, a wall-clock reading in usec since 2000, then the
 * offset when with_tz. */
static int put_datetime(pgw__text_out_t *t, int64_t local, bool with_tz, int32_t gmtoff)
{
    int64_t days = pgw__floor_div(local, USEC_PER_DAY);
    bool bc;
    int rc = put_ymd(t, days + PGW_EPOCH_DIFF_DAYS, &bc);
    if (rc == 0) rc = pgw__text_putc(t, ' ');
    if (rc == 0) rc = put_hms(t, local - days * USEC_PER_DAY);
    if (rc == 0 && with_tz) rc = put_offset(t, gmtoff);
    return rc == 0 ? put_bc(t, bc) : rc;
}

/* timestamp_out, timestamptz_out */
static int put_timestamp(pgw__text_out_t *t, int64_t usec, bool with_tz)
{
    if (usec == PGW_TS_NEG_INFINITY) return pgw__text_puts(t, "-infinity");
    if (usec == PGW_TS_INFINITY) return pgw__text_puts(t, "infinity");
    if (usec < PGW__TS_MIN_USEC || usec >= PGW__TS_END_USEC) return PGW_ERANGE;
    if (!with_tz) return put_datetime(t, usec, false, 0);
    if (t->ctx->flags & PGW_TEXT_TZ_UNKNOWN) return PGW_ENOTFOUND;
    int32_t gmtoff = 0;
    /* The server looks the zone up at the whole second (floor). */
    int64_t unix_sec = pgw__floor_div(usec, USEC_PER_SEC) + PGW_EPOCH_DIFF_USEC / USEC_PER_SEC;
    if (t->ctx->tz) pgw_tz_gmtoff(t->ctx->tz, unix_sec, &gmtoff);
    return put_datetime(t, usec + gmtoff * USEC_PER_SEC, true, gmtoff);
}

/* interval_out, IntervalStyle postgres (AddPostgresIntPart): each non-zero
 * part with its sign, a "+" after a negative part, then the time when
 * non-zero or when everything is. */
typedef struct interval_parts {
    bool is_zero, is_before;
} interval_parts_t;

static int put_part(pgw__text_out_t *t, interval_parts_t *s, int64_t v, const char *unit)
{
    if (v == 0) return 0;
    int rc = s->is_zero ? 0 : pgw__text_putc(t, ' ');
    if (rc == 0 && s->is_before && v > 0) rc = pgw__text_putc(t, '+');
    if (rc == 0) rc = pgw__text_put_i64(t, v);
    if (rc == 0) rc = pgw__text_putc(t, ' ');
    if (rc == 0) rc = pgw__text_puts(t, unit);
    if (rc == 0 && v != 1) rc = pgw__text_putc(t, 's');
    s->is_before = v < 0;
    s->is_zero = false;
    return rc;
}

static int put_interval(pgw__text_out_t *t, int64_t time, int32_t days, int32_t months)
{
    interval_parts_t s = {true, false};
    int rc = put_part(t, &s, months / 12, "year");
    if (rc == 0) rc = put_part(t, &s, months % 12, "mon");
    if (rc == 0) rc = put_part(t, &s, days, "day");
    if (rc < 0 || (!s.is_zero && time == 0)) return rc;
    int64_t hour = time / USEC_PER_HOUR, min = time / USEC_PER_MIN % 60;
    int64_t sec = time / USEC_PER_SEC % 60, usec = time % USEC_PER_SEC;
    bool minus = hour < 0 || min < 0 || sec < 0 || usec < 0;
    if (!s.is_zero) rc = pgw__text_putc(t, ' ');
    if (rc == 0 && (minus || s.is_before)) rc = pgw__text_putc(t, minus ? '-' : '+');
    if (rc == 0) rc = pgw__text_put_u64(t, (uint64_t)(hour < 0 ? -hour : hour), 0, 2);
    if (rc == 0) rc = pgw__text_putc(t, ':');
    if (rc == 0) rc = put2(t, min < 0 ? -min : min);
    if (rc == 0) rc = pgw__text_putc(t, ':');
    return rc == 0 ? put_seconds(t, sec, usec) : rc;
}

/* time_out, timetz_out */
static int put_time(pgw__text_out_t *t, const uint8_t *p, int32_t len, bool with_tz)
{
    if (len != (with_tz ? 12 : 8)) return PGW_EFORMAT;
    int64_t usec = (int64_t)pgw__get64(p);
    if (usec < 0 || usec > USEC_PER_DAY) return PGW_EFORMAT;
    int rc = put_hms(t, usec);
    if (rc < 0 || !with_tz) return rc;
    int32_t west = (int32_t)pgw__get32(p + 8); /* the binary form counts west */
    if (west <= -TZ_DISP_LIMIT || west >= TZ_DISP_LIMIT) return PGW_EFORMAT;
    return put_offset(t, -(int64_t)west);
}

int pgw__text_datetime(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    if (t->ctx->flags & PGW_TEXT_OTHER_STYLE) return PGW_ENOTSUP;
    switch (oid) {
    case PGW_OID_DATE:
        return len == 4 ? put_date(t, (int32_t)pgw__get32(p)) : PGW_EFORMAT;
    case PGW_OID_TIME:
        return put_time(t, p, len, false);
    case PGW_OID_TIMETZ:
        return put_time(t, p, len, true);
    case PGW_OID_TIMESTAMP:
    case PGW_OID_TIMESTAMPTZ:
        if (len != 8) return PGW_EFORMAT;
        return put_timestamp(t, (int64_t)pgw__get64(p), oid == PGW_OID_TIMESTAMPTZ);
    default: /* interval: time, days, months */
        if (len != 16) return PGW_EFORMAT;
        return put_interval(t, (int64_t)pgw__get64(p), (int32_t)pgw__get32(p + 8),
                            (int32_t)pgw__get32(p + 12));
    }
}
