/*
 * Cursors and portals against the throwaway cluster: 50,000 rows in
 * batches of 500 with every row checked, on a connection (FETCH from the
 * callbacks) and through the blocking iterator; two named portals
 * interleaved in one transaction block; a cursor in an implicit
 * transaction, with the requests made meanwhile joining it; an abandoned
 * cursor closed (nothing left in pg_cursors but the unnamed portal of the
 * query that looks, the next query works); and a
 * Flush whose results arrive before any Sync was written.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define NROWS 50000
#define BATCH 500

static const char *const g_sql = "SELECT g, g * 2 FROM generate_series(1, 50000) g";

/* Every row of a batch is the next g, with g * 2 beside it. */
static void check_batch(const pgw_result_t *res, int32_t *next)
{
    size_t n = pgw_result_nrows(res);
    assert_true(n > 0 && n <= BATCH);
    for (size_t i = 0; i < n; i++) {
        int32_t g, g2;
        assert_int_equal(pgw_result_int4(res, i, 0, &g), 0);
        assert_int_equal(pgw_result_int4(res, i, 1, &g2), 0);
        assert_int_equal(g, *next);
        assert_int_equal(g2, 2 * *next);
        (*next)++;
    }
}

/* ------------------------------------------------- a connection on a loop */

/* An asynchronous cursor: each batch's callback checks it and fetches the
 * next, the last one closes the portal. */
typedef struct acur {
    pgt_conn_t *f;
    int32_t next;
    int batches;
    int done, close_status;
} acur_t;

static void on_acur_closed(int status, pgw_result_t *res, void *ud)
{
    acur_t *a = ud;
    pgw_result_free(res);
    a->close_status = status;
    a->done = 1;
}

static void on_acur_batch(int status, pgw_result_t *res, void *ud)
{
    acur_t *a = ud;
    assert_int_equal(status, 0);
    a->batches++;
    int suspended = pgw_result_suspended(res);
    if (pgw_result_nrows(res)) check_batch(res, &a->next);
    pgw_result_free(res);
    pgw_request_t r = suspended ? PGW_FETCH("async_c", BATCH, on_acur_batch, a)
                                : PGW_CLOSE_PORTAL("async_c", on_acur_closed, a);
    assert_int_equal(pgw_conn_submit(a->f->conn, &r), 0);
}

static void test_async_cursor_50000_rows(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    acur_t a = {&f, 1, 0, 0, -1};
    pgw_request_t open = PGW_QUERY(g_sql, NULL, 0, on_acur_batch, &a);
    open.portal = "async_c";
    open.max_rows = BATCH;
    assert_int_equal(pgw_conn_submit(f.conn, &open), 0);
    pgt_conn_run(&f, &a.done, 1);
    assert_int_equal(a.close_status, 0);
    assert_int_equal(a.next, NROWS + 1);
    assert_true(a.batches >= NROWS / BATCH); /* 100, plus one empty one at the end */
    assert_int_equal(f.syncs_sent, 1);       /* the close's, only */
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(f.conn)), 'I');
    pgt_conn_close(&f);
}

static void test_blocking_cursor_50000_rows(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_request_t q = PGW_QUERY(g_sql, NULL, 0, NULL, NULL);
    pgw_client_cursor_t *cur;
    assert_int_equal(pgw_client_cursor_open(c, &q, BATCH, &cur), 0);
    int32_t next = 1;
    int batches = 0;
    pgw_result_t *res;
    int rc;
    while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
        assert_int_equal(pgw_result_nrows(res), BATCH);
        check_batch(res, &next);
        pgw_result_free(res);
        batches++;
    }
    assert_int_equal(rc, PGW_EDONE);
    assert_null(res);
    assert_int_equal(pgw_client_cursor_next(cur, &res), PGW_EDONE);
    assert_int_equal(batches, NROWS / BATCH);
    assert_int_equal(next, NROWS + 1);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0);
    pgw_client_close(c);
}

/* The next batch of cur: rows sign * (*next)++. Returns 1 when done. */
static int take_batch(pgw_client_cursor_t *cur, int32_t *next, int sign)
{
    pgw_result_t *res;
    int rc = pgw_client_cursor_next(cur, &res);
    if (rc == PGW_EDONE) return 1;
    assert_int_equal(rc, 0);
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        int32_t v;
        assert_int_equal(pgw_result_int4(res, i, 0, &v), 0);
        assert_int_equal(v, sign * (*next)++);
    }
    pgw_result_free(res);
    return 0;
}

