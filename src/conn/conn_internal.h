/*
 * Internals of the libuv connection (src/conn). Not installed.
 *
 * Files: conn.c (object, session wiring, reads, writes, close, requests),
 * connect.c (host list, DNS, socket connect, target_session_attrs),
 * attempts.c (the connect's phases and the record of its attempts, in
 * libpq's words), cancel.c (cancel tokens and the one CancelRequest
 * sender, over a second socket), readctl.c (read backpressure: pausing
 * and resuming the socket's reads), deadline.c (request deadlines on one
 * timer), transport.c (the sockets,
 * and the plaintext seam between socket bytes and session bytes), tlsconn.c
 * (SSLRequest and the handshake on a socket, and the TLS seam), gssconn.c
 * (GSSENCRequest and the GSS-API handshake on a socket, the GSS encryption
 * seam, and the GSSAPI authentication and OAuth hooks of the session).
 */
#ifndef PGW_CONN_INTERNAL_H
#define PGW_CONN_INTERNAL_H

#include "pgwire/conn.h"
#include "pgwire/conninfo.h"
#include "pgwire/hostplan.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <uv.h>
#include "auth/gss.h"
#include "tls/tls.h"
#include "util/internal.h"

/* libpq's words for a server that closed the connection before answering. */
#define PGW__MSG_SERVER_CLOSED                                                     \
    "server closed the connection unexpectedly\n\tThis probably means the server " \
    "terminated abnormally\n\tbefore or while processing the request."

/* Where a server listens: a TCP address or a unix-domain socket path, as
 * connect() takes it. len 0: none yet. */
typedef struct pgw__peer {
    struct sockaddr_storage addr;
    socklen_t len;
} pgw__peer_t;

/* Set peer to the unix-domain socket path (a leading '@' names Linux's
 * abstract namespace, as in libpq). Returns 0 or PGW_ECONNINFO (empty, or
 * longer than a sockaddr_un holds). */
int pgw__peer_unix(pgw__peer_t *peer, const char *path);
/* Set peer to an AF_INET or AF_INET6 address. */
void pgw__peer_ip(pgw__peer_t *peer, const struct sockaddr *sa);
/* 1 for a TCP peer, 0 for a unix-domain socket. */
int pgw__peer_is_tcp(const pgw__peer_t *peer);

/*
 * A socket the connection owns (transport.c): non-blocking, close-on-exec,
 * watched by one uv_poll_t, read with recv() and written with
 * send(MSG_NOSIGNAL), so that no write ever raises SIGPIPE. Used by the
 * connection (one per connect attempt, heap-allocated so that an abandoned
 * attempt's handle can finish closing while the next attempt uses a fresh
 * one) and by cancel requests.
 */
typedef struct pgw__sock pgw__sock_t;
/* The poll handle fired: status < 0 is a poll error, else events holds
 * UV_READABLE and/or UV_WRITABLE. */
typedef void (*pgw__sock_cb)(pgw__sock_t *k, int status, int events);
struct pgw__sock {
    uv_poll_t poll;
    int fd;         /* -1 once closed */
    int events;     /* what the poll handle watches now */
    int connecting; /* connect() started, result not read yet */
    int connected;  /* ... and returned 0 */
    /* The connect's outcome came without an event (pgw__sock_connect_now)
     * and waits, in outcome, to be handled. */
    int settled, outcome;
    /* The errno of the last recv that failed with PGW_ECONNLOST (0: none
     * yet), for the words of the loss. */
    int err;
    pgw__sock_cb cb;
    void *owner;
};

/* What a socket is given before it connects: the TCP options (NULL for
 * none: a unix-domain socket, a cancel request), whether those left unset
 * keep the kernel's values (pgw_conn_config_t.kernel_tcp_defaults) rather
 * than the DEAD PEERS defaults of conn.h, and, when the kernel refused
 * one, libpq's message for it. */
typedef struct pgw__sock_opts {
    const pgw_tcp_options_t *tcp;
    bool kernel_defaults;
    char why[256];
} pgw__sock_opts_t;

/* Create a socket for peer, set opts->tcp's options (opts may be NULL;
 * TCP_NODELAY, keepalives and TCP_USER_TIMEOUT, with the DEAD PEERS
 * defaults of conn.h for those left unset unless opts->kernel_defaults)
 * and start connecting it without blocking, as libpq does: a refused
 * option fails before any connection.
 * Returns 0 (the poll handle is initialised: close it with pgw__sock_close;
 * watch UV_WRITABLE to learn when the connect finished, then read
 * pgw__sock_connect_result), the negated errno of socket() or
 * setsockopt() (opts->why: libpq's message for it) or of connect() when
 * the connect failed at once
 * (libuv's code: UV_ECONNREFUSED, UV_ENOENT
 * for a missing socket file, UV_EAGAIN for a full unix socket backlog,
 * ...; nothing to close), a libuv error of the poll handle, or PGW_EINVAL. */
