/*
 * libpgwire client: blocking calls for plain C programs.
 *
 * A pgw_client_t is a pgw_conn_t (conn.h) on a private libuv loop: each
 * call issues its requests and runs that loop until they complete. The
 * process keeps the loop of the last client closed, idle, for the next
 * client to connect (four descriptors and a socket that marks the loop,
 * close-on-exec, closed at exit; never reused in a child of fork() nor
 * after the program closed them). Results
 * are the same pgw_result_t objects as the asynchronous API (session.h):
 * the caller frees each with pgw_result_free.
 *
 * THREADS: a client belongs to one thread at a time; only
 * pgw_client_cancel may be called from another thread (while a call is
 * blocked in the owning thread). A client checked out of the blocking pool
 * (pool.h, pgw_client_pool_t) is a pooled connection on the pool's loop:
 * its callbacks may run on another thread while its call waits, and it is
 * given back with pgw_client_pool_release, never closed (pool.h).
 *
 * Return codes shared by the request functions:
 *   0              success; *res (if res is not NULL) holds the result.
 *   PGW_ESERVER    the server answered with an error: *res holds it
 *                  (pgw_result_error) and must be freed.
 *   PGW_ESTMTINVALID  a prepared statement the session knew was dropped
 *                  or changed behind its back (the server's 26000 or
 *                  0A000, see session.h): *res holds the server's error
 *                  and must be freed; prepare it again.
 *   PGW_ECOPY      the statement was a COPY sent as another kind than
 *                  PGW_REQ_COPY (pgw_client_exec("COPY t FROM STDIN")...):
 *                  the session ended the COPY and the connection goes on;
 *                  *res holds the COPY's result (session.h, "COPY").
 *   PGW_ETIMEDOUT  the request's deadline passed (pgw_request_t.timeout_ms,
 *                  or request_timeout_ms of the config; conn.h,
 *                  DEADLINES): *res holds what the server answered after
 *                  the cancel (SQLSTATE 57014) when it did, else NULL. The
 *                  client stays usable unless the server could not be made
 *                  to answer: the connection is then closed and the next
 *                  call returns PGW_ECLOSED.
 *   other < 0      the request did not produce a result (*res is NULL):
 *                  PGW_ECONNLOST, PGW_EPROTO (the connection is broken:
 *                  only pgw_client_close is useful), PGW_ECLOSED (it broke
 *                  earlier), PGW_EINVAL (c NULL, bad arguments, more than
 *                  65535 parameters: nothing was sent), PGW_ENOMEM, the
 *                  other refusals of pgw_session_submit (PGW_ENOTSUP,
 *                  PGW_ERANGE, PGW_ETYPE: nothing was sent;
 *                  pgw_client_refusal says why), and PGW_ETOOBIG, which
 *                  has two causes: the request was too large to encode (a
 *                  message past the protocol's 1 GB, a value longer than
 *                  INT32_MAX: nothing was sent and the client stays
 *                  usable), or the server sent a message larger than
 *                  max_message_size (the connection is broken: only
 *                  pgw_client_close is useful). pgw_conn_is_ready
 *                  (pgw_client_conn(c)) tells them apart: 1 after the
 *                  first, 0 after the second.
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

/* A blocking connection (its own loop and conn): pgw_client_connect opens
 * it, pgw_client_close closes and frees it. One thread at a time (THREADS
 * above). */
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
 * PGW_BATCH_SYNC_EACH a Sync after each). Everything goes out in one write,
 * or with PGW_BATCH_STREAM in parts while it is encoded (session.h,
 * "Streamed batches").
 * results[i] receives request i's result (NULL when it has none) and
 * statuses[i] (if statuses is not NULL) its status; the caller frees every
 * non-NULL result. on_result is not called; on_row streams as for
 * pgw_client_run. Returns 0 if every request succeeded, else the first
 * failure's status, or a refusal with nothing sent (every results[i] NULL,
 * statuses[i] the refusal's code). A streamed batch refused part way runs
 * the requests already accepted (results and statuses as above) and gives
 * the others, from the refused one on, no result and the refusal's code.
 */
PGW_EXTERN int pgw_client_run_batch(pgw_client_t *c, const pgw_request_t *reqs, size_t n,
                                    unsigned flags, pgw_result_t **results, int *statuses);

