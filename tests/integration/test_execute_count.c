/*
 * EXECUTE of a prepared statement with a parameter count other than the
 * statement's, against the real server: refused before sending by default
 * (PGW_EINVAL, documented), sent as given with PGW_Q_ANY_NPARAMS so that
 * the server answers as it answers libpq's PQexecPrepared (08P01, the same
 * message); the matching count still gets the session's conversions.
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

/* libpq's error for executing "st" (two parameters) with n of them. */
static PGresult *libpq_wrong_count(PGconn *pq, int n)
{
    const char *values[] = {"1", "2", "3"};
    return PQexecPrepared(pq, "st", n, values, NULL, NULL, 0);
}

static void test_other_counts(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    char ci[1024];
    PGconn *pq = PQconnectdb(pgt_conninfo(ci, sizeof ci, NULL));
    assert_int_equal(PQstatus(pq), CONNECTION_OK);
    static const char sql[] = "SELECT $1::int4 + $2::int4";
    PQclear(PQprepare(pq, "st", sql, 0, NULL));
    pgw_result_t *res = NULL;
    assert_int_equal(run(&f, PGW_PREPARE("st", sql, NULL, 0, NULL, NULL), &res), 0);
    pgw_result_free(res);

    pgw_param_t p[] = {pgw_int4(1), pgw_int4(2), pgw_int4(3)};
    for (int n = 1; n <= 3; n += 2) {
        /* The default: refused before sending. */
        pgw_request_t e = PGW_EXECUTE("st", p, (size_t)n, NULL, NULL);
        assert_int_equal(pgw_conn_submit(f.conn, &e), PGW_EINVAL);
        assert_non_null(strstr(pgw_session_refusal(pgw_conn_session(f.conn)), "takes 2"));
        /* As given: the server's answer, libpq's. */
        e.flags |= PGW_Q_ANY_NPARAMS;
        assert_int_equal(run(&f, e, &res), PGW_ESERVER);
        PGresult *want = libpq_wrong_count(pq, n);
        assert_int_equal(PQresultStatus(want), PGRES_FATAL_ERROR);
        const pgw_error_t *err = pgw_result_error(res);
        assert_string_equal(err->sqlstate, "08P01");
        assert_string_equal(err->sqlstate, PQresultErrorField(want, PG_DIAG_SQLSTATE));
        assert_string_equal(err->message, PQresultErrorField(want, PG_DIAG_MESSAGE_PRIMARY));
        PQclear(want);
        pgw_result_free(res);
        /* The statement is still the session's, and still runs. */
        pgw_request_t ok = PGW_EXECUTE("st", p, 2, NULL, NULL);
        assert_int_equal(run(&f, ok, &res), 0);
        int32_t v = 0;
        assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
        assert_int_equal(v, 3);
        pgw_result_free(res);
    }
    /* The right count with the flag: converted as without it (int8 for an
     * int4 parameter). */
    pgw_param_t wide[] = {pgw_int8(40), pgw_int8(2)};
    pgw_request_t w = PGW_EXECUTE("st", wide, 2, NULL, NULL);
    w.flags |= PGW_Q_ANY_NPARAMS;
    assert_int_equal(run(&f, w, &res), 0);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 42);
    pgw_result_free(res);
    PQfinish(pq);
    pgt_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
