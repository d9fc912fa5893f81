/*
 * Sans-IO TLS (tls.h, SANS-IO TLS): the engine connections use (tls/),
 * with the policy they apply (tlsconn.c: options, methods and their order,
 * the answer to SSLRequest, sslcertmode), for a driver that moves the
 * bytes itself. No socket, timer or thread here.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <stdio.h>
#include <string.h>

/* Where the current attempt is. */
enum { IO_IDLE = 0, IO_ANSWER, IO_HANDSHAKE };

struct pgw_tls {
    const pgw_allocator_t *alloc;
    /* The context's settings, copied from the caller's conninfo (into
     * strs): built at the first TLS attempt, as libpq reads its files. */
    pgw__tls_config_t tc;
    char *strs;
    size_t strs_len;
    pgw__tls_opts_t o;
    pgw__tls_ctx_t *ctx; /* built at the first TLS attempt (libpq's moment) */
    pgw__tls_t *t;       /* the current TLS attempt's engine */
    int allowed, failed; /* PGW__ENC_ bits */
    int method;          /* the current attempt's (pgw_tls_method_t) */
    int phase;
    int ended; /* the answer to SSLRequest ended the connect (libpq) */
    uint8_t cb[PGW__TLS_CB_MAX];
    char host[256];
    char err[PGW__TLS_ERRLEN];
};

static pgw_tls_method_t method_of(const pgw_tls_t *t, int enc)
{
    if (enc == PGW__ENC_PLAIN) return PGW_TLS_START_PLAIN;
    if (enc == PGW__ENC_TLS) return t->o.direct ? PGW_TLS_START_DIRECT : PGW_TLS_START_REQUEST;
    return PGW_TLS_START_NONE;
}

static int enc_of(pgw_tls_method_t m)
{
    return m == PGW_TLS_START_PLAIN                                  ? PGW__ENC_PLAIN
           : m == PGW_TLS_START_REQUEST || m == PGW_TLS_START_DIRECT ? PGW__ENC_TLS
                                                                     : 0;
}

static int fail(pgw_tls_t *t, int rc, const char *msg)
{
    snprintf(t->err, sizeof t->err, "%s", msg);
    return rc;
}

/* The current attempt's engine, its context built first if need be (the
 * files are read then, as libpq reads them once the server said 'S'). */
static int engine(pgw_tls_t *t)
{
    if (!t->ctx) {
        int rc = pgw__tls_ctx_get(&t->ctx, &t->tc, t->alloc, t->err, sizeof t->err);
        if (rc < 0) return rc == PGW_EINVAL ? PGW_ECONNINFO : rc;
    }
    pgw__tls_conn_config_t cc = {t->host, t->o.sni, t->o.direct, 0};
    int rc = pgw__tls_new(&t->t, t->ctx, &cc, t->alloc, t->err, sizeof t->err);
    if (rc < 0) return rc == PGW_ENOMEM ? rc : PGW_ETLS;
    t->phase = IO_HANDSHAKE;
    return 0;
}

/* Start the attempt of method m (a new socket). */
static int begin(pgw_tls_t *t, pgw_tls_method_t m)
{
    pgw__tls_free(t->t);
    t->t = NULL;
    t->err[0] = '\0';
    t->method = m;
    t->phase = m == PGW_TLS_START_REQUEST ? IO_ANSWER : IO_IDLE;
    return m == PGW_TLS_START_DIRECT ? engine(t) : 0;
}

/* Copy the settings ci gives into t->strs, pointed at from t->tc. */
static int copy_settings(pgw_tls_t *t, const pgw_conninfo_t *ci)
{
    pgw__tls_config_t tc;
    pgw__tls_config_of(ci, &tc);
    const char **f[] = {&tc.sslmode,      &tc.sslrootcert,  &tc.sslcrl,      &tc.sslcrldir,
                        &tc.sslcert,      &tc.sslkey,       &tc.sslpassword, &tc.sslcertmode,
                        &tc.min_protocol, &tc.max_protocol, &tc.keylogfile};
    size_t total = 0;
    for (size_t k = 0; k < PGW__ARRAY_LEN(f); k++)
        if (*f[k]) total += strlen(*f[k]) + 1;
    t->strs = pgw__malloc(t->alloc, total ? total : 1);
    if (!t->strs) return PGW_ENOMEM;
    t->strs_len = total;
    char *p = t->strs;
    for (size_t k = 0; k < PGW__ARRAY_LEN(f); k++) {
        if (!*f[k]) continue;
        size_t n = strlen(*f[k]) + 1;
        memcpy(p, *f[k], n);
        *f[k] = p;
        p += n;
    }
    t->tc = tc;
    return 0;
}

