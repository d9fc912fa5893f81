/*
 * TLS faults a real server cannot produce, against faketls (and fakepg
 * behind it for the authentication exchange over TLS): bytes stuffed after
 * the server's 'S' (CVE-2021-23222), an ErrorResponse to SSLRequest
 * (CVE-2024-10977), 'N' under sslmode=require, a broken handshake under
 * prefer (retried in plaintext on a second socket), direct TLS with and
 * without ALPN, and authentication downgrades under channel_binding=require
 * and require_auth, each refused before any password-derived byte is sent.
 *
 * HOME points to an empty directory, so no root.crt of the user's is found
 * and sslmode=require accepts the fake's self-signed certificate.
 */
#define _POSIX_C_SOURCE 200809L
#include "fakepg.h"
#include "faketls.h"
#include "pgwire/client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char home[] = "/tmp/pgw-ftls-XXXXXX";
static char cert[600], key[600];

static int group_setup(void **state)
{
    (void)state;
    if (!mkdtemp(home)) return -1;
    setenv("HOME", home, 1);
    unsetenv("PGSSLROOTCERT");
    snprintf(cert, sizeof cert, "%s/server.crt", home);
    snprintf(key, sizeof key, "%s/server.key", home);
    return faketls_make_cert(home, "server");
}

static int group_teardown(void **state)
{
    (void)state;
    unlink(cert);
    unlink(key);
    rmdir(home);
    return 0;
}

/* Connect with the blocking client to the fake: returns the status and
 * leaves the failure's text in err, after libpq's "connection to server
 * at ... failed: " prefix, which must name the fake's address and port. */
static int try_connect(const faketls_t *f, const char *extra, char *err, size_t errlen)
{
    char ci[512], prefix[128];
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=fake dbname=fake connect_timeout=5 %s",
             (unsigned)faketls_port(f), extra);
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect_err(&c, ci, NULL, err, errlen);
    pgw_client_close(c);
    snprintf(prefix, sizeof prefix,
             "connection to server at \"127.0.0.1\", port %u failed: ", (unsigned)faketls_port(f));
    if (rc < 0) {
        if (strncmp(err, prefix, strlen(prefix)) != 0) fail_msg("no \"%s\" in \"%s\"", prefix, err);
        memmove(err, err + strlen(prefix), strlen(err + strlen(prefix)) + 1);
    }
    return rc;
}

static faketls_t *start(const void *answer, size_t answer_len)
{
    faketls_script_t s = {.answer = answer, .answer_len = answer_len, .cert = cert, .key = key};
    faketls_t *f = faketls_start(&s);
    assert_non_null(f);
    return f;
}

/* CVE-2021-23222: bytes behind the 'S' (or 'N') are a protocol error, never
 * read as TLS records or as the server's answer. */
static void test_stuffed_bytes(void **state)
{
    char err[1024];
    static const char stuffed_s[] = "S\0\0\0\x08junk";
    static const char stuffed_n[] = "N\0\0\0\x08junk";
    const char *modes[] = {"sslmode=require", "sslmode=prefer"};
    for (size_t i = 0; i < ARRAY_LEN(modes); i++) {
        faketls_t *f = start(stuffed_s, sizeof stuffed_s - 1);
        assert_int_equal(try_connect(f, modes[i], err, sizeof err), PGW_EPROTO);
        assert_string_equal(err, "received unencrypted data after SSL response");
        assert_int_equal(faketls_accepts(f), 1); /* no fallback */
        assert_int_equal(faketls_handshakes(f), 0);
        faketls_stop(f);
    }
    faketls_t *f = start(stuffed_n, sizeof stuffed_n - 1);
    assert_int_equal(try_connect(f, "sslmode=prefer", err, sizeof err), PGW_EPROTO);
    assert_string_equal(err, "received unencrypted data after SSL response");
    faketls_stop(f);
}

/* CVE-2024-10977: an ErrorResponse to SSLRequest is not read or shown (the
 * server is not authenticated), and there is no plaintext fallback. */
static void test_error_answer(void **state)
{
    char err[1024];
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgt_msg_error(&b, "FATAL", "28000", "injected: you are now logged in");
    const char *modes[] = {"sslmode=require", "sslmode=verify-full", "sslmode=prefer"};
    for (size_t i = 0; i < ARRAY_LEN(modes); i++) {
        faketls_t *f = start(b.data, b.len);
        assert_int_equal(try_connect(f, modes[i], err, sizeof err), PGW_ETLS);
        assert_string_equal(err, "server sent an error response during SSL exchange");
        assert_null(strstr(err, "injected"));
        assert_int_equal(faketls_accepts(f), 1);
        faketls_stop(f);
    }
    pgw_buf_free(&b);
}

