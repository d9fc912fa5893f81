/*
 * date, time, timetz, timestamp, timestamptz, interval: the binary forms
 * read as is, the ISO DateStyle / postgres IntervalStyle text forms parsed
 * by hand, and calendar arithmetic on the proleptic Gregorian calendar.
 * No libc time or locale function is called: a timestamp is never shifted
 * by the client's time zone.
 */
#include "types/types_internal.h"

#define USEC_PER_SEC    INT64_C(1000000)
#define USEC_PER_DAY    INT64_C(86400000000)
#define UNIX_TO_PG_DAYS 10957

/* ------------------------------------------------------------------------ */
/* Calendar                                                                 */
/* ------------------------------------------------------------------------ */

int64_t pgw__days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void pgw__civil_from_days(int64_t z, int64_t *y, int32_t *m, int32_t *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int32_t)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int32_t)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

int64_t pgw__floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Years beyond this cannot be a date or timestamp (dates end in 5874897). */
#define YEAR_LIMIT 6000000

int pgw_date_from_ymd(int32_t year, int32_t month, int32_t day, int32_t *days)
{
    if (!days) return PGW_EINVAL;
    if (year < -YEAR_LIMIT || year > YEAR_LIMIT || month < 1 || month > 12 || day < 1 ||
        day > days_in_month(year, month))
        return PGW_ERANGE;
    int64_t d = pgw__days_from_civil(year, month, day) - UNIX_TO_PG_DAYS;
    if (d <= INT32_MIN || d >= INT32_MAX) return PGW_ERANGE;
    *days = (int32_t)d;
    return 0;
}

int pgw_date_to_tm(int32_t days, pgw_tm_t *out)
{
    if (!out) return PGW_EINVAL;
    if (days == PGW_DATE_INFINITY || days == PGW_DATE_NEG_INFINITY) return PGW_ERANGE;
    int64_t y;
    memset(out, 0, sizeof *out);
    pgw__civil_from_days((int64_t)days + UNIX_TO_PG_DAYS, &y, &out->month, &out->day);
    out->year = (int32_t)y;
    return 0;
}

int pgw_timestamp_to_tm(int64_t pg_usec, pgw_tm_t *out)
{
    if (!out) return PGW_EINVAL;
    /* Also excludes the infinities, which lie outside. A hostile binary value
     * beyond the range would break down to a date that cannot convert back. */
    if (pg_usec < PGW__TS_MIN_USEC || pg_usec >= PGW__TS_END_USEC) return PGW_ERANGE;
    int64_t days = pgw__floor_div(pg_usec, USEC_PER_DAY);
    int64_t rem = pg_usec - days * USEC_PER_DAY;
    int64_t y;
    memset(out, 0, sizeof *out);
    pgw__civil_from_days(days + UNIX_TO_PG_DAYS, &y, &out->month, &out->day);
    out->year = (int32_t)y;
    out->usec = (int32_t)(rem % USEC_PER_SEC);
    rem /= USEC_PER_SEC;
    out->sec = (int32_t)(rem % 60);
    out->min = (int32_t)(rem / 60 % 60);
    out->hour = (int32_t)(rem / 3600);
    return 0;
}

int pgw_tm_to_timestamp(const pgw_tm_t *tm, int64_t *pg_usec)
{
    if (!tm || !pg_usec) return PGW_EINVAL;
    int32_t days;
    int rc = pgw_date_from_ymd(tm->year, tm->month, tm->day, &days);
    if (rc < 0) return rc;
    if (tm->hour < 0 || tm->hour > 23 || tm->min < 0 || tm->min > 59 || tm->sec < 0 ||
        tm->sec > 59 || tm->usec < 0 || tm->usec >= USEC_PER_SEC || tm->gmtoff < -86400 * 7 ||
        tm->gmtoff > 86400 * 7)
        return PGW_ERANGE;
    /* Days are bounded by YEAR_LIMIT: the products cannot overflow int64
     * except at the very top, which the checks below catch. */
    int64_t secs = ((int64_t)tm->hour * 60 + tm->min) * 60 + tm->sec - tm->gmtoff;
    if (days > INT64_MAX / USEC_PER_DAY - 1 || days < INT64_MIN / USEC_PER_DAY + 1)
        return PGW_ERANGE;
    int64_t base = (int64_t)days * USEC_PER_DAY;
    int64_t add = secs * USEC_PER_SEC + tm->usec;
    if ((add > 0 && base > INT64_MAX - 1 - add) || (add < 0 && base < INT64_MIN + 1 - add))
        return PGW_ERANGE;
    *pg_usec = base + add;
    return 0;
}

