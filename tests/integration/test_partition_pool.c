/*
 * RELIABILITY case 7: a silent partition (the fault proxy's blackhole:
 * nothing moves, nothing is reset) with (a) a query in flight, (b) idle
 * pooled connections, (c) a connect in progress, (d) an acquire while the
 * pool is full; query timeout 200 ms, connect_timeout 2 s (libpq's
 * smallest), acquire timeout 300 ms.
 *
 *   - each operation fails by its deadline (the query's plus the cancel
 *     grace of 40 ms, which cannot reach the server either) and not before
 *     it: asserted as pgtime.h says (no earlier than due, within
 *     PGT_LATE_MS, the work being endless), the latency printed;
 *   - a cancel during the partition never blocks the loop: a 10 ms timer
 *     keeps ticking (no gap of PGT_LATE_MS / 2 or more, where a blocking
 *     cancel would wait for its connect timeout or forever);
 *   - the kinds differ: PGW_EPOOLTIMEOUT for a full pool, the connect's
 *     own PGW_ETIMEDOUT ("server unreachable") when nothing can connect;
 *   - once the partition ends a fresh acquire succeeds;
 *   - 8 workers doing acquire + query on a pool of 2 during the partition
 *     all end within asyncpg's bound, (acquire_timeout + cmd_timeout) x
 *     ceil(workers / pool_size) x 1.2, plus PGT_LATE_MS for the machine.
 * The TCP-level dead peer (keepalives, TCP_USER_TIMEOUT), which a proxy
 * cannot show since its kernel acknowledges everything, is
 * test_deadline_partition.c.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "pgproxy.h"
#include "pgtest.h"
#include "pgwire/pool.h"

#define QUERY_MS   200
#define GRACE_MS   40
#define ACQUIRE_MS 300
#define POOL_SIZE  2
#define WORKERS    8

/* A 10 ms timer on the loop: the longest gap between its ticks shows
 * whether anything blocked the loop. */
typedef struct ticker {
    uv_timer_t t;
    uint64_t last_ns;
    double max_gap_ms;
} ticker_t;

static void on_tick(uv_timer_t *t)
{
    ticker_t *k = t->data;
    uint64_t now = pgt_now_ns();
    double gap = pgt_ms_between(k->last_ns, now);
    if (gap > k->max_gap_ms) k->max_gap_ms = gap;
    k->last_ns = now;
}

static void ticker_start(ticker_t *k, uv_loop_t *loop)
{
    memset(k, 0, sizeof *k);
    uv_timer_init(loop, &k->t);
    k->t.data = k;
    k->last_ns = pgt_now_ns();
    uv_timer_start(&k->t, on_tick, 10, 10);
}

static void ticker_stop(ticker_t *k)
{
    uv_close((uv_handle_t *)&k->t, NULL);
    print_message("longest gap between 10 ms ticks: %.1f ms\n", k->max_gap_ms);
    assert_true(k->max_gap_ms < PGT_LATE_MS / 2);
}

typedef struct cancel_rec {
    int calls, status;
} cancel_rec_t;

static void on_cancel(pgw_conn_t *conn, int status, void *ud)
{
    (void)conn;
    cancel_rec_t *c = ud;
    c->calls++;
    c->status = status;
}

/* (a) a query in flight when the partition starts. */
static void test_query_in_flight(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    char ci[512];
    dl_conn_t x;
    dl_open(&x, NULL, pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable"), 0, GRACE_MS);
    ticker_t k;
    ticker_start(&k, x.loop);
    outcome_t o = {0};
    pgw_request_t r = PGW_QUERY(DL_WORK_SQL, NULL, 0, record, &o);
    r.timeout_ms = QUERY_MS;
    uint64_t t0 = pgt_now_ns();
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    int never = 0;
    dl_run(x.loop, &never, NULL, 50); /* written and running */
    pgt_proxy_blackhole(px, 1);
    /* An explicit cancel too: it cannot get through either, and the loop
     * keeps turning while it tries. */
    cancel_rec_t cr = {0};
    assert_int_equal(pgw_conn_cancel(x.conn, on_cancel, &cr), 0);
    dl_spin(&x, &o.calls, DL_WAIT_MS);
    assert_int_equal(o.status, PGW_ETIMEDOUT);
    pgt_assert_in_time("(a) query 200 ms + grace 40 ms", pgt_ms_between(t0, o.at_ns),
                       QUERY_MS + GRACE_MS - 5, PGT_WORK_ENDLESS);
    dl_spin(&x, &x.lost, DL_WAIT_MS);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    ticker_stop(&k);
    dl_close(&x);
    assert_int_equal(cr.calls, 1);
    print_message("the cancel sent during the partition: %s\n", pgw_err_name(cr.status));
    assert_true(cr.status != 0);
    pgt_proxy_blackhole(px, 0);
    pgt_proxy_stop(px);
}

/* (c) a connect in progress: connect_timeout bounds it. */
static void test_connect_in_progress(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    pgt_proxy_blackhole(px, 1);
    char ci[512];
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    dl_conn_t x;
    memset(&x, 0, sizeof x);
    x.loop = &loop;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.ud = &x;
    assert_int_equal(pgw_conn_new(&x.conn, &loop, &cfg), 0);
    uint64_t t0 = pgt_now_ns();
    assert_int_equal(
        pgw_conn_connect(x.conn,
                         pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable connect_timeout=2"),
                         dl_connected, &x),
        0);
    dl_spin(&x, &x.connected, DL_WAIT_MS);
    assert_int_equal(x.connect_status, PGW_ETIMEDOUT);
    pgt_assert_in_time("(c) connect_timeout 2 s", pgt_ms_since(t0), 2000 - 5, PGT_WORK_ENDLESS);
    dl_close(&x);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgt_proxy_blackhole(px, 0);
    pgt_proxy_stop(px);
}

/* ------------------------------------------------------------------ pool */

static uv_loop_t loop;

typedef struct acq {
    int done, status;
    pgw_conn_t *conn;
    uint64_t at_ns;
} acq_t;

static void on_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    acq_t *a = ud;
    a->done = 1;
    a->status = status;
    a->conn = conn;
    a->at_ns = pgt_now_ns();
}

