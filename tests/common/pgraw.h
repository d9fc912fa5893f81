/*
 * pgraw: a tiny blocking client for tests, built only on the codec
 * (include/pgwire/proto.h) and a plain socket. It lets tests of the layers
 * below the connection core (codec, types, auth) talk to the real test
 * server without the session or the libuv connection.
 *
 * Test infrastructure: it allocates with malloc and fails the current
 * cmocka test (fail_msg) on anything that is not the server's answer to the
 * request: a broken socket, a timeout, a codec error, an unexpected message.
 * Server errors (ErrorResponse) are normal results: they are returned as -1
 * with the SQLSTATE and message kept.
 *
 * Typical use:
 *
 *   pgt_raw_t *db = pgt_raw_connect();
 *   assert_int_equal(pgt_raw_exec(db, "SET TimeZone = 'UTC'"), 0);
 *   pgt_rows_t rows;
 *   uint32_t oid = 23;                         int4
 *   uint8_t be[4] = {0, 0, 0, 42};
 *   pgw_view_t v = {be, 4};
 *   int16_t fmt = 1;
 *   assert_int_equal(pgt_raw_query(db, "SELECT $1 + 1", 1, &oid, &v, &fmt, 1, &rows), 0);
 *   pgw_view_t cell = pgt_rows_cell(&rows, 0, 0);   4 bytes, big-endian 43
 *   pgt_rows_free(&rows);
 *   pgt_raw_close(db);
 *
 * One pgt_raw_t belongs to one thread.
 */
#ifndef PGW_TESTS_PGRAW_H
#define PGW_TESTS_PGRAW_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/proto.h"

#define PGT_RAW_MAX_PARAMS 64 /* ParameterStatus pairs kept */

typedef struct pgt_raw {
    int fd;
    pgw_decoder_t dec;
    pgw_buf_t in; /* received bytes; in.data[in_pos..in.len) are unread */
    size_t in_pos;
    pgw_buf_t out;  /* append frontend messages here, then pgt_raw_send */
    int timeout_ms; /* per recv/send; default 120000 */
    int32_t backend_pid;
    uint8_t cancel_key[256];
    uint32_t cancel_key_len;
    char txn_status; /* of the last ReadyForQuery: 'I', 'T' or 'E' */
    /* ParameterStatus values, as last reported (see pgt_raw_param). */
    size_t nparams;
    char *param_names[PGT_RAW_MAX_PARAMS];
    char *param_values[PGT_RAW_MAX_PARAMS];
    /* The last ErrorResponse of pgt_raw_exec / pgt_raw_query ("" if none). */
    char sqlstate[6];
    char message[1024];
    /* NoticeResponses seen by pgt_raw_exec / pgt_raw_query, and the last one. */
    unsigned nnotices;
    char notice_sqlstate[6];
    char notice_message[1024];
    /* NotificationResponses seen. */
    unsigned nnotifications;
    /* Why the last pgt_raw_read returned -1 (or a connect attempt failed). */
    char io_error[256];
} pgt_raw_t;

typedef struct pgt_raw_opts {
    const char *host;     /* NULL: PGHOST; a path means a unix socket dir */
    const char *port;     /* NULL: PGPORT */
    const char *user;     /* NULL: PGUSER */
    const char *database; /* NULL: PGDATABASE */
    const char *password; /* answers a cleartext password request; NULL: none */
    /* Extra StartupMessage parameters: nparams (name, value) pairs, e.g.
     * {"TimeZone", "UTC", "DateStyle", "ISO"}. */
    const char *const *params;
    size_t nparams;
    uint32_t version; /* 0: PGW_PROTO_3_0 */
} pgt_raw_opts_t;

/* Connect as the test user (trust auth) over PGHOST/PGPORT and wait for
 * ReadyForQuery. Fails the test if that does not work. */
pgt_raw_t *pgt_raw_connect(void);
/* Same with options (NULL fields take the defaults). */
pgt_raw_t *pgt_raw_connect_with(const pgt_raw_opts_t *opts);
/* Same, but returns 0 and *out, or -1 with a reason in err (the test goes on). */
int pgt_raw_try_connect(const pgt_raw_opts_t *opts, pgt_raw_t **out, char *err, size_t errlen);

/* Only open the socket (no StartupMessage), for tests that drive the
 * startup themselves. Fails the test if the socket cannot be opened. */
