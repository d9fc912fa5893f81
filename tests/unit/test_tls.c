/*
 * Unit tests of src/tls, from memory: certificates are made with OpenSSL's
 * API at run time (nothing on disk can expire), an in-memory OpenSSL server
 * talks to the engine, and the test moves the bytes between them. Each
 * sslmode x certificate case is checked against libpq's rules.
 */
#define _DEFAULT_SOURCE /* mkdtemp, setenv */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "failalloc.h"
#include "tls/tls_internal.h"

/* ---- fixtures: a temporary directory, keys and certificates ---- */

static char g_dir[256];  /* files for this test run */
static char g_home[300]; /* $HOME of the current test */
static EVP_PKEY *g_ca_key, *g_key, *g_client_key;
static X509 *g_ca;

static const char *path(const char *name)
{
    /* A ring long enough that a test's configuration strings outlive it. */
    static char buf[256][512];
    static int next;
    char *p = buf[next++ % 256];
    snprintf(p, 512, "%s/%s", g_dir, name);
    return p;
}

static EVP_PKEY *ec_key(void)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    assert_non_null(k);
    return k;
}

typedef struct cert_spec {
    const char *cn;       /* NULL: no CN */
    const char *san;      /* "DNS:a,IP:1.2.3.4" or NULL */
    long not_before_days; /* relative to now */
    long not_after_days;
    int is_ca;
    long serial;
    const EVP_MD *md; /* NULL: SHA-256 */
    const char *raw_dns;
    size_t raw_dns_len; /* a SAN dNSName with arbitrary bytes (embedded NUL) */
    const char *raw_cn;
    size_t raw_cn_len;
} cert_spec_t;

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    assert_non_null(ext);
    assert_int_equal(X509_add_ext(x, ext, -1), 1);
    X509_EXTENSION_free(ext);
}

static void add_raw_dns_san(X509 *x, const char *name, size_t len)
{
    GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
    GENERAL_NAME *gn = GENERAL_NAME_new();
    ASN1_IA5STRING *s = ASN1_IA5STRING_new();
    assert_int_equal(ASN1_STRING_set(s, name, (int)len), 1);
    GENERAL_NAME_set0_value(gn, GEN_DNS, s);
    sk_GENERAL_NAME_push(names, gn);
    assert_int_equal(X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, 0), 1);
    GENERAL_NAMES_free(names);
}

/* A certificate for key, signed by issuer (NULL: self-signed). */
static X509 *make_cert(EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, const cert_spec_t *s)
{
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), s->serial ? s->serial : 1);
    X509_gmtime_adj(X509_getm_notBefore(x),
                    (s->not_before_days ? s->not_before_days : -1) * 86400L);
    X509_gmtime_adj(X509_getm_notAfter(x), (s->not_after_days ? s->not_after_days : 30) * 86400L);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"pgwire tests", -1,
                               -1, 0);
    if (s->cn)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)s->cn, -1, -1,
                                   0);
    if (s->raw_cn)
        X509_NAME_add_entry_by_txt(name, "CN", V_ASN1_IA5STRING, (const unsigned char *)s->raw_cn,
                                   (int)s->raw_cn_len, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509 *iss = issuer ? issuer : x;
    if (s->is_ca) {
        add_ext(x, iss, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, iss, NID_key_usage, "critical,keyCertSign,cRLSign");
    }
    add_ext(x, iss, NID_subject_key_identifier, "hash");
    if (s->san) add_ext(x, iss, NID_subject_alt_name, s->san);
    if (s->raw_dns) add_raw_dns_san(x, s->raw_dns, s->raw_dns_len);
    assert_true(X509_sign(x, issuer_key ? issuer_key : key, s->md ? s->md : EVP_sha256()) > 0);
    return x;
}

static void write_cert(const char *file, X509 *x)
{
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_X509(f, x), 1);
    fclose(f);
}

static void write_key(const char *file, EVP_PKEY *k, const char *password, mode_t mode)
{
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    int ok = password
                 ? PEM_write_PrivateKey(f, k, EVP_aes_256_cbc(), NULL, 0, NULL, (void *)password)
                 : PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
    assert_int_equal(ok, 1);
    fclose(f);
    assert_int_equal(chmod(file, mode), 0);
}

/* A CRL from the CA revoking serial (0: revoking nothing). */
static void write_crl(const char *file, long serial)
{
    X509_CRL *crl = X509_CRL_new();
    X509_CRL_set_version(crl, 1);
    X509_CRL_set_issuer_name(crl, X509_get_subject_name(g_ca));
    ASN1_TIME *t = ASN1_TIME_adj(NULL, time(NULL), -1, 0);
    X509_CRL_set1_lastUpdate(crl, t);
    ASN1_TIME_adj(t, time(NULL), 30, 0);
    X509_CRL_set1_nextUpdate(crl, t);
    if (serial) {
        X509_REVOKED *r = X509_REVOKED_new();
        ASN1_INTEGER *sn = ASN1_INTEGER_new();
        ASN1_INTEGER_set(sn, serial);
        X509_REVOKED_set_serialNumber(r, sn);
        ASN1_TIME_adj(t, time(NULL), -1, 0);
        X509_REVOKED_set_revocationDate(r, t);
        X509_CRL_add0_revoked(crl, r);
        ASN1_INTEGER_free(sn);
    }
    ASN1_TIME_free(t);
    assert_true(X509_CRL_sign(crl, g_ca_key, EVP_sha256()) > 0);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    PEM_write_X509_CRL(f, crl);
    fclose(f);
    X509_CRL_free(crl);
}

/* Server certificates by name, all with key g_key unless stated. */
static void make_server_cert(const char *name, const cert_spec_t *s, int self_signed)
{
    char file[64];
    X509 *x = self_signed ? make_cert(g_key, NULL, NULL, s) : make_cert(g_key, g_ca, g_ca_key, s);
    snprintf(file, sizeof file, "%s.crt", name);
    write_cert(path(file), x);
    X509_free(x);
}

