/*
 * Allocation failure, swept, where the sans-IO sweep (unit/test_alloc_sweep.c)
 * cannot go: the connection against the real server, with TLS and SCRAM;
 * the pool; the listener's reconnect. The allocator of the connection (pool,
 * listener) fails its N-th allocation, for N from 1 to the count of a
 * clean run, alone, and on the connection path also as the start of an
 * exhausted budget. Each run is a real connect (or several), so CI takes
 * a subset: on the connection path every N of the connect itself (TCP,
 * TLS, SCRAM: each allocation a different one; not under valgrind), then
 * every k-th N, k chosen to keep a path near 60 runs (20 under valgrind
 * or PGW_TEST_SLOW), about a minute for the three paths. The
 * exhaustive run (every N, ~3 minutes, ~1,500 runs) is PGW_SWEEP_STRIDE=1;
 * PGW_SWEEP_STRIDE=k takes every k-th. Each run must:
 *   - end: the connect and every accepted request complete exactly once,
 *     with 0 or with PGW_ENOMEM (the connection broken with it: on_lost
 *     says PGW_ENOMEM), or with what the path itself causes (a pool's
 *     PGW_ERETRY after the backend is killed);
 *   - leave nothing allocated once closed (the allocator's live blocks;
 *     LSan and valgrind for the rest);
 *   - recover where the path retries (the pool reopens, the listener
 *     reconnects): a single failure never makes them give up.
 * Paths:
 *   conn   TCP, sslmode=require, SCRAM-SHA-256: connect (DNS-free, TLS
 *          handshake, SCRAM), a pipeline of 100 queries, COPY in and out;
 *   pool   open 2, a checkout with a transaction released open (its
 *          ROLLBACK), 20 one-shot queries, a backend terminated and its
 *          connection replaced, 20 more;
 *   listener  3 channels, the backend terminated, the reconnect and
 *          re-LISTEN, a notification after the gap.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "failalloc.h"
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/pool.h"

#include <valgrind/valgrind.h>

static pgt_alloc_t fa = PGT_ALLOC_INITIALIZER(fa);
static uv_loop_t loop;
static uv_timer_t waker;
static pgw_client_t *admin; /* kills and notifies, on the default allocator */

static void on_waker(uv_timer_t *t)
{
    (void)t;
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_waker, 5, 5);
    uv_unref((uv_handle_t *)&waker);
    admin = pgt_client_open();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_client_close(admin);
    uv_close((uv_handle_t *)&waker, NULL);
    /* after a failed assertion, what the path left open is not closed:
     * give up the loop rather than wait for it (uv_loop_close then says
     * UV_EBUSY and the failure is already reported) */
    uv_run(&loop, UV_RUN_NOWAIT);
    (void)uv_loop_close(&loop);
    return 0;
}

static void run_until(const int *flag, int want, unsigned ms)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ms * 1000000u;
    while (*flag < want && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
}

static void run_for(unsigned ms)
{
    int never = 0;
    run_until(&never, 1, ms);
}

static void kill_backend(int32_t pid)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", (int)pid);
    pgt_client_exec_ok(admin, sql);
}

/* ------------------------------------------------------ the outcomes */

#define MAXREQ       256
#define COPY_IN_WANT (-2)  /* marks the COPY IN request */
static int copy_abandoned; /* its source failed to allocate */

typedef struct req {
    int calls, status;
    int64_t value, want;
} req_t;

static req_t Q[MAXREQ];
static int nq, ndone;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    req_t *r = ud;
    r->calls++;
    r->status = status;
    if (status == 0 && pgw_result_nrows(res) > 0) pgw_result_int8(res, 0, 0, &r->value);
    pgw_result_free(res);
    ndone++;
}

/* The next request slot (its callback and ud set), or NULL when full. */
static pgw_request_t *next_req(pgw_request_t *r, int64_t want)
{
    assert_true(nq < MAXREQ);
    Q[nq].want = want;
    r->on_result = on_req;
    r->ud = &Q[nq];
    return r;
}

/* A submit's return: 0 (the request counts), or the failure's refusal. */
static void submitted(int rc, int allowed_extra)
{
    if (rc == 0) {
        nq++;
        return;
    }
    if (rc != PGW_ENOMEM && rc != PGW_ECLOSED && rc != allowed_extra)
        fail_msg("submit refused with %s (allocation %ld failing)", pgw_err_name(rc), fa.fail_at);
}

/* Every counted request completed once, with 0 (and its own value) or an
 * allowed failure; returns the number that failed. */
