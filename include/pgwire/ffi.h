/*
 * libpgwire for bindings: the library without its struct layouts.
 *
 * A binding over an FFI (Python's ctypes, cgo, JNA, Rust without bindgen)
 * finds functions with dlsym and cannot see a header. Every function the
 * headers declare or define inline is exported (common.h, "What is stable
 * ABI"), but the value and descriptor structs a C caller fills in place
 * (pgw_param_t and its union, pgw_request_t, the *_config_t structs and
 * their callback members) and the structs the library hands back
 * (pgw_row_t, pgw_value_t) would still have to be mirrored field by field.
 * The functions here replace each of them with an opaque pointer:
 *
 *   - parameters: a pgw_params_t list, set slot by slot with one function
 *     per constructor of types.h (pgw_params_set_int4 does what pgw_int4
 *     does), which copies what a parameter points to;
 *   - request descriptors and configurations: allocated and initialised by
 *     the library (pgw_request_new, pgw_session_config_new, ...), so the
 *     binding never needs their size, and read or written member by member
 *     by the member's C name (pgw_request_set_ptr(r, "sql", "SELECT 1"));
 *   - rows, values, column descriptions and notifications: pgw_row_value,
 *     pgw_row_field and the pgw_value_*, pgw_field_* and pgw_notification_*
 *     accessors.
 * Results (result.h: pgw_result_nrows, pgw_result_value_cstr, ...) and
 * server errors (pgw_error_field) already read through functions only.
 *
 * An end-to-end query without a struct layout (the blocking client):
 *
 *   pgw_params_t *ps = pgw_params_new(1);
 *   pgw_params_set_int4(ps, 0, 41);
 *   pgw_request_t *q = pgw_request_new(PGW_REQ_QUERY);
 *   pgw_request_set_ptr(q, "sql", "SELECT $1::int4 + 1");
 *   pgw_request_set_params(q, ps);
 *   pgw_result_t *res;
 *   int rc = pgw_client_run(client, q, &res);   // PGW_ESERVER: read
 *   ...                                         // pgw_error_field(
 *   pgw_result_free(res);                       //   pgw_result_error(res), 'C')
 *   pgw_request_free(q);
 *   pgw_params_free(ps);
 *
 * MEMBER NAMES. The *_set_* and *_get_* functions take the member's name as
 * written in the struct's C declaration; a member of a nested struct is
 * named with a dot ("cb.on_startup" of pgw_session_config_t, "conn.ud" of
 * pgw_pool_config_t). Three kinds of member:
 *   uint  integers, enums and sizes (read and written as uint64_t; a value
 *         that does not fit the member is PGW_ERANGE, so SIZE_MAX is
 *         written as UINT64_MAX on a 64-bit system);
 *   ptr   data pointers: strings, arrays, user data, allocators, registries;
 *   fn    function pointers (callbacks), written as a pgw_fn_t: the
 *         function must have the member's type (an FFI's callback object
 *         declared with the prototype the header gives).
 * Each returns 0, PGW_EINVAL (object or name NULL), PGW_ENOTFOUND (no such
 * member) or PGW_ETYPE (the member is of another kind); a setter also
 * PGW_ERANGE. Writing a pointer stores the pointer, not a copy: the
 * object's rules say how long it must live (a configuration's strings are
 * copied by the function that takes the configuration; a request's until
 * its submit returns, as for a pgw_request_t).
 *
 * A name is accepted as long as its member exists: the names are ABI as
 * the functions are, and a member added to a struct is added here too (the
 * build checks each table ends with its struct's last member).
 *
 * MEMORY: the objects allocated here use the C library's malloc. A
 * function returning a new object returns NULL when out of memory.
 *
 * NULL HANDLES: as everywhere (common.h): free functions do nothing,
 * counts are 0, int functions return PGW_EINVAL.
 */
#ifndef PGWIRE_FFI_H
#define PGWIRE_FFI_H

