/*
 * RELIABILITY case 6: the connection dies in the middle of a pipeline of
 * 200 requests (some of them pg_sleep(1)), killed three ways: the backend
 * terminated by pg_terminate_backend from a second connection, a TCP RST
 * from the fault proxy (tests/common/pgproxy.h), and the proxy closing the
 * connection half-way through a 100 kB DataRow. Every request completes
 * exactly once: those the server had answered with their own tag, the
 * rest with the connection-lost error, none twice, none left hanging, all
 * of them long before the work queued would have ended (pgtime.h: within
 * PGT_LATE_MS of the socket event, where the case asks 100 ms, with 30 s of
 * sleeps still queued); on_lost fires once; pgw_conn_close of the dead
 * connection completes at once; in-flight counts return to 0. A pool loses
 * its connection the same way: the requests complete with PGW_ERETRY, the
 * pool drops the connection and the next request runs on a new one. A
 * connection terminated while idle gives its next request the server's
 * FATAL error, then is lost; with its loop running, on_notice reads that
 * FATAL before on_lost.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "pgclient.h"
#include "pgproxy.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/pool.h"

#include <time.h>

#define NREQ 200
/* Every SLEEP_EVERY-th request sleeps a second: 40 seconds of work. */
#define SLEEP_EVERY 5
/* The first request returns one 100 kB row (a DataRow to cut in half). */
#define BIG_ROW 100000

typedef struct tagged {
    int calls, status;
    int64_t tag;
    char sqlstate[6];
    uint64_t at_ns;
} tagged_t;

static tagged_t T[NREQ];
static int ndone;

static void on_tagged(int status, pgw_result_t *res, void *ud)
{
    tagged_t *t = ud;
    t->calls++;
    t->status = status;
    t->at_ns = pgt_now_ns();
    t->tag = -1;
    if (status == 0 && pgw_result_nrows(res) == 1) {
        int64_t v;
        if (pgw_result_int8(res, 0, 0, &v) == 0) t->tag = v;
    }
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate) snprintf(t->sqlstate, sizeof t->sqlstate, "%s", e->sqlstate);
    pgw_result_free(res);
    ndone++;
}

/* Request i: its tag back, after a second's sleep for every SLEEP_EVERY-th;
 * request 0 with a 100 kB text column first. */
static pgw_request_t request(int i, pgw_param_t *p)
{
    *p = pgw_int8(i);
    const char *sql = i == 0                 ? "SELECT $1::int8 AS tag, repeat('x', 100000) AS big"
                      : i % SLEEP_EVERY == 0 ? "SELECT $1::int8 AS tag, pg_sleep(1)"
                                             : "SELECT $1::int8 AS tag";
    return PGW_QUERY(sql, p, 1, on_tagged, &T[i]);
}

static void submit_all(pgw_conn_t *conn)
{
    memset(T, 0, sizeof T);
    ndone = 0;
    for (int i = 0; i < NREQ; i++) {
        pgw_param_t p;
        pgw_request_t r = request(i, &p);
        assert_int_equal(pgw_conn_submit(conn, &r), 0);
    }
}

/* Run until n requests completed (the first sleep ran). */
static void run_until_done(dl_conn_t *x, int n)
{
    uint64_t end = pgt_now_ns() + 60000000000ull;
    while (ndone < n && pgt_now_ns() < end)
        uv_run(x->loop, UV_RUN_ONCE);
    assert_true(ndone >= n);
}

/* After the socket event at event_ns: every request completed once, the
 * answered ones with their own tag, the rest with a connection error
 * (allowed: PGW_ECONNLOST, or the server's FATAL for the one it was
 * running), all within PGT_LATE_MS of the event, long before the sleeps
 * still queued would have ended; on_lost once; close completes at once. */
