/*
 * Lag-aware standby selection (pool.h, STANDBY LAG).
 *
 * A private primary and a standby that holds every commit back an hour
 * (tests/pg/pg-replica.sh with PGW_STANDBY_APPLY_DELAY, in a temporary
 * directory: the test lifts the delay, which the shared fixture's other
 * users must not see). A routing pool over both with max_standby_lag_ms
 * and max_standby_lag_bytes set, while the primary commits (so the standby
 * has received WAL it has not replayed):
 *   - once the standby has been measured behind, read-only one-shot
 *     requests are all answered by the primary (inet_server_port()), the
 *     standby's read-only entry in pgw_pool_hosts shows it behind, with no
 *     request sent there, and the standby's pg_stat_activity shows none of
 *     the test's read-only queries;
 *   - a pool with standby_lag_fail refuses them with PGW_ETARGET;
 *   - once the delay is lifted (ALTER SYSTEM SET recovery_min_apply_delay
 *     = 0 and pg_reload_conf() on the standby) the standby catches up and
 *     read-only requests are answered by it again.
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/conn.h"
#include "pgwire/pool.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

enum { READERS = 8 };

static pgt_pair_t pair;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static int setup(void **state)
{
    (void)state;
    setenv("PGW_STANDBY_APPLY_DELAY", "1h", 1);
    pgt_pair_start(&pair, "lag");
    unsetenv("PGW_STANDBY_APPLY_DELAY");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_pair_stop(&pair);
    return 0;
}

typedef struct lag {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int32_t primary_port, standby_port;
    int stop;
    int outstanding;
    int failed;
    int writes;
    int at[2]; /* read-only answers: [0] primary, [1] standby */
} lag_t;

typedef struct client {
    lag_t *l;
    int ro;
} client_t;

/* The marker lets pg_stat_activity tell the test's reads apart. */
static const char *const ro_sql = "SELECT inet_server_port() /* pgw_lag_read */";

static void client_send(client_t *c);

static void on_answer(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    lag_t *l = c->l;
    l->outstanding--;
    if (status != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        print_message("request failed: %d %s\n", status, e ? e->message : "");
        l->failed++;
    } else if (c->ro) {
        int32_t port;
        assert_int_equal(pgw_result_int4(res, 0, 0, &port), 0);
        assert_true(port == l->primary_port || port == l->standby_port);
        l->at[port == l->standby_port]++;
    } else {
        l->writes++;
    }
    pgw_result_free(res);
    if (!l->stop) client_send(c);
}

static void client_send(client_t *c)
{
    pgw_request_t r = c->ro ? PGW_SIMPLE(ro_sql, on_answer, c)
                            : PGW_SIMPLE("INSERT INTO pgw_lag VALUES (1)", on_answer, c);
    if (c->ro) r.route = PGW_ROUTE_READ_ONLY;
    int rc = pgw_pool_submit(c->l->pool, &r);
    if (rc != 0) {
        print_message("submit refused: %d\n", rc);
        c->l->failed++;
        return;
    }
    c->l->outstanding++;
}

static const pgw_pool_host_stats_t *standby_entry(lag_t *l, pgw_pool_host_stats_t *h, size_t cap,
                                                  pgw_pool_t *pool)
{
    size_t n = pgw_pool_hosts(pool, h, cap);
    char port[16];
    snprintf(port, sizeof port, "%" PRId32, l->standby_port);
    for (size_t i = 0; i < n && i < cap; i++)
        if (strcmp(h[i].port, port) == 0 && h[i].flags == PGW_POOL_READ_ONLY) return &h[i];
    return NULL;
}

static void on_simple_done(int status, pgw_result_t *res, void *ud)
{
    if (status != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        fail_msg("setup statement failed: %d %s", status, e ? e->message : "");
    }
    pgw_result_free(res);
    (*(int *)ud)++;
}

static void on_conn_up(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    if (status != 0) fail_msg("connect: %s", pgw_conn_error_message(conn));
    (*(int *)ud)++;
}

