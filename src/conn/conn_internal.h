/*
 * Internals of the libuv connection (src/conn). Not installed.
 *
 * Files: conn.c (object, session wiring, reads, writes, close, requests),
 * connect.c (host list, DNS, socket connect, target_session_attrs),
 * cancel.c (CancelRequest over a second socket), transport.c (the seam
 * between socket bytes and session bytes: plaintext today, TLS later).
 */
#ifndef PGW_CONN_INTERNAL_H
#define PGW_CONN_INTERNAL_H

#include "pgwire/conn.h"
#include "pgwire/conninfo.h"

#include <uv.h>
#include "util/internal.h"

/* A TCP or Unix-domain socket handle, seen as whichever libuv type a call
 * wants (connect attempts, cancels, the blocking client's cancel). */
typedef union pgw__sock_handle {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
} pgw__sock_handle_t;

/* A socket of one connect attempt. Heap-allocated so that an abandoned
 * attempt's handle can finish closing while the next attempt uses a fresh
 * one. */
typedef struct pgw__sock {
    pgw__sock_handle_t h;
    uv_connect_t creq;
    pgw_conn_t *c;
} pgw__sock_t;

/*
 * The transport seam. Socket bytes pass through these three functions on
 * their way to and from the session. The plaintext transport maps them
 * straight onto the session (zero copy); a TLS transport will decrypt in
 * read_commit and encrypt in take_output, keeping its own ciphertext
 * buffers in its state.
 */
typedef struct pgw__transport {
    const char *name;
    /* Where the socket should read into (libuv's alloc_cb). */
    int (*read_buffer)(pgw_conn_t *c, uint8_t **p, size_t *len);
    /* n bytes arrived in the region from read_buffer. Returns 0 or the fatal
     * error (the session is then broken). */
    int (*read_commit)(pgw_conn_t *c, size_t n);
    /* Move the bytes to write into *out (empty on entry). */
    void (*take_output)(pgw_conn_t *c, pgw_buf_t *out);
    /* Bytes waiting to be written. */
    size_t (*pending_output)(pgw_conn_t *c);
} pgw__transport_t;

extern const pgw__transport_t pgw__transport_plain;

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
    char port[8];         /* h.port as text, for getaddrinfo */
    const char *password; /* from the string or pgpass for this host, or NULL */
} pgw__host_t;

typedef struct pgw__cancel pgw__cancel_t;

struct pgw_conn {
    uv_loop_t *loop;
    pgw_conn_config_t cfg;
    const pgw_allocator_t *alloc;
    int state;
    pgw_session_t *s;
    const pgw__transport_t *tp;

    pgw__sock_t *sock;
    uv_prepare_t prepare;
    uv_timer_t timer;
    int prepare_active;
    int writing;
    pgw_buf_t wbuf; /* pinned while writing */
    uv_write_t wreq;
    unsigned handles_open; /* handles whose close_cb has not run yet */

    /* Connect state (connect.c). */
    pgw_connect_cb connect_cb;
    void *connect_ud;
    pgw_conninfo_t *ci;
    pgw__host_t *hosts;
    size_t nhosts;
    size_t host_idx;
    int pass;         /* prefer-standby: 0 first pass (standby only), 1 any */
    int target;       /* enum pgw__target */
    int probing;      /* a target_session_attrs check query is in flight */
    unsigned attempt; /* incremented per attempt: stale callbacks compare it */
    uv_getaddrinfo_t *gai;
    struct addrinfo *ai_list;
    struct addrinfo *ai_next;
    uint64_t connect_timeout_ms;
    int keepalive;
    unsigned keepalive_idle;      /* seconds (0: libuv's default of 60) */
    unsigned keepalive_interval;  /* seconds (0: the kernel's) */
    unsigned keepalive_count;     /* probes (0: the kernel's) */
    unsigned tcp_user_timeout_ms; /* 0: the kernel's */
    int last_err;
    const char *startup_params[64];
    size_t nstartup_params;
    const char *require_auth;
    const char *channel_binding;
    uint32_t min_protocol;
    uint32_t max_protocol;

    /* Where the live connection goes (for cancels). */
    struct sockaddr_storage peer;
    int peer_is_pipe;
    char peer_path[256];

    pgw__cancel_t *cancels;

    pgw_close_cb close_cb;
    void *close_ud;
    pgw_conn_stats_t stats;
};

/* conn.c */
int pgw__conn_sock_new(pgw_conn_t *c, int is_pipe, pgw__sock_t **out);
void pgw__conn_sock_close(pgw__sock_t *k);
int pgw__conn_session_create(pgw_conn_t *c, const char *password);
void pgw__conn_session_drop(pgw_conn_t *c, int err);
int pgw__conn_start_io(pgw_conn_t *c);
void pgw__conn_flush(pgw_conn_t *c);
void pgw__conn_schedule_flush(pgw_conn_t *c);
void pgw__conn_handle_closed(pgw_conn_t *c);

/* connect.c */
void pgw__connect_on_startup(pgw_conn_t *c, int status, const pgw_error_t *err);
void pgw__connect_on_broken(pgw_conn_t *c, int err);
void pgw__connect_finish(pgw_conn_t *c, int status, const pgw_error_t *err);
void pgw__connect_free(pgw_conn_t *c);

/* cancel.c */
void pgw__cancel_abort_all(pgw_conn_t *c);

#endif