static void test_two_portals_interleaved(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "BEGIN");
    pgw_request_t qa = PGW_QUERY("SELECT g FROM generate_series(1, 1000) g", NULL, 0, NULL, NULL);
    pgw_request_t qb = PGW_QUERY("SELECT -g FROM generate_series(1, 1000) g", NULL, 0, NULL, NULL);
    pgw_client_cursor_t *a, *b;
    assert_int_equal(pgw_client_cursor_open(c, &qa, 64, &a), 0);
    assert_int_equal(pgw_client_cursor_open(c, &qb, 100, &b), 0);
    int32_t na = 1, nb = 1;
    int done_a = 0, done_b = 0, round = 0;
    while (!done_a || !done_b) {
        if (!done_a) done_a = take_batch(a, &na, 1);
        if (!done_b) done_b = take_batch(b, &nb, -1);
        if (round++ == 2) /* both open in the one transaction */
            assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors "
                                                "WHERE name LIKE 'pgw_cursor_%'"),
                             2);
    }
    assert_int_equal(na, 1001);
    assert_int_equal(nb, 1001);
    assert_int_equal(pgw_client_cursor_close(a), 0);
    assert_int_equal(pgw_client_cursor_close(b), 0);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'T');
    pgt_client_exec_ok(c, "COMMIT");
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    pgw_client_close(c);
}

/* Without BEGIN the cursor's group holds one implicit transaction from its
 * open to its close, and what the client runs meanwhile is part of it. */
static void test_cursor_implicit_transaction(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, 2000) g", NULL, 0, NULL, NULL);
    pgw_client_cursor_t *cur;
    assert_int_equal(pgw_client_cursor_open(c, &q, 500, &cur), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    pgw_result_free(res);
    int64_t x1 = pgt_client_int8(c, "SELECT txid_current()");
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    pgw_result_free(res);
    int64_t x2 = pgt_client_int8(c, "SELECT txid_current()");
    assert_int_equal(x1, x2); /* the same transaction */
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 1);
    int rc;
    int32_t total = 1000;
    while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
        total += (int32_t)pgw_result_nrows(res);
        pgw_result_free(res);
    }
    assert_int_equal(rc, PGW_EDONE);
    assert_int_equal(total, 2000);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    int64_t x3 = pgt_client_int8(c, "SELECT txid_current()");
    assert_true(x3 != x1); /* committed at the close: a new transaction */
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0);
    pgw_client_close(c);
}

static void test_abandoned_cursor_closed(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, 100000) g", NULL, 0, NULL, NULL);
    pgw_client_cursor_t *cur;
    assert_int_equal(pgw_client_cursor_open(c, &q, 100, &cur), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    assert_int_equal(pgw_result_nrows(res), 100);
    pgw_result_free(res);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_cursors WHERE name = '%s'",
             pgw_client_cursor_portal(cur));
    assert_int_equal(pgt_client_int8(c, sql), 1);
    assert_int_equal(pgw_client_cursor_close(cur), 0); /* abandoned after one batch */
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0);
    assert_int_equal(pgt_client_int8(c, "SELECT 41::int8 + 1"), 42);
    /* And one abandoned before its first batch, and a failing one. */
    assert_int_equal(pgw_client_cursor_open(c, &q, 100, &cur), 0);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    pgw_request_t bad =
        PGW_QUERY("SELECT 1 / (g - 3) FROM generate_series(1, 10) g", NULL, 0, NULL, NULL);
    assert_int_equal(pgw_client_cursor_open(c, &bad, 2, &cur), 0);
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    pgw_result_free(res);
    assert_int_equal(pgw_client_cursor_next(cur, &res), PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "22012");
    pgw_result_free(res);
    assert_int_equal(pgw_client_cursor_next(cur, &res), PGW_ESERVER);
    assert_null(res);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM pg_cursors WHERE name <> ''"), 0);
    pgw_client_close(c);
}

/* --------------------------------------------------------------- Flush */

