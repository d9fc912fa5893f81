/*
 * OAUTHBEARER's messages (src/auth/oauth.c): the client initial response,
 * the server's error result (a JSON object: only its top-level string
 * members status, scope and openid-configuration are read; everything
 * else must still be JSON), and issuer identifiers of .well-known URIs
 * (RFC 8414), with libpq 18's messages; every allocation failing in turn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "auth/oauth.h"
#include "failalloc.h"
#include "util/internal.h"

static char err[512];

static void test_initial_response(void **state)
{
    (void)state;
    pgw_buf_t b = {0};
    assert_int_equal(pgw__oauth_initial_response(&b, NULL), 0);
    assert_int_equal(b.len, 11);
    assert_memory_equal(b.data,
                        "n,,\x01"
                        "auth=\x01\x01",
                        11);
    pgw_buf_reset(&b);
    assert_int_equal(pgw__oauth_initial_response(&b, "eyJ0eXAi.x-y_z~+/=="), 0);
    static const char want[] = "n,,\x01"
                               "auth=Bearer eyJ0eXAi.x-y_z~+/==\x01\x01";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, sizeof want - 1);
    /* what would break the framing (or the header's grammar) is refused */
    static const char *const bad[] = {"", "a b", "a\x01", "=abc", "ab=c", "tok\n", "t\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pgw_buf_reset(&b);
        assert_int_equal(pgw__oauth_initial_response(&b, bad[i]), PGW_EAUTH);
    }
    pgw_buf_free(&b);
}

static void parse_ok(const char *json, const char *status, const char *scope, const char *uri)
{
    pgw__oauth_error_t e;
    int rc = pgw__oauth_parse_error(NULL, (const uint8_t *)json, strlen(json), &e, err, sizeof err);
    if (rc) fail_msg("%s: %s", json, err);
    if (status)
        assert_string_equal(e.status, status);
    else
        assert_null(e.status);
    if (scope)
        assert_string_equal(e.scope, scope);
    else
        assert_null(e.scope);
    if (uri)
        assert_string_equal(e.discovery_uri, uri);
    else
        assert_null(e.discovery_uri);
    pgw__oauth_error_free(NULL, &e);
}

static void parse_bad(const char *json, size_t len, const char *says)
{
    pgw__oauth_error_t e;
    int rc = pgw__oauth_parse_error(NULL, (const uint8_t *)json, len, &e, err, sizeof err);
    pgw__oauth_error_free(NULL, &e);
    if (rc != PGW_EAUTH || !strstr(err, says))
        fail_msg("%s: got %s \"%s\", expected \"%s\"", json, pgw_err_name(rc), err, says);
}

static void test_error_result(void **state)
{
    (void)state;
    parse_ok("{\"status\":\"invalid_token\",\"scope\":\"openid pg\","
             "\"openid-configuration\":\"https://i.example/.well-known/openid-configuration\"}",
             "invalid_token", "openid pg", "https://i.example/.well-known/openid-configuration");
    /* escapes, other members and nested ones ignored, whitespace */
    parse_ok(" {\n\t\"x\" : [1, -2.5e3, true, false, null, {\"status\": 7}],"
             " \"status\" : \"inv\\u0061lid\\/\\\"t\\u00e9\\ud83d\\ude00\", \"n\": {}} ",
             "inval"
             "id/\"t\xc3\xa9\xf0\x9f\x98\x80",
             NULL, NULL);
    parse_ok("{}", NULL, NULL, NULL);
    parse_bad("{\"status\":\"a\\u0000\"}", 20, "\\u0000 cannot be converted to text");
    parse_bad("{\"a\":\"b\"}\0", 10, "embedded NULL");
    parse_bad("{\"status\":\"\xc3\"}", 14, "not valid UTF-8");
    parse_bad("[]", 2, "top-level element must be an object");
    parse_bad("\"status\"", 8, "top-level element must be an object");
    parse_bad("{\"status\":1}", 12, "field \"status\" must be a string");
    parse_bad("{\"scope\":[\"a\"]}", 15, "field \"scope\" must be a string");
    parse_bad("{\"status\":\"a\",\"status\":\"b\"}", 27, "field \"status\" is duplicated");
    parse_bad("{\"a\":[[[[[[[[[]]]]]]]]]}", 23, "JSON is too deeply nested");
    parse_bad("{\"a\":1} x", 9, "text after the object");
    parse_bad("{\"a\":01}", 8, "invalid token");
    parse_bad("{\"a\":\"\\q\"}", 10, "invalid escape");
    parse_bad("{\"a\":\"\\ud800\"}", 14, "surrogate");
    parse_bad("{\"a\" 1}", 7, "expected \":\"");
    parse_bad("{\"a\":1", 6, "expected \",\" or \"}\"");
    parse_bad("{\"a\":\"b", 7, "inside a string");
    parse_bad("{\"a\":\"\x01\"}", 9, "control character");
}