#include "pgwire/client.h"
#include "pgwire/conninfo.h"
#include "pgwire/listen.h"
#include "pgwire/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Any function pointer, for the *_set_fn functions. */
typedef void (*pgw_fn_t)(void);

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

/* A parameter list the library allocates: pgw_params_new makes one,
 * pgw_params_free frees it. */
typedef struct pgw_params pgw_params_t;

/* A list of n parameters (n <= PGW_MAX_PARAMS), each SQL NULL of type 0
 * until set. NULL when out of memory or n is too large. */
PGW_EXTERN pgw_params_t *pgw_params_new(size_t n);
/* Free the list and the copies it holds. */
PGW_EXTERN void pgw_params_free(pgw_params_t *ps);
/* The number of parameters (0 for NULL). */
PGW_EXTERN size_t pgw_params_count(const pgw_params_t *ps);
/* The parameters as the array every query function takes (params with
 * nparams = pgw_params_count). Valid until the list is freed; what it
 * holds changes with the setters. NULL for NULL or an empty list. */
PGW_EXTERN const pgw_param_t *pgw_params_array(const pgw_params_t *ps);

/*
 * Set parameter i to what the constructor of the same name in types.h
 * builds (pgw_params_set_X(ps, i, args) is pgw_X(args)). Unlike the
 * constructors, the list keeps its own copy of what a parameter points
 * to (a string, bytes, a pgw_interval_t, a pgw_numeric_t and its digits),
 * so the binding's buffers may go as soon as the call returns; the one
 * exception is pgw_params_set_encoded, whose ctx is the caller's (it must
 * live until the query call returns, as for pgw_encoded). The types that
 * take a struct (numeric, timetz, interval, inet) can also be sent without
 * it as text: pgw_params_set_text_typed(ps, i, "1 day", -1,
 * PGW_OID_INTERVAL). Returns 0, PGW_EINVAL (ps NULL), PGW_EINDEX (i out of
 * range) or PGW_ENOMEM; the slot is unchanged on an error.
 */
PGW_EXTERN int pgw_params_set_null(pgw_params_t *ps, size_t i, uint32_t oid);
PGW_EXTERN int pgw_params_set_bool(pgw_params_t *ps, size_t i, bool v);
PGW_EXTERN int pgw_params_set_int2(pgw_params_t *ps, size_t i, int16_t v);
PGW_EXTERN int pgw_params_set_int4(pgw_params_t *ps, size_t i, int32_t v);
PGW_EXTERN int pgw_params_set_int8(pgw_params_t *ps, size_t i, int64_t v);
PGW_EXTERN int pgw_params_set_float4(pgw_params_t *ps, size_t i, float v);
PGW_EXTERN int pgw_params_set_float8(pgw_params_t *ps, size_t i, double v);
PGW_EXTERN int pgw_params_set_text_typed(pgw_params_t *ps, size_t i, const char *s, int32_t len,
                                         uint32_t oid);
PGW_EXTERN int pgw_params_set_text(pgw_params_t *ps, size_t i, const char *s);
PGW_EXTERN int pgw_params_set_bytea(pgw_params_t *ps, size_t i, const void *data, int32_t len);
PGW_EXTERN int pgw_params_set_raw(pgw_params_t *ps, size_t i, uint32_t oid, int16_t fmt,
                                  const void *data, int32_t len);
PGW_EXTERN int pgw_params_set_encoded(pgw_params_t *ps, size_t i, uint32_t oid, pgw_encode_fn fn,
                                      const void *ctx);
