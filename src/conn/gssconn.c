/*
 * GSSAPI on the connection's sockets (libpq's fe-secure-gssapi.c and
 * fe-auth.c): the GSS encryption negotiation (GSSENCRequest, the server's
 * answer, the context tokens as length-prefixed packets) shared by
 * connections and cancel requests; the GSS encryption transport seam the
 * connection switches to once the context is established; and the
 * session's hooks for GSSAPI authentication and for OAuth bearer tokens.
 *
 * Byte flow once established (one copy: the GSS library's unwrap output
 * into the session's read chunk, as TLS decrypts into it):
 *   recv() -> whole packets gathered in the transport's input buffer
 *          -> gss_unwrap -> copied straight into the session's read chunk
 *   session output -> gss_wrap, packet by packet (at most
 *          PGW__GSS_MAX_PACKET bytes each), into one output buffer
 *          -> send() of that buffer, once per loop turn
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <stdio.h>
#include <string.h>

/* The transport's input and output buffers (room for several packets, so
 * that one read or one write moves many). */
#define PGW__GSS_RING_DEFAULT (64u * 1024u)

/* ------------------------------------------------------------ negotiation */

static int gneg_fail(pgw__gssneg_t *n, const pgw_allocator_t *a, int rc, int retryable,
                     const char *msg)
{
    if (msg && msg != n->err) snprintf(n->err, sizeof n->err, "%s", msg);
    pgw__gssneg_reset(n, a);
    n->retryable = retryable;
    return rc;
}

int pgw__gssneg_begin(pgw__gssneg_t *n, pgw__gss_cred_t *cred, const pgw_allocator_t *alloc)
{
    memset(n, 0, sizeof *n);
    n->cred = cred;
    pgw_buf_init(&n->out, alloc);
    pgw_buf_t b;
    pgw_buf_init(&b, alloc);
    int rc = pgw_enc_gssenc_request(&b);
    if (rc == 0 && b.len == sizeof n->req) memcpy(n->req, b.data, sizeof n->req);
    pgw_buf_free(&b);
    n->in = pgw__malloc(alloc, PGW__GSS_MAX_PACKET);
    if (rc < 0 || !n->in) return gneg_fail(n, alloc, PGW_ENOMEM, 0, "out of memory");
    n->phase = PGW__GNEG_REQUEST;
    return 0;
}

void pgw__gssneg_reset(pgw__gssneg_t *n, const pgw_allocator_t *alloc)
{
    pgw__gss_cred_free(n->cred);
    n->cred = NULL;
    pgw__gss_free(n->g);
    n->g = NULL;
    pgw_buf_free(&n->out);
    n->out_off = 0;
    pgw__free(alloc, n->in);
    n->in = NULL;
    n->in_len = 0;
    n->phase = PGW__GNEG_IDLE;
}

static int gneg_watch(pgw__sock_t *k, int events)
{
    return pgw__sock_watch(k, events) < 0 ? PGW_ECONNLOST : 0;
}

/* Run gss_init_sec_context on in[0..inlen) and queue its token as a
 * packet. Returns 1 (more to exchange), 0 (established) or the failure. */
static int gneg_context_step(pgw__gssneg_t *n, const uint8_t *in, size_t inlen,
                             const pgw_allocator_t *a)
{
    size_t at = n->out.len;
    uint8_t len[4] = {0, 0, 0, 0};
    if (pgw_buf_append(&n->out, len, 4) < 0) return gneg_fail(n, a, PGW_ENOMEM, 0, "out of memory");
    int rc = pgw__gss_step(n->g, in, inlen, &n->out, "could not initiate GSSAPI security context",
                           n->err, sizeof n->err);
    if (rc < 0) return gneg_fail(n, a, rc, 1, NULL);
    size_t tok = n->out.len - at - 4;
    if (tok == 0) {
        n->out.len = at; /* nothing to send */
        return rc;
    }
    if (tok > PGW__GSS_MAX_PACKET - 4)
        return gneg_fail(n, a, PGW_EAUTH, 1, "GSSAPI context establishment error");
    pgw__put32(n->out.data + at, (uint32_t)tok);
    return rc;
}

