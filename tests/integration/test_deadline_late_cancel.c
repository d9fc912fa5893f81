/*
 * A deadline's cancel lands on nothing but its own request (issue 24, the
 * soak's stray 57014). The server interrupts whatever the backend runs
 * when the cancel's signal arrives: when that is later than the target's
 * end, a request written behind the target was interrupted instead.
 *
 * The fault proxy makes the late cancel certain: the requests are relayed
 * at once, then every chunk is delayed by LATE_MS, the CancelRequest
 * included, so that it reaches the server long after the target (a short
 * pg_sleep) ended and while the next request (a longer one) runs, if that
 * request was written already. The next request must succeed; the target
 * fails by its deadline (PGW_ETIMEDOUT). The grace is long enough for the
 * target's delayed answer, so that the connection is not closed.
 *
 *   - through a pool of one connection: the next request is another
 *     caller's one-shot, pipelined on the same connection;
 *   - on a connection: the next request is submitted at once behind it.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "pgproxy.h"
#include "pgtest.h"
#include "pgwire/pool.h"

#define DEADLINE_MS 100
#define LATE_MS     1000  /* the proxy's delay once both are relayed */
#define GRACE_MS    20000 /* the target's answer is late too: no close */
#define TARGET_SQL  "SELECT 1 FROM pg_sleep(0.4)"
#define NEXT_SQL    "SELECT 2 FROM pg_sleep(1.5)" /* runs when the cancel lands */

static void submit_pair(int (*submit)(void *, pgw_request_t *), void *on, outcome_t *target,
                        outcome_t *next)
{
    pgw_request_t r = PGW_QUERY(TARGET_SQL, NULL, 0, record, target);
    r.timeout_ms = DEADLINE_MS;
    assert_int_equal(submit(on, &r), 0);
    r = PGW_QUERY(NEXT_SQL, NULL, 0, record, next);
    assert_int_equal(submit(on, &r), 0);
}

static void check_pair(const outcome_t *target, const outcome_t *next)
{
    assert_int_equal(target->calls, 1);
    assert_int_equal(target->status, PGW_ETIMEDOUT);
    if (next->status != 0)
        fail_msg("the request behind the timed-out one failed: %s (SQLSTATE %s)",
                 pgw_err_name(next->status), next->sqlstate[0] ? next->sqlstate : "-");
    assert_int_equal(next->calls, 1);
    assert_int_equal(next->value, 2);
}

/* ------------------------------------------------------------------ pool */

static int pool_submit(void *p, pgw_request_t *r)
{
    return pgw_pool_submit(p, r);
}

static void test_pool_late_cancel_spares_next_caller(void **state)
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
    cfg.conn.cancel_grace_ms = GRACE_MS;
    pgw_pool_t *p = NULL;
    assert_int_equal(
        pgw_pool_new(&p, &loop, pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable"), &cfg), 0);
    outcome_t warm = {0};
    pgw_request_t w = PGW_QUERY("SELECT 1", NULL, 0, record, &warm);
    assert_int_equal(pgw_pool_submit(p, &w), 0);
    dl_run(&loop, &warm.calls, NULL, DL_WAIT_MS);
    assert_int_equal(warm.status, 0);

    outcome_t target = {0}, next = {0};
    submit_pair(pool_submit, p, &target, &next);
    int never = 0;
    dl_run(&loop, &never, NULL, 30); /* written and relayed */
    pgt_proxy_latency(px, LATE_MS);
    dl_run(&loop, &target.calls, &next.calls, DL_WAIT_MS);
    check_pair(&target, &next);

    pgt_proxy_latency(px, 0);
    pgw_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgt_proxy_stop(px);
}

/* ------------------------------------------------------------ connection */

static int conn_submit(void *c, pgw_request_t *r)
{
    return pgw_conn_submit(c, r);
}

static void test_conn_late_cancel_spares_next_request(void **state)
{
    (void)state;
    pgt_proxy_t *px = pgt_proxy_start_server();
    char ci[512];
    dl_conn_t x;
    dl_open(&x, NULL, pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=disable"), 0, GRACE_MS);
    outcome_t target = {0}, next = {0};
    submit_pair(conn_submit, x.conn, &target, &next);
    int never = 0;
    dl_run(x.loop, &never, NULL, 30); /* written and relayed */
    pgt_proxy_latency(px, LATE_MS);
    dl_run(x.loop, &target.calls, &next.calls, DL_WAIT_MS);
    check_pair(&target, &next);
    assert_int_equal(x.lost, 0);
    pgt_proxy_latency(px, 0);
    dl_close(&x);
    pgt_proxy_stop(px);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_late_cancel_spares_next_caller),
        cmocka_unit_test(test_conn_late_cancel_spares_next_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
