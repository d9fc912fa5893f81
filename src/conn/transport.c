/*
 * Sockets and the plaintext transport.
 *
 * The connection owns its sockets instead of handing them to libuv streams:
 * libuv's streams write with write()/writev(), which raise SIGPIPE in the
 * calling process when the server has closed the connection, and a library
 * must neither kill its host nor ask it to ignore the signal. Here every
 * socket is created non-blocking and close-on-exec, connected without
 * blocking, watched by one uv_poll_t, read with recv() and written with
 * send(..., MSG_NOSIGNAL) (which Linux honours for TCP and unix-domain
 * stream sockets alike), so no system call of ours can raise SIGPIPE.
 *
 * The plaintext transport: socket bytes are session bytes. Reads land
 * directly in the session's input buffer and the session's output buffer is
 * written as is. tlsconn.c provides the second pgw__transport_t, which
 * runs the TLS engine (src/tls) between the socket and the session.
 */
#define _DEFAULT_SOURCE /* SOCK_NONBLOCK, SOCK_CLOEXEC, MSG_NOSIGNAL, TCP_KEEPIDLE, ... */
#include "conn/conn_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

/* ---------------------------------------------------------------- sockets */

int pgw__peer_unix(pgw__peer_t *peer, const char *path)
{
    struct sockaddr_un *un = (struct sockaddr_un *)&peer->addr;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(un->sun_path)) return PGW_ECONNINFO;
    memset(peer, 0, sizeof(*peer));
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, path, n + 1);
    if (path[0] == '@') {
        /* Linux's abstract namespace, as libpq writes it: a leading NUL
         * for the '@', and the name's length without a terminating NUL */
        un->sun_path[0] = '\0';
        peer->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
        return 0;
    }
    peer->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    return 0;
}

void pgw__peer_ip(pgw__peer_t *peer, const struct sockaddr *sa)
{
    memset(peer, 0, sizeof(*peer));
    peer->len =
        sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    memcpy(&peer->addr, sa, peer->len);
}

int pgw__peer_is_tcp(const pgw__peer_t *peer)
{
    return peer->addr.ss_family == AF_INET || peer->addr.ss_family == AF_INET6;
}

/* ------------------------------------------------------------ TCP options */

/* Dead-peer detection when the connection string leaves these unset (conn.h,
 * DEAD PEERS; libpq leaves them to the kernel): a dead peer is noticed
 * within about 30 s of the last byte heard from it. */
#define PGW__KEEPIDLE_S      15
#define PGW__KEEPINTVL_S     5
#define PGW__KEEPCNT         3
#define PGW__USER_TIMEOUT_MS 30000

/* v, or for an option left unset (-1) the DEAD PEERS default, or -1 (not
 * set: the kernel's value) when the connection keeps the kernel's. */
static int or_default(const pgw__sock_opts_t *o, int v, int def)
{
    return v >= 0 || o->kernel_defaults ? v : def;
}

/* Set one option (value -1: leave the kernel's). On failure, libpq's
 * message in o->why and the negated errno. */
static int set_tcp_int(int fd, int level, int opt, const char *name, int value, pgw__sock_opts_t *o)
{
    if (value < 0) return 0;
    if (setsockopt(fd, level, opt, &value, sizeof value) == 0) return 0;
    int err = errno;
    if (opt == TCP_NODELAY)
        snprintf(o->why, sizeof o->why, "could not set socket to TCP no delay mode: %s",
                 strerror(err));
    else
        snprintf(o->why, sizeof o->why, "setsockopt(%s) failed: %s", name, strerror(err));
    return err ? -err : PGW_ECONNECT;
}

/* libpq's TCP options, in libpq's order and, as there, before connect():
 * a value the kernel refuses fails the attempt without a connection. */
static int set_tcp_options(int fd, pgw__sock_opts_t *o)
{
    const pgw_tcp_options_t *t = o->tcp;
    int rc = set_tcp_int(fd, IPPROTO_TCP, TCP_NODELAY, "TCP_NODELAY", 1, o);
    if (rc == 0 && t->keepalives) {
        rc = set_tcp_int(fd, SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE", 1, o);
        int idle = or_default(o, t->keepalives_idle, PGW__KEEPIDLE_S);
        int intvl = or_default(o, t->keepalives_interval, PGW__KEEPINTVL_S);
        int cnt = or_default(o, t->keepalives_count, PGW__KEEPCNT);
        if (rc == 0) rc = set_tcp_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE", idle, o);
        if (rc == 0) rc = set_tcp_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, "TCP_KEEPINTVL", intvl, o);
        if (rc == 0) rc = set_tcp_int(fd, IPPROTO_TCP, TCP_KEEPCNT, "TCP_KEEPCNT", cnt, o);
    }
    int user = or_default(o, t->tcp_user_timeout, PGW__USER_TIMEOUT_MS);
    if (rc == 0) rc = set_tcp_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, "TCP_USER_TIMEOUT", user, o);
    return rc;
}

/* ---------------------------------------------------------------- sockets */

