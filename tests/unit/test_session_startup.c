/*
 * Session startup and authentication, driven from byte arrays: trust,
 * cleartext, MD5 (exact bytes), SCRAM-SHA-256 (RFC 7677 vector), the
 * require_auth / channel_binding downgrade cases (RELIABILITY.md case 4),
 * server errors, protocol negotiation, and requests held until ready.
 */
#define _GNU_SOURCE /* memmem */
#include "test_session_util.h"

#include <openssl/evp.h>

static rec_t R;

static pgw_session_t *fresh(const sess_opts_t *o)
{
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = new_session(&R, o);
    assert_int_equal(pgw_session_start(s), 0);
    return s;
}

/* The output so far, consumed. */
static void grab(pgw_session_t *s, pgw_buf_t *w)
{
    w->len = 0;
    take_out(s, w);
}

static int contains(const pgw_buf_t *w, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= w->len; i++)
        if (memcmp(w->data + i, needle, n) == 0) return 1;
    return 0;
}

static void test_trust(void **state)
{
    (void)state;
    pgw_session_t *s = fresh(NULL);
    pgw_buf_t out = {0};
    grab(s, &out);
    /* StartupMessage: length, 3.0, user alice, database db. */
    assert_true(out.len > 8);
    assert_int_equal(out.data[4], 0);
    assert_int_equal(out.data[5], 3);
    assert_int_equal(out.data[6], 0);
    assert_int_equal(out.data[7], 0);
    assert_true(contains(&out, "user"));
    assert_true(contains(&out, "alice"));
    assert_int_equal(R.want_write, 1);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_STARTUP);
    assert_int_equal(pgw_session_start(s), PGW_EBUSY);
    assert_int_equal(pgw_session_auth_ok(s), 0);
    assert_int_equal(pgw_session_auth_ok(NULL), 0);

    pgw_buf_t w = {0};
    static const uint8_t key[4] = {9, 8, 7, 6};
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_param_status(&w, "server_version", "16.1");
    pgt_msg_param_status(&w, "TimeZone", "UTC");
    pgt_msg_backend_key(&w, 777, key, 4);
    pgt_msg_notice(&w, "hello");
    pgt_msg_param_status(&w, "TimeZone", "Europe/Paris"); /* updated in place */
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    assert_string_equal(pgw_session_auth_method(s), "trust");
    assert_int_equal(pgw_session_auth_ok(s), 1);
    assert_string_equal(pgw_session_parameter(s, "server_version"), "16.1");
    assert_string_equal(pgw_session_parameter(s, "TimeZone"), "Europe/Paris");
    assert_null(pgw_session_parameter(s, "nope"));
    assert_int_equal(R.params, 3);
    assert_int_equal(R.notices, 1);
    assert_int_equal(pgw_session_txn_status(s), 'I');
    assert_int_equal(pgw_session_protocol(s), PGW_PROTO_3_0);
    int32_t pid;
    const uint8_t *k;
    size_t klen;
    assert_int_equal(pgw_session_backend_key(s, &pid, &k, &klen), 0);
    assert_int_equal(pid, 777);
    assert_int_equal(klen, 4);
    assert_memory_equal(k, key, 4);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
}

static void test_cleartext(void **state)
{
    (void)state;
    sess_opts_t o = {.password = "s3cret"};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    pgt_msg_auth(&w, 3, NULL, 0);
    feed(s, &w);
    grab(s, &out);
    static const uint8_t expect[] = {'p', 0, 0, 0, 11, 's', '3', 'c', 'r', 'e', 't', 0};
    assert_int_equal(out.len, sizeof expect);
    assert_memory_equal(out.data, expect, sizeof expect);
    w.len = 0;
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_status, 0);
    assert_string_equal(pgw_session_auth_method(s), "password");
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
}

