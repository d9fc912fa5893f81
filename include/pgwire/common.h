/*
 * libpgwire: common definitions shared by every layer.
 *
 * Error codes, the allocator interface, byte views and the growable output
 * buffer. Nothing here does I/O.
 *
 * Conventions used by every public function of the library:
 *   - functions return int: 0 (or a non-negative count) on success, a
 *     negative PGW_E* code on failure;
 *   - network errors from libuv are passed through unchanged (they are
 *     negated errno values and UV_E* codes, all above -1000); the library's
 *     own codes live in -1000..-1999 and never collide with them;
 *   - a function that returns an error never invokes its callback; a request
 *     that was accepted invokes its callback exactly once;
 *   - NULL handles (as libpq's PQntuples(NULL) == 0): a function given a NULL
 *     handle (session, result, connection, decoder, message, iterator,
 *     buffer) never crashes. Functions returning an int status return
 *     PGW_EINVAL; counts and sizes return 0; pointers return NULL; OIDs
 *     return 0; char status values return 0; void functions (free, close,
 *     consumed/fail notifications) do nothing, and stats-into-out functions
 *     zero *out when out is not NULL. Each header notes the few accessors
 *     whose "nothing" value differs (a format of -1, a state).
 *
 * What is stable ABI (within a major version), for programs and bindings
 * that do not read the headers at build time:
 *   - every function the headers declare or define (PGW_EXTERN, PGW_INLINE)
 *     is exported under its name, and no header defines a static inline
 *     one; a macro that builds a value (PGW_QUERY, PGW_FETCH, ...) expands
 *     to one of them (pgw_request_make*);
 *   - a binding that cannot follow struct layouts at all uses ffi.h: the
 *     library allocates parameter lists, request descriptors and
 *     configurations and reads and writes their members by name, so no
 *     layout below is needed to connect, query with parameters, read rows
 *     and read an error's fields;
 *   - structs whose first member is size (pgw_request_t, the *_config_t
 *     structs): the caller sets size to the sizeof it was built with and
 *     the library reads only that far, so members are only ever added at
 *     the end; a config is best set up by its *_config_init;
 *   - the value structs the library hands out or takes by value
 *     (pgw_view_t, pgw_value_t, pgw_param_t, pgw_error_t and the stats
 *     structs): their layout changes only with the major version;
 *     pgw_error_t's fields can also be read one by one (pgw_error_field);
 *   - handles declared without a body (pgw_session_t, pgw_conn_t,
 *     pgw_result_t, ...) have no layout a caller may rely on, and members
 *     whose names start with an underscore are private.
 */
#ifndef PGWIRE_COMMON_H
#define PGWIRE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PGW_EXTERN __declspec(dllexport)
#elif defined(__GNUC__)
/* Marks a function the library exports (default symbol visibility). */
#define PGW_EXTERN __attribute__((visibility("default")))
#else
#define PGW_EXTERN
#endif

/* Functions defined in the headers (value and request constructors, the
 * named request wrappers) are C99 inline definitions: a call the compiler
 * inlines costs nothing, and the library also exports each under its own
 * name (src/util/abi.c), so a program that takes a function's address, an
 * FFI (ctypes, cgo, JNA) and dlsym find a real symbol. A translation unit
 * that defines PGW_INLINE before including a header chooses otherwise. */
#ifndef PGW_INLINE
#define PGW_INLINE PGW_EXTERN inline
#endif

/* The version of these headers; pgw_version gives the linked library's. */
#define PGW_VERSION_MAJOR  0
#define PGW_VERSION_MINOR  1
#define PGW_VERSION_PATCH  0
#define PGW_VERSION_STRING "0.1.0"

/* Returns PGW_VERSION_STRING of the library actually linked. */
PGW_EXTERN const char *pgw_version(void);