static int check_requests(int extra1, int extra2)
{
    int failed = 0;
    for (int i = 0; i < nq; i++) {
        if (Q[i].calls != 1)
            fail_msg("request %d: %d callbacks (allocation %ld failing)", i, Q[i].calls,
                     fa.fail_at);
        if (Q[i].status == 0) {
            if (Q[i].want >= 0 && Q[i].value != Q[i].want)
                fail_msg("request %d: %lld, not %lld", i, (long long)Q[i].value,
                         (long long)Q[i].want);
            continue;
        }
        failed++;
        if (Q[i].want == COPY_IN_WANT && copy_abandoned && Q[i].status == PGW_ESERVER) continue;
        if (Q[i].status != PGW_ENOMEM && Q[i].status != PGW_ECONNLOST && Q[i].status != extra1 &&
            Q[i].status != extra2)
            fail_msg("request %d failed with %s (allocation %ld failing)", i,
                     pgw_err_name(Q[i].status), fa.fail_at);
    }
    return failed;
}

static void reset_requests(void)
{
    memset(Q, 0, sizeof Q);
    nq = ndone = 0;
}

/* ------------------------------------------------------------ conn path */

static int copy_lines;

/* Out of memory in the source abandons the COPY (CopyFail): the request
 * then ends with the server's error, PGW_ESERVER (session.h). */
static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    for (; copy_lines < 200; copy_lines++)
        if (pgw_buf_append(out, "7\n", 2) < 0) {
            copy_abandoned = 1;
            return PGW_ENOMEM;
        }
    return PGW_COPY_END;
}

static int copy_sink(const uint8_t *d, size_t n, void *ud)
{
    (void)d, (void)n, (void)ud;
    return 0;
}

typedef struct conn_run {
    int connected, status, lost, lost_err, closed;
} conn_run_t;

/* The allocations of the clean run's connect (TCP, TLS, SCRAM): each is a
 * different one, so CI sweeps all of them (see sweep). */
static long connect_allocs;

static void on_connected(pgw_conn_t *c, int status, const pgw_error_t *e, void *ud)
{
    (void)c, (void)e;
    conn_run_t *r = ud;
    if (!fa.fail_at && status == 0) connect_allocs = fa.calls;
    r->connected++;
    r->status = status;
}

static void on_lost(pgw_conn_t *c, int err, void *ud)
{
    (void)c;
    conn_run_t *r = ud;
    r->lost++;
    r->lost_err = err;
}

static void on_closed(pgw_conn_t *c, void *ud)
{
    (void)c;
    ((conn_run_t *)ud)->closed++;
}

static char conn_ci[1024];

static int path_conn(void)
{
    reset_requests();
    conn_run_t r = {0};
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.alloc = &fa.base;
    cfg.on_lost = on_lost;
    cfg.ud = &r;
    pgw_conn_t *c = NULL;
    int rc = pgw_conn_new(&c, &loop, &cfg);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        return 0;
    }
    rc = pgw_conn_connect(c, conn_ci, on_connected, &r);
    if (rc == 0)
        run_until(&r.connected, 1, 60000);
    else
        assert_int_equal(rc, PGW_ENOMEM);
    if (rc == 0) {
        assert_int_equal(r.connected, 1);
        if (r.status != 0 && r.status != PGW_ENOMEM) {
            size_t na = 0;
            const pgw_conn_attempt_t *at = pgw_conn_attempts(c, &na);
            for (size_t i = 0; i < na; i++)
                print_message("attempt %zu: %s tls %d phase %s status %s: %s\n", i, at[i].address,
                              at[i].tls, pgw_conn_phase_name(at[i].phase),
                              pgw_err_name(at[i].status), at[i].message);
            fail_msg("connect: %s (allocation %ld failing): %s", pgw_err_name(r.status), fa.fail_at,
                     pgw_conn_error_message(c));
        }
    }
    int up = rc == 0 && r.status == 0;
    if (up) {
        pgw_request_t q;
        for (int i = 0; i < 100; i++) {
            pgw_param_t p = pgw_int8(i);
            q = PGW_QUERY("SELECT $1::int8", &p, 1, NULL, NULL);
            submitted(pgw_conn_submit(c, next_req(&q, i)), 0);
        }
        copy_lines = copy_abandoned = 0;
        q = PGW_COPY_IN_REQ("COPY sweep FROM STDIN", copy_source, NULL, NULL);
        submitted(pgw_conn_submit(c, next_req(&q, COPY_IN_WANT)), 0);
        q = PGW_COPY_OUT_REQ("COPY (SELECT generate_series(1, 100)) TO STDOUT", copy_sink, NULL,
                             NULL);
        submitted(pgw_conn_submit(c, next_req(&q, -1)), 0);
        run_until(&ndone, nq, 60000);
    }
    int failed = check_requests(0, 0);
    if (r.lost) assert_int_equal(r.lost_err, PGW_ENOMEM);
    assert_int_equal(pgw_conn_close(c, on_closed, &r), 0);
    run_until(&r.closed, 1, 60000);
    assert_int_equal(r.closed, 1);
    uv_run(&loop, UV_RUN_NOWAIT);
    return up && failed == 0 && !r.lost;
}

