/*
 * TLS on the connection's sockets: the negotiation (SSLRequest, the
 * server's one-byte answer, the handshake) shared by connections and cancel
 * requests, and the TLS transport seam the connection switches to once the
 * handshake is done.
 *
 * Byte flow once established (no copy beyond OpenSSL's own):
 *   recv() -> the engine's ciphertext ring (pgw__tls_input_space/commit)
 *          -> pgw__tls_read straight into the session's read chunk
 *   session output -> pgw__tls_write into the engine's output ring
 *          -> send() of the ring's view, once per loop turn
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- sockets */

int pgw__tls_sock_flush(pgw__tls_t *t, pgw__sock_t *k)
{
    for (;;) {
        size_t len = 0;
        const uint8_t *p = pgw__tls_output(t, &len);
        if (!p || len == 0) return 0;
        ssize_t n = pgw__sock_send(k, p, len);
        if (n == PGW_EAGAIN) return 1;
        if (n < 0) return PGW_ECONNLOST;
        pgw__tls_output_consumed(t, (size_t)n);
    }
}

ssize_t pgw__tls_sock_fill(pgw__tls_t *t, pgw__sock_t *k)
{
    size_t room = 0;
    uint8_t *p = pgw__tls_input_space(t, &room);
    if (!p) return PGW_EAGAIN; /* full: the engine must consume first */
    ssize_t n = pgw__sock_recv(k, p, room);
    if (n == 0) {
        pgw__tls_input_eof(t);
        return 0;
    }
    if (n < 0) return n;
    int rc = pgw__tls_input_commit(t, (size_t)n);
    return rc < 0 ? rc : n;
}

/* ------------------------------------------------------------ negotiation */

static int neg_fail(pgw__tlsneg_t *n, int rc, const char *msg)
{
    if (msg && msg != n->err) snprintf(n->err, sizeof n->err, "%s", msg);
    pgw__tls_free(n->t);
    n->t = NULL;
    n->phase = PGW__NEG_IDLE;
    return rc;
}

static int neg_new_engine(pgw__tlsneg_t *n, const pgw__tls_policy_t *p,
                          const pgw_allocator_t *alloc)
{
    pgw__tls_conn_config_t cc = {p->host, p->sni, p->direct, p->ring_size};
    int rc = pgw__tls_new(&n->t, p->ctx, &cc, alloc, n->err, sizeof n->err);
    if (rc < 0) return neg_fail(n, rc == PGW_ENOMEM ? rc : PGW_ETLS, NULL);
    n->phase = PGW__NEG_HANDSHAKE;
    return 0;
}

int pgw__tlsneg_begin(pgw__tlsneg_t *n, const pgw__tls_policy_t *p, const pgw_allocator_t *alloc)
{
    memset(n, 0, sizeof *n);
    n->mode = p->mode;
    if (p->direct) return neg_new_engine(n, p, alloc);
    pgw_buf_t b;
    pgw_buf_init(&b, alloc);
    int rc = pgw_enc_ssl_request(&b);
    if (rc == 0 && b.len == sizeof n->req) memcpy(n->req, b.data, sizeof n->req);
    pgw_buf_free(&b);
    if (rc < 0) return neg_fail(n, rc, "out of memory");
    n->phase = PGW__NEG_REQUEST;
    return 0;
}

void pgw__tlsneg_reset(pgw__tlsneg_t *n)
{
    pgw__tls_free(n->t);
    n->t = NULL;
    n->phase = PGW__NEG_IDLE;
}

static int neg_watch(pgw__sock_t *k, int events)
{
    return pgw__sock_watch(k, events) < 0 ? PGW_ECONNLOST : 0;
}

/* The answer to SSLRequest. It is read with a buffer larger than one byte,
 * so that bytes the server (or a man in the middle) sent behind the 'S' or
 * 'N' are seen with it and refused (CVE-2021-23222). */
static int neg_answer(pgw__tlsneg_t *n, pgw__sock_t *k, const pgw__tls_policy_t *p,
                      const pgw_allocator_t *alloc)
{
    uint8_t buf[64];
    ssize_t got = pgw__sock_recv(k, buf, sizeof buf);
    if (got == PGW_EAGAIN) return neg_watch(k, UV_READABLE);
    if (got == 0) return neg_fail(n, PGW_ECONNLOST, PGW__MSG_SERVER_CLOSED);
    if (got < 0) return neg_fail(n, PGW_ECONNLOST, "could not receive data from server");
    int rc = pgw__tls_ssl_response(n->mode, buf, (size_t)got, n->err, sizeof n->err);
    if (rc == PGW__TLS_PLAINTEXT) {
        n->phase = PGW__NEG_IDLE;
        return PGW__NEG_PLAIN;
    }
    if (rc != PGW__TLS_START) return neg_fail(n, rc, NULL);
    /* As libpq, the TLS files are read only once the server said 'S'. */
    if (!p->ctx) {
        n->phase = PGW__NEG_CONTEXT;
        return PGW__NEG_NEED_CONTEXT;
    }
    return neg_new_engine(n, p, alloc);
}