/* The server's 'G' or 'N'. Bytes behind it were not sent by a server that
 * waits for the client's token (or its next request): refused, as TLS
 * refuses them (CVE-2021-23222). */
static int gneg_answer(pgw__gssneg_t *n, pgw__sock_t *k, const pgw__gss_policy_t *p,
                       const pgw_allocator_t *a)
{
    uint8_t buf[64];
    ssize_t got = pgw__sock_recv(k, buf, sizeof buf);
    if (got == PGW_EAGAIN) return gneg_watch(k, UV_READABLE);
    if (got == 0) return gneg_fail(n, a, PGW_ECONNLOST, 0, PGW__MSG_SERVER_CLOSED);
    if (got < 0) return gneg_fail(n, a, PGW_ECONNLOST, 0, "could not receive data from server");
    if (buf[0] == 'E')
        /* A server before 12 refuses the request code: libpq goes on with
         * the next method, its message unread (it is unauthenticated). */
        return gneg_fail(n, a, PGW_EAUTH, 1,
                         "server sent an error response during GSS encryption exchange");
    if (buf[0] != 'G' && buf[0] != 'N') {
        snprintf(n->err, sizeof n->err, "received invalid response to GSSAPI negotiation: %c",
                 buf[0]);
        return gneg_fail(n, a, PGW_EPROTO, 0, NULL);
    }
    if (got > 1)
        return gneg_fail(n, a, PGW_EPROTO, 0,
                         "received unencrypted data after GSSAPI encryption response");
    if (buf[0] == 'N') {
        pgw__gssneg_reset(n, a);
        return PGW__NEG_PLAIN;
    }
    pgw__gss_config_t gc = {p->service, p->host, p->delegate, 1, n->cred};
    n->cred = NULL; /* the context's now */
    int rc = pgw__gss_new(&n->g, &gc, a, n->err, sizeof n->err);
    if (rc < 0) return gneg_fail(n, a, rc, 1, NULL);
    n->phase = PGW__GNEG_HANDSHAKE;
    rc = gneg_context_step(n, NULL, 0, a);
    return rc < 0 ? rc : 0;
}

/* Send what is queued: 0 when all went, 1 when the socket is full, or the
 * failure. */
static int gneg_send(pgw__gssneg_t *n, pgw__sock_t *k, const pgw_allocator_t *a)
{
    while (n->out_off < n->out.len) {
        ssize_t w = pgw__sock_send(k, n->out.data + n->out_off, n->out.len - n->out_off);
        if (w == PGW_EAGAIN) return 1;
        if (w < 0) return gneg_fail(n, a, PGW_ECONNLOST, 1, PGW__MSG_SERVER_CLOSED);
        n->out_off += (size_t)w;
    }
    pgw_buf_reset(&n->out);
    n->out_off = 0;
    return 0;
}

/* Gather the server's next token packet; process it once whole. Returns
 * 1 when a packet was processed, 0 when waiting, or the failure. */
static int gneg_receive(pgw__gssneg_t *n, pgw__sock_t *k, const pgw_allocator_t *a)
{
    ssize_t got = pgw__sock_recv(k, n->in + n->in_len, PGW__GSS_MAX_PACKET - n->in_len);
    if (got == PGW_EAGAIN) return 0;
    if (got == 0) return gneg_fail(n, a, PGW_ECONNLOST, 1, PGW__MSG_SERVER_CLOSED);
    if (got < 0) return gneg_fail(n, a, PGW_ECONNLOST, 1, "could not receive data from server");
    n->in_len += (size_t)got;
    if (n->in[0] == 'E') /* An error packet: real ones begin with two zero length bytes. */
        return gneg_fail(n, a, PGW_EAUTH, 1,
                         "server sent an error response during GSS encryption exchange");
    if (n->in_len < 4) return 0;
    size_t len = pgw__get32(n->in);
    if (len > PGW__GSS_MAX_PACKET - 4) {
        snprintf(n->err, sizeof n->err, "oversize GSSAPI packet sent by the server (%zu > %zu)",
                 len, (size_t)PGW__GSS_MAX_PACKET - 4);
        return gneg_fail(n, a, PGW_EPROTO, 1, NULL);
    }
    if (n->in_len < 4 + len) return 0;
    int rc = gneg_context_step(n, n->in + 4, len, a);
    if (rc < 0) return rc;
    size_t rest = n->in_len - 4 - len;
    memmove(n->in, n->in + 4 + len, rest);
    n->in_len = rest;
    if (rc == 0 && rest)
        return gneg_fail(n, a, PGW_EPROTO, 0,
                         "received unencrypted data after GSSAPI encryption response");
    return 1;
}

