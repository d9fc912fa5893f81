/*
 * GSSAPI against a real Kerberos realm (tests/pg/kdc.sh, the krb5 fixture:
 * MIT's KDC on loopback and a cluster of its own with krb_server_keyfile
 * and hostgssenc / hostnogssenc lines), libpq 15 (built with GSSAPI)
 * beside libpgwire on every case: GSS authentication over plaintext and
 * over TLS, GSS encryption with each gssencmode against roles the server
 * accepts and refuses it for, no ticket, an expired ticket, a wrong
 * service name. Each case checks both libraries connect or both fail, and
 * that pg_stat_gssapi (and pg_stat_ssl) of their sessions agree.
 *
 * Each case names its credential cache (KRB5CCNAME, a file of this test's
 * directory filled by kinit from the fixture's client keytab) and uses the
 * fixture's krb5.conf (KRB5_CONFIG), never the machine's.
 *
 * libpq 15 and libpgwire (which follows libpq 18) differ in a few words
 * (gssencmode=require without a ticket: libpq 15 says "GSSAPI encryption
 * required but was impossible (...)", libpq 18 "GSSAPI encryption required
 * but no credential cache"): failures compare the server's part and the
 * GSS-API's words, not those sentences.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "auth/gss.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"
#include "pgwire/pool.h"

#include <uv.h>

static char dir[64];
static char cc_valid[128], cc_expired[128], cc_none[128];

/* What a session says about itself: "gss_authenticated|principal|
 * encrypted|ssl". */
#define SELF_SQL                                                                      \
    "SELECT concat_ws('|', g.gss_authenticated, coalesce(g.principal, ''), "          \
    "g.encrypted, s.ssl) FROM pg_stat_gssapi g JOIN pg_stat_ssl s USING (pid) WHERE " \
    "pid = pg_backend_pid()"

static const char *kv(const char *key)
{
    const char *v = pgt_krb5_env(key);
    if (!v) fail_msg("the krb5 fixture's env lacks %s", key);
    return v;
}

static void kinit(const char *ccache, const char *lifetime)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "KRB5_CONFIG='%s' KRB5CCNAME='FILE:%s' kinit %s%s -k -t '%s' '%s' >/dev/null 2>&1",
             kv("PGW_KRB5_CONFIG"), ccache, lifetime ? "-l " : "", lifetime ? lifetime : "",
             kv("PGW_KRB_KEYTAB"), kv("PGW_KRB_PRINCIPAL"));
    if (system(cmd) != 0) fail_msg("kinit failed: %s", cmd);
}

static void use_cache(const char *ccache)
{
    char v[160];
    snprintf(v, sizeof v, "FILE:%s", ccache);
    setenv("KRB5CCNAME", v, 1);
}

static int group_setup(void **state)
{
    pgt_require_krb5();
    snprintf(dir, sizeof dir, "/tmp/pgw-gss.XXXXXX");
    if (!mkdtemp(dir)) return -1;
    setenv("KRB5_CONFIG", kv("PGW_KRB5_CONFIG"), 1);
    snprintf(cc_valid, sizeof cc_valid, "%s/valid", dir);
    snprintf(cc_expired, sizeof cc_expired, "%s/expired", dir);
    snprintf(cc_none, sizeof cc_none, "%s/none", dir);
    kinit(cc_valid, NULL);
    /* A one-second ticket, past its end once the other setup is done. */
    kinit(cc_expired, "1s");
    sleep(2);
    return 0;
}

static int group_teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The connection string of a case: the fixture's server by host name (the
 * service principal's) and address, as user, then extra. */
static void conninfo(char *buf, size_t n, const char *user, const char *extra)
{
    snprintf(buf, n, "host=%s hostaddr=%s port=%s user=%s dbname=postgres %s", kv("PGW_GSS_HOST"),
             kv("PGW_GSS_HOSTADDR"), kv("PGW_GSS_PORT"), user, extra ? extra : "");
}

typedef struct outcome {
    int ok;
    char self[256]; /* SELF_SQL's answer when connected */
    char msg[2048]; /* the error message when not */
    int status;     /* libpgwire's */
    int gss_enc;    /* libpgwire's pgw_conn_gss_info */
    int gss_used;
} outcome_t;

static void run_libpq(const char *ci, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    PGconn *pq = PQconnectdb(ci);
    assert_non_null(pq);
    o->ok = PQstatus(pq) == CONNECTION_OK;
    snprintf(o->msg, sizeof o->msg, "%s", PQerrorMessage(pq));
    size_t len = strlen(o->msg);
    if (len && o->msg[len - 1] == '\n') o->msg[len - 1] = '\0';
    if (o->ok) {
        PGresult *r = PQexec(pq, SELF_SQL);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        snprintf(o->self, sizeof o->self, "%s", PQgetvalue(r, 0, 0));
        o->gss_enc = PQgssEncInUse(pq);
        PQclear(r);
    }
    PQfinish(pq);
}