int pgw__sock_connect(pgw__sock_t *k, uv_loop_t *loop, const pgw__peer_t *peer,
                      pgw__sock_opts_t *opts, pgw__sock_cb cb, void *owner);
/* After the first writable event: 0 connected, or the negated errno the
 * connect failed with (SO_ERROR: UV_ECONNREFUSED, UV_ETIMEDOUT, ...). */
int pgw__sock_connect_result(pgw__sock_t *k);
/* The connect's outcome if it is already known, read without waiting for
 * an event: a unix-domain socket connects at once, and a TCP connect over
 * loopback has usually finished by the time connect() returned
 * EINPROGRESS, which a second connect() to the same peer tells. Returns 0
 * (connected), the negated errno the connect failed with (read, so
 * SO_ERROR no longer holds it), or 1 while it is in progress (watch
 * UV_WRITABLE, then read pgw__sock_connect_result). k->connecting is left
 * as it is. */
int pgw__sock_connect_now(pgw__sock_t *k, const pgw__peer_t *peer);
/* Watch exactly events (UV_READABLE | UV_WRITABLE, 0: none). Returns 0 or
 * a libuv error. */
int pgw__sock_watch(pgw__sock_t *k, int events);
/* Bytes sent (>= 0), PGW_EAGAIN (the socket is full), or PGW_ECONNLOST. */
ssize_t pgw__sock_send(pgw__sock_t *k, const uint8_t *p, size_t n);
/* Bytes read (> 0), 0 when the peer closed (EOF or reset), PGW_EAGAIN
 * (nothing to read now), or PGW_ECONNLOST (k->err says why). */
ssize_t pgw__sock_recv(pgw__sock_t *k, uint8_t *p, size_t n);
/* Stop watching, close the descriptor now and the poll handle
 * asynchronously (cb runs from the loop; k must stay valid until then).
 * Idempotent. */
void pgw__sock_close(pgw__sock_t *k, uv_close_cb cb);

/*
 * TLS negotiation on a connected socket (tlsconn.c), shared by connections
 * and cancel requests: SSLRequest, the server's one-byte answer, then the
 * handshake (or, for sslnegotiation=direct, the handshake at once).
 */
enum pgw__neg_phase {
    PGW__NEG_IDLE = 0,
    PGW__NEG_REQUEST,
    PGW__NEG_ANSWER,
    PGW__NEG_CONTEXT, /* 'S' received, waiting for the caller's context */
    PGW__NEG_HANDSHAKE
};
enum { PGW__NEG_TLS = 1, PGW__NEG_PLAIN = 2, PGW__NEG_NEED_CONTEXT = 3 };
typedef struct pgw__tlsneg {
    int phase;          /* enum pgw__neg_phase */
    int handshake_fail; /* the failure (if any) came from the handshake itself */
    pgw__sslmode_t mode;
    uint8_t req[8]; /* SSLRequest */
    size_t sent;
    pgw__tls_t *t; /* created on 'S' (at once for direct) */
    char err[PGW__TLS_ERRLEN];
} pgw__tlsneg_t;

/* The TLS policy a socket negotiates with: the context (a reference is
 * held by whoever owns the policy), the host name (libpq's `host`, also
 * with hostaddr) for SNI and verify-full, and the per-connection switches.
 * mode is what the answer to SSLRequest is judged against. */
typedef struct pgw__tls_policy {
    pgw__tls_ctx_t *ctx;
    pgw__sslmode_t mode;
    int sni;
    int direct;
    size_t ring_size;
    char host[256];
} pgw__tls_policy_t;

/* Start negotiating on a connected socket. Nothing is sent until the first
 * pgw__tlsneg_step. p->ctx may be NULL except for direct TLS (see
 * PGW__NEG_NEED_CONTEXT). Returns 0, or PGW_ETLS / PGW_ENOMEM (direct: the
 * engine could not be created; message in n->err). */
