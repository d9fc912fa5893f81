/*
 * RELIABILITY case 16: the library never kills its host process. The server
 * closes the connection (pg_terminate_backend) while the client is not
 * looking, and the client's next request writes to the dead socket, on a
 * unix socket and on TCP, through the blocking client and the async
 * connection, with SIGPIPE at its default disposition (which kills the
 * process on a write to a closed socket unless the library prevents it).
 * The request must fail with the connection-lost error and the process must
 * survive, with SIGPIPE's disposition and mask untouched.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "pgtest.h"
#include "pgwire/client.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#include "test_conn_signals.h"

/* Large enough that a write to a TCP socket whose peer is gone takes more
 * than one system call: the first is answered with a reset, the next one
 * fails with EPIPE (and raises SIGPIPE unless suppressed). */
#define BIG_PARAM (4u * 1024u * 1024u)

static char *big_text(void)
{
    char *s = malloc(BIG_PARAM + 1);
    assert_non_null(s);
    memset(s, 'p', BIG_PARAM);
    s[BIG_PARAM] = 0;
    return s;
}

static char *conninfo(char *buf, size_t n, int tcp)
{
    return tcp ? pgt_conninfo_tcp(buf, n, pgt_env_required("PGUSER"), NULL, NULL)
               : pgt_conninfo(buf, n, NULL);
}

/* Terminate the backend pid from a separate connection. */
static void terminate_backend(int32_t pid)
{
    char ci[512];
    pgw_client_t *k;
    assert_int_equal(pgw_client_connect(&k, pgt_conninfo(ci, sizeof(ci), NULL), NULL), 0);
    pgw_param_t p[] = {pgw_int4(pid)};
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(k, "SELECT pg_terminate_backend($1)", p, 1, &res), 0);
    bool ok = false;
    assert_int_equal(pgw_result_bool(res, 0, 0, &ok), 0);
    assert_true(ok);
    pgw_result_free(res);
    pgw_client_close(k);
}

/* Wait (without reading) until the server has closed its end of fd. */
static void wait_peer_closed(int fd)
{
    assert_true(fd >= 0);
    for (int i = 0; i < 500; i++) {
        struct pollfd p = {fd, POLLRDHUP, 0};
        if (poll(&p, 1, 10) == 1 && (p.revents & (POLLRDHUP | POLLHUP))) return;
    }
    fail_msg("the server did not close the connection");
}

/* The status of a request that hit the dead connection: the connection-lost
 * error, or (when the server's FATAL 57P01 was still unread in the socket
 * and became the answer to the request at the head of the queue) that
 * error as PGW_ESERVER. */
static void assert_lost(int status, const char *sqlstate)
{
    if (status == PGW_ESERVER) {
        assert_non_null(sqlstate);
        assert_string_equal(sqlstate, "57P01");
        return;
    }
    assert_int_equal(status, PGW_ECONNLOST);
}

/* ---------------------------------------------------------------- blocking */

static void run_blocking(int tcp)
{
    char ci[512];
    pgt_require_server();
    assert_sigpipe_default();
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, conninfo(ci, sizeof(ci), tcp), NULL), 0);
    int32_t pid;
    assert_int_equal(pgw_session_backend_key(pgw_client_session(c), &pid, NULL, NULL), 0);
    terminate_backend(pid);
    wait_peer_closed(pgw_conn_fd(pgw_client_conn(c)));

    char *big = big_text();
    pgw_param_t p[] = {pgw_text(big)};
    pgw_result_t *res = NULL;
    int rc = pgw_client_query(c, "SELECT length($1)", p, 1, &res);
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    assert_lost(rc, e ? e->sqlstate : NULL);
    pgw_result_free(res);
    /* The connection is known to be broken now. */
    assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), PGW_ECLOSED);
    assert_null(res);
    assert_int_equal(pgw_client_query(c, "SELECT length($1)", p, 1, NULL), PGW_ECLOSED);
    free(big);
    pgw_client_close(c);
    assert_sigpipe_default();
}

static void test_blocking_unix(void **state)
{
    run_blocking(0);
}

