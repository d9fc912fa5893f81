/*
 * CancelRequest over a second, non-blocking connection to the address the
 * live connection uses. The server reads the request, signals the backend
 * and closes the socket without answering: EOF is success.
 *
 * While a cancel is in flight the connection writes nothing new (conn.c
 * checks c->cancels): a request sent before the server has acted on the
 * cancel could be the one interrupted (node-postgres #3751). Each cancel is
 * bounded by a timer so a silent network cannot hold the writes forever.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <string.h>

#define PGW__CANCEL_TIMEOUT_MS 10000u

struct pgw__cancel {
    pgw__sock_handle_t h;
    uv_timer_t timer;
    uv_connect_t creq;
    uv_write_t wreq;
    int nopen; /* handles of this cancel not closed yet */
    pgw__cancel_t *next;
    pgw_conn_t *c;
    pgw_cancel_cb cb;
    void *ud;
    pgw_buf_t pkt;
    char rbuf[64];
};

static void on_cancel_closed(uv_handle_t *h)
{
    pgw__cancel_t *x = h->data;
    pgw_conn_t *c = x->c;
    if (--x->nopen == 0) {
        pgw_buf_free(&x->pkt);
        pgw__free(c->alloc, x);
    }
    pgw__conn_handle_closed(c); /* may free c: last use */
}

/* Report once, unlink, and close the socket (which frees x later). */
static void cancel_finish(pgw__cancel_t *x, int status)
{
    pgw_conn_t *c = x->c;
    pgw__cancel_t **pp = &c->cancels;
    while (*pp && *pp != x)
        pp = &(*pp)->next;
    if (!*pp) return; /* already finished */
    *pp = x->next;
    uv_close(&x->h.handle, on_cancel_closed);
    uv_close((uv_handle_t *)&x->timer, on_cancel_closed);
    if (x->cb) x->cb(c, status, x->ud);
    if (!c->cancels) pgw__conn_schedule_flush(c); /* writes were held */
}

static void on_cancel_timeout(uv_timer_t *t)
{
    cancel_finish(t->data, PGW_ETIMEDOUT);
}

void pgw__cancel_abort_all(pgw_conn_t *c)
{
    while (c->cancels)
        cancel_finish(c->cancels, PGW_ECANCELED);
}

static void on_cancel_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    pgw__cancel_t *x = h->data;
    PGW__UNUSED(hint);
    *buf = uv_buf_init(x->rbuf, sizeof(x->rbuf));
}

static void on_cancel_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    PGW__UNUSED(buf);
    /* The server sends nothing; any bytes are ignored until it closes. */
    if (n < 0) cancel_finish(st->data, n == UV_EOF || n == UV_ECONNRESET ? 0 : PGW_ECONNECT);
}

static void on_cancel_written(uv_write_t *req, int status)
{
    pgw__cancel_t *x = req->data;
    if (status < 0) cancel_finish(x, PGW_ECONNECT);
}

static void on_cancel_connected(uv_connect_t *req, int status)
{
    pgw__cancel_t *x = req->data;
    if (status < 0) {
        cancel_finish(x, PGW_ECONNECT);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)x->pkt.data, (unsigned)x->pkt.len);
    int rc = uv_write(&x->wreq, &x->h.stream, &b, 1, on_cancel_written);
    if (rc == 0) rc = uv_read_start(&x->h.stream, on_cancel_alloc, on_cancel_read);
    if (rc < 0) cancel_finish(x, PGW_ECONNECT);
}

static int cancel_open(pgw_conn_t *c, pgw__cancel_t *x)
{
    int rc =
        c->peer_is_pipe ? uv_pipe_init(c->loop, &x->h.pipe, 0) : uv_tcp_init(c->loop, &x->h.tcp);
    if (rc < 0) return rc;
    x->h.handle.data = x;
    uv_timer_init(c->loop, &x->timer);
    x->timer.data = x;
    x->nopen = 2;
    c->handles_open += 2;
    x->next = c->cancels;
    c->cancels = x;
    uv_timer_start(&x->timer, on_cancel_timeout,
                   c->connect_timeout_ms ? c->connect_timeout_ms : PGW__CANCEL_TIMEOUT_MS, 0);
    if (c->peer_is_pipe) {
        uv_pipe_connect(&x->creq, &x->h.pipe, c->peer_path, on_cancel_connected);
        return 0;
    }
    uv_tcp_nodelay(&x->h.tcp, 1);
    rc =
        uv_tcp_connect(&x->creq, &x->h.tcp, (const struct sockaddr *)&c->peer, on_cancel_connected);
    if (rc < 0) {
        x->cb = NULL; /* the caller reports the error instead */
        cancel_finish(x, rc);
    }
    return rc;
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
    x->creq.data = x;
    x->wreq.data = x;
    pgw_buf_init(&x->pkt, c->alloc);
    int rc = pgw_enc_cancel_request(&x->pkt, pid, key, key_len);
    if (rc < 0) {
        pgw_buf_free(&x->pkt);
        pgw__free(c->alloc, x);
        return rc;
    }
    rc = cancel_open(c, x);
    if (rc < 0 && !x->h.handle.data) {
        pgw_buf_free(&x->pkt);
        pgw__free(c->alloc, x);
    }
    return rc;
}
