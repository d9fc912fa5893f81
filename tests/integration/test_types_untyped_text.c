/*
 * pgw_text against the real server: an untyped string parameter (type 0)
 * is inferred by the server from the statement, as a libpq parameter
 * without a type is, while pgw_text_typed(..., PGW_OID_TEXT) keeps
 * declaring text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pgtest.h"
#include "pgwire/client.h"

static pgw_client_t *db;

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_client_close(db);
    return 0;
}

/* Run sql with params and return its one-row result (the caller frees). */
static pgw_result_t *query_ok(const char *sql, const pgw_param_t *p, size_t n)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_query(db, sql, p, n, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    assert_int_equal(pgw_result_nrows(res), 1);
    return res;
}

static void test_untyped_param_is_inferred(void **state)
{
    (void)state;
    pgw_param_t p[] = {pgw_text("41")};
    assert_int_equal(p[0].oid, 0);
    pgw_result_t *res = query_ok("SELECT $1 + 1", p, 1);
    assert_int_equal(pgw_result_ftype(res, 0), PGW_OID_INT4);
    int32_t x;
    assert_int_equal(pgw_result_int4(res, 0, 0, &x), 0);
    assert_int_equal(x, 42);
    pgw_result_free(res);
}

static void test_untyped_param_as_text(void **state)
{
    (void)state;
    pgw_param_t p[] = {pgw_text("a")};
    pgw_result_t *res = query_ok("SELECT $1::text || 'x'", p, 1);
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, 0, &s), 0);
    assert_int_equal(s.len, 2);
    assert_memory_equal(s.p, "ax", 2);
    pgw_result_free(res);

    /* Nothing constrains it: the server takes it as text. */
    res = query_ok("SELECT $1", p, 1);
    assert_int_equal(pgw_result_ftype(res, 0), PGW_OID_TEXT);
    pgw_result_free(res);

    /* Compared with a column, it takes the column's type. */
    pgw_param_t rel[] = {pgw_text("pg_class")};
    res = query_ok("SELECT oid FROM pg_class WHERE relname = $1", rel, 1);
    pgw_result_free(res);
}

static void test_typed_text_stays_text(void **state)
{
    (void)state;
    pgw_param_t p[] = {pgw_text_typed("41", -1, PGW_OID_TEXT)};
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_query(db, "SELECT $1 + 1", p, 1, &res), PGW_ESERVER);
    assert_non_null(pgw_result_error(res));
    assert_string_equal(pgw_result_error(res)->sqlstate, "42883"); /* undefined_function */
    pgw_result_free(res);

    res = query_ok("SELECT $1 || 'x'", p, 1);
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, 0, &s), 0);
    assert_int_equal(s.len, 3);
    pgw_result_free(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untyped_param_is_inferred),
        cmocka_unit_test(test_untyped_param_as_text),
        cmocka_unit_test(test_typed_text_stays_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
