/*
 * A COPY among the statements of a simple query (PGW_REQ_SIMPLE given the
 * COPY callbacks), against the real server, beside libpq running the same
 * string: both sides are written down as one event log (each statement's
 * result, the COPY's start, its rows, its end, in order) and must be equal.
 * COPY TO and COPY FROM between other statements, two COPYs in one string,
 * a bad row inside a COPY FROM (the statements after it never run), a COPY
 * FROM without a source (CopyFail, documented), and the refusals.
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

/* ------------------------------------------------------------- the log */

typedef struct evlog {
    char text[8192];
    size_t len;
} evlog_t;

static void logf_(evlog_t *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof l->text - l->len);
    l->len += (size_t)n;
}

/* A statement's result as both sides print it: the error's SQLSTATE, or
 * the tag and the first value. */
static void log_pgw_result(evlog_t *l, const pgw_result_t *r)
{
    const pgw_error_t *e = pgw_result_error(r);
    if (e) {
        logf_(l, "result: error %s\n", e->sqlstate);
        return;
    }
    logf_(l, "result: %s", pgw_result_command_tag(r));
    pgw_str_t v;
    if (pgw_result_nrows(r) && pgw_result_text(r, 0, 0, &v) == 0)
        logf_(l, " [%.*s]", (int)v.len, v.p);
    logf_(l, "\n");
}

static void log_pq_result(evlog_t *l, const PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_FATAL_ERROR) {
        logf_(l, "result: error %s\n", PQresultErrorField(r, PG_DIAG_SQLSTATE));
        return;
    }
    logf_(l, "result: %s", PQcmdStatus((PGresult *)r));
    if (PQntuples(r)) logf_(l, " [%s]", PQgetvalue(r, 0, 0));
    logf_(l, "\n");
}

/* --------------------------------------------------------- libpgwire side */

typedef struct run {
    evlog_t log;
    const char *data; /* COPY FROM data (NULL: no source at all) */
    int sent;
    int status, done;
    const pgw_result_t *logged_to; /* the last result of the chain logged */
} run_t;

/* The results of the chain from the one after logged_to, but upto. */
static void log_chain(run_t *x, const pgw_result_t *first, const pgw_result_t *upto)
{
    const pgw_result_t *p = first;
    if (x->logged_to) {
        p = first;
        while (p && p != x->logged_to)
            p = pgw_result_next(p);
        p = p ? pgw_result_next(p) : NULL;
    }
    for (; p && p != upto; p = pgw_result_next(p)) {
        log_pgw_result(&x->log, p);
        x->logged_to = p;
    }
}

static int on_start(const pgw_copy_info_t *info, void *ud)
{
    run_t *x = ud;
    const pgw_result_t *own = info->results;
    while (pgw_result_next(own))
        own = pgw_result_next(own);
    log_chain(x, info->results, own);
    x->logged_to = own;
    logf_(&x->log, "copy %s\n", info->direction == PGW_COPY_IN ? "in" : "out");
    return 0;
}

static int on_data(const uint8_t *data, size_t len, void *ud)
{
    logf_(&((run_t *)ud)->log, "row [%.*s]", (int)len, (const char *)data);
    return 0;
}

static int source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    run_t *x = ud;
    if (!x->sent && pgw_buf_append(out, x->data, strlen(x->data)) < 0) return PGW_ENOMEM;
    x->sent = 1;
    return PGW_COPY_END;
}

static void on_end(const pgw_result_t *res, void *ud)
{
    run_t *x = ud;
    logf_(&x->log, "copy end\n");
    log_pgw_result(&x->log, res);
}

static void on_done(int status, pgw_result_t *res, void *ud)
{
    run_t *x = ud;
    log_chain(x, res, NULL);
    x->status = status;
    x->done = 1;
    pgw_result_free(res);
}

static void run_pgw(pgt_conn_t *f, const char *sql, run_t *x)
{
    pgw_request_t r = PGW_SIMPLE(sql, on_done, x);
    r.on_copy_start = on_start;
    r.on_copy_data = on_data;
    r.on_copy_end = on_end;
    if (x->data) r.copy_source = source;
    assert_int_equal(pgw_conn_submit(f->conn, &r), 0);
    pgt_conn_run(f, &x->done, 1);
}

/* ------------------------------------------------------------ libpq side */

static void run_pq(PGconn *pq, const char *sql, const char *data, evlog_t *l)
{
    assert_int_equal(PQsendQuery(pq, sql), 1);
    PGresult *r;
    while ((r = PQgetResult(pq)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COPY_OUT) {
            logf_(l, "copy out\n");
            char *buf;
            int n;
            while ((n = PQgetCopyData(pq, &buf, 0)) > 0) {
                logf_(l, "row [%.*s]", n, buf);
                PQfreemem(buf);
            }
            assert_int_equal(n, -1);
            logf_(l, "copy end\n");
        } else if (st == PGRES_COPY_IN) {
            logf_(l, "copy in\n");
            assert_int_equal(PQputCopyData(pq, data, (int)strlen(data)), 1);
            assert_int_equal(PQputCopyEnd(pq, NULL), 1);
            logf_(l, "copy end\n");
        } else {
            log_pq_result(l, r);
        }
        PQclear(r);
    }
}

/* ---------------------------------------------------------------- tests */

typedef struct fx {
    pgt_conn_t f;
    PGconn *pq;
} fx_t;

