/*
 * The server's text form of binary values (pgw_value_to_text): what the
 * three files of the formatter share. text_out.c dispatches on the type
 * and writes the scalars, text_out_time.c the date/time types,
 * text_out_container.c arrays, ranges, multiranges and records. Not
 * installed.
 */
#ifndef PGW_TYPES_TEXT_OUT_INTERNAL_H
#define PGW_TYPES_TEXT_OUT_INTERNAL_H

#include "types/container_internal.h"
#include "types/types_internal.h"

/* Containers nest (a record of arrays of records...); a hostile value
 * cannot make the formatter recurse deeper than this. */
#define PGW__TEXT_MAX_DEPTH 32

typedef struct pgw__text_out {
    const pgw_text_ctx_t *ctx;
    const pgw_type_registry_t *reg; /* never NULL */
    pgw_buf_t *out;
    int depth;
} pgw__text_out_t;

/* Append the text of the binary value p[0..len) of type oid (resolved or
 * not). (text_out.c) */
int pgw__text_binary(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len);

/* Appenders: 0, PGW_ENOMEM or PGW_ETOOBIG. (text_out.c) */
int pgw__text_put(pgw__text_out_t *t, const void *p, size_t n);
int pgw__text_putc(pgw__text_out_t *t, char c);
int pgw__text_puts(pgw__text_out_t *t, const char *s);
/* v in decimal, at least width digits (zero-padded), '-' first if neg. */
int pgw__text_put_u64(pgw__text_out_t *t, uint64_t v, int neg, int width);
int pgw__text_put_i64(pgw__text_out_t *t, int64_t v);

/* The date/time types (text_out_time.c): oid one of date, time, timetz,
 * timestamp, timestamptz, interval. */
int pgw__text_datetime(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len);

/* Containers (text_out_container.c): 1 and the text appended when oid is an
 * array, range, multirange or composite type (built in or loaded), 0 when
 * it is none of those, or an error. */
int pgw__text_container(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len);

#endif