static int group_setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/pgw-test-tls-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    g_ca_key = ec_key();
    g_key = ec_key();
    g_client_key = ec_key();
    g_ca = make_cert(g_ca_key, NULL, NULL,
                     &(cert_spec_t){.cn = "pgwire test CA", .is_ca = 1, .not_after_days = 365});
    write_cert(path("ca.crt"), g_ca);
    write_key(path("server.key"), g_key, NULL, 0600);
    make_server_cert("good", &(cert_spec_t){.cn = "localhost", .san = "DNS:localhost", .serial = 2},
                     0);
    make_server_cert("ip", &(cert_spec_t){.cn = "ip", .san = "IP:127.0.0.1,IP:::1", .serial = 3},
                     0);
    make_server_cert("cnonly", &(cert_spec_t){.cn = "localhost", .serial = 4}, 0);
    make_server_cert("dnsnotcn",
                     &(cert_spec_t){.cn = "localhost", .san = "DNS:other.example.com", .serial = 5},
                     0);
    make_server_cert("wildcard", &(cert_spec_t){.cn = "w", .san = "DNS:*.example.com", .serial = 6},
                     0);
    make_server_cert("wronghost",
                     &(cert_spec_t){.cn = "wrong", .san = "DNS:wrong.example.com", .serial = 7}, 0);
    make_server_cert("selfsigned", &(cert_spec_t){.cn = "localhost", .san = "DNS:localhost"}, 1);
    make_server_cert("expired",
                     &(cert_spec_t){.cn = "localhost",
                                    .san = "DNS:localhost",
                                    .serial = 8,
                                    .not_before_days = -60,
                                    .not_after_days = -30},
                     0);
    static const char nul_name[] = "localhost\0.evil.example.com";
    make_server_cert(
        "nulsan",
        &(cert_spec_t){
            .cn = "x", .raw_dns = nul_name, .raw_dns_len = sizeof nul_name - 1, .serial = 9},
        0);
    make_server_cert(
        "nulcn",
        &(cert_spec_t){.raw_cn = nul_name, .raw_cn_len = sizeof nul_name - 1, .serial = 10}, 0);
    make_server_cert("ipcn",
                     &(cert_spec_t){.cn = "127.0.0.1", .san = "DNS:localhost", .serial = 11}, 0);
    make_server_cert(
        "sha384",
        &(cert_spec_t){.cn = "localhost", .san = "DNS:localhost", .serial = 12, .md = EVP_sha384()},
        0);
    /* The client certificate and its keys (plain 0600, 0644, encrypted). */
    X509 *client =
        make_cert(g_client_key, g_ca, g_ca_key, &(cert_spec_t){.cn = "certuser", .serial = 20});
    write_cert(path("client.crt"), client);
    X509_free(client);
    write_key(path("client.key"), g_client_key, NULL, 0600);
    write_key(path("client-0644.key"), g_client_key, NULL, 0644);
    write_key(path("client-enc.key"), g_client_key, "s3cret", 0600);
    write_key(path("other.key"), g_key, NULL, 0600);
    write_crl(path("revoke-good.crl"), 2);
    return 0;
}

static int group_teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) return -1;
    X509_free(g_ca);
    EVP_PKEY_free(g_ca_key);
    EVP_PKEY_free(g_key);
    EVP_PKEY_free(g_client_key);
    return 0;
}

/* Every test starts with an empty $HOME: no default files. */
static int test_setup(void **state)
{
    static int n;
    snprintf(g_home, sizeof g_home, "%s/home%d", g_dir, n++);
    assert_int_equal(mkdir(g_home, 0700), 0);
    setenv("HOME", g_home, 1);
    return 0;
}

static void home_file(const char *src, const char *name, mode_t mode)
{
    char dir[400], dst[500], cmd[1200];
    snprintf(dir, sizeof dir, "%s/.postgresql", g_home);
    mkdir(dir, 0700);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod %o '%s'", src, dst, (unsigned)mode, dst);
    assert_int_equal(system(cmd), 0);
}

/* ---- the in-memory server ---- */

typedef struct server_opts {
    const char *cert; /* file name in g_dir, e.g. "good.crt" */
    const char *key;  /* default server.key */
    int max_proto;    /* 0: none */
    int min_proto;
    const char *alpn; /* protocol to select; NULL: ignore ALPN */
    int want_client_cert;
} server_opts_t;

typedef struct server {
    SSL_CTX *ctx;
    SSL *ssl;
    BIO *in, *out; /* memory BIOs: in is what the client sent */
    char sni[256];
    const char *alpn;
    int done;
} server_t;

static int on_sni(SSL *ssl, int *alert, void *arg)
{
    server_t *s = arg;
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    snprintf(s->sni, sizeof s->sni, "%s", name ? name : "");
    return SSL_TLSEXT_ERR_OK;
}

static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                   const unsigned char *in, unsigned int inlen, void *arg)
{
    server_t *s = arg;
    if (!s->alpn) return SSL_TLSEXT_ERR_NOACK;
    *out = (const unsigned char *)s->alpn;
    *outlen = (unsigned char)strlen(s->alpn);
    return SSL_TLSEXT_ERR_OK;
}