static void test_no_ssl_under_require(void **state)
{
    char err[1024];
    faketls_t *f = start("N", 1);
    assert_int_equal(try_connect(f, "sslmode=require", err, sizeof err), PGW_ETLS);
    assert_string_equal(err, "server does not support SSL, but SSL was required");
    assert_int_equal(faketls_accepts(f), 1);
    faketls_stop(f);
}

/* prefer: a handshake that fails is retried without TLS on a new socket
 * (libpq's allow_ssl_try = false); require never goes plaintext. */
static void test_prefer_retries_plaintext(void **state)
{
    char err[1024];
    static const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
    faketls_script_t s = {.answer = "S",
                          .answer_len = 1,
                          .garbage = junk,
                          .garbage_len = sizeof junk - 1,
                          .cert = cert,
                          .key = key};
    faketls_t *f = faketls_start(&s);
    assert_non_null(f);
    int rc = try_connect(f, "sslmode=prefer", err, sizeof err);
    assert_true(rc < 0); /* the plaintext retry meets no server either */
    assert_int_equal(faketls_accepts(f), 2);
    uint8_t first[8];
    assert_int_equal(faketls_first_bytes(f, 1, first), 8);
    static const uint8_t v30[4] = {0, 3, 0, 0}; /* a StartupMessage, not SSLRequest */
    assert_memory_equal(first + 4, v30, 4);
    assert_non_null(strstr(err, "SSL"));
    faketls_stop(f);

    f = faketls_start(&s);
    assert_non_null(f);
    assert_int_equal(try_connect(f, "sslmode=require", err, sizeof err), PGW_ETLS);
    assert_int_equal(faketls_accepts(f), 1);
    faketls_stop(f);
}

/* A fakepg answering the startup packet with answer's bytes, then reading
 * until the client closes (the steps live here, beside the server). */
typedef struct answering {
    fakepg_step_t steps[3];
    fakepg_t *pg;
} answering_t;

static fakepg_t *answering_start(answering_t *a, const pgw_buf_t *answer)
{
    a->steps[0] = (fakepg_step_t){FAKEPG_EXPECT_STARTUP, 0, NULL, 0};
    a->steps[1] = (fakepg_step_t){FAKEPG_SEND, 0, answer->data, answer->len};
    a->steps[2] = (fakepg_step_t){FAKEPG_EXPECT_EOF, 0, NULL, 0};
    assert_int_equal(fakepg_start(&a->pg, a->steps, ARRAY_LEN(a->steps)), 0);
    return a->pg;
}

/* A fakepg behind faketls answering the startup with `answer`; the client
 * must end the exchange before sending any password message. */
static int auth_over_tls(const pgw_buf_t *answer, const char *extra, int direct_alpn,
                         char *received, size_t rlen, char *err, size_t errlen)
{
    answering_t a;
    fakepg_t *pg = answering_start(&a, answer);
    faketls_script_t s = {.cert = cert,
                          .key = key,
                          .alpn = direct_alpn ? "postgresql" : NULL,
                          .backend_port = fakepg_port(pg)};
    faketls_t *f = faketls_start(&s);
    assert_non_null(f);
    int rc = try_connect(f, extra, err, errlen);
    faketls_stop(f);
    fakepg_wait(pg);
    snprintf(received, rlen, "%s", fakepg_received_types(pg));
    fakepg_free(pg);
    return rc;
}

/* Each downgrade is refused with PGW_EAUTHPOLICY, and no 'p' (password,
 * SASL) message ever reaches the server. */