static void run_pgw(const char *ci, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    pgw_client_t *c = NULL;
    o->status = pgw_client_connect_err(&c, ci, NULL, o->msg, sizeof o->msg);
    o->ok = o->status == 0;
    if (!o->ok) return;
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, SELF_SQL, &res), 0);
    pgw_str_t v;
    assert_int_equal(pgw_result_text(res, 0, 0, &v), 0);
    snprintf(o->self, sizeof o->self, "%.*s", (int)v.len, v.p);
    pgw_result_free(res);
    pgw_gss_info_t gi;
    assert_int_equal(pgw_conn_gss_info(pgw_client_conn(c), &gi), 0);
    o->gss_enc = gi.encrypted;
    o->gss_used = gi.used;
    pgw_client_close(c);
}

/* One case on both libraries with ccache. expect_self: the session's
 * SELF_SQL answer when both must connect, NULL when both must fail (then
 * each message must contain every string of the NULL-terminated list
 * `says`). Returns libpgwire's status. */
static int run_case(const char *ccache, const char *user, const char *extra,
                    const char *expect_self, ...)
{
    char ci[512];
    conninfo(ci, sizeof ci, user, extra);
    use_cache(ccache);
    outcome_t pq, pg;
    run_libpq(ci, &pq);
    run_pgw(ci, &pg);
    print_message("%s [%s]\n  libpq:     %s%s\n  libpgwire: %s%s (%s)\n", ci, ccache,
                  pq.ok ? "connected " : "", pq.ok ? pq.self : pq.msg, pg.ok ? "connected " : "",
                  pg.ok ? pg.self : pg.msg, pgw_err_name(pg.status));
    assert_int_equal(pg.ok, pq.ok);
    if (expect_self) {
        assert_true(pq.ok);
        assert_string_equal(pq.self, expect_self);
        assert_string_equal(pg.self, pq.self);
        /* the library's own view agrees with the server's */
        assert_int_equal(pg.gss_enc, pq.gss_enc);
        assert_int_equal(pg.gss_enc, strstr(pg.self, "|t|") != NULL);
        assert_int_equal(pg.gss_used, strncmp(pg.self, "t|", 2) == 0);
        return 0;
    }
    assert_false(pq.ok);
    /* The same report, but where libpq 15's sentence is older than libpq
     * 18's (see the top of this file). */
    if (!strstr(pq.msg, "GSSAPI encryption required but was impossible"))
        assert_string_equal(pg.msg, pq.msg);
    va_list ap;
    va_start(ap, expect_self);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
        if (!strstr(pq.msg, s)) fail_msg("libpq's message lacks \"%s\"", s);
        if (!strstr(pg.msg, s)) fail_msg("libpgwire's message lacks \"%s\"", s);
    }
    va_end(ap);
    return pg.status;
}

static const char *self_row(char *buf, size_t n, int gss, int enc, int ssl)
{
    snprintf(buf, n, "%s|%s|%s|%s", gss ? "t" : "f", gss ? kv("PGW_KRB_PRINCIPAL") : "",
             enc ? "t" : "f", ssl ? "t" : "f");
    return buf;
}

/* ------------------------------------------------------------ the cases */

static void test_gss_auth_plaintext_and_tls(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_USER");
    run_case(cc_valid, u, "gssencmode=disable sslmode=disable", self_row(row, sizeof row, 1, 0, 0),
             NULL);
    run_case(cc_valid, u, "gssencmode=disable sslmode=require", self_row(row, sizeof row, 1, 0, 1),
             NULL);
    /* GSS authentication over plaintext for the role that refuses GSS
     * encryption */
    run_case(cc_valid, kv("PGW_GSS_NOENC_USER"), "gssencmode=disable sslmode=disable",
             self_row(row, sizeof row, 1, 0, 0), NULL);
}

static void test_gss_encryption_modes(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_USER");
    /* prefer (the default) and require: encrypted, authenticated by it */
    run_case(cc_valid, u, "", self_row(row, sizeof row, 1, 1, 0), NULL);
    run_case(cc_valid, u, "gssencmode=prefer sslmode=require", self_row(row, sizeof row, 1, 1, 0),
             NULL);
    run_case(cc_valid, u, "gssencmode=require", self_row(row, sizeof row, 1, 1, 0), NULL);
    run_case(cc_valid, u, "gssencmode=require sslmode=disable", self_row(row, sizeof row, 1, 1, 0),
             NULL);
}