/* ------------------------------------------------------------ pool path */

static void on_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    pgw_conn_t **out = ud;
    if (status != 0 && status != PGW_ENOMEM)
        fail_msg("acquire: %s (allocation %ld failing)", pgw_err_name(status), fa.fail_at);
    *out = status == 0 ? conn : (pgw_conn_t *)1;
}

static char pool_ci[1024];

static void one_shots(pgw_pool_t *p, int n, int base)
{
    for (int i = 0; i < n; i++) {
        pgw_param_t prm = pgw_int8(base + i);
        pgw_request_t q = PGW_QUERY("SELECT $1::int8", &prm, 1, NULL, NULL);
        submitted(pgw_pool_submit(p, next_req(&q, base + i)), PGW_ENOMEM);
    }
    run_until(&ndone, nq, 60000);
}

static int path_pool(void)
{
    reset_requests();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = 2;
    cfg.backoff_min_ms = 5;
    cfg.backoff_max_ms = 20;
    cfg.acquire_timeout_ms = 30000;
    cfg.conn.alloc = &fa.base;
    pgw_pool_t *p = NULL;
    int rc = pgw_pool_new(&p, &loop, pool_ci, &cfg);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        return 0;
    }
    /* a checkout left in a transaction block */
    pgw_conn_t *conn = NULL;
    rc = pgw_pool_acquire(p, 0, 0, on_acq, &conn);
    if (rc == 0) {
        uint64_t end = pgt_now_ns() + 60000000000ull;
        while (!conn && pgt_now_ns() < end)
            uv_run(&loop, UV_RUN_ONCE);
        assert_non_null(conn);
    } else {
        assert_int_equal(rc, PGW_ENOMEM);
    }
    if (conn && conn != (pgw_conn_t *)1) {
        pgw_request_t q = PGW_SIMPLE("BEGIN; SELECT 1", NULL, NULL);
        submitted(pgw_conn_submit(conn, next_req(&q, -1)), 0);
        run_until(&ndone, nq, 60000);
        assert_int_equal(pgw_pool_release(p, conn), 0);
    }
    one_shots(p, 20, 100);
    /* a backend dies: its connection is replaced */
    pgw_conn_t *k = NULL;
    if (pgw_pool_acquire(p, 0, 0, on_acq, &k) == 0) {
        uint64_t end = pgt_now_ns() + 60000000000ull;
        while (!k && pgt_now_ns() < end)
            uv_run(&loop, UV_RUN_ONCE);
        if (k && k != (pgw_conn_t *)1) {
            int32_t pid = pgw_conn_backend_pid(k);
            assert_int_equal(pgw_pool_release(p, k), 0);
            kill_backend(pid);
            run_for(20);
        }
    }
    one_shots(p, 20, 200);
    int failed = check_requests(PGW_ERETRY, PGW_ECANCELED);
    pgw_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
    return failed == 0;
}

/* -------------------------------------------------------- listener path */

typedef struct lst {
    int ready, lost, gaps, got, closed;
} lst_t;

static void on_levent(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    (void)l;
    lst_t *s = ud;
    if (ev == PGW_LISTENER_READY) s->ready++;
    if (ev == PGW_LISTENER_LOST) s->lost++;
    if (ev == PGW_LISTENER_GAP) s->gaps++;
    if (ev == PGW_LISTENER_RETRY && status != PGW_ENOMEM && status != PGW_ECONNLOST)
        fail_msg("listener retry: %s (allocation %ld failing)", pgw_err_name(status), fa.fail_at);
}

static void on_lnote(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    (void)l, (void)pid, (void)ch, (void)pl;
    ((lst_t *)ud)->got++;
}

static void on_lclosed(pgw_listener_t *l, void *ud)
{
    (void)l;
    ((lst_t *)ud)->closed++;
}

typedef struct ldone {
    int calls, status;
} ldone_t;

static void on_ldone(pgw_listener_t *l, int status, const pgw_error_t *err, void *ud)
{
    (void)l, (void)err;
    ldone_t *d = ud;
    d->calls++;
    d->status = status;
}

