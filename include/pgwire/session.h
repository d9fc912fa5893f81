/*
 * libpgwire session: the sans-IO protocol state machine.
 *
 * A session holds everything about one PostgreSQL connection except the
 * socket: the startup and authentication steps, the FIFO of pending
 * requests, pipelining and Sync rules, result assembly. Bytes from the
 * server go in (pgw_session_input_buffer/commit, or pgw_session_recv) and
 * callbacks come out; requests go in and bytes for the server come out
 * (pgw_session_take_output, or pgw_session_pending_output/consumed).
 * The libuv connection (conn.h) is one driver of it; a binding with its own
 * event loop can be another, and tests drive it from byte arrays.
 *
 * Pipelining is the normal mode: every request is encoded at once and
 * answers are matched to requests in FIFO order. Every request ends with its
 * own Sync (its own implicit transaction) unless it is part of a batch
 * (pgw_session_submit_batch), whose requests share one Sync. After an
 * error inside a sync group, the group's later requests complete with
 * PGW_EABORTED and never run; the session stays usable.
 *
 * Callback rules: a function that returns an error never calls its
 * callback; an accepted request calls its callback exactly once, whatever
 * happens to the connection. Callbacks may issue new requests. A session
 * belongs to one thread.
 */
#ifndef PGWIRE_SESSION_H
#define PGWIRE_SESSION_H

#include <string.h>

#include "pgwire/common.h"
#include "pgwire/proto.h"
#include "pgwire/result.h"
#include "pgwire/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A sans-IO protocol session: pgw_session_new makes one, pgw_session_free
 * frees it. */
typedef struct pgw_session pgw_session_t;

/* Session states. */
typedef enum pgw_session_state {
    PGW_SESSION_NEW = 0,   /* created; pgw_session_start not yet called */
    PGW_SESSION_STARTUP,   /* StartupMessage sent, authenticating */
    PGW_SESSION_READY,     /* startup complete: requests flow */
    PGW_SESSION_BROKEN,    /* a fatal error: every pending request has failed */
    PGW_SESSION_TERMINATED /* Terminate sent */
} pgw_session_state_t;

/* Completion of a request. status is 0 or a negative code:
 *   0              success; res holds the result.
 *   PGW_ESERVER    the server answered with an error; res holds it
 *                  (pgw_result_error) and any rows received before it.
 *   PGW_ESTMTINVALID  a statement the session prepared could not be
 *                  executed because it no longer exists or no longer runs
 *                  as it was prepared (pgw_session_execute, see "Prepared
 *                  statements"); res holds the server's error (SQLSTATE
 *                  26000 or 0A000), as for PGW_ESERVER.
 *   PGW_ECOPY      the statement was a COPY and the request cannot carry
 *                  it (neither a PGW_REQ_COPY nor a PGW_REQ_SIMPLE given
 *                  COPY callbacks; see "COPY" below): the session ended the
 *                  COPY at once; res holds what it answered (for COPY FROM,
 *                  the server's 57014 echoing the CopyFail, which names
 *                  PGW_REQ_COPY; for COPY TO, the tag "COPY n" of the data
 *                  read and dropped).
 *   PGW_EABORTED   an earlier request of the same sync group failed; this
 *                  one never ran. res is NULL.
 *   PGW_ECONNLOST, PGW_EPROTO, PGW_ETOOBIG, ... the connection failed. res
 *                  is NULL.
 *   PGW_ECANCELED  the session was freed or the connection closed first.
 * A request that ends with its own Sync (every request outside a batch but
 * SIMPLE, FUNCTION_CALL and SYNC) completes at that Sync's ReadyForQuery, failed or not,
 * so pgw_session_txn_status says, during and after its callback, what it
 * left: idle, a transaction block, or a failed one.
 * OWNERSHIP: res (when not NULL) belongs to the callee, which frees it with
 * pgw_result_free, from inside the callback or at any later time (a result
 * may outlive its session). */
typedef void (*pgw_result_cb)(int status, pgw_result_t *res, void *ud);

/* Called once per DataRow of a streamed request, with the row as a
 * pgw_row_t (result.h). LIFETIME: the row, its values and fields are valid
 * only during the callback that receives them. Return 0 to go on; a
 * negative value stops delivery of further rows of this request (they are
 * read and discarded) and is reported as the request's status;
 * PGW_ROW_PAUSE keeps this row and pauses the session's input after it:
 * nothing more is delivered (no row, no callback of any request) until
 * pgw_session_resume_input (pgw_conn_resume_reading on a connection, which
 * also stops reading the socket meanwhile). See "Read backpressure". */
typedef int (*pgw_row_cb)(const pgw_row_t *row, void *ud);
enum { PGW_ROW_PAUSE = 1 };

/*
 * What an OAuth bearer token is asked for (SASL OAUTHBEARER, PostgreSQL
 * 18): the issuer the connection trusts, the discovery document the
 * server named (or oauth_issuer itself when it is a .well-known URI), the
 * scope (oauth_scope, else the one the server asked for; NULL when
 * neither), and the client's registration. Strings valid during the call.
 */
typedef struct pgw_oauth_request {
    const char *issuer;               /* the issuer identifier */
    const char *openid_configuration; /* the discovery document's URI */
    const char *scope;                /* may be NULL */
    const char *client_id;            /* oauth_client_id */
    const char *client_secret;        /* oauth_client_secret, or NULL */
} pgw_oauth_request_t;

/* Hooks from the session to its driver and to the application. All are
 * optional. ud is passed to each. */
typedef struct pgw_session_callbacks {
    /* Startup finished: status 0 (ReadyForQuery received) or the error that
     * ended it (PGW_EAUTH, PGW_EAUTHPOLICY with err->message in libpq 18's
     * words saying which method the server asked for and which rule
     * refused it, PGW_ESERVER with err set, PGW_ENOTSUP with err->message
     * naming the protocol version the server lacks, ...). err (NULL when
     * there is no detail) is valid during the call. */
    void (*on_startup)(pgw_session_t *s, int status, const pgw_error_t *err, void *ud);
    /* Output went from empty to non-empty: the driver should arrange a
     * write (conn.h coalesces these into one write per loop turn). */
    void (*on_want_write)(pgw_session_t *s, void *ud);
    /* The session broke (fatal error or pgw_session_fail): the driver should
     * close its transport. Pending requests have already been failed. */
    void (*on_broken)(pgw_session_t *s, int err, void *ud);
    /* A NoticeResponse. Also an ErrorResponse of severity FATAL or PANIC
     * that no request of the caller's is waiting for (the server ending an
     * idle connection: pg_terminate_backend, idle_session_timeout, a
     * shutdown), just before the session breaks with PGW_ECONNLOST.
     * notice is valid during the call. */
    void (*on_notice)(pgw_session_t *s, const pgw_error_t *notice, void *ud);
    void (*on_notification)(pgw_session_t *s, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud);
    void (*on_parameter)(pgw_session_t *s, pgw_str_t name, pgw_str_t value, void *ud);
    /* Protocol trace: every message, direction 'F' (to the server) or 'B'
     * (from the server), whole (type byte, length, body; StartupMessage
     * family without type byte). Views valid during the call. The sent
     * ones can be turned off and on (pgw_session_trace_sent), and so can
     * the received ones (pgw_session_trace_received). */
    void (*on_trace)(pgw_session_t *s, char direction, const uint8_t *msg, size_t len, void *ud);
    /* A monotonic clock in nanoseconds, for per-request timing (NULL: no
     * timing is recorded). */
    uint64_t (*now_ns)(void *ud);
    /* TLS channel binding data (tls-server-end-point hash of the server
     * certificate) for SCRAM-SHA-256-PLUS; NULL or returning -1 when the
     * transport is not TLS. */
    int (*channel_binding)(pgw_session_t *s, const uint8_t **data, size_t *len, void *ud);
    /* Deadlines (see "Deadlines" below): a request with a timeout was
     * accepted; ticket names it for pgw_session_expire. Called once per
     * such request, in FIFO order, before the submit returns. NULL: the
     * driver keeps no time, and a request that asks for a timeout is
     * refused with PGW_ENOTSUP. */
    void (*on_deadline)(pgw_session_t *s, uint64_t ticket, uint32_t timeout_ms, void *ud);
    /* GSSAPI authentication (AuthenticationGSS and GSSContinue; an SSPI
     * request is answered the same way, as libpq does where SSPI does not
     * exist): one step of the client's security context with the server's
     * token in[0..inlen) (NULL, 0 at the first step). Set *out / *outlen
     * to the token to send (outlen 0: none), valid until the next call.
     * Return 1 while the exchange goes on, 0 once the context is
     * established, or a negative code (PGW_EAUTH, PGW_ENOMEM, ...) with
     * libpq's message in msg[0..msglen) ("GSSAPI continuation error:
     * ..."), which fails the startup. NULL: GSSAPI is not available, and
     * such a request fails with PGW_ENOTSUP ("GSSAPI authentication not
     * supported"). The connection (conn.h) implements it with the
     * system's GSS-API library. */
    int (*gss_step)(pgw_session_t *s, const uint8_t *in, size_t inlen, const uint8_t **out,
                    size_t *outlen, char *msg, size_t msglen, void *ud);
    /* 1 when the transport is GSS-encrypted (its context authenticated the
     * client already: require_auth=gss is then met by a server that asks
     * for nothing, as in libpq). NULL: never. */
    int (*gss_encrypted)(pgw_session_t *s, void *ud);
    /* OAUTHBEARER: the bearer token for req. Append the token to *token
     * and return 1 when it is known now; return 0 when it will come later
     * (the session then completes this attempt without it and reports
     * pgw_session_oauth_retry: connect again with oauth_token set); or
     * return a negative code with a message in msg[0..msglen) to fail the
     * startup (PGW_EAUTH: "user-defined OAuth flow failed: <msg>"). Called
     * at most once per session. NULL: no flow, OAUTHBEARER fails with
     * PGW_EAUTH unless oauth_token is set. */
    int (*oauth_token)(pgw_session_t *s, const pgw_oauth_request_t *req, pgw_buf_t *token,
                       char *msg, size_t msglen, void *ud);
    /* The server sent AuthenticationOk: the driver's last word before the
     * session accepts it (the connection checks sslcertmode=require here,
     * where libpq does). Return 0 to go on, or a negative code with a
     * message in msg[0..msglen) to fail the startup with them. NULL: none. */
    int (*on_auth_ok)(pgw_session_t *s, char *msg, size_t msglen, void *ud);
} pgw_session_callbacks_t;

/* A session's options, for pgw_session_new (which copies what it keeps).
 * Set it up with pgw_session_config_init. */