int pgw__tlsneg_begin(pgw__tlsneg_t *n, const pgw__tls_policy_t *p, const pgw_allocator_t *alloc);
/* Advance as far as the socket allows, watching what the next step needs.
 * Returns PGW__NEG_TLS (the handshake completed: take n->t, whose output
 * may still hold the last handshake bytes), PGW__NEG_PLAIN (the server
 * said 'N' and the mode allows plaintext), PGW__NEG_NEED_CONTEXT (the
 * server said 'S' and p->ctx is NULL: build it, then step again; libpq
 * reads the TLS files only at this point), 0 (waiting for the socket), or
 * the failure (PGW_ETLS, PGW_EPROTO, PGW_ECONNLOST, PGW_ENOMEM; libpq's
 * message in n->err; n->t is freed). phase is PGW__NEG_IDLE after any
 * outcome but 0. */
int pgw__tlsneg_step(pgw__tlsneg_t *n, pgw__sock_t *k, const pgw__tls_policy_t *p,
                     const pgw_allocator_t *alloc);
/* Abandon a negotiation (frees n->t). */
void pgw__tlsneg_reset(pgw__tlsneg_t *n);
/* Send the engine's pending ciphertext: 0 when all was sent, 1 when the
 * socket is full, PGW_ECONNLOST. */
int pgw__tls_sock_flush(pgw__tls_t *t, pgw__sock_t *k);
/* Read ciphertext from the socket into the engine: bytes read (> 0), 0 at
 * EOF (the engine was told), PGW_EAGAIN, or PGW_ECONNLOST / PGW_EPROTO. */
ssize_t pgw__tls_sock_fill(pgw__tls_t *t, pgw__sock_t *k);

/*
 * GSS encryption negotiation on a connected socket (gssconn.c), shared by
 * connections and cancel requests: GSSENCRequest, the server's one-byte
 * answer ('G' to go on, 'N' to refuse), then the GSS-API context tokens,
 * each sent and received as a packet (its length in 4 bytes, network
 * order, then the token), until the context is established.
 */
enum pgw__gneg_phase {
    PGW__GNEG_IDLE = 0,
    PGW__GNEG_REQUEST,  /* sending GSSENCRequest */
    PGW__GNEG_ANSWER,   /* waiting for 'G' or 'N' */
    PGW__GNEG_HANDSHAKE /* exchanging context tokens */
};
enum { PGW__NEG_GSS = 4 };
/* What a socket negotiates GSS encryption with: the service principal
 * krbsrvname@host (host: libpq's PQhost, the host name or else hostaddr)
 * and whether to delegate credentials. */
typedef struct pgw__gss_policy {
    char service[128];
    char host[256];
    int delegate;
} pgw__gss_policy_t;
typedef struct pgw__gssneg {
    int phase;     /* enum pgw__gneg_phase */
    int retryable; /* the failure (if any) lets libpq try the next method on a new socket */
    uint8_t req[8];
    size_t sent;
    pgw__gss_cred_t *cred; /* the credentials the context will use (NULL: default) */
    pgw__gss_t *g;         /* the context, from 'G' on */
    pgw_buf_t out;         /* the packet being sent */
    size_t out_off;        /* bytes of it sent */
    uint8_t *in;           /* PGW__GSS_MAX_PACKET bytes: the packet being received */
    size_t in_len;         /* bytes of it received */
    char err[PGW__TLS_ERRLEN];
} pgw__gssneg_t;

/* Start negotiating on a connected socket (nothing is sent until the first
 * step) with cred (taken over; NULL: the default credentials). Returns 0
 * or PGW_ENOMEM. */
int pgw__gssneg_begin(pgw__gssneg_t *n, pgw__gss_cred_t *cred, const pgw_allocator_t *alloc);
/* Advance as far as the socket allows, watching what the next step needs.
 * Returns PGW__NEG_GSS (established: take n->g), PGW__NEG_PLAIN (the
 * server said 'N': the socket is usable for the next method), 0 (waiting
 * for the socket), or the failure with libpq's message in n->err:
 * PGW_EAUTH (the GSS-API refused: no credentials, an unknown service,
 * ...), PGW_ECONNLOST, PGW_EPROTO (an oversize packet; an answer that is
 * neither 'G', 'N' nor 'E'; bytes behind the last token), PGW_ENOMEM;
 * n->retryable says whether libpq would go on with the next encryption
 * method on a new socket (an 'E' answer, a failed handshake) or give up.
 * phase is PGW__GNEG_IDLE after any outcome but 0. */
int pgw__gssneg_step(pgw__gssneg_t *n, pgw__sock_t *k, const pgw__gss_policy_t *p,
                     const pgw_allocator_t *alloc);
/* Abandon a negotiation (frees n->g and the buffers). */
void pgw__gssneg_reset(pgw__gssneg_t *n, const pgw_allocator_t *alloc);

/*
 * The GSS encryption transport's state (gssconn.c): the established
 * context, the ciphertext read from the socket (whole packets are
 * unwrapped, their plaintext copied into the session's read chunk), and
 * the packets the session's output was wrapped into, written as is.
 */
