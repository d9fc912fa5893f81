/*
 * The libuv connection against the throwaway cluster: unix socket and TCP,
 * SCRAM/MD5/cleartext logins, host lists, target_session_attrs, one write
 * per loop turn, pipelining, batches, prepared statements, connection
 * loss, close in every state, cancel, per-request timing.
 */
#define _DEFAULT_SOURCE /* TCP_KEEPINTVL and friends */
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>
#include <valgrind/valgrind.h>

#define MAXREQ 256

typedef struct req_rec {
    int calls;
    int status;
    int32_t value;
    char sqlstate[6];
    uint64_t done_ns;
    uint64_t t_queued, t_first, t_done; /* pgw_result_timing */
} req_rec_t;

typedef struct cancel_rec {
    int calls;
    int status;
} cancel_rec_t;

typedef struct ctx {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected;
    int connect_status;
    char connect_msg[256];
    int lost;
    int lost_err;
    int closed;
    req_rec_t req[MAXREQ];
    cancel_rec_t cancel;
} ctx_t;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    req_rec_t *r = ud;
    r->calls++;
    r->status = status;
    r->done_ns = uv_hrtime();
    pgw_result_timing(res, &r->t_queued, &r->t_first, &r->t_done);
    if (res && status == 0 && pgw_result_nrows(res) > 0) pgw_result_int4(res, 0, 0, &r->value);
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate) snprintf(r->sqlstate, sizeof(r->sqlstate), "%s", e->sqlstate);
    pgw_result_free(res);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    ctx_t *x = ud;
    x->connected++;
    x->connect_status = status;
    if (err && err->message) snprintf(x->connect_msg, sizeof(x->connect_msg), "%s", err->message);
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    ctx_t *x = ud;
    x->lost++;
    x->lost_err = err;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ctx_t *x = ud;
    x->closed++;
}

static void on_deadline(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run loop until *flag >= want, or ms milliseconds passed. */
static void run_until_n(uv_loop_t *loop, const int *flag, int want, unsigned ms)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_deadline, ms, 0);
    while (*flag < want && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    assert_true(*flag >= want);
}

static void run_until(ctx_t *x, const int *flag)
{
    run_until_n(pgw_conn_loop(x->conn), flag, 1, 60000);
}

/* A connection with cfg's options (NULL: the defaults) and the test's
 * on_lost. */
static void ctx_new_with(ctx_t *x, uv_loop_t *shared, const pgw_conn_config_t *given)
{
    memset(x, 0, sizeof(*x));
    if (!shared) assert_int_equal(uv_loop_init(&x->loop), 0);
    pgw_conn_config_t cfg;
    if (given)
        cfg = *given;
    else
        memset(&cfg, 0, sizeof(cfg));
    cfg.on_lost = on_lost;
    cfg.ud = x;
    assert_int_equal(pgw_conn_new(&x->conn, shared ? shared : &x->loop, &cfg), 0);
}

static void ctx_new(ctx_t *x, uv_loop_t *shared)
{
    ctx_new_with(x, shared, NULL);
}

static int ctx_connect(ctx_t *x, const char *conninfo)
{
    assert_int_equal(pgw_conn_connect(x->conn, conninfo, on_connect, x), 0);
    run_until_n(pgw_conn_loop(x->conn), &x->connected, 1, 20000);
    assert_int_equal(x->connected, 1);
    return x->connect_status;
}

static void ctx_close(ctx_t *x)
{
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), 0);
    run_until_n(pgw_conn_loop(x->conn), &x->closed, 1, 60000);
    assert_int_equal(x->closed, 1);
}

static void ctx_free_loop(ctx_t *x)
{
    assert_int_equal(uv_run(&x->loop, UV_RUN_NOWAIT), 0);
    assert_int_equal(uv_loop_close(&x->loop), 0);
}

/* Connect, run SELECT 41 + 1, close. */
static void connect_and_query(const char *conninfo, const char *want_method)
{
    ctx_t x;
    ctx_new(&x, NULL);
    int rc = ctx_connect(&x, conninfo);
    if (rc != 0) fail_msg("connect %s: %s %s", conninfo, pgw_err_name(rc), x.connect_msg);
    if (want_method)
        assert_string_equal(pgw_session_auth_method(pgw_conn_session(x.conn)), want_method);
    pgw_param_t p[] = {pgw_int4(41)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $1::int4 + 1", p, 1, on_req, &x.req[0]), 0);
    run_until(&x, &x.req[0].calls);
    assert_int_equal(x.req[0].status, 0);
    assert_int_equal(x.req[0].value, 42);
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* ------------------------------------------------------------- connecting */

static void test_unix_socket(void **state)
{
    char ci[512];
    pgt_require_server();
    connect_and_query(pgt_conninfo(ci, sizeof(ci), NULL), NULL);
}

static void test_tcp(void **state)
{
    char ci[512];
    pgt_require_server();
    connect_and_query(pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, NULL),
                      NULL);
    /* A name, resolved with uv_getaddrinfo (when it also lists ::1 first,
     * that address is refused and the next one is tried). */
    snprintf(ci, sizeof(ci), "host=localhost port=%s user=%s dbname=%s", pgt_env_required("PGPORT"),
             pgt_env_required("PGUSER"), pgt_env_required("PGDATABASE"));
    connect_and_query(ci, NULL);
}

static int sockopt_int(int fd, int opt)
{
    int v = -1;
    socklen_t len = sizeof v;
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, opt, &v, &len), 0);
    return v;
}

