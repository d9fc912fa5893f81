/*
 * pgw_scram_verifier against the real server: the verifier is stored with
 * ALTER ROLE ... PASSWORD, the server keeps it unchanged, and a SCRAM login
 * with the password then succeeds. The SCRAM role keeps its password (only
 * the salt and iteration count change), so tests running beside this one
 * still log in. A role whose password SASLprep maps to nothing logs in as
 * with libpq, and so do passwords the server's SASLprep prepares other than
 * RFC 3454 would.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h, through pgclient.h: pthread_rwlock_t */
#include "auth/auth.h"          /* pgw__utf8_encode */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/auth.h"
#include "pgwire/client.h"
#include "pgwire/types_container.h"

#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <valgrind/valgrind.h>

static pgw_client_t *connect_ci(const char *ci)
{
    pgw_client_t *c = NULL;
    char err[256];
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
    if (rc != 0) fail_msg("connect: %s: %s", pgw_err_name(rc), err);
    return c;
}

/* ALTER ROLE user PASSWORD 'password', both quoted by the library. The
 * server keeps a SCRAM verifier as it is; a plain password it prepares with
 * its SASLprep and stores the SCRAM secret of the result. */
static void store_password(pgw_client_t *admin, const char *user, const char *password)
{
    char *lit = NULL, *ident = NULL;
    assert_int_equal(pgw_escape_literal(NULL, password, strlen(password), &lit), 0);
    assert_int_equal(pgw_escape_identifier(NULL, user, strlen(user), &ident), 0);
    size_t cap = strlen(lit) + strlen(ident) + 64;
    char *sql = malloc(cap);
    assert_non_null(sql);
    snprintf(sql, cap, "ALTER ROLE %s PASSWORD %s", ident, lit);
    pgt_client_exec_ok(admin, sql);
    free(sql);
    pgw_escape_free(NULL, lit);
    pgw_escape_free(NULL, ident);
}

/* Logs in as user with password through libpq (the reference: it must
 * agree with the server) and then through libpgwire. */
static void login_both(const char *user, const char *password)
{
    size_t cap = strlen(password) + 512;
    char *ci = malloc(cap);
    assert_non_null(ci);
    pgt_conninfo_tcp(ci, cap, user, password, NULL);
    PGconn *pq = PQconnectdb(ci);
    if (PQstatus(pq) != CONNECTION_OK) fail_msg("libpq: %s", PQerrorMessage(pq));
    PQfinish(pq);
    pgw_client_t *c = connect_ci(ci);
    pgt_client_exec_ok(c, "SELECT 1");
    pgw_client_close(c);
    free(ci);
}

