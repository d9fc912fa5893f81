/*
 * Failover on a private primary and streaming standby (started here in a
 * temporary directory with tests/pg/pg-cluster.sh and tests/pg/pg-replica.sh,
 * never the shared fixture: CI runs test programs in parallel).
 *
 * Connections name both servers (host=127.0.0.1,127.0.0.1 port=P,S) with
 * target_session_attrs=read-write, and land on the primary. With requests
 * in flight there (a pg_sleep and two queries pipelined behind it on each
 * connection), the primary is stopped (pg-cluster.sh halt: pg_ctl stop -m
 * fast; its port stays claimed, so no other test's server can answer
 * there) while the loop runs: every request completes exactly once, with
 * PGW_ECONNLOST (the one the server was running may instead carry the
 * server's own FATAL 57P01 "terminating connection due to administrator
 * command" as PGW_ESERVER), on_lost fires once per connection, and nothing
 * hangs. Then the standby is promoted (pg_ctl promote) while new connects
 * with the same connection string are retried every 50 ms: they find the
 * new primary (pg_is_in_recovery() false, the standby's port, a write
 * succeeds) within a bounded time, which is printed.
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

enum { NCONN = 4, PER_CONN = 3, MAX_ATTEMPTS = 2000 };

static pgt_pair_t pair;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static int setup(void **state)
{
    (void)state;
    uint64_t t0 = now_ms();
    pgt_pair_start(&pair, "failover");
    print_message("private primary and standby started in %" PRIu64 " ms\n", now_ms() - t0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_pair_stop(&pair);
    return 0;
}

static void conninfo(char *buf, size_t n)
{
    char ports[32];
    snprintf(ports, sizeof ports, "%s,%s", pgt_dir_env(pair.primary, "PGPORT"),
             pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));
    buf[0] = '\0';
    assert_int_equal(pgt_conninfo_append(buf, n, "host", "127.0.0.1,127.0.0.1"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "port", ports), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "user", pgt_dir_env(pair.primary, "PGUSER")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", pgt_dir_env(pair.primary, "PGDATABASE")),
                     0);
    assert_int_equal(pgt_conninfo_append(buf, n, "target_session_attrs", "read-write"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "connect_timeout", "2"), 0);
}

/* ----------------------------------------------------- in flight, then lost */

typedef struct inflight {
    pgw_conn_t *conn;
    int connected;
    int lost;
    int lost_err;
    int calls[PER_CONN];
    int status[PER_CONN];
    char sqlstate[PER_CONN][6];
    int closed;
} inflight_t;

typedef struct slot {
    inflight_t *f;
    int i;
} slot_t;

static void on_inflight(int status, pgw_result_t *res, void *ud)
{
    slot_t *s = ud;
    s->f->calls[s->i]++;
    s->f->status[s->i] = status;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    snprintf(s->f->sqlstate[s->i], sizeof s->f->sqlstate[0], "%s",
             e && e->sqlstate ? e->sqlstate : "");
    pgw_result_free(res);
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    (void)conn;
    inflight_t *f = ud;
    f->lost++;
    f->lost_err = err;
}

static void on_inflight_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    inflight_t *f = ud;
    if (status != 0) fail_msg("connect: %s", pgw_conn_error_message(conn));
    f->connected = 1;
}

static void on_inflight_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((inflight_t *)ud)->closed = 1;
}