static void expect_all_failed(dl_conn_t *x, uint64_t event_ns, int fatal_allowed)
{
    dl_run(x->loop, &x->lost, NULL, DL_WAIT_MS);
    uint64_t end = pgt_now_ns() + (uint64_t)DL_WAIT_MS * 1000000u;
    while (ndone < NREQ && pgt_now_ns() < end)
        uv_run(x->loop, UV_RUN_ONCE);
    assert_int_equal(ndone, NREQ);
    int ok = 0, lost = 0, sleeps_left = 0;
    uint64_t last_ns = 0;
    for (int i = 0; i < NREQ; i++) {
        if (T[i].calls != 1) fail_msg("request %d completed %d times", i, T[i].calls);
        if (T[i].status == 0) {
            assert_int_equal(T[i].tag, i);
            ok++;
            continue;
        }
        if (T[i].status == PGW_ESERVER && fatal_allowed)
            assert_string_equal(T[i].sqlstate, "57P01");
        else if (T[i].status != PGW_ECONNLOST)
            fail_msg("request %d: %s", i, pgw_err_name(T[i].status));
        lost++;
        if (i % SLEEP_EVERY == 0) sleeps_left++;
        if (T[i].at_ns > last_ns) last_ns = T[i].at_ns;
    }
    print_message("%d answered, %d failed (%d seconds of sleep still queued)\n", ok, lost,
                  sleeps_left);
    assert_true(lost > 0);
    pgt_assert_in_time("the last pending request failed", pgt_ms_between(event_ns, last_ns), 0,
                       sleeps_left * 1000.0);
    assert_int_equal(x->lost, 1);
    assert_int_equal(x->lost_err, PGW_ECONNLOST);
    assert_int_equal(pgw_conn_is_ready(x->conn), 0);
    tagged_t late = {0};
    pgw_param_t p = pgw_int8(0);
    assert_int_equal(pgw_conn_query(x->conn, "SELECT 1", &p, 1, on_tagged, &late), PGW_ECLOSED);
    uint64_t t0 = pgt_now_ns();
    dl_close(x);
    pgt_assert_in_time("close of the dead connection", pgt_ms_since(t0), 0, PGT_WORK_ENDLESS);
    assert_int_equal(late.calls, 0);
    for (int i = 0; i < NREQ; i++)
        assert_int_equal(T[i].calls, 1);
}

static void test_terminate_backend(void **state)
{
    (void)state;
    char ci[512];
    dl_conn_t x;
    dl_open(&x, NULL, pgt_conninfo(ci, sizeof ci, NULL), 0, 0);
    int32_t pid = pgw_conn_backend_pid(x.conn);
    submit_all(x.conn);
    run_until_done(&x, SLEEP_EVERY + 1); /* past the first sleep: well inside the pipeline */
    pgw_client_t *killer = NULL;
    assert_int_equal(pgw_client_connect(&killer, ci, NULL), 0);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", (int)pid);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(killer, sql, &res), 0);
    uint64_t killed_ns = pgt_now_ns();
    pgw_result_free(res);
    pgw_client_close(killer);
    expect_all_failed(&x, killed_ns, 1);
}

/* Terminated while idle: the server's FATAL waits on the socket. The next
 * request gets it (PGW_ESERVER, 57P01), whether its send goes out or fails
 * on the closed connection, and over TLS too, where the server's reset
 * after our send often shows as an error on the socket first (the input is
 * read before the loss counts); the connection is lost after it. */
static void terminated_while_idle(int tls)
{
    char ci[512];
    pgw_client_t *c = NULL, *killer = pgt_client_open();
    if (tls)
        pgt_conninfo_tcp(ci, sizeof ci, pgt_env_required("PGUSER"), NULL, "sslmode=require");
    else
        pgt_conninfo(ci, sizeof ci, NULL);
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)::int",
             (int)pgw_client_backend_pid(c));
    assert_int_equal(pgt_client_int8(killer, sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d",
             (int)pgw_client_backend_pid(c));
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500 && pgt_client_int8(killer, sql) != 0; i++)
        nanosleep(&tick, NULL); /* until the backend is gone */
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), PGW_ESERVER);
    const pgw_error_t *e = pgw_result_error(res);
    assert_non_null(e);
    assert_string_equal(e->sqlstate, "57P01");
    pgw_result_free(res);
    assert_int_equal(pgw_conn_is_ready(pgw_client_conn(c)), 0);
    pgw_client_close(c);
    pgw_client_close(killer);
}