static void server_start(server_t *s, const server_opts_t *o)
{
    memset(s, 0, sizeof *s);
    s->ctx = SSL_CTX_new(TLS_server_method());
    assert_int_equal(SSL_CTX_use_certificate_file(s->ctx, path(o->cert), SSL_FILETYPE_PEM), 1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(s->ctx, path(o->key ? o->key : "server.key"), SSL_FILETYPE_PEM),
        1);
    if (o->max_proto) SSL_CTX_set_max_proto_version(s->ctx, o->max_proto);
    if (o->min_proto) SSL_CTX_set_min_proto_version(s->ctx, o->min_proto);
    SSL_CTX_set_tlsext_servername_callback(s->ctx, on_sni);
    SSL_CTX_set_tlsext_servername_arg(s->ctx, s);
    s->alpn = o->alpn;
    SSL_CTX_set_alpn_select_cb(s->ctx, on_alpn, s);
    if (o->want_client_cert) {
        SSL_CTX_load_verify_locations(s->ctx, path("ca.crt"), NULL);
        SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    s->ssl = SSL_new(s->ctx);
    s->in = BIO_new(BIO_s_mem());
    s->out = BIO_new(BIO_s_mem());
    SSL_set_bio(s->ssl, s->in, s->out);
    SSL_set_accept_state(s->ssl);
}

static void server_stop(server_t *s)
{
    SSL_free(s->ssl);
    SSL_CTX_free(s->ctx);
}

/* Move every pending byte both ways; returns how many moved. */
static size_t shuttle(pgw__tls_t *t, server_t *s)
{
    size_t moved = 0, len;
    const uint8_t *p;
    while ((p = pgw__tls_output(t, &len)) != NULL) {
        assert_int_equal(BIO_write(s->in, p, (int)len), (int)len);
        pgw__tls_output_consumed(t, len);
        moved += len;
    }
    /* Server to client through the zero-copy input path, as far as the
     * client's ring has room. */
    uint8_t *space;
    int n;
    while ((space = pgw__tls_input_space(t, &len)) != NULL &&
           (n = BIO_read(s->out, space, (int)len)) > 0) {
        assert_int_equal(pgw__tls_input_commit(t, (size_t)n), 0);
        moved += (size_t)n;
    }
    return moved;
}

static void server_step(server_t *s)
{
    if (!s->done) {
        int r = SSL_do_handshake(s->ssl);
        if (r == 1) s->done = 1;
    }
}

/* Run the handshake to its end; returns the engine's last code. */
static int handshake(pgw__tls_t *t, server_t *s)
{
    int rc = PGW_EAGAIN;
    for (int i = 0; i < 50 && rc == PGW_EAGAIN; i++) {
        rc = pgw__tls_handshake(t);
        shuttle(t, s);
        server_step(s);
        shuttle(t, s);
    }
    server_step(s);
    return rc;
}

/* ---- a client under test ---- */

typedef struct client {
    pgw__tls_ctx_t *ctx;
    pgw__tls_t *t;
    server_t s;
    char err[PGW__TLS_ERRLEN];
    int rc; /* handshake result, or the context/session error */
} client_t;

static const pgw__tls_conn_config_t localhost = {.host = "localhost", .sni = 1};

/* Build context and session, run the handshake against the server. */
static int connect_to(client_t *c, const pgw__tls_config_t *cfg, const pgw__tls_conn_config_t *cc,
                      const server_opts_t *so)
{
    memset(c, 0, sizeof *c);
    c->rc = pgw__tls_ctx_new(&c->ctx, cfg, NULL, c->err, sizeof c->err);
    if (c->rc != 0) return c->rc;
    c->rc = pgw__tls_new(&c->t, c->ctx, cc ? cc : &localhost, NULL, c->err, sizeof c->err);
    if (c->rc != 0) return c->rc;
    server_start(&c->s, so);
    c->rc = handshake(c->t, &c->s);
    if (c->rc != 0) snprintf(c->err, sizeof c->err, "%s", pgw__tls_errmsg(c->t));
    return c->rc;
}

static void client_done(client_t *c)
{
    if (c->t) server_stop(&c->s);
    pgw__tls_free(c->t);
    pgw__tls_ctx_unref(c->ctx);
}

/* Expect the handshake (or setup) to fail with code and a message
 * containing want. */
static void expect_failure(const pgw__tls_config_t *cfg, const pgw__tls_conn_config_t *cc,
                           const server_opts_t *so, int code, const char *want)
{
    client_t c;
    int rc = connect_to(&c, cfg, cc, so);
    if (rc != code || !strstr(c.err, want))
        fail_msg("rc %d (%s), message \"%s\"; wanted %d with \"%s\"", rc, pgw_err_name(rc), c.err,
                 code, want);
    client_done(&c);
}

static void expect_success(const pgw__tls_config_t *cfg, const pgw__tls_conn_config_t *cc,
                           const server_opts_t *so)
{
    client_t c;
    int rc = connect_to(&c, cfg, cc, so);
    if (rc != 0) fail_msg("rc %d (%s): %s", rc, pgw_err_name(rc), c.err);
    assert_true(pgw__tls_established(c.t));
    client_done(&c);
}

#define CFG(...) (&(pgw__tls_config_t){__VA_ARGS__})
#define SRV(...) (&(server_opts_t){__VA_ARGS__})

/* ---- sslmode x certificate ---- */

static void test_verify_full_good_host(void **state)
{
    client_t c;
    assert_int_equal(connect_to(&c, CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt")),
                                NULL, SRV(.cert = "good.crt")),
                     0);
    pgw_tls_info_t info;
    assert_int_equal(pgw__tls_info(c.t, &info), 0);
    assert_int_equal(info.in_use, 1);
    assert_string_equal(info.library, "OpenSSL");
    assert_string_equal(info.protocol, "TLSv1.3");
    assert_non_null(info.cipher);
    assert_true(info.key_bits >= 128);
    assert_string_equal(info.compression, "off");
    assert_null(info.alpn); /* the test server ignores ALPN unless told */
    assert_non_null(strstr(info.peer_subject, "CN=localhost"));
    assert_true(info.peer_cert_der.len > 100);
    assert_int_equal(info.peer_cert_der.p[0], 0x30); /* a DER SEQUENCE */
    assert_string_equal(c.s.sni, "localhost");
    assert_int_equal(pgw__tls_cert_requested(c.t), 0);
    client_done(&c);
}

static void test_verify_full_wrong_host_fails(void **state)
{
    expect_failure(CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "wronghost.crt"), PGW_ETLS,
                   "server certificate for \"wrong.example.com\" does not match host name "
                   "\"localhost\"");
}

static void test_verify_ca_accepts_wrong_host(void **state)
{
    expect_success(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "wronghost.crt"));
}

static void test_verify_full_needs_host(void **state)
{
    expect_failure(CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt")),
                   &(pgw__tls_conn_config_t){.host = NULL, .sni = 1}, SRV(.cert = "good.crt"),
                   PGW_ETLS, "host name must be specified for a verified SSL connection");
}

static void test_verify_full_ip_san(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"));
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "127.0.0.1", .sni = 1},
                   SRV(.cert = "ip.crt"));
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "::1", .sni = 1}, SRV(.cert = "ip.crt"));
    /* inet_aton's short form names the same address, as in libpq. */
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "127.1", .sni = 1},
                   SRV(.cert = "ip.crt"));
    expect_failure(cfg, &(pgw__tls_conn_config_t){.host = "127.0.0.2", .sni = 1},
                   SRV(.cert = "ip.crt"), PGW_ETLS,
                   "server certificate for \"127.0.0.1\" (and 1 other name) does not match host "
                   "name \"127.0.0.2\"");
    /* A DNS host with only IP SANs: no SAN of its kind, so libpq checks the
     * CN ("ip"). */
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "ip", .sni = 1}, SRV(.cert = "ip.crt"));
    expect_failure(cfg, &(pgw__tls_conn_config_t){.host = "ipx", .sni = 1}, SRV(.cert = "ip.crt"),
                   PGW_ETLS,
                   "server certificate for \"127.0.0.1\" (and 2 other names) does not match host "
                   "name \"ipx\"");
}

static void test_verify_full_cn_rules(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"));
    /* No SAN: the CN is checked. */
    expect_success(cfg, NULL, SRV(.cert = "cnonly.crt"));
    /* A DNS SAN exists: the CN (localhost) is ignored. */
    expect_failure(cfg, NULL, SRV(.cert = "dnsnotcn.crt"), PGW_ETLS,
                   "server certificate for \"other.example.com\" does not match host name "
                   "\"localhost\"");
    /* An IP host with only DNS SANs: libpq falls back to the CN. */
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "127.0.0.1", .sni = 1},
                   SRV(.cert = "ipcn.crt"));
}

static void test_verify_full_wildcard(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"));
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "db.example.com", .sni = 1},
                   SRV(.cert = "wildcard.crt"));
    expect_success(cfg, &(pgw__tls_conn_config_t){.host = "DB.Example.COM", .sni = 1},
                   SRV(.cert = "wildcard.crt"));
    expect_failure(cfg, &(pgw__tls_conn_config_t){.host = "a.b.example.com", .sni = 1},
                   SRV(.cert = "wildcard.crt"), PGW_ETLS,
                   "server certificate for \"*.example.com\" does not match");
    expect_failure(cfg, &(pgw__tls_conn_config_t){.host = "example.com", .sni = 1},
                   SRV(.cert = "wildcard.crt"), PGW_ETLS, "does not match host name");
}

