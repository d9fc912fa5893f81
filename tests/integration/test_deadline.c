/*
 * Request deadlines against the real server (conn.h, DEADLINES): a timed-out
 * query is cancelled and the connection runs the next one; the default
 * timeout and its per-request overrides; a request timing out behind
 * another; batches; a server that cannot answer the cancel (its backend
 * stopped with SIGSTOP) makes the connection close within the grace
 * period; the blocking client; the dead-peer TCP defaults.
 *
 * Timing is asserted as pgtime.h says: a deadline fires no earlier than it
 * is due and long before the work it cuts short (DL_WORK_SQL, 30 s) would
 * have ended on its own; never within a tight bound.
 */
#define _DEFAULT_SOURCE /* TCP_KEEPINTVL and friends, kill */
#include "deadline_conn.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>

#include <cmocka.h>

typedef dl_conn_t dl_env_t;

static void spin(dl_env_t *x, const int *flag, unsigned limit_ms)
{
    dl_spin(x, flag, limit_ms);
}

/* A connection over TCP to the test server with these config values. */
static void env_open(dl_env_t *x, uint32_t default_ms, uint32_t grace_ms, const char *extra)
{
    char ci[768];
    pgt_conninfo_tcp(ci, sizeof ci, pgt_env_required("PGUSER"), NULL, extra);
    dl_open(x, NULL, ci, default_ms, grace_ms);
}

static int submit_sql(dl_env_t *x, const char *sql, uint32_t timeout_ms, outcome_t *o)
{
    pgw_request_t r = PGW_QUERY(sql, NULL, 0, record, o);
    r.timeout_ms = timeout_ms;
    return pgw_conn_submit(x->conn, &r);
}

/* The connection still answers: SELECT 7 gives 7. */
static void assert_usable(dl_env_t *x)
{
    outcome_t o = {0};
    assert_int_equal(submit_sql(x, "SELECT 7", 0, &o), 0);
    spin(x, &o.calls, DL_WAIT_MS);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.value, 7);
}

/* The acceptance case: 200 ms on DL_WORK_SQL fails by its deadline, long
 * before the sleep would have ended, with the server's 57014 kept, and the
 * connection goes on. */
static void test_timeout_cancels_and_connection_goes_on(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 0, 0, NULL);
    outcome_t o = {0};
    uint64_t t0 = uv_hrtime();
    assert_int_equal(submit_sql(&x, DL_WORK_SQL, 200, &o), 0);
    spin(&x, &o.calls, DL_WAIT_MS);
    assert_int_equal(o.calls, 1);
    assert_int_equal(o.status, PGW_ETIMEDOUT);
    assert_true(o.had_res);
    assert_string_equal(o.sqlstate, "57014");
    pgt_assert_in_time("200 ms deadline", pgt_ms_between(t0, o.at_ns), 195, DL_WORK_MS);
    assert_usable(&x);
    assert_int_equal(o.calls, 1); /* exactly once */
    assert_int_equal(x.lost, 0);
    dl_close(&x);
}

/* The config's default applies to timeout_ms 0; PGW_TIMEOUT_NONE and a
 * request's own value override it. */
static void test_default_timeout_and_overrides(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 150, 0, NULL);
    outcome_t dflt = {0}, none = {0}, own = {0};
    uint64_t t0 = uv_hrtime();
    assert_int_equal(submit_sql(&x, DL_WORK_SQL, 0, &dflt), 0);
    spin(&x, &dflt.calls, DL_WAIT_MS);
    assert_int_equal(dflt.status, PGW_ETIMEDOUT);
    pgt_assert_in_time("default 150 ms deadline", pgt_ms_between(t0, dflt.at_ns), 145, DL_WORK_MS);

    assert_int_equal(submit_sql(&x, "SELECT 1 FROM pg_sleep(0.4)", PGW_TIMEOUT_NONE, &none), 0);
    spin(&x, &none.calls, DL_WAIT_MS);
    assert_int_equal(none.status, 0);
    assert_int_equal(none.value, 1);

    /* 0.3 s outlasts the default; the request's own 10 s does not, however
     * loaded the machine. */
    assert_int_equal(submit_sql(&x, "SELECT 2 FROM pg_sleep(0.3)", 10000, &own), 0);
    spin(&x, &own.calls, DL_WAIT_MS);
    assert_int_equal(own.status, 0);
    assert_int_equal(own.value, 2);
    assert_usable(&x);
    dl_close(&x);
}