static void md5_hex(const void *a, size_t an, const void *b, size_t bn, char out[33])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned char d[16];
    unsigned int dl;
    EVP_DigestInit_ex(c, EVP_md5(), NULL);
    EVP_DigestUpdate(c, a, an);
    EVP_DigestUpdate(c, b, bn);
    EVP_DigestFinal_ex(c, d, &dl);
    EVP_MD_CTX_free(c);
    for (int i = 0; i < 16; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_md5(void **state)
{
    (void)state;
    sess_opts_t o = {.user = "bob", .password = "pw"};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    static const uint8_t salt[4] = {0x01, 0x02, 0x03, 0x04};
    pgt_msg_auth(&w, 5, salt, 4);
    feed(s, &w);
    grab(s, &out);
    char inner[33], outer[33];
    md5_hex("pw", 2, "bob", 3, inner);
    md5_hex(inner, 32, salt, 4, outer);
    uint8_t expect[41];
    expect[0] = 'p';
    expect[1] = expect[2] = expect[3] = 0;
    expect[4] = 40;
    memcpy(expect + 5, "md5", 3);
    memcpy(expect + 8, outer, 32);
    expect[40] = 0;
    assert_int_equal(out.len, sizeof expect);
    assert_memory_equal(out.data, expect, sizeof expect);
    w.len = 0;
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_status, 0);
    assert_string_equal(pgw_session_auth_method(s), "md5");
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
}

/* RFC 7677 section 3. */
#define RFC_NONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_FIRST \
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_CLIENT_FINAL                                                             \
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+" \
    "Ute9ytag9zjfMHgs"                                                               \
    "qmmiz7AndVQ="
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
#define BAD_SERVER_FINAL "v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static void sasl_offer(pgw_buf_t *w, int plain, int plus)
{
    size_t at = pgt_msg_begin(w, 'R');
    pgt_msg_put_i32(w, 10);
    if (plus) pgt_msg_put_cstr(w, "SCRAM-SHA-256-PLUS");
    if (plain) pgt_msg_put_cstr(w, "SCRAM-SHA-256");
    pgt_msg_put_u8(w, 0);
    pgt_msg_end(w, at);
}

static pgw_session_t *scram_session(const char *require_auth, const char *cb_mode)
{
    sess_opts_t o = {.user = "user",
                     .password = "pencil",
                     .require_auth = require_auth,
                     .channel_binding = cb_mode};
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = new_session(&R, &o);
    pgw__session_set_test_nonce(s, RFC_NONCE);
    assert_int_equal(pgw_session_start(s), 0);
    return s;
}

/* Runs SCRAM up to the client-final-message; returns the session. */
static pgw_session_t *scram_to_final(const char *require_auth)
{
    pgw_session_t *s = scram_session(require_auth, NULL);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    sasl_offer(&w, 1, 0);
    feed(s, &w);
    grab(s, &out);
    /* SASLInitialResponse: mechanism, length, client-first-message. */
    static const char first[] = "n,,n=user,r=" RFC_NONCE;
    assert_int_equal(out.data[0], 'p');
    assert_true(contains(&out, "SCRAM-SHA-256"));
    assert_true(contains(&out, first));
    assert_string_equal(pgw_session_auth_method(s), "SCRAM-SHA-256");
    w.len = 0;
    pgt_msg_auth(&w, 11, RFC_SERVER_FIRST, strlen(RFC_SERVER_FIRST));
    feed(s, &w);
    grab(s, &out);
    assert_int_equal(out.data[0], 'p');
    assert_int_equal(out.len, 5 + strlen(RFC_CLIENT_FINAL));
    assert_memory_equal(out.data + 5, RFC_CLIENT_FINAL, strlen(RFC_CLIENT_FINAL));
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    return s;
}

static void test_scram_rfc7677(void **state)
{
    (void)state;
    pgw_session_t *s = scram_to_final("scram-sha-256");
    pgw_buf_t w = {0};
    pgt_msg_auth(&w, 12, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL));
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    pgw_buf_free(&w);
    pgw_session_free(s);
}

/* Case 4e: a wrong server signature fails with and without a policy. */
static void test_scram_wrong_signature(void **state)
{
    (void)state;
    const char *policies[] = {NULL, "scram-sha-256"};
    for (int i = 0; i < 2; i++) {
        pgw_session_t *s = scram_to_final(policies[i]);
        pgw_buf_t w = {0};
        pgt_msg_auth(&w, 12, BAD_SERVER_FINAL, strlen(BAD_SERVER_FINAL));
        pgt_msg_auth(&w, 0, NULL, 0);
        pgt_msg_ready(&w, 'I');
        feed(s, &w);
        assert_int_equal(R.startup_calls, 1);
        assert_int_equal(R.startup_status, PGW_EAUTH);
        assert_int_equal(R.broken_calls, 1);
        assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
        assert_int_equal(pgw_session_error(s), PGW_EAUTH);
        pgw_buf_free(&w);
        pgw_session_free(s);
    }
}