static int gneg_handshake(pgw__gssneg_t *n, pgw__sock_t *k, const pgw_allocator_t *a)
{
    for (;;) {
        int full = gneg_send(n, k, a);
        if (full < 0) return full;
        if (full) return gneg_watch(k, UV_WRITABLE);
        if (pgw__gss_established(n->g)) {
            n->phase = PGW__GNEG_IDLE;
            return PGW__NEG_GSS;
        }
        int rc = gneg_receive(n, k, a);
        if (rc < 0) return rc;
        if (rc == 0) return gneg_watch(k, UV_READABLE);
    }
}

int pgw__gssneg_step(pgw__gssneg_t *n, pgw__sock_t *k, const pgw__gss_policy_t *p,
                     const pgw_allocator_t *alloc)
{
    int rc;
    switch (n->phase) {
    case PGW__GNEG_REQUEST:
        while (n->sent < sizeof n->req) {
            ssize_t w = pgw__sock_send(k, n->req + n->sent, sizeof n->req - n->sent);
            if (w == PGW_EAGAIN) return gneg_watch(k, UV_WRITABLE);
            if (w < 0)
                return gneg_fail(n, alloc, PGW_ECONNLOST, 0,
                                 "could not send GSSAPI negotiation packet");
            n->sent += (size_t)w;
        }
        n->phase = PGW__GNEG_ANSWER;
        /* fall through */
    case PGW__GNEG_ANSWER:
        rc = gneg_answer(n, k, p, alloc);
        if (rc != 0 || n->phase != PGW__GNEG_HANDSHAKE) return rc;
        /* fall through */
    case PGW__GNEG_HANDSHAKE:
        return gneg_handshake(n, k, alloc);
    default:
        return PGW_EINVAL;
    }
}

/* ------------------------------------------------------------ transport */

int pgw__gsst_new(pgw__gsst_t **out, pgw__gss_t *g, size_t ring, const pgw_allocator_t *alloc,
                  char *err, size_t errlen)
{
    *out = NULL;
    if (ring < 2 * PGW__GSS_MAX_PACKET)
        ring = ring ? 2 * PGW__GSS_MAX_PACKET : PGW__GSS_RING_DEFAULT;
    pgw__gsst_t *t = pgw__calloc(alloc, 1, sizeof *t);
    uint8_t *in = t ? pgw__malloc(alloc, ring) : NULL;
    if (!in) {
        pgw__free(alloc, t);
        pgw__gss_free(g);
        return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    }
    t->g = g;
    t->in = in;
    t->in_cap = ring;
    pgw_buf_init(&t->out, alloc);
    int rc = pgw__gss_wrap_limit(g, &t->max_plain, err, errlen);
    if (rc == 0 && t->max_plain == 0)
        rc = pgw__fail_msg(err, errlen, PGW_EAUTH, "GSSAPI size check error");
    if (rc < 0) {
        pgw__gsst_free(t, alloc);
        return rc;
    }
    pgw__gss_principal(g, t->principal, sizeof t->principal);
    *out = t;
    return 0;
}

void pgw__gsst_free(pgw__gsst_t *t, const pgw_allocator_t *alloc)
{
    if (!t) return;
    pgw__gss_free(t->g);
    pgw__free(alloc, t->in);
    pgw_buf_free(&t->out);
    pgw__free(alloc, t);
}