typedef struct pgw__gsst {
    pgw__gss_t *g;
    size_t max_plain; /* plaintext per packet (gss_wrap_size_limit) */
    uint8_t *in;      /* ciphertext from the socket */
    size_t in_cap, in_start, in_end;
    const uint8_t *plain; /* unwrapped, not taken by the session yet */
    size_t plain_len;
    pgw_buf_t out; /* wrapped packets to write */
    size_t out_off;
    char principal[256]; /* the client's, for pgw_conn_gss_info */
} pgw__gsst_t;

/* Take over the established context g (freed on failure too). Returns 0,
 * PGW_ENOMEM or PGW_EAUTH (message in err). */
int pgw__gsst_new(pgw__gsst_t **out, pgw__gss_t *g, size_t ring, const pgw_allocator_t *alloc,
                  char *err, size_t errlen);
void pgw__gsst_free(pgw__gsst_t *t, const pgw_allocator_t *alloc);

/*
 * A cancel token (cancel.c; pgw_cancel_token_t in conn.h): immutable once
 * made, so any thread may send it. peer is the address the connection
 * used; tls.ctx holds a reference (NULL: plaintext).
 */
struct pgw_cancel_token {
    const pgw_allocator_t *alloc;
    pgw__peer_t peer;
    char address[108]; /* numeric address or socket path, for logs */
    uint16_t port;
    int32_t pid;
    uint8_t key[256];
    size_t key_len;
    pgw__tls_policy_t tls;
    int gss_enc; /* the connection ran over GSS encryption: so does its cancel */
    pgw__gss_policy_t gss;
    uint64_t timeout_ms; /* connect_timeout, 0: none */
};

/* Fill tok from c (connected) without allocating: takes a reference to
 * c's TLS context. Returns 0 or pgw_conn_cancel_token's codes. Release
 * with pgw__cancel_token_clear. */
int pgw__cancel_token_init(pgw_cancel_token_t *tok, const pgw_conn_t *c);
void pgw__cancel_token_clear(pgw_cancel_token_t *tok);

/*
 * The one CancelRequest sender (cancel.c), used by pgw_conn_cancel on the
 * connection's loop and by pgw_cancel_token_send on a private one: connect
 * to the token's address, negotiate TLS as its policy says, send the
 * packet, wait until the server closes. done fires exactly once with the
 * outcome; closed (may be NULL) fires when both handles have closed, after
 * which the object may be freed. The token must outlive the request.
 */
typedef struct pgw__cancel_req pgw__cancel_req_t;
struct pgw__cancel_req {
    pgw__sock_t sock;
    uv_timer_t timer;
    int nopen; /* handles not closed yet */
    int finished;
    const pgw_cancel_token_t *tok;
    pgw_buf_t pkt; /* the CancelRequest */
    size_t sent;
    pgw__tlsneg_t neg;
    pgw__tls_t *t;
    pgw__gssneg_t gneg;
    pgw__gss_t *g; /* GSS encryption, once negotiated */
    void (*done)(pgw__cancel_req_t *x, int status);
    void (*closed)(pgw__cancel_req_t *x);
    void *owner;
};
/* Start x (done, closed and owner set) for tok on loop, bounded by
 * timeout_ms (0: the token's connect_timeout, else 10 s). Returns 0 (done
 * will fire: 0 when the server closed the connection, PGW_ECONNECT,
 * PGW_ETIMEDOUT, PGW_ETLS, PGW_EPROTO, or what pgw__cancel_req_finish
 * gives) or PGW_ECONNECT / PGW_ENOMEM / PGW_EINVAL (nothing started, no
 * callback). */
int pgw__cancel_req_start(pgw__cancel_req_t *x, uv_loop_t *loop, const pgw_cancel_token_t *tok,
                          uint64_t timeout_ms);
/* Finish x now with status (no-op once finished) and close its handles. */
void pgw__cancel_req_finish(pgw__cancel_req_t *x, int status);

/*
 * The transport seam. Socket bytes pass through these functions on their
 * way to and from the session. The plaintext transport maps them straight
 * onto the session (zero copy: reads land in the session's chunk, writes
 * go out of the buffer swapped with the session's). The TLS transport
 * (tlsconn.c) has the socket read into the engine's ciphertext ring and
 * decrypts into the session's chunk in read_commit; take_output encrypts
 * the session's output into the engine's output ring, which is written as
 * is.
 */