static void test_name_match_rules(void **state)
{
    char err[256];
    assert_int_equal(pgw__tls_name_matches("LocalHost", 9, "localhost", err, sizeof err), 1);
    assert_int_equal(pgw__tls_name_matches("*.b.c", 5, "a.b.c", err, sizeof err), 1);
    assert_int_equal(pgw__tls_name_matches("*.b.c", 5, "x.a.b.c", err, sizeof err), 0);
    assert_int_equal(pgw__tls_name_matches("a.*.c", 5, "a.b.c", err, sizeof err), 0);
    assert_int_equal(pgw__tls_name_matches("*b.c", 4, "ab.c", err, sizeof err), 0);
    assert_int_equal(pgw__tls_name_matches("*.", 2, "a.", err, sizeof err), 0);
    assert_int_equal(pgw__tls_name_matches("a\0b", 3, "a", err, sizeof err), -1);
    assert_string_equal(err, "SSL certificate's name contains embedded null");
    assert_true(pgw__tls_is_ip_literal("10.1"));
    assert_true(pgw__tls_is_ip_literal("fe80::1"));
    assert_false(pgw__tls_is_ip_literal("db.example.com"));
}

static void test_embedded_nul_names_fail(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"));
    expect_failure(cfg, NULL, SRV(.cert = "nulsan.crt"), PGW_ETLS,
                   "SSL certificate's name contains embedded null");
    expect_failure(cfg, NULL, SRV(.cert = "nulcn.crt"), PGW_ETLS,
                   "SSL certificate's name contains embedded null");
    /* verify-ca does not look at names. */
    expect_success(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "nulsan.crt"));
}

static void test_require_without_root_accepts_self_signed(void **state)
{
    expect_success(CFG(.sslmode = "require"), NULL, SRV(.cert = "selfsigned.crt"));
    expect_success(CFG(.sslmode = "prefer"), NULL, SRV(.cert = "selfsigned.crt"));
    expect_success(CFG(.sslmode = "allow"), NULL, SRV(.cert = "wronghost.crt"));
}

static void test_require_with_root_verifies_chain(void **state)
{
    expect_failure(CFG(.sslmode = "require", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "selfsigned.crt"), PGW_ETLS, "SSL error: certificate verify failed");
    /* The chain, not the name: a wrong host passes. */
    expect_success(CFG(.sslmode = "require", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "wronghost.crt"));
    /* The default root file counts as given. */
    home_file(path("ca.crt"), "root.crt", 0644);
    expect_failure(CFG(.sslmode = "require"), NULL, SRV(.cert = "selfsigned.crt"), PGW_ETLS,
                   "certificate verify failed");
    expect_success(CFG(.sslmode = "verify-full"), NULL, SRV(.cert = "good.crt"));
}

static void test_verify_without_root_fails(void **state)
{
    char want[600];
    snprintf(want, sizeof want,
             "root certificate file \"%s/.postgresql/root.crt\" does not exist\nEither provide "
             "the file, use the system's trusted roots with sslrootcert=system, or change sslmode "
             "to disable server certificate verification.",
             g_home);
    expect_failure(CFG(.sslmode = "verify-ca"), NULL, SRV(.cert = "good.crt"), PGW_ETLS, want);
    expect_failure(CFG(.sslmode = "verify-full", .sslrootcert = path("missing.crt")), NULL,
                   SRV(.cert = "good.crt"), PGW_ETLS, "missing.crt\" does not exist");
}

static void test_self_signed_and_expired_fail_verify(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"));
    expect_failure(cfg, NULL, SRV(.cert = "selfsigned.crt"), PGW_ETLS,
                   "SSL error: certificate verify failed: self-signed certificate");
    expect_failure(cfg, NULL, SRV(.cert = "expired.crt"), PGW_ETLS,
                   "SSL error: certificate verify failed: certificate has expired");
    expect_failure(CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "expired.crt"), PGW_ETLS, "certificate has expired");
}

static void test_crl_revocation(void **state)
{
    expect_failure(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"),
                       .sslcrl = path("revoke-good.crl")),
                   NULL, SRV(.cert = "good.crt"), PGW_ETLS,
                   "certificate verify failed: certificate revoked");
    /* The CRL names only serial 2. */
    expect_success(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"),
                       .sslcrl = path("revoke-good.crl")),
                   NULL, SRV(.cert = "wronghost.crt"));
    /* The default CRL file is used when neither sslcrl nor sslcrldir is. */
    home_file(path("revoke-good.crl"), "root.crl", 0644);
    expect_failure(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt")), NULL,
                   SRV(.cert = "good.crt"), PGW_ETLS, "certificate revoked");
    /* A CRL that cannot be loaded is ignored, as libpq does. */
    expect_success(
        CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"), .sslcrl = path("no-such.crl")),
        NULL, SRV(.cert = "good.crt"));
    /* sslcrldir: a directory of CRLs named by issuer hash (openssl rehash). */
    char dir[400], file[500];
    snprintf(dir, sizeof dir, "%s/crls", g_home);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/%08lx.r0", dir,
             X509_NAME_hash_ex(X509_get_subject_name(g_ca), NULL, NULL, NULL));
    write_crl(file, 2);
    expect_failure(CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"), .sslcrldir = dir),
                   NULL, SRV(.cert = "good.crt"), PGW_ETLS, "certificate revoked");
}

/* ---- protocol versions ---- */

static void test_protocol_range(void **state)
{
    expect_failure(CFG(.sslmode = "require", .min_protocol = "TLSv1.3"), NULL,
                   SRV(.cert = "good.crt", .max_proto = TLS1_2_VERSION), PGW_ETLS,
                   "This may indicate that the server does not support any SSL protocol version "
                   "between TLSv1.3 and TLSv1.3.");
    client_t c;
    assert_int_equal(connect_to(&c, CFG(.sslmode = "require"), NULL,
                                SRV(.cert = "good.crt", .max_proto = TLS1_2_VERSION)),
                     0);
    pgw_tls_info_t info;
    pgw__tls_info(c.t, &info);
    assert_string_equal(info.protocol, "TLSv1.2");
    client_done(&c);
    assert_int_equal(connect_to(&c, CFG(.sslmode = "require", .max_protocol = "TLSv1.2"), NULL,
                                SRV(.cert = "good.crt")),
                     0);
    pgw__tls_info(c.t, &info);
    assert_string_equal(info.protocol, "TLSv1.2");
    client_done(&c);
    /* libpq's default minimum is TLSv1.2. */
    expect_failure(CFG(.sslmode = "require"), NULL,
                   SRV(.cert = "good.crt", .max_proto = TLS1_1_VERSION), PGW_ETLS,
                   "between TLSv1.2 and TLSv1.3");
}