static void test_server_accepts_only_gss_encryption(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_ENC_USER");
    run_case(cc_valid, u, "gssencmode=prefer", self_row(row, sizeof row, 1, 1, 0), NULL);
    run_case(cc_valid, u, "gssencmode=require", self_row(row, sizeof row, 1, 1, 0), NULL);
    assert_int_equal(run_case(cc_valid, u, "gssencmode=disable sslmode=disable", NULL,
                              "no pg_hba.conf entry", "no encryption", NULL),
                     PGW_ESERVER);
    assert_int_equal(run_case(cc_valid, u, "gssencmode=disable", NULL, "no pg_hba.conf entry",
                              "SSL encryption", "no encryption", NULL),
                     PGW_ESERVER);
}

static void test_server_refuses_gss_encryption(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_NOENC_USER");
    /* prefer: GSS encryption first, refused by pg_hba.conf; then TLS (and
     * GSS authentication over it), or plaintext */
    run_case(cc_valid, u, "gssencmode=prefer", self_row(row, sizeof row, 1, 0, 1), NULL);
    run_case(cc_valid, u, "gssencmode=prefer sslmode=disable", self_row(row, sizeof row, 1, 0, 0),
             NULL);
    run_case(cc_valid, u, "gssencmode=prefer sslmode=allow", self_row(row, sizeof row, 1, 0, 0),
             NULL);
    assert_int_equal(run_case(cc_valid, u, "gssencmode=require", NULL, "no pg_hba.conf entry",
                              "GSS encryption", NULL),
                     PGW_ESERVER);
}

static void test_no_ticket(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_USER");
    /* prefer is skipped without credentials; the server's GSS request then
     * fails in the GSS-API */
    run_case(cc_none, u, "gssencmode=prefer", NULL, "GSSAPI continuation error",
             "No Kerberos credentials available", NULL);
    run_case(cc_none, u, "gssencmode=disable sslmode=disable", NULL, "GSSAPI continuation error",
             "No Kerberos credentials available", NULL);
    run_case(cc_none, u, "gssencmode=require", NULL, "GSSAPI encryption required", NULL);
    /* a role that needs no GSSAPI connects as before, in plaintext or TLS */
    run_case(cc_none, kv("PGW_GSS_SUPERUSER"), "sslmode=disable",
             self_row(row, sizeof row, 0, 0, 0), NULL);
    run_case(cc_none, kv("PGW_GSS_SUPERUSER"), "", self_row(row, sizeof row, 0, 0, 1), NULL);
}

static void test_expired_ticket(void **state)
{
    const char *u = kv("PGW_GSS_USER");
    run_case(cc_expired, u, "gssencmode=prefer", NULL, "expired", NULL);
    run_case(cc_expired, u, "gssencmode=disable sslmode=disable", NULL, "GSSAPI continuation error",
             "expired", NULL);
    run_case(cc_expired, u, "gssencmode=require", NULL, "expired", NULL);
}

static void test_wrong_service_name(void **state)
{
    const char *u = kv("PGW_GSS_USER");
    run_case(cc_valid, u, "krbsrvname=wrongsvc", NULL, "not found in Kerberos database", NULL);
    run_case(cc_valid, u, "krbsrvname=wrongsvc gssencmode=disable sslmode=disable", NULL,
             "GSSAPI continuation error", "not found in Kerberos database", NULL);
    run_case(cc_valid, u, "krbsrvname=wrongsvc gssencmode=require", NULL,
             "could not initiate GSSAPI security context", "not found in Kerberos database", NULL);
}

/* The target is krbsrvname@host: with hostaddr alone, encryption names
 * the address (postgres/127.0.0.1 exists), authentication needs a name. */
static void test_hostaddr_only(void **state)
{
    char row[256], ci[512];
    snprintf(ci, sizeof ci, "hostaddr=%s port=%s user=%s dbname=postgres gssencmode=require",
             kv("PGW_GSS_HOSTADDR"), kv("PGW_GSS_PORT"), kv("PGW_GSS_USER"));
    use_cache(cc_valid);
    outcome_t pq, pg;
    run_libpq(ci, &pq);
    run_pgw(ci, &pg);
    assert_true(pq.ok);
    assert_true(pg.ok);
    assert_string_equal(pg.self, self_row(row, sizeof row, 1, 1, 0));
    assert_string_equal(pg.self, pq.self);
    snprintf(ci, sizeof ci,
             "hostaddr=%s port=%s user=%s dbname=postgres gssencmode=disable sslmode=disable",
             kv("PGW_GSS_HOSTADDR"), kv("PGW_GSS_PORT"), kv("PGW_GSS_USER"));
    run_libpq(ci, &pq);
    run_pgw(ci, &pg);
    print_message("libpq: %s\nlibpgwire: %s\n", pq.msg, pg.msg);
    assert_false(pq.ok);
    assert_false(pg.ok);
    assert_non_null(strstr(pq.msg, "host name must be specified"));
    assert_non_null(strstr(pg.msg, "host name must be specified"));
}