/* A fatal GSS error on an established connection: the session breaks. */
static int gss_broken(pgw_conn_t *c, pgw_session_t *s, int rc, const char *msg)
{
    pgw__conn_errmsg_add(c, msg);
    pgw_session_fail(s, rc);
    return rc;
}

/* Unwrap the next whole packet of the input buffer into t->plain.
 * Returns 1 (unwrapped), 0 (no whole packet yet) or the failure. */
static int gss_next_packet(pgw_conn_t *c, pgw__gsst_t *t)
{
    size_t avail = t->in_end - t->in_start;
    if (avail < 4) return 0;
    size_t len = pgw__get32(t->in + t->in_start);
    char err[PGW__TLS_ERRLEN];
    if (len > PGW__GSS_MAX_PACKET - 4) {
        snprintf(err, sizeof err, "oversize GSSAPI packet sent by the server (%zu > %zu)", len,
                 (size_t)PGW__GSS_MAX_PACKET - 4);
        return gss_broken(c, c->s, PGW_EPROTO, err);
    }
    if (avail < 4 + len) return 0;
    int rc = pgw__gss_unwrap(t->g, t->in + t->in_start + 4, len, &t->plain, &t->plain_len, err,
                             sizeof err);
    if (rc < 0) return gss_broken(c, c->s, rc, err);
    t->in_start += 4 + len;
    if (t->in_start == t->in_end) t->in_start = t->in_end = 0;
    return 1;
}

static int gss_read_commit(pgw_conn_t *c, size_t n)
{
    pgw__gsst_t *t = c->gss;
    pgw_session_t *s = c->s;
    t->in_end += n;
    /* A paused session leaves the packets in the buffer (readctl.c). */
    while (!pgw_session_input_paused(s)) {
        if (t->plain_len == 0) {
            int rc = gss_next_packet(c, t);
            if (rc <= 0) return rc;
            continue;
        }
        uint8_t *q;
        size_t room;
        int rc = pgw_session_input_buffer(s, &q, &room);
        if (rc < 0) {
            pgw_session_fail(s, rc);
            return rc;
        }
        size_t k = room < t->plain_len ? room : t->plain_len;
        memcpy(q, t->plain, k);
        t->plain += k;
        t->plain_len -= k;
        rc = pgw_session_input_commit(s, k);
        if (rc < 0) return rc;                  /* broken, or freed by a callback */
        if (c->s != s || c->gss != t) return 0; /* closed or replaced by a callback */
    }
    return 0;
}

static int gss_read_buffer(pgw_conn_t *c, uint8_t **p, size_t *len)
{
    pgw__gsst_t *t = c->gss;
    if (t->in_end == t->in_cap && t->in_start) {
        memmove(t->in, t->in + t->in_start, t->in_end - t->in_start);
        t->in_end -= t->in_start;
        t->in_start = 0;
    }
    /* Full: a packet fits in the buffer, so whole packets wait here for a
     * session that has not taken them yet. */
    if (t->in_end == t->in_cap) {
        pgw_session_t *s = c->s;
        int rc = gss_read_commit(c, 0);
        if (rc < 0) return rc;
        if (c->s != s || c->gss != t) return PGW_ECANCELED;
        if (t->in_end == t->in_cap) return gss_broken(c, s, PGW_EPROTO, "GSSAPI input overflow");
    }
    *p = t->in + t->in_end;
    *len = t->in_cap - t->in_end;
    return 0;
}

static int gss_take_output(pgw_conn_t *c)
{
    pgw__gsst_t *t = c->gss;
    size_t limit = t->in_cap; /* as much output as input: several packets per write */
    for (;;) {
        size_t len = 0;
        const uint8_t *p = pgw_session_pending_output(c->s, &len);
        if (!p || len == 0 || t->out.len - t->out_off >= limit) return 0;
        size_t n = len < t->max_plain ? len : t->max_plain;
        char err[PGW__TLS_ERRLEN];
        int rc = pgw__gss_wrap(t->g, p, n, &t->out, err, sizeof err);
        if (rc < 0) {
            pgw__conn_errmsg_add(c, err);
            return rc;
        }
        pgw_session_consumed_output(c->s, n);
    }
}