/* A request that times out while queued behind a slower one completes at
 * once, without interrupting the one running; the server still gets a
 * cancel for it when it starts, so the request after it is not held up by
 * its DL_WORK_SQL. */
static void test_timeout_while_queued(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 0, 0, NULL);
    outcome_t slow = {0}, queued = {0}, after = {0};
    uint64_t t0 = uv_hrtime();
    /* 3 s: the queued one's deadline comes first even on a loaded machine */
    assert_int_equal(submit_sql(&x, "SELECT 5 FROM pg_sleep(3)", 0, &slow), 0);
    assert_int_equal(submit_sql(&x, "SELECT 6 FROM pg_sleep(30)", 150, &queued), 0);
    assert_int_equal(submit_sql(&x, "SELECT 8", 0, &after), 0);
    spin(&x, &queued.calls, DL_WAIT_MS);
    assert_int_equal(queued.status, PGW_ETIMEDOUT);
    assert_false(queued.had_res);
    /* still running, not cancelled: the deadline fired before the slow one
     * ended (the order the callbacks ran in, not a clock, says so) */
    assert_int_equal(slow.calls, 0);
    pgt_assert_in_time("queued request's 150 ms deadline", pgt_ms_between(t0, queued.at_ns), 145,
                       DL_WORK_MS);
    spin(&x, &after.calls, DL_WAIT_MS);
    assert_int_equal(slow.status, 0);
    assert_int_equal(slow.value, 5);
    assert_int_equal(after.status, 0);
    assert_int_equal(after.value, 8);
    /* the pg_sleep(30) was cancelled: the request after it did not wait */
    pgt_assert_in_time("the request after it", pgt_ms_between(t0, after.at_ns), 3000, DL_WORK_MS);
    assert_int_equal(queued.calls, 1);
    dl_close(&x);
}

/* In a batch, the member that times out fails with PGW_ETIMEDOUT, the rest
 * of its group is aborted, and the batch reports PGW_ETIMEDOUT. */
static void test_timeout_in_batch(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 0, 0, NULL);
    outcome_t o[3] = {{0}}, done = {0};
    pgw_request_t b[3] = {
        PGW_QUERY("SELECT 1", NULL, 0, record, &o[0]),
        PGW_QUERY(DL_WORK_SQL, NULL, 0, record, &o[1]),
        PGW_QUERY("SELECT 3", NULL, 0, record, &o[2]),
    };
    b[1].timeout_ms = 200;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_submit_batch(x.conn, b, 3, 0, record, &done), 0);
    spin(&x, &done.calls, DL_WAIT_MS);
    assert_int_equal(o[0].status, 0);
    assert_int_equal(o[1].status, PGW_ETIMEDOUT);
    assert_string_equal(o[1].sqlstate, "57014");
    assert_int_equal(o[2].status, PGW_EABORTED);
    assert_int_equal(done.status, PGW_ETIMEDOUT);
    pgt_assert_in_time("batch member's 200 ms deadline", pgt_ms_between(t0, done.at_ns), 195,
                       DL_WORK_MS);
    assert_usable(&x);
    dl_close(&x);
}

/* A backend that cannot answer (stopped): the cancel reaches the
 * postmaster, nothing comes back, and the connection is closed when the
 * grace period ends: the timed-out request gets PGW_ETIMEDOUT, the one
 * behind it PGW_ECONNLOST. */
static void test_timeout_server_stuck_closes(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 0, 300, NULL);
    int32_t pid = pgw_conn_backend_pid(x.conn);
    assert_true(pid > 0);
    if (kill(pid, SIGSTOP) != 0) {
        print_message("cannot stop the backend (%s): skipped\n", strerror(errno));
        dl_close(&x);
        skip();
    }
    outcome_t timed = {0}, other = {0};
    uint64_t t0 = uv_hrtime();
    assert_int_equal(submit_sql(&x, "SELECT 1", 200, &timed), 0);
    assert_int_equal(submit_sql(&x, "SELECT 2", 0, &other), 0);
    spin(&x, &other.calls, DL_WAIT_MS);
    kill(pid, SIGCONT);
    assert_int_equal(timed.calls, 1);
    assert_int_equal(timed.status, PGW_ETIMEDOUT);
    assert_int_equal(other.status, PGW_ECONNLOST);
    /* a stopped backend never answers: only the deadline ends the wait */
    pgt_assert_in_time("stuck server closed (deadline 200 + grace 300)",
                       pgt_ms_between(t0, timed.at_ns), 495, PGT_WORK_ENDLESS);
    assert_int_equal(x.lost, 1);
    assert_non_null(strstr(pgw_conn_error_message(x.conn), "timed out"));
    assert_int_equal(submit_sql(&x, "SELECT 3", 0, &other), PGW_ECLOSED);
    dl_close(&x);
}