typedef struct pgw_session_config {
    /* sizeof(pgw_session_config_t) as the caller's header defines it, set by
     * pgw_session_config_init, so that options can be added without breaking
     * callers built against an older header (options past size read as
     * zero: their defaults). 0 (a zeroed struct) means this header's size. */
    size_t size;
    const pgw_allocator_t *alloc; /* NULL: malloc */
    /* StartupMessage parameters as (name, value) pairs: "user" (required),
     * "database", "application_name", "options", "client_encoding", ...
     * Copied by pgw_session_new.
     *
     * Date styles: the text decoders of the types layer read ISO dates
     * and postgres intervals. The startup packet carries only these
     * parameters (as libpq's does, so poolers such as PgBouncer, which
     * refuse parameters they do not know, accept it). When the server
     * reports other styles at startup (a database's or role's default,
     * ALTER DATABASE ... SET DateStyle = 'SQL, DMY') and the application
     * did not set the style itself (a parameter of that name in any case,
     * or an "options" value mentioning it, e.g. "-c DateStyle=SQL,DMY"),
     * the session sends "SET DateStyle = 'ISO, <the server's order>'" and/or
     * "SET IntervalStyle = 'postgres'" as one simple query ahead of every
     * queued request, keeping the server's DMY/MDY/YMD input order, and
     * reports startup (on_startup) once it has run. Servers with the
     * default styles (ISO, postgres) get nothing extra. Behind a pooler in
     * transaction mode such a SET stays on the server connection it ran
     * on; give the database ISO and postgres defaults there.
     * If the application later changes either style (SET DateStyle = ...),
     * the server reports it (on_parameter, pgw_session_parameter): the
     * session changes nothing, and the text decoders of date, time,
     * timestamp, timestamptz and interval values still expect ISO and
     * postgres output, returning PGW_EFORMAT for text they cannot parse.
     * Binary results (the default on the extended protocol) do not depend
     * on either style. */
    const char *const *startup_params;
    size_t nstartup_params;
    const char *password; /* NULL: none. Copied; wiped when freed. */
    /* libpq 18's require_auth: e.g. "scram-sha-256", "md5,password",
     * "!password", "none", "oauth", "!oauth" (conninfo.h has the rules).
     * NULL: any method. "" also allows every method, but, as in libpq, an
     * authentication request require_auth cannot name (Kerberos, an
     * unknown code) is then refused. */
    const char *require_auth;
    /* "disable", "prefer" (default) or "require". */
    const char *channel_binding;
    uint32_t min_protocol; /* 0: PGW_PROTO_3_0 */
    /* 0: PGW_PROTO_3_0; PGW_PROTO_3_2 requests 3.2. A server that offers
     * less (PostgreSQL 15 to 17 answer NegotiateProtocolVersion 3.0) is
     * used at its version, as libpq 18 does, unless min_protocol is higher:
     * startup then fails with PGW_ENOTSUP, and on_startup's err carries a
     * message such as "server does not support protocol 3.2 (it offers
     * 3.0; ...)". */
    uint32_t max_protocol;
    uint32_t max_message_size; /* 0: PGW_DEFAULT_MAX_MESSAGE */
    size_t read_chunk_size;    /* 0: 64 KiB */
    /* Bytes of read chunks kept for reuse once their results are freed
     * (beyond four of read_chunk_size, always kept): larger chunks (those
     * that held one big message, such as a 1 MiB bytea row) and the chunks
     * of buffered results that spanned many, so a workload of large rows or
     * results does not make the process fault fresh pages in on every
     * query. 0: 16 MiB; SIZE_MAX: no limit. The same bound applies
     * to the output buffers: once written out, a buffer that grew past it
     * for one large request (a big parameter) is released, not kept. */
    size_t chunk_cache_bytes;
    pgw_session_callbacks_t cb;
    void *ud;
    /* Write backpressure. Once the output not yet taken by the driver (the
     * pending output plus what waits behind an open COPY) reaches
     * output_high_water bytes, submits are refused with PGW_ECONGESTED
     * (nothing queued) until it drains; on_drain (may be NULL) then fires
     * once, when it is back under half the mark, from inside
     * pgw_session_consumed_output or pgw_session_take_output, as the last
     * thing that call does. 0: 8 MiB; SIZE_MAX: no mark (never congested).
     * The output can pass the mark by one request: the check is made
     * before each submit. */
    size_t output_high_water;
    void (*on_drain)(pgw_session_t *s, void *ud);
    /* The timeout of requests whose timeout_ms is 0, in milliseconds (0:
     * none). Used only with cb.on_deadline. */
    uint32_t request_timeout_ms;
    /* The statement cache (see "Statement cache" below): PGW_STMT_CACHE_AUTO
     * (0, the default), PGW_STMT_CACHE_OFF or PGW_STMT_UNNAMED; at most
     * stmt_cache_size statements (0: 256) and stmt_cache_bytes bytes of SQL
     * and descriptions (0: 1 MiB). Another mode is PGW_EINVAL. */
    uint32_t stmt_cache_mode;
    uint32_t stmt_cache_size;
    size_t stmt_cache_bytes;
    /* The user types this session's results decode through (enums,
     * domains, composites, ranges and arrays of them, loaded with
     * pgw_type_registry_load_row or pgw_client_load_types): the result
     * accessors of result.h resolve a column of such a type through it. NULL:
     * the default registry (pgw_type_registry_default), shared by every
     * session that names none. Two sessions on databases whose user types
     * differ each name a registry of their own. It must outlive the session
     * and its results, and not be loaded into while another thread decodes
     * through it. The session's own choices (result formats) never depend
     * on it. */
    pgw_type_registry_t *registry;
    /* OAuth (SASL OAUTHBEARER, PostgreSQL 18), libpq 18's options:
     * oauth_issuer (an issuer identifier, or the URI of its discovery
     * document: https://.../.well-known/openid-configuration or
     * .../oauth-authorization-server) and oauth_client_id are both needed
     * when the server asks for OAUTHBEARER; oauth_scope overrides the
     * server's scope; oauth_token is a bearer token to present at once
     * (one the oauth_token hook gave an earlier attempt). Copied; the
     * token and secret are wiped when the session is freed. */
    const char *oauth_issuer;
    const char *oauth_client_id;
    const char *oauth_client_secret;
    const char *oauth_scope;
    const char *oauth_token;
    /* Request backpressure: at most max_pending requests accepted and not
     * yet completed (pgw_session_pending). At the bound submits are refused
     * with PGW_ECONGESTED (nothing queued) and on_drain is owed, as for
     * output_high_water: it fires once fewer than half remain (and the
     * output is under half its mark), as the last thing the input call or
     * pgw_session_expire that completed them does. A batch may pass the
     * bound by its length: the check is made before each submit.
     * 0: PGW_DEFAULT_MAX_PENDING; SIZE_MAX: no bound. */
    size_t max_pending;
    /* Non-zero: this session's results may be read and freed on other
     * threads than the one driving the session, while it runs. The memory
     * results share with their session (read chunks, recycled results, the
     * captured output settings) is then guarded by a lock the session and
     * every result take for a few instructions. 0 (the default): results
     * are the driving thread's, and nothing is locked. (Each result is
     * still one thread's at a time: see result.h, THREADS.) */
    int results_any_thread;
    /* Non-zero: no pipelining. A submit's messages are written only once
     * every request submitted before it has completed (its ReadyForQuery
     * read): one sync group on the wire at a time, as libpq outside
     * pipeline mode; later submits wait in the session's output. For
     * PgBouncer in transaction mode, which may release its server
     * connection at the first ReadyForQuery while the client's next sync
     * group is already on that server, whose answer then reaches another
     * client (pgbouncer issue 759, open in 1.18). A batch of more than one
     * sync group (PGW_BATCH_SYNC_EACH, or a request flagged PGW_Q_SYNC,
     * which the batch's closing Sync follows) is refused with PGW_ENOTSUP,
     * nothing queued. 0 (the default): requests are pipelined. */
    int no_pipelining;
    /* No per-request timing: pgw_result_timing gives 0 for every result
     * and cb.now_ns is not called for it (it still bounds a COPY pump).
     * 0 (the default): requests are stamped when queued, at their first
     * reply and at completion. */
    int no_timing;
} pgw_session_config_t;

/* The default bound on requests pending in one session (max_pending). */
#define PGW_DEFAULT_MAX_PENDING ((size_t)1 << 20)

/*
 * Statement cache modes (stmt_cache_mode of the session, connection and
 * client configurations).
 */
enum {
    /* A parameterised query (PGW_REQ_QUERY) run a second time is prepared
     * under a name of the session's own and, once its first execution has
     * described it, executed by name: no Parse, no Describe, with the same
     * result formats as every other run ("Result formats"). Needs a server
     * connection of its own: behind a
     * pooler in transaction or statement mode use PGW_STMT_UNNAMED. */
    PGW_STMT_CACHE_AUTO = 0,
    /* No automatic preparation; named statements only when asked
     * (PGW_REQ_PREPARE / EXECUTE). */
    PGW_STMT_CACHE_OFF = 1,
    /* No named statement ever: every query is Parse "" / Bind / Execute,
     * and a PREPARE, EXECUTE, DESCRIBE or CLOSE naming a statement other than
     * "" is refused with PGW_ENOTSUP. The setting for PgBouncer in
     * transaction or statement mode and other poolers that hand a client's
     * messages to whichever server connection is free. */
    PGW_STMT_UNNAMED = 2
};

/* Where the server's answer stands (pgw_session_rx_counts): counts of
 * the messages received since the session began, each only growing. A
 * driver that hands out notices among a command's results, as libpq
 * does, reads them in on_notice: the statements that ended before the
 * notice, the rows since the last end, whether anything but notices and
 * asynchronous messages came after that end. */
typedef struct pgw_rx_counts {
    /* every message, the one being dispatched included */
    uint64_t messages;
    /* CommandComplete, EmptyQueryResponse and ErrorResponse: the ends of
     * statements */
    uint64_t ends;
    /* DataRow */
    uint64_t rows;
    /* messages when the last end came (0: none yet), and rows then */
    uint64_t end_at;
    uint64_t rows_at_end;
    /* messages when the last one came that is none of an end, a
     * NoticeResponse, a NotificationResponse or a ParameterStatus */
    uint64_t other_at;
} pgw_rx_counts_t;

/* What the statement cache did (pgw_session_stmt_cache_stats). */
typedef struct pgw_stmt_cache_stats {
    uint64_t hits;          /* executions by name of a cached statement */
    uint64_t misses;        /* cacheable queries run otherwise (first use, a prepare in flight) */
    uint64_t prepares;      /* statements prepared into the cache */
    uint64_t evictions;     /* statements dropped for the count or byte bound */
    uint64_t invalidations; /* statements the server refused (26000, 0A000) */
    uint64_t reprepares;    /* of these, executions prepared again and retried */
    size_t entries;         /* statements cached now */
    size_t bytes;           /* their bytes */
} pgw_stmt_cache_stats_t;

/* Zero *cfg and set its size: every option at its default. */
PGW_EXTERN void pgw_session_config_init(pgw_session_config_t *cfg);