static void test_protocol_settings_invalid(void **state)
{
    pgw__tls_ctx_t *ctx;
    char err[256];
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "require", .min_protocol = "TLSv9"),
                                      NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_null(ctx);
    assert_string_equal(err, "invalid value \"TLSv9\" for minimum SSL protocol version");
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "require", .max_protocol = "SSLv3"),
                                      NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_string_equal(err, "invalid value \"SSLv3\" for maximum SSL protocol version");
    assert_int_equal(pgw__tls_ctx_new(&ctx,
                                      CFG(.sslmode = "require", .min_protocol = "TLSv1.3",
                                          .max_protocol = "TLSv1.2"),
                                      NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_string_equal(err, "invalid SSL protocol version range");
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "bogus"), NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "disable"), NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "require", .sslrootcert = "system"),
                                      NULL, err, sizeof err),
                     PGW_EINVAL);
    assert_string_equal(
        err,
        "weak sslmode \"require\" may not be used with sslrootcert=system (use \"verify-full\")");
    /* sslrootcert=system with sslmode unset means verify-full. */
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslrootcert = "system"), NULL, err, sizeof err),
                     0);
    assert_int_equal(pgw__tls_ctx_sslmode(ctx), PGW__SSLMODE_VERIFY_FULL);
    pgw__tls_ctx_unref(ctx);
}

/* ---- SNI and ALPN ---- */

static void test_sni(void **state)
{
    client_t c;
    struct {
        const char *host;
        int sni;
        const char *seen;
    } cases[] = {
        {"localhost", 1, "localhost"}, {"127.0.0.1", 1, ""}, {"::1", 1, ""},
        {"localhost", 0, ""},          {"10.1", 1, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(
            connect_to(&c, CFG(.sslmode = "require"),
                       &(pgw__tls_conn_config_t){.host = cases[i].host, .sni = cases[i].sni},
                       SRV(.cert = "good.crt")),
            0);
        assert_string_equal(c.s.sni, cases[i].seen);
        client_done(&c);
    }
}

static void test_alpn_direct(void **state)
{
    const pgw__tls_conn_config_t direct = {.host = "localhost", .sni = 1, .direct = 1};
    client_t c;
    assert_int_equal(connect_to(&c, CFG(.sslmode = "require"), &direct,
                                SRV(.cert = "good.crt", .alpn = "postgresql")),
                     0);
    pgw_tls_info_t info;
    pgw__tls_info(c.t, &info);
    assert_string_equal(info.alpn, "postgresql");
    client_done(&c);
    expect_failure(CFG(.sslmode = "require"), &direct, SRV(.cert = "good.crt"), PGW_ETLS,
                   "direct SSL connection was established without ALPN protocol negotiation "
                   "extension");
    /* A protocol we did not offer: OpenSSL already refuses it. */
    expect_failure(CFG(.sslmode = "require"), &direct, SRV(.cert = "good.crt", .alpn = "http/1.1"),
                   PGW_ETLS, "SSL error");
    /* Without direct mode ALPN is offered but not required. */
    expect_success(CFG(.sslmode = "require"), NULL, SRV(.cert = "good.crt"));
}

/* ---- client certificates ---- */

static void test_client_cert_sent(void **state)
{
    client_t c;
    assert_int_equal(connect_to(&c,
                                CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"),
                                    .sslcert = path("client.crt"), .sslkey = path("client.key")),
                                NULL, SRV(.cert = "good.crt", .want_client_cert = 1)),
                     0);
    assert_int_equal(pgw__tls_cert_requested(c.t), 1);
    X509 *peer = SSL_get1_peer_certificate(c.s.ssl);
    assert_non_null(peer);
    char cn[64];
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
    assert_string_equal(cn, "certuser");
    X509_free(peer);
    client_done(&c);
}

/* With TLS 1.3 the server's refusal arrives after the client's Finished. */
static void expect_server_refuses_client(const pgw__tls_config_t *cfg)
{
    client_t c;
    int rc = connect_to(&c, cfg, NULL, SRV(.cert = "good.crt", .want_client_cert = 1));
    if (rc == 0) {
        uint8_t buf[64];
        size_t n;
        rc = pgw__tls_read(c.t, buf, sizeof buf, &n);
    }
    assert_int_equal(rc, PGW_ETLS);
    assert_non_null(strstr(pgw__tls_errmsg(c.t), "SSL error"));
    assert_int_equal(pgw__tls_cert_requested(c.t), 1);
    client_done(&c);
}

static void test_client_cert_missing_or_disabled(void **state)
{
    expect_server_refuses_client(CFG(.sslmode = "require"));
    expect_server_refuses_client(CFG(.sslmode = "require", .sslcertmode = "disable",
                                     .sslcert = path("client.crt"), .sslkey = path("client.key")));
}

static void test_client_default_files(void **state)
{
    home_file(path("client.crt"), "postgresql.crt", 0644);
    home_file(path("client.key"), "postgresql.key", 0600);
    expect_success(CFG(.sslmode = "require"), NULL, SRV(.cert = "good.crt", .want_client_cert = 1));
}

static void test_client_key_permissions(void **state)
{
    char want[700];
    snprintf(want, sizeof want,
             "private key file \"%s\" has group or world access; file must have permissions u=rw "
             "(0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less "
             "if owned by root",
             path("client-0644.key"));
    expect_failure(
        CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = path("client-0644.key")),
        NULL, SRV(.cert = "good.crt"), PGW_ETLS, want);
    snprintf(want, sizeof want, "certificate present, but not private key file \"%s\"",
             path("none.key"));
    expect_failure(
        CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = path("none.key")), NULL,
        SRV(.cert = "good.crt"), PGW_ETLS, want);
    /* Group-readable: allowed only for root-owned files (libpq's rule). */
    write_key(path("client-0640.key"), g_client_key, NULL, 0640);
    const pgw__tls_config_t *cfg0640 =
        CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = path("client-0640.key"));
    if (geteuid() == 0)
        expect_success(cfg0640, NULL, SRV(.cert = "good.crt", .want_client_cert = 1));
    else
        expect_failure(cfg0640, NULL, SRV(.cert = "good.crt"), PGW_ETLS,
                       "has group or world access");
    expect_failure(CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = g_dir), NULL,
                   SRV(.cert = "good.crt"), PGW_ETLS, "is not a regular file");
    expect_failure(
        CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = path("other.key")), NULL,
        SRV(.cert = "good.crt"), PGW_ETLS, "could not load private key file");
}

static void test_client_key_password(void **state)
{
    expect_success(CFG(.sslmode = "require", .sslcert = path("client.crt"),
                       .sslkey = path("client-enc.key"), .sslpassword = "s3cret"),
                   NULL, SRV(.cert = "good.crt", .want_client_cert = 1));
    expect_failure(CFG(.sslmode = "require", .sslcert = path("client.crt"),
                       .sslkey = path("client-enc.key"), .sslpassword = "wrong"),
                   NULL, SRV(.cert = "good.crt"), PGW_ETLS, "could not load private key file");
    expect_failure(
        CFG(.sslmode = "require", .sslcert = path("client.crt"), .sslkey = path("client-enc.key")),
        NULL, SRV(.cert = "good.crt"), PGW_ETLS, "could not load private key file");
}

/* ---- channel binding ---- */

