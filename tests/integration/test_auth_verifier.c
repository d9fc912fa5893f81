/*
 * pgw_scram_verifier against the real server: the verifier is stored with
 * ALTER ROLE ... PASSWORD, the server keeps it unchanged, and a SCRAM login
 * with the password then succeeds. The SCRAM role keeps its password (only
 * the salt and iteration count change), so tests running beside this one
 * still log in. A role whose password SASLprep maps to nothing logs in as
 * with libpq.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h, through pgclient.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/auth.h"
#include "pgwire/client.h"
#include "pgwire/types_container.h"

#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static pgw_client_t *connect_ci(const char *ci)
{
    pgw_client_t *c = NULL;
    char err[256];
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
    if (rc != 0) fail_msg("connect: %s: %s", pgw_err_name(rc), err);
    return c;
}

/* ALTER ROLE user PASSWORD 'verifier', both quoted by the library. */
static void store_verifier(pgw_client_t *admin, const char *user, const char *verifier)
{
    char sql[1024], *lit = NULL, *ident = NULL;
    assert_int_equal(pgw_escape_literal(NULL, verifier, strlen(verifier), &lit), 0);
    assert_int_equal(pgw_escape_identifier(NULL, user, strlen(user), &ident), 0);
    snprintf(sql, sizeof sql, "ALTER ROLE %s PASSWORD %s", ident, lit);
    pgt_client_exec_ok(admin, sql);
    pgw_escape_free(NULL, lit);
    pgw_escape_free(NULL, ident);
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
    store_verifier(admin, user, verifier);

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
    store_verifier(admin, user, verifier);
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
    const char *password = pgt_env_required("PGW_TEST_SCRAM_PREP_PASSWORD");
    char ci[512];
    pgt_conninfo_tcp(ci, sizeof ci, user, password, NULL);
    PGconn *pq = PQconnectdb(ci);
    if (PQstatus(pq) != CONNECTION_OK) fail_msg("libpq: %s", PQerrorMessage(pq));
    PQfinish(pq);
    pgw_client_t *c = connect_ci(ci);
    pgt_client_exec_ok(c, "SELECT 1");
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_accepts_verifier),
        cmocka_unit_test(test_login_password_prepared_to_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
