/*
 * One TLS session over an in-memory BIO pair: the conn layer moves
 * ciphertext between the socket and the pair's ring buffers, and plaintext
 * between the session and SSL_read/SSL_write. libpq's open_client_SSL
 * checks run when the handshake completes.
 */
#include "tls/tls_internal.h"
#include "util/internal.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define RING_SIZE_DEFAULT (64 * 1024)

static const unsigned char alpn_offer[] = "\x0apostgresql"; /* length-prefixed list */
#define ALPN_NAME     "postgresql"
#define ALPN_NAME_LEN (sizeof ALPN_NAME - 1)

struct pgw__tls {
    const pgw_allocator_t *alloc;
    pgw__tls_ctx_t *ctx;
    SSL *ssl;
    BIO *net; /* our end of the pair; SSL owns the other */
    char *host;
    bool direct;
    bool started;
    bool established;
    bool eof;
    bool cert_requested;
    bool cert_sent;
    int error; /* sticky fatal code, 0 if none */
    X509 *peer;
    char *peer_subject;
    uint8_t *peer_der;
    int peer_der_len;
    char alpn[256];
    char err[PGW__TLS_ERRLEN];
    char warning[PGW__TLS_ERRLEN];
};

/* ---- errors ---- */

static int fatal(pgw__tls_t *t, int code)
{
    t->error = code;
    ERR_clear_error();
    return code;
}

static int ssl_protocol_hint(unsigned long e)
{
    switch (ERR_GET_REASON(e)) {
    case SSL_R_NO_PROTOCOLS_AVAILABLE:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_BAD_PROTOCOL_VERSION_NUMBER:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_UNKNOWN_SSL_VERSION:
    case SSL_R_UNSUPPORTED_SSL_VERSION:
    case SSL_R_WRONG_SSL_VERSION:
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_VERSION_TOO_HIGH:
    case SSL_R_VERSION_TOO_LOW:
        return 1;
    default:
        return 0;
    }
}

/* An SSL_ERROR_SSL failure in libpq's words, with the verification
 * failure's reason (expired, unknown issuer, revoked...) when that is it. */
static int ssl_failure(pgw__tls_t *t)
{
    char buf[256];
    unsigned long e = ERR_peek_last_error();
    long vcode = SSL_get_verify_result(t->ssl);
    if (ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED && vcode != X509_V_OK) {
        pgw__fail_msg(t->err, sizeof t->err, 0, "SSL error: certificate verify failed: %s",
                      X509_verify_cert_error_string(vcode));
    } else if (ssl_protocol_hint(e)) {
        const char *min = t->ctx->settings[PGW__TLS_SET_MIN_PROTO];
        const char *max = t->ctx->settings[PGW__TLS_SET_MAX_PROTO];
        pgw__fail_msg(t->err, sizeof t->err, 0,
                      "SSL error: %s\nThis may indicate that the server does not support any "
                      "SSL protocol version between %s and %s.",
                      pgw__tls_ssl_errstr(e, buf, sizeof buf), min ? min : "TLSv1",
                      max ? max : "TLSv1.3");
    } else {
        pgw__fail_msg(t->err, sizeof t->err, 0, "SSL error: %s",
                      pgw__tls_ssl_errstr(e, buf, sizeof buf));
    }
    return fatal(t, PGW_ETLS);
}

/* What a failed SSL_do_handshake/SSL_read/SSL_write means. */
static int step_error(pgw__tls_t *t, int r, bool handshake)
{
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ && !t->eof) return PGW_EAGAIN;
    if (e == SSL_ERROR_WANT_WRITE) return PGW_EAGAIN; /* the output ring is full */
    bool unexpected_eof = e == SSL_ERROR_SYSCALL || e == SSL_ERROR_WANT_READ ||
                          (e == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_last_error()) ==
                                                     SSL_R_UNEXPECTED_EOF_WHILE_READING);
    if (e == SSL_ERROR_ZERO_RETURN || (t->eof && unexpected_eof)) {
        snprintf(t->err, sizeof t->err, "%s",
                 handshake                    ? "SSL SYSCALL error: EOF detected"
                 : e == SSL_ERROR_ZERO_RETURN ? "SSL connection has been closed unexpectedly"
                                              : "server closed the connection unexpectedly");
        return fatal(t, PGW_ECONNLOST);
    }
    if (e == SSL_ERROR_SSL) return ssl_failure(t);
    char buf[256];
    snprintf(t->err, sizeof t->err, "unrecognized SSL error code: %d (%s)", e,
             pgw__tls_ssl_errstr(ERR_peek_last_error(), buf, sizeof buf));
    return fatal(t, PGW_ETLS);
}

/* ---- construction ---- */

