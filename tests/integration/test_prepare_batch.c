/*
 * Prepared statements whose preparation travels in the same batch as their
 * use, against the real server:
 *   - PREPARE (as SQL, and as a PGW_REQ_PREPARE) then EXECUTE of it in one
 *     batch: the statement keeps the parameter types it was prepared with,
 *     and later executions with parameters are accepted and converted;
 *   - a PREPARE skipped after an earlier error of its batch (PGW_EABORTED)
 *     prepared nothing: the name is one the session never prepared, so the
 *     server's 26000 for it is the caller's own error (PGW_ESERVER), not
 *     PGW_ESTMTINVALID.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void free_all(pgw_result_t **res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pgw_result_free(res[i]);
}

/* s takes (int4, int8) and returns their sum: executing it with two
 * parameters works, with an int4 for the int8 parameter converted. */
static void assert_two_params(pgw_client_t *c, const char *name)
{
    pgw_param_t p[] = {pgw_int4(40), pgw_int8(2)};
    pgw_result_t *res = NULL;
    int rc = pgw_client_execute(c, name, p, 2, &res);
    if (rc != 0) fail_msg("execute %s: %s (%s)", name, pgw_err_name(rc), pgw_client_refusal(c));
    int64_t v = 0;
    assert_int_equal(pgw_result_int8(res, 0, 0, &v), 0);
    assert_int_equal(v, 42);
    pgw_result_free(res);
    pgw_param_t q[] = {pgw_int4(1), pgw_int4(2)}; /* int4 for the int8: converted */
    assert_int_equal(pgw_client_execute(c, name, q, 2, &res), 0);
    assert_int_equal(pgw_result_int8(res, 0, 0, &v), 0);
    assert_int_equal(v, 3);
    pgw_result_free(res);
    /* A count the statement does not take is refused before sending. */
    assert_int_equal(pgw_client_execute(c, name, p, 1, NULL), PGW_EINVAL);
    assert_non_null(strstr(pgw_client_refusal(c), "takes 2 parameters"));
}

static void test_sql_prepare_then_execute_in_batch(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_param_t p[] = {pgw_int4(1), pgw_int8(1)};
    pgw_request_t reqs[2] = {
        PGW_QUERY("PREPARE sql_s (int4, int8) AS SELECT $1::int8 + $2", NULL, 0, NULL, NULL),
        PGW_EXECUTE("sql_s", p, 2, NULL, NULL),
    };
    pgw_result_t *res[2];
    int st[2];
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, res, st), 0);
    int64_t v = 0;
    assert_int_equal(pgw_result_int8(res[1], 0, 0, &v), 0);
    assert_int_equal(v, 2);
    free_all(res, 2);
    assert_two_params(c, "sql_s");
    pgw_client_close(c);
}

static void test_protocol_prepare_then_execute_in_batch(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    static const uint32_t types[] = {23, 20}; /* int4, int8 */
    pgw_param_t p[] = {pgw_int4(5), pgw_int8(6)};
    pgw_request_t reqs[2] = {
        PGW_PREPARE("proto_s", "SELECT $1::int8 + $2", types, 2, NULL, NULL),
        PGW_EXECUTE("proto_s", p, 2, NULL, NULL),
    };
    pgw_result_t *res[2];
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, res, NULL), 0);
    assert_int_equal(pgw_result_nparams(res[0]), 2);
    int64_t v = 0;
    assert_int_equal(pgw_result_int8(res[1], 0, 0, &v), 0);
    assert_int_equal(v, 11);
    free_all(res, 2);
    assert_two_params(c, "proto_s");
    /* The same with inferred types, pipelined without a batch. */
    pgw_request_t pr =
        PGW_PREPARE("proto_t", "SELECT $1::int4::int8 + $2::int8", NULL, 0, NULL, NULL);
    pgw_request_t ex = PGW_EXECUTE("proto_t", p, 2, NULL, NULL);
    pgw_request_t both[2] = {pr, ex};
    assert_int_equal(pgw_client_run_batch(c, both, 2, PGW_BATCH_SYNC_EACH, res, NULL), 0);
    free_all(res, 2);
    assert_two_params(c, "proto_t");
    pgw_client_close(c);
}

static void test_skipped_prepare_prepared_nothing(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_request_t reqs[2] = {
        PGW_QUERY("SELECT 1/0", NULL, 0, NULL, NULL),
        PGW_PREPARE("never_ran", "SELECT 1", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[2];
    int st[2];
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, res, st), PGW_ESERVER);
    assert_int_equal(st[0], PGW_ESERVER);
    assert_int_equal(st[1], PGW_EABORTED);
    free_all(res, 2);
    pgw_result_t *r = NULL;
    assert_int_equal(pgw_client_execute(c, "never_ran", NULL, 0, &r), PGW_ESERVER);
    assert_string_equal(pgw_result_error(r)->sqlstate, "26000");
    pgw_result_free(r);

    /* A prepare the server refused (a syntax error) prepared nothing
     * either. */
    assert_int_equal(pgw_client_prepare(c, "bad_sql", "SELEC 1", NULL, 0, &r), PGW_ESERVER);
    pgw_result_free(r);
    assert_int_equal(pgw_client_execute(c, "bad_sql", NULL, 0, &r), PGW_ESERVER);
    assert_string_equal(pgw_result_error(r)->sqlstate, "26000");
    pgw_result_free(r);

    /* One the session prepared and the server lost is still
     * PGW_ESTMTINVALID. */
    assert_int_equal(pgw_client_prepare(c, "lost", "SELECT 1", NULL, 0, NULL), 0);
    /* Deallocated where the session cannot see it (no such word in the
     * SQL it sends). */
    pgw_request_t dealloc =
        PGW_QUERY("DO $$BEGIN EXECUTE 'DEALLOC' || 'ATE lost'; END$$", NULL, 0, NULL, NULL);
    assert_int_equal(pgw_client_run(c, &dealloc, NULL), 0);
    assert_int_equal(pgw_client_execute(c, "lost", NULL, 0, &r), PGW_ESTMTINVALID);
    pgw_result_free(r);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_prepare_then_execute_in_batch),
        cmocka_unit_test(test_protocol_prepare_then_execute_in_batch),
        cmocka_unit_test(test_skipped_prepare_prepared_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