/* Case 4f: AuthenticationOk before SASLFinal always fails. */
static void test_scram_ok_before_final(void **state)
{
    (void)state;
    const char *policies[] = {NULL, "scram-sha-256"};
    for (int i = 0; i < 2; i++) {
        pgw_session_t *s = scram_to_final(policies[i]);
        pgw_buf_t w = {0};
        pgt_msg_auth(&w, 0, NULL, 0);
        pgt_msg_ready(&w, 'I');
        feed(s, &w);
        assert_int_equal(R.startup_status, PGW_EAUTH);
        assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
        pgw_buf_free(&w);
        pgw_session_free(s);
    }
}

/* Cases 4a-c: with require_auth=scram-sha-256 an immediate AuthenticationOk,
 * a cleartext request and an MD5 request all fail and no password-derived
 * byte is sent; without the policy they succeed. */
static void downgrade(int code, const char *policy, const char *cb_mode, int expect)
{
    sess_opts_t o = {.password = "hunter2", .require_auth = policy, .channel_binding = cb_mode};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    static const uint8_t salt[4] = {5, 6, 7, 8};
    pgt_msg_auth(&w, code, salt, code == 5 ? 4 : 0);
    if (expect == 0 && code != 0) {
        feed(s, &w);
        w.len = 0;
        pgt_msg_auth(&w, 0, NULL, 0);
    }
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    grab(s, &out);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, expect);
    if (expect < 0) {
        assert_int_equal(out.len, 0); /* nothing sent after the StartupMessage */
        assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
        assert_int_equal(R.broken_calls, 1);
    }
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
}

static void test_downgrade_policy(void **state)
{
    (void)state;
    int codes[] = {0, 3, 5};
    for (int i = 0; i < 3; i++) {
        downgrade(codes[i], "scram-sha-256", NULL, PGW_EAUTHPOLICY);
        downgrade(codes[i], NULL, "require", PGW_EAUTHPOLICY);
        downgrade(codes[i], "scram-sha-256", "require", PGW_EAUTHPOLICY);
        downgrade(codes[i], NULL, NULL, 0);
    }
    /* Negated and listed forms. */
    downgrade(3, "!password", NULL, PGW_EAUTHPOLICY);
    downgrade(5, "!password", NULL, 0);
    downgrade(5, "password,md5", NULL, 0);
    downgrade(0, "none", NULL, 0);
    downgrade(0, "!none", NULL, PGW_EAUTHPOLICY);
    downgrade(0, "md5", NULL, PGW_EAUTHPOLICY);
}

/* Case 4d: channel_binding=require with only SCRAM-SHA-256 offered fails
 * before anything is sent, even over TLS. */
static int fake_cb(pgw_session_t *s, const uint8_t **data, size_t *len, void *ud)
{
    static const uint8_t hash[32] = {1, 2, 3};
    (void)s, (void)ud;
    *data = hash;
    *len = sizeof hash;
    return 0;
}

static void test_channel_binding(void **state)
{
    (void)state;
    sess_opts_t o = {.user = "user",
                     .password = "pencil",
                     .channel_binding = "require",
                     .channel_binding_cb = fake_cb};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    sasl_offer(&w, 1, 0);
    feed(s, &w);
    grab(s, &out);
    assert_int_equal(R.startup_status, PGW_EAUTHPOLICY);
    assert_int_equal(out.len, 0);
    pgw_session_free(s);

    /* -PLUS offered and binding data available: the PLUS mechanism is used. */
    s = fresh(&o);
    grab(s, &out);
    w.len = 0;
    sasl_offer(&w, 1, 1);
    feed(s, &w);
    grab(s, &out);
    assert_true(contains(&out, "SCRAM-SHA-256-PLUS"));
    assert_true(contains(&out, "p=tls-server-end-point,,"));
    assert_int_equal(R.startup_calls, 0);
    pgw_session_free(s);
    assert_int_equal(R.startup_calls, 0); /* freeing is not a startup failure report */

    /* prefer, TLS, no -PLUS: plain SCRAM with the "y" flag. */
    o.channel_binding = NULL;
    s = fresh(&o);
    grab(s, &out);
    w.len = 0;
    sasl_offer(&w, 1, 0);
    feed(s, &w);
    grab(s, &out);
    assert_true(contains(&out, "y,,n="));
    pgw_session_free(s);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
}