static pgw_pool_t *pool_open(pgt_proxy_t *px, uint32_t min, const char *extra)
{
    char ci[512];
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = min;
    cfg.max_size = POOL_SIZE;
    cfg.acquire_timeout_ms = ACQUIRE_MS;
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = 200;
    cfg.conn.request_timeout_ms = QUERY_MS;
    cfg.conn.cancel_grace_ms = GRACE_MS;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, pgt_proxy_conninfo(px, ci, sizeof ci, extra), &cfg),
                     0);
    return p;
}

static void wait_idle(pgw_pool_t *p, uint32_t n)
{
    pgw_pool_stats_t st;
    uint64_t end = pgt_now_ns() + 20000000000ull;
    int never = 0;
    do {
        dl_run(&loop, &never, NULL, 5);
        pgw_pool_stats(p, &st);
    } while (st.idle < n && pgt_now_ns() < end);
    assert_int_equal(st.idle, n);
}

static void pool_close(pgw_pool_t *p)
{
    pgw_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
}

/* (b) idle pooled connections: the requests sent to them time out, the
 * pool drops them; (d) an acquire while the pool is full times out with
 * PGW_EPOOLTIMEOUT; after the partition a fresh acquire succeeds. */
static void test_idle_pool_and_full_pool(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgt_proxy_t *px = pgt_proxy_start_server();
    pgw_pool_t *p = pool_open(px, POOL_SIZE, "sslmode=disable");
    wait_idle(p, POOL_SIZE);
    ticker_t k;
    ticker_start(&k, &loop);
    pgt_proxy_blackhole(px, 1);
    /* (b) */
    outcome_t o[POOL_SIZE] = {{0}};
    uint64_t t0 = pgt_now_ns();
    for (int i = 0; i < POOL_SIZE; i++) {
        pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, record, &o[i]);
        assert_int_equal(pgw_pool_submit(p, &r), 0);
    }
    for (int i = 0; i < POOL_SIZE; i++) {
        dl_run(&loop, &o[i].calls, NULL, DL_WAIT_MS);
        assert_int_equal(o[i].calls, 1);
        assert_int_equal(o[i].status, PGW_ETIMEDOUT);
        pgt_assert_in_time("(b) pooled query 200 ms", pgt_ms_between(t0, o[i].at_ns), QUERY_MS - 5,
                           PGT_WORK_ENDLESS);
    }
    pgw_pool_stats_t st;
    uint64_t end = pgt_now_ns() + (uint64_t)DL_WAIT_MS * 1000000u;
    int never = 0;
    do {
        dl_run(&loop, &never, NULL, 5);
        pgw_pool_stats(p, &st);
    } while (st.lost < POOL_SIZE && pgt_now_ns() < end);
    assert_int_equal(st.lost, POOL_SIZE); /* the partitioned connections are dropped */
    /* (d) the pool is full: both slots are taken by connects that cannot
     * finish. The waiter fails at its deadline with "pool exhausted". */
    acq_t a = {0};
    t0 = pgt_now_ns();
    assert_int_equal(pgw_pool_acquire(p, 0, ACQUIRE_MS, on_acq, &a), 0);
    dl_run(&loop, &a.done, NULL, DL_WAIT_MS);
    assert_int_equal(a.done, 1);
    print_message("(d) acquire during the partition: %s\n", pgw_err_name(a.status));
    assert_int_equal(a.status, PGW_EPOOLTIMEOUT);
    pgt_assert_in_time("(d) acquire 300 ms", pgt_ms_between(t0, a.at_ns), ACQUIRE_MS - 5,
                       PGT_WORK_ENDLESS);
    ticker_stop(&k);
    /* The partition ends: a fresh acquire succeeds. */
    pgt_proxy_blackhole(px, 0);
    acq_t b = {0};
    assert_int_equal(pgw_pool_acquire(p, 0, 20000, on_acq, &b), 0);
    dl_run(&loop, &b.done, NULL, DL_WAIT_MS);
    assert_int_equal(b.status, 0);
    outcome_t q = {0};
    assert_int_equal(pgw_conn_query(b.conn, "SELECT 7", NULL, 0, record, &q), 0);
    dl_run(&loop, &q.calls, NULL, DL_WAIT_MS);
    assert_int_equal(q.status, 0);
    assert_int_equal(pgw_pool_release(p, b.conn), 0);
    pool_close(p);
    pgt_proxy_stop(px);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Nothing can connect: the waiter gets the connect's error, not "pool
 * exhausted". */