/* x connected over TCP with the extra keywords (NULL: none) under cfg
 * (NULL: the defaults); its socket, with TCP_NODELAY and SO_KEEPALIVE on. */
static int connect_tcp_socket(ctx_t *x, const pgw_conn_config_t *cfg, const char *extra)
{
    char ci[512];
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, extra);
    ctx_new_with(x, NULL, cfg);
    int rc = ctx_connect(x, ci);
    if (rc != 0) fail_msg("connect %s: %s %s", ci, pgw_err_name(rc), x->connect_msg);
    int fd = pgw_conn_fd(x->conn);
    assert_true(fd >= 0);
    int on = 0;
    socklen_t len = sizeof on;
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, &len), 0);
    assert_int_equal(on, 1);
    assert_int_equal(sockopt_int(fd, TCP_NODELAY), 1);
    return fd;
}

static void close_tcp(ctx_t *x)
{
    ctx_close(x);
    ctx_free_loop(x);
}

/* libpq's keepalive and timeout options reach the TCP socket. */
static void test_tcp_keepalive_options(void **state)
{
    pgt_require_server();
    ctx_t x;
    int fd = connect_tcp_socket(&x, NULL,
                                "keepalives=1 keepalives_idle=7 keepalives_interval=3 "
                                "keepalives_count=4 tcp_user_timeout=9000");
    assert_int_equal(sockopt_int(fd, TCP_KEEPIDLE), 7);
    assert_int_equal(sockopt_int(fd, TCP_KEEPINTVL), 3);
    assert_int_equal(sockopt_int(fd, TCP_KEEPCNT), 4);
    assert_int_equal(sockopt_int(fd, TCP_USER_TIMEOUT), 9000);
    close_tcp(&x);
}

/* kernel_tcp_defaults: the options a connection string leaves unset keep
 * the values a new socket has (the kernel's, as libpq leaves them), not the
 * dead-peer defaults; SO_KEEPALIVE is still on, and options given win. */
static void test_tcp_kernel_defaults(void **state)
{
    pgt_require_server();
    int fresh = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fresh >= 0);
    int kidle = sockopt_int(fresh, TCP_KEEPIDLE), kintvl = sockopt_int(fresh, TCP_KEEPINTVL);
    int kcnt = sockopt_int(fresh, TCP_KEEPCNT), kuser = sockopt_int(fresh, TCP_USER_TIMEOUT);
    close(fresh);
    /* else the test could not tell the two apart */
    assert_int_not_equal(kidle, 15);
    assert_int_not_equal(kuser, 30000);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.kernel_tcp_defaults = 1;
    static const char *const extras[] = {NULL, "keepalives_idle=7 tcp_user_timeout=9000"};
    for (size_t i = 0; i < 2; i++) {
        ctx_t x;
        int fd = connect_tcp_socket(&x, &cfg, extras[i]);
        assert_int_equal(sockopt_int(fd, TCP_KEEPIDLE), i ? 7 : kidle);
        assert_int_equal(sockopt_int(fd, TCP_KEEPINTVL), kintvl);
        assert_int_equal(sockopt_int(fd, TCP_KEEPCNT), kcnt);
        assert_int_equal(sockopt_int(fd, TCP_USER_TIMEOUT), i ? 9000 : kuser);
        close_tcp(&x);
    }
}

static void test_auth_methods(void **state)
{
    static const char *const roles[][2] = {
        {"PGW_TEST_SCRAM_USER", "PGW_TEST_SCRAM_PASSWORD"},
        {"PGW_TEST_MD5_USER", "PGW_TEST_MD5_PASSWORD"},
        {"PGW_TEST_CLEAR_USER", "PGW_TEST_CLEAR_PASSWORD"},
    };
    /* Over TCP the default sslmode=prefer runs TLS, and SCRAM then binds
     * to the channel (channel_binding=prefer), as libpq does; without TLS
     * it is plain SCRAM-SHA-256. */
    static const char *const methods[] = {"SCRAM-SHA-256-PLUS", "md5", "password"};
    char ci[512];
    pgt_require_server();
    for (size_t i = 0; i < 3; i++) {
        pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required(roles[i][0]),
                         pgt_env_required(roles[i][1]), NULL);
        connect_and_query(ci, methods[i]);
    }
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required(roles[0][0]), pgt_env_required(roles[0][1]),
                     "sslmode=disable");
    connect_and_query(ci, "SCRAM-SHA-256");
    /* A wrong password is refused: PGW_ESERVER (28P01) or PGW_EAUTH. */
    ctx_t x;
    ctx_new(&x, NULL);
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGW_TEST_SCRAM_USER"), "wrong", NULL);
    int rc = ctx_connect(&x, ci);
    assert_true(rc == PGW_ESERVER || rc == PGW_EAUTH);
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* A port on 127.0.0.1 that refuses connections. */
static unsigned dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

