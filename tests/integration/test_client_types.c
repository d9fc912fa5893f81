/*
 * pgw_client_load_types against the real server: one call loads a domain
 * and an enum (and their arrays) into a registry, after which an array of
 * the domain decodes as int4[] and the enum reads as text, in both result
 * formats; an unknown name is reported.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h, through pgclient.h: pthread_rwlock_t */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"

static pgw_client_t *db;

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    pgt_client_exec_ok(db, "DROP SCHEMA IF EXISTS pgw_ctypes CASCADE; CREATE SCHEMA pgw_ctypes; "
                           "CREATE DOMAIN pgw_ctypes.posint AS int4 CHECK (VALUE > 0); "
                           "CREATE TYPE pgw_ctypes.color AS ENUM ('red', 'green')");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_client_exec_ok(db, "DROP SCHEMA pgw_ctypes CASCADE");
    pgw_client_close(db);
    return 0;
}

/* '{3,NULL,5}'::posint[] through reg, in the given result format. */
static void check_domain_array(pgw_type_registry_t *reg, unsigned flags)
{
    pgw_result_t *res;
    pgw_request_t q = PGW_QUERY("SELECT '{3,NULL,5}'::pgw_ctypes.posint[]", NULL, 0, NULL, NULL);
    q.flags = flags;
    assert_int_equal(pgw_client_run(db, &q, &res), 0);
    pgw_value_t v;
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse_reg(reg, &v, &a), 0);
    assert_int_equal(a.nelems, 3);
    pgw_array_iter_t it;
    pgw_value_t e;
    int32_t got[2];
    size_t n = 0;
    pgw_array_iter_init(&it, &a, NULL, 0);
    while (pgw_array_next(&it, &e) == 1)
        if (!pgw_value_is_null(&e)) assert_int_equal(pgw_get_int4(&e, &got[n++]), 0);
    assert_int_equal(n, 2);
    assert_int_equal(got[0], 3);
    assert_int_equal(got[1], 5);
    pgw_result_free(res);
}

static void test_load_into_registry(void **state)
{
    (void)state;
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    /* Before loading, the array's element type is unknown to reg. */
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(db, "SELECT '{1}'::pgw_ctypes.posint[]", NULL, 0, &res), 0);
    pgw_value_t v;
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    int32_t one;
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, &one, 1, &n, NULL), PGW_ETYPE);
    pgw_result_free(res);

    const char *names[] = {"pgw_ctypes.posint", "pgw_ctypes.color"};
    assert_int_equal(pgw_client_load_types(db, names, 2, reg), 0);
    uint32_t oid;
    assert_int_equal(pgw_type_lookup_name(reg, "pgw_ctypes.posint", &oid), 0);
    assert_int_equal(pgw_type_resolve_oid(reg, oid), PGW_OID_INT4);
    check_domain_array(reg, 0);
    check_domain_array(reg, PGW_Q_TEXT);
    pgw_type_registry_free(reg);
}

static void test_load_into_default_registry(void **state)
{
    (void)state;
    const char *names[] = {"pgw_ctypes.color", "pgw_ctypes.posint"};
    assert_int_equal(pgw_client_load_types(db, names, 2, NULL), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(db,
                                      "SELECT 'green'::pgw_ctypes.color, "
                                      "'{4,6}'::pgw_ctypes.posint[]",
                                      NULL, 0, &res),
                     0);
    pgw_value_t v;
    pgw_str_t s;
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    assert_int_equal(pgw_get_text(&v, &s), 0); /* the label, sent in binary */
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.p, "green", 5);
    int32_t vals[2];
    size_t n;
    assert_int_equal(pgw_result_value(res, 0, 1, &v), 0);
    assert_int_equal(pgw_array_get_int4(&v, vals, 2, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_int_equal(vals[0], 4);
    assert_int_equal(vals[1], 6);
    pgw_result_free(res);
}

static void test_unknown_name(void **state)
{
    (void)state;
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    const char *names[] = {"pgw_ctypes.color", "pgw_ctypes.no_such_type"};
    assert_int_equal(pgw_client_load_types(db, names, 2, reg), PGW_ENOTFOUND);
    uint32_t oid;
    assert_int_equal(pgw_type_lookup_name(reg, "pgw_ctypes.color", &oid), 0);
    assert_int_equal(pgw_client_load_types(NULL, names, 2, reg), PGW_EINVAL);
    assert_int_equal(pgw_client_load_types(db, NULL, 1, reg), PGW_EINVAL);
    assert_int_equal(pgw_client_load_types(db, NULL, 0, reg), 0);
    pgw_type_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_into_registry),
        cmocka_unit_test(test_load_into_default_registry),
        cmocka_unit_test(test_unknown_name),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