typedef struct pgw__transport {
    const char *name;
    /* Where the socket's next recv() should read into. Returns 0 or an
     * error (the session may have been broken or replaced meanwhile). */
    int (*read_buffer)(pgw_conn_t *c, uint8_t **p, size_t *len);
    /* n bytes arrived in the region from read_buffer (0: the socket hit
     * EOF). Returns 0 or the fatal error (the session is then broken). */
    int (*read_commit)(pgw_conn_t *c, size_t n);
    /* Move the session's output to the write side (only called when no
     * write is in progress). Returns 0 or the fatal error. */
    int (*take_output)(pgw_conn_t *c);
    /* The next bytes to send (*len 0: none); stable until out_consumed. */
    const uint8_t *(*out_view)(pgw_conn_t *c, size_t *len);
    void (*out_consumed)(pgw_conn_t *c, size_t n);
    /* Bytes waiting to be written (both sides of the seam). */
    size_t (*pending_output)(pgw_conn_t *c);
} pgw__transport_t;

extern const pgw__transport_t pgw__transport_plain;
extern const pgw__transport_t pgw__transport_tls;
extern const pgw__transport_t pgw__transport_gss;

/* The encryption methods of libpq 17's connect (init_allowed_encryption_
 * methods and friends): each address is tried with the methods the options
 * allow, in libpq's order (GSS encryption, then TLS and plaintext in the
 * order sslmode gives), a refused or failed method giving way to the next. */
enum pgw__enc { PGW__ENC_PLAIN = 1, PGW__ENC_TLS = 2, PGW__ENC_GSS = 4 };
enum pgw__gssmode { PGW__GSSMODE_DISABLE = 0, PGW__GSSMODE_PREFER, PGW__GSSMODE_REQUIRE };
/* tlsconn.c: the methods (PGW__ENC_ bits) sslmode and gssmode allow on an
 * address (tcp 0: a Unix-domain socket, plaintext only). */
int pgw__enc_allowed(pgw__sslmode_t ssl, int gssmode, int tcp);
/* tlsconn.c: the first of the methods in remaining, in libpq's order for
 * sslmode (GSS, then TLS and plaintext, plaintext first for allow), or 0. */
int pgw__enc_first(pgw__sslmode_t ssl, int remaining);

/* The TLS options of a connection string (libpq's meaning of each). */
typedef struct pgw__tls_opts {
    pgw__sslmode_t mode;
    int direct;        /* sslnegotiation=direct */
    int sni;           /* sslsni (default 1) */
    int cert_required; /* sslcertmode=require */
} pgw__tls_opts_t;
/* tlsconn.c: read them from ci. Returns 0 or PGW_ECONNINFO (sslmode). */
int pgw__tls_opts_of(const pgw_conninfo_t *ci, pgw__tls_opts_t *o);
/* tlsconn.c: the settings a TLS context is built from, as ci gives them
 * (the strings are ci's). */
void pgw__tls_config_of(const pgw_conninfo_t *ci, pgw__tls_config_t *tc);
/* tlsconn.c: sslcertmode=require (when required) once the login
 * succeeded, libpq's check_expected_areq: 0, or PGW_ETLS with libpq's
 * message. */
int pgw__tls_check_client_cert(const pgw__tls_t *t, int required, char *msg, size_t msglen);
/* Where the application's OAuth token is (pgw_conn_oauth_token). */
enum pgw__oauth_state {
    PGW__OAUTH_NONE = 0, /* not asked for */
    PGW__OAUTH_ASKED,    /* the callback was called, no answer yet */
    PGW__OAUTH_HAVE,     /* c->oauth_token */
    PGW__OAUTH_FAILED    /* c->oauth_error says why */
};

enum pgw__conn_state {
    PGW__CONN_NEW = 0,
    PGW__CONN_CONNECTING,
    PGW__CONN_READY,
    PGW__CONN_LOST,
    PGW__CONN_CLOSING
};

/* One host of the connection string, after defaults were applied. */
typedef struct pgw__host {
    pgw_host_t h;         /* strings owned by the conn's pgw_conninfo_t */
    size_t index;         /* its position in the connection string */
    char port[8];         /* h.port as text, for getaddrinfo */
    const char *password; /* from the string or pgpass for this host, or NULL */
} pgw__host_t;

/* The host a plan (hostplan.h) gave last, or NULL; its first host in the
 * order tried, or NULL when it has none. */
const pgw__host_t *pgw__hostplan_host(const pgw_hostplan_t *p);
const pgw__host_t *pgw__hostplan_first(const pgw_hostplan_t *p);

typedef struct pgw__cancel pgw__cancel_t;

