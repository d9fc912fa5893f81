/*
 * A hostile network under TLS (issue 24's point 5): the pipeline, COPY,
 * cursor and pool cases run through the fault proxy (tests/common/pgproxy.h)
 * with sslmode=require while it cuts connections at random: most
 * connections get a cut after a random number of TLS records (the
 * handshake's included) in a random direction, at the record's boundary or
 * inside it, by RST or by an orderly close.
 *   pipeline  40 parameterized queries pipelined on one connection, each
 *             returning its tag and 3000 bytes (several records each way);
 *   copy      COPY IN of 500 rows and COPY OUT of 2000 rows, pipelined;
 *   cursor    BEGIN and DECLARE, three FETCHes, COMMIT, pipelined;
 *   pool      100 one-shots on a pool of 4 through the proxy.
 * Each case runs on a new connection per round (PGW_HOSTILE_ROUNDS, 25 by
 * default, 6 under valgrind), PGW_HOSTILE_SEED the proxy's seed (1).
 * Every accepted request's callback fires exactly once, with its own
 * correct result or a connection-level error (the connection lost, TLS
 * failed, the pool's retryable error), never another request's result,
 * never a protocol error: a cut truncates, it never corrupts. No round
 * hangs (each must end within 30 s, where nothing takes more than a
 * second). At the end the test's own file descriptors are back to where
 * they were and the server has no session of the test left. The figures
 * (cuts, outcomes by error) are printed.
 *
 * test_split_every_byte: with no cut, the proxy delivers the server's
 * bytes one at a time (1 ms apart), in plaintext and under TLS, so every
 * reply, and the TLS handshake, reaches the client split at every byte. A
 * pipeline with an error in its middle, a COPY OUT and a cursor's FETCHes
 * on one connection each return their own correct result, the error its
 * own SQLSTATE.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "pgproxy.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"
#include "pgwire/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

#define APP        "pgw_hostile_tls"
#define NPIPE      40
#define PAD        3000
#define COPY_IN    500
#define COPY_OUT   2000
#define NPOOL      100
#define MAX_REQ    100
#define ROUND_MS   30000u
#define CUT_CHANCE 0.8
#define CUT_UNITS  24 /* TLS records before the cut: the handshake and beyond */
#define SPLIT_PIPE 8  /* queries of the split case's pipeline ... */
#define SPLIT_DIV0 3  /* ... this one divides by zero */
#define SPLIT_COPY 50 /* rows of its COPY OUT */

static uv_loop_t loop;
static pgt_proxy_t *px;
static char ci[1024];

/* ------------------------------------------------------------ outcomes */

/* One request: what it must return, and how it ended. */
typedef struct req {
    int calls, status;
    int64_t want, got;
} req_t;

static req_t reqs[MAX_REQ];
static int nreq, nended;
static long n_ok, n_failed, n_connect_failed;
static pgt_err_tally_t errors;

/* A failure the network may cause: the connection lost or refused, TLS
 * broken by a truncated record, the pool's retryable error. */
static int network_error(int status)
{
    return status == PGW_ECONNLOST || status == PGW_ETLS || status == PGW_ERETRY ||
           status == PGW_ECLOSED || status == PGW_ECONNECT || (status < 0 && status > -1000);
}

static req_t *req_new(int64_t want)
{
    assert_true(nreq < MAX_REQ);
    req_t *r = &reqs[nreq++];
    memset(r, 0, sizeof *r);
    r->want = want;
    r->got = -1;
    return r;
}

/* The end of one request: exactly once, its own value or a network error.
 * value is what the request returned (-1: nothing to compare). */
static void req_end(req_t *r, int status, pgw_result_t *res, int64_t value)
{
    r->calls++;
    if (r->calls > 1) fail_msg("request %d: callback fired twice", (int)(r - reqs));
    r->status = status;
    nended++;
    if (status == 0) {
        if (value != r->want)
            fail_msg("request %d: %lld, not %lld", (int)(r - reqs), (long long)value,
                     (long long)r->want);
        n_ok++;
    } else {
        if (!network_error(status)) {
            const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
            fail_msg("request %d failed with %s (%s)", (int)(r - reqs), pgw_err_name(status),
                     e && e->message ? e->message : "-");
        }
        n_failed++;
        pgt_err_tally_add(&errors, status);
    }
    pgw_result_free(res);
}