static int setup(void **state)
{
    fx_t *x = calloc(1, sizeof *x);
    assert_non_null(x);
    pgt_conn_open(&x->f, NULL);
    char ci[1024];
    x->pq = PQconnectdb(pgt_conninfo(ci, sizeof ci, NULL));
    assert_int_equal(PQstatus(x->pq), CONNECTION_OK);
    PGresult *r = PQexec(x->pq, "DROP TABLE IF EXISTS copy_simple;"
                                "CREATE TABLE copy_simple (id int PRIMARY KEY, t text)");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    fx_t *x = *state;
    PQclear(PQexec(x->pq, "DROP TABLE copy_simple"));
    PQfinish(x->pq);
    pgt_conn_close(&x->f);
    free(x);
    return 0;
}

/* Run sql on libpq then on libpgwire (each with its own rows, truncated
 * between): the logs must be equal. Returns libpgwire's status. */
static int same_as_libpq(fx_t *x, const char *sql, const char *data, const char *want)
{
    evlog_t pq = {{0}, 0};
    PQclear(PQexec(x->pq, "TRUNCATE copy_simple"));
    run_pq(x->pq, sql, data, &pq);
    PQclear(PQexec(x->pq, "TRUNCATE copy_simple"));
    run_t w = {{{0}, 0}, data, 0, 0, 0, NULL};
    run_pgw(&x->f, sql, &w);
    assert_string_equal(w.log.text, pq.text);
    if (want) assert_string_equal(w.log.text, want);
    return w.status;
}

static void test_copy_out_between(void **state)
{
    fx_t *x = *state;
    int st = same_as_libpq(
        x, "SELECT 1; COPY (SELECT g FROM generate_series(1, 3) g) TO STDOUT; SELECT 2", NULL,
        "result: SELECT 1 [1]\ncopy out\nrow [1\n]row [2\n]row [3\n]copy end\n"
        "result: COPY 3\nresult: SELECT 1 [2]\n");
    assert_int_equal(st, 0);
}

static void test_copy_in_between(void **state)
{
    fx_t *x = *state;
    int st = same_as_libpq(
        x, "SELECT 1; COPY copy_simple FROM STDIN; SELECT count(*) FROM copy_simple",
        "1\tone\n2\ttwo\n",
        "result: SELECT 1 [1]\ncopy in\ncopy end\nresult: COPY 2\nresult: SELECT 1 [2]\n");
    assert_int_equal(st, 0);
}

static void test_two_copies(void **state)
{
    fx_t *x = *state;
    int st = same_as_libpq(x,
                           "COPY (SELECT 7) TO STDOUT; COPY copy_simple FROM STDIN;"
                           " COPY (SELECT t FROM copy_simple) TO STDOUT; SELECT 3",
                           "5\tfive\n", NULL);
    assert_int_equal(st, 0);
}

static void test_bad_row_stops_the_string(void **state)
{
    fx_t *x = *state;
    int st = same_as_libpq(x, "SELECT 1; COPY copy_simple FROM STDIN; SELECT 2",
                           "1\tok\nnotanumber\tbad\n",
                           "result: SELECT 1 [1]\ncopy in\ncopy end\nresult: error 22P02\n");
    assert_int_equal(st, PGW_ESERVER);
}

/* Rows of copy_simple, through libpgwire's connection. */
static int64_t count_rows(fx_t *x)
{
    run_t w = {{{0}, 0}, NULL, 0, 0, 0, NULL};
    run_pgw(&x->f, "SELECT count(*) FROM copy_simple", &w);
    assert_int_equal(w.status, 0);
    long long n = -1;
    assert_int_equal(sscanf(w.log.text, "result: SELECT 1 [%lld]", &n), 1);
    return n;
}

/* A COPY FROM the caller gave no source for: CopyFail, the server's 57014,
 * the statements after it skipped, PGW_EINVAL; the connection goes on. */
static void test_copy_in_without_source(void **state)
{
    fx_t *x = *state;
    PQclear(PQexec(x->pq, "TRUNCATE copy_simple"));
    run_t w = {{{0}, 0}, NULL, 0, 0, 0, NULL};
    run_pgw(&x->f, "SELECT 1; COPY copy_simple FROM STDIN; SELECT 2", &w);
    assert_int_equal(w.status, PGW_EINVAL);
    assert_string_equal(w.log.text, "result: SELECT 1 [1]\ncopy in\ncopy end\n"
                                    "result: error 57014\n");
    assert_int_equal(count_rows(x), 0);
}

/* The callbacks belong to COPY and SIMPLE only; on_copy_end to SIMPLE only;
 * a SIMPLE without them still ends a COPY at once (PGW_ECOPY). */
static void test_refusals_and_default(void **state)
{
    fx_t *x = *state;
    run_t w = {{{0}, 0}, NULL, 0, 0, 0, NULL};
    pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, on_done, &w);
    q.on_copy_end = on_end;
    assert_int_equal(pgw_conn_submit(x->f.conn, &q), PGW_EINVAL);
    pgw_request_t c = PGW_COPY_OUT_REQ("COPY (SELECT 1) TO STDOUT", on_data, on_done, &w);
    c.on_copy_end = on_end;
    assert_int_equal(pgw_conn_submit(x->f.conn, &c), PGW_EINVAL);
    pgw_request_t s = PGW_SIMPLE("SELECT 1; COPY (SELECT 1) TO STDOUT; SELECT 2", on_done, &w);
    assert_int_equal(pgw_conn_submit(x->f.conn, &s), 0);
    pgt_conn_run(&x->f, &w.done, 1);
    assert_int_equal(w.status, PGW_ECOPY);
    assert_string_equal(w.log.text, "result: SELECT 1 [1]\nresult: COPY 1\nresult: SELECT 1 [2]\n");
}

int main(void)
{
    pgt_require_server();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_out_between, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_in_between, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_copies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_row_stops_the_string, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy_in_without_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_and_default, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