/* libpq sends SNI unless host looks like an IP address: all digits and
 * dots, or containing a ':'. */
static bool wants_sni(const char *host)
{
    return host && *host && strspn(host, "0123456789.") != strlen(host) && !strchr(host, ':');
}

/* The server asked for a client certificate: remember that, and whether
 * one is loaded to answer with (libpq's cert_cb). */
static int on_cert_request(SSL *ssl, void *arg)
{
    pgw__tls_t *t = arg;
    t->cert_requested = true;
    if (SSL_get_certificate(ssl)) t->cert_sent = true;
    return 1; /* go on: the certificate (if any) is already in the context */
}

static int setup_ssl(pgw__tls_t *t, const pgw__tls_conn_config_t *cfg, char *err, size_t errlen)
{
    char buf[256];
    size_t ring = cfg->ring_size ? cfg->ring_size : RING_SIZE_DEFAULT;
    BIO *inner = NULL;
    t->ssl = SSL_new(t->ctx->ssl_ctx);
    if (!t->ssl || !BIO_new_bio_pair(&inner, ring, &t->net, ring)) return PGW_ENOMEM;
    SSL_set_bio(t->ssl, inner, inner);
    SSL_set_connect_state(t->ssl);
    SSL_set_cert_cb(t->ssl, on_cert_request, t);
    SSL_set_app_data(t->ssl, t); /* for pgw__tls_warn */
    if (cfg->sni && wants_sni(t->host) && SSL_set_tlsext_host_name(t->ssl, t->host) != 1)
        return pgw__fail_msg(err, errlen, PGW_ETLS,
                             "could not set SSL Server Name Indication (SNI): %s",
                             pgw__tls_ssl_errstr(ERR_get_error(), buf, sizeof buf));
    /* Offered always, as libpq 17 does; required only in direct mode. */
    if (SSL_set_alpn_protos(t->ssl, alpn_offer, sizeof alpn_offer - 1) != 0)
        return pgw__fail_msg(err, errlen, PGW_ETLS, "could not set SSL ALPN extension: %s",
                             pgw__tls_ssl_errstr(ERR_get_error(), buf, sizeof buf));
    return 0;
}

int pgw__tls_new(pgw__tls_t **out, pgw__tls_ctx_t *ctx, const pgw__tls_conn_config_t *cfg,
                 const pgw_allocator_t *alloc, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!ctx || !cfg) return pgw__fail_msg(err, errlen, PGW_EINVAL, "no TLS context");
    pgw__tls_t *t = pgw__calloc(alloc, 1, sizeof *t);
    if (!t) return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    t->alloc = alloc;
    t->ctx = pgw__tls_ctx_ref(ctx);
    t->direct = cfg->direct != 0;
    int rc = 0;
    if (cfg->host && *cfg->host && !(t->host = pgw__strdup(alloc, cfg->host))) rc = PGW_ENOMEM;
    ERR_clear_error();
    if (rc == 0) rc = setup_ssl(t, cfg, err, errlen);
    if (rc != 0) {
        if (rc == PGW_ENOMEM) pgw__fail_msg(err, errlen, rc, "out of memory");
        pgw__tls_free(t);
        ERR_clear_error();
        return rc;
    }
    *out = t;
    return 0;
}

void pgw__tls_free(pgw__tls_t *t)
{
    if (!t) return;
    const pgw_allocator_t *alloc = t->alloc;
    SSL_free(t->ssl); /* frees its end of the pair */
    BIO_free(t->net);
    X509_free(t->peer);
    OPENSSL_free(t->peer_der);
    pgw__free(alloc, t->peer_subject);
    pgw__free(alloc, t->host);
    pgw__tls_ctx_unref(t->ctx);
    pgw__free(alloc, t);
}

/* ---- handshake ---- */

static int check_alpn(pgw__tls_t *t)
{
    const unsigned char *sel = NULL;
    unsigned int len = 0;
    SSL_get0_alpn_selected(t->ssl, &sel, &len);
    if (sel && len) {
        memcpy(t->alpn, sel, len < sizeof t->alpn ? len : sizeof t->alpn - 1);
    }
    if (!t->direct) return 0;
    if (!sel) {
        snprintf(t->err, sizeof t->err, "%s",
                 "direct SSL connection was established without ALPN protocol negotiation "
                 "extension");
        return fatal(t, PGW_ETLS);
    }
    if (len != ALPN_NAME_LEN || memcmp(sel, ALPN_NAME, ALPN_NAME_LEN) != 0) {
        snprintf(t->err, sizeof t->err, "%s",
                 "SSL connection was established with unexpected ALPN protocol");
        return fatal(t, PGW_ETLS);
    }
    return 0;
}

