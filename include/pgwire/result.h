/*
 * libpgwire results: what a completed request hands back.
 *
 * A pgw_result_t holds a request's column descriptions, its rows (for a
 * buffered request: views into the read chunks that held them, kept alive
 * by the result, no copy), its command tag and, for a failed request, the
 * server's error. Results come from every layer (session.h, conn.h,
 * client.h) and are freed with pgw_result_free; a result may outlive the
 * session and connection that produced it.
 */
#ifndef PGWIRE_RESULT_H
#define PGWIRE_RESULT_H

#include <stdbool.h>

#include "pgwire/common.h"
#include "pgwire/proto.h"
#include "pgwire/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pgw_result pgw_result_t;

/* One row: values[i] views the wire bytes of column i with its format and
 * type OID, fields[i] describes the column. A streamed request's row
 * callback gets one (valid during the callback, see session.h);
 * pgw_result_row gives one for a row of a buffered result (valid until
 * pgw_result_free). */
typedef struct pgw_row {
    uint16_t ncols;
    const pgw_value_t *values;
    const pgw_field_desc_t *fields;
    uint64_t index; /* 0-based row number within the result */
} pgw_row_t;

/* A server error or notice. Every string is NUL-terminated, or NULL when
 * the server did not send that field. The strings live as long as the
 * object that handed out this pointer (a result, or a notice callback). */
typedef struct pgw_error {
    const char *severity;          /* 'S', localized */
    const char *severity_nonlocal; /* 'V': ERROR, FATAL, PANIC, WARNING, NOTICE, ... */
    const char *sqlstate;          /* 'C' */
    const char *message;           /* 'M' */
    const char *detail;            /* 'D' */
    const char *hint;              /* 'H' */
    const char *position;          /* 'P' */
    const char *internal_position; /* 'p' */
    const char *internal_query;    /* 'q' */
    const char *where;             /* 'W' */
    const char *schema;            /* 's' */
    const char *table;             /* 't' */
    const char *column;            /* 'c' */
    const char *datatype;          /* 'd' */
    const char *constraint;        /* 'n' */
    const char *file;              /* 'F' */
    const char *line;              /* 'L' */
    const char *routine;           /* 'R' */
} pgw_error_t;

/* ---------------------------------------------------------------- results */

/* Indexes out of range give PGW_EINDEX (or 0 / NULL where noted), never
 * undefined behaviour. A NULL result follows common.h's NULL-handle
 * convention: counts 0, pointers NULL (pgw_result_command_tag too), type
 * OIDs 0, int statuses PGW_EINVAL (also for a NULL out pointer),
 * pgw_result_fformat -1 and pgw_result_rows_affected -1 (as for a result
 * without them), pgw_result_timing zeroes its outputs.
 * LIFETIME: every pointer and view obtained from a result is valid until
 * pgw_result_free of that result. */

PGW_EXTERN size_t pgw_result_nrows(const pgw_result_t *r);
PGW_EXTERN size_t pgw_result_ncols(const pgw_result_t *r);
/* Column name (NUL-terminated), or NULL if col is out of range. */
PGW_EXTERN const char *pgw_result_fname(const pgw_result_t *r, size_t col);
/* Column type OID, or 0 if col is out of range. */
PGW_EXTERN uint32_t pgw_result_ftype(const pgw_result_t *r, size_t col);
/* Column format (PGW_FORMAT_*), or -1 if col is out of range. */
PGW_EXTERN int pgw_result_fformat(const pgw_result_t *r, size_t col);
/* Full column descriptor, or NULL if col is out of range. */
PGW_EXTERN const pgw_field_desc_t *pgw_result_field(const pgw_result_t *r, size_t col);
/* Index of the column named name, or PGW_ENOTFOUND. */
PGW_EXTERN int pgw_result_column(const pgw_result_t *r, const char *name);
/* The value at (row, col). Returns 0 or PGW_EINDEX. */
PGW_EXTERN int pgw_result_value(const pgw_result_t *r, size_t row, size_t col, pgw_value_t *out);
/* The whole row at index row, as a streamed request's row callback sees it:
 * out->values[c] is what pgw_result_value(r, row, c) gives, out->fields the
 * column descriptions (out->values and out->fields are NULL when the result
 * has no columns). Nothing is copied or decoded: the fastest way to read a
 * buffered result row by row. LIFETIME: out's pointers are valid until
 * pgw_result_free of r. Returns 0, PGW_EINDEX (row out of range; out is
 * left alone) or PGW_EINVAL (r or out NULL). */
PGW_EXTERN int pgw_result_row(const pgw_result_t *r, size_t row, pgw_row_t *out);
/* 1 if NULL, 0 if not, PGW_EINDEX. */
PGW_EXTERN int pgw_result_isnull(const pgw_result_t *r, size_t row, size_t col);
/* Typed accessors: pgw_result_value then the types layer's pgw_get_*.
 * Return 0, PGW_EINDEX, PGW_ENULL, PGW_ETYPE, PGW_EFORMAT, PGW_ERANGE. */
PGW_EXTERN int pgw_result_bool(const pgw_result_t *r, size_t row, size_t col, bool *out);
PGW_EXTERN int pgw_result_int2(const pgw_result_t *r, size_t row, size_t col, int16_t *out);
PGW_EXTERN int pgw_result_int4(const pgw_result_t *r, size_t row, size_t col, int32_t *out);
PGW_EXTERN int pgw_result_int8(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
PGW_EXTERN int pgw_result_float4(const pgw_result_t *r, size_t row, size_t col, float *out);
PGW_EXTERN int pgw_result_float8(const pgw_result_t *r, size_t row, size_t col, double *out);
PGW_EXTERN int pgw_result_text(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out);

/* The command tag ("SELECT 3", "INSERT 0 1"), or "" if none. */
PGW_EXTERN const char *pgw_result_command_tag(const pgw_result_t *r);
/* Rows affected or returned per the command tag, or -1 if the tag has none. */
PGW_EXTERN int64_t pgw_result_rows_affected(const pgw_result_t *r);
/* The server error of a failed request, or NULL. */
PGW_EXTERN const pgw_error_t *pgw_result_error(const pgw_result_t *r);
/* Parameter types of a prepared/described statement. */
PGW_EXTERN size_t pgw_result_nparams(const pgw_result_t *r);
PGW_EXTERN uint32_t pgw_result_param_type(const pgw_result_t *r, size_t i);
/* The next result of a multi-statement simple query, or NULL. Results in a
 * chain are freed together by pgw_result_free of the first. */
PGW_EXTERN pgw_result_t *pgw_result_next(const pgw_result_t *r);
/* Per-request timing in nanoseconds from the session's now_ns clock (all 0
 * without one): when the request was queued, when its first response byte
 * was processed, when it completed. */
PGW_EXTERN void pgw_result_timing(const pgw_result_t *r, uint64_t *queued, uint64_t *first,
                                  uint64_t *done);
/* Free a result (and the results chained after it). NULL is a no-op. */
PGW_EXTERN void pgw_result_free(pgw_result_t *r);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_RESULT_H */