static void test_auth_downgrades(void **state)
{
    static const struct {
        uint32_t code;
        const char *data;
        size_t len;
        const char *extra;
    } cases[] = {
        {3, "", 0, "sslmode=require channel_binding=require"},     /* cleartext */
        {5, "salt", 4, "sslmode=require channel_binding=require"}, /* md5 */
        {10, "SCRAM-SHA-256\0", 15, "sslmode=require channel_binding=require"},
        {0, "", 0, "sslmode=require channel_binding=require"},        /* trust */
        {5, "salt", 4, "sslmode=require require_auth=scram-sha-256"}, /* md5 */
        {3, "", 0, "sslmode=require require_auth=!password"},
        {5, "salt", 4, "sslmode=require require_auth=none"},
        {10, "SCRAM-SHA-256\0", 15, "sslmode=require require_auth=md5,password"},
        {0, "", 0, "sslmode=require require_auth=scram-sha-256"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        pgt_msg_auth(&b, (int32_t)cases[i].code, cases[i].data, cases[i].len);
        char extra[256], received[64], err[1024];
        snprintf(extra, sizeof extra, "password=secret %s", cases[i].extra);
        int rc = auth_over_tls(&b, extra, 0, received, sizeof received, err, sizeof err);
        if (rc != PGW_EAUTHPOLICY)
            fail_msg("case %zu (%s): %s: %s", i, cases[i].extra, pgw_err_name(rc), err);
        assert_null(strchr(received, 'p'));
        pgw_buf_free(&b);
    }
}

/* sslcertmode=require is judged at AuthenticationOk, as libpq's
 * check_expected_areq does: a server that never asked for a certificate
 * fails the connect there, whatever it says after (here an error). */
static void test_sslcertmode_at_auth_ok(void **state)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgt_msg_auth(&b, 0, NULL, 0);
    pgt_msg_error(&b, "FATAL", "3D000", "database \"fake\" does not exist");
    char received[64], err[1024];
    int rc = auth_over_tls(&b, "sslmode=require sslcertmode=require", 0, received, sizeof received,
                           err, sizeof err);
    if (rc != PGW_ETLS) fail_msg("%s: %s", pgw_err_name(rc), err);
    assert_string_equal(err, "server did not request an SSL certificate");
    /* allow (the default) and disable do not care */
    rc = auth_over_tls(&b, "sslmode=require sslcertmode=disable", 0, received, sizeof received, err,
                       sizeof err);
    assert_int_equal(rc, PGW_ESERVER);
    pgw_buf_free(&b);
}

/* channel_binding=require without TLS fails before the password too. */
static void test_channel_binding_needs_tls(void **state)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgt_msg_auth(&b, 10, "SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0", 34);
    answering_t a;
    fakepg_t *pg = answering_start(&a, &b);
    char ci[256], err[512];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=fake password=secret sslmode=disable "
             "channel_binding=require",
             (unsigned)fakepg_port(pg));
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect_err(&c, ci, NULL, err, sizeof err), PGW_EAUTHPOLICY);
    fakepg_wait(pg);
    assert_null(strchr(fakepg_received_types(pg), 'p'));
    fakepg_free(pg);
    pgw_buf_free(&b);
}

/* sslnegotiation=direct: TLS at once (no SSLRequest), and the server must
 * answer ALPN "postgresql". */
static void test_direct(void **state)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgt_msg_startup_ok(&b, "17.0", 9, 0x01020304u);
    char received[64], err[1024];
    /* with ALPN the startup completes (then the client closes) */
    answering_t a;
    fakepg_t *pg = answering_start(&a, &b);
    faketls_script_t s = {
        .cert = cert, .key = key, .alpn = "postgresql", .backend_port = fakepg_port(pg)};
    faketls_t *f = faketls_start(&s);
    assert_non_null(f);
    char ci[512];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=fake sslmode=require sslnegotiation=direct "
             "connect_timeout=5",
             (unsigned)faketls_port(f));
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
    if (rc != 0) fail_msg("direct: %s: %s", pgw_err_name(rc), err);
    pgw_tls_info_t info;
    assert_int_equal(pgw_client_tls_info(c, &info), 0);
    assert_int_equal(info.in_use, 1);
    assert_string_equal(info.alpn, "postgresql");
    pgw_client_close(c);
    uint8_t first[8];
    assert_true(faketls_first_bytes(f, 0, first) >= 1);
    assert_int_equal(first[0], 0x16); /* a TLS handshake record */
    faketls_stop(f);
    fakepg_wait(pg);
    fakepg_free(pg);

    /* without ALPN: refused after the handshake */
    rc = auth_over_tls(&b, "sslmode=require sslnegotiation=direct", 0, received, sizeof received,
                       err, sizeof err);
    assert_int_equal(rc, PGW_ETLS);
    assert_string_equal(err,
                        "direct SSL connection was established without ALPN protocol negotiation "
                        "extension");
    pgw_buf_free(&b);

    /* direct needs require or stronger (libpq 17's check) */
    assert_int_equal(pgw_client_connect_err(&c,
                                            "host=127.0.0.1 sslmode=prefer sslnegotiation=direct",
                                            NULL, err, sizeof err),
                     PGW_ECONNINFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stuffed_bytes),
        cmocka_unit_test(test_error_answer),
        cmocka_unit_test(test_no_ssl_under_require),
        cmocka_unit_test(test_prefer_retries_plaintext),
        cmocka_unit_test(test_auth_downgrades),
        cmocka_unit_test(test_sslcertmode_at_auth_ok),
        cmocka_unit_test(test_channel_binding_needs_tls),
        cmocka_unit_test(test_direct),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