/*
 * Request deadlines (deadline.c): one timer per connection over a min-heap
 * of (time, ticket) entries, the session's tickets (session.h,
 * "Deadlines"). An entry whose ticket is older than the session's oldest
 * pending one belongs to a completed request and is dropped when met (or
 * pruned when the heap would grow), so the heap stays within about twice
 * the requests in flight. Besides deadlines, the heap holds the bound on
 * the server's answer to a cancel sent for an expired request (GRACE), and
 * the time to repeat a cancel of a request reported while queued that may
 * have missed it (RECANCEL).
 */
enum pgw__dl_kind { PGW__DL_DEADLINE = 0, PGW__DL_GRACE, PGW__DL_RECANCEL };
typedef struct pgw__dl_entry {
    uint64_t at; /* uv_now() milliseconds */
    uint64_t ticket;
    int kind;    /* enum pgw__dl_kind */
    int cancels; /* RECANCEL: cancels sent so far */
} pgw__dl_entry_t;
typedef struct pgw__deadlines {
    uv_timer_t timer;
    pgw__dl_entry_t *heap;
    size_t n, cap;
    uint64_t armed_at; /* when the timer fires; 0: stopped */
    int oom;           /* an entry could not be stored: the connection fails */
    /* Requests reported timed out while queued: cancelled once they run. */
    uint64_t *waiting;
    size_t nwait, wait_cap;
} pgw__deadlines_t;

/* Storage behind one pgw_conn_attempt_t (attempts.c). */
typedef struct pgw__attempt {
    char host[256];
    char address[108];
    char port[16]; /* as written in the connection string (libpq shows that) */
    char sqlstate[6];
    int by_hostaddr; /* the address came from hostaddr: libpq names it, not host */
    int is_unix;
    int ended;
    pgw_buf_t text; /* the message, NUL-terminated once not empty */
} pgw__attempt_t;

/*
 * The connect phase (connect.c, attempts.c): where the connect is, the
 * host list and the position in it, and the record of every attempt.
 * Reset by pgw_conn_connect; the hosts and the record live until
 * pgw_conn_close.
 */
typedef struct pgw__connect {
    int phase; /* pgw_conn_phase_t; PGW_PHASE_STARTUP is refined from the session */
    pgw_connect_cb cb;
    void *ud;
    pgw_hostplan_t *plan;    /* which host next (hostplan.c) */
    int probing;             /* a target_session_attrs check query is in flight */
    struct pgw__lookup *gai; /* the host name lookup in progress (connect.c) */
    struct addrinfo *ai_list;
    struct addrinfo *ai_next;
    /* The current address's encryption methods (enum pgw__enc): those the
     * options allow, those that failed, and the one being tried. */
    int enc_allowed, enc_failed, enc_current;
    int oauth_wait; /* the attempt ended for an OAuth token that is not there yet */
    /* The attempts: pub[i] points into rec[i]; cur is the one in
     * progress (-1: none). */
    pgw_conn_attempt_t *pub;
    pgw__attempt_t *rec;
    size_t natt, catt;
    long cur;
} pgw__connect_t;

struct pgw_conn {
    uv_loop_t *loop;
    pgw_conn_config_t cfg;
    const pgw_allocator_t *alloc;
    int state;
    pgw_session_t *s;
    const pgw__transport_t *tp;

    pgw__sock_t *sock; /* the current attempt's or the live socket */
    uv_prepare_t prepare;
    uv_timer_t timer;
    int prepare_active;
    int trace_quiet_out;   /* pgw_conn_trace_sent(c, 0) */
    int trace_quiet_in;    /* pgw_conn_trace_received(c, 0) */
    int writing;           /* wbuf[woff..len) is waiting for the socket */
    int write_failed;      /* a send failed inside a request: reported at prepare */
    int reading_last;      /* a send failed: the server's last input is read */
    int in_request;        /* a request function is flushing past the threshold */
    int resume_pending;    /* pgw_conn_resume_reading: process the input at prepare */
    pgw_buf_t wbuf;        /* pinned while writing */
    size_t woff;           /* bytes of wbuf already sent */
    size_t wbuf_keep;      /* wbuf capacity kept after a write; larger is freed */
    unsigned handles_open; /* handles whose close_cb has not run yet */

    pgw__connect_t cx; /* the connect phase */

    /* Connection options (connect.c), kept for the connection's life:
     * ci_owned when the connection parsed them, else the caller's
     * (pgw_conn_connect_parsed). */
    const pgw_conninfo_t *ci;
    pgw_conninfo_t *ci_owned;
    uint64_t connect_timeout_ms;
    pgw_tcp_options_t tcp; /* checked for each TCP attempt (pgw_conninfo_tcp_options) */
    const char *startup_params[64];
    size_t nstartup_params;
    const char *require_auth;
    const char *channel_binding;