static void on_poll(uv_poll_t *h, int status, int events)
{
    pgw__sock_t *k = h->data;
    k->cb(k, status, events);
}

int pgw__sock_connect(pgw__sock_t *k, uv_loop_t *loop, const pgw__peer_t *peer,
                      pgw__sock_opts_t *opts, pgw__sock_cb cb, void *owner)
{
    memset(k, 0, sizeof(*k));
    k->fd = -1;
    if (opts) opts->why[0] = '\0';
    if (peer->len == 0) return PGW_EINVAL;
    int fd = socket(peer->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int err = errno;
        if (opts)
            snprintf(opts->why, sizeof opts->why, "could not create socket: %s", strerror(err));
        return err ? -err : PGW_ECONNECT;
    }
    int rc = opts && opts->tcp ? set_tcp_options(fd, opts) : 0;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    do
        rc = connect(fd, (const struct sockaddr *)&peer->addr, peer->len);
    while (rc < 0 && errno == EINTR);
    /* EINPROGRESS: TCP finishes later, reported as writable. A unix-domain
     * socket connects at once or fails (EAGAIN: the server's backlog is
     * full; nothing was started, as for ECONNREFUSED). */
    int connected = rc == 0;
    if (rc < 0 && errno != EINPROGRESS)
        rc = errno ? -errno : PGW_ECONNECT;
    else
        rc = uv_poll_init_socket(loop, &k->poll, fd);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    k->fd = fd;
    k->cb = cb;
    k->owner = owner;
    k->connecting = 1;
    k->connected = connected;
    k->poll.data = k;
    return 0;
}

int pgw__sock_connect_result(pgw__sock_t *k)
{
    int err = 0;
    socklen_t len = sizeof(err);
    k->connecting = 0;
    if (getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
    return err ? -err : 0;
}

int pgw__sock_connect_now(pgw__sock_t *k, const pgw__peer_t *peer)
{
    if (k->connected) return 0;
    int rc;
    do
        rc = connect(k->fd, (const struct sockaddr *)&peer->addr, peer->len);
    while (rc < 0 && errno == EINTR);
    if (rc == 0 || errno == EISCONN) return 0;
    if (errno == EALREADY || errno == EINPROGRESS) return 1;
    return errno ? -errno : PGW_ECONNECT;
}

int pgw__sock_watch(pgw__sock_t *k, int events)
{
    if (k->fd < 0 || events == k->events) return 0;
    int rc = events ? uv_poll_start(&k->poll, events, on_poll) : uv_poll_stop(&k->poll);
    if (rc < 0) return rc;
    k->events = events;
    return 0;
}

ssize_t pgw__sock_send(pgw__sock_t *k, const uint8_t *p, size_t n)
{
    for (;;) {
        ssize_t rc = send(k->fd, p, n, MSG_NOSIGNAL);
        if (rc >= 0) return rc;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? PGW_EAGAIN : PGW_ECONNLOST;
    }
}

ssize_t pgw__sock_recv(pgw__sock_t *k, uint8_t *p, size_t n)
{
    for (;;) {
        ssize_t rc = recv(k->fd, p, n, 0);
        if (rc >= 0) return rc;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return PGW_EAGAIN;
        if (errno == ECONNRESET) return 0;
        k->err = errno;
        return PGW_ECONNLOST;
    }
}

void pgw__sock_close(pgw__sock_t *k, uv_close_cb cb)
{
    if (k->fd < 0) return;
    /* uv_close stops the poll handle (the fd leaves epoll) before it
     * returns, so the descriptor can be closed at once: the server sees
     * the close now, not a loop turn later. */
    uv_close((uv_handle_t *)&k->poll, cb);
    close(k->fd);
    k->fd = -1;
    k->events = 0;
}

/* ------------------------------------------------------ plaintext transport */

static int plain_read_buffer(pgw_conn_t *c, uint8_t **p, size_t *len)
{
    return pgw_session_input_buffer(c->s, p, len);
}

static int plain_read_commit(pgw_conn_t *c, size_t n)
{
    return n ? pgw_session_input_commit(c->s, n) : 0;
}

/* The session's buffer is swapped into wbuf (empty: no write is in
 * progress), which stays pinned until written. */
static int plain_take_output(pgw_conn_t *c)
{
    pgw_session_take_output(c->s, &c->wbuf);
    c->woff = 0;
    return 0;
}

static const uint8_t *plain_out_view(pgw_conn_t *c, size_t *len)
{
    *len = c->wbuf.len - c->woff;
    return c->wbuf.data + c->woff;
}

static void plain_out_consumed(pgw_conn_t *c, size_t n)
{
    c->woff += n;
}

static size_t plain_pending_output(pgw_conn_t *c)
{
    size_t len = 0;
    pgw_session_pending_output(c->s, &len);
    return len;
}

const pgw__transport_t pgw__transport_plain = {
    "plain",        plain_read_buffer,  plain_read_commit,    plain_take_output,
    plain_out_view, plain_out_consumed, plain_pending_output,
};