PGW_EXTERN int pgw_params_set_oid_param(pgw_params_t *ps, size_t i, uint32_t v);
PGW_EXTERN int pgw_params_set_numeric_str(pgw_params_t *ps, size_t i, const char *s);
PGW_EXTERN int pgw_params_set_numeric(pgw_params_t *ps, size_t i, const pgw_numeric_t *n);
PGW_EXTERN int pgw_params_set_date(pgw_params_t *ps, size_t i, int32_t days);
PGW_EXTERN int pgw_params_set_time(pgw_params_t *ps, size_t i, int64_t usec);
PGW_EXTERN int pgw_params_set_timetz(pgw_params_t *ps, size_t i, const pgw_timetz_t *t);
PGW_EXTERN int pgw_params_set_timestamp(pgw_params_t *ps, size_t i, int64_t usec);
PGW_EXTERN int pgw_params_set_timestamptz(pgw_params_t *ps, size_t i, int64_t usec);
PGW_EXTERN int pgw_params_set_interval(pgw_params_t *ps, size_t i, const pgw_interval_t *iv);
PGW_EXTERN int pgw_params_set_uuid(pgw_params_t *ps, size_t i, const uint8_t uuid[16]);
PGW_EXTERN int pgw_params_set_inet(pgw_params_t *ps, size_t i, const pgw_inet_t *a);
PGW_EXTERN int pgw_params_set_macaddr(pgw_params_t *ps, size_t i, const uint8_t mac[6]);
PGW_EXTERN int pgw_params_set_macaddr8(pgw_params_t *ps, size_t i, const uint8_t mac[8]);
PGW_EXTERN int pgw_params_set_money(pgw_params_t *ps, size_t i, int64_t cents);
PGW_EXTERN int pgw_params_set_json(pgw_params_t *ps, size_t i, const char *json);
PGW_EXTERN int pgw_params_set_jsonb(pgw_params_t *ps, size_t i, const char *json);

/* ------------------------------------------------------------------------ */
/* Request descriptors                                                      */
/* ------------------------------------------------------------------------ */

/*
 * A descriptor of kind (pgw_request_init: every other member zero), for
 * every function that takes a const pgw_request_t * (pgw_session_submit,
 * pgw_conn_submit, pgw_client_run, pgw_pool_submit, cursors). Free it with
 * pgw_request_free once nothing uses it (the functions that take it copy
 * what they keep during the call). NULL when out of memory.
 */
PGW_EXTERN pgw_request_t *pgw_request_new(pgw_request_kind_t kind);
/* n descriptors of kind in one array, for the batch functions
 * (pgw_session_submit_batch, pgw_client_run_batch, pgw_pool_submit_batch):
 * element i is pgw_request_nth(reqs, i) (a binding passes it to the
 * setters below; C callers have the struct). Freed with pgw_request_free.
 * NULL when out of memory or n is 0. */
PGW_EXTERN pgw_request_t *pgw_request_new_array(size_t n, pgw_request_kind_t kind);
/* Free a descriptor or an array from pgw_request_new_array (NULL: no-op). */
PGW_EXTERN void pgw_request_free(pgw_request_t *r);
/* Members of pgw_request_t by name (see MEMBER NAMES): uint: kind,
 * nparams, nparam_types, nresult_formats, flags, timeout_ms, cache,
 * max_rows, route; ptr: sql, stmt, params, param_types, result_formats,
 * ud, portal; fn: on_result, on_row, copy_source, on_copy_data,
 * on_copy_start. */
PGW_EXTERN int pgw_request_set_uint(pgw_request_t *r, const char *member, uint64_t v);
PGW_EXTERN int pgw_request_set_ptr(pgw_request_t *r, const char *member, const void *p);
PGW_EXTERN int pgw_request_set_fn(pgw_request_t *r, const char *member, pgw_fn_t fn);
PGW_EXTERN int pgw_request_get_uint(const pgw_request_t *r, const char *member, uint64_t *out);
PGW_EXTERN int pgw_request_get_ptr(const pgw_request_t *r, const char *member, const void **out);
/* params and nparams at once from a list (NULL: none). The list must live
 * until the submit returns. Returns 0 or PGW_EINVAL (r NULL). */
PGW_EXTERN int pgw_request_set_params(pgw_request_t *r, const pgw_params_t *ps);