typedef struct fl {
    pgt_conn_t *f;
    int calls[3];
    int status[3];
    int syncs_at_result; /* Syncs written when the first result arrived */
    int32_t value;
} fl_t;

static void on_fl0(int status, pgw_result_t *res, void *ud)
{
    fl_t *x = ud;
    x->calls[0]++;
    x->status[0] = status;
    x->syncs_at_result = x->f->syncs_sent;
    if (status == 0) assert_int_equal(pgw_result_int4(res, 0, 0, &x->value), 0);
    pgw_result_free(res);
}

static void on_fl1(int status, pgw_result_t *res, void *ud)
{
    fl_t *x = ud;
    x->calls[1]++;
    x->status[1] = status;
    pgw_result_free(res);
}

static void on_fl2(int status, pgw_result_t *res, void *ud)
{
    fl_t *x = ud;
    x->calls[2]++;
    x->status[2] = status;
    pgw_result_free(res);
}

static void test_flush_before_sync(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    int syncs0 = f.syncs_sent;
    fl_t x = {&f, {0}, {0}, -1, 0};
    pgw_request_t reqs[2] = {PGW_QUERY("SELECT 42", NULL, 0, on_fl0, &x), PGW_FLUSH(NULL, NULL)};
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 2, 0, on_fl1, &x), 0);
    pgt_conn_run(&f, &x.calls[1], 1);
    assert_int_equal(x.status[0], 0);
    assert_int_equal(x.value, 42);
    assert_int_equal(x.syncs_at_result, syncs0); /* the result came with no Sync sent */
    assert_int_equal(f.syncs_sent, syncs0);
    assert_int_equal(x.status[1], 0);
    pgw_request_t sync = PGW_SYNC(on_fl2, &x);
    assert_int_equal(pgw_conn_submit(f.conn, &sync), 0);
    pgt_conn_run(&f, &x.calls[2], 1);
    assert_int_equal(x.status[2], 0);
    assert_int_equal(f.syncs_sent, syncs0 + 1);
    pgt_conn_close(&f);
}

/* A COPY FROM submitted while a cursor holds its implicit transaction open
 * joins that transaction like any other request: its rows are loaded and
 * visible to the same transaction, the cursor goes on, and both commit at
 * the cursor's close. */
static int copy_three_rows(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    int *done = ud;
    if (*done) return PGW_COPY_END;
    *done = 1;
    return pgw_buf_append(out, "1\n2\n3\n", 6) == 0 ? PGW_COPY_MORE : PGW_ENOMEM;
}

static void test_copy_inside_cursor_transaction(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS cursor_copy; CREATE TABLE cursor_copy (v int4)");
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, 1000) g", NULL, 0, NULL, NULL);
    pgw_client_cursor_t *cur;
    assert_int_equal(pgw_client_cursor_open(c, &q, 400, &cur), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    pgw_result_free(res);
    int64_t x1 = pgt_client_int8(c, "SELECT txid_current()");
    int done = 0;
    int rc = pgw_client_copy_in(c, "COPY cursor_copy FROM STDIN", copy_three_rows, &done, &res);
    if (rc != 0)
        fail_msg("copy: %s %s", pgw_err_name(rc),
                 res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
    assert_int_equal(pgw_result_rows_affected(res), 3);
    pgw_result_free(res);
    assert_int_equal(pgt_client_int8(c, "SELECT txid_current()"), x1);
    assert_int_equal(pgt_client_int8(c, "SELECT sum(v)::int8 FROM cursor_copy"), 6);
    int32_t total = 400;
    while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
        total += (int32_t)pgw_result_nrows(res);
        pgw_result_free(res);
    }
    assert_int_equal(rc, PGW_EDONE);
    assert_int_equal(total, 1000);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM cursor_copy"), 3);
    pgt_client_exec_ok(c, "DROP TABLE cursor_copy");
    pgw_client_close(c);
}

/* The blocking cursor keeps two fetches ahead only once the portal shows it
 * has more rows: an INSERT ... RETURNING (rows kept by the server, read in
 * batches), a statement without rows and an empty SELECT all end cleanly,
 * each row exactly once. */