static void test_host_list_first_dead(void **state)
{
    char ci[512];
    pgt_require_server();
    snprintf(ci, sizeof(ci), "host=127.0.0.1,%s port=%u,%s user=%s dbname=%s connect_timeout=5",
             pgt_env_required("PGHOST"), dead_port(), pgt_env_required("PGPORT"),
             pgt_env_required("PGUSER"), pgt_env_required("PGDATABASE"));
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, ci), 0);
    assert_string_equal(pgw_conn_host(x.conn), pgt_env_required("PGHOST"));
    assert_string_equal(pgw_conn_port(x.conn), pgt_env_required("PGPORT"));
    ctx_close(&x);
    ctx_free_loop(&x);

    /* Every host refused: that cause, passed through from connect(). */
    snprintf(ci, sizeof(ci), "host=127.0.0.1,127.0.0.1 port=%u,%u user=x dbname=x", dead_port(),
             dead_port());
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, ci), UV_ECONNREFUSED);
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(x.conn, &n);
    assert_int_equal(n, 2);
    assert_int_equal(a[0].status, UV_ECONNREFUSED);
    assert_int_equal(a[1].status, UV_ECONNREFUSED);
    ctx_close(&x);
    ctx_free_loop(&x);
}

static void test_target_session_attrs(void **state)
{
    static const char *const ok[] = {"any", "read-write", "primary", "prefer-standby"};
    static const char *const refused[] = {"standby", "read-only"};
    char ci[512], extra[64];
    pgt_require_server();
    for (size_t i = 0; i < 4; i++) {
        ctx_t x;
        snprintf(extra, sizeof(extra), "target_session_attrs=%s", ok[i]);
        ctx_new(&x, NULL);
        assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), extra)), 0);
        ctx_close(&x);
        ctx_free_loop(&x);
    }
    for (size_t i = 0; i < 2; i++) {
        ctx_t x;
        snprintf(extra, sizeof(extra), "target_session_attrs=%s", refused[i]);
        ctx_new(&x, NULL);
        assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), extra)), PGW_ETARGET);
        ctx_close(&x);
        ctx_free_loop(&x);
    }
}

/* Connect with extra options over TCP and report whether TLS is in use. */
static int tcp_tls_in_use(const char *extra, pgw_tls_info_t *info_out)
{
    char ci[512];
    ctx_t x;
    ctx_new(&x, NULL);
    int rc =
        ctx_connect(&x, pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, extra));
    if (rc != 0) fail_msg("%s: %s %s", extra, pgw_err_name(rc), pgw_conn_error_message(x.conn));
    pgw_tls_info_t info;
    assert_int_equal(pgw_conn_tls_info(x.conn, &info), 0);
    if (info_out) {
        *info_out = info;
        info_out->protocol = info.protocol ? "set" : NULL; /* the strings die with x */
    }
    ctx_close(&x);
    ctx_free_loop(&x);
    return info.in_use;
}

static void test_tls_modes(void **state)
{
    char ci[512];
    pgt_require_server();
    /* The modes that start with TLS use it; disable and allow do not. */
    pgw_tls_info_t info;
    assert_int_equal(tcp_tls_in_use("sslmode=require", &info), 1);
    assert_non_null(info.protocol);
    assert_int_equal(tcp_tls_in_use("sslmode=prefer", NULL), 1);
    assert_int_equal(tcp_tls_in_use("sslmode=allow", NULL), 0);
    assert_int_equal(tcp_tls_in_use("sslmode=disable", &info), 0);
    assert_null(info.protocol);

    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(pgw_conn_connect(x.conn, "host=/nonexistent bogus_option=1", on_connect, &x),
                     PGW_ECONNINFO);
    /* NULL handles (conn.h's convention) */
    memset(&info, 0xff, sizeof info);
    assert_int_equal(pgw_conn_tls_info(NULL, &info), PGW_EINVAL);
    assert_int_equal(info.in_use, 0);
    assert_null(info.cipher);
    assert_int_equal(pgw_conn_tls_info(x.conn, NULL), PGW_EINVAL);
    assert_null(pgw_conn_error_message(NULL));
    ctx_close(&x);
    assert_int_equal(x.connected, 0); /* a refused connect never calls back */
    ctx_free_loop(&x);

    /* libpq never uses TLS over a Unix socket, whatever sslmode says: the
     * same string connects there. */
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof(ci), "sslmode=require"), NULL),
                     0);
    pgw_client_close(c);
}

/* --------------------------------------------------------------- requests */

