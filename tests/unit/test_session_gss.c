/*
 * The session's GSSAPI authentication through its gss_step hook, scripted:
 * the tokens it sends (GSSResponse) and receives (GSSContinue), the
 * AuthenticationOk that ends the exchange, require_auth=gss and its
 * GSS-encrypted exception (libpq 18's check_expected_areq), and the
 * refusals: a duplicate request, GSSContinue out of turn, a hook that
 * fails, no hook. The real exchange, against a KDC, is
 * tests/integration/test_gss_libpq.c.
 */
#include "test_session_util.h"

static rec_t R;

typedef struct gss_script {
    int calls;
    int encrypted;         /* what the gss_encrypted hook says */
    int fail_at;           /* the step that fails (0: none) */
    char seen[2][16];      /* the server tokens the hook received */
    const char *tokens[2]; /* what it answers at each step */
    int establish_at;      /* the step that establishes the context */
} gss_script_t;

static gss_script_t G;

static int gss_step(pgw_session_t *s, const uint8_t *in, size_t inlen, const uint8_t **out,
                    size_t *outlen, char *msg, size_t msglen, void *ud)
{
    (void)s, (void)ud;
    int step = G.calls++;
    if (step < 2)
        snprintf(G.seen[step], sizeof G.seen[step], "%.*s", (int)inlen, in ? (const char *)in : "");
    if (step + 1 == G.fail_at) {
        snprintf(msg, msglen, "GSSAPI continuation error: scripted failure");
        return PGW_EAUTH;
    }
    const char *t = step < 2 ? G.tokens[step] : NULL;
    *out = (const uint8_t *)t;
    *outlen = t ? strlen(t) : 0;
    return step + 1 == G.establish_at ? 0 : 1;
}

static int gss_encrypted(pgw_session_t *s, void *ud)
{
    (void)s, (void)ud;
    return G.encrypted;
}