/* The subject (RFC 2253) and DER of the peer, kept for pgw__tls_info. */
static int keep_peer(pgw__tls_t *t)
{
    BIO *mem = BIO_new(BIO_s_mem());
    if (!mem) return PGW_ENOMEM;
    char *data = NULL;
    int rc = PGW_ENOMEM;
    if (X509_NAME_print_ex(mem, X509_get_subject_name(t->peer), 0, XN_FLAG_RFC2253) >= 0) {
        long len = BIO_get_mem_data(mem, &data);
        t->peer_subject = pgw__strndup(t->alloc, data ? data : "", len > 0 ? (size_t)len : 0);
        if (t->peer_subject) rc = 0;
    }
    BIO_free(mem);
    if (rc == 0) {
        t->peer_der_len = i2d_X509(t->peer, &t->peer_der);
        if (t->peer_der_len <= 0) rc = PGW_ENOMEM;
    }
    return rc;
}

static int finish_handshake(pgw__tls_t *t)
{
    char buf[256];
    int rc = check_alpn(t);
    if (rc != 0) return rc;
    t->peer = SSL_get1_peer_certificate(t->ssl);
    if (!t->peer) {
        snprintf(t->err, sizeof t->err, "certificate could not be obtained: %s",
                 pgw__tls_ssl_errstr(ERR_get_error(), buf, sizeof buf));
        return fatal(t, PGW_ETLS);
    }
    if (t->ctx->mode == PGW__SSLMODE_VERIFY_FULL &&
        pgw__tls_check_host(t->peer, t->host, t->err, sizeof t->err) != 1)
        return fatal(t, PGW_ETLS);
    if (keep_peer(t) != 0) {
        snprintf(t->err, sizeof t->err, "out of memory");
        return fatal(t, PGW_ENOMEM);
    }
    t->established = true;
    return 0;
}

int pgw__tls_handshake(pgw__tls_t *t)
{
    if (!t) return PGW_EINVAL;
    if (t->error) return t->error;
    if (t->established) return 0;
    t->started = true;
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    return r == 1 ? finish_handshake(t) : step_error(t, r, true);
}

int pgw__tls_established(const pgw__tls_t *t)
{
    return t && t->established;
}

/* ---- ciphertext ---- */

uint8_t *pgw__tls_input_space(pgw__tls_t *t, size_t *len)
{
    char *p = NULL;
    ossl_ssize_t n = t && !t->eof ? BIO_nwrite0(t->net, &p) : 0;
    if (len) *len = n > 0 ? (size_t)n : 0;
    return n > 0 ? (uint8_t *)p : NULL;
}

static int refuse_early_input(pgw__tls_t *t)
{
    snprintf(t->err, sizeof t->err, "%s", "received unencrypted data after SSL response");
    return fatal(t, PGW_EPROTO);
}

int pgw__tls_input_commit(pgw__tls_t *t, size_t n)
{
    if (!t) return PGW_EINVAL;
    if (n == 0) return 0;
    if (!t->started) return refuse_early_input(t);
    char *p = NULL;
    ossl_ssize_t room = t->eof ? 0 : BIO_nwrite0(t->net, &p);
    if (room <= 0 || n > (size_t)room) return PGW_EINVAL;
    BIO_nwrite(t->net, &p, (int)n);
    return 0;
}

int pgw__tls_feed(pgw__tls_t *t, const uint8_t *p, size_t n, size_t *used)
{
    if (used) *used = 0;
    if (!t || (!p && n) || !used) return PGW_EINVAL;
    if (n && !t->started) return refuse_early_input(t);
    while (*used < n) {
        size_t room;
        uint8_t *dst = pgw__tls_input_space(t, &room);
        if (!dst) break;
        size_t k = n - *used < room ? n - *used : room;
        memcpy(dst, p + *used, k);
        pgw__tls_input_commit(t, k);
        *used += k;
    }
    return 0;
}

void pgw__tls_input_eof(pgw__tls_t *t)
{
    if (!t || t->eof) return;
    t->eof = true;
    BIO_shutdown_wr(t->net);
}

const uint8_t *pgw__tls_output(pgw__tls_t *t, size_t *len)
{
    char *p = NULL;
    ossl_ssize_t n = t ? BIO_nread0(t->net, &p) : 0;
    if (len) *len = n > 0 ? (size_t)n : 0;
    return n > 0 ? (const uint8_t *)p : NULL;
}

void pgw__tls_output_consumed(pgw__tls_t *t, size_t n)
{
    char *p = NULL;
    if (!t || n == 0) return;
    ossl_ssize_t have = BIO_nread0(t->net, &p);
    if (have <= 0) return;
    BIO_nread(t->net, &p, (int)(n < (size_t)have ? n : (size_t)have));
}

