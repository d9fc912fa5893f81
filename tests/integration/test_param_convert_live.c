/*
 * Parameters of an execution converted to the prepared statement's
 * declared types (its ParameterDescription), against the real server: a
 * value that fits is sent as the declared type, one that does not is
 * refused before anything is sent, with the reason in pgw_client_refusal,
 * and the connection stays usable. Without the conversion the server
 * answers 22P03 "incorrect binary data format in bind parameter 1".
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

static void prepare_ok(const char *name, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_prepare(db, name, sql, NULL, 0, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    pgw_result_free(res);
}

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    prepare_ok("conv_i4", "SELECT $1::int4 + 1");
    prepare_ok("conv_f8", "SELECT $1::float8 * 2");
    prepare_ok("conv_num", "SELECT ($1::numeric + 0.5)::text");
    prepare_ok("conv_uuid", "SELECT $1::uuid");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_client_close(db);
    return 0;
}

static pgw_result_t *execute_ok(const char *name, pgw_param_t p)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_execute(db, name, &p, 1, &res);
    if (rc != 0)
        fail_msg("%s: %s", name,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    assert_int_equal(pgw_result_nrows(res), 1);
    return res;
}

static int32_t int4_of(const char *name, pgw_param_t p)
{
    pgw_result_t *res = execute_ok(name, p);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    pgw_result_free(res);
    return v;
}

static void test_integers_that_fit(void **state)
{
    (void)state;
    assert_int_equal(int4_of("conv_i4", pgw_int8(41)), 42);
    assert_int_equal(int4_of("conv_i4", pgw_int2(-3)), -2);
    assert_int_equal(int4_of("conv_i4", pgw_int8(INT32_MAX - 1)), INT32_MAX);
}

static void test_integer_out_of_range_is_refused(void **state)
{
    (void)state;
    pgw_param_t p = pgw_int8(5000000000);
    pgw_result_t *res = (pgw_result_t *)&p; /* must be cleared */
    assert_int_equal(pgw_client_execute(db, "conv_i4", &p, 1, &res), PGW_ERANGE);
    assert_null(res);
    const char *why = pgw_client_refusal(db);
    assert_non_null(strstr(why, "parameter $1"));
    assert_non_null(strstr(why, "5000000000"));
    assert_non_null(strstr(why, "int4"));
    /* Nothing was sent: the connection answers the next execution. */
    assert_int_equal(int4_of("conv_i4", pgw_int8(1)), 2);
    assert_string_equal(pgw_client_refusal(db), "");
}

static void test_integer_to_float_and_numeric(void **state)
{
    (void)state;
    pgw_result_t *res = execute_ok("conv_f8", pgw_int4(21));
    double d = 0;
    assert_int_equal(pgw_result_float8(res, 0, 0, &d), 0);
    assert_true(d == 42.0);
    pgw_result_free(res);

    res = execute_ok("conv_num", pgw_int8(41));
    pgw_str_t t;
    assert_int_equal(pgw_result_text(res, 0, 0, &t), 0);
    assert_int_equal(t.len, 4);
    assert_memory_equal(t.p, "41.5", 4);
    pgw_result_free(res);
}

static void test_unconvertible_type_is_refused(void **state)
{
    (void)state;
    pgw_param_t p = pgw_int4(1);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_execute(db, "conv_uuid", &p, 1, &res), PGW_ETYPE);
    assert_null(res);
    assert_non_null(strstr(pgw_client_refusal(db), "uuid"));
    assert_int_equal(int4_of("conv_i4", pgw_int8(6)), 7);
}

/* A statement prepared as SQL is converted for once the session has
 * described it (its parameter types are then known). */
static void test_described_statement(void **state)
{
    (void)state;
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(db, "PREPARE conv_sql(int2) AS SELECT $1 + 1", &res), 0);
    pgw_result_free(res);
    pgw_request_t d = PGW_DESCRIBE("conv_sql", NULL, NULL);
    assert_int_equal(pgw_client_run(db, &d, &res), 0);
    assert_int_equal(pgw_result_param_type(res, 0), PGW_OID_INT2);
    pgw_result_free(res);
    assert_int_equal(int4_of("conv_sql", pgw_int8(99)), 100);
    pgw_param_t big = pgw_int4(40000);
    assert_int_equal(pgw_client_execute(db, "conv_sql", &big, 1, &res), PGW_ERANGE);
    assert_non_null(strstr(pgw_client_refusal(db), "int2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_that_fit),
        cmocka_unit_test(test_integer_out_of_range_is_refused),
        cmocka_unit_test(test_integer_to_float_and_numeric),
        cmocka_unit_test(test_unconvertible_type_is_refused),
        cmocka_unit_test(test_described_statement),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
