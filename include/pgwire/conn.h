/*
 * libpgwire conn: one PostgreSQL connection driven by a libuv loop.
 *
 * The connection only moves bytes and time: it owns the socket (TCP or a
 * unix-domain socket), the DNS lookups, the connect timer and the write
 * coalescing; every protocol decision (startup, authentication, the FIFO of
 * requests, results) is made by the sans-IO session (session.h) it drives.
 * Requests are the session's descriptors (pgw_request_t), submitted here.
 *
 * THREADS: a connection belongs to one uv loop and to the thread that runs
 * that loop. Every function must be called from that thread; none may be
 * called concurrently. (pgw_client_t in client.h is the blocking API.)
 *
 * CALLBACK RULES (the same as libuv's and the session's):
 *   - a function that returns an error never calls its callback;
 *   - an accepted request, connect, cancel or close calls its callback
 *     exactly once, whatever happens to the connection;
 *   - callbacks run on the loop thread, from inside uv_run, never from
 *     inside the function that accepted the request;
 *   - any function of this header may be called from inside any callback,
 *     including pgw_conn_close.
 *
 * WRITES: requests are encoded into the session's output buffer and flushed
 * once per loop turn (a uv_prepare_t runs the flush just before the loop
 * polls), so requests issued together in one turn reach the socket in one
 * write. Output is also flushed at once when it grows past the write
 * threshold. A flush swaps the session's output buffer with the
 * connection's write buffer (double buffering) and sends it with
 * send(MSG_NOSIGNAL) right away; what the socket does not take stays pinned
 * in the write buffer and is sent as the socket becomes writable, while new
 * requests fill the session's buffer for the next flush. After a write,
 * the write buffer keeps its capacity for reuse unless it grew past
 * max(1 MiB, 4 x write_threshold) for one large request: then it is freed.
 *
 * READS: the socket is watched by one uv_poll_t (readable always once
 * connected, writable only while a connect or a write is in progress).
 * recv() reads straight into the session's input buffer (no copy), at most
 * 16 times per readable event so that one busy connection cannot starve
 * the others on its loop.
 *
 * SIGNALS: the connection owns its sockets (non-blocking, close-on-exec)
 * and writes only with send(MSG_NOSIGNAL): a write to a connection the
 * server closed fails the requests with PGW_ECONNLOST and never raises
 * SIGPIPE, on TCP and unix-domain sockets alike. The library never changes
 * signal dispositions or masks; the application need not ignore SIGPIPE.
 *
 * NULL HANDLES: every function of this header accepts a NULL conn without
 * crashing: functions returning an int status return PGW_EINVAL,
 * pgw_conn_is_ready returns 0, pointer results are
 * NULL, and pgw_conn_stats and pgw_conn_tls_info zero *out (when out is
 * not NULL).
 *
 * TLS (OpenSSL, src/tls) with libpq's options and semantics: sslmode
 * disable, allow, prefer (the default), require, verify-ca, verify-full;
 * sslrootcert (a PEM file, or "system" for OpenSSL's default store, which
 * makes the default sslmode verify-full as in libpq 16), sslcert / sslkey /
 * sslpassword (the key file must be 0600 or less, 0640 if owned by root),
 * sslcrl / sslcrldir, sslsni (on by default), sslcertmode,
 * ssl_min_protocol_version (default TLSv1.2) / ssl_max_protocol_version,
 * sslcompression (accepted; compression is always off), and
 * sslnegotiation=direct (PostgreSQL 17: TLS at once with ALPN
 * "postgresql"; requires sslmode require or stronger). Missing files are
 * looked up under $HOME/.postgresql/ (root.crt, root.crl, postgresql.crt,
 * postgresql.key); with a root certificate, require verifies the chain too
 * (not the host name); verify-full checks the name given as host (also
 * with hostaddr) against the certificate's DNS and IP subjectAltNames, then
 * its CN. Over a unix-domain socket TLS is never requested, whatever
 * sslmode says (as in libpq). The retries are libpq's: prefer tries TLS
 * and goes on in plaintext on the server's 'N', and retries the address in
 * plaintext after a failed handshake or when the server refuses the TLS
 * connection before authentication; allow tries plaintext first and
 * retries with TLS when the server refuses it. Bytes the server sends
 * behind its 'S' (or 'N') are refused with PGW_EPROTO (CVE-2021-23222);
 * an ErrorResponse to SSLRequest fails with PGW_ETLS, its text neither read
 * nor shown (CVE-2024-10977). SCRAM-SHA-256-PLUS (channel_binding) binds to
 * the TLS server certificate (tls-server-end-point). Cancels negotiate TLS
 * like their connection. Once established, reads are decrypted straight
 * into the session's read chunk and each loop turn's output is encrypted
 * into one ring and written with one send(). The TLS context (the parsed
 * root certificate, CRLs, client certificate and key) of connections using
 * the default allocator is shared by every connection of the process with
 * the same TLS settings, and rebuilt when one of those files changes on
 * disk (size, inode or modification time); with an application allocator
 * each connection builds its own. A failed TLS negotiation ends
 * the connect with PGW_ETLS (or PGW_EPROTO), libpq's message in
 * pgw_conn_error_message. gssencmode=require fails with PGW_ENOTSUP.
 */