static int neg_handshake(pgw__tlsneg_t *n, pgw__sock_t *k)
{
    for (;;) {
        int rc = pgw__tls_handshake(n->t);
        int full = pgw__tls_sock_flush(n->t, k);
        if (full < 0 && rc != 0) full = 0; /* the engine's answer says more */
        if (rc == 0) {
            n->phase = PGW__NEG_IDLE;
            return PGW__NEG_TLS;
        }
        if (rc != PGW_EAGAIN) {
            n->handshake_fail = 1;
            /* EOF mid-handshake is a failed handshake too (libpq: "SSL
             * SYSCALL error: EOF detected"), e.g. a server that does not
             * speak direct TLS closing on the ClientHello. */
            return neg_fail(n, rc == PGW_ENOMEM ? rc : PGW_ETLS, pgw__tls_errmsg(n->t));
        }
        ssize_t got = pgw__tls_sock_fill(n->t, k);
        if (got == PGW_EAGAIN) return neg_watch(k, UV_READABLE | (full > 0 ? UV_WRITABLE : 0));
        if (got < 0) {
            n->handshake_fail = 1;
            const char *m = pgw__tls_errmsg(n->t);
            return neg_fail(n, got == PGW_EPROTO ? PGW_EPROTO : PGW_ETLS,
                            *m ? m : "SSL SYSCALL error: EOF detected");
        }
        /* bytes or EOF: the next handshake step consumes or reports them */
    }
}

int pgw__tlsneg_step(pgw__tlsneg_t *n, pgw__sock_t *k, const pgw__tls_policy_t *p,
                     const pgw_allocator_t *alloc)
{
    for (;;) {
        int rc;
        switch (n->phase) {
        case PGW__NEG_REQUEST:
            while (n->sent < sizeof n->req) {
                ssize_t w = pgw__sock_send(k, n->req + n->sent, sizeof n->req - n->sent);
                if (w == PGW_EAGAIN) return neg_watch(k, UV_WRITABLE);
                if (w < 0)
                    return neg_fail(n, PGW_ECONNLOST, "could not send SSL negotiation packet");
                n->sent += (size_t)w;
            }
            n->phase = PGW__NEG_ANSWER;
            break;
        case PGW__NEG_ANSWER:
            rc = neg_answer(n, k, p, alloc);
            if (rc != 0 || n->phase == PGW__NEG_ANSWER) return rc;
            if (n->phase == PGW__NEG_IDLE) return PGW_EINVAL;
            break;
        case PGW__NEG_CONTEXT:
            if (!p->ctx) return PGW__NEG_NEED_CONTEXT;
            rc = neg_new_engine(n, p, alloc);
            if (rc < 0) return rc;
            break;
        case PGW__NEG_HANDSHAKE:
            return neg_handshake(n, k);
        default:
            return PGW_EINVAL;
        }
    }
}

/* ---------------------------------------------------------- TLS transport */

/* A fatal TLS error on an established connection: the session breaks with
 * it (PGW_ECONNLOST when the server closed the TLS stream). */
static int tls_broken(pgw_conn_t *c, pgw_session_t *s, int rc)
{
    pgw__conn_errmsg_add(c, pgw__tls_errmsg(c->tls));
    pgw_session_fail(s, rc);
    return rc;
}

static int tls_read_commit(pgw_conn_t *c, size_t n)
{
    pgw__tls_t *t = c->tls;
    pgw_session_t *s = c->s;
    int rc = n ? pgw__tls_input_commit(t, n) : 0;
    if (rc < 0) return tls_broken(c, s, rc);
    /* A paused session leaves the records in the ring (readctl.c). */
    while (!pgw_session_input_paused(s)) {
        uint8_t *q;
        size_t room, got;
        rc = pgw_session_input_buffer(s, &q, &room);
        if (rc < 0) {
            pgw_session_fail(s, rc);
            return rc;
        }
        rc = pgw__tls_read(t, q, room, &got);
        if (rc == PGW_EAGAIN) break;
        if (rc < 0) return tls_broken(c, s, rc);
        rc = pgw_session_input_commit(s, got);
        if (rc < 0) return rc;                  /* broken, or freed by a callback */
        if (c->s != s || c->tls != t) return 0; /* closed or replaced by a callback */
    }
    /* Reading may have produced output (a TLS 1.3 key update's answer). */
    size_t out = 0;
    if (pgw__tls_output(t, &out) && out) pgw__conn_schedule_flush(c);
    return 0;
}