int pgw_timestamp_to_unix(int64_t pg_usec, int64_t *unix_usec)
{
    if (!unix_usec) return PGW_EINVAL;
    if (pg_usec == PGW_TS_INFINITY || pg_usec == PGW_TS_NEG_INFINITY) return PGW_ERANGE;
    if (pg_usec > INT64_MAX - PGW_EPOCH_DIFF_USEC) return PGW_ERANGE;
    *unix_usec = pg_usec + PGW_EPOCH_DIFF_USEC;
    return 0;
}

int pgw_timestamp_from_unix(int64_t unix_usec, int64_t *pg_usec)
{
    if (!pg_usec) return PGW_EINVAL;
    if (unix_usec < INT64_MIN + 1 + PGW_EPOCH_DIFF_USEC) return PGW_ERANGE;
    int64_t r = unix_usec - PGW_EPOCH_DIFF_USEC;
    if (r == PGW_TS_INFINITY) return PGW_ERANGE;
    *pg_usec = r;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Text scanning                                                            */
/* ------------------------------------------------------------------------ */

typedef struct cur {
    const char *s;
    size_t i, len;
} cur_t;

static int at_end(const cur_t *c)
{
    return c->i >= c->len;
}

static int peek(const cur_t *c)
{
    return c->i < c->len ? (unsigned char)c->s[c->i] : -1;
}

static int accept_ch(cur_t *c, char ch)
{
    if (peek(c) != (unsigned char)ch) return 0;
    c->i++;
    return 1;
}

/* Between min and max decimal digits into *out (no sign). */
static int digits(cur_t *c, int min, int max, int64_t *out)
{
    int n = 0;
    int64_t v = 0;
    while (n < max && c->i < c->len && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        v = v * 10 + (c->s[c->i++] - '0');
        n++;
    }
    if (n < min) return PGW_EFORMAT;
    *out = v;
    return 0;
}

/* ".ffffff" (1 to 6 digits) as microseconds, or 0 when absent. */
static int fraction(cur_t *c, int32_t *usec)
{
    *usec = 0;
    if (!accept_ch(c, '.')) return 0;
    int64_t v;
    size_t start = c->i;
    if (digits(c, 1, 6, &v) < 0) return PGW_EFORMAT;
    for (size_t n = c->i - start; n < 6; n++)
        v *= 10;
    if (peek(c) >= '0' && peek(c) <= '9') return PGW_EFORMAT; /* more than 6 */
    *usec = (int32_t)v;
    return 0;
}

static int word(const cur_t *c, const char *w)
{
    size_t n = strlen(w);
    return c->len - c->i == n && memcmp(c->s + c->i, w, n) == 0;
}

/* YYYY-MM-DD (year: 1 to 7 digits); the BC suffix is read by the caller. */
static int scan_ymd(cur_t *c, pgw_tm_t *tm)
{
    int64_t y, m, d;
    if (digits(c, 1, 7, &y) < 0 || !accept_ch(c, '-') || digits(c, 2, 2, &m) < 0 ||
        !accept_ch(c, '-') || digits(c, 2, 2, &d) < 0)
        return PGW_EFORMAT;
    tm->year = (int32_t)y;
    tm->month = (int32_t)m;
    tm->day = (int32_t)d;
    return 0;
}

/* HH:MM:SS[.ffffff]; max_hour 24 for time (24:00:00 only). */
static int scan_hms(cur_t *c, pgw_tm_t *tm, int max_hour)
{
    int64_t h, mi, s;
    if (digits(c, 2, 2, &h) < 0 || !accept_ch(c, ':') || digits(c, 2, 2, &mi) < 0 ||
        !accept_ch(c, ':') || digits(c, 2, 2, &s) < 0)
        return PGW_EFORMAT;
    int rc = fraction(c, &tm->usec);
    if (rc < 0) return rc;
    if (h > max_hour || mi > 59 || s > 59) return PGW_ERANGE;
    if (h == 24 && (mi || s || tm->usec)) return PGW_ERANGE;
    tm->hour = (int32_t)h;
    tm->min = (int32_t)mi;
    tm->sec = (int32_t)s;
    return 0;
}

/* [+-]HH[:MM[:SS]] as seconds east of UTC. */
static int scan_offset(cur_t *c, int32_t *gmtoff)
{
    int sign = peek(c) == '-' ? -1 : 1;
    if (!accept_ch(c, '+') && !accept_ch(c, '-')) return PGW_EFORMAT;
    int64_t h, m = 0, s = 0;
    if (digits(c, 2, 2, &h) < 0) return PGW_EFORMAT;
    if (accept_ch(c, ':')) {
        if (digits(c, 2, 2, &m) < 0) return PGW_EFORMAT;
        if (accept_ch(c, ':') && digits(c, 2, 2, &s) < 0) return PGW_EFORMAT;
    }
    if (m > 59 || s > 59) return PGW_ERANGE;
    *gmtoff = (int32_t)(sign * (h * 3600 + m * 60 + s));
    return 0;
}

/* " BC" at the end turns the year astronomical: 1 BC is year 0. */
static int scan_era(cur_t *c, pgw_tm_t *tm)
{
    if (at_end(c)) return 0;
    if (!word(c, " BC")) return PGW_EFORMAT;
    c->i = c->len;
    if (tm->year < 1) return PGW_EFORMAT;
    tm->year = 1 - tm->year;
    return 0;
}

int pgw__parse_date(const char *s, size_t len, int32_t *days)
{
    cur_t c = {s, 0, len};
    if (word(&c, "infinity")) return *days = PGW_DATE_INFINITY, 0;
    if (word(&c, "-infinity")) return *days = PGW_DATE_NEG_INFINITY, 0;
    pgw_tm_t tm = {0};
    int rc = scan_ymd(&c, &tm);
    if (rc == 0) rc = scan_era(&c, &tm);
    if (rc < 0) return rc;
    return pgw_date_from_ymd(tm.year, tm.month, tm.day, days);
}

int pgw__parse_timestamp(const char *s, size_t len, int with_tz, int64_t *usec, pgw_tm_t *tmo)
{
    cur_t c = {s, 0, len};
    pgw_tm_t tm = {0};
    if (word(&c, "infinity")) return *usec = PGW_TS_INFINITY, 0;
    if (word(&c, "-infinity")) return *usec = PGW_TS_NEG_INFINITY, 0;
    int rc = scan_ymd(&c, &tm);
    if (rc < 0) return rc;
    if (!accept_ch(&c, ' ') && !accept_ch(&c, 'T')) return PGW_EFORMAT;
    rc = scan_hms(&c, &tm, 23);
    if (rc == 0 && with_tz) rc = scan_offset(&c, &tm.gmtoff);
    if (rc == 0) rc = scan_era(&c, &tm);
    if (rc == 0) rc = pgw_tm_to_timestamp(&tm, usec);
    if (rc < 0) return rc;
    if (tmo) *tmo = tm;
    return 0;
}

static int64_t hms_usec(const pgw_tm_t *tm)
{
    return (((int64_t)tm->hour * 60 + tm->min) * 60 + tm->sec) * USEC_PER_SEC + tm->usec;
}

int pgw__parse_time(const char *s, size_t len, int64_t *usec)
{
    cur_t c = {s, 0, len};
    pgw_tm_t tm = {0};
    int rc = scan_hms(&c, &tm, 24);
    if (rc < 0) return rc;
    if (!at_end(&c)) return PGW_EFORMAT;
    *usec = hms_usec(&tm);
    return 0;
}

int pgw__parse_timetz(const char *s, size_t len, pgw_timetz_t *out)
{
    cur_t c = {s, 0, len};
    pgw_tm_t tm = {0};
    int rc = scan_hms(&c, &tm, 24);
    if (rc == 0) rc = scan_offset(&c, &tm.gmtoff);
    if (rc < 0) return rc;
    if (!at_end(&c)) return PGW_EFORMAT;
    out->usec = hms_usec(&tm);
    out->gmtoff = tm.gmtoff;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* interval (IntervalStyle postgres)                                        */
/* ------------------------------------------------------------------------ */

static int add_i64(int64_t *acc, int64_t x)
{
    if ((x > 0 && *acc > INT64_MAX - x) || (x < 0 && *acc < INT64_MIN - x)) return PGW_ERANGE;
    *acc += x;
    return 0;
}

static int mul_i64(int64_t a, int64_t b, int64_t *out)
{
    if (__builtin_mul_overflow(a, b, out)) return PGW_ERANGE;
    return 0;
}

/* A signed decimal integer token (up to 19 digits). */
static int signed_int(cur_t *c, int64_t *out)
{
    int neg = peek(c) == '-';
    if (!accept_ch(c, '-')) accept_ch(c, '+');
    size_t start = c->i;
    int64_t v = 0;
    while (c->i < c->len && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
        if (v > (INT64_MAX - 9) / 10) return PGW_ERANGE;
        v = v * 10 + (c->s[c->i++] - '0');
    }
    if (c->i == start) return PGW_EFORMAT;
    *out = neg ? -v : v;
    return 0;
}

/* [+-]H+:MM:SS[.ffffff] */
static int interval_time(cur_t *c, int64_t *usec)
{
    int neg = peek(c) == '-';
    if (!accept_ch(c, '-')) accept_ch(c, '+');
    int64_t h, m, s, t;
    int32_t frac;
    if (digits(c, 1, 18, &h) < 0 || !accept_ch(c, ':') || digits(c, 2, 2, &m) < 0 ||
        !accept_ch(c, ':') || digits(c, 2, 2, &s) < 0)
        return PGW_EFORMAT;
    int rc = fraction(c, &frac);
    if (rc < 0) return rc;
    if (m > 59 || s > 59) return PGW_ERANGE;
    if (mul_i64(h, 3600 * USEC_PER_SEC, &t) < 0) return PGW_ERANGE;
    /* Accumulate negatively so that the most negative interval fits. */
    t = -t;
    int64_t rest = (m * 60 + s) * USEC_PER_SEC + frac;
    if (add_i64(&t, -rest) < 0) return PGW_ERANGE;
    if (!neg) {
        if (t == INT64_MIN) return PGW_ERANGE;
        t = -t;
    }
    *usec = t;
    return 0;
}

static int unit_is(const cur_t *c, size_t start, const char *a, const char *b)
{
    size_t n = c->i - start;
    return (n == strlen(a) && memcmp(c->s + start, a, n) == 0) ||
           (n == strlen(b) && memcmp(c->s + start, b, n) == 0);
}

/* One "N unit" field. */
static int interval_field(cur_t *c, int64_t *months, int64_t *days)
{
    int64_t n, x;
    int rc = signed_int(c, &n);
    if (rc < 0) return rc;
    if (!accept_ch(c, ' ')) return PGW_EFORMAT;
    size_t start = c->i;
    while (c->i < c->len && c->s[c->i] >= 'a' && c->s[c->i] <= 'z')
        c->i++;
    if (unit_is(c, start, "year", "years")) {
        if (mul_i64(n, 12, &x) < 0) return PGW_ERANGE;
        return add_i64(months, x);
    }
    if (unit_is(c, start, "mon", "mons")) return add_i64(months, n);
    if (unit_is(c, start, "day", "days")) return add_i64(days, n);
    return PGW_EFORMAT;
}

int pgw__parse_interval(const char *s, size_t len, pgw_interval_t *out)
{
    cur_t c = {s, 0, len};
    if (word(&c, "infinity")) {
        out->usec = INT64_MAX, out->days = INT32_MAX, out->months = INT32_MAX;
        return 0;
    }
    if (word(&c, "-infinity")) {
        out->usec = INT64_MIN, out->days = INT32_MIN, out->months = INT32_MIN;
        return 0;
    }
    int64_t months = 0, days = 0, usec = 0;
    int any = 0;
    while (!at_end(&c)) {
        if (any && !accept_ch(&c, ' ')) return PGW_EFORMAT;
        /* A field is "N unit"; the time part is the token with a ':'. */
        size_t j = c.i;
        while (j < c.len && c.s[j] != ' ' && c.s[j] != ':')
            j++;
        int rc;
        if (j < c.len && c.s[j] == ':') {
            rc = interval_time(&c, &usec);
            if (rc == 0 && !at_end(&c)) rc = PGW_EFORMAT;
        } else {
            rc = interval_field(&c, &months, &days);
        }
        if (rc < 0) return rc;
        any = 1;
    }
    if (!any) return PGW_EFORMAT;
    if (months < INT32_MIN || months > INT32_MAX || days < INT32_MIN || days > INT32_MAX)
        return PGW_ERANGE;
    out->usec = usec;
    out->days = (int32_t)days;
    out->months = (int32_t)months;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Getters                                                                  */
/* ------------------------------------------------------------------------ */

static int check(const pgw_value_t *v, uint32_t oid, const void *out)
{
    PGW__CHECK_VALUE(v, out);
    return v->oid == oid ? 0 : PGW_ETYPE;
}

static int is_text(const pgw_value_t *v)
{
    return v->format != PGW_FORMAT_BINARY;
}

#define TEXT_ARGS(v) (const char *)(v)->p, (size_t)(v)->len

int pgw_get_date(const pgw_value_t *v, int32_t *days)
{
    int rc = check(v, PGW_OID_DATE, days);
    if (rc < 0) return rc;
    if (is_text(v)) return pgw__parse_date(TEXT_ARGS(v), days);
    if (v->len != 4) return PGW_EFORMAT;
    *days = (int32_t)pgw__get32(v->p);
    return 0;
}

int pgw_get_time(const pgw_value_t *v, int64_t *usec)
{
    int rc = check(v, PGW_OID_TIME, usec);
    if (rc < 0) return rc;
    if (is_text(v)) return pgw__parse_time(TEXT_ARGS(v), usec);
    if (v->len != 8) return PGW_EFORMAT;
    int64_t t = (int64_t)pgw__get64(v->p);
    if (t < 0 || t > USEC_PER_DAY) return PGW_EFORMAT;
    *usec = t;
    return 0;
}

int pgw_get_timetz(const pgw_value_t *v, pgw_timetz_t *out)
{
    int rc = check(v, PGW_OID_TIMETZ, out);
    if (rc < 0) return rc;
    if (is_text(v)) return pgw__parse_timetz(TEXT_ARGS(v), out);
    if (v->len != 12) return PGW_EFORMAT;
    int64_t t = (int64_t)pgw__get64(v->p);
    int32_t zone = (int32_t)pgw__get32(v->p + 8);
    /* The server keeps the zone as seconds west of UTC, within +-15:59:59. */
    if (t < 0 || t > USEC_PER_DAY || zone < -57599 || zone > 57599) return PGW_EFORMAT;
    out->usec = t;
    out->gmtoff = -zone;
    return 0;
}

static int get_ts(const pgw_value_t *v, uint32_t oid, int64_t *usec)
{
    int rc = check(v, oid, usec);
    if (rc < 0) return rc;
    if (is_text(v))
        return pgw__parse_timestamp(TEXT_ARGS(v), oid == PGW_OID_TIMESTAMPTZ, usec, NULL);
    if (v->len != 8) return PGW_EFORMAT;
    *usec = (int64_t)pgw__get64(v->p);
    return 0;
}

int pgw_get_timestamp(const pgw_value_t *v, int64_t *usec)
{
    return get_ts(v, PGW_OID_TIMESTAMP, usec);
}

int pgw_get_timestamptz(const pgw_value_t *v, int64_t *usec)
{
    return get_ts(v, PGW_OID_TIMESTAMPTZ, usec);
}

int pgw_get_timestamp_unix(const pgw_value_t *v, int64_t *unix_usec)
{
    PGW__CHECK_VALUE(v, unix_usec);
    int64_t t;
    int rc = get_ts(v, v->oid == PGW_OID_TIMESTAMPTZ ? PGW_OID_TIMESTAMPTZ : PGW_OID_TIMESTAMP, &t);
    if (rc < 0) return rc;
    return pgw_timestamp_to_unix(t, unix_usec);
}

int pgw_get_tm(const pgw_value_t *v, pgw_tm_t *out)
{
    PGW__CHECK_VALUE(v, out);
    int64_t t;
    int rc;
    switch (v->oid) {
    case PGW_OID_DATE: {
        int32_t d;
        rc = pgw_get_date(v, &d);
        return rc < 0 ? rc : pgw_date_to_tm(d, out);
    }
    case PGW_OID_TIMESTAMPTZ:
        if (is_text(v)) {
            pgw_tm_t tm;
            rc = pgw__parse_timestamp(TEXT_ARGS(v), 1, &t, &tm);
            if (rc < 0) return rc;
            if (t == PGW_TS_INFINITY || t == PGW_TS_NEG_INFINITY) return PGW_ERANGE;
            *out = tm;
            return 0;
        }
        /* fall through */
    case PGW_OID_TIMESTAMP:
        rc = get_ts(v, v->oid, &t);
        return rc < 0 ? rc : pgw_timestamp_to_tm(t, out);
    default:
        return PGW_ETYPE;
    }
}

int pgw_get_interval(const pgw_value_t *v, pgw_interval_t *out)
{
    int rc = check(v, PGW_OID_INTERVAL, out);
    if (rc < 0) return rc;
    if (is_text(v)) return pgw__parse_interval(TEXT_ARGS(v), out);
    if (v->len != 16) return PGW_EFORMAT;
    out->usec = (int64_t)pgw__get64(v->p);
    out->days = (int32_t)pgw__get32(v->p + 8);
    out->months = (int32_t)pgw__get32(v->p + 12);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Encoders                                                                 */
/* ------------------------------------------------------------------------ */

int pgw_encode_interval(const void *ctx, pgw_buf_t *out)
{
    const pgw_interval_t *iv = ctx;
    if (!iv || !out) return PGW_EINVAL;
    int rc = pgw_buf_reserve(out, 16);
    if (rc < 0) return rc;
    uint8_t *p = out->data + out->len;
    pgw__put64(p, (uint64_t)iv->usec);
    pgw__put32(p + 8, (uint32_t)iv->days);
    pgw__put32(p + 12, (uint32_t)iv->months);
    out->len += 16;
    return 0;
}

int pgw_encode_timetz(const void *ctx, pgw_buf_t *out)
{
    const pgw_timetz_t *t = ctx;
    if (!t || !out) return PGW_EINVAL;
    if (t->usec < 0 || t->usec > USEC_PER_DAY || t->gmtoff < -57599 || t->gmtoff > 57599)
        return PGW_ERANGE;
    int rc = pgw_buf_reserve(out, 12);
    if (rc < 0) return rc;
    uint8_t *p = out->data + out->len;
    pgw__put64(p, (uint64_t)t->usec);
    pgw__put32(p + 8, (uint32_t)-t->gmtoff);
    out->len += 12;
    return 0;
}