static void test_terminated_while_idle(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++)
        terminated_while_idle(0);
}

static void test_terminated_while_idle_tls(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++)
        terminated_while_idle(1);
}

/* Terminated while idle, with the connection's loop running: no request
 * waits for the server's FATAL, so on_notice reads it (severity FATAL,
 * 57P01), once, before on_lost reports the loss. */
typedef struct idle_watch {
    dl_conn_t x;
    int notices, lost_at_notice;
    char severity[16], sqlstate[6];
} idle_watch_t;

static void on_idle_notice(pgw_conn_t *c, const pgw_error_t *e, void *ud)
{
    (void)c;
    idle_watch_t *w = ud;
    w->notices++;
    w->lost_at_notice = w->x.lost;
    snprintf(w->severity, sizeof w->severity, "%s", e->severity ? e->severity : "");
    snprintf(w->sqlstate, sizeof w->sqlstate, "%s", e->sqlstate ? e->sqlstate : "");
}

static void on_idle_lost(pgw_conn_t *c, int err, void *ud)
{
    dl_lost(c, err, &((idle_watch_t *)ud)->x);
}

static void test_terminated_while_idle_notice(void **state)
{
    (void)state;
    char ci[512];
    idle_watch_t w;
    memset(&w, 0, sizeof w);
    assert_int_equal(uv_loop_init(&w.x.own), 0);
    w.x.loop = &w.x.own;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_notice = on_idle_notice;
    cfg.on_lost = on_idle_lost;
    cfg.ud = &w;
    assert_int_equal(pgw_conn_new(&w.x.conn, w.x.loop, &cfg), 0);
    assert_int_equal(
        pgw_conn_connect(w.x.conn, pgt_conninfo(ci, sizeof ci, NULL), dl_connected, &w.x), 0);
    dl_spin(&w.x, &w.x.connected, 20000);
    assert_int_equal(w.x.connect_status, 0);
    pgw_client_t *killer = pgt_client_open();
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)::int",
             (int)pgw_conn_backend_pid(w.x.conn));
    assert_int_equal(pgt_client_int8(killer, sql), 1);
    pgw_client_close(killer);
    dl_spin(&w.x, &w.x.lost, DL_WAIT_MS);
    assert_int_equal(w.x.lost, 1);
    assert_int_equal(w.x.lost_err, PGW_ECONNLOST);
    assert_int_equal(w.notices, 1);
    assert_int_equal(w.lost_at_notice, 0);
    assert_string_equal(w.severity, "FATAL");
    assert_string_equal(w.sqlstate, "57P01");
    dl_close(&w.x);
}

