/*
 * CancelRequest over a second, non-blocking connection to the address the
 * live connection uses. The server reads the request, signals the backend
 * and closes the socket without answering: EOF is success.
 *
 * The request itself (pgw__cancel_req_t: connect, send, wait for the
 * server's close, bounded by a timer) is shared with the blocking client's
 * pgw_client_cancel, which runs it on a private loop.
 *
 * TLS: a cancel for a connection that runs over TLS negotiates TLS too,
 * with the connection's context and host name (as libpq 17's
 * PQcancelCreate): SSLRequest (or direct TLS), the handshake with the same
 * verification, then the CancelRequest encrypted. The server's 'N' then
 * fails the cancel instead of sending the key in plaintext. A connection
 * that runs in plaintext (sslmode disable, or allow/prefer that ended
 * without TLS, or a unix-domain socket) cancels in plaintext.
 *
 * While a cancel is in flight the connection writes nothing new (conn.c
 * checks c->cancels): a request sent before the server has acted on the
 * cancel could be the one interrupted (node-postgres #3751). Each cancel is
 * bounded by a timer so a silent network cannot hold the writes forever.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#define PGW__CANCEL_TIMEOUT_MS 10000u

/* ------------------------------------------------------ the request itself */

static void on_req_closed(uv_handle_t *h)
{
    /* h is the first member of either the socket (its poll) or the timer */
    pgw__cancel_req_t *x = h->data;
    if (--x->nopen == 0 && x->closed) x->closed(x);
}

void pgw__cancel_req_finish(pgw__cancel_req_t *x, int status)
{
    if (x->finished) return;
    x->finished = 1;
    pgw__tlsneg_reset(&x->neg);
    pgw__tls_free(x->t);
    x->t = NULL;
    pgw__sock_close(&x->sock, on_req_closed);
    uv_close((uv_handle_t *)&x->timer, on_req_closed);
    x->done(x, status);
}

static void on_req_timeout(uv_timer_t *t)
{
    pgw__cancel_req_t *x = t->data;
    pgw__cancel_req_finish(x, x->sock.events ? PGW_ETIMEDOUT : PGW_ECONNECT);
}

/* Send what is left of the packet; then wait for the server's close. */
static void req_send(pgw__cancel_req_t *x)
{
    while (x->sent < x->pkt.len) {
        ssize_t n = pgw__sock_send(&x->sock, x->pkt.data + x->sent, x->pkt.len - x->sent);
        if (n == PGW_EAGAIN) return; /* still watching writable */
        if (n < 0) {
            pgw__cancel_req_finish(x, PGW_ECONNECT);
            return;
        }
        x->sent += (size_t)n;
    }
    if (pgw__sock_watch(&x->sock, UV_READABLE) < 0) pgw__cancel_req_finish(x, PGW_ECONNECT);
}

/* The server sends nothing; any bytes are ignored until it closes. */
static void req_read(pgw__cancel_req_t *x)
{
    uint8_t scratch[64];
    ssize_t n = pgw__sock_recv(&x->sock, scratch, sizeof(scratch));
    if (n == 0) pgw__cancel_req_finish(x, 0);
    if (n == PGW_ECONNLOST) pgw__cancel_req_finish(x, PGW_ECONNECT);
}

/* Over TLS: the encrypted packet is flushed, then whatever arrives is
 * decrypted and dropped until the server closes. */
static void req_tls_io(pgw__cancel_req_t *x, int events)
{
    int full = pgw__tls_sock_flush(x->t, &x->sock);
    if (full < 0) {
        pgw__cancel_req_finish(x, PGW_ECONNECT);
        return;
    }
    if (events & UV_READABLE) {
        ssize_t n = pgw__tls_sock_fill(x->t, &x->sock);
        if (n == 0 || (n < 0 && n != PGW_EAGAIN)) {
            pgw__cancel_req_finish(x, n == 0 || n == PGW_ECONNLOST ? 0 : PGW_ECONNECT);
            return;
        }
        uint8_t scratch[256];
        size_t got;
        int rc;
        while ((rc = pgw__tls_read(x->t, scratch, sizeof scratch, &got)) == 0) {
        }
        if (rc == PGW_ECONNLOST) { /* close_notify */
            pgw__cancel_req_finish(x, 0);
            return;
        }
    }
    if (pgw__sock_watch(&x->sock, UV_READABLE | (full ? UV_WRITABLE : 0)) < 0)
        pgw__cancel_req_finish(x, PGW_ECONNECT);
}

static void req_negotiate(pgw__cancel_req_t *x)
{
    int rc = pgw__tlsneg_step(&x->neg, &x->sock, &x->tls, x->alloc);
    if (rc == 0) return;
    if (rc < 0) {
        pgw__cancel_req_finish(x, rc == PGW_ECONNLOST ? PGW_ECONNECT : rc);
        return;
    }
    if (rc == PGW__NEG_PLAIN) { /* only when the policy allows it */
        req_send(x);
        return;
    }
    x->t = x->neg.t;
    x->neg.t = NULL;
    size_t w = 0;
    rc = pgw__tls_write(x->t, x->pkt.data, x->pkt.len, &w);
    if (rc < 0 || w != x->pkt.len) {
        pgw__cancel_req_finish(x, PGW_ETLS);
        return;
    }
    x->sent = x->pkt.len;
    req_tls_io(x, 0);
}