/* gssdelegation=1 asks to forward the (forwardable) ticket: the connection
 * works as without. */
static void test_delegation(void **state)
{
    char row[256];
    const char *u = kv("PGW_GSS_USER");
    char ci[512];
    conninfo(ci, sizeof ci, u, "gssdelegation=1 gssencmode=disable sslmode=disable");
    use_cache(cc_valid);
    outcome_t pg;
    run_pgw(ci, &pg);
    assert_true(pg.ok);
    assert_string_equal(pg.self, self_row(row, sizeof row, 1, 0, 0));
    conninfo(ci, sizeof ci, u, "gssdelegation=1 gssencmode=require");
    run_pgw(ci, &pg);
    assert_true(pg.ok);
    assert_string_equal(pg.self, self_row(row, sizeof row, 1, 1, 0));
}

/* require_auth=gss (libpq 16) has no libpq 15 to compare with: it accepts
 * a GSS exchange, and GSS encryption without one; scram-sha-256 refuses
 * both. */
static void test_require_auth_gss(void **state)
{
    const char *u = kv("PGW_GSS_USER");
    use_cache(cc_valid);
    static const struct {
        const char *extra;
        int status;
    } cases[] = {
        {"require_auth=gss gssencmode=disable sslmode=disable", 0},
        {"require_auth=gss gssencmode=require", 0},
        {"require_auth=!gss gssencmode=disable sslmode=disable", PGW_EAUTHPOLICY},
        {"require_auth=scram-sha-256 gssencmode=require", PGW_EAUTHPOLICY},
        {"require_auth=scram-sha-256 gssencmode=disable sslmode=disable", PGW_EAUTHPOLICY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char ci[512];
        conninfo(ci, sizeof ci, u, cases[i].extra);
        outcome_t pg;
        run_pgw(ci, &pg);
        print_message("%s: %s %s\n", cases[i].extra, pgw_err_name(pg.status), pg.msg);
        assert_int_equal(pg.status, cases[i].status);
    }
}

typedef struct canceller {
    const pgw_cancel_token_t *tok;
    int status;
    atomic_int done;
} canceller_t;

/* Cancel until the query (a minute's sleep) has ended: one sent before it
 * started is harmless, a later one interrupts it. */
static void *cancel_later(void *arg)
{
    canceller_t *k = arg;
    while (!atomic_load(&k->done)) {
        usleep(200 * 1000);
        if (!atomic_load(&k->done)) k->status = pgw_cancel_token_send(k->tok, 0);
    }
    return NULL;
}

/* A GSS-encrypted connection under load: large values both ways (many
 * packets), a pipelined batch, and a cancel that negotiates GSS
 * encryption too. */
static void test_encrypted_traffic_and_cancel(void **state)
{
    char ci[512];
    conninfo(ci, sizeof ci, kv("PGW_GSS_USER"), "gssencmode=require");
    use_cache(cc_valid);
    pgw_client_t *c = NULL;
    char msg[512];
    int rc = pgw_client_connect_err(&c, ci, NULL, msg, sizeof msg);
    if (rc) fail_msg("%s", msg);
    size_t big = 3u * 1024 * 1024 + 17;
    char *text = malloc(big + 1);
    assert_non_null(text);
    for (size_t i = 0; i < big; i++)
        text[i] = (char)('a' + i % 26);
    text[big] = '\0';
    pgw_param_t p[] = {pgw_text(text)};
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_query(c, "SELECT $1::text || 'end'", p, 1, &res), 0);
    pgw_str_t v;
    assert_int_equal(pgw_result_text(res, 0, 0, &v), 0);
    assert_int_equal(v.len, big + 3);
    assert_memory_equal(v.p, text, big);
    pgw_result_free(res);
    free(text);
    /* a pipelined batch: one write for all of it */
    pgw_request_t reqs[100];
    pgw_param_t vals[100][1];
    for (int i = 0; i < 100; i++) {
        vals[i][0] = pgw_int4(i);
        reqs[i] = PGW_QUERY("SELECT $1::int4 + 1", vals[i], 1, NULL, NULL);
    }
    pgw_conn_stats_t st0, st1;
    pgw_conn_stats(pgw_client_conn(c), &st0);
    pgw_result_t *results[100];
    assert_int_equal(pgw_client_run_batch(c, reqs, 100, 0, results, NULL), 0);
    pgw_conn_stats(pgw_client_conn(c), &st1);
    assert_int_equal(st1.writes - st0.writes, 1);
    for (int i = 0; i < 100; i++) {
        int32_t x;
        assert_int_equal(pgw_result_int4(results[i], 0, 0, &x), 0);
        assert_int_equal(x, i + 1);
        pgw_result_free(results[i]);
    }
    /* the cancel token says GSS encryption, and a cancel sent with it from
     * another thread interrupts the running query */
    pgw_cancel_token_t *tok = NULL;
    assert_int_equal(pgw_conn_cancel_token(pgw_client_conn(c), &tok), 0);
    pgw_cancel_token_info_t info;
    assert_int_equal(pgw_cancel_token_info(tok, &info), 0);
    assert_int_equal(info.gss, 1);
    assert_int_equal(info.tls, 0);
    canceller_t k = {tok, 1, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, &k), 0);
    res = NULL;
    rc = pgw_client_exec(c, "SELECT pg_sleep(60)", &res);
    atomic_store(&k.done, 1);
    pthread_join(th, NULL);
    assert_int_equal(k.status, 0);
    assert_int_equal(rc, PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "57014");
    pgw_result_free(res);
    pgw_cancel_token_free(tok);
    /* the connection goes on */
    assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), 0);
    pgw_result_free(res);
    pgw_client_close(c);
}