/* Create a session from cfg (copied). Returns 0, PGW_ENOMEM or PGW_EINVAL
 * (no "user" parameter, unknown require_auth or channel_binding value). */
PGW_EXTERN int pgw_session_new(pgw_session_t **out, const pgw_session_config_t *cfg);
/* Free the session. Pending requests complete with PGW_ECANCELED first.
 * Results already handed out stay valid. May be called from inside a
 * callback of this session: the free then happens when the callback
 * returns to the session. */
PGW_EXTERN void pgw_session_free(pgw_session_t *s);

/* Queue the StartupMessage. Requests may be queued before startup
 * completes; they are sent after ReadyForQuery. Returns 0, PGW_EBUSY (not
 * NEW) or PGW_ENOMEM. */
PGW_EXTERN int pgw_session_start(pgw_session_t *s);

/* ------------------------------------------------------------------ input */

/*
 * Zero-copy input: get a writable region of the session's read buffer,
 * read from the transport into it, then commit the bytes read. The region
 * is at least 1 byte and is valid until the commit (or any other session
 * call). Returns 0, PGW_ENOMEM, or PGW_ERECURSIVE when called from inside a
 * callback of this session.
 */
PGW_EXTERN int pgw_session_input_buffer(pgw_session_t *s, uint8_t **p, size_t *len);
/*
 * Process n bytes written into the region from pgw_session_input_buffer:
 * messages are parsed and callbacks fire. Returns 0, or the fatal error
 * that broke the session (PGW_EPROTO, PGW_ETOOBIG, PGW_ENOMEM...), after
 * which every pending request has been failed with it. Also PGW_ECANCELED
 * when a callback freed the session (s is then gone), PGW_ERECURSIVE from
 * inside a callback, PGW_EINVAL if n is larger than the region. A FATAL or
 * PANIC ErrorResponse breaks the session with PGW_ECONNLOST: the head request
 * gets PGW_ESERVER with the error, the others PGW_ECONNLOST.
 */
PGW_EXTERN int pgw_session_input_commit(pgw_session_t *s, size_t n);
/* Copying input: same as getting buffers and committing data[0..n). */
PGW_EXTERN int pgw_session_recv(pgw_session_t *s, const uint8_t *data, size_t n);
/* The transport failed or reached EOF: break the session with err
 * (typically PGW_ECONNLOST), failing every pending request exactly once. */
PGW_EXTERN void pgw_session_fail(pgw_session_t *s, int err);

/*
 * Read backpressure. A row callback returning PGW_ROW_PAUSE, or a call to
 * pgw_session_pause_input (from any callback of this session or from
 * outside), pauses the input: the message being dispatched finishes, and
 * the rest of what was committed stays where it is, in its read chunk,
 * unparsed (no copy) until pgw_session_resume_input. While paused, no
 * callback of a request fires. A driver should stop reading its transport
 * meanwhile (conn.h does); bytes committed anyway are kept, not processed.
 * Requests may still be submitted and output taken.
 */
/* Pause the input (idempotent). Returns 0 or PGW_EINVAL. */
PGW_EXTERN int pgw_session_pause_input(pgw_session_t *s);
/* End a pause. From inside a callback of this session only the flag is
 * cleared (the input that waits is processed when the session's current
 * input call goes on, or by the next call); from outside, the input that
 * waited is processed now and its callbacks fire (they may pause again).
 * Returns 0, or what pgw_session_input_commit returns for that input. */
PGW_EXTERN int pgw_session_resume_input(pgw_session_t *s);
/* 1 while the input is paused, else 0 (also for NULL). */
PGW_EXTERN int pgw_session_input_paused(const pgw_session_t *s);
/* 1 while a call into s that may run its callbacks is in progress (input,
 * start, a COPY pump, an expiry, a failure, ...), so from inside any of its
 * callbacks; else 0 (also for NULL). The calls that return PGW_ERECURSIVE
 * refuse then: a driver whose write fails inside a callback reads the
 * server's last input (its FATAL error, say) once that call has returned. */
PGW_EXTERN int pgw_session_in_callback(const pgw_session_t *s);

/* ----------------------------------------------------------------- output */

/* Bytes waiting to be written (NULL and 0 when none). The view is valid
 * until the next session call. */
PGW_EXTERN const uint8_t *pgw_session_pending_output(pgw_session_t *s, size_t *len);
/* n bytes of the pending output were written. */
PGW_EXTERN void pgw_session_consumed_output(pgw_session_t *s, size_t n);
/* Move all pending output into *out by swapping buffers: *out must be
 * empty (len 0; its capacity is reused as the session's new output
 * buffer). The caller owns *out's bytes until it hands the buffer back in a
 * later swap, so they can stay pinned during an asynchronous write. Buffers
 * carry their allocator: the session's are made with cfg->alloc (the
 * pointer given to pgw_session_new), which must outlive them. */
PGW_EXTERN void pgw_session_take_output(pgw_session_t *s, pgw_buf_t *out);

/* 1 while the output is at or over its high-water mark, or max_pending
 * requests are pending (submits are refused with PGW_ECONGESTED); 0
 * otherwise and for NULL. */
PGW_EXTERN int pgw_session_congested(const pgw_session_t *s);

/*
 * COPY FROM STDIN flow (see "COPY" below). pgw_session_copy_pump pulls the
 * source of the COPY in progress into the output until the output holds
 * the pump target, the source pauses or ends. Call it whenever output was
 * written (after pgw_session_consumed_output / take_output). A pump, this
 * one or the one CopyInResponse starts, calls the source at least once
 * however slow the clock (its time slice ends it only after a call), so a
 * pump that leaves the COPY wanting room leaves output to write. Returns 1
 * when it would take more once the output drains, 0 when there is nothing
 * to pull (no COPY FROM in progress, the source paused or ended),
 * PGW_ERECURSIVE from inside a callback of this session, PGW_ECANCELED
 * when a callback freed the session (s is then gone), or the fatal error
 * that broke the session (PGW_ETOOBIG: the source appended more than
 * max_message_size; PGW_ENOMEM).
 */
PGW_EXTERN int pgw_session_copy_pump(pgw_session_t *s);
/* A source that returned PGW_COPY_PAUSE has data again: the next
 * pgw_session_copy_pump calls it (on_want_write fires so the driver knows).
 * Returns 0, or PGW_EBUSY when no COPY FROM is paused. */
PGW_EXTERN int pgw_session_copy_resume(pgw_session_t *s);
/* 1 when a COPY FROM STDIN is running and its source can be pulled (the
 * driver should call pgw_session_copy_pump once it has room). */
PGW_EXTERN int pgw_session_copy_wants_room(const pgw_session_t *s);

/* --------------------------------------------------------------- requests */

/*
 * One request model. A request is described once, in a pgw_request_t, and
 * submitted to whichever layer the caller holds: pgw_session_submit here,
 * pgw_conn_submit (conn.h), pgw_client_run (client.h). A batch is an array
 * of descriptors submitted in one call with one completion. The named calls
 * further down (pgw_session_query, ...) only fill in a descriptor.
 *
 * The descriptor is read during the submit call only: it, its SQL, names,
 * parameters and format arrays may be reused or freed as soon as the call
 * returns (parameters are encoded into the output buffer during the call).
 */

/* What a request does. */
typedef enum pgw_request_kind {
    /* Extended query through the unnamed statement: Parse, Bind, Describe
     * portal, Execute. Uses sql, params, result formats. The Parse names
     * param_types when given, else each parameter's oid up to the last that
     * is not 0 (none for text parameters: the server infers them, and a
     * parameter the SQL does not use fails the Bind, as with libpq). */
    PGW_REQ_QUERY = 1,
    /* Simple Query ('Q'): sql may hold several statements; no parameters.
     * Each statement's result is chained (pgw_result_next) and on_result
     * fires once, at ReadyForQuery, with the first. status is PGW_ESERVER if
     * any statement failed (the failing result holds the error; statements
     * after it did not run). With on_row, the rows of every statement go to
     * it (row->fields describes the statement the row belongs to, row->index
     * counts across statements) and on_result receives the chain without
     * rows. Never part of a batch (its own sync point). Given COPY callbacks
     * (copy_source, on_copy_data, on_copy_start, on_copy_end) it carries
     * each COPY among its statements as PGW_REQ_COPY does (see "COPY in a
     * simple query"); without them such a COPY is ended at once (PGW_ECOPY). */
    PGW_REQ_SIMPLE,
    /* Parse and Describe statement of a named statement: stmt, sql and the
     * declared parameter types (param_types; NULL: all inferred). The result
     * carries the parameter types (pgw_result_nparams/param_type) and the
     * column descriptions, which the session keeps for executions. */
    PGW_REQ_PREPARE,
    /* Bind and Execute the prepared statement stmt with params. */
    PGW_REQ_EXECUTE,
    /* Describe the prepared statement stmt (parameter types and columns);
     * the reply also refreshes the session's description of it. */
    PGW_REQ_DESCRIBE,
    /* Close (deallocate) the prepared statement stmt and forget its
     * description at once (executions queued after it describe their
     * portal). */
    PGW_REQ_CLOSE,
    /* A Sync on its own; on_result fires at its ReadyForQuery (the result
     * has no rows). Never part of a batch. Ends an open group (see
     * "Portals and open groups"). */
    PGW_REQ_SYNC,
    /* COPY ... FROM STDIN or COPY ... TO STDOUT in sql (no parameters),
     * through the unnamed statement: Parse, Bind, Describe portal, Execute.
     * The direction is the server's (CopyInResponse or CopyOutResponse):
     * data comes from copy_source, goes to on_copy_data. See "COPY" below. */
    PGW_REQ_COPY = 8,
    /* A protocol Flush ('H', libpq's PQsendFlushRequest): the server sends
     * what it has produced for the requests before it without waiting for
     * a Sync. on_result fires (a result without rows) once every request
     * queued before it has completed. As the last element of a batch it
     * replaces the batch's Sync: the batch's requests run and answer at
     * once, and the group stays open for later requests until a SYNC (see
     * "Portals and open groups"); done then fires with the FLUSH. Refused
     * (PGW_EINVAL) when no request is queued before it. */
    PGW_REQ_FLUSH = 9,
    /* Execute the open portal `portal` for at most max_rows more rows (0:
     * all that are left), with a Describe of it: the result holds the
     * columns and this batch of rows (or streams them to on_row) and
     * pgw_result_suspended tells whether rows are left. */
    PGW_REQ_FETCH = 10,
    /* Close the portal `portal` (Close 'P'; closing a portal that no longer
     * exists is not an error). The Sync of the open group follows it when
     * this closes the group's last portal (the group's implicit transaction
     * commits there: on_result fires at its ReadyForQuery, with the commit's
     * error if it failed). */
    PGW_REQ_CLOSE_PORTAL = 11,
    /* Describe the portal `portal` ("" is the unnamed one; libpq's
     * PQdescribePortal): the result has the portal's columns, with the
     * formats it was bound with, and no rows (no columns when the portal
     * returns none). A portal that does not exist is the server's error
     * (34000, PGW_ESERVER), which like any error fails an open transaction
     * block. A portal lives in a transaction: describe a cursor DECLAREd in
     * a transaction block, or a portal of the open group (this request then
     * joins the group, see "Portals and open groups"); outside both, the
     * request's own Sync has ended the portal before it runs. */
    PGW_REQ_DESCRIBE_PORTAL = 12,
    /* A fast-path function call (FunctionCall 'F', libpq's PQfn): the
     * function whose OID is fn_oid (not 0) with params as its arguments
     * (each sent in its own format, types not sent: the function's own
     * apply), its value asked in binary (text with PGW_Q_TEXT, or
     * result_formats[0]; at most one entry). The result has one column
     * (no name, type 0, the format asked) and one row: the value, NULL
     * when the function returned NULL; no tag. The server's error is
     * PGW_ESERVER. Like SIMPLE it is its own sync point (it completes at
     * ReadyForQuery, inside or outside a transaction block) and is never
     * part of a batch. */
    PGW_REQ_FUNCTION_CALL = 13
} pgw_request_kind_t;