/*
 * Cursors: a result read in batches of batch_rows rows through a portal
 * (session.h, "Portals and open groups"), so a result of any size is held
 * one batch at a time.
 *
 * pgw_client_cursor_open sends the query of desc (a PGW_REQ_QUERY or
 * PGW_REQ_EXECUTE descriptor; its portal and max_rows are set by the
 * cursor, its on_result is not called) bound into a portal of its own, and
 * returns at once; the first batch comes with the first pgw_client_cursor_next.
 * Inside a transaction block (BEGIN) the cursor lives in it; outside one it
 * opens an implicit transaction that lasts until the cursor is finished or
 * closed, and the requests this client runs meanwhile are part of it (they
 * commit when the cursor's portal is closed, see session.h). Returns 0 and
 * sets *out, or a refusal of pgw_session_submit (nothing sent, *out NULL),
 * PGW_EINVAL (c, desc or out NULL, another kind, batch_rows 0), PGW_ENOMEM.
 *
 * pgw_client_cursor_next waits for the next batch: 0 with *res holding at
 * least one row (free it with pgw_result_free; with desc->on_row the rows
 * streamed to it and *res has none), PGW_EDONE when the rows are exhausted
 * (the portal is then closed and its transaction, if implicit, committed:
 * a commit failure is returned instead, PGW_ESERVER with *res holding the
 * error), or the failure of the query or a fetch (PGW_ESERVER with *res
 * holding the server's error, PGW_EABORTED, PGW_ECONNLOST, ...); after a
 * failure or PGW_EDONE every later call returns the same code with *res
 * NULL. While the caller works on a batch the next one is already on its
 * way (two fetches ahead once the portal has more rows, so at most three
 * batches are in memory: the caller's and two in flight).
 *
 * pgw_client_cursor_close closes the portal if it is still open (an
 * abandoned cursor: Close portal, and the Sync that ends its implicit
 * transaction), waits for what is in flight, and frees the cursor. Returns
 * 0, or the close's failure (the cursor is freed anyway). NULL is a no-op
 * returning PGW_EINVAL. Every cursor must be closed, also after PGW_EDONE.
 */
typedef struct pgw_client_cursor pgw_client_cursor_t;
PGW_EXTERN int pgw_client_cursor_open(pgw_client_t *c, const pgw_request_t *desc,
                                      uint32_t batch_rows, pgw_client_cursor_t **out);
PGW_EXTERN int pgw_client_cursor_next(pgw_client_cursor_t *cur, pgw_result_t **res);
PGW_EXTERN int pgw_client_cursor_close(pgw_client_cursor_t *cur);
/* The portal's name (NUL-terminated, valid until the cursor is closed), ""
 * for NULL. */
PGW_EXTERN const char *pgw_client_cursor_portal(const pgw_client_cursor_t *cur);

/* Why the last request of this client was refused before anything was
 * sent, or "" (pgw_session_refusal of its session). Valid until the next
 * request. "" for NULL. */
PGW_EXTERN const char *pgw_client_refusal(const pgw_client_t *c);

/* The common requests in one call (each fills in a descriptor and runs
 * it): a Simple Query (sql may hold several statements; *res is the first
 * result of the chain, pgw_result_next), an extended query with binary
 * results, a prepare (*res: parameter types and columns) and an execution.
 * Text results, streaming and the rest: pgw_client_run. */
