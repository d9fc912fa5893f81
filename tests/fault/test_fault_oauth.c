/*
 * OAuth bearer tokens (PostgreSQL 18's SASL OAUTHBEARER, RFC 7628) against
 * the scripted fake server, which plays the protocol as PostgreSQL 18's
 * documentation gives it (the server is 15 here): the discovery request
 * (an empty token), the server's error result naming its discovery
 * document and scope, the dummy response, and the second connection with
 * the token; a token given at once when oauth_issuer names the discovery
 * document; a token given later (asynchronously); the server's error JSON
 * after a token (invalid_token, then its FATAL; another status; JSON that
 * is not valid; a discovery document of another issuer); and a callback
 * that fails.
 */
#define _POSIX_C_SOURCE 200809L
#include "fakepg.h"

#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define ISSUER    "https://issuer.example.com"
#define DISCOVERY ISSUER "/.well-known/openid-configuration"
#define TOKEN     "tok-123.abc_~+/="

/* What the callback does. */
enum { GIVE_NOW, GIVE_LATER, FAIL_RETURN, FAIL_LATER };

typedef struct ctx {
    uv_loop_t loop;
    uv_timer_t later;
    pgw_conn_t *conn;
    int mode;
    int asked;
    char issuer[256], discovery[256], scope[256], client_id[64];
    int connected, connect_status, closed;
    char message[2048];
} ctx_t;

static void answer_later(uv_timer_t *t)
{
    ctx_t *x = t->data;
    int rc = x->mode == GIVE_LATER ? pgw_conn_oauth_token(x->conn, TOKEN, NULL)
                                   : pgw_conn_oauth_token(x->conn, NULL, "the browser was closed");
    assert_int_equal(rc, 0);
    /* only once */
    assert_int_equal(pgw_conn_oauth_token(x->conn, TOKEN, NULL), PGW_EBUSY);
}

static int on_token(pgw_conn_t *conn, const pgw_oauth_request_t *req, void *ud)
{
    ctx_t *x = ud;
    x->asked++;
    snprintf(x->issuer, sizeof x->issuer, "%s", req->issuer);
    snprintf(x->discovery, sizeof x->discovery, "%s", req->openid_configuration);
    snprintf(x->scope, sizeof x->scope, "%s", req->scope ? req->scope : "(null)");
    snprintf(x->client_id, sizeof x->client_id, "%s", req->client_id);
    switch (x->mode) {
    case GIVE_NOW:
        return pgw_conn_oauth_token(conn, TOKEN, NULL);
    case FAIL_RETURN:
        return -1;
    default:
        uv_timer_start(&x->later, answer_later, 20, 0);
        return 0;
    }
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    ctx_t *x = ud;
    x->connected++;
    x->connect_status = status;
    snprintf(x->message, sizeof x->message, "%s", pgw_conn_error_message(conn));
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ((ctx_t *)ud)->closed++;
}

static void run_until(ctx_t *x, const int *flag)
{
    /* bounded by fakepg's own 10 s waits: a stuck client fails the script */
    for (int i = 0; !*flag && i < 100000; i++)
        uv_run(&x->loop, UV_RUN_ONCE);
    assert_true(*flag);
}

static void connect_to(ctx_t *x, fakepg_t *f, int mode, const char *extra)
{
    memset(x, 0, sizeof *x);
    x->mode = mode;
    assert_int_equal(uv_loop_init(&x->loop), 0);
    uv_timer_init(&x->loop, &x->later);
    x->later.data = x;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_oauth_token = on_token;
    cfg.oauth_ud = x;
    assert_int_equal(pgw_conn_new(&x->conn, &x->loop, &cfg), 0);
    char ci[512];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable gssencmode=disable "
             "oauth_client_id=cid %s",
             (unsigned)fakepg_port(f), extra);
    assert_int_equal(pgw_conn_connect(x->conn, ci, on_connect, x), 0);
    run_until(x, &x->connected);
}

static void finish(ctx_t *x, fakepg_t *f)
{
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), 0);
    run_until(x, &x->closed);
    uv_close((uv_handle_t *)&x->later, NULL);
    uv_run(&x->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&x->loop), 0);
    if (fakepg_wait(f) != 0) fail_msg("fake server: %s", fakepg_error(f));
}

/* The SASL data of the i-th message the server read (a SASLInitialResponse:
 * mechanism, length, data; a SASLResponse: data). */
static void expect_sasl(const fakepg_t *f, size_t i, int initial, const char *data)
{
    uint8_t type;
    size_t len;
    const uint8_t *p = fakepg_message(f, i, &type, &len);
    assert_non_null(p);
    assert_int_equal(type, 'p');
    if (initial) {
        assert_string_equal((const char *)p, "OAUTHBEARER");
        p += 12;
        len -= 12;
        uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        p += 4;
        len -= 4;
        assert_int_equal(n, len);
    }
    assert_int_equal(len, strlen(data));
    assert_memory_equal(p, data, len);
}