/* A password request (cleartext, MD5, SASL) without a password fails with
 * libpq's words, which libpq programs such as psql read to prompt for one. */
static void test_no_password_message(void **state)
{
    (void)state;
    static const uint8_t salt[4] = {1, 2, 3, 4};
    static const char mechs[] = "SCRAM-SHA-256\0";
    const struct {
        int32_t code;
        const void *data;
        size_t len;
    } asks[] = {{3, NULL, 0}, {5, salt, 4}, {10, mechs, sizeof mechs}};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        pgw_session_t *s = fresh(NULL);
        pgw_buf_t w = {0};
        pgt_msg_auth(&w, asks[i].code, asks[i].data, asks[i].len);
        feed(s, &w);
        assert_int_equal(R.startup_status, PGW_EAUTH);
        assert_string_equal(R.startup_message, "fe_sendauth: no password supplied");
        pgw_buf_free(&w);
        pgw_session_free(s);
    }
}

static void test_no_password_and_gss(void **state)
{
    (void)state;
    pgw_session_t *s = fresh(NULL);
    pgw_buf_t w = {0};
    pgt_msg_auth(&w, 3, NULL, 0);
    feed(s, &w);
    assert_int_equal(R.startup_status, PGW_EAUTH);
    pgw_session_free(s);

    /* GSSAPI, SSPI, Kerberos 5 and unknown methods: not supported, named. */
    static const struct {
        int32_t code;
        const char *name;
    } unsupported[] = {{7, "GSSAPI"}, {9, "SSPI"}, {2, "Kerberos 5"}, {42, "unknown"}};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        s = fresh(NULL);
        w.len = 0;
        pgt_msg_auth(&w, unsupported[i].code, NULL, 0);
        feed(s, &w);
        assert_int_equal(R.startup_status, PGW_ENOTSUP);
        assert_non_null(strstr(R.startup_message, unsupported[i].name));
        assert_non_null(strstr(R.startup_message, "not support"));
        assert_int_equal(pgw_session_auth_ok(s), 0);
        pgw_session_free(s);
    }
    w.len = 0;
    pgt_msg_auth(&w, 7, NULL, 0);

    sess_opts_t o = {.require_auth = "scram-sha-256"};
    s = fresh(&o);
    feed(s, &w);
    assert_int_equal(R.startup_status, PGW_EAUTHPOLICY);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_config_errors(void **state)
{
    (void)state;
    pgw_session_t *s = NULL;
    sess_opts_t bad[] = {{.require_auth = "kerberos"}, {.require_auth = "md5,!password"},
                         {.require_auth = "md5,md5"},  {.require_auth = "!oauth,!oauth"},
                         {.channel_binding = "maybe"}, {.max_protocol = 12345}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(new_session_opts(&s, &R, &bad[i]), PGW_EINVAL);
    /* libpq 18 accepts these (an empty value allows every method) */
    sess_opts_t good[] = {{.require_auth = ""},
                          {.require_auth = "oauth"},
                          {.require_auth = "!oauth"},
                          {.require_auth = "none,oauth"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(new_session_opts(&s, &R, &good[i]), 0);
        pgw_session_free(s);
    }
    /* No "user" parameter. */
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    const char *params[] = {"database", "x"};
    cfg.startup_params = params;
    cfg.nstartup_params = 1;
    assert_int_equal(pgw_session_new(&s, &cfg), PGW_EINVAL);
}

static void test_startup_error(void **state)
{
    (void)state;
    pgw_session_t *s = fresh(NULL);
    /* A request queued before startup fails once with the connection. */
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(0)), 0);
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "FATAL", "28000", "no pg_hba.conf entry");
    feed(s, &w);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, PGW_ESERVER);
    assert_string_equal(R.startup_sqlstate, "28000");
    assert_int_equal(R.broken_calls, 1);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, PGW_ECONNLOST);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(1)), PGW_ECLOSED);
    pgw_buf_free(&w);
    pgw_session_free(s);
    assert_int_equal(R.done[1].calls, 0);
}

static void test_held_requests(void **state)
{
    (void)state;
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = new_session(&R, NULL);
    /* Queued before start: held until ReadyForQuery. */
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_start(s), 0);
    pgw_param_t p = pgw_int8(5);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(1)), 0);
    pgw_buf_t out = {0}, w = {0};
    take_out(s, &out);
    assert_false(contains(&out, "SELECT"));
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "QPBDES");
    assert_int_equal(pgw_session_pending(s), 2);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
    assert_int_equal(R.done[0].status, PGW_ECANCELED);
    assert_int_equal(R.done[1].status, PGW_ECANCELED);
    assert_int_equal(R.done[0].calls + R.done[1].calls, 2);
}

