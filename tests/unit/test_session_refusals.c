/*
 * require_auth and channel_binding refusals of the session, with libpq 18's
 * messages (fe-auth.c: check_expected_areq, pg_SASL_init), for requests a
 * real PostgreSQL server does not make (GSSAPI, SSPI, Kerberos 5, unknown
 * codes, a SASL list of unknown mechanisms, OAUTHBEARER without its
 * settings) or a policy libpq 15 lacks; the
 * integration test test_conn_libpq_rules covers the ones the server
 * makes. Nothing derived from a password is sent after a refusal.
 */
#include "test_session_util.h"

static rec_t R;

/* A started session with require_auth / channel_binding, fed one
 * authentication request. */
static pgw_session_t *asked(const char *require_auth, const char *channel_binding, int32_t code,
                            const void *data, size_t n)
{
    memset(&R, 0, sizeof R);
    g_rec = &R;
    sess_opts_t o = {
        .password = "pw", .require_auth = require_auth, .channel_binding = channel_binding};
    pgw_session_t *s = new_session(&R, &o);
    assert_int_equal(pgw_session_start(s), 0);
    pgw_buf_t out = {0};
    take_out(s, &out); /* the startup packet */
    pgw_buf_free(&out);
    pgw_buf_t w = {0};
    pgt_msg_auth(&w, code, data, n);
    feed(s, &w);
    pgw_buf_free(&w);
    return s;
}

static void expect(pgw_session_t *s, int status, const char *message)
{
    if (R.startup_status != status || strcmp(R.startup_message, message) != 0)
        fail_msg("got %s \"%s\", expected %s \"%s\"", pgw_err_name(R.startup_status),
                 R.startup_message, pgw_err_name(status), message);
    size_t n;
    pgw_session_pending_output(s, &n);
    assert_int_equal(n, 0); /* nothing answered */
    pgw_session_free(s);
}

static void test_methods_libpq_cannot_name(void **state)
{
    (void)state;
    static const struct {
        const char *require_auth;
        int32_t code;
        const char *says;
    } cases[] = {
        {"", 2,
         "authentication method requirement \"\" failed: server requested an unknown "
         "authentication type"},
        {"!md5", 42,
         "authentication method requirement \"!md5\" failed: server requested an "
         "unknown authentication type"},
        {"scram-sha-256", 7,
         "authentication method requirement \"scram-sha-256\" failed: server "
         "requested GSSAPI authentication"},
        {"!sspi", 9,
         "authentication method requirement \"!sspi\" failed: server requested SSPI "
         "authentication"},
        {"oauth", 3,
         "authentication method requirement \"oauth\" failed: server requested a "
         "cleartext password"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect(asked(cases[i].require_auth, NULL, cases[i].code, NULL, 0), PGW_EAUTHPOLICY,
               cases[i].says);
    /* allowed by the policy, still not implemented: named as before */
    pgw_session_t *s = asked("gss", NULL, 7, NULL, 0);
    assert_int_equal(R.startup_status, PGW_ENOTSUP);
    assert_non_null(strstr(R.startup_message, "GSSAPI"));
    pgw_session_free(s);
}

static void test_sasl_lists(void **state)
{
    (void)state;
    static const char oauth_only[] = "OAUTHBEARER\0";
    static const char unknown[] = "SCRAM-SHA-1\0EXTERNAL\0";
    static const char scram[] = "SCRAM-SHA-256\0";
    expect(asked(NULL, NULL, 10, unknown, sizeof unknown), PGW_EAUTH,
           "none of the server's SASL authentication mechanisms are supported");
    /* libpq 18: OAUTHBEARER needs oauth_issuer and oauth_client_id */
    expect(asked(NULL, NULL, 10, oauth_only, sizeof oauth_only), PGW_EAUTH,
           "server requires OAuth authentication, but oauth_issuer and oauth_client_id are "
           "not both set");
    expect(asked("scram-sha-256", NULL, 10, oauth_only, sizeof oauth_only), PGW_EAUTHPOLICY,
           "authentication method requirement \"scram-sha-256\" failed: server requested "
           "OAUTHBEARER authentication");
    expect(asked("!scram-sha-256", NULL, 10, scram, sizeof scram), PGW_EAUTHPOLICY,
           "authentication method requirement \"!scram-sha-256\" failed: server requested "
           "SCRAM-SHA-256 authentication");
    expect(asked("password,md5", NULL, 10, scram, sizeof scram), PGW_EAUTHPOLICY,
           "authentication method requirement \"password,md5\" failed: server requested SASL "
           "authentication");
    expect(asked(NULL, "require", 10, scram, sizeof scram), PGW_EAUTHPOLICY,
           "channel binding required, but SSL not in use");
    expect(asked(NULL, "require", 5, "salt", 4), PGW_EAUTHPOLICY,
           "channel binding required but not supported by server's authentication request");
    /* !oauth leaves SCRAM allowed: the exchange starts */
    pgw_session_t *s = asked("!oauth", NULL, 10, scram, sizeof scram);
    assert_int_equal(R.startup_status, 0);
    size_t n;
    pgw_session_pending_output(s, &n);
    assert_true(n > 0);
    pgw_session_free(s);
}

/* AuthenticationOk without an exchange: refused unless none is allowed. */
static void test_ok_without_exchange(void **state)
{
    (void)state;
    expect(asked("md5", NULL, 0, NULL, 0), PGW_EAUTHPOLICY,
           "authentication method requirement \"md5\" failed: server did not complete "
           "authentication");
    expect(asked("!none", NULL, 0, NULL, 0), PGW_EAUTHPOLICY,
           "authentication method requirement \"!none\" failed: server did not complete "
           "authentication");
    expect(asked(NULL, "require", 0, NULL, 0), PGW_EAUTHPOLICY,
           "channel binding required, but server authenticated client without channel binding");
    pgw_session_t *s = asked("", NULL, 0, NULL, 0);
    assert_int_equal(R.startup_status, 0);
    assert_true(pgw_session_auth_ok(s));
    pgw_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_libpq_cannot_name),
        cmocka_unit_test(test_sasl_lists),
        cmocka_unit_test(test_ok_without_exchange),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