static void sasl_offer(pgw_buf_t *b)
{
    static const char mechs[] = "OAUTHBEARER\0";
    pgt_msg_auth(b, 10, mechs, sizeof mechs);
}

static void sasl_error(pgw_buf_t *b, const char *json)
{
    pgt_msg_auth(b, 11, json, strlen(json));
}

#define DISCOVERY_REQUEST \
    "n,,\x01"             \
    "auth=\x01\x01"
#define BEARER_RESPONSE \
    "n,,\x01"           \
    "auth=Bearer " TOKEN "\x01\x01"

static const char server_error[] = "{\"status\":\"invalid_token\",\"scope\":\"openid pg\","
                                   "\"openid-configuration\":\"" DISCOVERY "\"}";

/* The first connection asks, the second presents the token. */
static fakepg_t *two_connections(pgw_buf_t *offer, pgw_buf_t *err, pgw_buf_t *ok,
                                 fakepg_step_t *steps, size_t *n)
{
    sasl_offer(offer);
    sasl_error(err, server_error);
    pgt_msg_startup_ok(ok, "18.0", 77, 0x01020304);
    fakepg_step_t s[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, offer->data, offer->len},
        {FAKEPG_EXPECT, 'p', NULL, 0},
        {FAKEPG_SEND, 0, err->data, err->len},
        {FAKEPG_EXPECT, 'p', NULL, 0},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
        {FAKEPG_ACCEPT, 0, NULL, 0},
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, offer->data, offer->len},
        {FAKEPG_EXPECT, 'p', NULL, 0},
        {FAKEPG_SEND, 0, ok->data, ok->len},
        {FAKEPG_EXPECT, 'X', NULL, 0},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    memcpy(steps, s, sizeof s);
    *n = ARRAY_LEN(s);
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, *n), 0);
    return f;
}

static void check_two_connections(ctx_t *x, fakepg_t *f)
{
    if (x->connect_status)
        fail_msg("%s: %s (server: %s)", pgw_err_name(x->connect_status), x->message,
                 fakepg_wait(f) ? fakepg_error(f) : "ok");
    assert_int_equal(x->asked, 1);
    assert_string_equal(x->issuer, ISSUER);
    assert_string_equal(x->discovery, DISCOVERY);
    assert_string_equal(x->scope, "openid pg");
    assert_string_equal(x->client_id, "cid");
    assert_string_equal(pgw_session_auth_method(pgw_conn_session(x->conn)), "OAUTHBEARER");
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(x->conn, &n);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].status, PGW_EAUTH);
    assert_non_null(strstr(a[0].message, "retrying connection with new bearer token"));
    assert_int_equal(a[1].status, 0);
    finish(x, f);
    expect_sasl(f, 0, 1, DISCOVERY_REQUEST);
    expect_sasl(f, 1, 0, "\x01");
    expect_sasl(f, 2, 1, BEARER_RESPONSE);
    fakepg_free(f);
}

static void test_discovery_then_token(void **state)
{
    pgw_buf_t offer = {0}, err = {0}, ok = {0};
    fakepg_step_t steps[16];
    size_t n;
    fakepg_t *f = two_connections(&offer, &err, &ok, steps, &n);
    ctx_t x;
    connect_to(&x, f, GIVE_NOW, "oauth_issuer=" ISSUER);
    check_two_connections(&x, f);
    pgw_buf_free(&offer);
    pgw_buf_free(&err);
    pgw_buf_free(&ok);
}

/* The token comes from the loop later: the connect waits for it. */
static void test_token_given_later(void **state)
{
    pgw_buf_t offer = {0}, err = {0}, ok = {0};
    fakepg_step_t steps[16];
    size_t n;
    fakepg_t *f = two_connections(&offer, &err, &ok, steps, &n);
    ctx_t x;
    connect_to(&x, f, GIVE_LATER, "oauth_issuer=" ISSUER);
    check_two_connections(&x, f);
    pgw_buf_free(&offer);
    pgw_buf_free(&err);
    pgw_buf_free(&ok);
}

/* oauth_issuer names the discovery document: the token is asked for at
 * once and presented on the first connection; oauth_scope wins. */
static void test_token_at_once(void **state)
{
    pgw_buf_t offer = {0}, ok = {0};
    sasl_offer(&offer);
    pgt_msg_startup_ok(&ok, "18.0", 77, 0x01020304);
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, offer.data, offer.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_SEND, 0, ok.data, ok.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    connect_to(&x, f, GIVE_NOW, "oauth_issuer=" DISCOVERY " oauth_scope=mine require_auth=oauth");
    assert_int_equal(x.connect_status, 0);
    assert_string_equal(x.issuer, ISSUER);
    assert_string_equal(x.discovery, DISCOVERY);
    assert_string_equal(x.scope, "mine");
    finish(&x, f);
    expect_sasl(f, 0, 1, BEARER_RESPONSE);
    fakepg_free(f);
    pgw_buf_free(&offer);
    pgw_buf_free(&ok);
}