static int path_listener(void)
{
    lst_t s = {0};
    ldone_t done[3] = {{0}};
    pgw_conn_config_t cc;
    pgw_conn_config_init(&cc);
    cc.alloc = &fa.base;
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    lc.conn = &cc;
    lc.backoff_min_ms = 5;
    lc.backoff_max_ms = 20;
    lc.on_event = on_levent;
    lc.on_notification = on_lnote;
    lc.ud = &s;
    pgw_listener_t *l = NULL;
    int rc = pgw_listener_new(&l, &loop, pool_ci, &lc);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        uv_run(&loop, UV_RUN_NOWAIT);
        return 0;
    }
    static const char *const chans[3] = {"sweep_a", "sweep_b", "sweep_c"};
    int added[3] = {0};
    for (int i = 0; i < 3; i++) {
        rc = pgw_listener_listen(l, chans[i], on_ldone, &done[i]);
        if (rc != 0) assert_int_equal(rc, PGW_ENOMEM);
        added[i] = rc == 0;
    }
    run_until(&s.ready, 1, 60000);
    int ok = s.ready == 1;
    if (ok) {
        pgw_conn_t *c = pgw_listener_conn(l);
        kill_backend(pgw_conn_backend_pid(c));
        run_until(&s.gaps, 1, 60000);
        assert_int_equal(s.gaps, 1); /* a single failure never stops the reconnect */
        for (int i = 0; i < 3; i++)
            if (added[i]) {
                char sql[64];
                snprintf(sql, sizeof sql, "NOTIFY %s", chans[i]);
                pgt_client_exec_ok(admin, sql);
            }
        int want = added[0] + added[1] + added[2];
        run_until(&s.got, want, 10000);
        if (s.got != want) ok = 0;
    }
    assert_int_equal(pgw_listener_close(l, on_lclosed, &s), 0);
    run_until(&s.closed, 1, 60000);
    assert_int_equal(s.closed, 1);
    uv_run(&loop, UV_RUN_NOWAIT);
    for (int i = 0; i < 3; i++)
        if (added[i]) {
            assert_int_equal(done[i].calls, 1);
            if (done[i].status != 0 && done[i].status != PGW_ENOMEM &&
                done[i].status != PGW_ECANCELED)
                fail_msg("LISTEN %d: %s", i, pgw_err_name(done[i].status));
        }
    return ok && s.lost == 1;
}

/* -------------------------------------------------------------- sweeps */

typedef int (*path_fn)(void);

/* Every k-th N: PGW_SWEEP_STRIDE, else the CI budget of runs per path
 * (see the header). */
static long stride_for(long total)
{
    int k = pgt_env_int("PGW_SWEEP_STRIDE", 0);
    if (k > 0) return k;
    const char *slow = getenv("PGW_TEST_SLOW");
    long budget = RUNNING_ON_VALGRIND || (slow && *slow && strcmp(slow, "0") != 0) ? 20 : 60;
    return total > budget ? (total + budget - 1) / budget : 1;
}

static int run(path_fn fn, long fail_at, int rest)
{
    pgt_alloc_reset(&fa);
    fa.fail_at = fail_at;
    fa.fail_rest = rest;
    int clean = fn();
    if (fa.blocks != 0)
        fail_msg("allocation %ld failing%s: %ld blocks left", fail_at, rest ? " on" : "",
                 fa.blocks);
    return clean;
}

/* Every N up to dense (the connect's allocations, each a different one),
 * then every stride-th. */
static void sweep(const char *name, path_fn fn, int with_rest, const long *dense_p)
{
    fa.blocks = 0;
    fa.bytes = 0;
    if (!run(fn, 0, 0)) fail_msg("%s: the path fails without an allocation failure", name);
    long total = fa.calls, dense = dense_p && !RUNNING_ON_VALGRIND ? *dense_p : 0;
    long stride = stride_for(total - dense);
    uint64_t t0 = pgt_now_ns();
    long runs = 0;
    for (long n = 1; n <= total; n += n < dense ? 1 : stride) {
        run(fn, n, 0);
        runs++;
        if (with_rest) run(fn, n, 1), runs++;
    }
    assert_true(run(fn, 0, 0));
    print_message(
        "%-9s %5ld allocations, %ld runs (every one to %ld, then every %ld%s) in %.1f s\n", name,
        total, runs, dense, stride, with_rest ? ", alone and as an exhausted budget" : "",
        pgt_ms_since(t0) / 1000);
}

static void test_conn(void **state)
{
    (void)state;
    pgt_client_exec_ok(admin, "DROP TABLE IF EXISTS sweep; CREATE TABLE sweep (n int)");
    pgt_conninfo_tcp(conn_ci, sizeof conn_ci, pgt_env_required("PGW_TEST_SCRAM_USER"),
                     pgt_env_required("PGW_TEST_SCRAM_PASSWORD"), "sslmode=require");
    pgt_client_exec_ok(admin, "GRANT ALL ON sweep TO PUBLIC");
    sweep("conn", path_conn, 1, &connect_allocs);
    pgt_client_exec_ok(admin, "DROP TABLE sweep");
}

static void test_pool(void **state)
{
    (void)state;
    pgt_conninfo(pool_ci, sizeof pool_ci, NULL);
    sweep("pool", path_pool, 0, NULL);
}

static void test_listener(void **state)
{
    (void)state;
    pgt_conninfo(pool_ci, sizeof pool_ci, NULL);
    sweep("listener", path_listener, 0, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listener, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
