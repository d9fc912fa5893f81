/*
 * RELIABILITY case 9: the pool never hands out a connection that is not
 * idle, over 1,000 checkouts (100 under valgrind or PGW_TEST_SLOW=1)
 * cycling through the error paths of COPY and batches:
 *   (a) COPY FROM STDIN with a malformed row in the middle of the stream,
 *       outside and inside a transaction block;
 *   (b) the caller abandons a COPY FROM STDIN (CopyFail);
 *   (c) the caller abandons a COPY TO STDOUT, a cursor (a protocol portal
 *       left open; a SQL cursor inside a transaction block) and a pipeline
 *       (20 requests still pending at release);
 *   (d) a transaction block left open at release.
 * Each COPY or batch completes with the server's error (or the caller's own
 * code, the server's 57014 kept for CopyFail); every checkout finds the
 * connection idle (ReadyForQuery 'I', nothing pending), the connection
 * having been rolled back or closed; at the end pg_stat_activity shows no
 * `idle in transaction` session of the pool, its in-use count is 0, and
 * the table is empty: every COPY here failed, every transaction was
 * rolled back.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "pgclient.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <valgrind/valgrind.h>

#define APP       "pgw_case9"
#define PIPELINED 20

static uv_loop_t loop;
static pgw_pool_t *pool;
/* Wakes the loop every 5 ms (unreferenced): a callback that ran at the
 * start of a turn must not leave uv_run(UV_RUN_ONCE) waiting in poll. */
static uv_timer_t waker;

static void on_waker(uv_timer_t *t)
{
    (void)t;
}

typedef struct done {
    int calls, status;
    char sqlstate[6];
} done_t;

static void on_done(int status, pgw_result_t *res, void *ud)
{
    done_t *d = ud;
    d->calls++;
    d->status = status;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate) snprintf(d->sqlstate, sizeof d->sqlstate, "%s", e->sqlstate);
    pgw_result_free(res);
}

static void run_until(const int *flag)
{
    uint64_t end = pgt_now_ns() + 60000000000ull;
    while (!*flag && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(*flag);
}

static void on_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    assert_int_equal(status, 0);
    *(pgw_conn_t **)ud = conn;
}

/* A checkout: it must be idle. */
static pgw_conn_t *acquire(void)
{
    pgw_conn_t *conn = NULL;
    assert_int_equal(pgw_pool_acquire(pool, 0, 30000, on_acq, &conn), 0);
    uint64_t end = pgt_now_ns() + 60000000000ull;
    while (!conn && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_non_null(conn);
    pgw_session_t *s = pgw_conn_session(conn);
    assert_int_equal(pgw_session_txn_status(s), 'I');
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_group_open(s), 0);
    return conn;
}

static done_t run_sql(pgw_conn_t *conn, const char *sql)
{
    done_t d = {0};
    assert_int_equal(pgw_conn_simple_query(conn, sql, on_done, &d), 0);
    run_until(&d.calls);
    return d;
}

/* COPY FROM data: rows 1..100, the 50th malformed (bad), or the source
 * giving up there (abandon); the request's ud, shared by the source and
 * the completion. */
typedef struct copy_req {
    int row, bad, abandon;
    done_t done;
} copy_req_t;

static int copy_rows(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    copy_req_t *s = ud;
    if (s->row == 50 && s->abandon) return PGW_ECANCELED;
    if (s->row > 100) return PGW_COPY_END;
    char line[32];
    int n = s->row == 50 && s->bad ? snprintf(line, sizeof line, "fifty\n")
                                   : snprintf(line, sizeof line, "%d\n", s->row);
    s->row++;
    return pgw_buf_append(out, line, (size_t)n) == 0 ? PGW_COPY_MORE : PGW_ENOMEM;
}

static void on_copy_done(int status, pgw_result_t *res, void *ud)
{
    on_done(status, res, &((copy_req_t *)ud)->done);
}

static int copy_out_rows;

static int stop_after_one(const uint8_t *data, size_t len, void *ud)
{
    (void)data, (void)len, (void)ud;
    return ++copy_out_rows >= 1 ? PGW_ECANCELED : 0;
}

/* A COPY FROM STDIN that fails: the server's 22P02 for the bad row, or
 * the source's own code with the server's 57014 for the CopyFail. */