/* The blocking client honours timeout_ms, and runs the next query. */
static void test_blocking_client_timeout(void **state)
{
    pgt_require_server();
    char ci[768];
    pgt_conninfo(ci, sizeof ci, NULL);
    pgw_client_t *db;
    assert_int_equal(pgw_client_connect(&db, ci, NULL), 0);
    pgw_request_t r = PGW_QUERY(DL_WORK_SQL, NULL, 0, NULL, NULL);
    r.timeout_ms = 200;
    pgw_result_t *res = NULL;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_client_run(db, &r, &res), PGW_ETIMEDOUT);
    pgt_assert_in_time("blocking client's 200 ms deadline", pgt_ms_since(t0), 195, DL_WORK_MS);
    assert_non_null(res);
    assert_string_equal(pgw_result_error(res)->sqlstate, "57014");
    pgw_result_free(res);
    r = PGW_QUERY("SELECT 9", NULL, 0, NULL, NULL);
    r.timeout_ms = 10000;
    assert_int_equal(pgw_client_run(db, &r, &res), 0);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 9);
    pgw_result_free(res);
    pgw_client_close(db);
}

/* A pipeline of many requests with deadlines that do not pass: all succeed
 * (the deadline heap is pruned as they complete). */
static void test_pipeline_with_deadlines(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 60000, 0, NULL);
    enum { N = 3000 };
    static outcome_t o[N];
    memset(o, 0, sizeof o);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            assert_int_equal(submit_sql(&x, "SELECT 7", i % 3 ? 0 : 60000 + (uint32_t)i, &o[i]), 0);
        outcome_t last = {0};
        assert_int_equal(submit_sql(&x, "SELECT 7", 0, &last), 0);
        spin(&x, &last.calls, 120000);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(o[i].calls, 2);
        assert_int_equal(o[i].status, 0);
    }
    dl_close(&x);
}

static int tcp_opt(int fd, int opt)
{
    int v = -1;
    socklen_t len = sizeof v;
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, opt, &v, &len), 0);
    return v;
}

/* Without options in the connection string, a TCP connection gets the
 * dead-peer defaults; options given win (0: the kernel's default). */
static void test_dead_peer_tcp_defaults(void **state)
{
    pgt_require_server();
    dl_env_t x;
    env_open(&x, 0, 0, NULL);
    int fd = pgw_conn_fd(x.conn);
    assert_true(fd >= 0);
    assert_int_equal(tcp_opt(fd, TCP_USER_TIMEOUT), 30000);
    assert_int_equal(tcp_opt(fd, TCP_KEEPIDLE), 15);
    assert_int_equal(tcp_opt(fd, TCP_KEEPINTVL), 5);
    assert_int_equal(tcp_opt(fd, TCP_KEEPCNT), 3);
    dl_close(&x);
    env_open(&x, 0, 0, "tcp_user_timeout=0 keepalives_idle=60");
    fd = pgw_conn_fd(x.conn);
    assert_int_equal(tcp_opt(fd, TCP_USER_TIMEOUT), 0);
    assert_int_equal(tcp_opt(fd, TCP_KEEPIDLE), 60);
    dl_close(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeout_cancels_and_connection_goes_on),
        cmocka_unit_test(test_default_timeout_and_overrides),
        cmocka_unit_test(test_timeout_while_queued),
        cmocka_unit_test(test_timeout_in_batch),
        cmocka_unit_test(test_timeout_server_stuck_closes),
        cmocka_unit_test(test_blocking_client_timeout),
        cmocka_unit_test(test_pipeline_with_deadlines),
        cmocka_unit_test(test_dead_peer_tcp_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