static void on_req_event(pgw__sock_t *k, int status, int events)
{
    pgw__cancel_req_t *x = k->owner;
    if (status < 0) {
        pgw__cancel_req_finish(x, PGW_ECONNECT);
        return;
    }
    if (k->connecting) {
        if (pgw__sock_connect_result(k) < 0) {
            pgw__cancel_req_finish(x, PGW_ECONNECT);
            return;
        }
        if (x->tls.ctx && pgw__tlsneg_begin(&x->neg, &x->tls, x->alloc) < 0) {
            pgw__cancel_req_finish(x, PGW_ETLS);
            return;
        }
    }
    if (x->neg.phase != PGW__NEG_IDLE) {
        req_negotiate(x);
        return;
    }
    if (x->t) {
        req_tls_io(x, events);
        return;
    }
    if (x->sent < x->pkt.len) {
        if (events & UV_WRITABLE) req_send(x);
        return;
    }
    if (events & UV_READABLE) req_read(x);
}

int pgw__cancel_req_start(pgw__cancel_req_t *x, uv_loop_t *loop, const pgw__peer_t *peer,
                          uint64_t timeout_ms)
{
    int rc = pgw__sock_connect(&x->sock, loop, peer, on_req_event, x);
    if (rc < 0) return rc;
    uv_timer_init(loop, &x->timer);
    x->timer.data = x;
    x->nopen = 2;
    x->finished = 0;
    x->sent = 0;
    x->t = NULL;
    memset(&x->neg, 0, sizeof x->neg);
    if (!x->alloc) x->alloc = pgw__alloc_or_default(NULL);
    if (pgw__peer_is_tcp(peer)) {
        int one = 1;
        (void)setsockopt(x->sock.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    /* Should the socket not be watched, the timer reports that at once
     * (from the loop, like every outcome). */
    int watching = pgw__sock_watch(&x->sock, UV_WRITABLE) == 0;
    uv_timer_start(&x->timer, on_req_timeout, watching ? timeout_ms : 0, 0);
    return 0;
}

/* ------------------------------------------------- cancels of a connection */

struct pgw__cancel {
    pgw__cancel_req_t req;
    pgw__cancel_t *next;
    pgw_conn_t *c;
    pgw_cancel_cb cb;
    void *ud;
};

static void on_cancel_closed(pgw__cancel_req_t *req)
{
    pgw__cancel_t *x = req->owner;
    pgw_conn_t *c = x->c;
    pgw__tls_ctx_unref(x->req.tls.ctx);
    pgw_buf_free(&x->req.pkt);
    pgw__free(c->alloc, x);
    c->handles_open--;          /* the cancel's two handles */
    pgw__conn_handle_closed(c); /* may free c: last use */
}

/* Report once and unlink (the request closes its handles, freeing x). */
static void on_cancel_done(pgw__cancel_req_t *req, int status)
{
    pgw__cancel_t *x = req->owner;
    pgw_conn_t *c = x->c;
    pgw__cancel_t **pp = &c->cancels;
    while (*pp && *pp != x)
        pp = &(*pp)->next;
    if (*pp) *pp = x->next;
    if (x->cb) x->cb(c, status, x->ud);
    if (!c->cancels) pgw__conn_schedule_flush(c); /* writes were held */
}

void pgw__cancel_abort_all(pgw_conn_t *c)
{
    while (c->cancels)
        pgw__cancel_req_finish(&c->cancels->req, PGW_ECANCELED);
}

int pgw_conn_cancel(pgw_conn_t *c, pgw_cancel_cb cb, void *ud)
{
    if (!c) return PGW_EINVAL;
    if (c->state == PGW__CONN_NEW || c->state == PGW__CONN_CONNECTING) return PGW_EBUSY;
    if (c->state != PGW__CONN_READY || !c->s) return PGW_ECLOSED;
    int32_t pid;
    const uint8_t *key;
    size_t key_len;
    if (pgw_session_backend_key(c->s, &pid, &key, &key_len) < 0) return PGW_ENOTSUP;
    pgw__cancel_t *x = pgw__calloc(c->alloc, 1, sizeof(*x));
    if (!x) return PGW_ENOMEM;
    x->c = c;
    x->cb = cb;
    x->ud = ud;
    x->req.done = on_cancel_done;
    x->req.closed = on_cancel_closed;
    x->req.owner = x;
    x->req.alloc = c->alloc;
    pgw__conn_cancel_tls(c, &x->req.tls);
    pgw_buf_init(&x->req.pkt, c->alloc);
    int rc = pgw_enc_cancel_request(&x->req.pkt, pid, key, key_len);
    if (rc == 0)
        rc = pgw__cancel_req_start(&x->req, c->loop, &c->peer,
                                   c->connect_timeout_ms ? c->connect_timeout_ms
                                                         : PGW__CANCEL_TIMEOUT_MS);
    if (rc < 0) {
        pgw__tls_ctx_unref(x->req.tls.ctx);
        pgw_buf_free(&x->req.pkt);
        pgw__free(c->alloc, x);
        return rc;
    }
    /* Linked before anything can finish it: its done callback unlinks. */
    c->handles_open += 2;
    x->next = c->cancels;
    c->cancels = x;
    return 0;
}