#ifndef PGWIRE_CONN_H
#define PGWIRE_CONN_H

#include "pgwire/common.h"
#include "pgwire/session.h"
#include "pgwire/tls.h"

/* libuv's loop, declared without <uv.h> so that this header compiles in
 * strict C11 (uv.h needs POSIX feature macros); include <uv.h> to use it. */
struct uv_loop_s;

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pgw_conn pgw_conn_t;

/* Connect finished: status 0 (ready for requests) or the error of the last
 * host tried: PGW_ECONNECT (no host could be reached: every attempt failed
 * at the socket level or timed out), PGW_ETARGET (servers were reached but
 * none matched target_session_attrs), PGW_EAUTH, PGW_EAUTHPOLICY, PGW_ESERVER
 * (the server refused the startup: err holds its error, valid during the
 * call), PGW_ECONNLOST (the server closed during startup), PGW_EPROTO,
 * PGW_ECANCELED (pgw_conn_close was called first), PGW_ETLS (TLS could not
 * be negotiated or verified, or a TLS file could not be used; libpq's
 * message in pgw_conn_error_message), PGW_ECONNINFO (TLS settings that
 * contradict each other, found at the first TLS attempt). err is NULL
 * unless the status is PGW_ESERVER. */
typedef void (*pgw_connect_cb)(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud);
/* pgw_conn_close finished: every handle is closed; conn is about to be
 * freed and must not be used after this callback returns. */
typedef void (*pgw_close_cb)(pgw_conn_t *conn, void *ud);
/* A cancel request finished: 0 when the CancelRequest was delivered and the
 * server closed the cancel connection (whether the query was still running
 * is not known: the target request completes with SQLSTATE 57014 if it was
 * interrupted), or a libuv/PGW error (PGW_ECONNECT, PGW_ETIMEDOUT,
 * PGW_ECANCELED if the connection was closed first). */
typedef void (*pgw_cancel_cb)(pgw_conn_t *conn, int status, void *ud);

typedef struct pgw_conn_config {
    /* sizeof(pgw_conn_config_t) as the caller's header defines it, set by
     * pgw_conn_config_init (options past size read as zero: their
     * defaults). 0 (a zeroed struct) means this header's size. */
    size_t size;
    const pgw_allocator_t *alloc; /* NULL: malloc; must outlive the conn and its buffers */
    uint32_t max_message_size;    /* 0: PGW_DEFAULT_MAX_MESSAGE */
    size_t write_threshold;       /* 0: 256 KiB; flush at once past this */
    /* (After a write the write buffer's capacity is kept up to
     * max(1 MiB, 4 x write_threshold); a larger buffer is freed.) */
    size_t read_chunk_size; /* 0: the session's default (64 KiB) */
    /* Bytes of large read chunks and output buffers kept for reuse (the
     * session's chunk_cache_bytes, session.h). 0: 16 MiB; SIZE_MAX: no
     * limit. */
    size_t chunk_cache_bytes;
    /* Bytes of each TLS ciphertext ring (input and output); 0: 64 KiB. */
    size_t tls_ring_size;
    /* Optional application hooks (views valid during the call). */
    void (*on_notice)(pgw_conn_t *conn, const pgw_error_t *notice, void *ud);
    void (*on_notification)(pgw_conn_t *conn, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud);
    void (*on_parameter)(pgw_conn_t *conn, pgw_str_t name, pgw_str_t value, void *ud);
    void (*on_trace)(pgw_conn_t *conn, char direction, const uint8_t *msg, size_t len, void *ud);
    /* The established connection broke (server closed, network error,
     * protocol violation): err is PGW_ECONNLOST, PGW_EPROTO, PGW_ETOOBIG,...
     * Every pending request has already failed with err. The socket is
     * being closed; new requests fail with PGW_ECLOSED. The application
     * still calls pgw_conn_close to free the connection. Not called for a
     * failure during connect (the connect callback reports that) nor after
     * pgw_conn_close. */
    void (*on_lost)(pgw_conn_t *conn, int err, void *ud);
    void *ud; /* passed to the hooks above */
} pgw_conn_config_t;