/* Request flags (pgw_request_t.flags). */
enum {
    /* Ask every result column in text format (every type has it). */
    PGW_Q_TEXT = 1u << 0,
    /* Inside a batch: end the sync group after this request (a Sync follows
     * it, so an error before it does not abort the requests after it).
     * Outside a batch every request has its own Sync anyway. */
    PGW_Q_SYNC = 1u << 1,
    /* EXECUTE of a statement whose parameter types the session knows: a
     * parameter count other than the statement's is sent as given (the
     * parameters unconverted) for the server to refuse at Bind (08P01,
     * PGW_ESERVER), as libpq's PQexecPrepared does, instead of being
     * refused with PGW_EINVAL before anything is sent. */
    PGW_Q_ANY_NPARAMS = 1u << 2,
    /* No result object: when the request succeeds on_result receives NULL
     * for res (the status alone says it succeeded), and the rows go to
     * on_row when it is set, else they are read and dropped. A request
     * waiting for its answer holds no result either way, and the one the
     * session fills while the answer arrives is recycled at once, so a
     * pipeline of such requests allocates nothing per request once warm.
     * When the request fails (any status but 0) on_result receives what it
     * would without the flag: the result holding the server's error
     * (PGW_ESERVER), or NULL. Any kind; a batch's done still receives its
     * result. */
    PGW_Q_NO_RESULT = 1u << 3,
    /* FLUSH only (PGW_EINVAL on another kind): no Flush message goes out.
     * The requests before it are written, the group stays open and the
     * FLUSH completes after them as without the flag, but the server
     * answers them only at a later Sync or Flush (or when its own output
     * buffer fills): libpq's PQflush in pipeline mode. */
    PGW_Q_NO_MESSAGE = 1u << 4
};

/* Statement-cache policy of one request (pgw_request_t.cache; QUERY only). */
enum {
    PGW_CACHE_DEFAULT = 0, /* the session's stmt_cache_mode */
    PGW_CACHE_SKIP = 1,    /* never from or into the cache: an unnamed statement */
    PGW_CACHE_NOW = 2      /* prepare into the cache at the first use (AUTO mode only) */
};

/* ------------------------------------------------------------------ COPY */

/*
 * COPY. A PGW_REQ_COPY request runs one COPY statement. What the server
 * answers decides the direction:
 *
 *   COPY ... FROM STDIN: the session pulls the data from copy_source, writing
 *   what it returns as CopyData straight into the output buffer, while the
 *   output holds less than the pump target (a quarter of the high-water mark,
 *   at most 256 KiB): memory stays bounded however much is sent. The driver
 *   calls pgw_session_copy_pump when it has written output (conn.h and the
 *   blocking client do it for you). When the source reports the end, CopyDone
 *   is sent; when it fails (a negative return), or on_copy_start fails, or
 *   the request has no copy_source, CopyFail is sent and the server ends the
 *   COPY with an error (SQLSTATE 57014): nothing of it is kept.
 *
 *   COPY ... TO STDOUT: each CopyData the server sends goes to on_copy_data
 *   as a view into the read chunk (no copy): for text and CSV one row per
 *   call, for binary the header, rows and trailer as the server split them
 *   (pgw_copy_bin_next, types_container.h, reads them).
 *
 * Ordering: nothing submitted after a COPY is written before the server
 * knows where the COPY's data ends (the server reads every message during
 * COPY FROM STDIN as part of the COPY): the requests after it, its own Sync
 * included, are encoded at once into a held buffer and written after its
 * CopyDone / CopyFail, after its CopyOutResponse, or after the error that
 * ended it before it began. So a COPY works inside a one-Sync batch and
 * keeps the order of everything around it.
 *
 * Flow: the COPY's Execute is followed by a Flush, so that the server
 * sends what it has for the COPY at once (it otherwise holds a COPY TO's
 * output until a Sync, or until 8 KiB of it fill its buffer, and the Sync
 * waits behind the COPY). A COPY FROM's source is pulled for at most a
 * millisecond per pump when the driver keeps a clock (cb.now_ns), so a
 * source that waits for its data leaves the driver's loop its other work;
 * when its deadline passes (see "Deadlines") the source is called no more
 * and CopyFail is sent at once.
 *
 * COPY in a simple query. A PGW_REQ_SIMPLE given any of the COPY
 * callbacks carries each COPY among its statements as PGW_REQ_COPY does:
 * on_copy_start when the server begins one (pgw_copy_info_t.results then
 * holds the results of the statements before it, so that a driver can
 * hand them out first), the data pulled from copy_source or handed to
 * on_copy_data, then on_copy_end with the COPY statement's result (its tag
 * "COPY n" or the server's error) when that statement ends; the statements
 * after it run, and on_result fires at ReadyForQuery with the whole chain,
 * the COPY's result in its place. A COPY FROM STDIN without a copy_source
 * gets a CopyFail ("COPY FROM STDIN without a data source"), which the
 * server answers with 57014 (the statements after it do not run): the
 * status is then PGW_EINVAL. Otherwise the status is 0, PGW_ESERVER when a
 * statement failed, or the caller's negative code when it abandoned a COPY
 * (the chain then holds the server's 57014).
 *
 * COPY in other requests. The server may answer any statement with a COPY:
 * a COPY run as PGW_REQ_QUERY or as a PGW_REQ_SIMPLE without COPY callbacks
 * (alone or among the statements of a simple query), a PGW_REQ_EXECUTE of
 * a statement prepared from COPY, START_REPLICATION on a replication
 * connection (CopyBoth, refused by every request). Only PGW_REQ_COPY and a
 * PGW_REQ_SIMPLE given COPY callbacks carry a COPY, so the session ends
 * such a COPY at once and keeps the connection: a COPY FROM STDIN gets a
 * CopyFail whose message names PGW_REQ_COPY (the server fails the
 * statement with 57014 and, in a simple query, skips the statements after
 * it), a COPY TO STDOUT has its data read and dropped (the statements
 * after it run), a CopyBoth gets CopyDone and its data is dropped; the
 * request completes with PGW_ECOPY and the result of the COPY
 * (pgw_result_copy_direction says which). Because the server reads what
 * follows a COPY FROM as its data, a request whose SQL contains the word
 * COPY or START_REPLICATION (even in a literal or comment) holds what is
 * submitted after it, as a PGW_REQ_COPY does, until it completes: such a
 * statement costs a round trip before the requests behind it.
 *
 * Completion (on_result, once): 0 with a result whose command tag is
 * "COPY n" (pgw_result_rows_affected: n rows); PGW_ESERVER with the
 * server's error (a bad row: 22P02, 22P04, a constraint...); the source's,
 * on_copy_start's or on_copy_data's negative code when the caller abandoned
 * it (the result then holds the server's error, 57014 for COPY FROM, when
 * there is one); PGW_EINVAL when the server asked for data and there was no
 * copy_source; the connection's errors. In every case the session is back
 * at its normal state: after an error inside a transaction block the
 * transaction is failed ('E'), as for any statement.
 */

/* What the source returns (or a negative code to abandon the COPY). */
enum {
    /* Data was appended (possibly none): call again when there is room.
     * A call that appends nothing and returns PGW_COPY_MORE is taken as
     * PGW_COPY_PAUSE, so a source can never spin the loop. */
    PGW_COPY_MORE = 0,
    /* Everything was sent: the bytes appended by this call go out, then
     * CopyDone. */
    PGW_COPY_END = 1,
    /* Nothing to send now: the session stops calling until
     * pgw_session_copy_resume (pgw_conn_copy_resume). */
    PGW_COPY_PAUSE = 2
};

/*
 * COPY FROM STDIN data source. Append COPY data to out (raw bytes, or rows
 * through the row encoders of types_container.h: pgw_copy_text_int4,
 * pgw_copy_bin_row_begin, ...); room is how many bytes the session would
 * like at most (a hint: a longer append is sent as is, up to
 * max_message_size). out is the session's output buffer positioned inside a
 * CopyData message: only append to it (never consume or free it; it may
 * drop what it appended during this call by setting out->len back, never
 * below its value when the call began); the view is valid during the call. Return PGW_COPY_MORE,
 * PGW_COPY_END, PGW_COPY_PAUSE, or a negative code to abandon the COPY: the text appended by that
 * call, if any, becomes the CopyFail message (without NUL bytes, at most 200 bytes used), else
 * "COPY abandoned by the client: " and the code's pgw_strerror. Called from the session's input
 * processing and from pgw_session_copy_pump; it may submit requests (they wait behind the COPY) or
 * close the connection.
 */
typedef int (*pgw_copy_source_cb)(pgw_buf_t *out, size_t room, void *ud);

/* COPY TO STDOUT: one CopyData payload, a view into the read chunk valid
 * during the call. Return 0 to go on; a negative value stops delivery (the
 * rest is read and discarded) and becomes the request's status. */
typedef int (*pgw_copy_data_cb)(const uint8_t *data, size_t len, void *ud);

/* What the server's CopyInResponse / CopyOutResponse said (PGW_COPY_BOTH:
 * a CopyBothResponse, which only a replication connection sends). */
enum { PGW_COPY_IN = 1, PGW_COPY_OUT = 2, PGW_COPY_BOTH = 3 };
/* A COPY as the server began it, for pgw_copy_start_cb. */
typedef struct pgw_copy_info {
    int direction;              /* PGW_COPY_IN or PGW_COPY_OUT */
    int format;                 /* 0: text (text or CSV), 1: binary */
    uint16_t ncols;             /* columns of the COPY */
    const int16_t *col_formats; /* ncols formats (0 or 1), valid as long as
                                   the request's result */
    /* The request's results so far, a view valid during the call: for a
     * PGW_REQ_SIMPLE the chain (pgw_result_next) of the statements before
     * this COPY, then the COPY's own result (last, not complete); for a
     * PGW_REQ_COPY its own result. The same results reach on_result. */
    const pgw_result_t *results;
} pgw_copy_info_t;