/* 100 queries issued in one loop turn reach the socket in one write and
 * come back with their own values. */
static void test_one_write_per_turn(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    pgw_conn_stats_t before, after;
    pgw_conn_stats(x.conn, &before);
    for (int i = 0; i < 100; i++) {
        pgw_param_t p[] = {pgw_int4(i * 7 + 3)};
        assert_int_equal(pgw_conn_query(x.conn, "SELECT $1::int4", p, 1, on_req, &x.req[i]), 0);
    }
    pgw_conn_stats(x.conn, &after);
    assert_int_equal(after.writes, before.writes); /* nothing written yet */
    run_until(&x, &x.req[99].calls);
    pgw_conn_stats(x.conn, &after);
    assert_int_equal(after.writes, before.writes + 1);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(x.req[i].calls, 1);
        assert_int_equal(x.req[i].status, 0);
        assert_int_equal(x.req[i].value, i * 7 + 3);
    }
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* Queued before connect completes: sent after startup. */
static void test_queue_before_connect(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &x.req[0]), PGW_EBUSY);
    assert_int_equal(pgw_conn_connect(x.conn, pgt_conninfo(ci, sizeof(ci), NULL), on_connect, &x),
                     0);
    assert_int_equal(pgw_conn_connect(x.conn, ci, on_connect, &x), PGW_EBUSY);
    for (int i = 0; i < 10; i++) {
        pgw_param_t p[] = {pgw_int4(i)};
        assert_int_equal(pgw_conn_query(x.conn, "SELECT $1::int4", p, 1, on_req, &x.req[i]), 0);
    }
    run_until(&x, &x.req[9].calls);
    assert_int_equal(x.connected, 1);
    assert_int_equal(x.connect_status, 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(x.req[i].status, 0);
        assert_int_equal(x.req[i].value, i);
    }
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* The connection of the timing test, for a callback that queues more. */
static ctx_t *timing_ctx;

static void on_req_queue_next(int status, pgw_result_t *res, void *ud)
{
    req_rec_t *r = ud;
    on_req(status, res, ud);
    assert_int_equal(pgw_conn_query(timing_ctx->conn, "SELECT 3", NULL, 0, on_req, r + 1), 0);
}

/* pgw_result_timing of two pipelined requests and one queued from the
 * second's callback: queued, first reply and completion in that order,
 * from the monotonic clock and no later than the callback; the one queued
 * from a callback no earlier than the read that ran it. All 0 with
 * no_timing. */
static void check_timing(int no_timing)
{
    char ci[512];
    pgt_require_server();
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.no_timing = no_timing;
    static ctx_t x;
    ctx_new_with(&x, NULL, &cfg);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    timing_ctx = &x;
    uint64_t before = uv_hrtime();
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &x.req[0]), 0);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 2", NULL, 0, on_req_queue_next, &x.req[1]), 0);
    run_until(&x, &x.req[2].calls);
    for (int i = 0; i < 3; i++) {
        const req_rec_t *r = &x.req[i];
        assert_int_equal(r->calls, 1);
        assert_int_equal(r->status, 0);
        assert_int_equal(r->value, i + 1);
        if (no_timing) {
            assert_int_equal(r->t_queued, 0);
            assert_int_equal(r->t_first, 0);
            assert_int_equal(r->t_done, 0);
            continue;
        }
        assert_true(r->t_queued >= before);
        assert_true(r->t_queued <= r->t_first);
        assert_true(r->t_first <= r->t_done);
        assert_true(r->t_done <= r->done_ns);
    }
    if (!no_timing) assert_true(x.req[2].t_queued >= x.req[1].t_first);
    ctx_close(&x);
    ctx_free_loop(&x);
}

static void test_request_timing(void **state)
{
    check_timing(0);
}

static void test_no_timing(void **state)
{
    check_timing(1);
}

static void on_batch_end(int status, pgw_result_t *res, void *ud)
{
    on_req(status, res, ud);
}

