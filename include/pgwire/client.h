/*
 * libpgwire client: blocking calls for plain C programs.
 *
 * A pgw_client_t is a pgw_conn_t (conn.h) on a private libuv loop: each
 * call issues its requests and runs that loop until they complete. Results
 * are the same pgw_result_t objects as the asynchronous API (session.h):
 * the caller frees each with pgw_result_free.
 *
 * THREADS: a client belongs to one thread at a time; only
 * pgw_client_cancel may be called from another thread (while a call is
 * blocked in the owning thread).
 *
 * Return codes shared by the request functions:
 *   0              success; *res (if res is not NULL) holds the result.
 *   PGW_ESERVER    the server answered with an error: *res holds it
 *                  (pgw_result_error) and must be freed.
 *   PGW_ESTMTINVALID  a prepared statement the session knew was dropped
 *                  or changed behind its back (the server's 26000 or
 *                  0A000, see session.h): *res holds the server's error
 *                  and must be freed; prepare it again.
 *   PGW_ETIMEDOUT  the request's deadline passed (pgw_request_t.timeout_ms,
 *                  or request_timeout_ms of the config; conn.h,
 *                  DEADLINES): *res holds what the server answered after
 *                  the cancel (SQLSTATE 57014) when it did, else NULL. The
 *                  client stays usable unless the server could not be made
 *                  to answer: the connection is then closed and the next
 *                  call returns PGW_ECLOSED.
 *   other < 0      the request did not produce a result (*res is NULL):
 *                  PGW_ECONNLOST, PGW_EPROTO, PGW_ETOOBIG (the connection is
 *                  broken: only pgw_client_close is useful), PGW_ECLOSED
 *                  (it broke earlier), PGW_EINVAL (c NULL, bad arguments,
 *                  more than 65535 parameters: nothing was sent),
 *                  PGW_ENOMEM, PGW_ETOOBIG (request too large: nothing
 *                  was sent), and the other refusals of
 *                  pgw_session_submit (PGW_ENOTSUP, PGW_ERANGE, PGW_ETYPE:
 *                  nothing was sent; pgw_client_refusal says why).
 * When res is NULL the result is freed for the caller; when a request is
 * refused (< 0 returned before anything was sent) *res is set to NULL.
 *
 * SIGNALS: as for pgw_conn_t (conn.h), no call raises SIGPIPE: a request on
 * a connection the server closed fails with PGW_ECONNLOST (or, when the
 * server's FATAL message was still unread, PGW_ESERVER with that error).
 *
 * NULL HANDLES: every function accepts a NULL client without crashing:
 * int-returning functions return PGW_EINVAL, pointer results are NULL,
 * pgw_client_close(NULL) is a no-op.
 */
#ifndef PGWIRE_CLIENT_H
#define PGWIRE_CLIENT_H

#include "pgwire/conn.h"
#include "pgwire/types_container.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pgw_client pgw_client_t;

/*
 * Connect with a libpq connection string (see pgw_conn_connect), blocking
 * until the connection is ready. cfg may be NULL; its hooks receive the
 * underlying pgw_conn_t. Returns 0 and sets *out, or one of the codes of
 * pgw_conn_connect and of its callback (pgw_connect_cb in conn.h says which
 * code a failed connect reports: PGW_EDNS, UV_ECONNREFUSED, PGW_ETIMEDOUT,
 * PGW_ESERVER, PGW_ETARGET, PGW_ETLS, PGW_ECONNECT for attempts that
 * failed for different reasons, ...), or PGW_EINVAL when out is NULL;
 * *out is then NULL. When errbuf is not NULL it receives a NUL-terminated
 * description of a failure: pgw_conn_error_message's text (libpq's
 * PQerrorMessage: every attempt, "connection to server at "h", port p
 * failed: why", joined with newlines; the server's error as "FATAL:  ..."),
 * else pgw_strerror of the code. To read the attempts one by one, connect
 * with pgw_conn_t and pgw_conn_attempts.
 */
PGW_EXTERN int pgw_client_connect(pgw_client_t **out, const char *conninfo,
                                  const pgw_conn_config_t *cfg);
PGW_EXTERN int pgw_client_connect_err(pgw_client_t **out, const char *conninfo,
                                      const pgw_conn_config_t *cfg, char *errbuf, size_t errlen);

/*
 * Run one request (a pgw_request_t of session.h: the same descriptor a
 * pgw_conn_t takes) and wait for it. The result goes to *res (may be NULL:
 * the result is then freed); the descriptor's on_result is not called and
 * its ud is passed only to on_row: with on_row set, the rows stream to it
 * (views valid during the call) and *res receives the result without rows.
 * Returns the request's status (see the return codes above); on a refusal
 * pgw_client_refusal says why.
 */
PGW_EXTERN int pgw_client_run(pgw_client_t *c, const pgw_request_t *req, pgw_result_t **res);