/* Optional: the COPY began (before the first data is pulled or
 * delivered). A negative return abandons it as a source failure would
 * (COPY FROM: CopyFail; COPY TO: the data is discarded) and becomes the
 * status. */
typedef int (*pgw_copy_start_cb)(const pgw_copy_info_t *info, void *ud);
/* Optional, PGW_REQ_SIMPLE only: the COPY statement that began with
 * on_copy_start ended (its CommandComplete or its error arrived; a COPY
 * TO's data has all gone to on_copy_data). res is the COPY's result (tag
 * "COPY n", or pgw_result_error), a view valid during the call; it stays
 * in the chain on_result receives. The statements after it are still to
 * come: a driver may pause the input here (pgw_session_pause_input,
 * pgw_conn_pause_reading) until its caller has taken the COPY's data. */
typedef void (*pgw_copy_end_cb)(const pgw_result_t *res, void *ud);
/* pgw_request_t.timeout_ms: no deadline, whatever the default. */
#define PGW_TIMEOUT_NONE UINT32_MAX

/* A request descriptor for pgw_session_submit and the layers above it:
 * build it with PGW_REQUEST_INIT, pgw_request_init or the PGW_QUERY family,
 * then set the members a request needs. Read during the submit call only;
 * the pointers in it must live until that call returns unless a member
 * says otherwise. */
typedef struct pgw_request {
    /* sizeof(pgw_request_t) as the caller's header defines it, so that
     * fields can be added without breaking callers built against an older
     * header (fields past size read as zero). PGW_REQUEST_INIT, the
     * PGW_QUERY family and pgw_request_init set it; 0 is refused with
     * PGW_EINVAL. */
    size_t size;
    pgw_request_kind_t kind;
    const char *sql;  /* QUERY, SIMPLE, PREPARE */
    const char *stmt; /* PREPARE, EXECUTE, DESCRIBE, CLOSE: the statement name */
    /* QUERY, EXECUTE: the parameters (see types.h). For EXECUTE of a
     * statement whose parameter types the session knows (it prepared or
     * described it), a parameter of another binary type is converted when
     * the value fits (an int8 for an int4 parameter, an int4 for a float8)
     * and refused before anything is sent when it does not (PGW_ERANGE) or
     * cannot be (PGW_ETYPE); a count that differs from the statement's is
     * PGW_EINVAL (unless flags has PGW_Q_ANY_NPARAMS).
     * pgw_session_refusal tells which parameter and why. */
    const pgw_param_t *params;
    size_t nparams;
    /* PREPARE, QUERY: declared parameter types, sent in the Parse as given
     * (NULL: inferred; nparam_types 0; for QUERY the parameters' oids, see
     * PGW_REQ_QUERY). A QUERY that gives them is never cached. */
    const uint32_t *param_types;
    size_t nparam_types;
    /* QUERY, EXECUTE: result formats for Bind. NULL: the rule (see "Result
     * formats": binary for every column but the types without binary
     * output; text for all with PGW_Q_TEXT). One entry: every column;
     * otherwise one per result column (the server refuses another count). */
    const int16_t *result_formats;
    size_t nresult_formats;
    unsigned flags; /* PGW_Q_* */
    /* Completion, exactly once for an accepted request (see pgw_result_cb). */
    pgw_result_cb on_result;
    /* Optional: stream the rows to on_row as views into the read buffer (no
     * copy); on_result then receives a result without rows (command tag,
     * rows affected, column descriptions). A negative return from on_row
     * discards the remaining rows and becomes the status (unless the server
     * reported an error: PGW_ESERVER wins). */
    pgw_row_cb on_row;
    void *ud; /* passed to on_result and on_row alike */
    /* The request's deadline in milliseconds from its submit, covering its
     * wait behind earlier requests of the connection (see "Deadlines"): 0
     * takes the connection's default (pgw_conn_config_t.request_timeout_ms,
     * none unless set), PGW_TIMEOUT_NONE none at all. Honoured by
     * pgw_conn_submit and pgw_client_run (and the session when its driver
     * keeps time: cb.on_deadline); pgw_session_submit without that hook
     * refuses anything but 0 and PGW_TIMEOUT_NONE with PGW_ENOTSUP. */
    uint32_t timeout_ms;
    /* QUERY: PGW_CACHE_DEFAULT, PGW_CACHE_SKIP or PGW_CACHE_NOW (another
     * value, or a non-zero one on another kind, is PGW_EINVAL). */
    uint32_t cache;
    /* COPY (PGW_REQ_COPY; PGW_REQ_SIMPLE to carry the COPY statements among
     * its statements; another kind refuses them with PGW_EINVAL; ud is
     * passed to each). */
    pgw_copy_source_cb copy_source;  /* COPY FROM STDIN data */
    pgw_copy_data_cb on_copy_data;   /* COPY TO STDOUT data (NULL: discarded) */
    pgw_copy_start_cb on_copy_start; /* optional */
    /* portals (see "Portals and open groups") */
    /* QUERY, EXECUTE: bind into this named portal instead of the unnamed
     * one, and keep it open for FETCH; FETCH, CLOSE_PORTAL, DESCRIBE_PORTAL:
     * the portal ("" is the unnamed portal). Copied during the submit. */
    const char *portal;
    /* QUERY, EXECUTE, FETCH: at most this many rows per Execute (0: all).
     * On QUERY / EXECUTE a non-zero value opens a portal (the unnamed one
     * when portal is NULL) as portal does. */
    uint32_t max_rows;
    /* Which server of a routing pool takes the request (pool.h,
     * MULTI-HOST): PGW_ROUTE_PRIMARY (0) or PGW_ROUTE_READ_ONLY. A session
     * or connection runs every request where it is, whatever this says;
     * another value is PGW_EINVAL. */
    uint32_t route;
    /* PGW_REQ_SIMPLE with COPY callbacks (optional): a COPY statement
     * ended (see pgw_copy_end_cb). At the end: the descriptor grows by
     * size. */
    pgw_copy_end_cb on_copy_end;
    /* FUNCTION_CALL: the function's OID. */
    uint32_t fn_oid;
} pgw_request_t;

enum {
    PGW_ROUTE_PRIMARY = 0,  /* read-write work: the primary */
    PGW_ROUTE_READ_ONLY = 1 /* read-only work: a standby when one is up */
};

/* A descriptor with every field zero but size (usable as an initializer). */
#define PGW_REQUEST_INIT              \
    {                                 \
        .size = sizeof(pgw_request_t) \
    }
PGW_INLINE void pgw_request_init(pgw_request_t *r, pgw_request_kind_t kind)
{
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    r->kind = kind;
}

/* Copy the caller's descriptor *in into this library's layout: fields past
 * in->size (a caller built against an older header) read as zero, and
 * out->size is this header's size. Returns 0, or PGW_EINVAL (out or in NULL,
 * in->size too small; *out is then zeroed). For layers built on the
 * session that keep a caller's descriptor (the pool's queue, cursors). */
PGW_EXTERN int pgw_request_copy(pgw_request_t *out, const pgw_request_t *in);
/* Element i of an array of descriptors whose element size is reqs[0].size
 * (the caller's sizeof). NULL for a NULL array. */
PGW_EXTERN const pgw_request_t *pgw_request_nth(const pgw_request_t *reqs, size_t i);

/* A descriptor for the common requests (what the macros below expand to;
 * set more fields, e.g. on_row or flags, on the copy). */
PGW_INLINE pgw_request_t pgw_request_make(pgw_request_kind_t kind, const char *sql,
                                          const char *stmt, const pgw_param_t *params,
                                          size_t nparams, const uint32_t *types, size_t ntypes,
                                          pgw_result_cb cb, void *ud)
{
    pgw_request_t r;
    pgw_request_init(&r, kind);
    r.sql = sql;
    r.stmt = stmt;
    r.params = params;
    r.nparams = nparams;
    r.param_types = types;
    r.nparam_types = ntypes;
    r.on_result = cb;
    r.ud = ud;
    return r;
}
#define PGW_QUERY(sql, params, n, cb, ud) \
    pgw_request_make(PGW_REQ_QUERY, (sql), NULL, (params), (n), NULL, 0, (cb), (ud))
#define PGW_SIMPLE(sql, cb, ud) \
    pgw_request_make(PGW_REQ_SIMPLE, (sql), NULL, NULL, 0, NULL, 0, (cb), (ud))
#define PGW_PREPARE(stmt, sql, types, ntypes, cb, ud) \
    pgw_request_make(PGW_REQ_PREPARE, (sql), (stmt), NULL, 0, (types), (ntypes), (cb), (ud))
#define PGW_EXECUTE(stmt, params, n, cb, ud) \
    pgw_request_make(PGW_REQ_EXECUTE, NULL, (stmt), (params), (n), NULL, 0, (cb), (ud))
#define PGW_DESCRIBE(stmt, cb, ud) \
    pgw_request_make(PGW_REQ_DESCRIBE, NULL, (stmt), NULL, 0, NULL, 0, (cb), (ud))
#define PGW_CLOSE(stmt, cb, ud) \
    pgw_request_make(PGW_REQ_CLOSE, NULL, (stmt), NULL, 0, NULL, 0, (cb), (ud))
#define PGW_SYNC(cb, ud)  pgw_request_make(PGW_REQ_SYNC, NULL, NULL, NULL, 0, NULL, 0, (cb), (ud))
#define PGW_FLUSH(cb, ud) pgw_request_make(PGW_REQ_FLUSH, NULL, NULL, NULL, 0, NULL, 0, (cb), (ud))
/* A descriptor naming a portal (FETCH, CLOSE_PORTAL; QUERY and EXECUTE
 * descriptors get .portal and .max_rows set on the copy). */
PGW_INLINE pgw_request_t pgw_request_make_portal(pgw_request_kind_t kind, const char *portal,
                                                 uint32_t max_rows, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = pgw_request_make(kind, NULL, NULL, NULL, 0, NULL, 0, cb, ud);
    r.portal = portal;
    r.max_rows = max_rows;
    return r;
}
#define PGW_FETCH(portal, max_rows, cb, ud) \
    pgw_request_make_portal(PGW_REQ_FETCH, (portal), (max_rows), (cb), (ud))
#define PGW_CLOSE_PORTAL(portal, cb, ud) \
    pgw_request_make_portal(PGW_REQ_CLOSE_PORTAL, (portal), 0, (cb), (ud))
#define PGW_DESCRIBE_PORTAL(portal, cb, ud) \
    pgw_request_make_portal(PGW_REQ_DESCRIBE_PORTAL, (portal), 0, (cb), (ud))
