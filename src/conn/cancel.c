/*
 * Cancelling: cancel tokens and the one CancelRequest sender.
 *
 * A cancel token (pgw_cancel_token_t) is what a cancel needs, copied out
 * of a connected conn: the address it connected to, the backend's pid and
 * key, the TLS policy, connect_timeout. The sender (pgw__cancel_req_t)
 * runs a token on a loop: a second, non-blocking connection to that
 * address, the CancelRequest, then the wait for the server, which reads
 * the request, signals the backend and closes the socket without
 * answering: EOF is success. pgw_conn_cancel runs it on the connection's
 * loop, pgw_cancel_token_send on a private loop of its own (any thread).
 * Both are bounded by the same timeout: connect_timeout, else 10 s.
 *
 * TLS: a cancel for a connection that runs over TLS negotiates TLS too,
 * with the connection's context and host name (as libpq 17's
 * PQcancelCreate): SSLRequest (or direct TLS), the handshake with the same
 * verification, then the CancelRequest encrypted. The server's 'N' then
 * fails the cancel instead of sending the key in plaintext. A connection
 * that runs in plaintext (sslmode disable, or allow/prefer that ended
 * without TLS, or a unix-domain socket) cancels in plaintext. A connection
 * that runs over GSS encryption cancels over GSS encryption (its
 * krbsrvname, host and delegation; the server's 'N' fails the cancel).
 *
 * While a cancel of a conn is in flight the connection writes nothing new
 * (conn.c checks c->cancels): a request sent before the server has acted
 * on the cancel could be the one interrupted (node-postgres #3751). Each
 * cancel is bounded by a timer so a silent network cannot hold the writes
 * forever. A cancel that ends unconfirmed after its packet went out (the
 * timer, a reset) may still signal the backend later, whatever it runs
 * then: the connection is closed instead of writing again (conn.h,
 * DEADLINES).
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"
#include "conn/loop.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

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
    pgw__gssneg_reset(&x->gneg, x->tok->alloc);
    pgw__gss_free(x->g);
    x->g = NULL;
    pgw_buf_free(&x->pkt);
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
    int rc = pgw__tlsneg_step(&x->neg, &x->sock, &x->tok->tls, x->tok->alloc);
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

/* Over GSS encryption: the packet is wrapped (one GSS packet) and sent
 * as is; whatever arrives is dropped until the server closes. */
static void req_gss_negotiate(pgw__cancel_req_t *x)
{
    const pgw_allocator_t *a = x->tok->alloc;
    int rc = pgw__gssneg_step(&x->gneg, &x->sock, &x->tok->gss, a);
    if (rc == 0) return;
    if (rc != PGW__NEG_GSS) { /* 'N' too: the key never goes out in plaintext */
        pgw__cancel_req_finish(x, rc == PGW__NEG_PLAIN  ? PGW_EAUTH
                                  : rc == PGW_ECONNLOST ? PGW_ECONNECT
                                                        : rc);
        return;
    }
    x->g = x->gneg.g;
    x->gneg.g = NULL;
    pgw__gssneg_reset(&x->gneg, a);
    pgw_buf_t wrapped;
    pgw_buf_init(&wrapped, a);
    char err[PGW__TLS_ERRLEN];
    rc = pgw__gss_wrap(x->g, x->pkt.data, x->pkt.len, &wrapped, err, sizeof err);
    pgw_buf_free(&x->pkt);
    x->pkt = wrapped;
    if (rc < 0) {
        pgw__cancel_req_finish(x, rc);
        return;
    }
    req_send(x);
}