/* ------------------------------------------------------------------------ */
/* Configurations                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A configuration initialised by its *_config_init (every option at its
 * default), freed with the matching *_free once the function that takes
 * it has returned (each copies what it keeps). NULL when out of memory.
 * Members by name as described under MEMBER NAMES, with the names of the
 * struct's declaration (session.h, conn.h, pool.h, listen.h); the size
 * member cannot be written.
 */
PGW_EXTERN pgw_session_config_t *pgw_session_config_new(void);
PGW_EXTERN void pgw_session_config_free(pgw_session_config_t *cfg);
PGW_EXTERN int pgw_session_config_set_uint(pgw_session_config_t *cfg, const char *member,
                                           uint64_t v);
PGW_EXTERN int pgw_session_config_set_ptr(pgw_session_config_t *cfg, const char *member,
                                          const void *p);
PGW_EXTERN int pgw_session_config_set_fn(pgw_session_config_t *cfg, const char *member,
                                         pgw_fn_t fn);
PGW_EXTERN int pgw_session_config_get_uint(const pgw_session_config_t *cfg, const char *member,
                                           uint64_t *out);
PGW_EXTERN int pgw_session_config_get_ptr(const pgw_session_config_t *cfg, const char *member,
                                          const void **out);
PGW_EXTERN pgw_conn_config_t *pgw_conn_config_new(void);
PGW_EXTERN void pgw_conn_config_free(pgw_conn_config_t *cfg);
PGW_EXTERN int pgw_conn_config_set_uint(pgw_conn_config_t *cfg, const char *member, uint64_t v);
PGW_EXTERN int pgw_conn_config_set_ptr(pgw_conn_config_t *cfg, const char *member, const void *p);
PGW_EXTERN int pgw_conn_config_set_fn(pgw_conn_config_t *cfg, const char *member, pgw_fn_t fn);
PGW_EXTERN int pgw_conn_config_get_uint(const pgw_conn_config_t *cfg, const char *member,
                                        uint64_t *out);
PGW_EXTERN int pgw_conn_config_get_ptr(const pgw_conn_config_t *cfg, const char *member,
                                       const void **out);

/* The pool's own members and those of its conn member ("conn.ud"). */
PGW_EXTERN pgw_pool_config_t *pgw_pool_config_new(void);
PGW_EXTERN void pgw_pool_config_free(pgw_pool_config_t *cfg);
PGW_EXTERN int pgw_pool_config_set_uint(pgw_pool_config_t *cfg, const char *member, uint64_t v);
PGW_EXTERN int pgw_pool_config_set_ptr(pgw_pool_config_t *cfg, const char *member, const void *p);
PGW_EXTERN int pgw_pool_config_set_fn(pgw_pool_config_t *cfg, const char *member, pgw_fn_t fn);
PGW_EXTERN int pgw_pool_config_get_uint(const pgw_pool_config_t *cfg, const char *member,
                                        uint64_t *out);
PGW_EXTERN int pgw_pool_config_get_ptr(const pgw_pool_config_t *cfg, const char *member,
                                       const void **out);

/* The listener's members; conn, a pointer to a connection config (copied
 * by pgw_listener_new), is set with pgw_listener_config_set_ptr. */
PGW_EXTERN pgw_listener_config_t *pgw_listener_config_new(void);
PGW_EXTERN void pgw_listener_config_free(pgw_listener_config_t *cfg);
PGW_EXTERN int pgw_listener_config_set_uint(pgw_listener_config_t *cfg, const char *member,
                                            uint64_t v);
PGW_EXTERN int pgw_listener_config_set_ptr(pgw_listener_config_t *cfg, const char *member,
                                           const void *p);
PGW_EXTERN int pgw_listener_config_set_fn(pgw_listener_config_t *cfg, const char *member,
                                          pgw_fn_t fn);
PGW_EXTERN int pgw_listener_config_get_uint(const pgw_listener_config_t *cfg, const char *member,
                                            uint64_t *out);
PGW_EXTERN int pgw_listener_config_get_ptr(const pgw_listener_config_t *cfg, const char *member,
                                           const void **out);