    /* GSSAPI (gssconn.c, connect.c): gssencmode, the negotiation, the
     * encryption transport's state, and the authentication's context and
     * its last token. */
    int gssmode;               /* enum pgw__gssmode */
    pgw__gss_cred_t *gss_cred; /* acquired when GSS encryption was chosen, for its context */
    pgw__gssneg_t gneg;
    pgw__gsst_t *gss;
    pgw__gss_t *gss_auth;
    pgw_buf_t gss_token;
    char gss_principal[256]; /* the client's principal once authenticated by GSSAPI */
    /* OAuth (gssconn.c): the token the application gave, or why it could
     * not. */
    int oauth_state; /* enum pgw__oauth_state */
    char *oauth_token;
    char oauth_error[256];

    /* TLS (tlsconn.c, connect.c). */
    pgw__sslmode_t sslmode;
    int ssl_direct;          /* sslnegotiation=direct */
    int ssl_sni;             /* sslsni=1 */
    int sslcert_required;    /* sslcertmode=require */
    pgw__tls_ctx_t *tls_ctx; /* built at the first TLS attempt, kept for all */
    pgw__tlsneg_t neg;       /* the current attempt's negotiation */
    pgw__tls_t *tls;         /* the current socket's TLS session, or NULL */
    uint8_t cb_data[PGW__TLS_CB_MAX];
    pgw_buf_t errmsg; /* pgw_conn_error_message, NUL-terminated once not empty */
    uint32_t min_protocol;
    uint32_t max_protocol;

    /* Where the current attempt, then the live connection, goes (cancels
     * connect there too). */
    pgw__peer_t peer;

    pgw__cancel_t *cancels;
    pgw__deadlines_t dl;

    pgw_close_cb close_cb;
    void *close_ud;
    pgw_conn_stats_t stats;

    /* Write backpressure and COPY FROM (copyconn.c). */
    int drain_owed; /* the session drained: on_drain at the next prepare */
    /* cfg.on_notification with cfg.ud, or pgw_conn_set_notification_cb's. */
    pgw_notification_cb notify_cb;
    void *notify_ud;
    pgw_conn_driver_t driver; /* pgw_conn_set_driver */
};

/* conn.c */
int pgw__conn_sock_open(pgw_conn_t *c);
void pgw__conn_sock_drop(pgw_conn_t *c);
int pgw__conn_session_create(pgw_conn_t *c, const char *password);
void pgw__conn_session_drop(pgw_conn_t *c, int err);
int pgw__conn_start_io(pgw_conn_t *c);
void pgw__conn_flush(pgw_conn_t *c);
/* Send what the session has pending at once, once, without blocking, and
 * forget whatever the socket did not take: the socket is about to go. */
void pgw__conn_send_now(pgw_conn_t *c);
void pgw__conn_schedule_flush(pgw_conn_t *c);
void pgw__conn_handle_closed(pgw_conn_t *c);
/* Watch what the socket needs now: readable unless reading is paused,
 * writable while a write waits (or the connect). */
void pgw__conn_watch(pgw_conn_t *c);

/* readctl.c: process the input a pause left (from the prepare phase), then
 * read on. */
void pgw__conn_resume_input(pgw_conn_t *c);

/* copyconn.c */
/* Pull a running COPY FROM's source and flush, a few rounds while the
 * socket takes everything; then watch for writability if it wants more. */
void pgw__conn_copy_pump(pgw_conn_t *c);
/* The session's on_drain hook: the application's runs at the next prepare. */
void pgw__conn_on_session_drain(pgw_session_t *s, void *ud);
/* At prepare: the application's on_drain if owed. */
void pgw__conn_drain_notify(pgw_conn_t *c);

/* connect.c */
void pgw__connect_on_socket(pgw_conn_t *c, int status);
void pgw__connect_on_negotiation(pgw_conn_t *c);
void pgw__connect_on_gss_negotiation(pgw_conn_t *c);
/* The OAuth token the connect waited for arrived (or the flow failed):
 * connect again, or end the connect. */
void pgw__connect_on_oauth_token(pgw_conn_t *c);
/* A reason for the failure of the attempt in progress (its message gets
 * libpq's "connection to server ... failed: " prefix and the reasons,
 * joined with newlines); once connected, a line appended to
 * pgw_conn_error_message. */
void pgw__conn_errmsg_add(pgw_conn_t *c, const char *msg);
void pgw__connect_on_startup(pgw_conn_t *c, int status, const pgw_error_t *err);
void pgw__connect_on_broken(pgw_conn_t *c, int err);
void pgw__connect_finish(pgw_conn_t *c, int status, const pgw_error_t *err);
void pgw__connect_free(pgw_conn_t *c);