static int64_t first_int8(pgw_result_t *res)
{
    int64_t v = -1;
    if (res && pgw_result_nrows(res) > 0 && pgw_result_int8(res, 0, 0, &v) != 0) v = -1;
    return v;
}

static void on_value(int status, pgw_result_t *res, void *ud)
{
    req_end(ud, status, res, status == 0 ? first_int8(res) : -1);
}

/* want: the rows the command reports */
static void on_rows(int status, pgw_result_t *res, void *ud)
{
    req_end(ud, status, res, status == 0 ? (int64_t)pgw_result_rows_affected(res) : -1);
}

/* The FETCH's row count and first value, as rows * 1000 + first. */
static void on_fetch(int status, pgw_result_t *res, void *ud)
{
    int64_t v = status == 0 ? (int64_t)pgw_result_nrows(res) * 1000 + first_int8(res) : -1;
    req_end(ud, status, res, v);
}

static void on_any(int status, pgw_result_t *res, void *ud)
{
    req_end(ud, status, res, 0);
}

/* --------------------------------------------------------- connections */

typedef struct hconn {
    pgw_conn_t *conn;
    int connected, connect_status, closed;
} hconn_t;

static void on_connected(pgw_conn_t *c, int status, const pgw_error_t *err, void *ud)
{
    (void)c, (void)err;
    hconn_t *h = ud;
    h->connected = 1;
    h->connect_status = status;
}

static void on_closed(pgw_conn_t *c, void *ud)
{
    (void)c;
    ((hconn_t *)ud)->closed = 1;
}

static void on_tick(uv_timer_t *t)
{
    (void)t; /* wakes the loop so that the time limit is checked */
}

/* Run the loop until *flag (or all requests ended when flag is NULL); fail
 * the test after ROUND_MS: a hang. */
static void run_until(const int *flag, const char *what)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ROUND_MS * 1000000u;
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    uv_timer_start(&t, on_tick, 20, 20);
    while (!(flag ? *flag : nended == nreq) && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    if (!(flag ? *flag : nended == nreq))
        fail_msg("%s: no end after %u ms (%d of %d requests ended)", what, ROUND_MS, nended, nreq);
}

/* A connection through the proxy; 0 when the connect failed (a cut during
 * the handshake or the startup), which must be a network error. */
static int hconn_open(hconn_t *h)
{
    memset(h, 0, sizeof *h);
    assert_int_equal(pgw_conn_new(&h->conn, &loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(h->conn, ci, on_connected, h), 0);
    run_until(&h->connected, "connect");
    if (h->connect_status == 0) return 1;
    if (!network_error(h->connect_status))
        fail_msg("connect failed with %s", pgw_err_name(h->connect_status));
    n_connect_failed++;
    pgt_err_tally_add(&errors, h->connect_status);
    return 0;
}

static void hconn_close(hconn_t *h)
{
    assert_int_equal(pgw_conn_close(h->conn, on_closed, h), 0);
    run_until(&h->closed, "close");
}

/* Submit on h; a refusal (the connection already broken) counts as the
 * request's network error. */
static void submit(hconn_t *h, pgw_request_t *r, req_t *q)
{
    r->ud = q;
    int rc = pgw_conn_submit(h->conn, r);
    if (rc == 0) return;
    if (rc != PGW_ECLOSED && !network_error(rc)) fail_msg("submit: %s", pgw_err_name(rc));
    nreq--; /* never accepted */
}

static void round_begin(void)
{
    nreq = nended = 0;
}

/* --------------------------------------------------------------- cases */

static void pipeline_round(hconn_t *h)
{
    static pgw_param_t p[NPIPE][2];
    for (int i = 0; i < NPIPE; i++) {
        p[i][0] = pgw_int8(1000 + i);
        p[i][1] = pgw_int4(PAD);
        req_t *q = req_new(1000 + i);
        pgw_request_t r =
            PGW_QUERY("SELECT $1::int8, repeat('x', $2::int4)", p[i], 2, on_value, NULL);
        submit(h, &r, q);
    }
}

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    for (int i = 0; i < COPY_IN; i++)
        if (pgw_buf_append(out, "7\n", 2) < 0) return PGW_ENOMEM;
    return PGW_COPY_END;
}