static void copy_in(pgw_conn_t *conn, int bad, int abandon)
{
    copy_req_t cr = {1, bad, abandon, {0}};
    pgw_request_t r = PGW_COPY_IN_REQ("COPY dirty FROM STDIN", copy_rows, on_copy_done, &cr);
    assert_int_equal(pgw_conn_submit(conn, &r), 0);
    run_until(&cr.done.calls);
    assert_int_equal(cr.done.status, abandon ? PGW_ECANCELED : PGW_ESERVER);
    assert_string_equal(cr.done.sqlstate, abandon ? "57014" : "22P02");
}

static void scenario(int i)
{
    pgw_conn_t *conn = acquire();
    switch (i % 8) {
    case 0: /* (a) outside a transaction block */
    case 1: /* (a) inside one */
    case 2: /* (b) */ {
        if (i % 8 == 1) assert_int_equal(run_sql(conn, "BEGIN").status, 0);
        copy_in(conn, i % 8 != 2, i % 8 == 2);
        break;
    }
    case 3: { /* (c) COPY TO abandoned */
        done_t d = {0};
        copy_out_rows = 0;
        pgw_request_t r = PGW_COPY_OUT_REQ("COPY (SELECT generate_series(1, 10000)) TO STDOUT",
                                           stop_after_one, on_done, &d);
        assert_int_equal(pgw_conn_submit(conn, &r), 0);
        run_until(&d.calls);
        assert_int_equal(d.status, PGW_ECANCELED);
        break;
    }
    case 4: { /* (c) a protocol portal left open */
        done_t d = {0};
        pgw_request_t q = PGW_QUERY("SELECT generate_series(1, 1000)", NULL, 0, on_done, &d);
        q.portal = "c";
        q.max_rows = 10;
        assert_int_equal(pgw_conn_submit(conn, &q), 0);
        run_until(&d.calls);
        assert_int_equal(d.status, 0);
        break;
    }
    case 5: /* (c) a SQL cursor in a transaction block */
        assert_int_equal(run_sql(conn,
                                 "BEGIN; DECLARE cur CURSOR FOR SELECT generate_series(1, 1000); "
                                 "FETCH 5 FROM cur")
                             .status,
                         0);
        break;
    case 6: { /* (c) a pipeline abandoned: released with its requests pending */
        static done_t p[PIPELINED];
        memset(p, 0, sizeof p);
        for (int k = 0; k < PIPELINED; k++) {
            pgw_request_t r = PGW_QUERY("SELECT pg_sleep(0.001)", NULL, 0, on_done, &p[k]);
            assert_int_equal(pgw_conn_submit(conn, &r), 0);
        }
        assert_int_equal(pgw_pool_release(pool, conn), 0);
        for (int k = 0; k < PIPELINED; k++)
            run_until(&p[k].calls);
        for (int k = 0; k < PIPELINED; k++)
            assert_int_equal(p[k].calls, 1);
        return;
    }
    default: /* (d) a transaction left open, a failed one half of the time */
        run_sql(conn, i % 16 == 7 ? "BEGIN; INSERT INTO dirty VALUES (1)"
                                  : "BEGIN; INSERT INTO dirty VALUES (1); SELECT 1/0");
        assert_int_equal(pgw_session_txn_status(pgw_conn_session(conn)), i % 16 == 7 ? 'T' : 'E');
    }
    assert_int_equal(pgw_pool_release(pool, conn), 0);
}

static void test_never_dirty(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS dirty; CREATE TABLE dirty (n int)");
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_waker, 5, 5);
    uv_unref((uv_handle_t *)&waker);
    char ci[512];
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = 2;
    assert_int_equal(
        pgw_pool_new(&pool, &loop, pgt_conninfo(ci, sizeof ci, "application_name=" APP), &cfg), 0);
    const char *slow = getenv("PGW_TEST_SLOW");
    int n = RUNNING_ON_VALGRIND || (slow && *slow && strcmp(slow, "0") != 0) ? 100 : 1000;
    for (int i = 0; i < n; i++)
        scenario(i);
    /* The last release's ROLLBACK finishes. */
    pgw_pool_stats_t st;
    uint64_t end = pgt_now_ns() + 30000000000ull;
    do {
        uv_run(&loop, UV_RUN_ONCE);
        pgw_pool_stats(pool, &st);
    } while (st.in_use != 0 && pgt_now_ns() < end);
    print_message("%d checkouts: pool opened %llu, closed %llu\n", n, (unsigned long long)st.opened,
                  (unsigned long long)st.closed);
    assert_int_equal(st.in_use, 0);
    assert_int_equal(
        pgt_client_int8(c, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" APP
                           "' AND state LIKE 'idle in transaction%'"),
        0);
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM dirty"), 0);
    pgw_pool_close(pool);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&waker, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgt_client_exec_ok(c, "DROP TABLE dirty");
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_dirty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