/* Traffic counters since pgw_conn_new. */
typedef struct pgw_conn_stats {
    uint64_t writes;    /* flushes: output buffers handed to the socket (one
                           may take several send() calls when it is full) */
    uint64_t bytes_out; /* bytes of those buffers */
    uint64_t reads;     /* recv() calls that delivered bytes */
    uint64_t bytes_in;  /* bytes read */
} pgw_conn_stats_t;

/* Zero *cfg and set its size: every option at its default. */
PGW_EXTERN void pgw_conn_config_init(pgw_conn_config_t *cfg);

/* Create a connection on loop with cfg (copied; NULL: defaults). Nothing
 * touches the network until pgw_conn_connect. Returns 0, PGW_EINVAL (out or
 * loop NULL) or PGW_ENOMEM. Free it with pgw_conn_close (also when it never
 * connected). */
PGW_EXTERN int pgw_conn_new(pgw_conn_t **out, struct uv_loop_s *loop, const pgw_conn_config_t *cfg);

/*
 * Connect using a libpq connection string (keyword/value or URI; PG*
 * environment variables, the service file and ~/.pgpass fill the gaps, as
 * in libpq). Hosts are tried in order (host=a,b port=1,2), or shuffled with
 * load_balance_hosts=random; each name's addresses are tried in turn; a host
 * starting with '/' is a unix socket directory (DIR/.s.PGSQL.PORT). Each
 * attempt is bounded by connect_timeout. TCP sockets get TCP_NODELAY,
 * keepalive per keepalives, keepalives_idle, keepalives_interval and
 * keepalives_count, and tcp_user_timeout (milliseconds), as in libpq. target_session_attrs (any,
 * read-write, read-only, primary, standby, prefer-standby) is checked after
 * startup; a server that does not match is left for the next host.
 *
 * Requests may be issued right after this call returns: they are queued in
 * the session and sent after startup. If the attempt that carries them is
 * abandoned (the server closes during startup, or does not match
 * target_session_attrs), they fail with that attempt's error.
 *
 * Returns 0 (cb will be called), or: PGW_EINVAL (conn or cb NULL),
 * PGW_ECONNINFO (bad connection string),
 * PGW_ENOTSUP (gssencmode=require: GSSAPI is not implemented), PGW_EBUSY
 * (connect already called),
 * PGW_ECLOSED (closing), PGW_EINVAL (bad session options: require_auth,
 * channel_binding, protocol versions), PGW_ENOMEM.
 */
PGW_EXTERN int pgw_conn_connect(pgw_conn_t *conn, const char *conninfo, pgw_connect_cb cb,
                                void *ud);

/*
 * Close the connection: asynchronous, idempotent, callable from inside any
 * callback. Pending requests (and a connect in progress, and cancels) fail
 * with PGW_ECANCELED, each exactly once; Terminate is sent (best effort,
 * without blocking) when the connection is up; requests not yet written
 * are discarded, never sent. Memory is freed after every uv handle has
 * closed, right after cb (may be NULL) returns. Returns 0, PGW_ECLOSED
 * when close was already called (cb will then not be called), or
 * PGW_EINVAL (conn NULL).
 */
PGW_EXTERN int pgw_conn_close(pgw_conn_t *conn, pgw_close_cb cb, void *ud);

/*
 * Ask the server to cancel the request it is running, over a separate
 * non-blocking connection to the same address, carrying the BackendKeyData
 * (4-byte key in protocol 3.0, the long key in 3.2). cb fires when the
 * server has closed that connection, or with PGW_ETIMEDOUT after
 * connect_timeout (10 s when unset).
 *
 * While a cancel is in flight, output is held: requests issued after
 * pgw_conn_cancel are written only once the server has closed the cancel
 * connection (it has then signalled the backend), so a cancel that arrives
 * after its target finished cannot interrupt a request issued after the
 * cancel. Requests written before the cancel (pipelined behind the target)
 * can still be the one interrupted: cancel targets "whatever runs now", as
 * in libpq. With nothing running, a cancel is harmless.
 * Returns 0, PGW_EINVAL (conn NULL), PGW_EBUSY (not connected yet),
 * PGW_ECLOSED, PGW_ENOTSUP (the server sent no BackendKeyData), PGW_ENOMEM,
 * or PGW_ECONNECT (the cancel socket could not be opened or connected at
 * once).
 */
PGW_EXTERN int pgw_conn_cancel(pgw_conn_t *conn, pgw_cancel_cb cb, void *ud);

/*
 * Requests: the session's request model (session.h, pgw_request_t) on this
 * connection. pgw_conn_submit and pgw_conn_submit_batch hand the
 * descriptors to the session, with the same semantics, ownership, results
 * and error codes as pgw_session_submit / pgw_session_submit_batch, plus
 * PGW_EINVAL (conn NULL), PGW_ECLOSED after pgw_conn_close or when the
 * connection is lost, and PGW_EBUSY before pgw_conn_connect. The output is
 * written once per loop turn (see WRITES), or at once past the write
 * threshold. pgw_session_refusal(pgw_conn_session(conn)) says why the
 * session refused a request.
 */