PGW_INLINE int pgw_client_exec(pgw_client_t *c, const char *sql, pgw_result_t **res)
{
    pgw_request_t r = PGW_SIMPLE(sql, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
PGW_INLINE int pgw_client_query(pgw_client_t *c, const char *sql, const pgw_param_t *params,
                                size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
PGW_INLINE int pgw_client_prepare(pgw_client_t *c, const char *name, const char *sql,
                                  const uint32_t *oids, size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_PREPARE(name, sql, oids, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}
PGW_INLINE int pgw_client_execute(pgw_client_t *c, const char *name, const pgw_param_t *params,
                                  size_t nparams, pgw_result_t **res)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, NULL, NULL);
    return pgw_client_run(c, &r, res);
}

/*
 * COPY (session.h "COPY"), blocking: the source is pulled, or on_data
 * called, from inside this call as the socket takes or delivers the data
 * (memory stays bounded; a source has no reason to return PGW_COPY_PAUSE
 * here, and pgw_conn_copy_resume on pgw_client_conn would be needed after
 * it). *res gets the result ("COPY n": pgw_result_rows_affected). Returns
 * the request's status: 0, PGW_ESERVER (a bad row: the server's 22P02,
 * 22P04...; *res holds the error), the source's or on_data's own negative
 * code when it abandoned the COPY (CopyFail was sent; *res holds the
 * server's 57014 for COPY FROM), or the codes above. The connection is
 * idle again (or in a failed transaction block) whatever happened.
 * Inside pgw_client_run_batch a PGW_REQ_COPY keeps its place among the
 * batch's requests.
 */
PGW_INLINE int pgw_client_copy_in(pgw_client_t *c, const char *sql, pgw_copy_source_cb source,
                                  void *ud, pgw_result_t **res)
{
    pgw_request_t r = PGW_COPY_IN_REQ(sql, source, NULL, ud);
    return pgw_client_run(c, &r, res);
}
PGW_INLINE int pgw_client_copy_out(pgw_client_t *c, const char *sql, pgw_copy_data_cb on_data,
                                   void *ud, pgw_result_t **res)
{
    pgw_request_t r = PGW_COPY_OUT_REQ(sql, on_data, NULL, ud);
    return pgw_client_run(c, &r, res);
}

/*
 * Load the server's definitions of the user-defined types names[0..n)
 * (domains, enums, composites, ranges, multiranges and their arrays,
 * resolved as 'name'::regtype does, plus whatever decoding them needs) into
 * reg with one query (pgw_type_load_sql, types_container.h), so that the
 * decoders read their values through their base types. reg NULL means the
 * client's own (its config's registry, else the default one); loading into a registry is not
 * thread-safe, so do it before other threads decode through it. Each name is registered as given.
 * Returns 0, PGW_ENOTFOUND (at least one name is unknown to the server; the others were loaded),
 * PGW_EINVAL (c NULL, or names NULL with n > 0), PGW_EFORMAT (an answer row the loader rejects),
 * PGW_ENOMEM, or one of pgw_client_query's codes (PGW_ESERVER: the server refused the query; its
 * error is not kept).
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

/*
 * LISTEN/NOTIFY for blocking programs (libpq's PQnotifies plus a wait,
 * pgx's WaitForNotification).
 *
 * Every notification the connection receives, during any call of this
 * client (a query, a wait), is queued in the client, in arrival order,
 * after the connection config's on_notification (if any) has seen it. The
 * queue holds at most PGW_CLIENT_NOTIFY_QUEUE notifications
 * (pgw_client_set_notification_limit changes it): when a notification
 * arrives at a full queue the oldest queued one is dropped and counted in
 * the `missed` of the one that is then oldest, so the caller learns how
 * many were lost and where. Between calls nothing is read: notifications
 * wait in the socket until the next call.
 */
enum { PGW_CLIENT_NOTIFY_QUEUE = 4096 };

/* One notification, as pgw_client_wait_notification hands it out. */
typedef struct pgw_notification {
    int32_t pid;         /* the backend that sent NOTIFY */
    const char *channel; /* NUL-terminated */
    size_t channel_len;  /* bytes of channel, without the NUL */
    const char *payload; /* NUL-terminated ("" when NOTIFY had none) */
    size_t payload_len;  /* bytes of payload, without the NUL */
    /* Notifications dropped from the full queue just before this one (0
     * when none was). */
    uint64_t missed;
} pgw_notification_t;

/* LISTEN / UNLISTEN channel (quoted as an identifier: used exactly as
 * given, see pgwire/listen.h; UNLISTEN NULL: every channel), waiting for
 * the server to run it. Returns 0, the codes of pgw_listen_sql (nothing
 * sent) or those of pgw_client_exec (PGW_ESERVER: the server's error is
 * not kept). */
PGW_EXTERN int pgw_client_listen(pgw_client_t *c, const char *channel);
PGW_EXTERN int pgw_client_unlisten(pgw_client_t *c, const char *channel);

/*
 * Return the oldest queued notification in *out, or, when the queue is
 * empty, run the connection until one arrives or timeout_ms expires
 * (timeout_ms 0: read only what has already arrived, without blocking;
 * < 0: no limit). LIFETIME: out's strings belong to the client and stay
 * valid until the next pgw_client_wait_notification or pgw_client_close
 * (other calls leave them alone). Returns 0 (*out filled), PGW_ETIMEDOUT
 * (nothing arrived in time), PGW_ECONNLOST (the connection is broken and
 * nothing is left in the queue: only pgw_client_close is useful), or
 * PGW_EINVAL (c or out NULL); *out is zeroed on failure. Not to be called
 * from inside a callback of this client.
 */
PGW_EXTERN int pgw_client_wait_notification(pgw_client_t *c, int timeout_ms,
                                            pgw_notification_t *out);

/* Set the queue's bound (0: queue nothing; notifications then reach only
 * the config's on_notification). Queued notifications past a lower bound
 * are dropped, oldest first, and counted as missed. Returns 0 or
 * PGW_EINVAL (c NULL). */
PGW_EXTERN int pgw_client_set_notification_limit(pgw_client_t *c, size_t max);
/* Notifications queued now (0 for NULL). */
PGW_EXTERN size_t pgw_client_notifications_queued(const pgw_client_t *c);

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
/* The statement cache's counters (pgw_session_stmt_cache_stats); the
 * cache is configured by the pgw_conn_config_t given to pgw_client_connect. */
PGW_EXTERN void pgw_client_stmt_cache_stats(pgw_client_t *c, pgw_stmt_cache_stats_t *out);

/* Close the connection (sending Terminate), run the loop until every
 * handle is closed and free everything but the loop, which the process
 * keeps for the next client when it keeps none (see the top). NULL is a
 * no-op. Results already returned stay valid. */
PGW_EXTERN void pgw_client_close(pgw_client_t *c);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CLIENT_H */