static void test_server_accepts_verifier(void **state)
{
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_USER");
    const char *password = pgt_env_required("PGW_TEST_SCRAM_PASSWORD");
    char ci[512], verifier[PGW_SCRAM_VERIFIER_MAX];
    /* An unusual iteration count shows the stored secret is ours. */
    assert_int_equal(pgw_scram_verifier(verifier, sizeof verifier, password, 4099, NULL, 0, NULL),
                     0);

    pgw_client_t *admin = connect_ci(pgt_conninfo(ci, sizeof ci, NULL));
    store_password(admin, user, verifier);

    pgw_param_t p[] = {pgw_text(user)};
    pgw_result_t *res = NULL;
    assert_int_equal(
        pgw_client_query(admin, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", p, 1, &res),
        0);
    pgw_str_t stored;
    assert_int_equal(pgw_result_text(res, 0, 0, &stored), 0);
    assert_int_equal(stored.len, strlen(verifier));
    assert_memory_equal(stored.p, verifier, stored.len);
    pgw_result_free(res);

    /* SCRAM with the password against the stored verifier. */
    pgw_client_t *c = connect_ci(pgt_conninfo_tcp(ci, sizeof ci, user, password, NULL));
    pgt_client_exec_ok(c, "SELECT 1");
    pgw_client_close(c);
    char err[256];
    c = NULL;
    pgt_conninfo_tcp(ci, sizeof ci, user, "not-the-password", NULL);
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
    assert_true(rc == PGW_ESERVER || rc == PGW_EAUTH);
    assert_null(c);

    /* Back to the default iteration count, as the cluster script made it. */
    assert_int_equal(pgw_scram_verifier(verifier, sizeof verifier, password, 0, NULL, 0, NULL), 0);
    store_password(admin, user, verifier);
    pgw_client_close(admin);
}

/* A password SASLprep maps to nothing: the server stored its verifier from
 * the password as given (an empty result is prohibited), and libpq logs in
 * with it as given. libpgwire must too. */
static void test_login_password_prepared_to_nothing(void **state)
{
    (void)state;
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_PREP_USER");
    login_both(user, pgt_env_required("PGW_TEST_SCRAM_PREP_PASSWORD"));
}

/* The server's SASLprep checks prohibited characters and the bidi rule on
 * the mapped input, not on the NFKC output, and prepares a password of any
 * length: each of these logs in only if libpgwire prepares it the same way
 * (and libpq, the reference, logs in too). */
static void test_login_passwords_prepared_as_the_server_does(void **state)
{
    (void)state;
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_PREP_USER");
    /* 1,400 x U+2168 ROMAN NUMERAL NINE (4,200 bytes): prepared to "IX" x 1,400. */
    size_t n = 1400;
    char *nines = malloc(n * 3 + 1);
    assert_non_null(nines);
    for (size_t i = 0; i < n; i++)
        memcpy(nines + i * 3, "\xE2\x85\xA8", 3);
    nines[n * 3] = '\0';
    const char *passwords[] = {
        "\xEF\xAC\x9D",     /* U+FB1D: allowed as input, prepared to U+05D9 U+05B4 */
        "a\xCD\x80",        /* "a" U+0340: prohibited as input, so used as given */
        "\xD7\x99\xD6\xB4", /* U+05D9 U+05B4: breaks the bidi rule, used as given */
        nines,
    };
    char ci[512];
    pgw_client_t *admin = connect_ci(pgt_conninfo(ci, sizeof ci, NULL));
    for (size_t i = 0; i < sizeof passwords / sizeof *passwords; i++) {
        store_password(admin, user, passwords[i]);
        login_both(user, passwords[i]);
    }
    pgw_client_close(admin);
    free(nines);
}

/* Code points SASLprep treats differently: ASCII, spaces mapped to SPACE,
 * characters mapped to nothing, combining marks and their compositions,
 * compatibility forms NFKC rewrites (composition exclusions among them),
 * right-to-left and neutral characters, Hangul, prohibited and unassigned
 * (in Unicode 3.2) code points. */
static const uint32_t prep_pool[] = {
    'a',    'Z',     '1',    ' ',    0x00A0, 0x3000, 0x2000, 0x00AD, 0x200B,  0x2060,
    0xFE0F, 0x0301,  0x030A, 0x0308, 0x0340, 0x0344, 0x0041, 0x212B, 0x00C5,  0x2126,
    0xFB01, 0x2168,  0xFDFA, 0xFF21, 0x00BD, 0x0F77, 0x0958, 0x2ADC, 0x1D15E, 0x05D0,
    0x0627, 0xFB1D,  0x05B4, 0x0661, 0x200F, 0x1100, 0x1161, 0x11A8, 0xAC00,  0xE000,
    0x2FF0, 0x1F600, 0x00DF, 0x0130, 0x03D2, 0x1E9B, 0x0323, 0x0221};

/* Random passwords of one to six code points from prep_pool, with at least
 * one non-ASCII one: each is stored as a plain password on the server
 * (which prepares it with its own SASLprep, or keeps it as given when that
 * refuses it) and must log in through libpq and through libpgwire.
 * PGW_SASLPREP_DIFF_SEED and PGW_SASLPREP_DIFF_CASES (default 60; 12 under
 * valgrind) are printed on failure. */
static void test_login_random_passwords(void **state)
{
    (void)state;
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_PREP_USER");
    uint64_t x = (uint64_t)pgt_env_int("PGW_SASLPREP_DIFF_SEED", 20261204);
    int cases = pgt_env_int("PGW_SASLPREP_DIFF_CASES", RUNNING_ON_VALGRIND ? 12 : 60);
    char ci[512];
    pgw_client_t *admin = connect_ci(pgt_conninfo(ci, sizeof ci, NULL));
    for (int k = 0; k < cases; k++) {
        char pw[6 * 4 + 1];
        size_t len = 0;
        x = x * 6364136223846793005u + 1442695040888963407u;
        int n = 1 + (int)(x >> 61) % 6, non_ascii = 0;
        for (int i = 0; i < n || !non_ascii; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            uint32_t cp = prep_pool[(x >> 33) % (sizeof prep_pool / sizeof *prep_pool)];
            if (cp < 0x80 && i >= n) continue;
            if (i >= 6) break;
            non_ascii |= cp >= 0x80;
            len += pgw__utf8_encode(cp, pw + len);
        }
        pw[len] = '\0';
        if (!non_ascii) continue;
        print_message("case %d (seed %llu):", k, (unsigned long long)x);
        for (size_t i = 0; i < len; i++)
            print_message(" %02x", (unsigned char)pw[i]);
        print_message("\n");
        store_password(admin, user, pw);
        login_both(user, pw);
    }
    pgw_client_close(admin);
}

/* The role's password as the cluster script made it, even after a failure. */
static int restore_prep_password(void **state)
{
    (void)state;
    char ci[512];
    pgw_client_t *admin = connect_ci(pgt_conninfo(ci, sizeof ci, NULL));
    store_password(admin, pgt_env_required("PGW_TEST_SCRAM_PREP_USER"),
                   pgt_env_required("PGW_TEST_SCRAM_PREP_PASSWORD"));
    pgw_client_close(admin);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_accepts_verifier),
        cmocka_unit_test(test_login_password_prepared_to_nothing),
        cmocka_unit_test_teardown(test_login_passwords_prepared_as_the_server_does,
                                  restore_prep_password),
        cmocka_unit_test_teardown(test_login_random_passwords, restore_prep_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