pgt_raw_t *pgt_raw_open(const pgt_raw_opts_t *opts);

/* Only a connected socket to the test server, the caller's to use and
 * close: host NULL, PGHOST (its unix socket); else the TCP host (a name or
 * an address) on PGPORT. Blocking, with pgraw's read and write timeouts;
 * fails the test if it cannot connect. */
int pgt_raw_socket(const char *host);

/* Send Terminate, close the socket and free r (NULL is a no-op). */
void pgt_raw_close(pgt_raw_t *r);

/* The last value the server reported for a ParameterStatus name, or NULL. */
const char *pgt_raw_param(const pgt_raw_t *r, const char *name);

/*
 * Simple query: send sql, read every answer up to ReadyForQuery (rows are
 * discarded). Returns 0, or -1 if the server sent an ErrorResponse
 * (r->sqlstate and r->message hold it).
 */
int pgt_raw_exec(pgt_raw_t *r, const char *sql);

/* pgt_raw_exec that fails the test on a server error, naming sql. */
void pgt_raw_exec_ok(pgt_raw_t *r, const char *sql);

/* A result: an owned copy of what the server sent. */
typedef struct pgt_rows {
    size_t nrows;
    int ncols;
    uint32_t *col_oids;   /* ncols type OIDs */
    int16_t *col_formats; /* ncols formats as the server sent them */
    char **col_names;     /* ncols NUL-terminated names */
    pgw_view_t *cells;    /* nrows * ncols, row-major; len -1 for NULL; the
                           * bytes live in data until pgt_rows_free */
    uint8_t *data;
    char command_tag[128]; /* of CommandComplete, "" if none */
    char sqlstate[6];      /* "" unless the server sent an ErrorResponse */
    char message[1024];
} pgt_rows_t;

/*
 * Extended query: Parse (unnamed statement, param_oids: nparams OIDs, 0 lets
 * the server infer; NULL means all 0), Bind (params[i].len -1 for NULL;
 * param_formats: nparams formats, NULL means all text), Describe portal,
 * Execute (all rows), Sync, with result_format (0 text, 1 binary) for every
 * column. Reads every answer up to ReadyForQuery into *out, which is always
 * initialised and must be freed with pgt_rows_free.
 * Returns 0, or -1 on a server error (out->sqlstate and out->message, and
 * r->sqlstate/r->message, hold it).
 */
int pgt_raw_query(pgt_raw_t *r, const char *sql, int nparams, const uint32_t *param_oids,
                  const pgw_view_t *params, const int16_t *param_formats, int result_format,
                  pgt_rows_t *out);

/* pgt_raw_query without parameters. */
int pgt_raw_query0(pgt_raw_t *r, const char *sql, int result_format, pgt_rows_t *out);

/* The cell at (row, col); fails the test when out of range. The view lives
 * until pgt_rows_free. */
pgw_view_t pgt_rows_cell(const pgt_rows_t *rows, size_t row, int col);

/* 1 if the cell holds exactly the text s (never for NULL). */
int pgt_cell_is_text(pgw_view_t cell, const char *s);

void pgt_rows_free(pgt_rows_t *rows);

/*
 * Low level, for tests of the codec itself: append messages to r->out with
 * the pgw_enc_* functions, pgt_raw_send them, then read the answers one by
 * one with pgt_raw_next.
 */

/* Write all of r->out to the socket and empty it. Fails the test on error. */
void pgt_raw_send(pgt_raw_t *r);

/*
 * Read the next backend message into *m (any type, including notices and
 * ParameterStatus, which are not otherwise handled). m's views point into
 * r->in and stay valid until the next read on r. Returns 1, 0 on a clean
 * end of stream (before any byte of a new message), or -1 on a socket
 * error, timeout, truncated message or codec error.
 */
int pgt_raw_read(pgt_raw_t *r, pgw_msg_t *m);

/* pgt_raw_read that fails the test unless it returns a message. */
void pgt_raw_next(pgt_raw_t *r, pgw_msg_t *m);

/* pgt_raw_next that fails the test unless the message is of type t. */
void pgt_raw_expect(pgt_raw_t *r, uint8_t t, pgw_msg_t *m);

/* Copy a view into a NUL-terminated string (truncated to n - 1 bytes;
 * NULL views give ""). Returns dst. */
char *pgt_view_cstr(pgw_view_t v, char *dst, size_t n);

#endif /* PGW_TESTS_PGRAW_H */