static void on_conn_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    (*(int *)ud)++;
}

/* Run sqls one by one on a connection of its own to port (the loop run
 * until all are done). */
static void run_on(uv_loop_t *loop, const char *port, const char *const *sqls, int n)
{
    char ci[512];
    pgt_pair_conninfo(&pair, ci, sizeof ci, port, NULL);
    pgw_conn_t *conn;
    int up = 0, done = 0, closed = 0;
    assert_int_equal(pgw_conn_new(&conn, loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(conn, ci, on_conn_up, &up), 0);
    for (int i = 0; i < n; i++) {
        pgw_request_t r = PGW_SIMPLE(sqls[i], on_simple_done, &done);
        assert_int_equal(pgw_conn_submit(conn, &r), 0);
    }
    while (done < n)
        uv_run(loop, UV_RUN_ONCE);
    pgw_conn_close(conn, on_conn_closed, &closed);
    while (!closed)
        uv_run(loop, UV_RUN_ONCE);
}

/* The test's reads the standby is running or has run on any backend
 * (pg_stat_activity shows each backend's last query). */
static int64_t reads_seen_on_standby(uv_loop_t *loop, const char *port);

typedef struct count {
    int64_t n;
    int done;
} count_t;

static void on_count(int status, pgw_result_t *res, void *ud)
{
    count_t *c = ud;
    assert_int_equal(status, 0);
    assert_int_equal(pgw_result_int8(res, 0, 0, &c->n), 0);
    pgw_result_free(res);
    c->done = 1;
}

static int64_t reads_seen_on_standby(uv_loop_t *loop, const char *port)
{
    char ci[512];
    pgt_pair_conninfo(&pair, ci, sizeof ci, port, NULL);
    pgw_conn_t *conn;
    int up = 0, closed = 0;
    count_t c = {0};
    assert_int_equal(pgw_conn_new(&conn, loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(conn, ci, on_conn_up, &up), 0);
    pgw_request_t r = PGW_SIMPLE("SELECT count(*) FROM pg_stat_activity "
                                 "WHERE query LIKE '%pgw_lag_read */' AND pid <> pg_backend_pid()",
                                 on_count, &c);
    assert_int_equal(pgw_conn_submit(conn, &r), 0);
    while (!c.done)
        uv_run(loop, UV_RUN_ONCE);
    pgw_conn_close(conn, on_conn_closed, &closed);
    while (!closed)
        uv_run(loop, UV_RUN_ONCE);
    return c.n;
}

static void run_until(lag_t *l, int (*cond)(lag_t *), uint64_t deadline)
{
    while (!cond(l) && !l->failed && now_ms() < deadline)
        uv_run(&l->loop, UV_RUN_ONCE);
}

static int drained(lag_t *l)
{
    return l->outstanding == 0;
}

static int measured_behind(lag_t *l)
{
    pgw_pool_host_stats_t h[8];
    const pgw_pool_host_stats_t *s = standby_entry(l, h, 8, l->pool);
    return s && s->lag_checks >= 3 && s->behind && l->writes > 10;
}

static int back_on_standby(lag_t *l)
{
    return l->at[1] >= 100;
}

static void test_lag(void **state)
{
    (void)state;
    static lag_t l;
    memset(&l, 0, sizeof l);
    const char *pport = pgt_dir_env(pair.primary, "PGPORT");
    const char *sport = pgt_dir_env(pair.standby, "PGW_STANDBY_PORT");
    l.primary_port = atoi(pport);
    l.standby_port = atoi(sport);
    int valgrind = RUNNING_ON_VALGRIND;
    uint64_t deadline = now_ms() + (valgrind ? 300000 : 90000);
    assert_int_equal(uv_loop_init(&l.loop), 0);
    const char *mk[] = {"CREATE TABLE pgw_lag (n int4)"};
    run_on(&l.loop, pport, mk, 1);

    char ci[1024];
    pgt_pair_conninfo(&pair, ci, sizeof ci, pport, sport);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.min_size = 1;
    cfg.max_size = 8;
    cfg.pipeline_target = 4;
    cfg.max_standby_lag_ms = 1000;
    cfg.max_standby_lag_bytes = 16u << 20;
    cfg.lag_check_ms = 100;
    assert_int_equal(pgw_pool_new(&l.pool, &l.loop, ci, &cfg), 0);

    /* Writers on the primary, readers routed read-only. */
    static client_t clients[READERS + 2];
    for (int i = 0; i < READERS + 2; i++) {
        clients[i] = (client_t){.l = &l, .ro = i < READERS};
        client_send(&clients[i]);
    }
    run_until(&l, measured_behind, deadline);
    assert_int_equal(l.failed, 0);
    assert_true(measured_behind(&l));
    /* From now on (and since the start) no read reached the standby. */
    int reads_before = l.at[0];
    while (l.at[0] < reads_before + (valgrind ? 200 : 2000) && !l.failed && now_ms() < deadline)
        uv_run(&l.loop, UV_RUN_ONCE);
    assert_int_equal(l.failed, 0);
    assert_int_equal(l.at[1], 0);
    pgw_pool_host_stats_t h[8];
    const pgw_pool_host_stats_t *s = standby_entry(&l, h, 8, l.pool);
    assert_non_null(s);
    print_message("held back: %d reads on the primary; standby lag %" PRId64 " bytes %" PRId64
                  " ms after %" PRIu64 " checks, %u connections there\n",
                  l.at[0], s->lag_bytes, s->lag_ms, s->lag_checks, s->open);
    assert_int_equal(s->behind, 1);
    assert_true(s->lag_ms > 1000 || s->lag_ms == -1 || s->lag_bytes > (int64_t)(16u << 20));
    assert_int_equal(s->submitted, 0);
    assert_true(s->open >= 1); /* a connection there, measured, unused */
    assert_int_equal(reads_seen_on_standby(&l.loop, sport), 0);

    /* standby_lag_fail: refused while no standby is within the limits. */
    pgw_pool_t *strict;
    cfg.standby_lag_fail = 1;
    cfg.min_size = 1;
    assert_int_equal(pgw_pool_new(&strict, &l.loop, ci, &cfg), 0);
    int refused = 0;
    for (int i = 0; i < 100000 && now_ms() < deadline; i++) {
        pgw_pool_host_stats_t hs[8];
        const pgw_pool_host_stats_t *e = standby_entry(&l, hs, 8, strict);
        pgw_request_t r = PGW_SIMPLE(ro_sql, on_answer, &clients[0]);
        r.route = PGW_ROUTE_READ_ONLY;
        int rc = pgw_pool_submit(strict, &r);
        assert_int_equal(rc, PGW_ETARGET); /* never measured within: never sent */
        if (e && e->lag_checks >= 2) {
            refused = 1;
            break;
        }
        uv_run(&l.loop, UV_RUN_ONCE);
    }
    assert_true(refused);
    pgw_pool_close(strict);

    /* Lift the delay: the standby catches up and takes reads again. */
    const char *lift[] = {"ALTER SYSTEM SET recovery_min_apply_delay = 0",
                          "SELECT pg_reload_conf()"};
    run_on(&l.loop, sport, lift, 2);
    run_until(&l, back_on_standby, deadline);
    l.stop = 1;
    run_until(&l, drained, now_ms() + 60000);
    s = standby_entry(&l, h, 8, l.pool);
    assert_non_null(s);
    print_message("after the delay was lifted: %d reads on the standby; lag %" PRId64
                  " bytes %" PRId64 " ms\n",
                  l.at[1], s->lag_bytes, s->lag_ms);
    assert_int_equal(l.failed, 0);
    assert_true(l.at[1] >= 100);
    assert_int_equal(s->behind, 0);
    assert_true(s->submitted > 0);

    pgw_pool_close(l.pool);
    uv_run(&l.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&l.loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lag),
    };
    return cmocka_run_group_tests_name("standby lag", tests, setup, teardown);
}
