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
#include "pgwire/types_container.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A request's result (rows, columns, command tag or server error): handed
 * to the result callback or returned by the blocking calls, the receiver
 * frees it with pgw_result_free. */
typedef struct pgw_result pgw_result_t;

/* One row: values[i] views the wire bytes of column i with its format and
 * type OID, fields[i] describes the column. A streamed request's row
 * callback gets one (valid during the callback, see session.h);
 * pgw_result_row gives one for a row of a buffered result (valid until
 * pgw_result_free). */
typedef struct pgw_row {
    uint16_t ncols;                 /* columns: entries of values and fields */
    const pgw_value_t *values;      /* the values, by column */
    const pgw_field_desc_t *fields; /* the columns' descriptions */
    uint64_t index;                 /* 0-based row number within the result */
} pgw_row_t;

/* A server error or notice. Every string is NUL-terminated, or NULL when
 * the server did not send that field. The strings live as long as the
 * object that handed out this pointer (a result, or a notice callback).
 * One const char * member per line of PGW_ERROR_FIELD_MAP (proto.h), which
 * describes each: severity ('S'), severity_nonlocal ('V'), sqlstate ('C'),
 * message ('M'), detail ('D'), hint ('H'), position ('P'),
 * internal_position ('p'), internal_query ('q'), where ('W'), schema ('s'),
 * table ('t'), column ('c'), datatype ('d'), constraint ('n'), file ('F'),
 * line ('L'), routine ('R'). The one field the library may fill itself is
 * hint, and only when the server sent none: a cached statement the server
 * no longer has (26000, see session.h "Statement cache") gets a hint
 * naming stmt_cache_mode = PGW_STMT_UNNAMED. */