static void check_binding(const char *cert, const EVP_MD *md)
{
    client_t c;
    assert_int_equal(connect_to(&c, CFG(.sslmode = "require"), NULL, SRV(.cert = cert)), 0);
    uint8_t cb[PGW__TLS_CB_MAX], want[EVP_MAX_MD_SIZE];
    size_t len;
    assert_int_equal(pgw__tls_channel_binding(c.t, cb, &len), 0);
    pgw_tls_info_t info;
    pgw__tls_info(c.t, &info);
    unsigned int want_len;
    assert_int_equal(
        EVP_Digest(info.peer_cert_der.p, (size_t)info.peer_cert_der.len, want, &want_len, md, NULL),
        1);
    assert_int_equal(len, want_len);
    assert_memory_equal(cb, want, len);
    client_done(&c);
}

static void test_channel_binding_rsa_sha256(void **state)
{
    /* An RSA key with an RSA-SHA256 signature: the hash is SHA-256 of the DER. */
    EVP_PKEY *rsa = EVP_RSA_gen(2048);
    assert_non_null(rsa);
    X509 *x = make_cert(rsa, g_ca, g_ca_key, &(cert_spec_t){.cn = "localhost", .serial = 30});
    X509 *self = make_cert(rsa, NULL, NULL, &(cert_spec_t){.cn = "localhost", .serial = 31});
    assert_int_equal(X509_get_signature_nid(self), NID_sha256WithRSAEncryption);
    write_cert(path("rsa.crt"), self);
    write_key(path("rsa.key"), rsa, NULL, 0600);
    X509_free(x);
    X509_free(self);
    EVP_PKEY_free(rsa);
    client_t c;
    assert_int_equal(
        connect_to(&c, CFG(.sslmode = "require"), NULL, SRV(.cert = "rsa.crt", .key = "rsa.key")),
        0);
    uint8_t cb[PGW__TLS_CB_MAX], want[SHA256_DIGEST_LENGTH];
    size_t len;
    assert_int_equal(pgw__tls_channel_binding(c.t, cb, &len), 0);
    pgw_tls_info_t info;
    pgw__tls_info(c.t, &info);
    SHA256(info.peer_cert_der.p, (size_t)info.peer_cert_der.len, want);
    assert_int_equal(len, SHA256_DIGEST_LENGTH);
    assert_memory_equal(cb, want, len);
    client_done(&c);
}

static void test_channel_binding_follows_signature_hash(void **state)
{
    check_binding("good.crt", EVP_sha256());   /* ecdsa-with-SHA256 */
    check_binding("sha384.crt", EVP_sha384()); /* ecdsa-with-SHA384 */
}

/* ---- data, flow control and closing ---- */