static void test_batch_one_sync(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    req_rec_t end = {0};
    pgw_request_t reqs[] = {
        PGW_QUERY("CREATE TEMP TABLE b1(v int4)", NULL, 0, on_req, &x.req[0]),
        PGW_QUERY("INSERT INTO b1 VALUES (1),(2),(3)", NULL, 0, on_req, &x.req[1]),
        PGW_QUERY("SELECT sum(v)::int4 FROM b1", NULL, 0, on_req, &x.req[2]),
        PGW_QUERY("SELECT 1/0", NULL, 0, on_req, &x.req[3]),
        PGW_QUERY("SELECT 5::int4", NULL, 0, on_req, &x.req[4]),
    };
    /* Replaces "a Simple Query inside an open batch is PGW_EBUSY": a SIMPLE
     * request inside a batch array is PGW_EINVAL with nothing queued, and
     * an empty batch is PGW_EINVAL. */
    pgw_request_t with_simple[] = {reqs[0], PGW_SIMPLE("SELECT 1", on_req, &x.req[9])};
    assert_int_equal(pgw_conn_submit_batch(x.conn, with_simple, 2, 0, on_batch_end, &end),
                     PGW_EINVAL);
    assert_int_equal(pgw_conn_submit_batch(x.conn, reqs, 0, 0, on_batch_end, &end), PGW_EINVAL);
    assert_int_equal(pgw_conn_submit_batch(x.conn, NULL, 1, 0, on_batch_end, &end), PGW_EINVAL);
    assert_int_equal(pgw_session_pending(pgw_conn_session(x.conn)), 0);
    assert_int_equal(pgw_conn_submit_batch(x.conn, reqs, 5, 0, on_batch_end, &end), 0);
    run_until(&x, &end.calls);
    assert_int_equal(x.req[9].calls, 0);
    assert_int_equal(end.calls, 1);
    assert_int_equal(x.req[0].status, 0);
    assert_int_equal(x.req[1].status, 0);
    assert_int_equal(x.req[2].status, 0);
    assert_int_equal(x.req[2].value, 6);
    assert_int_equal(x.req[3].status, PGW_ESERVER);
    assert_string_equal(x.req[3].sqlstate, "22012");
    assert_int_equal(x.req[4].status, PGW_EABORTED);
    assert_int_not_equal(end.status, 0);
    /* One transaction: the failure rolled back the table. */
    assert_int_equal(
        pgw_conn_query(x.conn, "SELECT count(*)::int4 FROM b1", NULL, 0, on_req, &x.req[5]), 0);
    run_until(&x, &x.req[5].calls);
    assert_int_equal(x.req[5].status, PGW_ESERVER);
    assert_string_equal(x.req[5].sqlstate, "42P01");
    for (int i = 0; i < 6; i++)
        assert_int_equal(x.req[i].calls, 1);
    ctx_close(&x);
    ctx_free_loop(&x);
}

static void test_prepared(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    assert_int_equal(
        pgw_conn_prepare(x.conn, "add1", "SELECT $1::int4 + 1", NULL, 1, on_req, &x.req[0]), 0);
    for (int i = 1; i <= 20; i++) {
        pgw_param_t p[] = {pgw_int4(i * 10)};
        assert_int_equal(pgw_conn_execute(x.conn, "add1", p, 1, on_req, &x.req[i]), 0);
    }
    pgw_request_t describe = PGW_DESCRIBE("add1", on_req, &x.req[21]);
    assert_int_equal(pgw_conn_submit(x.conn, &describe), 0);
    pgw_request_t close = PGW_CLOSE("add1", on_req, &x.req[22]);
    assert_int_equal(pgw_conn_submit(x.conn, &close), 0);
    pgw_param_t p[] = {pgw_int4(1)};
    assert_int_equal(pgw_conn_execute(x.conn, "add1", p, 1, on_req, &x.req[23]), 0);
    run_until(&x, &x.req[23].calls);
    assert_int_equal(x.req[0].status, 0);
    for (int i = 1; i <= 20; i++) {
        assert_int_equal(x.req[i].status, 0);
        assert_int_equal(x.req[i].value, i * 10 + 1);
    }
    assert_int_equal(x.req[21].status, 0);
    assert_int_equal(x.req[22].status, 0);
    assert_int_equal(x.req[23].status, PGW_ESERVER); /* 26000: no such statement */
    assert_string_equal(x.req[23].sqlstate, "26000");
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* ------------------------------------------------------------ loss, close */

static void test_terminate_backend(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t a, b;
    ctx_new(&a, NULL);
    ctx_new(&b, &a.loop);
    pgt_conninfo(ci, sizeof(ci), NULL);
    assert_int_equal(ctx_connect(&a, ci), 0);
    assert_int_equal(ctx_connect(&b, ci), 0);
    int32_t pid;
    assert_int_equal(pgw_session_backend_key(pgw_conn_session(a.conn), &pid, NULL, NULL), 0);
    /* 4 x 30 s of work: the loss, not the work, ends every request */
    assert_int_equal(pgw_conn_query(a.conn, "SELECT pg_sleep(30)", NULL, 0, on_req, &a.req[0]), 0);
    for (int i = 1; i < 200; i++) {
        pgw_param_t p[] = {pgw_int4(i)};
        assert_int_equal(
            pgw_conn_query(a.conn, i % 50 ? "SELECT $1::int4" : "SELECT pg_sleep(30), $1::int4", p,
                           1, on_req, &a.req[i]),
            0);
    }
    pgw_param_t kp[] = {pgw_int4(pid)};
    req_rec_t kill = {0};
    /* A's callbacks may run in the same loop turn as the kill's answer, so
     * the clock starts when the kill is issued. */
    uint64_t killed = uv_hrtime();
    assert_int_equal(
        pgw_conn_query(b.conn, "SELECT pg_terminate_backend($1)", kp, 1, on_req, &kill), 0);
    run_until(&b, &kill.calls);
    assert_int_equal(kill.status, 0);
    run_until(&a, &a.lost);
    assert_int_equal(a.lost, 1);
    assert_int_equal(a.lost_err, PGW_ECONNLOST);
    uint64_t last = 0;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(a.req[i].calls, 1);
        /* the running statement may get the server's FATAL 57P01 itself */
        if (i == 0 && a.req[i].status == PGW_ESERVER)
            assert_string_equal(a.req[i].sqlstate, "57P01");
        else
            assert_int_equal(a.req[i].status, PGW_ECONNLOST);
        if (a.req[i].done_ns > last) last = a.req[i].done_ns;
    }
    assert_true(last > killed);
    pgt_assert_in_time("every request failed after the kill", pgt_ms_between(killed, last), 0,
                       30000);
    assert_int_equal(pgw_conn_query(a.conn, "SELECT 1", NULL, 0, on_req, &a.req[200]), PGW_ECLOSED);
    uint64_t t0 = uv_hrtime();
    ctx_close(&a);
    /* nothing left to wait for: not the 30 s sleeps queued behind */
    pgt_assert_in_time("closing the lost connection", pgt_ms_since(t0), 0, 30000);
    for (int i = 0; i < 200; i++)
        assert_int_equal(a.req[i].calls, 1);
    ctx_close(&b);
    ctx_free_loop(&a);
}