static void test_server_unreachable(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgt_proxy_t *px = pgt_proxy_start_server();
    pgt_proxy_blackhole(px, 1);
    pgw_pool_t *p = pool_open(px, 0, "sslmode=disable connect_timeout=2");
    acq_t a = {0};
    uint64_t t0 = pgt_now_ns();
    assert_int_equal(pgw_pool_acquire(p, 0, 5000, on_acq, &a), 0);
    dl_run(&loop, &a.done, NULL, DL_WAIT_MS);
    assert_int_equal(a.done, 1);
    print_message("acquire, server unreachable: %s after %.0f ms\n", pgw_err_name(a.status),
                  pgt_ms_between(t0, a.at_ns));
    assert_int_equal(a.status, PGW_ETIMEDOUT);
    assert_true(pgt_ms_between(t0, a.at_ns) >= 2000 - 5);
    pgt_proxy_blackhole(px, 0);
    acq_t b = {0};
    assert_int_equal(pgw_pool_acquire(p, 0, 20000, on_acq, &b), 0);
    dl_run(&loop, &b.done, NULL, DL_WAIT_MS);
    assert_int_equal(b.status, 0);
    assert_int_equal(pgw_pool_release(p, b.conn), 0);
    pool_close(p);
    pgt_proxy_stop(px);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* ------------------------------------------------------------- workers */

typedef struct worker {
    pgw_pool_t *p;
    int done, acq_status, query_status;
    uint64_t at_ns;
    outcome_t o;
} worker_t;

static void on_worker_query(int status, pgw_result_t *res, void *ud)
{
    worker_t *w = ud;
    pgw_result_free(res);
    w->query_status = status;
    w->done = 1;
    w->at_ns = pgt_now_ns();
}

static void on_worker_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    worker_t *w = ud;
    w->acq_status = status;
    if (status != 0) {
        w->done = 1;
        w->at_ns = pgt_now_ns();
        return;
    }
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, on_worker_query, w);
    if (pgw_conn_submit(conn, &r) != 0) {
        w->query_status = PGW_ECLOSED;
        w->done = 1;
        w->at_ns = pgt_now_ns();
    }
    pgw_pool_release(p, conn); /* the pending query completes on its own */
}

/* 8 workers, a pool of 2, the partition starting with them: all end, and
 * within (acquire + query) x ceil(8 / 2) x 1.2. */
static void test_workers_bound(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgt_proxy_t *px = pgt_proxy_start_server();
    pgw_pool_t *p = pool_open(px, POOL_SIZE, "sslmode=disable");
    wait_idle(p, POOL_SIZE);
    pgt_proxy_blackhole(px, 1);
    worker_t w[WORKERS];
    memset(w, 0, sizeof w);
    uint64_t t0 = pgt_now_ns();
    for (int i = 0; i < WORKERS; i++) {
        w[i].p = p;
        assert_int_equal(pgw_pool_acquire(p, 0, 0, on_worker_acq, &w[i]), 0);
    }
    uint64_t last = 0;
    for (int i = 0; i < WORKERS; i++) {
        dl_run(&loop, &w[i].done, NULL, DL_WAIT_MS);
        assert_int_equal(w[i].done, 1);
        assert_true(w[i].acq_status != 0 || w[i].query_status != 0);
        if (w[i].at_ns > last) last = w[i].at_ns;
    }
    double bound = (ACQUIRE_MS + QUERY_MS) * ((WORKERS + POOL_SIZE - 1) / POOL_SIZE) * 1.2;
    double took = pgt_ms_between(t0, last);
    print_message("8 workers, pool of 2, partitioned: all done after %.0f ms (bound %.0f ms)\n",
                  took, bound);
    assert_true(took <= bound + PGT_LATE_MS);
    pgt_proxy_blackhole(px, 0);
    pool_close(p);
    pgt_proxy_stop(px);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_in_flight),         cmocka_unit_test(test_connect_in_progress),
        cmocka_unit_test(test_idle_pool_and_full_pool), cmocka_unit_test(test_server_unreachable),
        cmocka_unit_test(test_workers_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
