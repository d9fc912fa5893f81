/*
 * Internal helpers of the types layer, shared by the scalar decoders and the
 * container code (arrays, ranges, composites, COPY), which decodes and
 * encodes its elements through pgw__scalar_decode / pgw__encode_scalar.
 * Not installed.
 */
#ifndef PGW_TYPES_INTERNAL_H
#define PGW_TYPES_INTERNAL_H

#include "pgwire/types.h"
#include "util/internal.h"

/* How a built-in type's binary form relates to its text (the TEXT column
 * of PGW_BUILTIN_TYPES). */
enum pgw__text_like {
    PGW__TL_NO = 0,    /* unrelated */
    PGW__TL_SAME,      /* the binary form is the text */
    PGW__TL_VERSIONED, /* version byte 1, then the text */
    PGW__TL_BYTE       /* one byte, read as text ("char") */
};

/* The KIND column's NONE: no scalar decoder. */
#define PGW_DATUM_NONE PGW_DATUM_NULL

/* One row of PGW_BUILTIN_TYPES (types.h). */
typedef struct pgw__builtin {
    uint32_t oid;
    uint32_t array_oid; /* 0: none */
    const char *name;   /* typname */
    const char *array_name;
    int8_t width;   /* fixed binary size, -1 if variable */
    uint8_t kind;   /* enum pgw_datum_kind, PGW_DATUM_NULL: no scalar decoder */
    uint8_t text;   /* enum pgw__text_like */
    uint8_t binary; /* decoded from binary */
    char delim;     /* array element delimiter (typdelim) */
} pgw__builtin_t;

/* The row of built-in type oid, or NULL (array types have none: see
 * pgw__builtin_of_array). A switch generated from the table. (builtin.c) */
const pgw__builtin_t *pgw__builtin(uint32_t oid);
/* The row whose array type is array_oid, or NULL. (builtin.c) */
const pgw__builtin_t *pgw__builtin_of_array(uint32_t array_oid);

/* oid's text-likeness (PGW__TL_NO for anything not built in). */
static inline int pgw__text_like(uint32_t oid)
{
    const pgw__builtin_t *t = pgw__builtin(oid);
    return t ? t->text : PGW__TL_NO;
}

/* 1 if integer x fits type t of the INT kind (oid: 0..UINT32_MAX). */
static inline int pgw__int_fits(int64_t x, const pgw__builtin_t *t)
{
    if (t->oid == PGW_OID_OID) return x >= 0 && x <= (int64_t)UINT32_MAX;
    if (t->width == 2) return x >= INT16_MIN && x <= INT16_MAX;
    if (t->width == 4) return x >= INT32_MIN && x <= INT32_MAX;
    return 1;
}

/* 1 if x converts to double / float and back unchanged. */
static inline int pgw__int64_exact_double(int64_t x)
{
    double d = (double)x;
    return d < 9223372036854775808.0 && (int64_t)d == x;
}
static inline int pgw__int64_exact_float(int64_t x)
{
    float f = (float)x;
    return f < 9223372036854775808.0f && (int64_t)f == x;
}

/* 1 if oid is a built-in scalar type decoded from binary (see
 * pgw_type_binary_ok, which registry.c implements on top of this). */
int pgw__scalar_binary_ok(uint32_t oid);

/* Decode one scalar value of any built-in scalar OID into a tagged datum
 * (the same as pgw_get_datum). 0, PGW_ETYPE, PGW_EFORMAT, PGW_ERANGE. */
int pgw__scalar_decode(const pgw_value_t *v, pgw_datum_t *out);

/* Append the binary form of d (value bytes only, no length) for type oid
 * (0: d->oid). Kinds and OIDs must agree (an INT datum can be written as
 * int2/int4/int8/oid if it fits: PGW_ERANGE otherwise; NUMERIC_TEXT is
 * parsed). Returns 0, PGW_ENOMEM, PGW_ETOOBIG, PGW_ETYPE, PGW_ERANGE,
 * PGW_EFORMAT. A NULL datum is PGW_EINVAL (the caller writes length -1). */
int pgw__encode_scalar(const pgw_datum_t *d, uint32_t oid, pgw_buf_t *out);

/* The server's timestamp range (MIN_TIMESTAMP, END_TIMESTAMP exclusive):
 * Julian day 0 (4714-11-24 BC) to 294277-01-01, in microseconds since 2000. */
#define PGW__TS_MIN_USEC INT64_C(-211813488000000000)
#define PGW__TS_END_USEC INT64_C(9223371331200000000)

/* Calendar arithmetic on the proleptic Gregorian calendar, astronomical
 * years (datetime.c): days since 1970-01-01 of a date, and back; floor
 * division. */
int64_t pgw__days_from_civil(int64_t y, int64_t m, int64_t d);
void pgw__civil_from_days(int64_t z, int64_t *y, int32_t *m, int32_t *d);
int64_t pgw__floor_div(int64_t a, int64_t b);

/* Text parsing helpers (no locale). */
/* Parse a whole decimal integer [+-]?[0-9]+ in [min, max]. 0, PGW_EFORMAT or
 * PGW_ERANGE. */
int pgw__parse_int64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);
/* Parse a float8 / float4 text ("1.5e-3", "NaN", "-Infinity") with C-locale
 * correct rounding. 0, PGW_EFORMAT, PGW_ENOMEM (no C locale object). */
int pgw__parse_float8(const char *s, size_t len, double *out);
int pgw__parse_float4(const char *s, size_t len, float *out);
/* Parse ISO DateStyle text. Each returns 0 or PGW_EFORMAT / PGW_ERANGE. */
int pgw__parse_date(const char *s, size_t len, int32_t *days);
int pgw__parse_time(const char *s, size_t len, int64_t *usec);
int pgw__parse_timetz(const char *s, size_t len, pgw_timetz_t *out);
/* timestamp (with_tz 0) or timestamptz (1): *usec is UTC for timestamptz;
 * tm (may be NULL) gets the fields and offset as written. */
int pgw__parse_timestamp(const char *s, size_t len, int with_tz, int64_t *usec, pgw_tm_t *tm);
int pgw__parse_interval(const char *s, size_t len, pgw_interval_t *out);
int pgw__parse_money(const char *s, size_t len, int64_t *cents);
/* Decode bytea text (hex or escape). With buf NULL only counts. */
int pgw__bytea_unescape(const char *s, size_t len, uint8_t *buf, size_t cap, size_t *outlen);
/* Binary numeric header check and view. 0 or PGW_EFORMAT. */
int pgw__numeric_from_binary(const uint8_t *p, size_t len, pgw_numeric_t *out);
/* Append the binary numeric for n / for a decimal string to out. */
int pgw__numeric_write(const pgw_numeric_t *n, pgw_buf_t *out);
int pgw__numeric_write_str(const char *s, size_t len, pgw_buf_t *out);

/* How every getter starts: PGW_EINVAL for a NULL value or output pointer
 * (the NULL-handle convention), PGW_ENULL for SQL NULL, else 0. */
static inline int pgw__value_check(const pgw_value_t *v, const void *out)
{
    if (!v || !out) return PGW_EINVAL;
    return v->len < 0 ? PGW_ENULL : 0;
}

#define PGW__CHECK_VALUE(v, out)                    \
    do {                                            \
        int pgw__rc = pgw__value_check((v), (out)); \
        if (pgw__rc) return pgw__rc;                \
    } while (0)

static inline pgw_str_t pgw__value_str(const pgw_value_t *v)
{
    pgw_str_t s = {(const char *)v->p, (size_t)v->len};
    return s;
}

#endif