static int tls_read_buffer(pgw_conn_t *c, uint8_t **p, size_t *len)
{
    *p = pgw__tls_input_space(c->tls, len);
    if (*p) return 0;
    /* The ring is full of records the session has not taken yet. */
    pgw__tls_t *t = c->tls;
    pgw_session_t *s = c->s;
    int rc = tls_read_commit(c, 0);
    if (rc < 0) return rc;
    if (c->s != s || c->tls != t) return PGW_ECANCELED;
    *p = pgw__tls_input_space(t, len);
    return *p ? 0 : tls_broken(c, s, PGW_EPROTO);
}

static int tls_take_output(pgw_conn_t *c)
{
    for (;;) {
        size_t len = 0, w = 0;
        const uint8_t *p = pgw_session_pending_output(c->s, &len);
        if (!p || len == 0) return 0;
        /* What OpenSSL did not take is offered again, unchanged, next
         * time: it stays at the head of the session's output. */
        int rc = pgw__tls_write(c->tls, p, len, &w);
        if (rc < 0) {
            pgw__conn_errmsg_add(c, pgw__tls_errmsg(c->tls));
            return rc;
        }
        pgw_session_consumed_output(c->s, w);
        if (w < len) return 0; /* the ring is full: write it first */
    }
}

static const uint8_t *tls_out_view(pgw_conn_t *c, size_t *len)
{
    return pgw__tls_output(c->tls, len);
}

static void tls_out_consumed(pgw_conn_t *c, size_t n)
{
    pgw__tls_output_consumed(c->tls, n);
}

static size_t tls_pending_output(pgw_conn_t *c)
{
    size_t plain = 0, cipher = 0;
    pgw_session_pending_output(c->s, &plain);
    pgw__tls_output(c->tls, &cipher);
    return plain + cipher;
}

const pgw__transport_t pgw__transport_tls = {
    "tls",        tls_read_buffer,  tls_read_commit,    tls_take_output,
    tls_out_view, tls_out_consumed, tls_pending_output,
};

/* --------------------------------------------------------- shared context */

/* The last context built with the default allocator, shared by every
 * connection of the process whose settings match and whose files have not
 * changed since (one reference held here, for the process's life). */
static pthread_mutex_t ctx_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static pgw__tls_ctx_t *ctx_cache;

int pgw__tls_ctx_get(pgw__tls_ctx_t **out, const pgw__tls_config_t *cfg,
                     const pgw_allocator_t *alloc, char *err, size_t errlen)
{
    /* A context made with an application's allocator must not outlive the
     * connection (the allocator may not): it is never shared. */
    if (alloc != pgw__alloc_or_default(NULL)) return pgw__tls_ctx_new(out, cfg, alloc, err, errlen);
    pthread_mutex_lock(&ctx_cache_mu);
    if (pgw__tls_ctx_matches(ctx_cache, cfg) && pgw__tls_ctx_fresh(ctx_cache)) {
        *out = pgw__tls_ctx_ref(ctx_cache);
        pthread_mutex_unlock(&ctx_cache_mu);
        return 0;
    }
    pthread_mutex_unlock(&ctx_cache_mu);
    int rc = pgw__tls_ctx_new(out, cfg, alloc, err, errlen);
    if (rc < 0) return rc;
    pthread_mutex_lock(&ctx_cache_mu);
    pgw__tls_ctx_t *old = ctx_cache;
    ctx_cache = pgw__tls_ctx_ref(*out);
    pthread_mutex_unlock(&ctx_cache_mu);
    pgw__tls_ctx_unref(old);
    return 0;
}

/* ------------------------------------------------------ sslcertmode */

/* sslcertmode=require (libpq 16), checked at AuthenticationOk as libpq's
 * check_expected_areq does: the server must have asked for the client
 * certificate during the handshake, and received one. */
int pgw__tls_check_client_cert(const pgw__tls_t *t, int required, char *msg, size_t msglen)
{
    if (!required) return 0;
    if (!pgw__tls_cert_requested(t))
        return pgw__fail_msg(msg, msglen, PGW_ETLS, "server did not request an SSL certificate");
    if (!pgw__tls_cert_sent(t))
        return pgw__fail_msg(msg, msglen, PGW_ETLS,
                             "server accepted connection without a valid SSL certificate");
    return 0;
}