int pgw_tls_new(pgw_tls_t **out, const pgw_conninfo_t *ci, size_t i, const pgw_allocator_t *alloc,
                char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!ci) return PGW_EINVAL;
    pgw_host_t h;
    int rc = pgw_conninfo_host(ci, i, &h);
    if (rc < 0) return rc;
    pgw_tls_t *t = pgw__calloc(alloc, 1, sizeof *t);
    if (!t) return PGW_ENOMEM;
    t->alloc = alloc;
    if (copy_settings(t, ci) < 0) {
        rc = fail(t, PGW_ENOMEM, "out of memory");
    } else if (pgw__tls_opts_of(ci, &t->o) < 0) {
        rc = fail(t, PGW_ECONNINFO, "invalid sslmode value");
    } else {
        if (h.host) snprintf(t->host, sizeof t->host, "%s", h.host);
        t->allowed = pgw__enc_allowed(t->o.mode, PGW__GSSMODE_DISABLE, !h.is_unix);
        rc = begin(t, method_of(t, pgw__enc_first(t->o.mode, t->allowed)));
    }
    if (rc < 0) {
        if (err && errlen) snprintf(err, errlen, "%s", t->err);
        pgw_tls_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void pgw_tls_free(pgw_tls_t *t)
{
    if (!t) return;
    pgw__tls_free(t->t);
    pgw__tls_ctx_unref(t->ctx);
    pgw__wipe(t->strs, t->strs_len); /* sslpassword is among them */
    pgw__free(t->alloc, t->strs);
    pgw__free(t->alloc, t);
}

pgw_tls_method_t pgw_tls_start(const pgw_tls_t *t)
{
    return t ? (pgw_tls_method_t)t->method : PGW_TLS_START_NONE;
}

pgw_tls_method_t pgw_tls_next_method(pgw_tls_t *t, pgw_tls_method_t failed)
{
    if (!t || t->ended) return PGW_TLS_START_NONE;
    t->failed |= enc_of(failed);
    pgw_tls_method_t m = method_of(t, pgw__enc_first(t->o.mode, t->allowed & ~t->failed));
    /* The one method that builds its engine at once cannot be next:
     * sslnegotiation=direct needs sslmode require or stricter (conninfo),
     * where TLS is the only method. */
    if (begin(t, m) < 0) return PGW_TLS_START_NONE;
    return m;
}

void pgw_tls_reset(pgw_tls_t *t)
{
    if (!t) return;
    t->failed = 0;
    t->ended = 0;
    (void)begin(t, method_of(t, pgw__enc_first(t->o.mode, t->allowed)));
}

int pgw_tls_answer(pgw_tls_t *t, const uint8_t *bytes, size_t n)
{
    if (!t || !bytes || n == 0) return PGW_EINVAL;
    if (t->phase != IO_ANSWER) return PGW_EBUSY;
    t->err[0] = '\0';
    int rc = pgw__tls_ssl_response(t->o.mode, bytes, n, t->err, sizeof t->err);
    if (rc == PGW__TLS_PLAINTEXT) {
        t->phase = IO_IDLE;
        return PGW_TLS_PLAINTEXT;
    }
    if (rc != PGW__TLS_START) {
        t->phase = IO_IDLE;
        t->ended = 1;
        return rc;
    }
    rc = engine(t);
    if (rc < 0) {
        t->phase = IO_IDLE;
        return rc;
    }
    return PGW_TLS_HANDSHAKE;
}

int pgw_tls_handshake(pgw_tls_t *t)
{
    if (!t) return PGW_EINVAL;
    if (t->phase != IO_HANDSHAKE) return PGW_EBUSY;
    int rc = pgw__tls_handshake(t->t);
    /* EOF mid-handshake (a server closing on the ClientHello) is told as
     * libpq tells it. */
    if (rc == PGW_ECONNLOST && !*pgw__tls_errmsg(t->t))
        fail(t, rc, "SSL SYSCALL error: EOF detected");
    return rc;
}

int pgw_tls_feed(pgw_tls_t *t, const uint8_t *p, size_t n, size_t *used)
{
    if (!t) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    return pgw__tls_feed(t->t, p, n, used);
}

uint8_t *pgw_tls_input_space(pgw_tls_t *t, size_t *len)
{
    if (len) *len = 0;
    return t && t->t && len ? pgw__tls_input_space(t->t, len) : NULL;
}

int pgw_tls_input_commit(pgw_tls_t *t, size_t n)
{
    if (!t) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    return pgw__tls_input_commit(t->t, n);
}

void pgw_tls_input_eof(pgw_tls_t *t)
{
    if (t) pgw__tls_input_eof(t->t);
}

const uint8_t *pgw_tls_output(pgw_tls_t *t, size_t *len)
{
    if (len) *len = 0;
    return t && len ? pgw__tls_output(t->t, len) : NULL;
}

void pgw_tls_output_consumed(pgw_tls_t *t, size_t n)
{
    if (t) pgw__tls_output_consumed(t->t, n);
}

int pgw_tls_read(pgw_tls_t *t, uint8_t *buf, size_t cap, size_t *n)
{
    if (!t) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    return pgw__tls_read(t->t, buf, cap, n);
}

int pgw_tls_write(pgw_tls_t *t, const uint8_t *p, size_t len, size_t *written)
{
    if (!t) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    return pgw__tls_write(t->t, p, len, written);
}

int pgw_tls_shutdown(pgw_tls_t *t)
{
    if (!t) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    return pgw__tls_shutdown(t->t);
}

int pgw_tls_channel_binding(pgw_tls_t *t, const uint8_t **data, size_t *len)
{
    if (!t || !data || !len) return PGW_EINVAL;
    if (!t->t) return PGW_EBUSY;
    int rc = pgw__tls_channel_binding(t->t, t->cb, len);
    *data = rc == 0 ? t->cb : NULL;
    return rc;
}

int pgw_tls_check_certificate(pgw_tls_t *t)
{
    if (!t) return PGW_EINVAL;
    /* Without TLS on the attempt, no certificate was asked for: require
     * fails then too, as in libpq. */
    return pgw__tls_check_client_cert(t->t, t->o.cert_required, t->err, sizeof t->err);
}

int pgw_tls_get_info(pgw_tls_t *t, pgw_tls_info_t *out)
{
    if (!t || !out) return PGW_EINVAL;
    return pgw__tls_info(t->t, out);
}

const char *pgw_tls_errmsg(const pgw_tls_t *t)
{
    if (!t) return "";
    return t->err[0] ? t->err : pgw__tls_errmsg(t->t);
}