typedef struct pgw_error {
#define PGW__ERROR_FIELD_STR(code, member, desc) const char *member;
    PGW_ERROR_FIELD_MAP(PGW__ERROR_FIELD_STR)
#undef PGW__ERROR_FIELD_STR
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

/* Rows and columns of the result (0 for NULL). */
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
/* Rows of this result handed to the request's on_row instead of kept (0
 * for a buffered result, and for NULL). */
PGW_EXTERN uint64_t pgw_result_nstreamed(const pgw_result_t *r);
/* 1 if NULL, 0 if not, PGW_EINDEX. */
PGW_EXTERN int pgw_result_isnull(const pgw_result_t *r, size_t row, size_t col);
/*
 * Typed accessors: pgw_result_value, then the types layer's decoder named
 * beside each (types.h, types_container.h), in the column's format (binary
 * or text: both decode to the same value). A column's format depends only
 * on its type and on what the request asked (session.h, "Result formats"):
 * binary unless the server has no binary output for the type, on every run
 * of a query whatever the statement cache does, so an accessor call that
 * reads a column reads it on every run. A column of a user type the
 * session's registry knows (pgw_session_config_t.registry) is read as what
 * it is made of: a domain as its base type, an enum as text. Each returns
 * 0 or:
 *   PGW_EINDEX   row or col out of range;
 *   PGW_ENULL    the cell is SQL NULL (*out untouched);
 *   PGW_ETYPE    the column's type is not one the decoder reads;
 *   PGW_EFORMAT  the value's bytes are malformed;
 *   PGW_ERANGE   the value does not fit *out (or the decoder's own
 *                PGW_ERANGE / PGW_ELOSS cases, documented with it);
 *   PGW_EINVAL   r or out NULL.
 * LIFETIME: a view handed out (pgw_str_t, pgw_view_t, pgw_numeric_t's
 * digits, pgw_array_t and what it iterates) points into the result and is
 * valid until pgw_result_free of r.
 */
PGW_EXTERN int pgw_result_bool(const pgw_result_t *r, size_t row, size_t col, bool *out);
/* Integers: any integer column whose value fits (pgw_get_int2 ...). */
PGW_EXTERN int pgw_result_int2(const pgw_result_t *r, size_t row, size_t col, int16_t *out);
PGW_EXTERN int pgw_result_int4(const pgw_result_t *r, size_t row, size_t col, int32_t *out);
PGW_EXTERN int pgw_result_int8(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
PGW_EXTERN int pgw_result_oid(const pgw_result_t *r, size_t row, size_t col, uint32_t *out);
PGW_EXTERN int pgw_result_float4(const pgw_result_t *r, size_t row, size_t col, float *out);
PGW_EXTERN int pgw_result_float8(const pgw_result_t *r, size_t row, size_t col, double *out);
/* Text-like columns, viewed in place (pgw_get_text). The server's text of a
 * value of any type, as libpq's PQgetvalue gives it: pgw_result_value_text
 * and pgw_result_value_cstr below. */
PGW_EXTERN int pgw_result_text(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out);
/* json, jsonb, jsonpath: a view of the JSON text (pgw_get_json). */
PGW_EXTERN int pgw_result_json(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out);
/* bytea in binary format, viewed in place (pgw_get_bytea_view); a text
 * format bytea is PGW_ETYPE: decode it with pgw_result_value and
 * pgw_get_bytea. */
PGW_EXTERN int pgw_result_bytea(const pgw_result_t *r, size_t row, size_t col, pgw_view_t *out);
/* uuid: 16 bytes at out (pgw_get_uuid). */
PGW_EXTERN int pgw_result_uuid(const pgw_result_t *r, size_t row, size_t col, uint8_t out[16]);
/* date (days since 2000-01-01), time (usec since midnight), timetz,
 * timestamp, timestamptz (usec since 2000-01-01, UTC for timestamptz),
 * broken down (pgw_get_tm), interval: see "Date and time" in types.h. */
PGW_EXTERN int pgw_result_date(const pgw_result_t *r, size_t row, size_t col, int32_t *out);
PGW_EXTERN int pgw_result_time(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
PGW_EXTERN int pgw_result_timetz(const pgw_result_t *r, size_t row, size_t col, pgw_timetz_t *out);
PGW_EXTERN int pgw_result_timestamp(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
PGW_EXTERN int pgw_result_timestamptz(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
PGW_EXTERN int pgw_result_tm(const pgw_result_t *r, size_t row, size_t col, pgw_tm_t *out);
PGW_EXTERN int pgw_result_interval(const pgw_result_t *r, size_t row, size_t col,
                                   pgw_interval_t *out);
/* numeric as a correctly rounded double / an exact int64
 * (pgw_get_numeric_double, pgw_get_numeric_int64). */
PGW_EXTERN int pgw_result_numeric_double(const pgw_result_t *r, size_t row, size_t col,
                                         double *out);
PGW_EXTERN int pgw_result_numeric_int64(const pgw_result_t *r, size_t row, size_t col,
                                        int64_t *out);
/* numeric exactly (pgw_get_numeric): binary digits are viewed in the
 * result; a text value's are written to storage[0..cap)
 * (PGW_NUMERIC_STORAGE of the value's length is enough; PGW_ERANGE if cap
 * is smaller), which must then live as long as out is used. */
PGW_EXTERN int pgw_result_numeric(const pgw_result_t *r, size_t row, size_t col, pgw_numeric_t *out,
                                  uint8_t *storage, size_t cap);
/* inet and cidr (pgw_get_inet); macaddr (6 bytes), macaddr8 (8 bytes);
 * money in cents (pgw_get_money). */
PGW_EXTERN int pgw_result_inet(const pgw_result_t *r, size_t row, size_t col, pgw_inet_t *out);
PGW_EXTERN int pgw_result_macaddr(const pgw_result_t *r, size_t row, size_t col, uint8_t out[6]);
PGW_EXTERN int pgw_result_macaddr8(const pgw_result_t *r, size_t row, size_t col, uint8_t out[8]);
PGW_EXTERN int pgw_result_money(const pgw_result_t *r, size_t row, size_t col, int64_t *out);
/* Any built-in scalar as a tagged value (pgw_get_datum); a NULL cell is
 * kind PGW_DATUM_NULL and returns 0, unlike the accessors above. */
PGW_EXTERN int pgw_result_datum(const pgw_result_t *r, size_t row, size_t col, pgw_datum_t *out);
/* An array cell parsed (pgw_array_parse_reg, through the session's
 * registry): iterate it with pgw_array_iter_init / pgw_array_next, or read
 * it with the pgw_array_get_* bulk getters on pgw_result_value's value.
 * PGW_ETYPE also for a column that is not an array type, built in or
 * loaded into that registry (see pgw_type_registry_load_row). */
PGW_EXTERN int pgw_result_array(const pgw_result_t *r, size_t row, size_t col, pgw_array_t *out);

/*
 * Any value as the server's text, as libpq's PQgetvalue gives it, in
 * whichever format it arrived (libpgwire asks binary for the types it
 * decodes): a text value is the server's bytes; a binary value is
 * formatted exactly as the server's output function prints it
 * (pgw_value_to_text in types.h lists the types; others give PGW_ETYPE),
 * with the session's settings as they were when the result was created:
 *   - timestamptz (also inside arrays, ranges, records) in the session's
 *     TimeZone, read from the system's tzdata (/usr/share/zoneinfo, what
 *     Debian's server reads too) or as a POSIX TZ string, as the server
 *     does; a zone that cannot be resolved gives PGW_ENOTFOUND, never an
 *     offset that could be wrong.
 *   - DateStyle ISO and IntervalStyle postgres, which the session sets up
 *     unless the application chose others (see "Date styles" in
 *     session.h): with other styles a binary date, time, timetz,
 *     timestamp, timestamptz or interval gives PGW_ENOTSUP (ask text for
 *     those columns, PGW_Q_TEXT, to get the server's own form).
 *   - The server's other defaults: extra_float_digits >= 1 (floats in the
 *     shortest exact form), bytea_output hex, lc_monetary C. These are not
 *     reported to clients: a session that changes them gets text that
 *     differs from what the server would write.
 * "When the result was created": the server reports a changed setting
 * only at the end of a sync group (just before ReadyForQuery), so a
 * "SET TimeZone" sent in the same simple-query string, pipeline or batch
 * as the query is not yet known when that query's result is made: its
 * timestamptz values are formatted in the zone the server had reported
 * before. Run the SET as its own request first.
 *
 * pgw_result_value_text: *out views the text. A text value is viewed in
 * place (not NUL-terminated, no copy); a binary value's text is made at
 * the first call and kept in the result (NUL-terminated).
 * pgw_result_value_cstr: *out is always NUL-terminated (*len, if not NULL,
 * its length without the NUL): a text value is copied into the result at
 * the first call, a binary value formatted; later calls for the same cell
 * return the same pointer.
 * MEMORY: the first call on a result allocates a table of one pointer per
 * cell (nrows * ncols * sizeof(void *)); each cell's text is made and kept
 * once, so repeated calls do not grow the result.
 * LIFETIME: the text is valid until pgw_result_free of r.
 * THREADS: these accessors write into the result (the text kept per
 * cell) and into what the results of one session share (the zone, loaded
 * at the first call): calls on results of the same session
 * from several threads at once must be serialised. The other accessors
 * only read.
 * Returns 0, PGW_EINDEX, PGW_ENULL (SQL NULL: libpq's "", tell them apart
 * with pgw_result_isnull), PGW_ETYPE (a binary value of a type the library
 * does not format), PGW_EFORMAT (malformed binary bytes), PGW_ERANGE (a
 * binary date/time outside the server's range), PGW_ENOTFOUND /
 * PGW_ENOTSUP (zone or styles, above), PGW_ENOMEM or PGW_EINVAL (r or out
 * NULL).
 */
PGW_EXTERN int pgw_result_value_text(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out);
PGW_EXTERN int pgw_result_value_cstr(const pgw_result_t *r, size_t row, size_t col,
                                     const char **out, size_t *len);
/* numeric as its exact decimal string, as the server's numeric_out writes
 * it ("-12.50", "NaN", "Infinity", every digit of the scale), from either
 * format: pgw_result_value_cstr for a numeric column (NUL-terminated, kept
 * in the result, same lifetime), PGW_ETYPE for any other column. */
PGW_EXTERN int pgw_result_numeric_str(const pgw_result_t *r, size_t row, size_t col,
                                      pgw_str_t *out);
/* timestamp or timestamptz as microseconds since 1970-01-01 00:00 UTC, from
 * either format (pgw_get_timestamp_unix: a timestamp's wall-clock reading
 * is taken as UTC). The infinities are PGW_ERANGE (no sentinel), besides
 * the typed accessors' codes above. */
PGW_EXTERN int pgw_result_timestamp_unix(const pgw_result_t *r, size_t row, size_t col,
                                         int64_t *out);

/* The command tag ("SELECT 3", "INSERT 0 1"), or "" if none. */
PGW_EXTERN const char *pgw_result_command_tag(const pgw_result_t *r);
/* Rows affected or returned per the command tag, or -1 if the tag has none. */
PGW_EXTERN int64_t pgw_result_rows_affected(const pgw_result_t *r);
/* The server error of a failed request, or NULL. */
PGW_EXTERN const pgw_error_t *pgw_result_error(const pgw_result_t *r);
/* The field of err whose protocol code is code ('C' for the SQLSTATE, 'M'
 * for the message: the codes of PGW_ERROR_FIELD_MAP), as libpq's
 * PQresultErrorField gives it and as a binding reads it without pgw_error_t's
 * layout. NULL when err is NULL, the field was not sent, or code is not one
 * of the map's. The string lives as long as err. */
PGW_EXTERN const char *pgw_error_field(const pgw_error_t *err, char code);

/* How much of an error pgw_error_format writes, as libpq's
 * PQsetErrorVerbosity. */
typedef enum pgw_error_verbosity {
    PGW_ERRORS_DEFAULT = 0, /* severity, message, LINE/caret, DETAIL, HINT, QUERY, CONTEXT */
    PGW_ERRORS_TERSE,       /* severity, message (" at character N" for a position) only */
    PGW_ERRORS_VERBOSE,     /* DEFAULT with the SQLSTATE, the object names and LOCATION */
    PGW_ERRORS_SQLSTATE     /* severity and SQLSTATE only */
} pgw_error_verbosity_t;

/*
 * Format err as one printable text, exactly as libpq's PQresultErrorMessage
 * (pqBuildErrorMessage3 and reportErrorPosition of libpq 15) writes it with
 * the given verbosity: "ERROR:  message\n", then for DEFAULT and VERBOSE
 * the "LINE n: " line of query holding the error position with a caret
 * under it (lines longer than 60 columns cut around the position with
 * "..."; tabs shown as spaces; wide characters counted as two columns),
 * "DETAIL:  ", "HINT:  ", "QUERY:  " and "CONTEXT:  " lines (CONTEXT only
 * for an error, not a notice: severity_nonlocal ERROR, FATAL or PANIC, as
 * libpq's default PQSHOW_CONTEXT_ERRORS). Every line ends with '\n'.
 * query is the SQL that failed (a result does not keep it), read as UTF-8
 * as the server counts the position in characters; NULL: no caret, the
 * position is written as " at character N" as libpq does when it has no
 * query. A position inside internal_query is shown against that text.
 * buf receives the text NUL-terminated, cut to len - 1 bytes if longer
 * (buf may be NULL when len is 0, to measure).
 * Returns the length of the whole text (as snprintf: a value >= len means
 * it was cut), or PGW_EINVAL if err is NULL or buf is NULL with len > 0.
 */
PGW_EXTERN int pgw_error_format(const pgw_error_t *err, const char *query,
                                pgw_error_verbosity_t verbosity, char *buf, size_t len);
/* Parameter types of a prepared/described statement. */
PGW_EXTERN size_t pgw_result_nparams(const pgw_result_t *r);
PGW_EXTERN uint32_t pgw_result_param_type(const pgw_result_t *r, size_t i);
/* The next result of a multi-statement simple query, or NULL. Results in a
 * chain are freed together by pgw_result_free of the first. */
PGW_EXTERN pgw_result_t *pgw_result_next(const pgw_result_t *r);
/* Per-request timing in nanoseconds from the session's now_ns clock (all 0
 * without one): when the request was queued, when its first response byte
 * was processed, when it completed. The clock is read at most once per
 * input chunk the session processes (pgw_session_input_commit): first and
 * done are when the processing of the chunk that brought the request's
 * first reply, and of the one that completed it, began, and a request
 * queued from a callback meanwhile takes that time too (all 0 on a
 * connection with pgw_conn_config_t.no_timing). */
PGW_EXTERN void pgw_result_timing(const pgw_result_t *r, uint64_t *queued, uint64_t *first,
                                  uint64_t *done);
/* Free a result (and the results chained after it). NULL is a no-op. */
PGW_EXTERN void pgw_result_free(pgw_result_t *r);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_RESULT_H */