static void test_proxy_reset(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    char ci[512];
    dl_conn_t x;
    dl_open(&x, NULL, pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable"), 0, 0);
    submit_all(x.conn);
    run_until_done(&x, SLEEP_EVERY + 1);
    pgt_proxy_reset_all(px);
    pgt_proxy_stats_t st;
    pgt_proxy_stats(px, &st);
    assert_int_equal(st.resets, 1);
    expect_all_failed(&x, st.last_cut_ns, 0);
    pgt_proxy_stop(px);
}

/* Messages the server sends the test user from the startup packet to the
 * first ReadyForQuery, counted on a connection of their own. */
static int startup_messages(const char *conninfo);

static int counted;

static void count_backend(pgw_conn_t *c, char dir, const uint8_t *m, size_t n, void *ud)
{
    (void)c, (void)m, (void)n, (void)ud;
    if (dir == 'B') counted++;
}

static int startup_messages(const char *conninfo)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_trace = count_backend;
    dl_conn_t x;
    memset(&x, 0, sizeof x);
    x.loop = &loop;
    cfg.ud = &x;
    counted = 0;
    assert_int_equal(pgw_conn_new(&x.conn, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(x.conn, conninfo, dl_connected, &x), 0);
    dl_spin(&x, &x.connected, 20000);
    assert_int_equal(x.connect_status, 0);
    int n = counted;
    assert_int_equal(pgw_conn_close(x.conn, dl_closed, &x), 0);
    dl_spin(&x, &x.closed, 20000);
    assert_int_equal(uv_loop_close(&loop), 0);
    return n;
}

static void test_proxy_cut_mid_datarow(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    char ci[512];
    pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable");
    int s = startup_messages(ci);
    /* The first request's answer: ParseComplete, BindComplete,
     * RowDescription, then its DataRow: cut 50 kB into it. */
    pgt_proxy_cut_t cut = {PGT_TO_CLIENT, (uint64_t)s + 3, BIG_ROW / 2, 0};
    pgt_proxy_plan_cut(px, &cut);
    dl_conn_t x;
    dl_open(&x, NULL, ci, 0, 0);
    pgt_proxy_plan_cut(px, NULL);
    submit_all(x.conn);
    dl_run(x.loop, &x.lost, NULL, DL_WAIT_MS);
    pgt_proxy_stats_t st;
    pgt_proxy_stats(px, &st);
    assert_int_equal(st.cuts, 1);
    /* the startup and half of the row went through, not the rest */
    assert_true(st.to_client > BIG_ROW / 2 && st.to_client < BIG_ROW / 2 + 4096);
    expect_all_failed(&x, st.last_cut_ns, 0);
    assert_int_equal(T[0].status, PGW_ECONNLOST); /* its row was cut */
    pgt_proxy_stop(px);
}

/* ------------------------------------------------------------------ pool */

static void on_acquired(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p, (void)conn;
    *(int *)ud = status == 0 ? 1 : status;
}

static void test_pool_drops_dead_connection(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    char ci[512];
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 1;
    pgw_pool_t *pool;
    assert_int_equal(
        pgw_pool_new(&pool, &loop, pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable"), &cfg),
        0);
    memset(T, 0, sizeof T);
    ndone = 0;
    for (int i = 0; i < NREQ; i++) {
        pgw_param_t p;
        pgw_request_t r = request(i, &p);
        assert_int_equal(pgw_pool_submit(pool, &r), 0);
    }
    uint64_t end = pgt_now_ns() + 60000000000ull;
    while (ndone < SLEEP_EVERY + 1 && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(ndone >= SLEEP_EVERY + 1);
    pgt_proxy_reset_all(px);
    pgt_proxy_stats_t st;
    pgt_proxy_stats(px, &st);
    while (ndone < NREQ && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(ndone, NREQ);
    int sleeps_left = 0;
    uint64_t last_ns = 0;
    for (int i = 0; i < NREQ; i++) {
        assert_int_equal(T[i].calls, 1);
        if (T[i].status == 0) {
            assert_int_equal(T[i].tag, i);
            continue;
        }
        if (T[i].status != PGW_ERETRY) fail_msg("request %d: %s", i, pgw_err_name(T[i].status));
        if (i % SLEEP_EVERY == 0) sleeps_left++;
        if (T[i].at_ns > last_ns) last_ns = T[i].at_ns;
    }
    pgt_assert_in_time("the pool's requests failed", pgt_ms_between(st.last_cut_ns, last_ns), 0,
                       sleeps_left * 1000.0);
    pgw_pool_stats_t ps;
    pgw_pool_stats(pool, &ps);
    assert_int_equal(ps.lost, 1);
    /* A new connection serves the next checkout. */
    int acquired = 0;
    assert_int_equal(pgw_pool_acquire(pool, 0, 20000, on_acquired, &acquired), 0);
    dl_run(&loop, &acquired, NULL, DL_WAIT_MS); /* its timer: the grant may come first in a turn */
    assert_int_equal(acquired, 1);
    pgw_pool_stats(pool, &ps);
    assert_int_equal(ps.opened, 2);
    assert_int_equal(ps.in_use, 1);
    pgw_pool_close(pool);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgt_proxy_stop(px);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terminate_backend),
        cmocka_unit_test(test_terminated_while_idle),
        cmocka_unit_test(test_terminated_while_idle_tls),
        cmocka_unit_test(test_terminated_while_idle_notice),
        cmocka_unit_test(test_proxy_reset),
        cmocka_unit_test(test_proxy_cut_mid_datarow),
        cmocka_unit_test(test_pool_drops_dead_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