static const uint8_t *gss_out_view(pgw_conn_t *c, size_t *len)
{
    pgw__gsst_t *t = c->gss;
    *len = t->out.len - t->out_off;
    return t->out.data + t->out_off;
}

static void gss_out_consumed(pgw_conn_t *c, size_t n)
{
    pgw__gsst_t *t = c->gss;
    t->out_off += n;
    if (t->out_off == t->out.len) {
        pgw_buf_reset(&t->out);
        t->out_off = 0;
    }
}

static size_t gss_pending_output(pgw_conn_t *c)
{
    size_t plain = 0;
    pgw_session_pending_output(c->s, &plain);
    return plain + (c->gss->out.len - c->gss->out_off);
}

const pgw__transport_t pgw__transport_gss = {
    "gss",        gss_read_buffer,  gss_read_commit,    gss_take_output,
    gss_out_view, gss_out_consumed, gss_pending_output,
};

/* -------------------------------------------------------------- policy */

/* libpq's PQhost: the host name as given, else hostaddr. */
static const char *current_host(const pgw_conn_t *c, int name_only)
{
    const pgw__host_t *ph = pgw__hostplan_host(c->cx.plan);
    if (!ph) return "";
    const pgw_host_t *h = &ph->h;
    if (h->host && *h->host) return h->host;
    return !name_only && h->hostaddr ? h->hostaddr : "";
}

static int delegation(const pgw_conn_t *c)
{
    const char *v = pgw_conninfo_get(c->ci, "gssdelegation");
    return v && v[0] == '1';
}

void pgw__conn_gss_policy(const pgw_conn_t *c, pgw__gss_policy_t *p)
{
    memset(p, 0, sizeof *p);
    const char *svc = pgw_conninfo_get(c->ci, "krbsrvname");
    snprintf(p->service, sizeof p->service, "%s", svc && *svc ? svc : "postgres");
    snprintf(p->host, sizeof p->host, "%s", current_host(c, 0));
    p->delegate = delegation(c);
}

void pgw__conn_gss_drop(pgw_conn_t *c)
{
    /* (c->gss_cred outlives the socket: the next one's negotiation takes
     * it; pgw__connect_finish frees what is left.) */
    pgw__gssneg_reset(&c->gneg, c->alloc);
    pgw__gsst_free(c->gss, c->alloc);
    c->gss = NULL;
    pgw__gss_free(c->gss_auth);
    c->gss_auth = NULL;
}

/* ------------------------------------------------------- session hooks */

/* GSSAPI authentication (libpq's pg_GSS_startup and pg_GSS_continue): the
 * target is krbsrvname@host with the host name as given (a connection
 * made by hostaddr alone has none: "host name must be specified"). */
static int cb_gss_step(pgw_session_t *s, const uint8_t *in, size_t inlen, const uint8_t **out,
                       size_t *outlen, char *msg, size_t msglen, void *ud)
{
    pgw_conn_t *c = ud;
    *out = NULL;
    *outlen = 0;
    if (s != c->s) return PGW_EINVAL;
    int rc;
    if (!in) {
        pgw__gss_free(c->gss_auth);
        c->gss_auth = NULL;
        pgw__gss_policy_t p;
        pgw__conn_gss_policy(c, &p);
        pgw__gss_config_t gc = {p.service, current_host(c, 1), p.delegate, 0, NULL};
        rc = pgw__gss_new(&c->gss_auth, &gc, c->alloc, msg, msglen);
        if (rc < 0) return rc;
    }
    if (!c->gss_auth) return PGW_EPROTO;
    pgw_buf_reset(&c->gss_token);
    rc = pgw__gss_step(c->gss_auth, in, inlen, &c->gss_token, "GSSAPI continuation error", msg,
                       msglen);
    if (rc < 0) return rc;
    if (rc == 0) pgw__gss_principal(c->gss_auth, c->gss_principal, sizeof c->gss_principal);
    *out = c->gss_token.data;
    *outlen = c->gss_token.len;
    return rc;
}