static void on_req_event(pgw__sock_t *k, int status, int events)
{
    pgw__cancel_req_t *x = k->owner;
    if (k->connecting) {
        if (pgw__sock_connect_result(k) < 0 || status < 0) {
            pgw__cancel_req_finish(x, PGW_ECONNECT);
            return;
        }
        if (x->tok->gss_enc && pgw__gssneg_begin(&x->gneg, NULL, x->tok->alloc) < 0) {
            pgw__cancel_req_finish(x, PGW_ENOMEM);
            return;
        }
        if (!x->tok->gss_enc && x->tok->tls.ctx &&
            pgw__tlsneg_begin(&x->neg, &x->tok->tls, x->tok->alloc) < 0) {
            pgw__cancel_req_finish(x, PGW_ETLS);
            return;
        }
    }
    if (status < 0) {
        pgw__cancel_req_finish(x, PGW_ECONNECT);
        return;
    }
    if (x->gneg.phase != PGW__GNEG_IDLE) {
        req_gss_negotiate(x);
        return;
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

int pgw__cancel_req_start(pgw__cancel_req_t *x, uv_loop_t *loop, const pgw_cancel_token_t *tok,
                          uint64_t timeout_ms)
{
    if (!timeout_ms) timeout_ms = tok->timeout_ms ? tok->timeout_ms : PGW__CANCEL_TIMEOUT_MS;
    x->tok = tok;
    pgw_buf_init(&x->pkt, tok->alloc);
    int rc = pgw_enc_cancel_request(&x->pkt, tok->pid, tok->key, tok->key_len);
    if (rc == 0) {
        rc = pgw__sock_connect(&x->sock, loop, &tok->peer, NULL, on_req_event, x);
        if (rc < 0 && rc != PGW_EINVAL) rc = PGW_ECONNECT;
    }
    if (rc < 0) {
        pgw_buf_free(&x->pkt);
        return rc;
    }
    uv_timer_init(loop, &x->timer);
    x->timer.data = x;
    x->nopen = 2;
    x->finished = 0;
    x->sent = 0;
    x->t = NULL;
    x->g = NULL;
    memset(&x->neg, 0, sizeof x->neg);
    memset(&x->gneg, 0, sizeof x->gneg);
    if (pgw__peer_is_tcp(&tok->peer)) {
        int one = 1;
        (void)setsockopt(x->sock.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    /* Should the socket not be watched, the timer reports that at once
     * (from the loop, like every outcome). */
    int watching = pgw__sock_watch(&x->sock, UV_WRITABLE) == 0;
    uv_timer_start(&x->timer, on_req_timeout, watching ? timeout_ms : 0, 0);
    return 0;
}

/* ----------------------------------------------------------------- tokens */

int pgw__cancel_token_init(pgw_cancel_token_t *tok, const pgw_conn_t *c)
{
    memset(tok, 0, sizeof *tok);
    if (c->state == PGW__CONN_NEW || c->state == PGW__CONN_CONNECTING) return PGW_EBUSY;
    if (c->state != PGW__CONN_READY || !c->s) return PGW_ECLOSED;
    const uint8_t *key;
    if (pgw_session_backend_key(c->s, &tok->pid, &key, &tok->key_len) < 0 ||
        tok->key_len > sizeof tok->key)
        return PGW_ENOTSUP;
    memcpy(tok->key, key, tok->key_len);
    tok->alloc = c->alloc;
    tok->peer = c->peer;
    tok->timeout_ms = c->connect_timeout_ms;
    if (tok->peer.addr.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&tok->peer.addr;
        uv_ip4_name(in, tok->address, sizeof tok->address);
        tok->port = ntohs(in->sin_port);
    } else if (tok->peer.addr.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&tok->peer.addr;
        uv_ip6_name(in6, tok->address, sizeof tok->address);
        tok->port = ntohs(in6->sin6_port);
    } else {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&tok->peer.addr;
        snprintf(tok->address, sizeof tok->address, "%s", un->sun_path);
    }
    pgw__conn_cancel_tls(c, &tok->tls); /* a reference to the context, if TLS */
    tok->gss_enc = c->gss != NULL;
    if (tok->gss_enc) pgw__conn_gss_policy(c, &tok->gss);
    return 0;
}

void pgw__cancel_token_clear(pgw_cancel_token_t *tok)
{
    pgw__tls_ctx_unref(tok->tls.ctx);
    tok->tls.ctx = NULL;
}

int pgw_conn_cancel_token(const pgw_conn_t *c, pgw_cancel_token_t **out)
{
    if (out) *out = NULL;
    if (!c || !out) return PGW_EINVAL;
    pgw_cancel_token_t tmp;
    int rc = pgw__cancel_token_init(&tmp, c);
    if (rc < 0) return rc;
    pgw_cancel_token_t *tok = pgw__malloc(c->alloc, sizeof *tok);
    if (!tok) {
        pgw__cancel_token_clear(&tmp);
        return PGW_ENOMEM;
    }
    *tok = tmp; /* the context reference moves with it */
    *out = tok;
    return 0;
}

int pgw_cancel_token_copy(const pgw_cancel_token_t *tok, pgw_cancel_token_t **out)
{
    if (out) *out = NULL;
    if (!tok || !out) return PGW_EINVAL;
    pgw_cancel_token_t *dup = pgw__malloc(tok->alloc, sizeof *dup);
    if (!dup) return PGW_ENOMEM;
    *dup = *tok;
    if (dup->tls.ctx) pgw__tls_ctx_ref(dup->tls.ctx);
    *out = dup;
    return 0;
}

void pgw_cancel_token_free(pgw_cancel_token_t *tok)
{
    if (!tok) return;
    pgw__cancel_token_clear(tok);
    pgw__free(tok->alloc, tok);
}

int pgw_cancel_token_info(const pgw_cancel_token_t *tok, pgw_cancel_token_info_t *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!tok || !out) return PGW_EINVAL;
    out->address = tok->address;
    out->port = tok->port;
    out->pid = tok->pid;
    out->key_len = tok->key_len;
    out->tls = tok->tls.ctx != NULL;
    out->gss = tok->gss_enc;
    out->timeout_ms = (unsigned)tok->timeout_ms;
    return 0;
}

int pgw_cancel_token_request(const pgw_cancel_token_t *tok, uint8_t *buf, size_t cap, size_t *len)
{
    if (len) *len = 0;
    if (!tok || !buf || !len) return PGW_EINVAL;
    *len = 12 + tok->key_len;
    if (cap < *len) return PGW_ETOOBIG;
    /* the caller's buffer, never grown: the encoder allocates nothing */
    pgw_buf_t b = {buf, 0, cap, cap, NULL};
    return pgw_enc_cancel_request(&b, tok->pid, tok->key, tok->key_len);
}

int pgw_cancel_token_address(const pgw_cancel_token_t *tok, void *addr, size_t *addr_len)
{
    if (!tok || !addr || !addr_len) return PGW_EINVAL;
    size_t need = tok->peer.len;
    size_t room = *addr_len;
    *addr_len = need;
    if (room < need) return PGW_ETOOBIG;
    memcpy(addr, &tok->peer.addr, need);
    return 0;
}

/* The blocking send: the sender on a private loop. */
static void on_blocking_done(pgw__cancel_req_t *x, int status)
{
    *(int *)x->owner = status;
}

int pgw_cancel_token_send(const pgw_cancel_token_t *tok, unsigned timeout_ms)
{
    if (!tok) return PGW_EINVAL;
    uv_loop_t loop;
    int rc = pgw__loop_init(&loop);
    if (rc < 0) return rc;
    int status = 0;
    pgw__cancel_req_t x;
    memset(&x, 0, sizeof x);
    x.done = on_blocking_done;
    x.owner = &status;
    rc = pgw__cancel_req_start(&x, &loop, tok, timeout_ms);
    if (rc == 0) {
        uv_run(&loop, UV_RUN_DEFAULT); /* until it finished and its handles closed */
        rc = status;
    }
    uv_loop_close(&loop);
    return rc;
}

/* ------------------------------------------------- cancels of a connection */

struct pgw__cancel {
    pgw__cancel_req_t req;
    pgw_cancel_token_t tok;
    pgw__cancel_t *next;
    pgw_conn_t *c;
    pgw_cancel_cb cb;
    void *ud;
};

static void on_cancel_closed(pgw__cancel_req_t *req)
{
    pgw__cancel_t *x = req->owner;
    pgw_conn_t *c = x->c;
    pgw__cancel_token_clear(&x->tok);
    pgw__free(c->alloc, x);
    c->handles_open--;          /* the cancel's two handles */
    pgw__conn_handle_closed(c); /* may free c: last use */
}

/* The packet (or part of it) went out but the server never confirmed it by
 * closing: its signal may land any time later. PGW_ECANCELED: the
 * connection itself is closing (pgw__cancel_abort_all). */
static int cancel_unconfirmed(const pgw__cancel_req_t *req, int status)
{
    return status != 0 && status != PGW_ECANCELED && req->sent > 0;
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
    if (cancel_unconfirmed(req, status) && c->s) {
        pgw__conn_errmsg_add(c, "a cancel request was sent and the server never confirmed it: "
                                "connection closed, as its signal could still interrupt a "
                                "later request");
        pgw__conn_fail(c, PGW_ECONNLOST);
    }
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
    pgw__cancel_t *x = pgw__calloc(c->alloc, 1, sizeof(*x));
    if (!x) return PGW_ENOMEM;
    int rc = pgw__cancel_token_init(&x->tok, c);
    if (rc < 0) {
        pgw__free(c->alloc, x);
        return rc;
    }
    x->c = c;
    x->cb = cb;
    x->ud = ud;
    x->req.done = on_cancel_done;
    x->req.closed = on_cancel_closed;
    x->req.owner = x;
    rc = pgw__cancel_req_start(&x->req, c->loop, &x->tok, 0);
    if (rc < 0) {
        pgw__cancel_token_clear(&x->tok);
        pgw__free(c->alloc, x);
        return rc;
    }
    /* Linked before anything can finish it: its done callback unlinks. */
    c->handles_open += 2;
    x->next = c->cancels;
    c->cancels = x;
    return 0;
}