PGW_INLINE pgw_request_t pgw_request_make_function_call(uint32_t fn_oid, const pgw_param_t *params,
                                                        size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r =
        pgw_request_make(PGW_REQ_FUNCTION_CALL, NULL, NULL, params, nparams, NULL, 0, cb, ud);
    r.fn_oid = fn_oid;
    return r;
}
#define PGW_FUNCTION_CALL(fn_oid, params, n, cb, ud) \
    pgw_request_make_function_call((fn_oid), (params), (n), (cb), (ud))

/* A COPY FROM STDIN fed by source, or a COPY TO STDOUT delivered to
 * on_data (either may be NULL). */
PGW_INLINE pgw_request_t pgw_request_make_copy(const char *sql, pgw_copy_source_cb source,
                                               pgw_copy_data_cb on_data, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = pgw_request_make(PGW_REQ_COPY, sql, NULL, NULL, 0, NULL, 0, cb, ud);
    r.copy_source = source;
    r.on_copy_data = on_data;
    return r;
}
#define PGW_COPY_IN_REQ(sql, source, cb, ud) \
    pgw_request_make_copy((sql), (source), NULL, (cb), (ud))
#define PGW_COPY_OUT_REQ(sql, on_data, cb, ud) \
    pgw_request_make_copy((sql), NULL, (on_data), (cb), (ud))
/* The constructors' names in 0.1.0, kept so code written against it builds:
 * descriptors are built by pgw_request_make*, copied by pgw_request_copy. */
#define pgw_request_portal    pgw_request_make_portal
#define pgw_request_copy_make pgw_request_make_copy

/*
 * Submit one request. Every request but SIMPLE, FUNCTION_CALL and SYNC
 * ends with its own Sync (its own implicit transaction, an error barrier). Parameters are
 * encoded straight into the output buffer; encoding is all or nothing.
 * Returns 0 (on_result will fire exactly once), or, with nothing queued and
 * no callback: PGW_EINVAL (NULL session or request, size 0, unknown kind, a
 * field the kind needs missing, parameters on a SIMPLE request, more than
 * PGW_MAX_PARAMS parameters or types, a parameter count the prepared
 * statement does not take, an unknown cache policy), PGW_ENOTSUP (a timeout
 * without cb.on_deadline; a named statement under PGW_STMT_UNNAMED),
 * PGW_ERANGE / PGW_ETYPE (a parameter the statement's type cannot take, see
 * params), PGW_ECLOSED (session broken, terminated or being freed),
 * PGW_ECONGESTED (the output is over its high-water mark: wait for
 * on_drain), PGW_ENOMEM, PGW_ETOOBIG (a message over max_message_size: refused before
 * a byte of it is written; an encoder parameter is stopped as soon as it
 * would pass the limit), or a parameter encoder's error. None of them
 * breaks the session.
 */
PGW_EXTERN int pgw_session_submit(pgw_session_t *s, const pgw_request_t *req);

/*
 * Submit reqs[0..n) as one batch (unit of work), in one piece: all are
 * queued or none is. Without flags the requests share one Sync (one
 * implicit transaction: after an error the group's later requests complete
 * with PGW_EABORTED and never run); a request with PGW_Q_SYNC ends its group
 * there; PGW_BATCH_SYNC_EACH gives every request its own Sync. done (may be
 * NULL) fires once, after every request's own callback, with 0 if all
 * succeeded or the first failure, and a result without rows (free it as
 * any result). Kinds QUERY, PREPARE, EXECUTE, DESCRIBE, CLOSE and COPY
 * only (SIMPLE, FUNCTION_CALL and SYNC are PGW_EINVAL). Executions read the statement table as
 * the requests before them in the batch leave it (an EXECUTE after a
 * PREPARE of the same name describes its portal in the same round trip).
 * Returns 0, or an error of pgw_session_submit for the first request
 * refused (pgw_session_refusal names its index), with nothing queued;
 * PGW_EINVAL also for n == 0, n of UINT32_MAX or more, or reqs NULL.
 */
enum { PGW_BATCH_SYNC_EACH = 1u << 0, PGW_BATCH_STREAM = 1u << 1 };
PGW_EXTERN int pgw_session_submit_batch(pgw_session_t *s, const pgw_request_t *reqs, size_t n,
                                        unsigned flags, pgw_result_cb done, void *ud);

/*
 * Streamed batches: a large batch written while it is still being encoded,
 * so that the server starts on its first requests while the client encodes
 * the rest (libpq's pipeline mode flushes as it goes the same way).
 *
 * With PGW_BATCH_STREAM in the flags of pgw_session_submit_batch (and of
 * pgw_conn_submit_batch, pgw_client_run_batch), each time the batch's
 * encoded output passes part_bytes, the requests encoded so far are
 * accepted (queued, as a whole batch would be) and ready(s, ctx) is called
 * inside the submit: the driver takes the session's output and writes it
 * as it would in a write turn. ready must not submit, break or free the
 * session, and must run no request callback (conn.h's pgw_conn_t sets
 * this up itself, with parts of 64 KiB). The batch's
 * group is the same as without the flag: one Sync after the last request
 * (or each request's own Sync), one done.
 *
 * What changes is a refusal part way. An atomic batch queues nothing when
 * a request is refused; a streamed batch keeps the requests of the parts
 * already accepted: the refused request and those after it in its part
 * are dropped, the group is closed with the batch's Sync, and the accepted
 * requests complete (their callbacks, then done) as usual. The submit
 * still returns the refusal's code; pgw_session_batch_accepted says how
 * many requests it accepted, pgw_session_refusal which one was refused.
 * A batch is not streamed from its first COPY or request with a deadline
 * on (the output after them is held back, see "COPY" and "Deadlines"),
 * nor while the output is held behind an earlier one; without
 * pgw_session_set_stream, or with ready NULL, PGW_BATCH_STREAM is ignored.
 */
typedef void (*pgw_stream_ready_fn)(pgw_session_t *s, void *ctx);
PGW_EXTERN void pgw_session_set_stream(pgw_session_t *s, size_t part_bytes,
                                       pgw_stream_ready_fn ready, void *ctx);

/* How many requests of the last batch submit on s were accepted: n after
 * a batch that was accepted, 0 after a refused atomic batch, the requests
 * of the parts already written after a refused PGW_BATCH_STREAM batch
 * (0 before any batch, and for s NULL). */
PGW_EXTERN size_t pgw_session_batch_accepted(const pgw_session_t *s);

/*
 * Driver completions. A layer that submits requests on a caller's behalf
 * (the blocking client, a cursor, a pool, a binding's event loop) passes
 * the caller's descriptors unchanged and hears how each request ended
 * through a hook of its own: the caller's on_result, on_row, COPY and
 * portal callbacks run with the caller's ud exactly as for
 * pgw_session_submit (nghttp2's session-level close callback, curl's
 * curl_multi_info_read).
 *
 * The hook fires exactly once per accepted request, just before the
 * request's on_result would, with ctx, the request's index in its batch (0
 * for a single request), its status and *res, the result on_result would
 * receive (NULL when there is none). For a batch it fires once more, with
 * index PGW_DRIVER_BATCH, before the batch's done. It returns either the
 * status on_result then receives (status itself to change nothing; a pool
 * maps a lost connection to PGW_ERETRY), or PGW_DRIVER_TAKEN: the driver
 * took the completion, on_result (or done) is not called, and *res belongs
 * to the driver (which frees it with pgw_result_free). A hook must not free
 * the session; it may submit requests or break the session, as a callback
 * may. Everything else (returns, refusals, the callback rules) is that of
 * pgw_session_submit and pgw_session_submit_batch; hook NULL makes them
 * the same calls.
 */
typedef int (*pgw_driver_hook)(void *ctx, size_t index, int status, pgw_result_t **res);
#define PGW_DRIVER_BATCH SIZE_MAX
enum { PGW_DRIVER_TAKEN = 1 };
PGW_EXTERN int pgw_session_submit_driven(pgw_session_t *s, const pgw_request_t *req,
                                         pgw_driver_hook hook, void *ctx);
PGW_EXTERN int pgw_session_submit_batch_driven(pgw_session_t *s, const pgw_request_t *reqs,
                                               size_t n, unsigned flags, pgw_result_cb done,
                                               void *ud, pgw_driver_hook hook, void *ctx);
/* A driver whose caller asks for a query's rows one at a time after the
 * submit (libpq's PQsetSingleRowMode): from now on the rows of the
 * pending request at index of the submit driven with ctx (0 for one
 * submitted alone with pgw_session_submit_driven; in a batch submitted
 * with pgw_session_submit_batch_driven, its index there) go to on_row
 * (with the request's ud), as if it had been submitted with on_row set.
 * Only a PGW_REQ_QUERY, PGW_REQ_EXECUTE or PGW_REQ_SIMPLE (not a function
 * call). A query's or execute's rows that came before stay in its result
 * (pgw_session_driven_results shows them), and on_result receives that
 * result with them; a simple query is switched only before a row came.
 * Returns 0, PGW_EINVAL (s or on_row NULL, index PGW_DRIVER_BATCH),
 * PGW_ENOTFOUND (no such request is pending), PGW_ENOTSUP (another kind,
 * or its rows already stream), PGW_EBUSY (a query or execute ended, a
 * simple query's rows came) or PGW_ENOMEM. */
PGW_EXTERN int pgw_session_stream_driven(pgw_session_t *s, void *ctx, size_t index,
                                         pgw_row_cb on_row);
/* The results so far of the pending request at index of the submit
 * driven with ctx (as pgw_session_stream_driven names it): the head of its
 * chain (pgw_result_next), a simple query's statements that ended and
 * then the one running, if its answer began. Views owned by the session,
 * valid until it next dispatches input (a row callback may read them).
 * NULL when there is no such request or nothing came yet. A driver that
 * streams a simple query's rows hands out each statement's result from
 * here, before the next statement's rows. */
PGW_EXTERN const pgw_result_t *pgw_session_driven_results(pgw_session_t *s, void *ctx,
                                                          size_t index);

/* The COPY a result answers: PGW_COPY_IN or PGW_COPY_OUT once the server
 * began it (0 for results of other requests, and when the COPY failed
 * before it began); its overall format (0 text, 1 binary; -1 when not a
 * COPY) and the format of column i (-1 out of range). */
PGW_EXTERN int pgw_result_copy_direction(const pgw_result_t *r);
PGW_EXTERN int pgw_result_copy_format(const pgw_result_t *r);
PGW_EXTERN int pgw_result_copy_column_format(const pgw_result_t *r, size_t i);
/* COPY bytes sent (COPY FROM) or received (COPY TO) as CopyData payload. */
PGW_EXTERN uint64_t pgw_result_copy_bytes(const pgw_result_t *r);

/* Why the last submit on this session was refused ("request 2: parameter
 * $1: int8 value 5000000000 does not fit the statement's int4"), or "" when
 * it was accepted. Valid until the next submit. "" for NULL. */