static void issuer_is(const char *uri, const char *issuer)
{
    char *got = NULL;
    int rc = pgw__oauth_issuer_from_uri(NULL, uri, &got, err, sizeof err);
    if (rc) fail_msg("%s: %s", uri, err);
    assert_string_equal(got, issuer);
    pgw__free(NULL, got);
}

static void issuer_bad(const char *uri, const char *says)
{
    char *got = NULL;
    int rc = pgw__oauth_issuer_from_uri(NULL, uri, &got, err, sizeof err);
    assert_null(got);
    if (rc != PGW_EAUTH || !strstr(err, says)) fail_msg("%s: %s", uri, err);
}

static void test_well_known_uris(void **state)
{
    (void)state;
    issuer_is("https://i.example/.well-known/openid-configuration", "https://i.example");
    issuer_is("https://i.example/tenant/.well-known/openid-configuration",
              "https://i.example/tenant");
    issuer_is("https://i.example/.well-known/oauth-authorization-server/tenant",
              "https://i.example/tenant");
    issuer_is("HTTPS://i.example/.well-known/oauth-authorization-server", "HTTPS://i.example");
    issuer_bad("http://i.example/.well-known/openid-configuration", "must use HTTPS");
    issuer_bad("https://i.example/.well-known/openid-configuration?x=1",
               "must not contain query or fragment components");
    issuer_bad("https://i.example/openid-configuration", "is not a .well-known URI");
    issuer_bad("https://i.example/.well-known/openid-configuration-bad",
               "uses an unsupported .well-known suffix");
    issuer_bad("https://i.example/.well-known/webfinger", "uses an unsupported .well-known suffix");
    issuer_bad("https://i.example/a/.well-known/openid-configuration/b", "uses an invalid format");
    assert_true(pgw__oauth_is_discovery_uri("https://i/.well-known/x"));
    assert_false(pgw__oauth_is_discovery_uri("https://i/"));
    assert_false(pgw__oauth_is_discovery_uri(NULL));
}

/* Every allocation failing in turn: a clean PGW_ENOMEM, nothing leaked. */
static void test_out_of_memory(void **state)
{
    (void)state;
    static const char json[] = "{\"status\":\"invalid_token\",\"scope\":\"s\","
                               "\"openid-configuration\":\"https://i/.well-known/x\"}";
    int saw_ok = 0;
    for (long n = 1; n < 40; n++) {
        pgt_alloc_t c;
        pgw_allocator_t a = *pgt_alloc_init(&c);
        c.fail_at = n;
        pgw__oauth_error_t e;
        int rc =
            pgw__oauth_parse_error(&a, (const uint8_t *)json, sizeof json - 1, &e, err, sizeof err);
        assert_true(rc == 0 || rc == PGW_ENOMEM);
        if (rc == 0) saw_ok = 1;
        pgw__oauth_error_free(&a, &e);
        char *iss = NULL;
        rc = pgw__oauth_issuer_from_uri(&a, "https://i/.well-known/openid-configuration", &iss, err,
                                        sizeof err);
        assert_true(rc == 0 || rc == PGW_ENOMEM);
        pgw__free(&a, iss);
        assert_int_equal(c.blocks, 0);
    }
    assert_true(saw_ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_response),
        cmocka_unit_test(test_error_result),
        cmocka_unit_test(test_well_known_uris),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