PGW_EXTERN int pgw_conn_submit(pgw_conn_t *conn, const pgw_request_t *req);
PGW_EXTERN int pgw_conn_submit_batch(pgw_conn_t *conn, const pgw_request_t *reqs, size_t n,
                                     unsigned flags, pgw_result_cb done, void *ud);

/* The common requests in one call (each fills in a descriptor and submits
 * it): a Simple Query, an extended query with binary results, a prepare, an
 * execution. Streaming, text results and the rest: pgw_conn_submit. */
static inline int pgw_conn_simple_query(pgw_conn_t *conn, const char *sql, pgw_result_cb cb,
                                        void *ud)
{
    pgw_request_t r = PGW_SIMPLE(sql, cb, ud);
    return pgw_conn_submit(conn, &r);
}
static inline int pgw_conn_query(pgw_conn_t *conn, const char *sql, const pgw_param_t *params,
                                 size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}
static inline int pgw_conn_prepare(pgw_conn_t *conn, const char *name, const char *sql,
                                   const uint32_t *oids, size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_PREPARE(name, sql, oids, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}
static inline int pgw_conn_execute(pgw_conn_t *conn, const char *name, const pgw_param_t *params,
                                   size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}

/*
 * The session being driven, for direct access (parameters, transaction
 * status, backend key, requests not wrapped here). NULL before
 * pgw_conn_connect and after pgw_conn_close. The session may be replaced
 * while connecting (one per host attempt): hold the pointer only once the
 * connect callback reported success. Never free it.
 */
PGW_EXTERN pgw_session_t *pgw_conn_session(pgw_conn_t *conn);
/* The server process serving the connection (pgw_session_backend_pid), 0
 * when not connected. */
PGW_EXTERN int32_t pgw_conn_backend_pid(pgw_conn_t *conn);
/* The loop the connection runs on (NULL for a NULL conn). */
PGW_EXTERN struct uv_loop_s *pgw_conn_loop(const pgw_conn_t *conn);
/* 1 once connected (startup done) and until lost or closed. */
PGW_EXTERN int pgw_conn_is_ready(const pgw_conn_t *conn);
/* The host and port of the server connected to (or being tried): NUL
 * terminated, valid until the next attempt or pgw_conn_close. */
PGW_EXTERN const char *pgw_conn_host(const pgw_conn_t *conn);
PGW_EXTERN const char *pgw_conn_port(const pgw_conn_t *conn);
/* Copy the traffic counters into *out (zeroes when conn is NULL; nothing
 * when out is NULL). */
PGW_EXTERN void pgw_conn_stats(const pgw_conn_t *conn, pgw_conn_stats_t *out);

/* The socket's file descriptor (like libpq's PQsocket), for inspection
 * such as getsockopt; reading or writing it directly corrupts the
 * connection. Returns the descriptor, PGW_ECLOSED when there is no
 * connected socket (connecting, lost or closed), or PGW_EINVAL (conn
 * NULL). */
PGW_EXTERN int pgw_conn_fd(const pgw_conn_t *conn);
/* The application data of the config (cfg->ud), NULL for a NULL conn. */
PGW_EXTERN void *pgw_conn_userdata(const pgw_conn_t *conn);

/*
 * What the connection's TLS negotiated (libpq: PQsslInUse, PQsslAttribute).
 * Fills *out: in_use 1 with protocol, cipher and the peer certificate for a
 * TLS connection; all zero for a plaintext one (or before TLS is up). The
 * strings and views point into the connection and stay valid until it is
 * closed, lost or its connect moves to another attempt. Returns 0, or
 * PGW_EINVAL (out NULL; or conn NULL, *out then zeroed).
 */
PGW_EXTERN int pgw_conn_tls_info(const pgw_conn_t *conn, pgw_tls_info_t *out);

/*
 * Why the connect failed, in libpq's words where libpq has them (TLS:
 * "SSL error: certificate verify failed: ...", "server certificate for
 * "x" does not match host name "y"", "server does not support SSL,
 * but SSL was required", ...; the messages of several attempts, such as
 * prefer's TLS try and its plaintext retry, are joined with newlines, as
 * libpq does). Without libpq's "connection to server at ... failed: "
 * prefix. "" when there is none (see pgw_strerror of the status, and err
 * for PGW_ESERVER). Valid until the next connect or pgw_conn_close. NULL
 * for a NULL conn.
 */
PGW_EXTERN const char *pgw_conn_error_message(const pgw_conn_t *conn);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CONN_H */