static void w_negotiate(pgw_buf_t *w, uint32_t version)
{
    size_t at = pgt_msg_begin(w, 'v');
    pgt_msg_put_i32(w, (int32_t)version);
    pgt_msg_put_i32(w, 0);
    pgt_msg_end(w, at);
}

/* A 3.2 request answered with NegotiateProtocolVersion version: downgrade
 * to 3.0, or with min_protocol 3.2 refuse with a message naming the
 * versions. PostgreSQL 15 to 17 send the whole version 0x00030000, the
 * protocol documentation describes the bare minor 0: both mean 3.0. */
static void check_downgrade(uint32_t version)
{
    sess_opts_t o = {.max_protocol = PGW_PROTO_3_2};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t out = {0}, w = {0};
    grab(s, &out);
    assert_int_equal(out.data[7], 2); /* 3.2 requested */
    w_negotiate(&w, version);
    pgt_msg_auth(&w, 0, NULL, 0);
    static const uint8_t key4[4] = {1, 2, 3, 4};
    pgt_msg_backend_key(&w, 1, key4, 4);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_status, 0);
    assert_int_equal(pgw_session_protocol(s), PGW_PROTO_3_0);
    pgw_session_free(s);

    o.min_protocol = PGW_PROTO_3_2;
    s = fresh(&o);
    feed(s, &w);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, PGW_ENOTSUP);
    assert_non_null(strstr(R.startup_message, "server does not support protocol 3.2"));
    assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    pgw_session_free(s);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
}