/* After the token, the server's error result: the dummy response, then
 * the client reads the server's verdict (invalid_token: its FATAL), or
 * gives up itself (another status, JSON that is not valid, a discovery
 * document of another issuer). */
static void run_rejected(const char *json, int expect, const char *says)
{
    pgw_buf_t offer = {0}, err = {0}, fatal = {0};
    sasl_offer(&offer);
    sasl_error(&err, json);
    pgt_msg_error(&fatal, "FATAL", "28000", "OAuth bearer authentication failed for user \"fake\"");
    fakepg_step_t server_says[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, offer.data, offer.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_SEND, 0, err.data, err.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_SEND, 0, fatal.data, fatal.len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_step_t client_ends[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, offer.data, offer.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_SEND, 0, err.data, err.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    if (expect == PGW_ESERVER)
        assert_int_equal(fakepg_start(&f, server_says, ARRAY_LEN(server_says)), 0);
    else
        assert_int_equal(fakepg_start(&f, client_ends, ARRAY_LEN(client_ends)), 0);
    ctx_t x;
    connect_to(&x, f, GIVE_NOW, "oauth_issuer=" DISCOVERY);
    print_message("%s: %s\n", pgw_err_name(x.connect_status), x.message);
    assert_int_equal(x.connect_status, expect);
    if (!strstr(x.message, says)) fail_msg("\"%s\" lacks \"%s\"", x.message, says);
    finish(&x, f);
    expect_sasl(f, 0, 1, BEARER_RESPONSE);
    expect_sasl(f, 1, 0, "\x01");
    fakepg_free(f);
    pgw_buf_free(&offer);
    pgw_buf_free(&err);
    pgw_buf_free(&fatal);
}

static void test_server_error_json(void **state)
{
    run_rejected(server_error, PGW_ESERVER, "OAuth bearer authentication failed for user");
    run_rejected("{\"status\":\"insufficient_scope\"}", PGW_EAUTH,
                 "server rejected OAuth bearer token: insufficient_scope");
    run_rejected("{\"scope\":\"x\"}", PGW_EAUTH, "server sent error response without a status");
    run_rejected("{\"status\":42}", PGW_EAUTH,
                 "failed to parse server's error response: field \"status\" must be a string");
    run_rejected("[\"status\"]", PGW_EAUTH,
                 "failed to parse server's error response: top-level element must be an object");
    run_rejected("{\"status\":\"invalid_token\"", PGW_EAUTH,
                 "failed to parse server's error response");
    run_rejected("{\"status\":\"invalid_token\",\"openid-configuration\":"
                 "\"https://evil.example.net/.well-known/openid-configuration\"}",
                 PGW_EAUTH, "is incompatible with oauth_issuer (" ISSUER ")");
}

/* A callback that fails, at once or later: the connect fails with EAUTH
 * and libpq's words; the server saw only the discovery request. */
static void run_failing(int mode, const char *says)
{
    pgw_buf_t offer = {0}, err = {0};
    sasl_offer(&offer);
    sasl_error(&err, server_error);
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, offer.data, offer.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_SEND, 0, err.data, err.len},
        {FAKEPG_EXPECT, 'p', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    connect_to(&x, f, mode, "oauth_issuer=" ISSUER);
    print_message("%s: %s\n", pgw_err_name(x.connect_status), x.message);
    assert_int_equal(x.connect_status, PGW_EAUTH);
    assert_int_equal(x.asked, 1);
    if (!strstr(x.message, says)) fail_msg("\"%s\" lacks \"%s\"", x.message, says);
    finish(&x, f);
    expect_sasl(f, 0, 1, DISCOVERY_REQUEST);
    expect_sasl(f, 1, 0, "\x01");
    fakepg_free(f);
    pgw_buf_free(&offer);
    pgw_buf_free(&err);
}

static void test_callback_fails(void **state)
{
    run_failing(FAIL_RETURN, "user-defined OAuth flow failed");
    run_failing(FAIL_LATER, "user-defined OAuth flow failed: the browser was closed");
}

/* Without oauth_client_id, or without a callback: libpq's words. */
static void test_missing_settings(void **state)
{
    pgw_buf_t offer = {0};
    sasl_offer(&offer);
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, offer.data, offer.len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    connect_to(&x, f, GIVE_NOW, "oauth_client_id=");
    assert_int_equal(x.connect_status, PGW_EAUTH);
    assert_non_null(strstr(x.message, "server requires OAuth authentication, but oauth_issuer "
                                      "and oauth_client_id are not both set"));
    finish(&x, f);
    fakepg_free(f);
    pgw_buf_free(&offer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discovery_then_token), cmocka_unit_test(test_token_given_later),
        cmocka_unit_test(test_token_at_once),        cmocka_unit_test(test_server_error_json),
        cmocka_unit_test(test_callback_fails),       cmocka_unit_test(test_missing_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