/*
 * Run reqs[0..n) as one batch (pgw_session_submit_batch: one Sync after the
 * last, so one implicit transaction where an error aborts the rest, which
 * complete with PGW_EABORTED; a request with PGW_Q_SYNC ends its group; with
 * PGW_BATCH_SYNC_EACH a Sync after each). Everything goes out in one write.
 * results[i] receives request i's result (NULL when it has none) and
 * statuses[i] (if statuses is not NULL) its status; the caller frees every
 * non-NULL result. on_result is not called; on_row streams as for
 * pgw_client_run. Returns 0 if every request succeeded, else the first
 * failure's status, or a refusal with nothing sent (every results[i] NULL,
 * statuses[i] the refusal's code).
 */
PGW_EXTERN int pgw_client_run_batch(pgw_client_t *c, const pgw_request_t *reqs, size_t n,
                                    unsigned flags, pgw_result_t **results, int *statuses);

/* Why the last request of this client was refused before anything was
 * sent, or "" (pgw_session_refusal of its session). Valid until the next
 * request. "" for NULL. */
PGW_EXTERN const char *pgw_client_refusal(const pgw_client_t *c);

/* The common requests in one call (each fills in a descriptor and runs
 * it): a Simple Query (sql may hold several statements; *res is the first
 * result of the chain, pgw_result_next), an extended query with binary
 * results, a prepare (*res: parameter types and columns) and an execution.
 * Text results, streaming and the rest: pgw_client_run. */
static inline int pgw_client_exec(pgw_client_t *c, const char *sql, pgw_result_t **res)
{
    pgw_request_t r = PGW_SIMPLE(sql, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
static inline int pgw_client_query(pgw_client_t *c, const char *sql, const pgw_param_t *params,
                                   size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
static inline int pgw_client_prepare(pgw_client_t *c, const char *name, const char *sql,
                                     const uint32_t *oids, size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_PREPARE(name, sql, oids, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
static inline int pgw_client_execute(pgw_client_t *c, const char *name, const pgw_param_t *params,
                                     size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}

/*
 * Load the server's definitions of the user-defined types names[0..n)
 * (domains, enums, composites, ranges, multiranges and their arrays,
 * resolved as 'name'::regtype does, plus whatever decoding them needs) into
 * reg with one query (pgw_type_load_sql, types_container.h), so that the
 * decoders read their values through their base types. reg NULL means the
 * default registry; loading into a registry is not thread-safe, so do it
 * before other threads decode through it. Each name is registered as
 * given. Returns 0, PGW_ENOTFOUND (at least one name is unknown to the
 * server; the others were loaded), PGW_EINVAL (c NULL, or names NULL with
 * n > 0), PGW_EFORMAT (an answer row the loader rejects), PGW_ENOMEM, or
 * one of pgw_client_query's codes (PGW_ESERVER: the server refused the
 * query; its error is not kept).
 */
PGW_EXTERN int pgw_client_load_types(pgw_client_t *c, const char *const *names, size_t n,
                                     pgw_type_registry_t *reg);

/*
 * Cancel the request the server is running for this client: sends the
 * connection's cancel token (pgw_cancel_token_send, taken at connect) and
 * waits for the server to close the cancel connection, at most
 * connect_timeout (10 s when the connection string sets none), exactly as
 * pgw_conn_cancel does. Safe to call from another thread than the one
 * blocked in a call of this client. Returns 0 (delivered; the interrupted
 * call returns PGW_ESERVER with SQLSTATE 57014 if it was still running),
 * PGW_ECONNECT, PGW_ETIMEDOUT, PGW_ENOMEM, PGW_ENOTSUP (no BackendKeyData),
 * PGW_EINVAL (c NULL), PGW_ETLS / PGW_EPROTO (the connection runs over TLS
 * and the cancel connection could not negotiate it: the key is never sent
 * in plaintext then).
 * The owning thread should issue its next call only after pgw_client_cancel
 * returned: until the server has closed the cancel connection, the cancel
 * may still interrupt whatever runs next.
 */
PGW_EXTERN int pgw_client_cancel(pgw_client_t *c);

/* The underlying connection and session, for what is not wrapped here
 * (NULL for a NULL client). Never close or free them; do not run their loop
 * from another thread. */
PGW_EXTERN pgw_conn_t *pgw_client_conn(pgw_client_t *c);
PGW_EXTERN pgw_session_t *pgw_client_session(pgw_client_t *c);
/* What the connection's TLS negotiated: pgw_conn_tls_info on the
 * underlying connection (same lifetimes). Returns 0, or PGW_EINVAL (out
 * NULL; or c NULL, *out then zeroed when out is not NULL). */
PGW_EXTERN int pgw_client_tls_info(const pgw_client_t *c, pgw_tls_info_t *out);

/* The server process serving this client (libpq's PQbackendPID), 0 for
 * NULL. */
PGW_EXTERN int32_t pgw_client_backend_pid(pgw_client_t *c);

/* Close the connection (sending Terminate), run the loop until every
 * handle is closed and free everything. NULL is a no-op. Results already
 * returned stay valid. */
PGW_EXTERN void pgw_client_close(pgw_client_t *c);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CLIENT_H */