/* A started session with the hooks (hooks 0: none) and require_auth. */
static pgw_session_t *start(const char *require_auth, const char *channel_binding, int hooks)
{
    memset(&R, 0, sizeof R);
    g_rec = &R;
    const char *params[] = {"user", "alice"};
    pgw_session_config_t cfg;
    pgw_session_config_init(&cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 1;
    cfg.require_auth = require_auth;
    cfg.channel_binding = channel_binding;
    cfg.cb.on_startup = on_startup;
    cfg.cb.on_broken = on_broken;
    if (hooks) {
        cfg.cb.gss_step = gss_step;
        cfg.cb.gss_encrypted = gss_encrypted;
    }
    cfg.ud = &R;
    pgw_session_t *s;
    assert_int_equal(pgw_session_new(&s, &cfg), 0);
    assert_int_equal(pgw_session_start(s), 0);
    pgw_buf_t out = {0};
    take_out(s, &out); /* the startup packet */
    pgw_buf_free(&out);
    return s;
}

static void send_auth(pgw_session_t *s, int32_t code, const char *data)
{
    pgw_buf_t w = {0};
    pgt_msg_auth(&w, code, data, data ? strlen(data) : 0);
    feed(s, &w);
    pgw_buf_free(&w);
}

/* The next GSSResponse's token ("" when nothing was sent). */
static void expect_token(pgw_session_t *s, const char *token)
{
    pgw_buf_t out = {0};
    take_out(s, &out);
    if (!*token) {
        assert_int_equal(out.len, 0);
    } else {
        assert_int_equal(out.len, 5 + strlen(token));
        assert_int_equal(out.data[0], 'p');
        assert_memory_equal(out.data + 5, token, strlen(token));
    }
    pgw_buf_free(&out);
}

static void script(int establish_at, const char *t0, const char *t1)
{
    memset(&G, 0, sizeof G);
    G.establish_at = establish_at;
    G.tokens[0] = t0;
    G.tokens[1] = t1;
}

static void test_exchange(void **state)
{
    (void)state;
    static const char *const policies[] = {NULL, "gss", "gss,scram-sha-256", "!password"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        script(2, "client-1", "client-2");
        pgw_session_t *s = start(policies[i], NULL, 1);
        send_auth(s, PGW_AUTH_GSS, NULL);
        expect_token(s, "client-1");
        send_auth(s, PGW_AUTH_GSS_CONTINUE, "server-1");
        expect_token(s, "client-2");
        assert_string_equal(G.seen[0], "");
        assert_string_equal(G.seen[1], "server-1");
        pgw_buf_t w = {0};
        pgt_msg_startup_ok(&w, "15.0", 1, 2);
        feed(s, &w);
        pgw_buf_free(&w);
        assert_int_equal(R.startup_calls, 1);
        assert_int_equal(R.startup_status, 0);
        assert_string_equal(pgw_session_auth_method(s), "gss");
        pgw_session_free(s);
    }
}

/* The server's SSPI request is answered with GSSAPI (libpq outside
 * Windows), require_auth naming it sspi. */
static void test_sspi_answered_with_gssapi(void **state)
{
    (void)state;
    script(1, "client-1", NULL);
    pgw_session_t *s = start("sspi", NULL, 1);
    send_auth(s, PGW_AUTH_SSPI, NULL);
    expect_token(s, "client-1");
    assert_int_equal(R.startup_calls, 0);
    pgw_session_free(s);
}

static void expect_failure(pgw_session_t *s, int status, const char *message)
{
    if (R.startup_status != status || strcmp(R.startup_message, message) != 0)
        fail_msg("got %s \"%s\", expected %s \"%s\"", pgw_err_name(R.startup_status),
                 R.startup_message, pgw_err_name(status), message);
    pgw_session_free(s);
}

static void test_refusals(void **state)
{
    (void)state;
    script(2, "client-1", "client-2");
    pgw_session_t *s = start("scram-sha-256", NULL, 1);
    send_auth(s, PGW_AUTH_GSS, NULL);
    expect_token(s, "");
    assert_int_equal(G.calls, 0); /* nothing computed for a refused method */
    expect_failure(s, PGW_EAUTHPOLICY,
                   "authentication method requirement \"scram-sha-256\" failed: server requested "
                   "GSSAPI authentication");
    s = start(NULL, "require", 1);
    send_auth(s, PGW_AUTH_GSS, NULL);
    expect_failure(s, PGW_EAUTHPOLICY,
                   "channel binding required but not supported by server's authentication request");
    /* no hook: GSSAPI is not available */
    s = start(NULL, NULL, 0);
    send_auth(s, PGW_AUTH_GSS, NULL);
    expect_failure(s, PGW_ENOTSUP, "GSSAPI authentication not supported");
    /* the hook's failure, in its words */
    script(2, "client-1", "client-2");
    G.fail_at = 2;
    s = start(NULL, NULL, 1);
    send_auth(s, PGW_AUTH_GSS, NULL);
    send_auth(s, PGW_AUTH_GSS_CONTINUE, "server-1");
    expect_failure(s, PGW_EAUTH, "GSSAPI continuation error: scripted failure");
    /* a second AuthenticationGSS */
    script(2, "client-1", "client-2");
    s = start(NULL, NULL, 1);
    send_auth(s, PGW_AUTH_GSS, NULL);
    send_auth(s, PGW_AUTH_GSS, NULL);
    expect_failure(s, PGW_EPROTO, "duplicate GSS authentication request");
    /* GSSContinue with no exchange begun: a protocol violation */
    script(2, "client-1", "client-2");
    s = start(NULL, NULL, 1);
    send_auth(s, PGW_AUTH_GSS_CONTINUE, "server-1");
    assert_int_equal(R.broken_err, PGW_EPROTO);
    pgw_session_free(s);
}

/* AuthenticationOk with no exchange, or in the middle of one: require_auth
 * without none refuses it, unless it allows gss and the transport is
 * GSS-encrypted (whose context authenticated the client). */
static void test_ok_without_finished_exchange(void **state)
{
    (void)state;
    static const struct {
        const char *require_auth;
        int encrypted, begin;
        int status;
    } cases[] = {
        {"gss", 1, 0, 0},
        {"gss", 0, 0, PGW_EAUTHPOLICY},
        {"scram-sha-256", 1, 0, PGW_EAUTHPOLICY},
        {"gss", 0, 1, PGW_EAUTHPOLICY},
        {"gss", 1, 1, 0},
        {NULL, 0, 1, 0},
        {"gss,none", 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        script(2, "client-1", "client-2");
        G.encrypted = cases[i].encrypted;
        pgw_session_t *s = start(cases[i].require_auth, NULL, 1);
        if (cases[i].begin) send_auth(s, PGW_AUTH_GSS, NULL);
        pgw_buf_t w = {0};
        pgt_msg_startup_ok(&w, "15.0", 1, 2);
        feed(s, &w);
        pgw_buf_free(&w);
        if (R.startup_status != cases[i].status)
            fail_msg("case %zu: %s \"%s\"", i, pgw_err_name(R.startup_status), R.startup_message);
        if (cases[i].status)
            assert_non_null(strstr(R.startup_message, "server did not complete authentication"));
        pgw_session_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_sspi_answered_with_gssapi),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_ok_without_finished_exchange),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