typedef struct pooled {
    int done, status;
    pgw_conn_t *conn;
    pgw_gss_info_t gss;
    char principal[128];
} pooled_t;

static void on_pooled(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    pooled_t *a = ud;
    a->done = 1;
    a->status = status;
    if (status) return;
    assert_int_equal(pgw_conn_gss_info(conn, &a->gss), 0);
    snprintf(a->principal, sizeof a->principal, "%s", a->gss.principal);
    a->conn = conn; /* held until both are in: two connections */
}

/* Every connection of a pool follows the conninfo's gssencmode as one
 * connection does: with the default (prefer) and a ticket, each of them
 * runs over GSS encryption, as libpq's does. */
static void test_pooled_connections(void **state)
{
    char ci[512];
    conninfo(ci, sizeof ci, kv("PGW_GSS_USER"), NULL);
    use_cache(cc_valid);
    outcome_t pq;
    run_libpq(ci, &pq);
    assert_true(pq.ok);
    assert_int_equal(pq.gss_enc, 1);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 0;
    cfg.max_size = 2;
    pgw_pool_t *p = NULL;
    assert_int_equal(pgw_pool_new(&p, &loop, ci, &cfg), 0);
    /* two at once, each held: the pool opens a connection for each */
    pooled_t a[2] = {{0}, {0}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(pgw_pool_acquire(p, 0, 20000, on_pooled, &a[i]), 0);
    while (!a[0].done || !a[1].done)
        uv_run(&loop, UV_RUN_ONCE);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.opened, 2);
    for (int i = 0; i < 2; i++) {
        if (a[i].status) fail_msg("pooled connect: %s", pgw_err_name(a[i].status));
        assert_int_equal(a[i].gss.encrypted, pq.gss_enc);
        assert_int_equal(a[i].gss.used, 1);
        assert_string_equal(a[i].principal, kv("PGW_KRB_PRINCIPAL"));
        assert_int_equal(pgw_pool_release(p, a[i].conn), 0);
    }
    pgw_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    /* Every case names its server: a conninfo with hostaddr alone would
     * take PGHOST's host as the name libpq and libpgwire give Kerberos. */
    unsetenv("PGHOST");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gss_auth_plaintext_and_tls),
        cmocka_unit_test(test_gss_encryption_modes),
        cmocka_unit_test(test_server_accepts_only_gss_encryption),
        cmocka_unit_test(test_server_refuses_gss_encryption),
        cmocka_unit_test(test_no_ticket),
        cmocka_unit_test(test_expired_ticket),
        cmocka_unit_test(test_wrong_service_name),
        cmocka_unit_test(test_hostaddr_only),
        cmocka_unit_test(test_delegation),
        cmocka_unit_test(test_require_auth_gss),
        cmocka_unit_test(test_encrypted_traffic_and_cancel),
        cmocka_unit_test(test_pooled_connections),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
