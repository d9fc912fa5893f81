/*
 * RELIABILITY case 8: a warm pool of 10 idle connections on a private
 * cluster restarted with `pg_ctl restart -m fast` (the backends send
 * 57P01 and close).
 *   - the dead idle connections are noticed on their FATAL / EOF without
 *     being used: the pool counts 10 lost before anything is submitted,
 *     and replaces them;
 *   - restarted again, 100 queries submitted at once after the restart
 *     each fail at most once, with PGW_ERETRY (a typed, retryable
 *     "connection lost"), or refused at submit with the failed reconnect's
 *     error while the pool backs off, and succeed when tried again (a
 *     refused one after the backoff); nothing else reaches the
 *     application;
 *   - the pool converges back to its minimum of 10 idle connections.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "pgpair.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define POOL    10
#define QUERIES 100

static uv_loop_t loop;
static pgw_pool_t *pool;

static void on_wake(uv_timer_t *t)
{
    (void)t; /* only wakes the loop */
}

static void run_for(unsigned ms)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ms * 1000000u;
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    uv_timer_start(&t, on_wake, 5, 5);
    while (pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
}

static pgw_pool_stats_t stats(void)
{
    pgw_pool_stats_t st;
    pgw_pool_stats(pool, &st);
    return st;
}

/* Run the loop until the pool has n idle connections of n in all. */
static void wait_converged(uint32_t n, unsigned ms)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ms * 1000000u;
    pgw_pool_stats_t st;
    do {
        run_for(5);
        st = stats();
    } while ((st.idle != n || st.size != n) && pgt_now_ns() < end);
    if (st.idle != n || st.size != n)
        fail_msg("pool: %u idle of %u, wanted %u", st.idle, st.size, n);
}

/* Restart the cluster (pg_ctl restart -m fast) while the loop runs. */
static void restart(const char *dir)
{
    pgt_child_t c;
    pgt_script_spawn(&loop, &c, "pg-cluster.sh", "restart", dir, NULL);
    uint64_t end = pgt_now_ns() + 120000000000ull;
    while (!c.exited && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(c.exited);
    assert_int_equal(c.status, 0);
}

typedef struct q {
    int tag, tries, done, status, retried;
    int64_t value;
} q_t;

static q_t Q[QUERIES];
static int ndone;

/* Queries refused at submit, tried again once the pool's backoff has passed
 * (an immediate resubmit in the same loop turn would meet the same pool). */
#define BACKOFF_MAX_MS 500
static q_t *refused[QUERIES];
static int nrefused;
static uv_timer_t retry_timer;

static void submit(q_t *q);

static void on_retry(uv_timer_t *t)
{
    (void)t;
    int n = nrefused;
    nrefused = 0;
    for (int i = 0; i < n; i++)
        submit(refused[i]);
}

static void on_q(int status, pgw_result_t *res, void *ud)
{
    q_t *q = ud;
    if (status == PGW_ERETRY && q->tries == 1) {
        pgw_result_free(res);
        q->retried = 1;
        submit(q);
        return;
    }
    q->done++;
    q->status = status;
    if (status == 0) pgw_result_int8(res, 0, 0, &q->value);
    pgw_result_free(res);
    ndone++;
}

static void submit(q_t *q)
{
    pgw_param_t p = pgw_int8(q->tag);
    pgw_request_t r = PGW_QUERY("SELECT $1::int8", &p, 1, on_q, q);
    q->tries++;
    int rc = pgw_pool_submit(pool, &r);
    /* Refused at once (no connection up, backing off): a failed try too,
     * tried again after the backoff. */
    if (rc != 0) {
        if (q->tries > 1) fail_msg("query %d refused twice: %s", q->tag, pgw_err_name(rc));
        q->retried = 1;
        refused[nrefused++] = q;
        if (!uv_is_active((uv_handle_t *)&retry_timer))
            uv_timer_start(&retry_timer, on_retry, BACKOFF_MAX_MS + 100, 0);
    }
}

/* The private cluster, started and stopped around the test so that a failed
 * assertion never leaves a server running. */
static char warm_dir[64], warm_ci[768];

static int cluster_setup(void **state)
{
    (void)state;
    pgt_cluster_start(warm_dir, "warm", warm_ci, sizeof warm_ci);
    return 0;
}

static int cluster_teardown(void **state)
{
    (void)state;
    if (warm_dir[0]) pgt_cluster_stop(warm_dir);
    warm_dir[0] = '\0';
    return 0;
}

static void test_restart_warm_pool(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = POOL;
    cfg.max_size = POOL;
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = BACKOFF_MAX_MS;
    assert_int_equal(pgw_pool_new(&pool, &loop, warm_ci, &cfg), 0);
    uv_timer_init(&loop, &retry_timer);
    wait_converged(POOL, 30000);

    /* Idle connections die: noticed without a request. */
    restart(warm_dir);
    uint64_t end = pgt_now_ns() + 30000000000ull;
    while (stats().lost < POOL && pgt_now_ns() < end)
        run_for(5);
    assert_int_equal(stats().lost, POOL);
    assert_int_equal(stats().submitted, 0);
    wait_converged(POOL, 60000);

    /* Again, with 100 queries at once after the restart. */
    restart(warm_dir);
    memset(Q, 0, sizeof Q);
    ndone = 0;
    for (int i = 0; i < QUERIES; i++) {
        Q[i].tag = i;
        submit(&Q[i]);
    }
    end = pgt_now_ns() + 60000000000ull;
    while (ndone < QUERIES && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    int retried = 0;
    for (int i = 0; i < QUERIES; i++) {
        assert_int_equal(Q[i].done, 1);
        if (Q[i].status != 0) fail_msg("query %d: %s", i, pgw_err_name(Q[i].status));
        assert_int_equal(Q[i].value, i);
        assert_true(Q[i].tries <= 2);
        retried += Q[i].retried;
    }
    pgw_pool_stats_t st = stats();
    print_message("restart with 100 queries: %d retried once, pool lost %llu, opened %llu, "
                  "open failures %llu\n",
                  retried, (unsigned long long)st.lost, (unsigned long long)st.opened,
                  (unsigned long long)st.open_failures);
    assert_int_equal(st.lost, 2 * POOL);
    wait_converged(POOL, 60000);
    pgw_pool_close(pool);
    uv_close((uv_handle_t *)&retry_timer, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_restart_warm_pool, cluster_setup, cluster_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