PGW_EXTERN const char *pgw_session_refusal(const pgw_session_t *s);

/*
 * Portals and open groups.
 *
 * A QUERY or EXECUTE with a portal name or max_rows opens a portal: Bind
 * into it, Describe it, Execute it for max_rows rows, then a Flush instead
 * of a Sync, so that the first batch arrives at once. Its result holds that
 * batch; pgw_result_suspended says whether rows are left (the server sent
 * PortalSuspended) or the portal is complete (CommandComplete). FETCH gets
 * the next batch, CLOSE_PORTAL closes the portal. Only one batch is in
 * memory at a time (or none with on_row), however large the result. Named
 * portals can be open at the same time and fetched in any order.
 *
 * Because a Sync ends the implicit transaction that holds the portals, a
 * portal opens a group that stays open (no Sync is sent) until the request
 * that closes it. Requests submitted while a group is open JOIN it, in
 * order: they are sent at once, without a Sync of their own and followed by
 * a Flush, so they answer at once and complete at their CommandComplete;
 * they run in the group's transaction and commit with it. That is the same
 * whether the portals live in an explicit transaction block (BEGIN ...
 * COMMIT, where a Sync would not close them anyway) or in the implicit one
 * the group opened: a cursor behaves as if a transaction lasted from its
 * open to its close, and requests made in between (an INSERT for every
 * batch read) are part of it. The group ends with
 *   - a CLOSE_PORTAL of the last portal opened in it (Close, then Sync),
 *   - a SYNC request,
 *   - a batch (its final Sync; unless it ends with FLUSH),
 *   - a SIMPLE request (a Sync is sent before its Query, which would
 *     otherwise commit the group's transaction, or be skipped after an
 *     error).
 * In an explicit transaction block the portals outlive the group's end
 * (the server keeps them until COMMIT or ROLLBACK); in an implicit one the
 * server drops them at that Sync, and a later FETCH of them fails with the
 * server's 34000. An error in an open group (a FETCH of a bad portal, a
 * division by zero in a joined query) fails that request with PGW_ESERVER
 * and the group's later requests already sent with PGW_EABORTED, and the
 * session sends the group's Sync itself at once (the server skips
 * everything until one): the group is over, its implicit transaction
 * rolled back, its portals gone, and requests submitted after that run in
 * groups of their own as usual. A batch ending with FLUSH opens a group the
 * same way, without a portal.
 *
 * The unnamed portal (max_rows without portal) is replaced by the next
 * request that binds the unnamed portal (any QUERY or EXECUTE without
 * portal, joined ones included): give cursors a name.
 *
 * Requests that open a portal are never run again with text formats after
 * a 42883 (see "Result formats" below): they complete with PGW_ESERVER.
 */

/* 1 if res is a batch of a portal that has rows left (PortalSuspended: FETCH
 * gets more), 0 when the portal was run to completion or res is not a
 * portal's (or NULL). */
PGW_EXTERN int pgw_result_suspended(const pgw_result_t *res);

/*
 * Result formats (QUERY and EXECUTE without result_formats or PGW_Q_TEXT).
 * The rule: every column comes in binary, except columns of the types the
 * server cannot send in binary (pgw_type_binary_output: aclitem, gtsvector
 * and their arrays), which come in text. A column's format depends on its
 * type alone: it is the same on every run of a query, unnamed or from the
 * statement cache, prepared or not, described or not, whatever the types
 * layer decodes (pgw_type_binary_ok). So the same accessor call reads a
 * column the same way every time. Read a column the types layer does not
 * decode in binary (an enum or a composite not loaded into the registry, an
 * extension type such as citext or hstore) with pgw_result_value (its
 * bytes), load its type (pgw_client_load_types, pgw_type_registry_load_row)
 * so that the decoders and pgw_result_text read it, or ask text
 * (PGW_Q_TEXT, result_formats).
 *
 * A request that binds before it can know its columns' types (an unnamed
 * query; an execution of a statement whose description has not arrived)
 * asks binary for every column: one round trip. When one of its columns
 * has no binary output the server fails it at the first row with SQLSTATE
 * 42883 ("no binary output function available"), and the session runs it
 * once more, transparently, with the rule's formats, when a second run
 * changes nothing a caller can see:
 *   - the request has its own Sync (not inside a batch),
 *   - no request was queued after it before the error arrived,
 *   - the ReadyForQuery after the error reports no transaction block ('I':
 *     the failed implicit transaction was rolled back),
 *   - its Bind parameter section is at most 4 KiB (the session keeps a copy
 *     of that size, in a buffer recycled with the request: no allocation
 *     per query once warm), and
 *   - no row of it was streamed to on_row (rows before the failing one,
 *     where the column was NULL, are dropped with the failed run when they
 *     were only kept in its result).
 * The rerun costs one more round trip, only for such queries. Effects the
 * rollback does not undo (nextval, session-level advisory locks) happen
 * once per run, as on any rollback and retry. Otherwise (a transaction
 * block, a pipeline behind it, a batch, larger parameters) the request
 * completes with PGW_ESERVER and the server's 42883. Ways that always work:
 * PGW_Q_TEXT, explicit result_formats, or PREPARE then EXECUTE once the
 * description has arrived (the prepared path applies the rule from it). An
 * extension type without a send function fails every binary run: ask text
 * for it.
 */

/*
 * Prepared statements and their descriptions.
 *
 * The session keeps, per statement name, the server's description of the
 * statement, so that executions need no Describe and ask the formats of
 * the rule ("Result formats") column by column. A result never carries a description other than the
 * one the server sent for that statement: the table changes when a request is queued (a prepare
 * replaces what was known, a close removes it), and a reply only fills in the entry it was queued
 * against, so a late reply to a closed or replaced statement is dropped. An execution queued while
 * the description is not known (a prepare still in flight, a statement prepared as SQL or by
 * someone else) asks text for every column (every type has it) and sends a Describe of the
 * statement before its Bind and of its portal after, in the same round trip: the replies teach the
 * table its parameter types and columns (a PREPARE and an EXECUTE of it in one batch leave the
 * statement with the parameter types it was prepared with). A prepare that did not run (skipped
 * after an earlier error of its group, or refused by the server) prepared nothing: the name is then
 * one the session never prepared.
 *
 * SQL run through pgw_session_simple_query or pgw_session_query containing
 * the word DEALLOCATE, PREPARE or DISCARD (any case, as a whole word, even
 * in a literal or comment) makes the session forget every description: the
 * next executions describe the statement again. What the session cannot see
 * (a function that runs DEALLOCATE, an ALTER TABLE changing the result type
 * behind a prepared SELECT *) the server reports at Bind: for a statement
 * the session believes exists (it prepared it, or saw it run, and did not
 * close it), 26000 (no such statement) or 0A000 (cached plan must not
 * change result type) complete the execution with PGW_ESTMTINVALID, the
 * result holding the server's error, and the session forgets that
 * statement's description (later executions describe it again and get
 * PGW_ESTMTINVALID again while the server refuses them); prepare it again
 * to use it. A name the session never saw, or closed itself, gets
 * PGW_ESERVER with the server's 26000 (the caller's mistake). A statement
 * replaced behind the session's back without such SQL by one the server
 * accepts with the old formats is not detected.
 */

/*
 * Statement cache (stmt_cache_mode PGW_STMT_CACHE_AUTO, the default).
 *
 * A PGW_REQ_QUERY is looked up by its SQL and the parameter types it
 * declares (pgw_param_t.oid; 0 for untyped text). The first time such a
 * query runs it runs unnamed, as without a cache, and its key is
 * remembered; the second time it is prepared, in the same round trip as
 * its execution, under a name of the session's own ("pgw_" and 16 hex
 * digits random per session, "_" and a counter: it never collides with the
 * names of other sessions sharing a server through a pooler); once that
 * execution's description has arrived, every later one is a Bind by name
 * with per-column result formats and an Execute. PGW_CACHE_NOW prepares at
 * the first use; PGW_CACHE_SKIP keeps a query out, as giving param_types
 * does. The SQL of a cached
 * query is compared byte for byte with the stored copy: a hash collision
 * never runs another statement. Queries containing DEALLOCATE, PREPARE or
 * DISCARD (as for the table above) are never cached, and running one
 * drops every cached statement (their Close is sent before the next
 * extended request, so a statement that still exists is deallocated).
 *
 * Bounds: at most stmt_cache_size statements and stmt_cache_bytes bytes
 * (the SQL, the parameter types and the description); the least recently
 * used is evicted, its Close sent with the next request. A Close the
 * server skipped (an error earlier in its sync group) is sent again later.
 *
 * Invalidation. When the server refuses to bind a cached statement, because
 * it no longer exists (26000: DISCARD ALL or DEALLOCATE by a function, a
 * pooler handing the session another server connection) or can no longer
 * return the rows it was described with (0A000 "cached plan must not change
 * result type", after ALTER TABLE, ALTER TYPE or a search_path change), the
 * statement leaves the cache, and:
 *   - when the request has its own Sync, nothing was queued behind it and
 *     the ReadyForQuery says no transaction block is open, the query is
 *     prepared again under a new name and run once more, transparently (the
 *     Bind failed, so it had not run): the caller sees one result, the
 *     statistics one reprepare;
 *   - otherwise (inside a transaction block, where the transaction is now
 *     failed and a retry would only meet 25P02; inside a batch; with
 *     requests pipelined behind it, which a retry would overtake) it
 *     completes with PGW_ESTMTINVALID and a result holding the server's
 *     error; the next execution prepares the query again. For 26000 the
 *     error's hint, when the server sent none, says that a pooler in
 *     transaction mode needs stmt_cache_mode = PGW_STMT_UNNAMED.
 * A vanished statement (26000) is retried only the first time: once a
 * second one vanishes before the session has seen SQL that deallocates,
 * its statements evidently do not stay on its server connection (PgBouncer
 * in transaction mode hands each transaction whichever server connection
 * is free), and every later 26000 completes with PGW_ESTMTINVALID and the
 * hint: loudly, and never with another statement's rows, since no two
 * sessions share a name.
 * A change that keeps the result's column types (an ALTER TABLE adding a
 * column to a table the query names its columns of) is no change: the
 * server plans again by itself and the query goes on from the cache.
 */

/* The statement cache's counters and size now (all zero for a NULL
 * session or a mode without the cache). */
PGW_EXTERN void pgw_session_stmt_cache_stats(const pgw_session_t *s, pgw_stmt_cache_stats_t *out);

/*
 * The named calls: each fills in a descriptor and submits it (same
 * semantics, returns and callbacks as pgw_session_submit). The _rows
 * variants stream rows to row_cb, done_cb receiving the result without
 * rows; row_cb NULL is PGW_EINVAL there.
 */
