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
 * READS: the socket is watched by one uv_poll_t (readable once connected
 * unless reading is paused, see "Read backpressure"; writable only while a
 * connect or a write is in progress).
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
 * DEADLINES: a request's timeout_ms (pgw_request_t; 0: request_timeout_ms
 * of the config; PGW_TIMEOUT_NONE: none) counts from pgw_conn_submit and
 * covers its wait behind earlier requests. One timer per connection serves
 * every deadline (no timer per request; a request without one costs
 * nothing). When a deadline passes:
 *   - the request the server is running gets a cancel (pgw_conn_cancel's
 *     sender; output is held while it is in flight, as there). If the
 *     server answers within cancel_grace_ms (1 s by default), the request
 *     completes with PGW_ETIMEDOUT, res holding the server's answer
 *     (normally SQLSTATE 57014, "canceling statement due to user request")
 *     and the connection stays usable: the next request runs as usual.
 *     If it does not (the network is partitioned, the server is stuck, or
 *     the cancel could not be sent), the connection is closed when the
 *     grace period ends: the request completes with PGW_ETIMEDOUT, every
 *     other pending request with PGW_ECONNLOST, on_lost is called with
 *     PGW_ECONNLOST and pgw_conn_error_message says why. So a timed-out
 *     request always completes by its deadline plus cancel_grace_ms.
 *     A request of a batch counts as running as soon as the earlier
 *     requests of its sync group are (the server answers a group only at
 *     its Sync); the cancel may then interrupt an earlier member of the
 *     group, which fails with 57014: the group is one transaction, aborted
 *     either way.
 *   - a request still waiting behind earlier sync groups completes at once
 *     with PGW_ETIMEDOUT (res NULL); they are not interrupted. It was
 *     already written: when the server starts running it, the connection
 *     sends a cancel for it (repeated every 200 ms while it still runs, 5
 *     times at most, as a cancel that reaches the server between two
 *     pipelined commands is ignored), and its replies are dropped.
 *   - while connecting (no cancel can be sent yet), the request completes
 *     at once with PGW_ETIMEDOUT; it is still sent once the connection is
 *     up, and cancelled when it runs, as above.
 * Within a batch each descriptor has its own deadline; the batch's status
 * is then PGW_ETIMEDOUT unless an earlier failure came first.
 * A cancel sent for a deadline interrupts nothing but the request it was
 * sent for (or an earlier member of its batch group, as said above): the
 * server acts on a cancel whenever its signal lands, possibly after its
 * target ended, so a request submitted after one with a deadline is
 * written only once that one has completed (and, as always, once no
 * cancel is in flight). Requests with deadlines, request_timeout_ms
 * included, are therefore not pipelined behind each other: each waits
 * for the one before it to complete (one round trip each).
 * A cancel whose packet went out but that the server never confirmed
 * (it closes the cancel connection once it has signalled the backend;
 * unconfirmed: the cancel's timeout, connect_timeout or 10 s, passed, or
 * that connection failed) leaves its signal in doubt: it could still land
 * on whatever the backend runs later. The connection is then closed
 * rather than resuming its writes: the requests held behind the deadline
 * were never written and complete with PGW_ECONNLOST (on a pool's one-shot
 * request, PGW_ERETRY): safe to retry; the timed-out request, if still
 * running, completes with PGW_ETIMEDOUT; on_lost fires with PGW_ECONNLOST and
 * pgw_conn_error_message says why. With the default cancel_grace_ms this
 * only happens once the timed-out request completed in time: a server
 * that does not answer it within the grace period closes the connection
 * sooner, as above.
 *
 * DEAD PEERS: a connection whose server vanished without a word (a
 * partition, a host that lost power: packets dropped, nothing answered) is
 * noticed even without deadlines. When the connection string leaves them
 * unset, TCP sockets get TCP_USER_TIMEOUT 30 s and keepalive probes after
 * 15 s of silence, every 5 s, 3 of them: the kernel then drops a connection
 * that has heard nothing from its peer for 30 s (data written and not
 * acknowledged, or probes unanswered), and the pending requests fail with
 * PGW_ECONNLOST (on_lost too) within about 30 s, instead of the kernel's
 * 15 minutes or more. A server that is merely slow answers the probes:
 * long queries are not affected. This is a deliberate difference from
 * libpq, which leaves these to the kernel's defaults (2 hours of silence
 * before the first probe); set keepalives_idle, keepalives_interval,
 * keepalives_count and tcp_user_timeout (0: the kernel's default) to
 * choose otherwise, or keepalives=0 to turn probes off (the 30 s
 * TCP_USER_TIMEOUT then still bounds unacknowledged writes), or
 * pgw_conn_config_t.kernel_tcp_defaults for libpq's behaviour. A request
 * deadline bounds a request sooner (see DEADLINES).
 *
 * CONNECT TIMEOUT: connect_timeout (libpq's, in seconds, at least 2)
 * bounds each attempt as a whole: the host name's resolution (unless
 * pgw_conn_config_t.blocking_resolve), the TCP connect, TLS, the startup
 * packet, authentication and the server's setup until ReadyForQuery (a
 * server that accepts and then only sends notices fails the attempt with
 * PGW_ETIMEDOUT). Unset, as in libpq, attempts are not bounded.
 *
 * TLS (OpenSSL, src/tls) with libpq's options and semantics: sslmode
 * disable, allow, prefer (the default), require, verify-ca, verify-full;
 * sslrootcert (a PEM file, or "system" for OpenSSL's default store, which
 * makes the default sslmode verify-full as in libpq 16; a weaker sslmode is
 * refused before connecting, as libpq 18 does), sslcert / sslkey /
 * sslpassword (the key file must be 0600 or less, 0640 if owned by root),
 * sslcrl / sslcrldir, sslsni (on by default), sslcertmode (libpq 16:
 * disable never sends a client certificate, even one that sslcert or
 * ~/.postgresql names; allow, the default, sends one when the server asks
 * and one is there; require fails the connect with PGW_ETLS and libpq's
 * message when AuthenticationOk arrives from a server that did not ask for
 * a certificate, or that accepted the client without one),
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
 * and goes on in plaintext on the server's 'N' (that plaintext try is not
 * repeated: a wrong password is sent once), and retries the address in
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
 * pgw_conn_error_message. sslkeylogfile (libpq 18) appends the TLS
 * secrets of every handshake to that file in NSS key log format (for
 * Wireshark), creating it with mode 0600; a file that cannot be opened or
 * written is skipped, its error added to a failed connect's message, as
 * libpq does.
 *
 * GSSAPI (the system's GSS-API library, MIT Kerberos, when the library was
 * built with it: pkg-config krb5-gssapi) with libpq's options and rules:
 *   - GSS encryption, gssencmode disable, prefer (the default) or require:
 *     over TCP, before TLS, the socket sends GSSENCRequest; on the server's
 *     'G' the GSS-API context is established with krbsrvname@host (host as
 *     given, else hostaddr; krbsrvname defaults to "postgres"; the ticket
 *     cache is the GSS-API library's: KRB5CCNAME, KRB5_CONFIG), and from
 *     then on every byte travels in GSS-wrapped packets of at most 16 kB
 *     (reads unwrapped into the session's read chunk, each loop turn's
 *     output wrapped into one buffer written with one send()). prefer is
 *     skipped when no credentials can be acquired (no ticket cache, as
 *     libpq's pg_GSS_have_cred_cache decides); require then fails at once
 *     with PGW_EAUTH ("GSSAPI encryption required but no credential
 *     cache"), as it does over a unix-domain socket (PGW_ECONNINFO).
 *   - The order and fallbacks are libpq 17's (init_allowed_encryption_
 *     methods): each address is tried with GSS encryption, then TLS and
 *     plaintext in the order sslmode gives (allow: plaintext first); a
 *     server's 'N' goes on with the next method on the same socket; an
 *     'E' answer, a failed GSS or TLS handshake, or an ErrorResponse before
 *     authentication completed retries the address on a new socket with
 *     the next method the options allow. gssencmode=require allows neither
 *     TLS nor plaintext: a refusal then ends the connect (PGW_EAUTH, "server
 *     doesn't support GSSAPI encryption, but it was required"). A GSS
 *     encrypted connection satisfies sslmode=require.
 *   - GSSAPI authentication (AuthenticationGSS, and SSPI, answered with
 *     GSSAPI as libpq does outside Windows) with krbsrvname@host (the host
 *     name as given: hostaddr alone fails with "host name must be
 *     specified"); failures are PGW_EAUTH with the GSS-API's words
 *     ("GSSAPI continuation error: ... Server not found in Kerberos
 *     database"). gssdelegation=1 asks to forward the credentials (when
 *     the ticket is forwardable). gsslib is accepted (only "gssapi" exists
 *     outside Windows). require_auth=gss accepts a GSS exchange, or a GSS
 *     encrypted connection the server accepted without one.
 *   - Cancels of a GSS encrypted connection negotiate GSS encryption too,
 *     with no fallback to plaintext.
 * Without GSS-API support gssencmode defaults to disable, gssencmode=require
 * fails with PGW_ENOTSUP ('gssencmode value "require" invalid when GSSAPI
 * support is not compiled in') and a GSS request with PGW_ENOTSUP
 * ("GSSAPI authentication not supported"), as libpq built without GSSAPI.
 * The GSS-API library may contact the KDC (a service ticket not cached
 * yet) inside the connect, blocking the loop for that exchange, as it
 * blocks libpq.
 *
 * OAUTH (PostgreSQL 18's SASL OAUTHBEARER, libpq 18's options oauth_issuer,
 * oauth_client_id, oauth_client_secret, oauth_scope): when the server asks
 * for OAUTHBEARER the connection needs oauth_issuer and oauth_client_id,
 * and a bearer token from the config's on_oauth_token callback (per
 * connection; libpq has a process-wide hook instead). With oauth_issuer
 * naming a discovery document (https://.../.well-known/openid-configuration)
 * the callback is asked at once; otherwise the first attempt asks the
 * server (an empty token), which answers with its discovery document and
 * scope: the callback gets them, and the address is tried again with the
 * token on a new socket, as libpq does. The discovery document must belong
 * to oauth_issuer. The device authorization flow of libpq-oauth (which
 * needs an HTTP client and JSON over HTTPS) is not built in: the callback
 * obtains the token however it likes. require_auth=oauth (or !oauth)
 * applies.
 */
#ifndef PGWIRE_CONN_H
#define PGWIRE_CONN_H

#include "pgwire/common.h"
#include "pgwire/conninfo.h"
#include "pgwire/session.h"
#include "pgwire/tls.h"

/* libuv's loop, declared without <uv.h> so that this header compiles in
 * strict C11 (uv.h needs POSIX feature macros); include <uv.h> to use it. */
struct uv_loop_s;

#ifdef __cplusplus
extern "C" {
#endif

/* A connection on a libuv loop: pgw_conn_new makes one, pgw_conn_close
 * closes and frees it. */
typedef struct pgw_conn pgw_conn_t;

/*
 * Connect finished: status 0 (ready for requests) or why it failed. Every
 * attempt (one socket to one address, or a host name that did not resolve)
 * is listed by pgw_conn_attempts with its own code, and
 * pgw_conn_error_message joins their messages as libpq does. The status:
 *   - when an attempt ended the connect (the remaining hosts are not
 *     tried, as in libpq), that attempt's code: PGW_ESERVER (the server
 *     refused the startup, e.g. SQLSTATE 28P01 for a wrong password; err
 *     holds its error, valid during the call), PGW_EAUTH (the client could
 *     not authenticate: no password, a bad SCRAM answer, a GSS-API failure
 *     such as no ticket or an unknown service, GSS encryption required and
 *     refused, an OAuth flow that failed), PGW_EAUTHPOLICY
 *     (require_auth / channel_binding / requirepeer refused it; the
 *     message is libpq 18's, naming the method the server asked for and
 *     the rule, e.g. 'authentication method requirement "scram-sha-256"
 *     failed: server requested a hashed password'),
 *     PGW_ENOTSUP (a method or protocol version the library does not
 *     implement), PGW_ETLS (TLS could not be negotiated or verified, or a
 *     TLS file could not be used), PGW_EPROTO, PGW_ECONNINFO (a host whose
 *     port is not a number, TLS settings that contradict each other, or
 *     gssencmode=require over a unix-domain socket),
 *     PGW_ECANCELED (pgw_conn_close was called first), PGW_ENOMEM;
 *   - when every attempt failed and moved on to the next address or host:
 *     the code they share when all of them failed the same way: PGW_EDNS
 *     (no host name resolved), a libuv code passed through from connect()
 *     (UV_ECONNREFUSED, UV_ENOENT for a unix socket that does not exist,
 *     UV_EHOSTUNREACH, UV_ENETUNREACH, UV_EACCES, UV_EAGAIN for a unix
 *     socket whose backlog is full, ...; pgw_strerror names them),
 *     PGW_ETIMEDOUT (connect_timeout expired), PGW_ECONNLOST (the server
 *     closed during startup), PGW_ETARGET (servers were reached, none
 *     matched target_session_attrs), PGW_ECONNINFO (no host was usable);
 *     else PGW_ETARGET when at least one server was reached but did not
 *     match, else PGW_ECONNECT (the attempts failed for different
 *     reasons: read them with pgw_conn_attempts).
 * err is NULL unless the status is PGW_ESERVER.
 */
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
/* The server wants an OAuth bearer token (see OAUTH above): req says for
 * which issuer, discovery document and scope (valid during the call).
 * Give the token with pgw_conn_oauth_token, from inside this call or later
 * from the loop's thread (the connect waits meanwhile: connect_timeout
 * does not run; a blocking client must answer inside the call), and
 * return 0; or return a negative value to fail the connect with PGW_EAUTH
 * ("user-defined OAuth flow failed"). Called at most once per connect; the
 * token is kept for the connect's attempts and wiped once connected. */
typedef int (*pgw_oauth_token_cb)(pgw_conn_t *conn, const pgw_oauth_request_t *req, void *ud);

/* A connection's options, for pgw_conn_new (which copies what it keeps).
 * Set it up with pgw_conn_config_init; every option's zero is its
 * default. */
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
    /* A NoticeResponse, or the FATAL error of a server that ends the
     * connection while no request waits for an answer (see the session's
     * on_notice); on_lost follows that one. */
    void (*on_notice)(pgw_conn_t *conn, const pgw_error_t *notice, void *ud);
    /* A NotificationResponse (LISTEN/NOTIFY): see pgw_notification_cb.
     * pgw_conn_set_notification_cb replaces it. */
    void (*on_notification)(pgw_conn_t *conn, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud);
    void (*on_parameter)(pgw_conn_t *conn, pgw_str_t name, pgw_str_t value, void *ud);
    /* Every message sent ('F') and received ('B'): see the session's
     * on_trace. pgw_conn_trace_sent turns the sent ones off and on,
     * pgw_conn_trace_received the received ones. */
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
    /* Write backpressure (see BACKPRESSURE): bytes of unwritten output past
     * which requests are refused with PGW_ECONGESTED. 0: 8 MiB; SIZE_MAX:
     * never refused. */
    size_t high_water_mark;
    /* Called (from the loop, never inside a request function) once what
     * made a request fail with PGW_ECONGESTED is back below half its bound
     * (the output under half the mark, fewer than half of max_pending
     * pending): submit again. May be NULL. */
    void (*on_drain)(pgw_conn_t *conn, void *ud);
    /* The deadline of every request whose timeout_ms is 0, in
     * milliseconds (0: none); see DEADLINES. */
    uint32_t request_timeout_ms;
    /* How long the server has to answer for a timed-out request once the
     * cancel is on its way, in milliseconds, before the connection is
     * closed (0: 1000). */
    uint32_t cancel_grace_ms;
    /* The session's statement cache (session.h, "Statement cache"):
     * PGW_STMT_CACHE_AUTO (0, the default), PGW_STMT_CACHE_OFF, or
     * PGW_STMT_UNNAMED behind PgBouncer in transaction mode and other
     * poolers; at most stmt_cache_size statements (0: 256) and
     * stmt_cache_bytes bytes (0: 1 MiB). An unknown mode fails the connect
     * with PGW_EINVAL. */
    uint32_t stmt_cache_mode;
    uint32_t stmt_cache_size;
    size_t stmt_cache_bytes;
    /* The user types the connection's results decode through (session.h,
     * pgw_session_config_t.registry); NULL: the default registry. */
    pgw_type_registry_t *registry;
    /* OAuth bearer tokens (see OAUTH): NULL: none, and a server asking
     * for OAUTHBEARER fails the connect with PGW_EAUTH. oauth_ud is
     * passed to it (its own, so that a pool's connections keep it). */
    pgw_oauth_token_cb on_oauth_token;
    void *oauth_ud;
    /* Request backpressure (see BACKPRESSURE): at most max_pending requests
     * accepted and not yet completed; at the bound requests are refused
     * with PGW_ECONGESTED and on_drain fires once fewer than half remain.
     * 0: PGW_DEFAULT_MAX_PENDING (session.h); SIZE_MAX: no bound. */
    size_t max_pending;
    /* Results may be read and freed on other threads than the loop's
     * (session.h, pgw_session_config_t.results_any_thread). The blocking
     * pool sets it for its connections. */
    int results_any_thread;
    /* No pipelining: one sync group on the wire at a time (session.h,
     * pgw_session_config_t.no_pipelining). Set it behind PgBouncer in
     * transaction mode; a pool given it keeps its requests spread over
     * its connections, each connection's written one after another. */
    int no_pipelining;
    /* No per-request timing (session.h, pgw_session_config_t.no_timing):
     * pgw_result_timing gives 0 for every result, and the monotonic clock
     * is not read for it (else once per request queued outside a callback
     * and once per read from the socket). The libpq-compatible layer sets
     * it: libpq has no such timing. */
    int no_timing;
    /* TCP options the connection string leaves unset (keepalives_idle,
     * keepalives_interval, keepalives_count, tcp_user_timeout) keep the
     * kernel's values, as libpq leaves them, instead of the DEAD PEERS
     * defaults; keepalives still sets SO_KEEPALIVE. The libpq-compatible
     * layer sets it: a program written for libpq gets libpq's sockets. */
    int kernel_tcp_defaults;
    /* Host names are looked up with getaddrinfo on the calling thread,
     * inside the loop's turn that starts the attempt, blocking it until
     * the resolver answers, as libpq's PQconnectStart and PQconnectPoll
     * do, instead of on libuv's thread pool (which starts its threads on
     * first use); connect_timeout then does not bound the lookup. The
     * libpq-compatible layer sets it: a program written for libpq gets no
     * threads it did not start. */
    int blocking_resolve;
} pgw_conn_config_t;

/*
 * A notification (NotificationResponse) from the server: pid is the
 * backend that sent NOTIFY (the connection's own backend when it notified
 * a channel it listens on), channel and payload views valid during the
 * call only (copy what must outlive it). Called whenever the loop reads
 * one, whether or not a request is in flight: once connected the socket is
 * always read, so an idle listening connection receives its notifications
 * as soon as the server sends them (the server sends them between
 * transactions: a listener inside a transaction block gets them after it
 * ends). The channel is the name as the server stores it: a name that
 * LISTEN quoted keeps its case, an unquoted one was folded to lower case.
 */
typedef void (*pgw_notification_cb)(pgw_conn_t *conn, int32_t pid, pgw_str_t channel,
                                    pgw_str_t payload, void *ud);

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
 * starting with '/' is a unix socket directory (DIR/.s.PGSQL.PORT), one
 * starting with '@' a name in Linux's abstract socket namespace
 * (@NAME/.s.PGSQL.PORT, as libpq). A host name is given to getaddrinfo as
 * written, byte for byte (no punycode conversion, no UTF-8 check: the
 * system's resolver decides, as with libpq). Each attempt is bounded by
 * connect_timeout. TCP sockets get TCP_NODELAY, keepalive per keepalives,
 * keepalives_idle, keepalives_interval and keepalives_count, and
 * tcp_user_timeout (milliseconds), set before connect() as libpq does: a
 * value the kernel refuses (TCP_KEEPIDLE above 32767 s, ...) fails that
 * address without opening a connection (its code the setsockopt errno,
 * libpq's message "setsockopt(TCP_KEEPIDLE) failed: ...") and the next
 * address or host is tried. target_session_attrs (any,
 * read-write, read-only, primary, standby, prefer-standby) is checked after
 * startup; a server that does not match is left for the next host.
 *
 * Requests may be issued right after this call returns: they are queued in
 * the session and sent after startup. If the attempt that carries them is
 * abandoned (the server closes during startup, or does not match
 * target_session_attrs), they fail with that attempt's error.
 *
 * Returns 0 (cb will be called), or: PGW_EINVAL (conn or cb NULL),
 * PGW_ECONNINFO (bad connection string; pgw_conn_error_message holds
 * libpq's words for it, e.g. 'invalid integer value "abc" for connection
 * option "port"'),
 * PGW_ENOTSUP (gssencmode=require in a library built without GSSAPI), PGW_EBUSY
 * (connect already called),
 * PGW_ECLOSED (closing), PGW_ENOMEM.
 */
PGW_EXTERN int pgw_conn_connect(pgw_conn_t *conn, const char *conninfo, pgw_connect_cb cb,
                                void *ud);

/*
 * pgw_conn_connect with the options already parsed (pgw_conninfo_parse),
 * for a caller that keeps them anyway: the string, the environment, the
 * service file and the password file are not read again (ci holds what
 * they said when it was parsed). ci is borrowed: it must stay valid and
 * unchanged until the connection is freed (its close callback has
 * returned); the connection never frees it. Returns what pgw_conn_connect
 * returns (PGW_EINVAL also for ci NULL).
 */
PGW_EXTERN int pgw_conn_connect_parsed(pgw_conn_t *conn, const pgw_conninfo_t *ci,
                                       pgw_connect_cb cb, void *ud);

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
 * Ask the server to cancel the request it is running: the cancel token of
 * the connection (pgw_conn_cancel_token) sent on the connection's loop,
 * without blocking, by the same sender as pgw_cancel_token_send: a
 * separate connection to the address the connection uses, TLS negotiated
 * as the connection did, then the CancelRequest with the BackendKeyData
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
 * in libpq. With nothing running, a cancel is harmless. A cancel that ends
 * unconfirmed after its packet went out (PGW_ETIMEDOUT, or its connection
 * failed) may still signal the backend later, so the connection is closed
 * before cb runs instead of writing again: the pending requests complete
 * with PGW_ECONNLOST and on_lost fires (see DEADLINES).
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
 * session refused a request. A batch with PGW_BATCH_STREAM is written in
 * parts of 64 KiB (write_threshold if smaller) while it is being encoded, from inside
 * pgw_conn_submit_batch (session.h, "Streamed batches", for what a refusal
 * part way leaves queued: pgw_session_batch_accepted says how many).
 */
PGW_EXTERN int pgw_conn_submit(pgw_conn_t *conn, const pgw_request_t *req);
PGW_EXTERN int pgw_conn_submit_batch(pgw_conn_t *conn, const pgw_request_t *reqs, size_t n,
                                     unsigned flags, pgw_result_cb done, void *ud);
/* The same with a driver's hook (session.h, "Driver completions"): for a
 * layer that submits on a caller's behalf and hears each completion first.
 * The hook also hears the requests the connection fails (closing, lost). */
PGW_EXTERN int pgw_conn_submit_driven(pgw_conn_t *conn, const pgw_request_t *req,
                                      pgw_driver_hook hook, void *ctx);
PGW_EXTERN int pgw_conn_submit_batch_driven(pgw_conn_t *conn, const pgw_request_t *reqs, size_t n,
                                            unsigned flags, pgw_result_cb done, void *ud,
                                            pgw_driver_hook hook, void *ctx);

/*
 * BACKPRESSURE. Output not yet handed to the socket (the session's buffer
 * plus what waits behind an open COPY) is bounded by high_water_mark:
 * once it is reached, pgw_conn_submit and pgw_conn_submit_batch return
 * PGW_ECONGESTED with nothing queued (no callback), and on_drain fires
 * when it is back under half the mark. At most about twice the mark is
 * buffered: the session's share and the buffer being written. The default
 * (8 MiB) takes tens of thousands of small pipelined requests in one loop
 * turn. The requests pending (accepted, not yet completed) are bounded
 * too, by max_pending (default 1,048,576): at the bound submits are
 * refused the same way, and on_drain fires once fewer than half remain.
 * pgw_conn_congested tells whether a submit would be refused now.
 *
 * COPY (PGW_REQ_COPY, session.h "COPY"): the connection pulls a COPY FROM
 * STDIN's copy_source on the loop: while the output is under the pump
 * target (a quarter of the mark, at most 256 KiB) and the socket takes what
 * is written, a few rounds per loop turn, so a multi-gigabyte COPY keeps
 * memory bounded and leaves the loop's other handles their turn. A source
 * that returns PGW_COPY_PAUSE is called again after pgw_conn_copy_resume.
 * Closing the connection during a COPY FROM sends CopyFail (when the
 * socket takes it) before Terminate.
 */
PGW_EXTERN int pgw_conn_congested(const pgw_conn_t *conn);
/* Resume a paused COPY FROM source (pgw_session_copy_resume): the source is
 * called again from the loop, not from inside this call. Returns 0,
 * PGW_EBUSY (no paused COPY FROM), PGW_ECLOSED, PGW_EINVAL (conn NULL). */
PGW_EXTERN int pgw_conn_copy_resume(pgw_conn_t *conn);
/* A COPY FROM STDIN fed by source / a COPY TO STDOUT delivered to on_data;
 * cb gets the completion (see session.h "COPY"). */
PGW_INLINE int pgw_conn_copy_in(pgw_conn_t *conn, const char *sql, pgw_copy_source_cb source,
                                pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_COPY_IN_REQ(sql, source, cb, ud);
    return pgw_conn_submit(conn, &r);
}
PGW_INLINE int pgw_conn_copy_out(pgw_conn_t *conn, const char *sql, pgw_copy_data_cb on_data,
                                 pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_COPY_OUT_REQ(sql, on_data, cb, ud);
    return pgw_conn_submit(conn, &r);
}

/* The common requests in one call (each fills in a descriptor and submits
 * it): a Simple Query, an extended query with binary results, a prepare, an
 * execution. Streaming, text results and the rest: pgw_conn_submit. */
PGW_INLINE int pgw_conn_simple_query(pgw_conn_t *conn, const char *sql, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_SIMPLE(sql, cb, ud);
    return pgw_conn_submit(conn, &r);
}
PGW_INLINE int pgw_conn_query(pgw_conn_t *conn, const char *sql, const pgw_param_t *params,
                              size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}
PGW_INLINE int pgw_conn_prepare(pgw_conn_t *conn, const char *name, const char *sql,
                                const uint32_t *oids, size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_PREPARE(name, sql, oids, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}
PGW_INLINE int pgw_conn_execute(pgw_conn_t *conn, const char *name, const pgw_param_t *params,
                                size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_EXECUTE(name, params, nparams, cb, ud);
    return pgw_conn_submit(conn, &r);
}

/*
 * Read backpressure. pgw_conn_pause_reading stops reading the socket (its
 * readable interest is dropped from the loop) and pauses the session's
 * input: the message being dispatched finishes, nothing more is delivered,
 * and what was already read stays in its read chunk, unparsed, until
 * pgw_conn_resume_reading. A row callback returning PGW_ROW_PAUSE
 * (session.h) does the same from inside the row stream. Meanwhile the
 * server's output waits in the kernel's socket buffers and then in the
 * server (TCP flow control), so memory stays bounded however large the
 * result, and the loop serves its other handles: a slow consumer pauses,
 * works through what it took from its rows on its own time (a timer, a
 * thread's completion), and resumes, instead of blocking in the row
 * callback and stalling every connection on the loop. Requests can still
 * be submitted and are written while paused.
 *
 * Resuming is deferred to the loop: the input that waited is processed in
 * the loop's next prepare phase (before it polls), its callbacks firing
 * from inside uv_run as always (they may pause again), and reading goes on.
 * Both are idempotent and callable from any callback, including the row
 * callback. Paused while connecting, an attempt's connect that failed at
 * once (a TCP port refused on this host) waits too: its socket stays
 * open, and the failure is handled (the next host tried) once reading
 * resumes, as libpq's PQconnectStart leaves it to PQconnectPoll. Return 0,
 * PGW_EINVAL (conn NULL), PGW_EBUSY (before pgw_conn_connect) or
 * PGW_ECLOSED (closed or lost).
 * pgw_conn_reading_paused: 1 while paused, else 0 (also for NULL).
 */
PGW_EXTERN int pgw_conn_pause_reading(pgw_conn_t *conn);
PGW_EXTERN int pgw_conn_resume_reading(pgw_conn_t *conn);
PGW_EXTERN int pgw_conn_reading_paused(const pgw_conn_t *conn);

/*
 * I/O WITHOUT A LOOP TURN. The loop writes a connection's queued output in
 * its next prepare phase and reads when its poll reports the socket
 * readable: each turn costs a poll system call. A driver that already knows
 * what it wants (a libpq-style PQflush after a send, PQconsumeInput when the
 * program's own poll found the socket readable) does it at once instead:
 *
 * pgw_conn_flush writes the queued output now, as far as the socket takes
 * it; the rest is written by the loop when the socket is writable. No
 * callback runs inside it: a failed write is reported from the loop's next
 * turn, as from a submit. Returns 1 when output is left (the socket is
 * full, or a cancel in progress holds the writes), 0 when the socket took
 * all of it, PGW_EINVAL (conn NULL) or PGW_ECLOSED (not connected: before
 * the connect callback, lost or closed; nothing done). Output the session
 * itself holds back (behind a COPY, or a submit with a deadline) is not
 * "left": the loop writes it once the session releases it.
 *
 * pgw_conn_read_now does what the loop does when the socket is readable,
 * without waiting for it: reads what the socket holds (nothing when it is
 * empty or reading is paused), processes it, and then writes what that
 * queued, as pgw_conn_flush. Callbacks (results, rows, notices,
 * notifications, on_lost and the failure of every pending request) run
 * inside the call. Returns 0, PGW_EINVAL or PGW_ECLOSED as pgw_conn_flush
 * (also when the connection is lost during the call), or PGW_ERECURSIVE,
 * having done nothing, when called from a callback of this connection's
 * session (a result, row, notice or notification callback).
 *
 * Neither runs the loop: timers, other handles and a connect in progress
 * still need uv_run.
 */
PGW_EXTERN int pgw_conn_flush(pgw_conn_t *conn);
PGW_EXTERN int pgw_conn_read_now(pgw_conn_t *conn);

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
/* The statement cache's counters (pgw_session_stmt_cache_stats; zeroes
 * when not connected). */
PGW_EXTERN void pgw_conn_stmt_cache_stats(pgw_conn_t *conn, pgw_stmt_cache_stats_t *out);
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
/* Replace the connection's notification callback (pgw_conn_config_t's
 * on_notification with cfg->ud) by cb with ud; cb NULL drops
 * notifications. Takes effect for the next notification read, also from
 * inside a callback. Returns 0 or PGW_EINVAL (conn NULL). LISTEN helpers
 * and a listener that survives reconnects: pgwire/listen.h. */
PGW_EXTERN int pgw_conn_set_notification_cb(pgw_conn_t *conn, pgw_notification_cb cb, void *ud);
/* Whether on_trace sees the messages sent (on: 1, the default) or only
 * those received (0), from the next message on; set before the connect,
 * it holds for every host it tries (pgw_session_trace_sent). Returns 0 or
 * PGW_EINVAL (conn NULL). */
PGW_EXTERN int pgw_conn_trace_sent(pgw_conn_t *conn, int on);
/* Whether on_trace sees the messages received (on: 1, the default), from
 * the next message on; set before the connect, it holds for every host it
 * tries (pgw_session_trace_received). Returns 0 or PGW_EINVAL (conn
 * NULL). */
PGW_EXTERN int pgw_conn_trace_received(pgw_conn_t *conn, int on);

/*
 * A layer that runs connections on a caller's behalf (the pool, the
 * listener) gives each the caller's pgw_conn_config_t unchanged, so the
 * caller's hooks run with the caller's ud, and hears what it needs of the
 * connection through a driver of its own (with its own ud), beside the
 * driver hook of its requests (session.h, "Driver completions"):
 *   on_lost     the established connection broke (before the config's
 *               on_lost; the requests it carried have completed);
 *   on_attempt  a connect attempt's session was made: requests submitted
 *               from now on go to that attempt (between two attempts, while
 *               the last one's requests fail, a submit is refused);
 *   on_parameter  the server reported a parameter (ParameterStatus: at
 *               startup and whenever a GUC_REPORT one changes, e.g.
 *               in_hot_standby when a standby is promoted), before the
 *               config's on_parameter; name and value are views valid
 *               during the call.
 * Any may be NULL. Set it before pgw_conn_connect; d is copied (NULL
 * removes the driver). Returns 0 or PGW_EINVAL (conn NULL).
 */
typedef struct pgw_conn_driver {
    void (*on_lost)(pgw_conn_t *conn, int err, void *ud); /* see above */
    void (*on_attempt)(pgw_conn_t *conn, void *ud);       /* see above */
    void *ud;                                             /* passed to each */
    void (*on_parameter)(pgw_conn_t *conn, pgw_str_t name, pgw_str_t value,
                         void *ud); /* see above */
} pgw_conn_driver_t;
PGW_EXTERN int pgw_conn_set_driver(pgw_conn_t *conn, const pgw_conn_driver_t *d);
/* The driver's ud (NULL without a driver, or for NULL): how a layer finds
 * its own state from a connection it handed out. */
PGW_EXTERN void *pgw_conn_driver_userdata(const pgw_conn_t *conn);

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

/* What GSSAPI did for the connection (libpq: PQgssEncInUse,
 * PQconnectionUsedGSSAPI). */
typedef struct pgw_gss_info {
    int encrypted; /* 1 if the connection runs over GSS encryption */
    int used;      /* 1 if GSSAPI authenticated it: GSS encryption, or an
                      AuthenticationGSS exchange */
    /* The client's principal as the GSS-API names it ("alice@EXAMPLE.COM"),
     * "" when unknown or unused. Valid until the connection is closed or
     * its connect moves to another attempt. */
    const char *principal;
} pgw_gss_info_t;
/* Fill *out (all zero/"" for a connection that did not use GSSAPI, or
 * before it is up). Returns 0, or PGW_EINVAL (out NULL; or conn NULL,
 * *out then zeroed). */
PGW_EXTERN int pgw_conn_gss_info(const pgw_conn_t *conn, pgw_gss_info_t *out);

/* Give the OAuth bearer token the on_oauth_token callback was asked for
 * (copied, wiped when no longer needed), or, with token NULL, say the flow
 * failed (error, may be NULL: "user-defined OAuth flow failed: <error>").
 * Call it from inside the callback or later from the loop's thread; a
 * connect waiting for it goes on from the loop. Returns 0, PGW_EINVAL
 * (conn NULL), PGW_EBUSY (no token is being asked for) or PGW_ENOMEM. */
PGW_EXTERN int pgw_conn_oauth_token(pgw_conn_t *conn, const char *token, const char *error);

/* The protocol version in use as libpq 18's PQfullProtocolVersion gives
 * it: major * 10000 + minor (30000 for 3.0, 30002 for 3.2), or 0 when the
 * connection is not up (connecting, lost, closed, or conn NULL). */
PGW_EXTERN int pgw_conn_protocol_version(const pgw_conn_t *conn);

/*
 * Why the connect failed, in libpq's words (PQerrorMessage without its
 * final newline): one entry per attempt, in the order they were made,
 * joined with newlines, each the message of pgw_conn_attempts. For
 * example, for host=nonexistent.invalid,127.0.0.1 with nothing listening
 * on the port:
 *   could not translate host name "nonexistent.invalid" to address: Name or service not known
 *   connection to server at "127.0.0.1", port 5432 failed: Connection refused
 *   \tIs the server running on that host and accepting TCP/IP connections?
 * The server's errors carry their severity and detail as libpq shows them
 * ("FATAL:  password authentication failed for user "u""), TLS failures
 * libpq's texts ("SSL error: certificate verify failed: ...", "server
 * does not support SSL, but SSL was required"). "" after a successful
 * connect (as libpq), and before one. Once connected, a TLS failure that
 * breaks the connection appends its message, and so does a read that
 * fails other than with a reset or EOF ("could not receive data from
 * server: Connection timed out": the kernel gave up on the peer; over TLS
 * followed by libpq's "SSL SYSCALL error: Connection timed out"). Valid
 * until pgw_conn_close.
 * NULL for a NULL conn.
 */
PGW_EXTERN const char *pgw_conn_error_message(const pgw_conn_t *conn);

/* ---------------------------------------------------------- connect report */

/*
 * The phases of a connect, in the order an attempt goes through them:
 * XX(NAME, "name", meaning) gives PGW_PHASE_<NAME> (from 0 in this order)
 * and the name pgw_conn_phase_name returns.
 */
#define PGW_CONN_PHASE_MAP(XX)                                                           \
    XX(NEW, "new", "pgw_conn_connect not called")                                        \
    XX(RESOLVING, "resolving", "looking the host name up")                               \
    XX(CONNECTING, "connecting", "the socket's connect()")                               \
    XX(GSS, "gss", "GSSENCRequest and the GSS-API context (GSS encryption)")             \
    XX(TLS, "tls", "SSLRequest (or direct TLS) and the handshake")                       \
    XX(STARTUP, "startup", "startup packet sent, no authentication request yet")         \
    XX(AUTHENTICATING, "authenticating", "the server asked for a password or SASL")      \
    XX(SETUP, "setup",                                                                   \
       "authenticated: waiting for ReadyForQuery (and the DateStyle/IntervalStyle SET)") \
    XX(CHECKING_TARGET, "checking_target", "checking target_session_attrs")              \
    XX(READY, "ready", "connected")                                                      \
    XX(FAILED, "failed", "the connect failed (or was cancelled)")

/* The phases as an enum: PGW_PHASE_NEW ... PGW_PHASE_FAILED. */
typedef enum pgw_conn_phase {
#define PGW__PHASE_ENUM(name, str, meaning) PGW_PHASE_##name,
    PGW_CONN_PHASE_MAP(PGW__PHASE_ENUM)
#undef PGW__PHASE_ENUM
} pgw_conn_phase_t;

/* A static name for a phase, for traces and logs (the map's second
 * column: "new", "resolving", ...); "unknown" for other values. */
PGW_EXTERN const char *pgw_conn_phase_name(int phase);

/* The connect's current phase (pgw_conn_phase_t): the phase of the
 * attempt in progress while connecting, PGW_PHASE_READY once connected
 * (also after the connection is lost later), PGW_PHASE_FAILED after a
 * failed connect. PGW_PHASE_NEW for a NULL conn. */
PGW_EXTERN int pgw_conn_phase(const pgw_conn_t *conn);

/* One connect attempt: one socket to one address (gssencmode prefer and
 * sslmode prefer and allow make more attempts on the same address when
 * one is refused, see GSSAPI), or a
 * host that was never connected to (its name did not resolve, or its
 * options made it unusable). */
typedef struct pgw_conn_attempt {
    /* The host as given (host, or hostaddr when host is empty; a socket
     * directory for a unix-domain socket). */
    const char *host;
    /* The address connected to: numeric IPv4/IPv6, or the socket path;
     * "" when there was none (the name did not resolve). */
    const char *address;
    uint16_t port;
    int tls;   /* 1 if this attempt negotiated (or tried to negotiate) TLS */
    int phase; /* pgw_conn_phase_t reached: where it failed, PGW_PHASE_READY
                  for the attempt that connected, the current phase for one
                  still in progress */
    /* 0 for the attempt that connected (or one still in progress), else
     * why it failed: PGW_EDNS, a libuv code from connect() (UV_ECONNREFUSED,
     * UV_ENOENT, ...), PGW_ETIMEDOUT, PGW_ECONNLOST, PGW_ETLS, PGW_EPROTO,
     * PGW_ESERVER (sqlstate says which), PGW_EAUTH, PGW_EAUTHPOLICY,
     * PGW_ENOTSUP, PGW_ETARGET, PGW_ECONNINFO, PGW_ECANCELED, PGW_ENOMEM. */
    int status;
    /* The server's SQLSTATE for PGW_ESERVER ("28P01": wrong password,
     * "57P03": the server is starting up), else "". */
    const char *sqlstate;
    /* libpq's message for this attempt, without a final newline:
     * "connection to server at "h" (addr), port p failed: why" (libpq's
     * form: "(addr)" only when it differs from h; "connection to server on
     * socket "path" failed: why" for a unix-domain socket; "could not
     * translate host name "h" to address: why" for a name that did not
     * resolve). "" for the attempt that connected and one in progress. */
    const char *message;
    int gss; /* 1 if this attempt negotiated (or tried to negotiate) GSS encryption */
} pgw_conn_attempt_t;

/*
 * The attempts of the connect so far, in order: *n (may be NULL) receives
 * their number. Readable at any time, in particular from the connect
 * callback and after it. The array and its strings belong to the
 * connection and stay valid until the next attempt starts (while
 * connecting) or, once the connect callback has run, until pgw_conn_close.
 * Returns NULL with *n = 0 before pgw_conn_connect and for a NULL conn.
 */
PGW_EXTERN const pgw_conn_attempt_t *pgw_conn_attempts(const pgw_conn_t *conn, size_t *n);

/* ------------------------------------------------------------ cancel token */

/*
 * A cancel token: everything needed to cancel what a connection's backend
 * runs, taken from the connected conn and usable from any thread after,
 * also once the connection is closed (libpq's PGcancel). It holds the
 * address actually connected to (TCP address and port, or the unix socket
 * path), the backend's pid and key (4 bytes in protocol 3.0, up to 256 in
 * 3.2), the TLS policy and context the connection negotiated with (a
 * connection that runs over TLS cancels over TLS and never sends the key
 * in plaintext; one that runs in plaintext cancels in plaintext), and
 * connect_timeout. Immutable: any number of threads may send the same
 * token at once.
 */
typedef struct pgw_cancel_token pgw_cancel_token_t;

/* Take conn's cancel token into *out (allocated with conn's allocator,
 * which must outlive the token; free with pgw_cancel_token_free). Call
 * from the connection's thread. Returns 0, PGW_EINVAL (conn or out NULL),
 * PGW_EBUSY (not connected yet), PGW_ECLOSED (lost or closed), PGW_ENOTSUP
 * (the server sent no BackendKeyData) or PGW_ENOMEM; *out is NULL on
 * failure. */
PGW_EXTERN int pgw_conn_cancel_token(const pgw_conn_t *conn, pgw_cancel_token_t **out);
/* An independent copy of tok (same allocator). Returns 0, PGW_EINVAL or
 * PGW_ENOMEM (*out NULL). */
PGW_EXTERN int pgw_cancel_token_copy(const pgw_cancel_token_t *tok, pgw_cancel_token_t **out);
/* Free a token. NULL is a no-op. Not while a send of it is in progress. */
PGW_EXTERN void pgw_cancel_token_free(pgw_cancel_token_t *tok);

/*
 * Send the cancel and block until the server closed the cancel connection
 * (libpq's PQcancelBlocking), on a private loop: callable from any thread,
 * needing no loop of the caller's. The whole exchange (connect, TLS, the
 * request, the server's close) is bounded by timeout_ms, or, when it is 0,
 * by the token's connect_timeout (10 s when the connection had none), as
 * pgw_conn_cancel. Returns 0 (delivered: a request still running then
 * fails with SQLSTATE 57014), PGW_ETIMEDOUT, PGW_ECONNECT (could not
 * connect, or the connection failed before the server closed it), PGW_ETLS
 * / PGW_EPROTO (TLS could not be negotiated: the key was not sent),
 * PGW_ENOMEM, PGW_EINVAL (tok NULL), or a libuv error creating the loop.
 */
PGW_EXTERN int pgw_cancel_token_send(const pgw_cancel_token_t *tok, unsigned timeout_ms);

/* What a token holds, for logs: views into tok, valid until it is freed. */
typedef struct pgw_cancel_token_info {
    const char *address; /* numeric IP address, or the unix socket path */
    uint16_t port;       /* 0 for a unix-domain socket */
    int32_t pid;         /* the backend's process id */
    size_t key_len;      /* 4 (protocol 3.0) to 256 */
    int tls;             /* 1: the cancel negotiates TLS */
    unsigned timeout_ms; /* connect_timeout in ms (0: none, 10 s is used) */
    int gss;             /* 1: the cancel negotiates GSS encryption */
} pgw_cancel_token_info_t;
/* Fill *out. Returns 0 or PGW_EINVAL (tok or out NULL; *out zeroed when
 * out is not NULL). */
PGW_EXTERN int pgw_cancel_token_info(const pgw_cancel_token_t *tok, pgw_cancel_token_info_t *out);

/*
 * For a caller that sends the cancel itself (an event loop of its own, a
 * signal handler: libpq's PQcancel): the CancelRequest message and the
 * address pgw_cancel_token_send connects to. Neither allocates, locks or
 * touches anything but tok and the caller's buffers, so both may be called
 * from a signal handler. The message goes first on a new stream connection
 * to that address; pgw_cancel_token_send then waits until the server
 * closes it. A token whose info says tls or gss must be sent inside that
 * negotiation (as pgw_cancel_token_send does), never in plaintext.
 */

/* The largest CancelRequest: 12 bytes and a 256-byte key (protocol 3.2). */
#define PGW_CANCEL_REQUEST_MAX 268

/* Write tok's CancelRequest into buf (cap bytes) and its length into *len.
 * Returns 0, PGW_EINVAL (tok, buf or len NULL) or PGW_ETOOBIG (cap is less
 * than *len, which is then the size needed; PGW_CANCEL_REQUEST_MAX always
 * suffices). */
PGW_EXTERN int pgw_cancel_token_request(const pgw_cancel_token_t *tok, uint8_t *buf, size_t cap,
                                        size_t *len);

/* Copy the address tok's cancel connects to (a struct sockaddr_in,
 * sockaddr_in6 or sockaddr_un, as connect(2) takes it) into addr, at most
 * *addr_len bytes (sizeof(struct sockaddr_storage) always suffices), and
 * set *addr_len to its length. Returns 0, PGW_EINVAL (an argument NULL) or
 * PGW_ETOOBIG (*addr_len too small: set to the length needed). */
PGW_EXTERN int pgw_cancel_token_address(const pgw_cancel_token_t *tok, void *addr,
                                        size_t *addr_len);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CONN_H */