/* ---- plaintext ---- */

static int check_ready(pgw__tls_t *t)
{
    if (t->error) return t->error;
    return t->established ? 0 : PGW_EBUSY;
}

int pgw__tls_read(pgw__tls_t *t, uint8_t *buf, size_t cap, size_t *n)
{
    if (n) *n = 0;
    if (!t || !buf || !cap || !n) return PGW_EINVAL;
    int rc = check_ready(t);
    if (rc != 0) return rc;
    ERR_clear_error();
    while (*n < cap) {
        size_t want = cap - *n < INT_MAX ? cap - *n : INT_MAX;
        int r = SSL_read(t->ssl, buf + *n, (int)want);
        if (r > 0) {
            *n += (size_t)r;
            continue;
        }
        rc = step_error(t, r, false);
        break;
    }
    /* Bytes before an error or EOF are good: hand them out first; the
     * sticky error is reported by the next call. */
    if (*n > 0) return 0;
    return rc == 0 ? PGW_EAGAIN : rc;
}

int pgw__tls_read_pending(const pgw__tls_t *t)
{
    return t && t->established && SSL_pending(t->ssl) > 0;
}

int pgw__tls_write(pgw__tls_t *t, const uint8_t *p, size_t len, size_t *written)
{
    if (written) *written = 0;
    if (!t || (!p && len) || !written) return PGW_EINVAL;
    int rc = check_ready(t);
    if (rc != 0) return rc;
    ERR_clear_error();
    while (*written < len) {
        size_t want = len - *written < INT_MAX ? len - *written : INT_MAX;
        int r = SSL_write(t->ssl, p + *written, (int)want);
        if (r > 0) {
            *written += (size_t)r;
            continue;
        }
        rc = step_error(t, r, false);
        return rc == PGW_EAGAIN ? 0 : rc;
    }
    return 0;
}

int pgw__tls_shutdown(pgw__tls_t *t)
{
    if (!t) return PGW_EINVAL;
    int rc = check_ready(t);
    if (rc != 0) return rc == PGW_EBUSY ? rc : 0; /* broken: nothing to say */
    ERR_clear_error();
    SSL_shutdown(t->ssl); /* queues close_notify; the answer is not awaited */
    ERR_clear_error();
    return 0;
}

void pgw__tls_warn(const SSL *ssl, const char *fmt, const char *path, int err)
{
    pgw__tls_t *t = SSL_get_app_data(ssl);
    if (!t || t->warning[0]) return; /* the first one says it */
    snprintf(t->warning, sizeof t->warning, fmt, path, strerror(err));
}

const char *pgw__tls_warning(const pgw__tls_t *t)
{
    return t ? t->warning : "";
}

const char *pgw__tls_errmsg(const pgw__tls_t *t)
{
    return t ? t->err : "";
}

/* ---- what was negotiated ---- */

int pgw__tls_info(pgw__tls_t *t, pgw_tls_info_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!t || !t->established) return 0;
    out->in_use = 1;
    out->library = "OpenSSL";
    out->protocol = SSL_get_version(t->ssl);
    out->cipher = SSL_get_cipher_name(t->ssl);
    out->key_bits = SSL_get_cipher_bits(t->ssl, NULL);
    out->compression = "off";
    out->alpn = t->alpn[0] ? t->alpn : NULL;
    out->peer_subject = t->peer_subject;
    out->peer_cert_der.p = t->peer_der;
    out->peer_cert_der.len = t->peer_der_len;
    return 0;
}

int pgw__tls_channel_binding(pgw__tls_t *t, uint8_t out[PGW__TLS_CB_MAX], size_t *len)
{
    if (len) *len = 0;
    if (!t || !out || !len) return PGW_EINVAL;
    if (!t->established) return PGW_EBUSY;
    int md_nid = NID_undef;
    if (!X509_get_signature_info(t->peer, &md_nid, NULL, NULL, NULL)) return PGW_ENOTSUP;
    /* RFC 5929 section 4.1: MD5 and SHA-1 are replaced by SHA-256. */
    const EVP_MD *md =
        md_nid == NID_md5 || md_nid == NID_sha1 ? EVP_sha256() : EVP_get_digestbynid(md_nid);
    unsigned int n = 0;
    if (!md || !X509_digest(t->peer, md, out, &n)) {
        ERR_clear_error();
        return PGW_ENOTSUP;
    }
    *len = n;
    return 0;
}

int pgw__tls_cert_requested(const pgw__tls_t *t)
{
    return t && t->cert_requested;
}

int pgw__tls_cert_sent(const pgw__tls_t *t)
{
    return t && t->cert_sent;
}