static void test_data_both_ways_small_rings(void **state)
{
    client_t c;
    memset(&c, 0, sizeof c);
    assert_int_equal(pgw__tls_ctx_new(&c.ctx, CFG(.sslmode = "require"), NULL, c.err, sizeof c.err),
                     0);
    /* Rings just over one record force partial writes and reads. */
    pgw__tls_conn_config_t cc = {.host = "localhost", .sni = 1, .ring_size = 20000};
    assert_int_equal(pgw__tls_new(&c.t, c.ctx, &cc, NULL, c.err, sizeof c.err), 0);
    server_start(&c.s, SRV(.cert = "good.crt"));
    assert_int_equal(handshake(c.t, &c.s), 0);

    size_t total = 300000;
    uint8_t *src = malloc(total), *dst = malloc(total);
    for (size_t i = 0; i < total; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    /* client -> server */
    size_t sent = 0, got = 0;
    while (got < total) {
        size_t w = 0;
        if (sent < total) assert_int_equal(pgw__tls_write(c.t, src + sent, total - sent, &w), 0);
        sent += w;
        size_t len;
        const uint8_t *p = pgw__tls_output(c.t, &len);
        if (p) {
            BIO_write(c.s.in, p, (int)len);
            pgw__tls_output_consumed(c.t, len);
        }
        int r;
        while ((r = SSL_read(c.s.ssl, dst + got, (int)(total - got))) > 0)
            got += (size_t)r;
    }
    assert_memory_equal(src, dst, total);

    /* server -> client, fed through the zero-copy input path */
    memset(dst, 0, total);
    assert_int_equal(SSL_write(c.s.ssl, src, (int)total), (int)total);
    got = 0;
    uint8_t *chunk = dst;
    while (got < total) {
        size_t room;
        uint8_t *space = pgw__tls_input_space(c.t, &room);
        if (space) {
            int n = BIO_read(c.s.out, space, (int)room);
            if (n > 0) assert_int_equal(pgw__tls_input_commit(c.t, (size_t)n), 0);
        }
        size_t n = 0;
        int rc = pgw__tls_read(c.t, chunk + got, total - got, &n);
        assert_true(rc == 0 || rc == PGW_EAGAIN);
        got += n;
        shuttle(c.t, &c.s); /* TLS 1.3 tickets may want no answer, but flush anyway */
    }
    assert_memory_equal(src, dst, total);

    /* The server closes: ECONNLOST after the last bytes. */
    SSL_shutdown(c.s.ssl);
    shuttle(c.t, &c.s);
    size_t n;
    assert_int_equal(pgw__tls_read(c.t, dst, 10, &n), PGW_ECONNLOST);
    assert_string_equal(pgw__tls_errmsg(c.t), "SSL connection has been closed unexpectedly");
    free(src);
    free(dst);
    client_done(&c);
}

/* A require-mode context and a session on it, handshake not started. */
static void fresh_session(pgw__tls_ctx_t **ctx, pgw__tls_t **t)
{
    assert_int_equal(pgw__tls_ctx_new(ctx, CFG(.sslmode = "require"), NULL, NULL, 0), 0);
    assert_int_equal(pgw__tls_new(t, *ctx, &localhost, NULL, NULL, 0), 0);
}

static void test_socket_eof(void **state)
{
    client_t c;
    assert_int_equal(connect_to(&c, CFG(.sslmode = "require"), NULL, SRV(.cert = "good.crt")), 0);
    uint8_t buf[16];
    size_t n;
    assert_int_equal(pgw__tls_read(c.t, buf, sizeof buf, &n), PGW_EAGAIN);
    pgw__tls_input_eof(c.t);
    assert_int_equal(pgw__tls_read(c.t, buf, sizeof buf, &n), PGW_ECONNLOST);
    assert_int_equal(pgw__tls_read(c.t, buf, sizeof buf, &n), PGW_ECONNLOST); /* sticky */
    assert_null(pgw__tls_input_space(c.t, &n));
    assert_int_equal(n, 0);
    client_done(&c);

    /* Mid-handshake. */
    pgw__tls_ctx_t *ctx;
    pgw__tls_t *t;
    fresh_session(&ctx, &t);
    assert_int_equal(pgw__tls_handshake(t), PGW_EAGAIN);
    pgw__tls_input_eof(t);
    assert_int_equal(pgw__tls_handshake(t), PGW_ECONNLOST);
    assert_string_equal(pgw__tls_errmsg(t), "SSL SYSCALL error: EOF detected");
    pgw__tls_free(t);
    pgw__tls_ctx_unref(ctx);
}

static void test_garbage_from_server(void **state)
{
    pgw__tls_ctx_t *ctx;
    pgw__tls_t *t;
    fresh_session(&ctx, &t);
    assert_int_equal(pgw__tls_handshake(t), PGW_EAGAIN);
    size_t used;
    /* A plaintext ErrorResponse where a ServerHello should be. */
    static const uint8_t junk[] = "E\0\0\0\x20SFATAL\0C28000\0Mno way\0\0";
    assert_int_equal(pgw__tls_feed(t, junk, sizeof junk, &used), 0);
    assert_int_equal(pgw__tls_handshake(t), PGW_ETLS);
    assert_non_null(strstr(pgw__tls_errmsg(t), "SSL error: "));
    assert_int_equal(pgw__tls_handshake(t), PGW_ETLS); /* sticky */
    uint8_t buf[4];
    size_t n;
    assert_int_equal(pgw__tls_read(t, buf, sizeof buf, &n), PGW_ETLS);
    pgw__tls_free(t);
    pgw__tls_ctx_unref(ctx);
}

/* ---- pre-TLS injection ---- */

static void test_bytes_before_handshake_refused(void **state)
{
    pgw__tls_ctx_t *ctx;
    pgw__tls_t *t;
    fresh_session(&ctx, &t);
    size_t used, room;
    assert_int_equal(pgw__tls_feed(t, (const uint8_t *)"Z", 1, &used), PGW_EPROTO);
    assert_string_equal(pgw__tls_errmsg(t), "received unencrypted data after SSL response");
    assert_int_equal(pgw__tls_handshake(t), PGW_EPROTO);
    pgw__tls_free(t);
    assert_int_equal(pgw__tls_new(&t, ctx, &localhost, NULL, NULL, 0), 0);
    uint8_t *space = pgw__tls_input_space(t, &room);
    assert_non_null(space);
    space[0] = 'Z';
    assert_int_equal(pgw__tls_input_commit(t, 1), PGW_EPROTO);
    pgw__tls_free(t);
    pgw__tls_ctx_unref(ctx);
}

static void test_ssl_response(void **state)
{
    static const uint8_t e[] = "E\0\0\0\x10SFATAL\0Minjected\0";
    static const struct {
        pgw__sslmode_t mode;
        const char *bytes;
        size_t len;
        int rc;
        const char *err;
    } cases[] = {
        {PGW__SSLMODE_REQUIRE, "S", 1, PGW__TLS_START, ""},
        {PGW__SSLMODE_PREFER, "N", 1, PGW__TLS_PLAINTEXT, ""},
        {PGW__SSLMODE_ALLOW, "N", 1, PGW__TLS_PLAINTEXT, ""},
        {PGW__SSLMODE_REQUIRE, "N", 1, PGW_ETLS,
         "server does not support SSL, but SSL was required"},
        {PGW__SSLMODE_VERIFY_FULL, "N", 1, PGW_ETLS,
         "server does not support SSL, but SSL was required"},
        {PGW__SSLMODE_REQUIRE, "SZ", 2, PGW_EPROTO, "received unencrypted data after SSL response"},
        {PGW__SSLMODE_PREFER, "NZ", 2, PGW_EPROTO, "received unencrypted data after SSL response"},
        /* The unauthenticated server's text is neither read nor shown. */
        {PGW__SSLMODE_PREFER, (const char *)e, sizeof e, PGW_ETLS,
         "server sent an error response during SSL exchange"},
        {PGW__SSLMODE_REQUIRE, (const char *)e, sizeof e, PGW_ETLS,
         "server sent an error response during SSL exchange"},
        {PGW__SSLMODE_REQUIRE, "X", 1, PGW_EPROTO,
         "received invalid response to SSL negotiation: X"},
        {PGW__SSLMODE_REQUIRE, NULL, 0, PGW_EINVAL, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[128];
        int rc = pgw__tls_ssl_response(cases[i].mode, (const uint8_t *)cases[i].bytes, cases[i].len,
                                       err, sizeof err);
        assert_int_equal(rc, cases[i].rc);
        assert_string_equal(err, cases[i].err);
    }
}

/* ---- the shared context ---- */

/* A context knows when the files it read change on disk: a root
 * certificate rewritten, or a default file ($HOME/.postgresql/root.crt)
 * appearing. */
static void test_context_freshness(void **state)
{
    (void)state;
    char copy[600], cmd[1400];
    snprintf(copy, sizeof copy, "%s", path("fresh-ca.crt"));
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path("ca.crt"), copy);
    assert_int_equal(system(cmd), 0);
    pgw__tls_ctx_t *ctx;
    assert_int_equal(
        pgw__tls_ctx_new(&ctx, CFG(.sslmode = "verify-full", .sslrootcert = copy), NULL, NULL, 0),
        0);
    assert_true(pgw__tls_ctx_fresh(ctx));
    assert_true(pgw__tls_ctx_fresh(ctx));
    snprintf(cmd, sizeof cmd, "cat '%s' >> '%s'", path("ca.crt"), copy); /* rotated */
    assert_int_equal(system(cmd), 0);
    assert_false(pgw__tls_ctx_fresh(ctx));
    pgw__tls_ctx_unref(ctx);
    unlink(copy);
    /* a default file that appears */
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char dot[600], root[700];
    setenv("HOME", g_dir, 1);
    assert_int_equal(pgw__tls_ctx_new(&ctx, CFG(.sslmode = "require"), NULL, NULL, 0), 0);
    assert_true(pgw__tls_ctx_fresh(ctx));
    snprintf(dot, sizeof dot, "%s/.postgresql", g_dir);
    snprintf(root, sizeof root, "%s/root.crt", dot);
    mkdir(dot, 0700);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path("ca.crt"), root);
    assert_int_equal(system(cmd), 0);
    assert_false(pgw__tls_ctx_fresh(ctx));
    unlink(root);
    rmdir(dot);
    assert_true(pgw__tls_ctx_fresh(ctx));
    pgw__tls_ctx_unref(ctx);
    if (old_home) {
        setenv("HOME", old_home, 1);
        free(old_home);
    } else {
        unsetenv("HOME");
    }
    assert_false(pgw__tls_ctx_fresh(NULL));
}