/* ------------------------------------------------------------------------ */
/* Rows and values                                                          */
/* ------------------------------------------------------------------------ */

/* A row's column count and its 0-based index within its result (0 for
 * NULL). */
PGW_EXTERN size_t pgw_row_ncols(const pgw_row_t *row);
PGW_EXTERN uint64_t pgw_row_index(const pgw_row_t *row);
/* The value of column col, for the pgw_get_* decoders of types.h and the
 * accessors below; NULL when row is NULL or col out of range. Lives as
 * long as the row. */
PGW_EXTERN const pgw_value_t *pgw_row_value(const pgw_row_t *row, size_t col);

/* The description of column col of row (NULL when row is NULL, col is out
 * of range or the row has no descriptions); pgw_result_field gives a
 * buffered result's. Lives as long as the row or result. */
PGW_EXTERN const pgw_field_desc_t *pgw_row_field(const pgw_row_t *row, size_t col);
/* A column description's members (pgw_field_desc_t, proto.h): the name's
 * bytes (not NUL-terminated: *len says how many; len may be NULL), the type
 * OID, the table's OID and the column's number in it (0 when the column is
 * not a table's), the type's size (typlen: -1 varlena, -2 C string), the
 * type modifier (-1: none) and the format (PGW_FORMAT_TEXT or
 * PGW_FORMAT_BINARY). For a NULL fd: NULL (*len 0), 0, 0, 0, 0, -1, -1. */
PGW_EXTERN const char *pgw_field_name(const pgw_field_desc_t *fd, size_t *len);
PGW_EXTERN uint32_t pgw_field_type(const pgw_field_desc_t *fd);
PGW_EXTERN uint32_t pgw_field_table(const pgw_field_desc_t *fd);
PGW_EXTERN int pgw_field_attnum(const pgw_field_desc_t *fd);
PGW_EXTERN int pgw_field_typlen(const pgw_field_desc_t *fd);
PGW_EXTERN int32_t pgw_field_typmod(const pgw_field_desc_t *fd);
PGW_EXTERN int pgw_field_format(const pgw_field_desc_t *fd);

/* A value's bytes (NULL for SQL NULL, with *len -1; len may be NULL), its
 * type OID (0 for NULL v) and format (PGW_FORMAT_TEXT or PGW_FORMAT_BINARY;
 * -1 for NULL v). The bytes live as long as the value. SQL NULL:
 * pgw_value_is_null. */
PGW_EXTERN const uint8_t *pgw_value_data(const pgw_value_t *v, int32_t *len);
PGW_EXTERN uint32_t pgw_value_oid(const pgw_value_t *v);
PGW_EXTERN int pgw_value_format(const pgw_value_t *v);

/* The bytes of cell (row, col) of a result, as pgw_result_value gives them
 * without the caller's pgw_value_t: NULL for SQL NULL (*len -1), else the
 * value in the column's format (pgw_result_fformat) and type
 * (pgw_result_ftype), *len bytes (len may be NULL). NULL with *len -1 too
 * when r is NULL or row or col out of range (pgw_result_isnull tells them
 * apart). The bytes live until pgw_result_free of r. */
PGW_EXTERN const uint8_t *pgw_result_cell(const pgw_result_t *r, size_t row, size_t col,
                                          int32_t *len);

/*
 * The cells of rows [first, first + n) of a result in one call, for a
 * binding whose per-call cost dwarfs reading a cell (one pgw_result_cell
 * per cell is one FFI call per cell). Column by column: lens[c * n + i] is
 * the byte count of cell (first + i, c), -1 for SQL NULL, and buf holds the
 * bytes of every cell in that same order, one after the other with nothing
 * between (a NULL or empty cell takes no byte), so the cells of column c
 * start where those of column c - 1 end, and a column of a fixed-width
 * type without NULLs is one array of n values. lens has room for
 * n * pgw_result_ncols(r) entries (the caller's; the call only writes it).
 * The bytes are copies, in each column's format (pgw_result_fformat) and
 * type (pgw_result_ftype): buf may outlive the result.
 *
 * *needed (needed may be NULL) is set to the bytes all the cells take. With
 * cap smaller than that (or buf NULL and a cell not empty) lens is filled,
 * buf untouched and the call returns PGW_ERANGE: call again with a buffer
 * of *needed bytes. Returns 0, PGW_EINVAL (r NULL, or lens NULL with n > 0),
 * PGW_EINDEX (first + n beyond pgw_result_nrows; nothing written) or
 * PGW_ERANGE. n = 0 is 0 with *needed 0.
 */