static int copy_sink(const uint8_t *d, size_t n, void *ud)
{
    req_t *q = ud;
    if (q->got < 0) q->got = 0;
    for (size_t i = 0; i < n; i++)
        q->got += d[i] == '\n';
    return 0;
}

/* COPY OUT: its rows as received by the sink. */
static void on_copy_out(int status, pgw_result_t *res, void *ud)
{
    req_t *q = ud;
    req_end(q, status, res, q->got);
}

static void copy_round(hconn_t *h)
{
    pgw_request_t r = PGW_COPY_IN_REQ("COPY hostile_copy FROM STDIN", copy_source, on_rows, NULL);
    submit(h, &r, req_new(COPY_IN));
    req_t *q = req_new(COPY_OUT);
    r = PGW_COPY_OUT_REQ("COPY (SELECT generate_series(1, 2000)) TO STDOUT", copy_sink, on_copy_out,
                         q);
    submit(h, &r, q);
}

static void cursor_round(hconn_t *h)
{
    pgw_request_t r = PGW_SIMPLE("BEGIN; DECLARE hc CURSOR FOR SELECT g::int8 FROM "
                                 "generate_series(1, 30) g",
                                 on_any, NULL);
    submit(h, &r, req_new(0));
    for (int i = 0; i < 3; i++) {
        r = PGW_QUERY("FETCH 10 FROM hc", NULL, 0, on_fetch, NULL);
        submit(h, &r, req_new(10 * 1000 + 1 + 10 * i));
    }
    r = PGW_SIMPLE("COMMIT", on_any, NULL);
    submit(h, &r, req_new(0));
}

static void run_conn_case(const char *name, void (*fill)(hconn_t *))
{
    int rounds = pgt_env_int("PGW_HOSTILE_ROUNDS", RUNNING_ON_VALGRIND ? 6 : 25);
    for (int i = 0; i < rounds; i++) {
        hconn_t h;
        round_begin();
        if (hconn_open(&h)) {
            fill(&h);
            run_until(NULL, name);
        }
        hconn_close(&h);
        for (int k = 0; k < nreq; k++)
            assert_int_equal(reqs[k].calls, 1);
    }
}

/* ------------------------------------------------------------ the pool */

static void pool_case(void)
{
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = 4;
    cfg.backoff_min_ms = 10;
    cfg.backoff_max_ms = 100;
    int rounds = pgt_env_int("PGW_HOSTILE_ROUNDS", RUNNING_ON_VALGRIND ? 6 : 25) / 5 + 1;
    for (int i = 0; i < rounds; i++) {
        pgw_pool_t *pool = NULL;
        assert_int_equal(pgw_pool_new(&pool, &loop, ci, &cfg), 0);
        round_begin();
        static pgw_param_t p[NPOOL];
        for (int k = 0; k < NPOOL; k++) {
            p[k] = pgw_int8(k);
            req_t *q = req_new(2 * k);
            pgw_request_t r = PGW_QUERY("SELECT $1::int8 * 2", &p[k], 1, on_value, q);
            int rc = pgw_pool_submit(pool, &r);
            if (rc == 0) continue;
            /* refused: the pool's connects were cut and it backs off */
            if (!network_error(rc)) fail_msg("pool submit: %s", pgw_err_name(rc));
            nreq--;
            n_connect_failed++;
            pgt_err_tally_add(&errors, rc);
        }
        run_until(NULL, "pool");
        pgw_pool_close(pool);
        uv_run(&loop, UV_RUN_NOWAIT);
        for (int k = 0; k < nreq; k++)
            assert_int_equal(reqs[k].calls, 1);
    }
}

/* -------------------------------------------------------------- checks */

static int64_t direct_int8(const char *sql)
{
    char dci[1024];
    pgw_client_t *c = NULL;
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(dci, sizeof dci, NULL), NULL), 0);
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0) fail_msg("%s: %s", sql, pgw_err_name(rc));
    int64_t v = first_int8(res);
    pgw_result_free(res);
    pgw_client_close(c);
    return v;
}