static void test_context_sharing(void **state)
{
    const pgw__tls_config_t *cfg = CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"));
    pgw__tls_ctx_t *ctx;
    assert_int_equal(pgw__tls_ctx_new(&ctx, cfg, NULL, NULL, 0), 0);
    assert_true(pgw__tls_ctx_matches(ctx, cfg));
    assert_true(
        pgw__tls_ctx_matches(ctx, CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"),
                                      .min_protocol = "TLSv1.2", .sslcrl = "")));
    assert_false(
        pgw__tls_ctx_matches(ctx, CFG(.sslmode = "verify-ca", .sslrootcert = path("ca.crt"))));
    assert_false(pgw__tls_ctx_matches(ctx, CFG(.sslmode = "verify-full")));
    assert_false(pgw__tls_ctx_matches(
        ctx, CFG(.sslmode = "verify-full", .sslrootcert = path("ca.crt"), .sslpassword = "x")));
    assert_false(pgw__tls_ctx_matches(NULL, cfg));
    /* Two connections on one context; the context outlives its creator's
     * reference while sessions use it. */
    server_t s1, s2;
    pgw__tls_t *t1, *t2;
    assert_int_equal(pgw__tls_new(&t1, ctx, &localhost, NULL, NULL, 0), 0);
    assert_int_equal(pgw__tls_new(&t2, pgw__tls_ctx_ref(ctx), &localhost, NULL, NULL, 0), 0);
    pgw__tls_ctx_unref(ctx);
    pgw__tls_ctx_unref(ctx);
    server_start(&s1, SRV(.cert = "good.crt"));
    server_start(&s2, SRV(.cert = "good.crt"));
    assert_int_equal(handshake(t1, &s1), 0);
    assert_int_equal(handshake(t2, &s2), 0);
    pgw__tls_free(t1);
    pgw__tls_free(t2);
    server_stop(&s1);
    server_stop(&s2);
}

/* ---- allocation and NULL handles ---- */

static void test_allocator_and_oom(void **state)
{
    for (long left = 0; left <= 8; left++) {
        /* A budget: after `left` successful calls every call fails. */
        pgt_alloc_t cnt;
        pgw_allocator_t a = *pgt_alloc_init(&cnt);
        cnt.fail_at = left + 1;
        cnt.fail_rest = 1;
        pgw__tls_ctx_t *ctx = NULL;
        pgw__tls_t *t = NULL;
        server_t s;
        int rc = pgw__tls_ctx_new(&ctx, CFG(.sslmode = "require", .sslcrl = "x"), &a, NULL, 0);
        if (rc == 0) rc = pgw__tls_new(&t, ctx, &localhost, &a, NULL, 0);
        if (rc == 0) {
            server_start(&s, SRV(.cert = "good.crt"));
            rc = handshake(t, &s);
            server_stop(&s);
        }
        assert_true(rc == 0 || rc == PGW_ENOMEM);
        pgw__tls_free(t);
        pgw__tls_ctx_unref(ctx);
        assert_int_equal(cnt.blocks, 0);
    }
}

static void test_null_handles(void **state)
{
    size_t n = 5;
    uint8_t buf[PGW__TLS_CB_MAX];
    pgw_tls_info_t info;
    memset(&info, 0xAB, sizeof info);
    assert_int_equal(pgw__tls_info(NULL, &info), 0);
    assert_int_equal(info.in_use, 0);
    assert_null(info.protocol);
    assert_int_equal(pgw__tls_info(NULL, NULL), PGW_EINVAL);
    assert_string_equal(pgw__tls_errmsg(NULL), "");
    assert_int_equal(pgw__tls_handshake(NULL), PGW_EINVAL);
    assert_int_equal(pgw__tls_established(NULL), 0);
    assert_int_equal(pgw__tls_read(NULL, buf, sizeof buf, &n), PGW_EINVAL);
    assert_int_equal(n, 0);
    assert_int_equal(pgw__tls_write(NULL, buf, sizeof buf, &n), PGW_EINVAL);
    assert_int_equal(pgw__tls_feed(NULL, buf, 1, &n), PGW_EINVAL);
    assert_int_equal(pgw__tls_input_commit(NULL, 1), PGW_EINVAL);
    assert_null(pgw__tls_input_space(NULL, &n));
    assert_null(pgw__tls_output(NULL, &n));
    assert_int_equal(n, 0);
    assert_int_equal(pgw__tls_channel_binding(NULL, buf, &n), PGW_EINVAL);
    assert_int_equal(pgw__tls_shutdown(NULL), PGW_EINVAL);
    assert_int_equal(pgw__tls_cert_requested(NULL), 0);
    assert_int_equal(pgw__tls_read_pending(NULL), 0);
    assert_int_equal(pgw__tls_ctx_sslmode(NULL), PGW__SSLMODE_DISABLE);
    assert_null(pgw__tls_ctx_ref(NULL));
    pgw__tls_output_consumed(NULL, 1);
    pgw__tls_input_eof(NULL);
    pgw__tls_free(NULL);
    pgw__tls_ctx_unref(NULL);
    pgw__tls_ctx_t *ctx = (pgw__tls_ctx_t *)1;
    assert_int_equal(pgw__tls_ctx_new(&ctx, NULL, NULL, NULL, 0), PGW_EINVAL);
    assert_null(ctx);
    assert_int_equal(pgw__tls_ctx_new(NULL, CFG(.sslmode = "require"), NULL, NULL, 0), PGW_EINVAL);
    pgw__tls_t *t = (pgw__tls_t *)1;
    assert_int_equal(pgw__tls_new(&t, NULL, &localhost, NULL, NULL, 0), PGW_EINVAL);
    assert_null(t);
    /* Before the handshake completes. */
    fresh_session(&ctx, &t);
    assert_int_equal(pgw__tls_read(t, buf, sizeof buf, &n), PGW_EBUSY);
    assert_int_equal(pgw__tls_write(t, buf, sizeof buf, &n), PGW_EBUSY);
    assert_int_equal(pgw__tls_channel_binding(t, buf, &n), PGW_EBUSY);
    assert_int_equal(pgw__tls_shutdown(t), PGW_EBUSY);
    assert_int_equal(pgw__tls_info(t, &info), 0);
    assert_int_equal(info.in_use, 0);
    pgw__tls_free(t);
    pgw__tls_ctx_unref(ctx);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, test_setup)
    const struct CMUnitTest tests[] = {
        T(test_verify_full_good_host),
        T(test_verify_full_wrong_host_fails),
        T(test_verify_ca_accepts_wrong_host),
        T(test_verify_full_needs_host),
        T(test_verify_full_ip_san),
        T(test_verify_full_cn_rules),
        T(test_verify_full_wildcard),
        T(test_name_match_rules),
        T(test_embedded_nul_names_fail),
        T(test_require_without_root_accepts_self_signed),
        T(test_require_with_root_verifies_chain),
        T(test_verify_without_root_fails),
        T(test_self_signed_and_expired_fail_verify),
        T(test_crl_revocation),
        T(test_protocol_range),
        T(test_protocol_settings_invalid),
        T(test_sni),
        T(test_alpn_direct),
        T(test_client_cert_sent),
        T(test_client_cert_missing_or_disabled),
        T(test_client_default_files),
        T(test_client_key_permissions),
        T(test_client_key_password),
        T(test_channel_binding_rsa_sha256),
        T(test_channel_binding_follows_signature_hash),
        T(test_data_both_ways_small_rings),
        T(test_socket_eof),
        T(test_garbage_from_server),
        T(test_bytes_before_handshake_refused),
        T(test_ssl_response),
        T(test_context_sharing),
        T(test_context_freshness),
        T(test_allocator_and_oom),
        T(test_null_handles),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
