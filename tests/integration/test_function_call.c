/*
 * PGW_REQ_FUNCTION_CALL (the fast-path FunctionCall) against the real
 * server: an int4 function by OID with binary and text results, a NULL
 * argument to a strict function, a bytea result, the server's error (the
 * transaction block failed, as for any statement), a call behind an open
 * group (its Sync goes first), and the refusals.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

/* A request on f: its status, its result in *res (NULL: freed). */
static int run(pgt_conn_t *f, pgw_request_t r, pgw_result_t **res)
{
    return pgt_conn_request(f, r, res);
}

static uint32_t fn_oid(pgt_conn_t *f, const char *sig)
{
    pgw_param_t p[] = {pgw_text(sig)};
    pgw_result_t *res = NULL;
    assert_int_equal(
        run(f, PGW_QUERY("SELECT $1::regprocedure::oid::int8", p, 1, NULL, NULL), &res), 0);
    int64_t oid = 0;
    assert_int_equal(pgw_result_int8(res, 0, 0, &oid), 0);
    pgw_result_free(res);
    return (uint32_t)oid;
}

static void test_calls(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    uint32_t int4pl = fn_oid(&f, "int4pl(int4,int4)");
    pgw_param_t args[] = {pgw_int4(40), pgw_int4(2)};
    pgw_result_t *res = NULL;

    assert_int_equal(run(&f, PGW_FUNCTION_CALL(int4pl, args, 2, NULL, NULL), &res), 0);
    assert_int_equal(pgw_result_ncols(res), 1);
    assert_int_equal(pgw_result_nrows(res), 1);
    assert_int_equal(pgw_result_field(res, 0)->format, PGW_FORMAT_BINARY);
    pgw_value_t v;
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    assert_int_equal(v.len, 4);
    assert_memory_equal(v.p, "\0\0\0\x2a", 4);
    assert_string_equal(pgw_result_command_tag(res), "");
    assert_null(pgw_result_next(res));
    pgw_result_free(res);

    /* Text result. */
    pgw_request_t t = PGW_FUNCTION_CALL(int4pl, args, 2, NULL, NULL);
    t.flags |= PGW_Q_TEXT;
    assert_int_equal(run(&f, t, &res), 0);
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, 0, &s), 0);
    assert_int_equal(s.len, 2);
    assert_memory_equal(s.p, "42", 2);
    pgw_result_free(res);

    /* A strict function of NULL: NULL. */
    pgw_param_t with_null[] = {pgw_int4(1), pgw_null(0)};
    assert_int_equal(run(&f, PGW_FUNCTION_CALL(int4pl, with_null, 2, NULL, NULL), &res), 0);
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    assert_int_equal(v.len, -1);
    pgw_result_free(res);

    /* A bytea result. */
    uint32_t decode = fn_oid(&f, "decode(text,text)");
    pgw_param_t hex[] = {pgw_text("00ff10"), pgw_text("hex")};
    assert_int_equal(run(&f, PGW_FUNCTION_CALL(decode, hex, 2, NULL, NULL), &res), 0);
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    assert_int_equal(v.len, 3);
    assert_memory_equal(v.p, "\x00\xff\x10", 3);
    pgw_result_free(res);

    /* The server's error, inside a block: the block failed. */
    assert_int_equal(run(&f, PGW_SIMPLE("BEGIN", NULL, NULL), NULL), 0);
    uint32_t int4div = fn_oid(&f, "int4div(int4,int4)");
    pgw_param_t zero[] = {pgw_int4(1), pgw_int4(0)};
    assert_int_equal(run(&f, PGW_FUNCTION_CALL(int4div, zero, 2, NULL, NULL), &res), PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "22012");
    pgw_result_free(res);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(f.conn)), 'E');
    assert_int_equal(run(&f, PGW_SIMPLE("ROLLBACK", NULL, NULL), NULL), 0);
    pgt_conn_close(&f);
}

/* Behind an open group (a portal opened by a QUERY with max_rows): the
 * group's Sync goes first, the call runs after it. */
static void test_after_open_group(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    uint32_t int4pl = fn_oid(&f, "int4pl(int4,int4)");
    pgw_request_t q = PGW_QUERY("SELECT generate_series(1, 3)", NULL, 0, NULL, NULL);
    q.max_rows = 1;
    assert_int_equal(run(&f, q, NULL), 0);
    assert_true(pgw_session_group_open(pgw_conn_session(f.conn)));
    pgw_param_t args[] = {pgw_int4(1), pgw_int4(2)};
    pgw_result_t *res = NULL;
    assert_int_equal(run(&f, PGW_FUNCTION_CALL(int4pl, args, 2, NULL, NULL), &res), 0);
    assert_false(pgw_session_group_open(pgw_conn_session(f.conn)));
    pgw_value_t v;
    assert_int_equal(pgw_result_value(res, 0, 0, &v), 0);
    assert_memory_equal(v.p, "\0\0\0\x03", 4);
    pgw_result_free(res);
    pgt_conn_close(&f);
}

static void never_done(int status, pgw_result_t *res, void *ud)
{
    (void)status;
    (void)ud;
    pgw_result_free(res);
    fail_msg("a refused batch completed");
}

static void test_refusals(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    pgw_request_t none = PGW_FUNCTION_CALL(0, NULL, 0, NULL, NULL);
    assert_int_equal(pgw_conn_submit(f.conn, &none), PGW_EINVAL);
    pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL);
    q.fn_oid = 42;
    assert_int_equal(pgw_conn_submit(f.conn, &q), PGW_EINVAL);
    pgw_request_t portal = PGW_FUNCTION_CALL(42, NULL, 0, NULL, NULL);
    portal.portal = "p";
    assert_int_equal(pgw_conn_submit(f.conn, &portal), PGW_EINVAL);
    pgw_request_t batch[2] = {PGW_FUNCTION_CALL(42, NULL, 0, NULL, NULL),
                              PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL)};
    assert_int_equal(pgw_conn_submit_batch(f.conn, batch, 2, 0, never_done, NULL), PGW_EINVAL);
    pgt_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_after_open_group),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