static void test_hostile_network_tls(void **state)
{
    (void)state;
    direct_int8("DROP TABLE IF EXISTS hostile_copy; CREATE TABLE hostile_copy (n int); SELECT 0");
    int fd_before = pgt_open_fds();
    assert_int_equal(uv_loop_init(&loop), 0);
    px = pgt_proxy_start_server();
    pgt_proxy_conninfo(px, ci, sizeof ci, "sslmode=require application_name=" APP);
    pgt_proxy_random_cuts(px, (uint64_t)pgt_env_int("PGW_HOSTILE_SEED", 1), CUT_CHANCE, CUT_UNITS);

    run_conn_case("pipeline", pipeline_round);
    run_conn_case("copy", copy_round);
    run_conn_case("cursor", cursor_round);
    pool_case();

    pgt_proxy_stats_t st;
    pgt_proxy_stats(px, &st);
    pgt_proxy_stop(px);
    px = NULL;
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);

    print_message("hostile network (TLS): %llu connections, %llu cut (%llu by RST); requests: %ld "
                  "ok, %ld failed; %ld connects or submits refused\n",
                  (unsigned long long)st.accepted, (unsigned long long)st.cuts,
                  (unsigned long long)st.resets, n_ok, n_failed, n_connect_failed);
    pgt_err_tally_print(&errors, "  ");

    /* the faults happened, and left room for work */
    assert_true(st.cuts > 0);
    assert_true(n_ok > 0);
    assert_true(n_failed > 0);
    assert_int_equal(pgt_open_fds(), fd_before);
    int64_t left = -1;
    uint64_t until = pgt_now_ns() + 10000000000ull;
    do {
        left =
            direct_int8("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" APP "'");
        if (left) uv_sleep(20);
    } while (left && pgt_now_ns() < until);
    assert_int_equal(left, 0);
}

/* --------------------------------------------------- split at every byte */

/* The request that divides by zero: ESERVER with 22012, nothing else. */
static void on_div0(int status, pgw_result_t *res, void *ud)
{
    req_t *r = ud;
    r->calls++;
    r->status = status;
    nended++;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (status != PGW_ESERVER || !e || !e->sqlstate || strcmp(e->sqlstate, "22012") != 0)
        fail_msg("division by zero: %s (%s)", pgw_err_name(status),
                 e && e->sqlstate ? e->sqlstate : "-");
    pgw_result_free(res);
}

static void split_round(hconn_t *h)
{
    static pgw_param_t p[SPLIT_PIPE];
    for (int i = 0; i < SPLIT_PIPE; i++) {
        p[i] = pgw_int8(100 + i);
        req_t *q = req_new(i == SPLIT_DIV0 ? 0 : 100 + i);
        pgw_request_t r = i == SPLIT_DIV0
                              ? PGW_QUERY("SELECT $1::int8 / 0", &p[i], 1, on_div0, NULL)
                              : PGW_QUERY("SELECT $1::int8", &p[i], 1, on_value, NULL);
        submit(h, &r, q);
    }
    req_t *q = req_new(SPLIT_COPY);
    pgw_request_t r = PGW_COPY_OUT_REQ("COPY (SELECT generate_series(1, 50)) TO STDOUT", copy_sink,
                                       on_copy_out, q);
    submit(h, &r, q);
    cursor_round(h);
}

static void test_split_every_byte(void **state)
{
    (void)state;
    const char *modes[] = {"sslmode=disable", "sslmode=require"};
    for (size_t m = 0; m < 2; m++) {
        assert_int_equal(uv_loop_init(&loop), 0);
        px = pgt_proxy_start_server();
        pgt_proxy_split(px, 1);
        pgt_proxy_conninfo(px, ci, sizeof ci, modes[m]);
        long failed_before = n_failed;
        hconn_t h;
        round_begin();
        if (!hconn_open(&h)) fail_msg("%s: connect failed with no fault planned", modes[m]);
        split_round(&h);
        assert_int_equal(nreq, SPLIT_PIPE + 1 + 5); /* every request accepted */
        run_until(NULL, modes[m]);
        hconn_close(&h);
        for (int k = 0; k < nreq; k++) {
            assert_int_equal(reqs[k].calls, 1);
            if (k != SPLIT_DIV0) assert_int_equal(reqs[k].status, 0);
        }
        assert_int_equal(n_failed, failed_before);
        pgt_proxy_stats_t st;
        pgt_proxy_stats(px, &st);
        print_message("split at every byte, %s: %llu bytes to the client, one at a time\n",
                      modes[m], (unsigned long long)st.to_client);
        assert_int_equal(st.cuts, 0);
        pgt_proxy_stop(px);
        px = NULL;
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_network_tls),
        cmocka_unit_test(test_split_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