/* gssconn.c */
/* The conn's GSS policy for its current host. */
void pgw__conn_gss_policy(const pgw_conn_t *c, pgw__gss_policy_t *p);
/* The session hooks for GSSAPI authentication, GSS encryption and OAuth
 * (session.h), set on each session the connection creates. */
void pgw__conn_auth_hooks(pgw_conn_t *c, pgw_session_config_t *sc);
/* Free the GSSAPI state of the current socket (negotiation, transport,
 * authentication context). */
void pgw__conn_gss_drop(pgw_conn_t *c);
/* Forget the OAuth token and state (wiped). */
void pgw__conn_oauth_clear(pgw_conn_t *c);

/* tlsconn.c: a context for cfg (pgw__tls_ctx_new's codes and message).
 * With the default allocator, the process's last context is reused when
 * its settings match and its files are unchanged on disk
 * (pgw__tls_ctx_fresh), so that connections do not re-read and re-parse
 * the certificates each time; otherwise a new one is built (and, with the
 * default allocator, kept for the next connection). */
int pgw__tls_ctx_get(pgw__tls_ctx_t **out, const pgw__tls_config_t *cfg,
                     const pgw_allocator_t *alloc, char *err, size_t errlen);
/* tlsconn.c: sslcertmode=require at AuthenticationOk: 0, or PGW_ETLS with
 * libpq's message. */
int pgw__conn_check_client_cert(const pgw_conn_t *c, char *msg, size_t msglen);
/* tlsconn.c: the conn's TLS policy for its current host. */
void pgw__conn_tls_policy(const pgw_conn_t *c, pgw__tls_policy_t *p);
/* The policy a cancel for c uses: c's when c runs over TLS (with a new
 * reference to its context, which the caller drops), else all zero
 * (plaintext). */
void pgw__conn_cancel_tls(const pgw_conn_t *c, pgw__tls_policy_t *p);

/* conn.c: the connection failed (the session is broken with err and the
 * socket dropped), as a transport error does. */
void pgw__conn_fail(pgw_conn_t *c, int err);

/* deadline.c */
void pgw__dl_init(pgw_conn_t *c);
/* The session accepted a request with a deadline (its on_deadline hook). */
void pgw__dl_arm(pgw_conn_t *c, uint64_t ticket, uint32_t timeout_ms);
/* After input was processed: cancel a request that timed out while queued
 * and now runs. */
void pgw__dl_after_read(pgw_conn_t *c);
/* Forget every deadline (the session was dropped) and stop the timer. */
void pgw__dl_clear(pgw_conn_t *c);
/* Close the timer (pgw_conn_close) and free the heap (conn_free). */
void pgw__dl_close(pgw_conn_t *c, uv_close_cb cb);
void pgw__dl_free(pgw_conn_t *c);

/* cancel.c */
void pgw__cancel_abort_all(pgw_conn_t *c);

/* attempts.c: the record of the connect's attempts (c->cx). */
/* Start a record for an attempt on host h (address: numeric address or
 * socket path, NULL for none yet) with encryption method enc (enum
 * pgw__enc). Returns 0 or PGW_ENOMEM. */
int pgw__attempt_begin(pgw_conn_t *c, const pgw__host_t *h, const char *address, int enc);
/* Add a reason to the attempt in progress (see pgw__conn_errmsg_add). */
void pgw__attempt_reason(pgw_conn_t *c, const char *msg);
/* End the attempt in progress with status (0: connected). err (may be
 * NULL) is the server's error for PGW_ESERVER. A failure without a reason
 * gets libpq's words for status. No-op without an attempt in progress. */
void pgw__attempt_end(pgw_conn_t *c, int status, const pgw_error_t *err);
/* A host that was never connected to: one record, ended at once, whose
 * whole message is msg (no prefix), as libpq's DNS and option errors. */
void pgw__attempt_unreached(pgw_conn_t *c, const pgw__host_t *h, int status, int phase,
                            const char *msg);
/* The status the connect reports when every attempt moved on (see
 * pgw_connect_cb). */
int pgw__attempts_status(const pgw_conn_t *c);
/* Rebuild c->errmsg from the records (libpq's PQerrorMessage). */
void pgw__attempts_message(pgw_conn_t *c);
/* The phase the attempt in progress has reached. */
int pgw__connect_phase_now(const pgw_conn_t *c);
/* Free the records. */
void pgw__attempts_free(pgw_conn_t *c);

#endif