PGW_INLINE int pgw_session_simple_query(pgw_session_t *s, const char *sql, pgw_result_cb cb,
                                        void *ud)
{
    pgw_request_t r = PGW_SIMPLE(sql, cb, ud);
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_simple_query_rows(pgw_session_t *s, const char *sql, pgw_row_cb row_cb,
                                             pgw_result_cb done_cb, void *ud)
{
    pgw_request_t r = PGW_SIMPLE(sql, done_cb, ud);
    r.on_row = row_cb;
    return row_cb ? pgw_session_submit(s, &r) : PGW_EINVAL;
}
PGW_INLINE int pgw_session_query(pgw_session_t *s, const char *sql, const pgw_param_t *params,
                                 size_t nparams, unsigned flags, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, cb, ud);
    r.flags = flags;
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_query_rows(pgw_session_t *s, const char *sql, const pgw_param_t *params,
                                      size_t nparams, unsigned flags, pgw_row_cb row_cb,
                                      pgw_result_cb done_cb, void *ud)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, done_cb, ud);
    r.flags = flags;
    r.on_row = row_cb;
    return row_cb ? pgw_session_submit(s, &r) : PGW_EINVAL;
}
PGW_INLINE int pgw_session_prepare(pgw_session_t *s, const char *name, const char *sql,
                                   const uint32_t *oids, size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_PREPARE(name, sql, oids, nparams, cb, ud);
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_execute(pgw_session_t *s, const char *name, const pgw_param_t *params,
                                   size_t nparams, unsigned flags, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, cb, ud);
    r.flags = flags;
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_execute_rows(pgw_session_t *s, const char *name,
                                        const pgw_param_t *params, size_t nparams, unsigned flags,
                                        pgw_row_cb row_cb, pgw_result_cb done_cb, void *ud)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, done_cb, ud);
    r.flags = flags;
    r.on_row = row_cb;
    return row_cb ? pgw_session_submit(s, &r) : PGW_EINVAL;
}
PGW_INLINE int pgw_session_describe(pgw_session_t *s, const char *name, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_DESCRIBE(name, cb, ud);
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_close_statement(pgw_session_t *s, const char *name, pgw_result_cb cb,
                                           void *ud)
{
    pgw_request_t r = PGW_CLOSE(name, cb, ud);
    return pgw_session_submit(s, &r);
}
PGW_INLINE int pgw_session_sync(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_SYNC(cb, ud);
    return pgw_session_submit(s, &r);
}

/*
 * Deadlines. The session keeps no clock: its driver does (conn.h arms one
 * timer per connection). Every accepted request gets a ticket, increasing
 * in FIFO order; a request with a timeout is announced to the driver with
 * its ticket through cb.on_deadline. When the driver's time is up it calls
 * pgw_session_expire, and the request completes with PGW_ETIMEDOUT exactly
 * once, whatever the server answers later:
 *   - a request the server may be working on (the oldest pending one, or
 *     one in the same sync group as it: the server sends a group's replies
 *     only at its Sync, so the earlier members may have finished) is only
 *     marked: it completes when the server answers for it (after the
 *     driver's cancel, with SQLSTATE 57014 kept in res; a reply that
 *     arrived anyway, rows or an error, is kept in res as well), or when the
 *     session fails (pgw_session_fail), still with PGW_ETIMEDOUT while the
 *     other requests get the failure's code. The driver sends a cancel.
 *   - a request still waiting behind earlier ones (or any, with
 *     PGW_EXPIRE_NOW) completes at once with res NULL. It was already
 *     written, so the server still runs it when its turn comes; its replies
 *     are read and dropped (pgw_session_oldest_ticket tells the driver when
 *     it runs, so that it can cancel it then). In a sync group, a request
 *     after it is aborted only if the server reports an error for it.
 * A batch's requests each have their own ticket and deadline; a timed-out
 * member makes the batch's status PGW_ETIMEDOUT unless an earlier failure
 * came first. The driver's cancel interrupts whatever the server runs: for
 * a member of a group, that may be an earlier member still running, which
 * then fails with the server's 57014 (PGW_ESERVER) and the timed-out one
 * with PGW_ETIMEDOUT; the group is one transaction, aborted either way.
 * A cancel never reaches a later submit: the server may act on a cancel
 * after its target ended (and one CancelRequest may signal the backend
 * twice), so the output after a submit with a deadline is held until the
 * submit's last entry completes (its ReadyForQuery, or the answer of a
 * request inside an open group), as behind a COPY
 * (pgw_session_take_output hands out nothing of it meanwhile). Requests
 * with deadlines are thus not pipelined behind each other; a request
 * without one still is, behind requests without deadlines.
 */
enum { PGW_EXPIRE_NOW = 1u << 0 };
/* Mark the request with ticket timed out (see above); flags: 0 or
 * PGW_EXPIRE_NOW. Returns 1 when the server may be working on it and it is
 * marked (its callback fires later; the driver should cancel), again 1 on
 * a repeated call while that holds; 0 when its callback fired now with
 * PGW_ETIMEDOUT, or had already fired so (its entry still reads the
 * replies); PGW_ENOTFOUND when no pending request has that ticket (it
 * completed); PGW_EINVAL for a NULL session; PGW_ERECURSIVE inside a
 * callback of this session; PGW_ECANCELED when the callback freed the
 * session. Another request's callback never fires from this call. */
PGW_EXTERN int pgw_session_expire(pgw_session_t *s, uint64_t ticket, unsigned flags);
/* The ticket of the oldest pending request (the one the server answers
 * next), or, with none pending, the ticket the next request will get. Every
 * request with a smaller ticket has completed. 0 for NULL. */
PGW_EXTERN uint64_t pgw_session_oldest_ticket(const pgw_session_t *s);
/* The ticket of the last request accepted (0 before the first). */
PGW_EXTERN uint64_t pgw_session_last_ticket(const pgw_session_t *s);

/* Queue Terminate. Pending requests still complete (normally with
 * PGW_ECONNLOST when the driver closes the transport). */
PGW_EXTERN int pgw_session_terminate(pgw_session_t *s);

/* ------------------------------------------------------------------ state */

/* NULL session (common.h's convention, for these and every function above):
 * int statuses are PGW_EINVAL (pgw_session_error too), pgw_session_state is
 * PGW_SESSION_BROKEN, txn_status 0, protocol 0, pending 0, pointers NULL;
 * pgw_session_pending_output sets *len to 0; consumed_output, take_output,
 * fail and free do nothing. */

/* The session's state (PGW_SESSION_BROKEN for NULL). */
PGW_EXTERN pgw_session_state_t pgw_session_state(const pgw_session_t *s);
/* Transaction status from the last ReadyForQuery: 'I', 'T', 'E', or 0 before
 * the first. */
PGW_EXTERN char pgw_session_txn_status(const pgw_session_t *s);
/* Value of a ParameterStatus the server reported (server_version,
 * client_encoding, TimeZone, integer_datetimes, ...), or NULL. Valid until
 * the server reports that parameter again or the session is freed. */
PGW_EXTERN const char *pgw_session_parameter(const pgw_session_t *s, const char *name);
/* Negotiated protocol (PGW_PROTO_3_0 or PGW_PROTO_3_2). */
PGW_EXTERN uint32_t pgw_session_protocol(const pgw_session_t *s);
/* BackendKeyData: pid and key (4 bytes in 3.0, up to 256 in 3.2). Returns 0
 * or PGW_ENOTFOUND before the server sent it. *key valid for the session's
 * life. */
PGW_EXTERN int pgw_session_backend_key(const pgw_session_t *s, int32_t *pid, const uint8_t **key,
                                       size_t *key_len);
/* The server process serving this session (BackendKeyData's pid, libpq's
 * PQbackendPID), or 0 before the server sent it. */
PGW_EXTERN int32_t pgw_session_backend_pid(const pgw_session_t *s);
/* Requests accepted whose callback has not fired yet. */
PGW_EXTERN size_t pgw_session_pending(const pgw_session_t *s);
/* Whether on_trace sees the messages sent (on: 1, the default) or only
 * those received (0), from the next message on: a tracer that watches
 * only the server's side saves the walk over every request's messages.
 * No effect without on_trace; nothing for NULL. */
PGW_EXTERN void pgw_session_trace_sent(pgw_session_t *s, int on);
/* Whether on_trace sees the messages received (on: 1, the default), from
 * the next message on: a tracer that is done with the server's side
 * (libpq's, once AuthenticationOk came, unless PQtrace is on) saves a call
 * per message. No effect without on_trace; nothing for NULL. */
PGW_EXTERN void pgw_session_trace_received(pgw_session_t *s, int on);
/* The counts of the messages received so far (pgw_rx_counts_t) into
 * *out; zeros for a NULL s. They are counted as each message is framed,
 * before its callbacks run. */
PGW_EXTERN void pgw_session_rx_counts(const pgw_session_t *s, pgw_rx_counts_t *out);
/* 1 while the current sync group is open (see "Portals and open groups": a
 * portal opened outside a batch and not closed keeps it open, the implicit
 * transaction with it), else 0 (and for NULL). */
PGW_EXTERN int pgw_session_group_open(const pgw_session_t *s);
/* The registry the session's results decode through (its config's, else
 * the default one); NULL for NULL. */
PGW_EXTERN pgw_type_registry_t *pgw_session_registry(const pgw_session_t *s);
/* The error that broke the session (0 if not broken). */
PGW_EXTERN int pgw_session_error(const pgw_session_t *s);
/* Name of the authentication method the server used ("trust", "password",
 * "md5", "SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "gss", "OAUTHBEARER"),
 * NULL before startup. A GSS-encrypted connection the server accepted
 * without an exchange (its context authenticated the client) reports
 * "trust". */
PGW_EXTERN const char *pgw_session_auth_method(const pgw_session_t *s);
/* 1 when the startup failed (PGW_EAUTH) only because the server wants an
 * OAuth bearer token this session did not have: OAUTHBEARER discovery ran
 * (the server's scope and discovery document went to the oauth_token
 * hook), and the driver should connect again with a new session whose
 * oauth_token is the token the hook gives, as libpq does. Else 0 (also
 * for NULL). */
PGW_EXTERN int pgw_session_oauth_retry(const pgw_session_t *s);
/* The OAuth bearer token to present (pgw_session_config_t.oauth_token),
 * set before pgw_session_start (copied; wiped when freed). Returns 0,
 * PGW_EBUSY (started), PGW_EINVAL (s or token NULL) or PGW_ENOMEM. */
PGW_EXTERN int pgw_session_set_oauth_token(pgw_session_t *s, const char *token);
/* 1 once the server's AuthenticationOk was accepted (an error after it is
 * the server's answer to an authenticated client, not a refusal of the
 * connection); 0 before, and for NULL. */
PGW_EXTERN int pgw_session_auth_ok(const pgw_session_t *s);
/* The config's ud (cfg->ud), NULL for NULL. */
PGW_EXTERN void *pgw_session_userdata(const pgw_session_t *s);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_SESSION_H */