static int cb_gss_encrypted(pgw_session_t *s, void *ud)
{
    pgw_conn_t *c = ud;
    return s == c->s && c->gss != NULL;
}

/* The application's token, now or later (pgw_conn_oauth_token). */
static int cb_oauth_token(pgw_session_t *s, const pgw_oauth_request_t *req, pgw_buf_t *token,
                          char *msg, size_t msglen, void *ud)
{
    pgw_conn_t *c = ud;
    if (s != c->s) return PGW_EINVAL;
    if (c->oauth_state == PGW__OAUTH_NONE) {
        c->oauth_state = PGW__OAUTH_ASKED;
        int rc = c->cfg.on_oauth_token(c, req, c->cfg.oauth_ud);
        if (rc < 0 && c->oauth_state == PGW__OAUTH_ASKED) {
            c->oauth_state = PGW__OAUTH_FAILED;
            c->oauth_error[0] = '\0';
        }
    }
    switch (c->oauth_state) {
    case PGW__OAUTH_HAVE:
        return pgw_buf_append(token, c->oauth_token, strlen(c->oauth_token)) < 0 ? PGW_ENOMEM : 1;
    case PGW__OAUTH_FAILED:
        snprintf(msg, msglen, "%s", c->oauth_error);
        return PGW_EAUTH;
    default:
        return 0;
    }
}

void pgw__conn_auth_hooks(pgw_conn_t *c, pgw_session_config_t *sc)
{
    if (pgw__gss_available()) sc->cb.gss_step = cb_gss_step;
    sc->cb.gss_encrypted = cb_gss_encrypted;
    if (c->cfg.on_oauth_token) sc->cb.oauth_token = cb_oauth_token;
    sc->oauth_issuer = pgw_conninfo_get(c->ci, "oauth_issuer");
    sc->oauth_client_id = pgw_conninfo_get(c->ci, "oauth_client_id");
    sc->oauth_client_secret = pgw_conninfo_get(c->ci, "oauth_client_secret");
    sc->oauth_scope = pgw_conninfo_get(c->ci, "oauth_scope");
    sc->oauth_token = c->oauth_state == PGW__OAUTH_HAVE ? c->oauth_token : NULL;
}

void pgw__conn_oauth_clear(pgw_conn_t *c)
{
    pgw__free_secret(c->alloc, c->oauth_token);
    c->oauth_token = NULL;
    c->oauth_state = PGW__OAUTH_NONE;
    c->oauth_error[0] = '\0';
}

/* ------------------------------------------------------------ public API */

int pgw_conn_oauth_token(pgw_conn_t *c, const char *token, const char *error)
{
    if (!c) return PGW_EINVAL;
    if (c->oauth_state != PGW__OAUTH_ASKED) return PGW_EBUSY;
    if (token && *token) {
        c->oauth_token = pgw__strdup(c->alloc, token);
        if (!c->oauth_token) return PGW_ENOMEM;
        c->oauth_state = PGW__OAUTH_HAVE;
    } else {
        c->oauth_state = PGW__OAUTH_FAILED;
        snprintf(c->oauth_error, sizeof c->oauth_error, "%s", error ? error : "");
    }
    /* A connect waiting for it goes on from the loop. */
    if (c->cx.oauth_wait) pgw__connect_on_oauth_token(c);
    return 0;
}

int pgw_conn_gss_info(const pgw_conn_t *c, pgw_gss_info_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!c) return PGW_EINVAL;
    out->principal = "";
    if (c->gss) {
        out->encrypted = 1;
        out->used = 1;
        out->principal = c->gss->principal;
    } else if (c->s && pgw_session_auth_method(c->s) &&
               strcmp(pgw_session_auth_method(c->s), "gss") == 0) {
        out->used = 1;
        out->principal = c->gss_principal;
    }
    return 0;
}