static void test_negotiate_server_form(void **state)
{
    (void)state;
    check_downgrade(0x00030000u);
    /* A major version other than 3 is a violation. */
    sess_opts_t o = {.max_protocol = PGW_PROTO_3_2};
    pgw_session_t *s = fresh(&o);
    pgw_buf_t w = {0};
    w_negotiate(&w, 0x00040000u);
    feed(s, &w);
    assert_int_equal(R.startup_status, PGW_EPROTO);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_negotiate(void **state)
{
    (void)state;
    check_downgrade(0);
    sess_opts_t o = {.max_protocol = PGW_PROTO_3_2};
    pgw_session_t *s;
    pgw_buf_t w = {0};

    /* 3.2 accepted: a 32-byte cancel key. */
    s = fresh(&o);
    uint8_t key[32];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    w.len = 0;
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_backend_key(&w, 99, key, 32);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_status, 0);
    assert_int_equal(pgw_session_protocol(s), PGW_PROTO_3_2);
    const uint8_t *k;
    size_t kl;
    assert_int_equal(pgw_session_backend_key(s, NULL, &k, &kl), 0);
    assert_int_equal(kl, 32);
    assert_memory_equal(k, key, 32);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* The StartupMessage of a session with these (name, value) pairs. */
static void startup_packet(const char *const *params, size_t n, pgw_buf_t *out)
{
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = n;
    pgw_session_t *s;
    assert_int_equal(pgw_session_new(&s, &cfg), 0);
    assert_int_equal(pgw_session_start(s), 0);
    grab(s, out);
    pgw_session_free(s);
}

static int has_pair(const pgw_buf_t *w, const char *pair, size_t len)
{
    return memmem(w->data, w->len, pair, len) != NULL;
}
#define HAS_PAIR(w, lit) has_pair((w), (lit), sizeof(lit)) /* with the final NUL */

/* The text decoders parse ISO dates and postgres intervals. The startup
 * packet carries only what the application gave (as libpq's does, and as
 * PgBouncer accepts); a server reporting other styles gets them set right
 * after startup, ahead of every queued request and keeping its DMY/MDY
 * input order, and the connection is reported ready once they are; the
 * application's own choice is left alone. */
static void startup_reporting(pgw_session_t *s, const char *datestyle, const char *intervalstyle)
{
    pgw_buf_t w = {0};
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_param_status(&w, "DateStyle", datestyle);
    pgt_msg_param_status(&w, "IntervalStyle", intervalstyle);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    pgw_buf_free(&w);
}

static void test_startup_styles(void **state)
{
    (void)state;
    pgw_buf_t w = {0}, out = {0};
    const char *plain[] = {"user", "alice"};
    startup_packet(plain, 1, &w);
    assert_false(HAS_PAIR(&w, "\0DateStyle\0"));
    assert_false(HAS_PAIR(&w, "\0IntervalStyle\0"));
    const char *own[] = {"user", "alice", "datestyle", "SQL, DMY", "INTERVALSTYLE", "iso_8601"};
    startup_packet(own, 3, &w);
    assert_true(HAS_PAIR(&w, "\0datestyle\0SQL, DMY"));
    assert_true(HAS_PAIR(&w, "\0INTERVALSTYLE\0iso_8601"));

    /* The defaults: nothing to set, ready at once. */
    pgw_session_t *s = fresh(NULL);
    grab(s, &out);
    startup_reporting(s, "ISO, MDY", "postgres");
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, 0);
    grab(s, &out);
    assert_int_equal(out.len, 0);
    pgw_session_free(s);

    /* A database defaulting to SQL, DMY and sql_standard, with a request
     * queued before startup: the settings go first, the request after,
     * and ready is reported when the settings are done. */
    memset(&R, 0, sizeof R);
    g_rec = &R;
    s = new_session(&R, NULL);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_start(s), 0);
    grab(s, &out);
    startup_reporting(s, "SQL, DMY", "sql_standard");
    assert_int_equal(R.startup_calls, 0);
    grab(s, &out);
    char types[8];
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "QQ");
    assert_true(contains(&out, "SET DateStyle = 'ISO, DMY'; SET IntervalStyle = 'postgres'"));
    assert_true(memmem(out.data, out.len, "SET DateStyle", 13) <
                memmem(out.data, out.len, "SELECT 1", 8));
    assert_int_equal(pgw_session_pending(s), 1); /* the application's request only */
    w.len = 0;
    pgt_msg_command_complete(&w, "SET");
    pgt_msg_param_status(&w, "DateStyle", "ISO, DMY");
    pgt_msg_command_complete(&w, "SET");
    pgt_msg_param_status(&w, "IntervalStyle", "postgres");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, 0);
    assert_int_equal(R.done[0].calls, 0); /* SELECT 1 not answered yet */
    assert_string_equal(pgw_session_parameter(s, "DateStyle"), "ISO, DMY");
    pgw_session_free(s);
    assert_int_equal(R.done[0].calls, 1);

    /* Only the style that differs is set. */
    s = fresh(NULL);
    grab(s, &out);
    startup_reporting(s, "German, DMY", "postgres");
    grab(s, &out);
    assert_true(contains(&out, "SET DateStyle = 'ISO, DMY'; "));
    assert_false(contains(&out, "IntervalStyle"));
    pgw_session_free(s);

    /* The connection dies while the settings run: startup fails once. */
    s = fresh(NULL);
    startup_reporting(s, "Postgres, MDY", "iso_8601");
    assert_int_equal(R.startup_calls, 0);
    pgw_session_fail(s, PGW_ECONNLOST);
    assert_int_equal(R.startup_calls, 1);
    assert_int_equal(R.startup_status, PGW_ECONNLOST);
    pgw_session_free(s);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
}

static void test_unexpected_in_startup(void **state)
{
    (void)state;
    pgw_session_t *s = fresh(NULL);
    pgw_buf_t w = {0};
    pgt_msg_command_complete(&w, "SELECT 1");
    feed(s, &w);
    assert_int_equal(R.startup_status, PGW_EPROTO);
    assert_int_equal(R.broken_calls, 1);
    assert_int_equal(R.broken_err, PGW_EPROTO);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trust),
        cmocka_unit_test(test_cleartext),
        cmocka_unit_test(test_md5),
        cmocka_unit_test(test_scram_rfc7677),
        cmocka_unit_test(test_scram_wrong_signature),
        cmocka_unit_test(test_scram_ok_before_final),
        cmocka_unit_test(test_downgrade_policy),
        cmocka_unit_test(test_channel_binding),
        cmocka_unit_test(test_no_password_message),
        cmocka_unit_test(test_no_password_and_gss),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_startup_error),
        cmocka_unit_test(test_held_requests),
        cmocka_unit_test(test_negotiate),
        cmocka_unit_test(test_negotiate_server_form),
        cmocka_unit_test(test_startup_styles),
        cmocka_unit_test(test_unexpected_in_startup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