static void on_tick(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop for ms milliseconds. */
static void run_for(uv_loop_t *loop, unsigned ms)
{
    uv_timer_t t;
    int fired = 0;
    uv_timer_init(loop, &t);
    t.data = &fired;
    uv_timer_start(&t, on_tick, ms, 0);
    while (!fired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

static int all_done(const inflight_t *f)
{
    for (int c = 0; c < NCONN; c++) {
        for (int i = 0; i < PER_CONN; i++) {
            if (f[c].calls[i] == 0) return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------ finding the new primary */

typedef struct finder {
    uv_loop_t *loop;
    const char *ci;
    pgw_conn_t *conn;
    uv_timer_t retry;
    int attempts;
    int failures_target, failures_other;
    int found;
    uint64_t found_at;
    int checked;
    bool in_recovery;
    int32_t port;
    int wrote;
} finder_t;

static void find_attempt(uv_timer_t *t);

static void on_found_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    finder_t *f = ud;
    f->conn = NULL;
    if (!f->found) uv_timer_start(&f->retry, find_attempt, 50, 0);
}

static void on_write(int status, pgw_result_t *res, void *ud)
{
    finder_t *f = ud;
    f->wrote = status == 0 && pgw_result_rows_affected(pgw_result_next(res)) == 1;
    if (status != 0 && res && pgw_result_error(res))
        print_message("write failed: %s\n", pgw_result_error(res)->message);
    pgw_result_free(res);
    f->checked = 1;
    pgw_conn_close(f->conn, on_found_closed, f);
}

static void on_check(int status, pgw_result_t *res, void *ud)
{
    finder_t *f = ud;
    assert_int_equal(status, 0);
    assert_int_equal(pgw_result_bool(res, 0, 0, &f->in_recovery), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &f->port), 0);
    pgw_result_free(res);
}

static void on_find_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    finder_t *f = ud;
    if (status != 0) {
        if (status == PGW_ETARGET)
            f->failures_target++;
        else
            f->failures_other++;
        pgw_conn_close(conn, on_found_closed, f);
        return;
    }
    f->found = 1;
    f->found_at = now_ms();
    assert_int_equal(
        pgw_conn_simple_query(conn, "SELECT pg_is_in_recovery(), inet_server_port()", on_check, f),
        0);
    assert_int_equal(pgw_conn_simple_query(conn,
                                           "CREATE TABLE pgw_failover_t (n int4); "
                                           "INSERT INTO pgw_failover_t VALUES (1)",
                                           on_write, f),
                     0);
}

static void find_attempt(uv_timer_t *t)
{
    finder_t *f = t->data;
    f->attempts++;
    if (f->attempts > MAX_ATTEMPTS) return;
    assert_int_equal(pgw_conn_new(&f->conn, f->loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(f->conn, f->ci, on_find_connected, f), 0);
}

static void test_failover(void **state)
{
    (void)state;
    char ci[1024];
    conninfo(ci, sizeof ci);
    int primary_port = atoi(pgt_dir_env(pair.primary, "PGPORT"));
    int standby_port = atoi(pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);

    /* 1. Connections on the primary, requests in flight. */
    static inflight_t f[NCONN];
    static slot_t slots[NCONN][PER_CONN];
    memset(f, 0, sizeof f);
    for (int c = 0; c < NCONN; c++) {
        pgw_conn_config_t cfg;
        pgw_conn_config_init(&cfg);
        cfg.on_lost = on_lost;
        cfg.ud = &f[c];
        assert_int_equal(pgw_conn_new(&f[c].conn, &loop, &cfg), 0);
        assert_int_equal(pgw_conn_connect(f[c].conn, ci, on_inflight_connected, &f[c]), 0);
        const char *sql[PER_CONN] = {"SELECT pg_sleep(60)", "SELECT 1", "SELECT 2"};
        for (int i = 0; i < PER_CONN; i++) {
            slots[c][i] = (slot_t){&f[c], i};
            pgw_request_t r = PGW_QUERY(sql[i], NULL, 0, on_inflight, &slots[c][i]);
            assert_int_equal(pgw_conn_submit(f[c].conn, &r), 0);
        }
    }
    for (int c = 0; c < NCONN; c++) {
        while (!f[c].connected)
            uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(atoi(pgw_conn_port(f[c].conn)), primary_port);
    }
    run_for(&loop, RUNNING_ON_VALGRIND ? 1000 : 300); /* the sleeps are running */

    /* 2. Stop the primary while the loop runs. */
    pgt_child_t stop;
    pgt_script_spawn(&loop, &stop, "pg-cluster.sh", "halt", pair.primary, NULL);
    uint64_t deadline = now_ms() + 60000;
    while ((!all_done(f) || !stop.exited) && now_ms() < deadline)
        uv_run(&loop, UV_RUN_ONCE);
    if (!all_done(f)) fail_msg("requests in flight on the stopped primary did not complete");
    assert_int_equal(stop.status, 0);
    uint64_t lost_at = now_ms();
    int nlost = 0, nfatal = 0;
    for (int c = 0; c < NCONN; c++) {
        assert_int_equal(f[c].lost, 1);
        assert_int_equal(f[c].lost_err, PGW_ECONNLOST);
        for (int i = 0; i < PER_CONN; i++) {
            assert_int_equal(f[c].calls[i], 1);
            if (f[c].status[i] == PGW_ECONNLOST) {
                nlost++;
            } else if (f[c].status[i] == PGW_ESERVER && i == 0 &&
                       strcmp(f[c].sqlstate[i], "57P01") == 0) {
                nfatal++;
            } else {
                fail_msg("connection %d request %d: %s (%s), expected PGW_ECONNLOST", c, i,
                         pgw_err_name(f[c].status[i]), f[c].sqlstate[i]);
            }
        }
        pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, on_inflight, &slots[c][0]);
        assert_int_equal(pgw_conn_submit(f[c].conn, &r), PGW_ECLOSED);
        pgw_conn_close(f[c].conn, on_inflight_closed, &f[c]);
    }
    print_message("primary stopped (pg_ctl stop -m fast) in %" PRIu64 " ms; the %d requests in "
                  "flight failed once each: %d PGW_ECONNLOST, %d PGW_ESERVER 57P01\n",
                  stop.ended_ms - stop.started_ms, NCONN * PER_CONN, nlost, nfatal);

    /* 3. Promote the standby; connects retry until one finds it. */
    pgt_child_t promote;
    pgt_script_spawn(&loop, &promote, "pg-replica.sh", "promote", pair.standby, NULL);
    finder_t fd;
    memset(&fd, 0, sizeof fd);
    fd.loop = &loop;
    fd.ci = ci;
    uv_timer_init(&loop, &fd.retry);
    fd.retry.data = &fd;
    uv_timer_start(&fd.retry, find_attempt, 0, 0);
    deadline = now_ms() + (RUNNING_ON_VALGRIND ? 120000 : 30000);
    while ((!fd.checked || !promote.exited || fd.conn != NULL) && now_ms() < deadline &&
           fd.attempts <= MAX_ATTEMPTS)
        uv_run(&loop, UV_RUN_ONCE);
    if (!fd.found)
        fail_msg("no read-write server found %" PRIu64 " ms after the promote (%d attempts)",
                 now_ms() - promote.started_ms, fd.attempts);
    assert_true(fd.checked);
    assert_int_equal(promote.status, 0);
    assert_false(fd.in_recovery);
    assert_int_equal(fd.port, standby_port);
    assert_true(fd.wrote);
    print_message("failover: new primary found by a read-write connect %" PRIu64
                  " ms after the promote was issued (pg_ctl promote itself: %" PRIu64
                  " ms), %" PRIu64 " ms after the old primary was gone, %" PRIu64
                  " ms after its stop began; %d attempts (%d found no read-write server, %d "
                  "other failures)\n",
                  fd.found_at - promote.started_ms, promote.ended_ms - promote.started_ms,
                  fd.found_at - lost_at, fd.found_at - stop.started_ms, fd.attempts,
                  fd.failures_target, fd.failures_other);
    uv_close((uv_handle_t *)&fd.retry, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failover),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