PGW_EXTERN int pgw_result_cells(const pgw_result_t *r, size_t first, size_t n, int32_t *lens,
                                uint8_t *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------------------ */
/* Hosts and buffers                                                        */
/* ------------------------------------------------------------------------ */

/* Room for pgw_conninfo_host's out (zeroed), so that a driver of its own
 * (session.h) can read the hosts to try without pgw_host_t's layout. NULL
 * when out of memory. */
PGW_EXTERN pgw_host_t *pgw_host_new(void);
/* Free it (NULL: no-op); its strings belong to the pgw_conninfo_t. */
PGW_EXTERN void pgw_host_free(pgw_host_t *h);
/* Its members (conninfo.h): host (a name, an address or a socket
 * directory), hostaddr (NULL: none), port, port_text, is_unix, and error
 * (NULL: the host can be tried) with error_ends_connect. For a NULL h:
 * NULL, NULL, 0, NULL, 0, NULL, 0. The strings live as long as the
 * pgw_conninfo_t that filled h. */
PGW_EXTERN const char *pgw_host_name(const pgw_host_t *h);
PGW_EXTERN const char *pgw_host_addr(const pgw_host_t *h);
PGW_EXTERN uint16_t pgw_host_port(const pgw_host_t *h);
PGW_EXTERN const char *pgw_host_port_text(const pgw_host_t *h);
PGW_EXTERN int pgw_host_is_unix(const pgw_host_t *h);
PGW_EXTERN const char *pgw_host_error(const pgw_host_t *h);
PGW_EXTERN int pgw_host_error_ends_connect(const pgw_host_t *h);

/* An empty pgw_buf_t (pgw_buf_init with the default allocator), for the
 * encoders of proto.h (pgw_enc_ssl_request, pgw_enc_cancel_request) and a
 * COPY source's out. NULL when out of memory. */
PGW_EXTERN pgw_buf_t *pgw_buf_new(void);
/* Free its storage and itself (NULL: no-op). */
PGW_EXTERN void pgw_buf_delete(pgw_buf_t *b);
/* Its content (NULL when empty; *len the byte count, len may be NULL),
 * valid until the buffer next grows, is consumed or is freed. */
PGW_EXTERN const uint8_t *pgw_buf_data(const pgw_buf_t *b, size_t *len);

/* ------------------------------------------------------------------------ */
/* Notifications                                                            */
/* ------------------------------------------------------------------------ */

/* Room for pgw_client_wait_notification's out (zeroed). NULL when out of
 * memory. */
PGW_EXTERN pgw_notification_t *pgw_notification_new(void);
/* Free it (NULL: no-op); the strings it views belong to the client. */
PGW_EXTERN void pgw_notification_free(pgw_notification_t *n);
/* Its members (client.h): the sending backend's pid, the channel and the
 * payload (NUL-terminated, *len their length; len may be NULL; they live
 * as pgw_client_wait_notification says), and how many were dropped before
 * it. For a NULL n: 0, NULL (*len 0), NULL, 0. */
PGW_EXTERN int32_t pgw_notification_pid(const pgw_notification_t *n);
PGW_EXTERN const char *pgw_notification_channel(const pgw_notification_t *n, size_t *len);
PGW_EXTERN const char *pgw_notification_payload(const pgw_notification_t *n, size_t *len);
PGW_EXTERN uint64_t pgw_notification_missed(const pgw_notification_t *n);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_FFI_H */
