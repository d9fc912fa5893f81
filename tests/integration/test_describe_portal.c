/*
 * PGW_REQ_DESCRIBE_PORTAL against the real server, beside libpq's
 * PQdescribePortal of the same portals: a cursor DECLAREd in a transaction
 * block (columns, types, formats, no rows), the unnamed portal of an open
 * group (a QUERY run with max_rows), a portal that does not exist (34000,
 * the block failed), and the refusal of a request without a portal name.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/conn.h"

#include <libpq-fe.h>
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

static int simple(pgt_conn_t *f, const char *sql)
{
    return run(f, PGW_SIMPLE(sql, NULL, NULL), NULL);
}

static void pq_ok(PGconn *pq, const char *sql)
{
    PGresult *r = PQexec(pq, sql);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
}

/* The description in res is libpq's in d: names, types, modifiers, sizes,
 * formats, table columns; no rows. */
static void assert_same_description(const pgw_result_t *res, const PGresult *d)
{
    assert_int_equal(PQresultStatus(d), PGRES_COMMAND_OK);
    assert_int_equal(pgw_result_nrows(res), 0);
    assert_int_equal(PQntuples(d), 0);
    assert_int_equal(pgw_result_ncols(res), (size_t)PQnfields(d));
    for (int i = 0; i < PQnfields(d); i++) {
        const pgw_field_desc_t *fd = pgw_result_field(res, (size_t)i);
        assert_non_null(fd);
        assert_int_equal(fd->name.len, strlen(PQfname(d, i)));
        assert_memory_equal(fd->name.p, PQfname(d, i), fd->name.len);
        assert_int_equal(fd->type_oid, PQftype(d, i));
        assert_int_equal(fd->typmod, PQfmod(d, i));
        assert_int_equal(fd->typlen, PQfsize(d, i));
        assert_int_equal(fd->format, PQfformat(d, i));
        assert_int_equal(fd->attnum, PQftablecol(d, i));
    }
}

static const char DECLARE_SQL[] = "DECLARE cur CURSOR FOR SELECT id AS a, t AS b, 2.5::numeric(4,1)"
                                  " AS c FROM dp_t ORDER BY id";

static void test_declared_cursor(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    char ci[1024];
    PGconn *pq = PQconnectdb(pgt_conninfo(ci, sizeof ci, NULL));
    assert_int_equal(PQstatus(pq), CONNECTION_OK);
    pq_ok(pq, "CREATE TEMP TABLE dp_t (id int4, t text)");
    pq_ok(pq, "BEGIN");
    pq_ok(pq, DECLARE_SQL);
    PGresult *d = PQdescribePortal(pq, "cur");

    assert_int_equal(simple(&f, "CREATE TEMP TABLE dp_t (id int4, t text)"), 0);
    assert_int_equal(simple(&f, "BEGIN"), 0);
    assert_int_equal(simple(&f, DECLARE_SQL), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(run(&f, PGW_DESCRIBE_PORTAL("cur", NULL, NULL), &res), 0);
    assert_same_description(res, d);
    assert_int_equal(pgw_result_ncols(res), 3);
    assert_string_equal(pgw_result_command_tag(res), "");
    pgw_result_free(res);
    PQclear(d);
    /* The block is untouched: the cursor still fetches. */
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(f.conn)), 'T');
    assert_int_equal(simple(&f, "FETCH 1 FROM cur"), 0);

    /* A portal that does not exist: the server's 34000, the block failed. */
    d = PQdescribePortal(pq, "nocur");
    assert_int_equal(PQresultStatus(d), PGRES_FATAL_ERROR);
    assert_int_equal(run(&f, PGW_DESCRIBE_PORTAL("nocur", NULL, NULL), &res), PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, PQresultErrorField(d, PG_DIAG_SQLSTATE));
    assert_string_equal(pgw_result_error(res)->sqlstate, "34000");
    assert_string_equal(pgw_result_error(res)->message,
                        PQresultErrorField(d, PG_DIAG_MESSAGE_PRIMARY));
    pgw_result_free(res);
    PQclear(d);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(f.conn)), 'E');
    assert_int_equal(simple(&f, "ROLLBACK"), 0);
    PQfinish(pq);
    pgt_conn_close(&f);
}

/* The unnamed portal a QUERY opened (max_rows): described inside its
 * group, binary columns as bound, then fetched and closed. */
static void test_unnamed_portal_of_the_group(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    pgw_request_t q = PGW_QUERY("SELECT g::int8 AS n, 'v'::text AS s FROM generate_series(1, 3) g",
                                NULL, 0, NULL, NULL);
    q.max_rows = 1;
    pgw_result_t *res = NULL;
    assert_int_equal(run(&f, q, &res), 0);
    assert_true(pgw_result_suspended(res));
    pgw_result_free(res);
    assert_int_equal(run(&f, PGW_DESCRIBE_PORTAL("", NULL, NULL), &res), 0);
    assert_int_equal(pgw_result_ncols(res), 2);
    assert_int_equal(pgw_result_nrows(res), 0);
    const pgw_field_desc_t *n = pgw_result_field(res, 0);
    assert_int_equal(n->type_oid, 20);
    assert_int_equal(n->format, PGW_FORMAT_BINARY);
    assert_int_equal(pgw_result_field(res, 1)->type_oid, 25);
    pgw_result_free(res);
    assert_int_equal(run(&f, PGW_FETCH("", 0, NULL, NULL), &res), 0);
    assert_int_equal(pgw_result_nrows(res), 2);
    pgw_result_free(res);
    assert_int_equal(run(&f, PGW_CLOSE_PORTAL("", NULL, NULL), NULL), 0);
    pgt_conn_close(&f);
}

static void test_refusals(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    pgw_request_t r = PGW_DESCRIBE_PORTAL(NULL, NULL, NULL);
    assert_int_equal(pgw_conn_submit(f.conn, &r), PGW_EINVAL);
    pgw_request_t s = PGW_DESCRIBE_PORTAL("p", NULL, NULL);
    s.sql = "SELECT 1";
    s.nparams = 1;
    pgw_param_t p[] = {pgw_int4(1)};
    s.params = p;
    assert_int_equal(pgw_conn_submit(f.conn, &s), PGW_EINVAL);
    pgt_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_declared_cursor),
        cmocka_unit_test(test_unnamed_portal_of_the_group),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