static void test_close_in_flight(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT pg_sleep(0.3)", NULL, 0, on_req, &x.req[0]), 0);
    uv_run(&x.loop, UV_RUN_NOWAIT); /* let the write go out */
    for (int i = 1; i < 50; i++)
        assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &x.req[i]), 0);
    assert_int_equal(pgw_conn_close(x.conn, on_closed, &x), 0);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(x.req[i].calls, 1);
        assert_int_equal(x.req[i].status, PGW_ECANCELED);
    }
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &x.req[50]), PGW_ECLOSED);
    assert_int_equal(pgw_conn_close(x.conn, on_closed, &x), PGW_ECLOSED);
    run_until(&x, &x.closed);
    for (int i = 0; i < 50; i++)
        assert_int_equal(x.req[i].calls, 1);
    assert_int_equal(x.closed, 1);
    ctx_free_loop(&x);
}

/* Close while connecting: the connect callback reports PGW_ECANCELED. */
static void test_close_while_connecting(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(pgw_conn_connect(x.conn, pgt_conninfo(ci, sizeof(ci), NULL), on_connect, &x),
                     0);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &x.req[0]), 0);
    assert_int_equal(pgw_conn_close(x.conn, on_closed, &x), 0);
    assert_int_equal(x.connected, 1);
    assert_int_equal(x.connect_status, PGW_ECANCELED);
    assert_int_equal(x.req[0].calls, 1);
    assert_int_equal(x.req[0].status, PGW_ECANCELED);
    run_until(&x, &x.closed);
    ctx_free_loop(&x);
}

typedef struct close_from_cb {
    ctx_t *x;
    int calls;
    int status;
} close_from_cb_t;

static void on_req_close(int status, pgw_result_t *res, void *ud)
{
    close_from_cb_t *c = ud;
    c->calls++;
    c->status = status;
    pgw_result_free(res);
    assert_int_equal(pgw_conn_close(c->x->conn, on_closed, c->x), 0);
}

static void test_close_from_callback(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    close_from_cb_t c = {&x, 0, 0};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req_close, &c), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(pgw_conn_query(x.conn, "SELECT 2", NULL, 0, on_req, &x.req[i]), 0);
    run_until(&x, &x.closed);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.status, 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(x.req[i].calls, 1);
        assert_true(x.req[i].status == 0 || x.req[i].status == PGW_ECANCELED);
    }
    ctx_free_loop(&x);
}

/* ----------------------------------------------------------------- cancel */

static void on_cancel(pgw_conn_t *conn, int status, void *ud)
{
    cancel_rec_t *c = ud;
    c->calls++;
    c->status = status;
}

static void on_fire_cancel(uv_timer_t *t)
{
    ctx_t *x = t->data;
    assert_int_equal(pgw_conn_cancel(x->conn, on_cancel, &x->cancel), 0);
}

static void run_cancel(const char *conninfo)
{
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, conninfo), 0);
    cancel_rec_t *rec = &x.cancel;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_query(x.conn, "SELECT pg_sleep(30)", NULL, 0, on_req, &x.req[0]), 0);
    uv_timer_t t;
    uv_timer_init(&x.loop, &t);
    t.data = &x;
    uv_timer_start(&t, on_fire_cancel, 50, 0);
    run_until(&x, &x.req[0].calls);
    /* (no lower bound: the loop's clock, which the 50 ms count from, may be
     * older than t0) */
    pgt_assert_in_time("pg_sleep(30) cancelled after 50 ms", pgt_ms_between(t0, x.req[0].done_ns),
                       0, 30000);
    assert_int_equal(x.req[0].status, PGW_ESERVER);
    assert_string_equal(x.req[0].sqlstate, "57014");
    run_until(&x, &rec->calls);
    assert_int_equal(rec->status, 0);
    /* reusable at once */
    pgw_param_t p[] = {pgw_int4(5)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $1::int4", p, 1, on_req, &x.req[1]), 0);
    run_until(&x, &x.req[1].calls);
    assert_int_equal(x.req[1].status, 0);
    assert_int_equal(x.req[1].value, 5);
    uv_close((uv_handle_t *)&t, NULL);
    ctx_close(&x);
    ctx_free_loop(&x);
}