int pgw__conn_check_client_cert(const pgw_conn_t *c, char *msg, size_t msglen)
{
    return pgw__tls_check_client_cert(c->tls, c->sslcert_required, msg, msglen);
}

/* -------------------------------------------------------------- policy */

int pgw__enc_allowed(pgw__sslmode_t ssl, int gssmode, int tcp)
{
    if (!tcp) return PGW__ENC_PLAIN;
    int allowed = 0;
    if (ssl != PGW__SSLMODE_DISABLE && gssmode != PGW__GSSMODE_REQUIRE) allowed |= PGW__ENC_TLS;
    if (gssmode != PGW__GSSMODE_DISABLE) allowed |= PGW__ENC_GSS;
    if (ssl <= PGW__SSLMODE_PREFER && gssmode != PGW__GSSMODE_REQUIRE) allowed |= PGW__ENC_PLAIN;
    return allowed;
}

/* Written with branches: GCC 12.2 at -O2 miscompiles the same choice
 * written as a loop over two static order arrays (its last test reads the
 * array's address instead of its element). */
int pgw__enc_first(pgw__sslmode_t ssl, int remaining)
{
    if (remaining & PGW__ENC_GSS) return PGW__ENC_GSS;
    int first = ssl == PGW__SSLMODE_ALLOW ? PGW__ENC_PLAIN : PGW__ENC_TLS;
    int second = first == PGW__ENC_PLAIN ? PGW__ENC_TLS : PGW__ENC_PLAIN;
    if (remaining & first) return first;
    return remaining & second ? second : 0;
}

int pgw__tls_opts_of(const pgw_conninfo_t *ci, pgw__tls_opts_t *o)
{
    memset(o, 0, sizeof *o);
    if (pgw__sslmode_parse(pgw_conninfo_get(ci, "sslmode"), &o->mode) < 0) return PGW_ECONNINFO;
    const char *v = pgw_conninfo_get(ci, "sslnegotiation");
    o->direct = v && strcmp(v, "direct") == 0;
    v = pgw_conninfo_get(ci, "sslsni");
    o->sni = !v || strcmp(v, "0") != 0;
    v = pgw_conninfo_get(ci, "sslcertmode");
    o->cert_required = v && strcmp(v, "require") == 0;
    return 0;
}

void pgw__tls_config_of(const pgw_conninfo_t *ci, pgw__tls_config_t *tc)
{
    *tc = (pgw__tls_config_t){
        pgw_conninfo_get(ci, "sslmode"),
        pgw_conninfo_get(ci, "sslrootcert"),
        pgw_conninfo_get(ci, "sslcrl"),
        pgw_conninfo_get(ci, "sslcrldir"),
        pgw_conninfo_get(ci, "sslcert"),
        pgw_conninfo_get(ci, "sslkey"),
        pgw_conninfo_get(ci, "sslpassword"),
        pgw_conninfo_get(ci, "sslcertmode"),
        pgw_conninfo_get(ci, "ssl_min_protocol_version"),
        pgw_conninfo_get(ci, "ssl_max_protocol_version"),
        pgw_conninfo_get(ci, "sslkeylogfile"),
    };
}

void pgw__conn_tls_policy(const pgw_conn_t *c, pgw__tls_policy_t *p)
{
    memset(p, 0, sizeof *p);
    p->ctx = c->tls_ctx;
    p->mode = c->sslmode;
    p->sni = c->ssl_sni;
    p->direct = c->ssl_direct;
    p->ring_size = c->cfg.tls_ring_size;
    const pgw__host_t *h = pgw__hostplan_host(c->cx.plan);
    const char *host = h ? h->h.host : NULL;
    if (host) snprintf(p->host, sizeof p->host, "%s", host);
}

void pgw__conn_cancel_tls(const pgw_conn_t *c, pgw__tls_policy_t *p)
{
    memset(p, 0, sizeof *p);
    if (!c->tls) return; /* a plaintext connection cancels in plaintext */
    pgw__conn_tls_policy(c, p);
    pgw__tls_ctx_ref(p->ctx);
    /* TLS is in use: the cancel must not fall back to plaintext. */
    if (p->mode < PGW__SSLMODE_REQUIRE) p->mode = PGW__SSLMODE_REQUIRE;
}

int pgw_conn_tls_info(const pgw_conn_t *c, pgw_tls_info_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!c) return PGW_EINVAL;
    return pgw__tls_info(c->tls, out);
}