static void test_blocking_cursor_other_portals(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS cursor_ret; CREATE TABLE cursor_ret (v int4)");
    static const char *const sqls[] = {
        "INSERT INTO cursor_ret SELECT g FROM generate_series(1, 1234) g RETURNING v",
        "UPDATE cursor_ret SET v = v WHERE false", "SELECT 1 WHERE false"};
    static const int32_t want[] = {1234, 0, 0};
    for (int k = 0; k < 3; k++) {
        pgw_request_t q = PGW_QUERY(sqls[k], NULL, 0, NULL, NULL);
        pgw_client_cursor_t *cur;
        assert_int_equal(pgw_client_cursor_open(c, &q, 500, &cur), 0);
        pgw_result_t *res;
        int rc;
        int32_t total = 0, next = 1;
        while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
            for (size_t i = 0; i < pgw_result_nrows(res); i++, next++) {
                int32_t v;
                assert_int_equal(pgw_result_int4(res, i, 0, &v), 0);
                assert_int_equal(v, next);
            }
            total += (int32_t)pgw_result_nrows(res);
            pgw_result_free(res);
        }
        if (rc != PGW_EDONE)
            fail_msg("%s: %s %s", sqls[k], pgw_err_name(rc),
                     res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
        assert_int_equal(total, want[k]);
        assert_int_equal(pgw_client_cursor_close(cur), 0);
    }
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM cursor_ret"), 1234);
    pgt_client_exec_ok(c, "DROP TABLE cursor_ret");
    pgw_client_close(c);
}

/* A streaming cursor: nothing reaches on_row before the first next, and
 * each next hands out the rows of one batch. */
static int g_streamed;
static int32_t g_stream_next;

static int count_row(const pgw_row_t *row, void *ud)
{
    (void)ud;
    int32_t g;
    assert_int_equal(pgw_get_int4(&row->values[0], &g), 0);
    assert_int_equal(g, g_stream_next);
    g_stream_next++;
    g_streamed++;
    return 0;
}

static void test_streaming_cursor_rows_with_next(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    for (int k = 0; k < 20; k++) {
        pgw_request_t q =
            PGW_QUERY("SELECT g FROM generate_series(1, 2000) g", NULL, 0, NULL, NULL);
        q.on_row = count_row;
        g_streamed = 0;
        g_stream_next = 1;
        pgw_client_cursor_t *cur;
        assert_int_equal(pgw_client_cursor_open(c, &q, BATCH, &cur), 0);
        assert_int_equal(g_streamed, 0); /* the first batch comes with the first next */
        pgw_result_t *res;
        int batches = 0, rc;
        while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
            batches++;
            assert_int_equal(g_streamed, batches * BATCH); /* one batch per next */
            pgw_result_free(res);
        }
        assert_int_equal(rc, PGW_EDONE);
        assert_int_equal(g_streamed, 2000);
        assert_int_equal(pgw_client_cursor_close(cur), 0);
    }
    /* Calls between nexts of a streaming cursor still get their answers. */
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, 2000) g", NULL, 0, NULL, NULL);
    q.on_row = count_row;
    g_streamed = 0;
    g_stream_next = 1;
    pgw_client_cursor_t *cur;
    assert_int_equal(pgw_client_cursor_open(c, &q, BATCH, &cur), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_cursor_next(cur, &res), 0);
    pgw_result_free(res);
    assert_int_equal(pgt_client_int8(c, "SELECT 7::int8"), 7);
    int rc;
    while ((rc = pgw_client_cursor_next(cur, &res)) == 0)
        pgw_result_free(res);
    assert_int_equal(rc, PGW_EDONE);
    assert_int_equal(g_streamed, 2000);
    assert_int_equal(pgw_client_cursor_close(cur), 0);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_cursor_rows_with_next),
        cmocka_unit_test(test_async_cursor_50000_rows),
        cmocka_unit_test(test_blocking_cursor_50000_rows),
        cmocka_unit_test(test_two_portals_interleaved),
        cmocka_unit_test(test_cursor_implicit_transaction),
        cmocka_unit_test(test_abandoned_cursor_closed),
        cmocka_unit_test(test_flush_before_sync),
        cmocka_unit_test(test_copy_inside_cursor_transaction),
        cmocka_unit_test(test_blocking_cursor_other_portals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