/*
 * The library's error codes: XX(name, value, fatal, message).
 *
 * A "fatal" code means the object that reported it (a codec stream, a
 * session, a connection) is broken: the only legal calls left on it are the
 * ones that close or free it. Non-fatal codes leave it usable.
 */
#define PGW_ERRNO_MAP(XX)                                                                        \
    XX(EAGAIN, -1001, 0, "incomplete input: more bytes are needed")                              \
    XX(ENOMEM, -1002, 0, "out of memory")                                                        \
    XX(EINVAL, -1003, 0, "invalid argument")                                                     \
    XX(ERANGE, -1004, 0, "value out of range for the requested type")                            \
    XX(ETOOBIG, -1005, 1, "message exceeds the configured maximum size")                         \
    XX(EPROTO, -1006, 1, "protocol violation: malformed or unexpected message from the server")  \
    XX(ESERVER, -1007, 0, "the server returned an error")                                        \
    XX(EABORTED, -1008, 0, "pipeline aborted: an earlier request of the same sync group failed") \
    XX(ECONNLOST, -1009, 1, "connection to the server lost")                                     \
    XX(ECANCELED, -1010, 0, "request cancelled: the connection was closed")                      \
    XX(ETIMEDOUT, -1011, 0, "operation timed out")                                               \
    XX(EAUTH, -1012, 1, "authentication failed")                                                 \
    XX(EAUTHPOLICY, -1013, 1, "authentication method refused by the client's policy")            \
    XX(ETYPE, -1014, 0, "type or format mismatch for the requested conversion")                  \
    XX(EFORMAT, -1015, 0, "malformed value")                                                     \
    XX(ENULL, -1016, 0, "value is NULL")                                                         \
    XX(ENOTSUP, -1017, 0, "operation not supported")                                             \
    XX(EENCODING, -1018, 0, "invalid character encoding")                                        \
    XX(ECLOSED, -1019, 0, "connection is closed")                                                \
    XX(EBUSY, -1020, 0, "operation not allowed in the current state")                            \
    XX(ECONNECT, -1021, 1, "could not connect to the server")                                    \
    XX(ETLS, -1022, 1, "TLS negotiation or verification failed")                                 \
    XX(ESTMTINVALID, -1023, 0, "cached prepared statement is no longer valid")                   \
    XX(EPOOLTIMEOUT, -1024, 0, "timed out waiting to acquire a pooled connection")               \
    XX(ECONNINFO, -1025, 0, "invalid connection option")                                         \
    XX(ENOTFOUND, -1026, 0, "not found")                                                         \
    XX(EINDEX, -1027, 0, "row or column index out of range")                                     \
    XX(ELOSS, -1028, 0, "value cannot be represented without loss")                              \
    XX(ETARGET, -1029, 1, "no server matched target_session_attrs")                              \
    XX(ERECURSIVE, -1030, 0, "call not allowed from inside this callback")                       \
    XX(EDNS, -1031, 1, "could not translate the host name to an address")                        \
    XX(ECONGESTED, -1032, 0, "output over its high-water mark: wait for the drain callback")     \
    XX(EDONE, -1035, 0, "no more rows: the cursor is exhausted")                                 \
    XX(ECOPY, -1036, 0, "the server began a COPY this request cannot carry: use PGW_REQ_COPY")   \
    XX(ERETRY, -1044, 0, "the pooled connection serving the request was lost: retry if it is safe")

/* The library's error codes as an enum: PGW_EPROTO, ... from
 * PGW_ERRNO_MAP, and PGW_OK (0). */
typedef enum pgw_err {
#define PGW__ERR_ENUM(name, value, fatal, msg) PGW_##name = value,
    PGW_ERRNO_MAP(PGW__ERR_ENUM)
#undef PGW__ERR_ENUM
        PGW_OK = 0
} pgw_err_t;

/* A static, human-readable description of code (never NULL; unknown codes,
 * including libuv's, are described as far as known). */