static void test_cancel(void **state)
{
    char ci[512];
    pgt_require_server();
    run_cancel(pgt_conninfo(ci, sizeof(ci), NULL));
    run_cancel(pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, NULL));
}

/* RELIABILITY case 10 (b), (c): a cancel racing with the end of a short
 * query never hits the query issued right after it; a cancel with nothing
 * running is harmless. */
static void test_cancel_race(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    /* (c) idle */
    assert_int_equal(pgw_conn_cancel(x.conn, on_cancel, &x.cancel), 0);
    run_until(&x, &x.cancel.calls);
    assert_int_equal(x.cancel.status, 0);
    int cancelled_first = 0;
    int rounds = RUNNING_ON_VALGRIND ? 200 : 1000; /* the case's 1,000 */
    for (int i = 0; i < rounds; i++) {
        req_rec_t first = {0}, second = {0};
        cancel_rec_t cr = {0, 0};
        /* the first query lasts 0 to 24 ms, around the time a cancel takes
         * to arrive, so the cancel lands before, during and after it */
        pgw_param_t d[] = {pgw_float8((i % 25) * 0.001)};
        assert_int_equal(pgw_conn_query(x.conn, "SELECT pg_sleep($1)", d, 1, on_req, &first), 0);
        uv_run(&x.loop, UV_RUN_NOWAIT); /* the first query is on the wire */
        assert_int_equal(pgw_conn_cancel(x.conn, on_cancel, &cr), 0);
        pgw_param_t p[] = {pgw_int4(i)};
        assert_int_equal(
            pgw_conn_query(x.conn, "SELECT $1::int4 FROM pg_sleep(0.005)", p, 1, on_req, &second),
            0);
        run_until(&x, &second.calls);
        run_until(&x, &cr.calls);
        assert_int_equal(first.calls, 1);
        assert_true(first.status == 0 || strcmp(first.sqlstate, "57014") == 0);
        cancelled_first += first.status != 0;
        if (second.status != 0)
            fail_msg("iteration %d: %s %s", i, pgw_err_name(second.status), second.sqlstate);
        assert_int_equal(second.value, i);
        assert_int_equal(cr.status, 0);
    }
    print_message("first query cancelled in %d of %d iterations\n", cancelled_first, rounds);
    ctx_close(&x);
    ctx_free_loop(&x);
}

static int null_row(const pgw_row_t *row, void *ud)
{
    return 0;
}

/* Parameter counts pass through unchanged: more than 65535 is refused with
 * PGW_EINVAL (no callback, nothing sent: it used to be narrowed to 16
 * bits) and the connection stays usable; 65535 reach the server.
 * (Depends on the session refusing counts above 65535.) */
static void test_param_count_limit(void **state)
{
    char ci[512];
    pgt_require_server();
    ctx_t x;
    ctx_new(&x, NULL);
    assert_int_equal(ctx_connect(&x, pgt_conninfo(ci, sizeof(ci), NULL)), 0);
    pgw_param_t *p = malloc(70000 * sizeof(*p));
    assert_non_null(p);
    for (int i = 0; i < 70000; i++)
        p[i] = pgw_int4(i + 1);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $70000::int4", p, 70000, on_req, &x.req[0]),
                     PGW_EINVAL);
    pgw_request_t streamed = PGW_QUERY("SELECT $70000::int4", p, 70000, on_req, &x.req[0]);
    streamed.on_row = null_row;
    assert_int_equal(pgw_conn_submit(x.conn, &streamed), PGW_EINVAL);
    assert_int_equal(pgw_conn_submit_batch(x.conn, &streamed, 1, 0, on_req, &x.req[0]), PGW_EINVAL);
    assert_int_equal(pgw_conn_prepare(x.conn, "big", "SELECT 1", NULL, 65536, on_req, &x.req[0]),
                     PGW_EINVAL);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $65535::int4", p, 65535, on_req, &x.req[1]), 0);
    run_until(&x, &x.req[1].calls);
    assert_int_equal(x.req[0].calls, 0);
    assert_int_equal(x.req[1].status, 0);
    assert_int_equal(x.req[1].value, 65535);
    free(p);
    ctx_close(&x);
    ctx_free_loop(&x);
}

