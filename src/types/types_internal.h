/*
 * Internal helpers of the types layer, shared by the scalar decoders and the
 * container code (arrays, ranges, composites, COPY), which decodes and
 * encodes its elements through pgw__scalar_decode / pgw__scalar_encode.
 * Not installed.
 */
#ifndef PGW_TYPES_INTERNAL_H
#define PGW_TYPES_INTERNAL_H

#include "pgwire/types.h"
#include "util/internal.h"

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
int pgw__scalar_encode(const pgw_datum_t *d, uint32_t oid, pgw_buf_t *out);

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