PGW_EXTERN const char *pgw_strerror(int code);
/* The symbolic name of code without prefix, e.g. "EPROTO", or for a
 * negated errno value passed through from libuv its errno name
 * ("ECONNREFUSED", with glibc 2.32 or later); "UNKNOWN" if none. */
PGW_EXTERN const char *pgw_err_name(int code);
/* 1 if code is fatal for the object that reported it (see PGW_ERRNO_MAP). */
PGW_EXTERN int pgw_is_fatal(int code);
/* 1 if code is a system error passed through from libuv (a negated errno
 * value or UV_E* code, all above -1000: UV_ECONNREFUSED, UV_ENOENT, ...),
 * 0 for the library's own codes and for 0. */
PGW_EXTERN int pgw_is_system_error(int code);

/*
 * Allocator. Every object takes one in its configuration; NULL means the C
 * library's malloc/realloc/free. The functions receive ud unchanged.
 * realloc(NULL, n) must behave as malloc(n). free(NULL) must be a no-op.
 */
typedef struct pgw_allocator {
    void *ud;                                           /* passed to each function */
    void *(*malloc)(size_t size, void *ud);             /* NULL on failure */
    void *(*realloc)(void *ptr, size_t size, void *ud); /* NULL on failure, ptr kept */
    void (*free)(void *ptr, void *ud);                  /* ptr may be NULL */
} pgw_allocator_t;

/* The default allocator (malloc/realloc/free). */
PGW_EXTERN const pgw_allocator_t *pgw_allocator_default(void);

/*
 * A view of bytes owned by someone else. len == -1 means SQL NULL (p is then
 * NULL). Each API that hands out a view states how long it stays valid.
 */
typedef struct pgw_view {
    const uint8_t *p; /* the first byte; NULL for SQL NULL */
    int32_t len;      /* byte count, or -1 for SQL NULL */
} pgw_view_t;

/* A view of text (not NUL-terminated unless stated). */
typedef struct pgw_str {
    const char *p; /* the first character */
    size_t len;    /* byte count */
} pgw_str_t;

/*
 * A growable byte buffer owned by its caller, used as the encoders' output.
 * Zero-initialise it, or use pgw_buf_init; free it with pgw_buf_free.
 * data[0..len) is the content; the buffer keeps its capacity when reset, so a
 * steady stream of messages allocates nothing once it has grown.
 */
typedef struct pgw_buf {
    uint8_t *data;                /* the content; NULL until the first growth */
    size_t len;                   /* bytes of content */
    size_t cap;                   /* bytes allocated at data */
    size_t max;                   /* 0: no limit; else growth past max fails with PGW_ETOOBIG */
    const pgw_allocator_t *alloc; /* NULL: the default allocator */
} pgw_buf_t;

/* Initialise b empty, with allocator alloc (NULL for the default). */
PGW_EXTERN void pgw_buf_init(pgw_buf_t *b, const pgw_allocator_t *alloc);
/* Make room for at least extra more bytes. Returns 0, PGW_ENOMEM or PGW_ETOOBIG
 * (len + extra would pass b->max or SIZE_MAX). Pointers into data are
 * invalidated by a successful call that grows the buffer. */
PGW_EXTERN int pgw_buf_reserve(pgw_buf_t *b, size_t extra);
/* Append n bytes. Returns 0, PGW_ENOMEM or PGW_ETOOBIG. */
PGW_EXTERN int pgw_buf_append(pgw_buf_t *b, const void *p, size_t n);
/* Drop the first n bytes (n <= len), moving the rest to the front. */
PGW_EXTERN void pgw_buf_consume(pgw_buf_t *b, size_t n);
/* Set len to 0, keeping the capacity. */
PGW_EXTERN void pgw_buf_reset(pgw_buf_t *b);
/* Release the storage; b is left empty and reusable. */
PGW_EXTERN void pgw_buf_free(pgw_buf_t *b);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_COMMON_H */