/* The NULL-handle convention: no function of conn.h crashes on NULL. */
static void test_null_handles(void **state)
{
    uv_loop_t loop;
    pgw_conn_t *conn = (pgw_conn_t *)1;
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(pgw_conn_new(NULL, &loop, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_new(&conn, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_connect(NULL, "host=/x", on_connect, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_close(NULL, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_cancel(NULL, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_simple_query(NULL, "SELECT 1", on_req, NULL), PGW_EINVAL);
    /* Every kind, streamed or with flags, through the one submit. */
    pgw_request_t simple_rows = PGW_SIMPLE("SELECT 1", on_req, NULL);
    simple_rows.on_row = null_row;
    assert_int_equal(pgw_conn_submit(NULL, &simple_rows), PGW_EINVAL);
    assert_int_equal(pgw_conn_query(NULL, "SELECT 1", NULL, 0, on_req, NULL), PGW_EINVAL);
    pgw_request_t text = PGW_QUERY("SELECT 1", NULL, 0, on_req, NULL);
    text.flags = PGW_Q_TEXT;
    assert_int_equal(pgw_conn_submit(NULL, &text), PGW_EINVAL);
    pgw_request_t query_rows = PGW_QUERY("SELECT 1", NULL, 0, on_req, NULL);
    query_rows.on_row = null_row;
    assert_int_equal(pgw_conn_submit(NULL, &query_rows), PGW_EINVAL);
    assert_int_equal(pgw_conn_prepare(NULL, "s", "SELECT 1", NULL, 0, on_req, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_execute(NULL, "s", NULL, 0, on_req, NULL), PGW_EINVAL);
    pgw_request_t exec_rows = PGW_EXECUTE("s", NULL, 0, on_req, NULL);
    exec_rows.on_row = null_row;
    assert_int_equal(pgw_conn_submit(NULL, &exec_rows), PGW_EINVAL);
    pgw_request_t describe = PGW_DESCRIBE("s", on_req, NULL);
    assert_int_equal(pgw_conn_submit(NULL, &describe), PGW_EINVAL);
    pgw_request_t close = PGW_CLOSE("s", on_req, NULL);
    assert_int_equal(pgw_conn_submit(NULL, &close), PGW_EINVAL);
    /* Replaces batch_begin/batch_end/in_batch on NULL: the batch array. */
    assert_int_equal(pgw_conn_submit_batch(NULL, &text, 1, 0, on_req, NULL), PGW_EINVAL);
    pgw_request_t sync = PGW_SYNC(on_req, NULL);
    assert_int_equal(pgw_conn_submit(NULL, &sync), PGW_EINVAL);
    assert_int_equal(pgw_conn_submit(NULL, NULL), PGW_EINVAL);
    assert_null(pgw_conn_session(NULL));
    assert_null(pgw_conn_loop(NULL));
    assert_int_equal(pgw_conn_is_ready(NULL), 0);
    assert_null(pgw_conn_host(NULL));
    assert_null(pgw_conn_port(NULL));
    pgw_conn_stats_t st;
    memset(&st, 0xff, sizeof(st));
    pgw_conn_stats(NULL, &st);
    assert_int_equal(st.writes, 0);
    assert_int_equal(st.bytes_out, 0);
    assert_int_equal(st.reads, 0);
    assert_int_equal(st.bytes_in, 0);
    pgw_conn_stats(NULL, NULL);
    assert_int_equal(pgw_conn_fd(NULL), PGW_EINVAL);
    assert_null(pgw_conn_userdata(NULL));
    /* A real conn: a NULL out for the stats is a no-op too. */
    assert_int_equal(pgw_conn_new(&conn, &loop, NULL), 0);
    pgw_conn_stats(conn, NULL);
    /* Before pgw_conn_connect the request calls are PGW_EBUSY. */
    assert_int_equal(pgw_conn_submit(conn, &text), PGW_EBUSY);
    assert_int_equal(pgw_conn_submit_batch(conn, &text, 1, 0, on_req, NULL), PGW_EBUSY);
    assert_int_equal(pgw_conn_fd(conn), PGW_ECLOSED);
    assert_int_equal(pgw_conn_close(conn, NULL, NULL), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unix_socket),
        cmocka_unit_test(test_tcp),
        cmocka_unit_test(test_tcp_keepalive_options),
        cmocka_unit_test(test_tcp_kernel_defaults),
        cmocka_unit_test(test_auth_methods),
        cmocka_unit_test(test_host_list_first_dead),
        cmocka_unit_test(test_target_session_attrs),
        cmocka_unit_test(test_tls_modes),
        cmocka_unit_test(test_one_write_per_turn),
        cmocka_unit_test(test_queue_before_connect),
        cmocka_unit_test(test_request_timing),
        cmocka_unit_test(test_no_timing),
        cmocka_unit_test(test_batch_one_sync),
        cmocka_unit_test(test_prepared),
        cmocka_unit_test(test_terminate_backend),
        cmocka_unit_test(test_close_in_flight),
        cmocka_unit_test(test_close_while_connecting),
        cmocka_unit_test(test_close_from_callback),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_cancel_race),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_param_count_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