static void test_blocking_tcp(void **state)
{
    run_blocking(1);
}

/* ------------------------------------------------------------------- async */

typedef struct async_ctx {
    int connected;
    int connect_status;
    int lost;
    int lost_err;
    int closed;
    int calls[3];
    int status[3];
    char sqlstate[3][6];
} async_ctx_t;

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    async_ctx_t *x = ud;
    x->connected++;
    x->connect_status = status;
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    async_ctx_t *x = pgw_conn_userdata(conn);
    x->lost++;
    x->lost_err = err;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ((async_ctx_t *)ud)->closed++;
}

typedef struct req_ref {
    async_ctx_t *x;
    int i;
} req_ref_t;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    req_ref_t *r = ud;
    r->x->calls[r->i]++;
    r->x->status[r->i] = status;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate)
        snprintf(r->x->sqlstate[r->i], sizeof(r->x->sqlstate[r->i]), "%s", e->sqlstate);
    pgw_result_free(res);
}

static void run_until(uv_loop_t *loop, const int *flag)
{
    uint64_t t0 = uv_hrtime();
    while (!*flag && uv_hrtime() - t0 < 10000000000ull)
        uv_run(loop, UV_RUN_ONCE);
    assert_true(*flag);
}

static void run_async(int tcp)
{
    char ci[512];
    pgt_require_server();
    assert_sigpipe_default();
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    async_ctx_t x;
    memset(&x, 0, sizeof(x));
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.on_lost = on_lost;
    cfg.ud = &x;
    pgw_conn_t *conn;
    assert_int_equal(pgw_conn_new(&conn, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(conn, conninfo(ci, sizeof(ci), tcp), on_connect, &x), 0);
    run_until(&loop, &x.connected);
    assert_int_equal(x.connect_status, 0);
    int32_t pid;
    assert_int_equal(pgw_session_backend_key(pgw_conn_session(conn), &pid, NULL, NULL), 0);
    terminate_backend(pid); /* on another loop: this one does not read meanwhile */
    wait_peer_closed(pgw_conn_fd(conn));

    /* A small request, then a large one that passes the write threshold
     * and is written at once, from inside pgw_conn_query: the write fails
     * there, yet no callback runs inside the call that accepted it. */
    char *big = big_text();
    pgw_param_t p[] = {pgw_text(big)};
    req_ref_t r[3] = {{&x, 0}, {&x, 1}, {&x, 2}};
    assert_int_equal(pgw_conn_query(conn, "SELECT 2", NULL, 0, on_req, &r[0]), 0);
    assert_int_equal(pgw_conn_query(conn, "SELECT length($1)", p, 1, on_req, &r[1]), 0);
    assert_int_equal(x.calls[0] + x.calls[1], 0);
    run_until(&loop, &x.calls[1]);
    assert_int_equal(x.calls[0], 1);
    assert_lost(x.status[0], x.sqlstate[0]);
    assert_int_equal(x.calls[1], 1);
    assert_int_equal(x.status[1], PGW_ECONNLOST);
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    assert_int_equal(pgw_conn_query(conn, "SELECT 3", NULL, 0, on_req, &r[2]), PGW_ECLOSED);
    assert_int_equal(x.calls[2], 0);
    free(big);
    assert_int_equal(pgw_conn_close(conn, on_closed, &x), 0);
    run_until(&loop, &x.closed);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_sigpipe_default();
}

static void test_async_unix(void **state)
{
    run_async(0);
}

static void test_async_tcp(void **state)
{
    run_async(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_blocking_unix, setup_sigpipe_default),
        cmocka_unit_test_setup(test_blocking_tcp, setup_sigpipe_default),
        cmocka_unit_test_setup(test_async_unix, setup_sigpipe_default),
        cmocka_unit_test_setup(test_async_tcp, setup_sigpipe_default),
    };
    /* PGW_TEST_FILTER=test_async_tcp runs one scenario (each one that
     * fails kills the process). */
    if (getenv("PGW_TEST_FILTER")) cmocka_set_test_filter(getenv("PGW_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
