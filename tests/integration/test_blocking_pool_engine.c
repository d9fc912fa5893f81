/*
 * The blocking pool (pool.h, pgw_client_pool_t) as a driver of the pool
 * on a loop, against the real server, each case from several threads at
 * once:
 *   - one-shot requests (pgw_client_pool_run) from 16 threads with
 *     max_size 4: only 4 backends serve them, and requests are pipelined
 *     (the wire trace shows more than one Sync unanswered on a
 *     connection; an advisory lock holds the first requests until one of
 *     each thread is on the wire, so that a slow machine cannot serve
 *     them one at a time);
 *   - max_lifetime_ms: connections are replaced while threads use them;
 *   - idle_timeout_ms: connections above min_size are closed while no
 *     thread calls the pool (the server sees them go);
 *   - liveness_after_ms: after pg_terminate_backend of every pooled
 *     backend, the next checkouts work, and three held together are three
 *     new backends;
 *   - backoff: with nothing listening, threads' checkouts and requests
 *     fail with the connect's error while the pool retries its connects
 *     spaced by the backoff, not once per call;
 *   - results are the callers' on their own threads: 8 threads read and
 *     free results of many rows (sharing the session's read chunks) while
 *     other threads' calls run the loop, and every value reads right (the
 *     memory results share with their session is guarded: ASan and
 *     valgrind runs see no race's damage).
 */
#define _GNU_SOURCE
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/pool.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

static int scaled(int n)
{
    return RUNNING_ON_VALGRIND ? (n / 8 > 0 ? n / 8 : 1) : n;
}

static void ci(char *buf, size_t n, const char *app)
{
    char extra[128];
    snprintf(extra, sizeof extra, "application_name=%s", app);
    pgt_conninfo(buf, n, extra);
}

/* A blocking pool with cfg, its connections named app. */
static pgw_client_pool_t *open_pool(const char *app, const pgw_pool_config_t *cfg)
{
    char c[512];
    ci(c, sizeof c, app);
    pgw_client_pool_t *p;
    assert_int_equal(pgw_client_pool_new(&p, c, cfg), 0);
    return p;
}

/* A number from a separate connection. */
static int64_t scalar(const char *sql)
{
    pgw_client_t *c = pgt_client_open();
    int64_t v = pgt_client_int8(c, sql);
    pgw_client_close(c);
    return v;
}

static int64_t backends(const char *app)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s'",
             app);
    return scalar(sql);
}

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

/* ------------------------------------------------------------- workers */

enum { MAXPIDS = 64 };

typedef struct worker {
    pgw_client_pool_t *p;
    int n;       /* requests (or checkouts) */
    int oneshot; /* pgw_client_pool_run, else checkout + query + release */
    unsigned ms; /* pause between two, in ms */
    const char *sql;
    int errors, first_error;
    int32_t pids[MAXPIDS]; /* distinct backends seen */
    int npids;
    pthread_t th;
} worker_t;

static void seen(worker_t *w, int32_t pid)
{
    for (int i = 0; i < w->npids; i++)
        if (w->pids[i] == pid) return;
    if (w->npids < MAXPIDS) w->pids[w->npids++] = pid;
}

static void failed(worker_t *w, int rc)
{
    if (!w->errors++) w->first_error = rc;
}

/* One query answering the backend's pid in column 0. */
static void one(worker_t *w)
{
    pgw_request_t r = PGW_QUERY(w->sql, NULL, 0, NULL, NULL);
    pgw_result_t *res = NULL;
    pgw_client_t *c = NULL;
    int rc =
        w->oneshot ? pgw_client_pool_run(w->p, &r, &res) : pgw_client_pool_acquire(w->p, 10000, &c);
    if (rc == 0 && c) rc = pgw_client_run(c, &r, &res);
    int32_t pid = 0;
    if (rc == 0 && pgw_result_int4(res, 0, 0, &pid) == 0)
        seen(w, pid);
    else
        failed(w, rc ? rc : PGW_EPROTO);
    pgw_result_free(res);
    if (c && pgw_client_pool_release(w->p, c) != 0) failed(w, PGW_EINVAL);
}

static void *work(void *arg)
{
    worker_t *w = arg;
    for (int i = 0; i < w->n; i++) {
        one(w);
        if (w->ms) usleep(w->ms * 1000u);
    }
    return NULL;
}

/* Start nt workers (each a copy of proto, half of them one-shot when
 * mixed), run during(arg) (when not NULL) while they work, wait for them,
 * and return the distinct pids they saw. */
static int run_workers_with(worker_t *ws, int nt, const worker_t *proto, int mixed, int32_t *pids,
                            void (*during)(void *), void *arg)
{
    for (int i = 0; i < nt; i++) {
        ws[i] = *proto;
        if (mixed) ws[i].oneshot = i % 2;
        assert_int_equal(pthread_create(&ws[i].th, NULL, work, &ws[i]), 0);
    }
    if (during) during(arg);
    int n = 0;
    for (int i = 0; i < nt; i++) {
        pthread_join(ws[i].th, NULL);
        if (ws[i].errors)
            fail_msg("worker %d: %d errors, first %s", i, ws[i].errors,
                     pgw_err_name(ws[i].first_error));
        for (int k = 0; k < ws[i].npids; k++) {
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= pids[j] == ws[i].pids[k];
            if (!dup && n < MAXPIDS * 4) pids[n++] = ws[i].pids[k];
        }
    }
    return n;
}

static int run_workers(worker_t *ws, int nt, const worker_t *proto, int mixed, int32_t *pids)
{
    return run_workers_with(ws, nt, proto, mixed, pids, NULL, NULL);
}

/* ------------------------------------------------ one-shot, pipelined */

/* Syncs sent (traced as they are encoded) minus the ReadyForQuery
 * answering them, per connection (the trace runs on whichever thread runs
 * the pool's loop, one at a time). */
typedef struct wire {
    const void *conn[16];
    int inflight[16], max[16];
    int started[16]; /* its startup's ReadyForQuery arrived */
    int n;
    int total; /* in flight on all connections (atomic: read by the test's thread) */
} wire_t;

static void on_trace(pgw_conn_t *conn, char dir, const uint8_t *msg, size_t len, void *ud)
{
    wire_t *t = ud;
    if (len < 1) return;
    int i = 0;
    while (i < t->n && t->conn[i] != conn)
        i++;
    if (i == t->n) {
        if (t->n == 16) return;
        t->conn[t->n++] = conn;
    }
    if (dir == 'F' && msg[0] == 'S') {
        if (++t->inflight[i] > t->max[i]) t->max[i] = t->inflight[i];
        __atomic_add_fetch(&t->total, 1, __ATOMIC_SEQ_CST);
    } else if (dir == 'B' && msg[0] == 'Z' && !t->started[i]) {
        /* The startup's: requests queued before it are traced as they
         * are encoded, and written once it arrives. */
        t->started[i] = 1;
    } else if (dir == 'B' && msg[0] == 'Z' && t->inflight[i] > 0) {
        t->inflight[i]--;
        __atomic_sub_fetch(&t->total, 1, __ATOMIC_SEQ_CST);
    }
}

/* Every worker's request takes the advisory lock 4242 shared; the test
 * holds it exclusively until a request of each of the 16 threads is on
 * the wire, 16 on at most 4 connections, and only then lets them run:
 * pipelining is certain however slowly the threads are scheduled. */
typedef struct gate {
    pgw_client_t *locker;
    wire_t *wire;
    int want;
} gate_t;

static void open_gate_when_all_wait(void *arg)
{
    gate_t *g = arg;
    uint64_t until = now_ms() + 60000;
    while (__atomic_load_n(&g->wire->total, __ATOMIC_SEQ_CST) < g->want && now_ms() < until)
        usleep(5000);
    int on_wire = __atomic_load_n(&g->wire->total, __ATOMIC_SEQ_CST);
    pgt_client_exec_ok(g->locker, "SELECT pg_advisory_unlock(4242)");
    if (on_wire < g->want) fail_msg("only %d of %d requests reached the wire", on_wire, g->want);
}

static void test_oneshot_16_threads_4_connections(void **state)
{
    (void)state;
    pgt_require_server();
    static wire_t wire;
    memset(&wire, 0, sizeof wire);
    pgw_client_t *locker = pgt_client_open();
    pgt_client_exec_ok(locker, "SELECT pg_advisory_lock(4242)");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 4;
    cfg.conn.on_trace = on_trace;
    cfg.conn.ud = &wire;
    pgw_client_pool_t *p = open_pool("pgw_bpool_oneshot", &cfg);
    enum { NT = 16 };
    static worker_t ws[NT];
    worker_t proto = {.p = p,
                      .n = scaled(40),
                      .oneshot = 1,
                      .sql = "SELECT pg_backend_pid() FROM pg_sleep(0.002), "
                             "pg_advisory_xact_lock_shared(4242)"};
    static int32_t pids[MAXPIDS * 4];
    gate_t gate = {locker, &wire, NT};
    int npids = run_workers_with(ws, NT, &proto, 0, pids, open_gate_when_all_wait, &gate);
    pgw_client_close(locker);
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    int maxin = 0;
    for (int i = 0; i < wire.n; i++)
        if (wire.max[i] > maxin) maxin = wire.max[i];
    print_message("16 threads x %d one-shot: %d backends, pool opened %llu, submitted %llu, "
                  "at most %d requests in flight on a connection\n",
                  proto.n, npids, (unsigned long long)st.opened, (unsigned long long)st.submitted,
                  maxin);
    assert_true(npids >= 1 && npids <= 4);
    assert_true(st.opened <= 4);
    assert_int_equal(st.submitted, (uint64_t)NT * proto.n);
    assert_true(backends("pgw_bpool_oneshot") <= 4);
    assert_true(maxin > 1); /* pipelined */
    pgw_client_pool_close(p);
}

/* ------------------------------------------- closing under one-shot calls */

typedef struct closer_call {
    pgw_client_pool_t *p;
    int *started;
    int rc;
    pthread_t th;
} closer_call_t;

static void *slow_call(void *arg)
{
    closer_call_t *c = arg;
    pgw_request_t q = PGW_QUERY("SELECT pg_sleep(0.5)", NULL, 0, NULL, NULL);
    pgw_result_t *res = NULL;
    __atomic_add_fetch(c->started, 1, __ATOMIC_SEQ_CST);
    c->rc = pgw_client_pool_run(c->p, &q, &res);
    pgw_result_free(res);
    return NULL;
}

/* pgw_client_pool_close while one-shot calls of 8 threads are in flight
 * (or about to be): every call returns, with PGW_ECANCELED (its
 * connection was closed under it), PGW_ECLOSED (the pool was closing when
 * it came) or 0, and the last one to return frees the pool (ASan and
 * valgrind see the rest). */
static void test_close_under_oneshot_calls(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = 2;
    pgw_client_pool_t *p = open_pool("pgw_bpool_close", &cfg);
    enum { NT = 8 };
    closer_call_t calls[NT];
    int started = 0;
    for (int i = 0; i < NT; i++) {
        calls[i] = (closer_call_t){p, &started, 1, 0};
        assert_int_equal(pthread_create(&calls[i].th, NULL, slow_call, &calls[i]), 0);
    }
    while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < NT)
        usleep(1000);
    usleep(100000);
    pgw_client_pool_close(p);
    int by[3] = {0, 0, 0};
    for (int i = 0; i < NT; i++) {
        pthread_join(calls[i].th, NULL);
        int rc = calls[i].rc;
        if (rc != 0 && rc != PGW_ECANCELED && rc != PGW_ECLOSED)
            fail_msg("call %d: %s", i, pgw_strerror(rc));
        by[rc == 0 ? 0 : rc == PGW_ECANCELED ? 1 : 2]++;
    }
    print_message("closed under %d calls: %d completed, %d cancelled, %d refused\n", NT, by[0],
                  by[1], by[2]);
}

/* ------------------------------------------------- results on any thread */

typedef struct reader {
    pgw_client_pool_t *p;
    int n, bad;
    pthread_t th;
} reader_t;

/* Rows 1..200, each checked, then freed on this thread. */
static void *read_rows(void *arg)
{
    reader_t *r = arg;
    for (int i = 0; i < r->n; i++) {
        pgw_request_t q = PGW_QUERY("SELECT g, repeat('x', g % 50) FROM generate_series(1, 200) g",
                                    NULL, 0, NULL, NULL);
        pgw_result_t *res = NULL;
        int rc = pgw_client_pool_run(r->p, &q, &res);
        if (rc != 0 || pgw_result_nrows(res) != 200) r->bad++;
        for (size_t k = 0; rc == 0 && k < pgw_result_nrows(res); k++) {
            int32_t v = 0;
            if (pgw_result_int4(res, k, 0, &v) != 0 || v != (int32_t)k + 1) r->bad++;
        }
        pgw_result_free(res);
    }
    return NULL;
}

static void test_results_freed_on_callers_threads(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 2;
    pgw_client_pool_t *p = open_pool("pgw_bpool_results", &cfg);
    enum { NT = 8 };
    static reader_t rs[NT];
    for (int i = 0; i < NT; i++) {
        rs[i] = (reader_t){.p = p, .n = scaled(200)};
        assert_int_equal(pthread_create(&rs[i].th, NULL, read_rows, &rs[i]), 0);
    }
    int bad = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(rs[i].th, NULL);
        bad += rs[i].bad;
    }
    assert_int_equal(bad, 0);
    pgw_client_pool_close(p);
}

/* ------------------------------------------------------------ lifetime */

static void test_lifetime(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 2;
    cfg.max_lifetime_ms = 200;
    pgw_client_pool_t *p = open_pool("pgw_bpool_lifetime", &cfg);
    enum { NT = 4 };
    static worker_t ws[NT];
    /* Each thread works for about a second: five lifetimes. */
    worker_t proto = {.p = p, .n = 50, .ms = 20, .sql = "SELECT pg_backend_pid()"};
    static int32_t pids[MAXPIDS * 4];
    int npids = run_workers(ws, NT, &proto, 1, pids);
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    print_message("lifetime 200 ms: %d backends served, opened %llu, closed %llu\n", npids,
                  (unsigned long long)st.opened, (unsigned long long)st.closed);
    assert_true(npids > 2); /* more than max_size: replaced */
    assert_true(st.closed >= 1);
    assert_true(st.size <= 2);
    pgw_client_pool_close(p);
}

/* ------------------------------------------------------------- release */

typedef struct handed {
    pgw_client_pool_t *p;
    pgw_client_t *c;
    pthread_mutex_t mu;
    int released;
    int rc; /* the release's */
} handed_t;

static void *release_and_tell(void *arg)
{
    handed_t *h = arg;
    h->rc = pgw_client_pool_release(h->p, h->c);
    pthread_mutex_lock(&h->mu);
    h->released = 1;
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* A release that keeps the connection as it is returns without waiting
 * for the pool's loop, and is done before any later call: the same
 * thread's stats and checkout, another thread's stats once told. One that
 * rolls back first is waited for: the server has ended the transaction
 * when it returns. */
static void test_release_seen_by_later_calls(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 1;
    pgw_client_pool_t *p = open_pool("pgw_bpool_release", &cfg);
    pgw_pool_stats_t st;
    for (int i = 0; i < scaled(200); i++) {
        pgw_client_t *x;
        assert_int_equal(pgw_client_pool_acquire(p, 10000, &x), 0);
        assert_int_equal(pgt_client_int8(x, "SELECT 1"), 1);
        assert_int_equal(pgw_client_pool_release(p, x), 0);
        pgw_client_pool_stats(p, &st);
        assert_int_equal(st.in_use, 0);
        assert_int_equal(st.idle, 1);
    }
    /* The only connection, back: a checkout that cannot wait gets it. */
    for (int i = 0; i < scaled(200); i++) {
        pgw_client_t *x;
        assert_int_equal(pgw_client_pool_acquire(p, 1, &x), 0);
        assert_int_equal(pgw_client_pool_release(p, x), 0);
    }
    /* Released on another thread, seen here once that thread said so. */
    for (int i = 0; i < scaled(50); i++) {
        handed_t h = {.p = p, .mu = PTHREAD_MUTEX_INITIALIZER};
        assert_int_equal(pgw_client_pool_acquire(p, 10000, &h.c), 0);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, release_and_tell, &h), 0);
        for (;;) {
            pthread_mutex_lock(&h.mu);
            int done = h.released;
            pthread_mutex_unlock(&h.mu);
            if (done) break;
            sched_yield();
        }
        pgw_client_pool_stats(p, &st);
        assert_int_equal(st.in_use, 0);
        pthread_join(th, NULL);
        assert_int_equal(h.rc, 0);
    }
    /* Released inside a transaction: rolled back before the call returns. */
    pgw_client_t *x;
    assert_int_equal(pgw_client_pool_acquire(p, 10000, &x), 0);
    assert_int_equal(pgw_client_exec(x, "BEGIN", NULL), 0);
    assert_int_equal(pgt_client_int8(x, "SELECT 1"), 1);
    assert_int_equal(pgw_client_pool_release(p, x), 0);
    assert_int_equal(scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                            "'pgw_bpool_release' AND state LIKE 'idle in transaction%'"),
                     0);
    pgw_client_pool_stats(p, &st);
    assert_int_equal(st.in_use, 0);
    pgw_client_pool_close(p);
}

/* -------------------------------------------------------- idle timeout */

typedef struct holder {
    pgw_client_pool_t *p;
    pthread_barrier_t *all_out;
    int rc;
    pthread_t th;
} holder_t;

/* Check out a client, wait until every holder has one, give it back. */
static void *hold(void *arg)
{
    holder_t *h = arg;
    pgw_client_t *c = NULL;
    h->rc = pgw_client_pool_acquire(h->p, 10000, &c);
    pthread_barrier_wait(h->all_out);
    if (c) {
        pgw_client_exec(c, "SELECT 1", NULL);
        pgw_client_pool_release(h->p, c);
    }
    return NULL;
}

static void test_idle_timeout(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 4;
    cfg.idle_timeout_ms = 200;
    pgw_client_pool_t *p = open_pool("pgw_bpool_idle", &cfg);
    enum { NT = 4 };
    pthread_barrier_t b;
    pthread_barrier_init(&b, NULL, NT);
    holder_t hs[NT];
    for (int i = 0; i < NT; i++) {
        hs[i] = (holder_t){p, &b, -1, 0};
        assert_int_equal(pthread_create(&hs[i].th, NULL, hold, &hs[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(hs[i].th, NULL);
        assert_int_equal(hs[i].rc, 0);
    }
    pthread_barrier_destroy(&b);
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    assert_int_equal(st.size, 4);
    /* No call from here on: the pool's own thread closes the idle ones,
     * down to min_size, long before this wait would end. */
    uint64_t end = now_ms() + 20000;
    int64_t n;
    while ((n = backends("pgw_bpool_idle")) > 1 && now_ms() < end)
        usleep(20000);
    print_message("idle timeout 200 ms: %lld backends left\n", (long long)n);
    assert_int_equal(n, 1);
    pgw_client_pool_stats(p, &st);
    assert_int_equal(st.size, 1);
    assert_int_equal(st.closed, 3);
    pgw_client_pool_close(p);
}

/* ------------------------------------------------------------ liveness */

static void test_liveness_after_terminate(void **state)
{
    (void)state;
    pgt_require_server();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 3;
    cfg.max_size = 3;
    cfg.liveness_after_ms = 50;
    pgw_client_pool_t *p = open_pool("pgw_bpool_live", &cfg);
    assert_int_equal(backends("pgw_bpool_live"), 3);
    assert_int_equal(scalar("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE application_name = 'pgw_bpool_live'"),
                     3);
    usleep(100000); /* idle past liveness_after_ms */
    enum { NT = 6 };
    static worker_t ws[NT];
    worker_t proto = {.p = p, .n = scaled(20), .sql = "SELECT pg_backend_pid()"};
    static int32_t pids[MAXPIDS * 4];
    int npids = run_workers(ws, NT, &proto, 0, pids); /* every checkout works */
    /* The workers may have needed fewer than three connections at a time
     * (a busy machine schedules them slowly): three checked out together
     * are three live ones, so each terminated backend is replaced by now. */
    pgw_client_t *held[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pgw_client_pool_acquire(p, 10000, &held[i]), 0);
        assert_int_equal(pgt_client_int8(held[i], "SELECT 1"), 1);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(pgw_client_pool_release(p, held[i]), 0);
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    print_message("after terminating 3 backends: %d backends served, lost %llu, opened %llu\n",
                  npids, (unsigned long long)st.lost, (unsigned long long)st.opened);
    assert_true(st.lost + st.closed >= 3);
    assert_true(st.opened >= 6);
    pgw_client_pool_close(p);
}

/* ------------------------------------------------------------- backoff */

typedef struct refused {
    pgw_client_pool_t *p;
    int n, other;
    pthread_t th;
} refused_t;

static void *refused_calls(void *arg)
{
    refused_t *r = arg;
    for (int i = 0; i < r->n; i++) {
        pgw_client_t *c = NULL;
        int rc = pgw_client_pool_acquire(r->p, 100, &c);
        if (rc != UV_ECONNREFUSED) r->other++;
        if (c) pgw_client_pool_release(r->p, c);
        pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL);
        rc = pgw_client_pool_run(r->p, &q, NULL);
        if (rc != UV_ECONNREFUSED && rc != PGW_ERETRY) r->other++;
    }
    return NULL;
}

static void test_backoff_server_unreachable(void **state)
{
    (void)state;
    pgt_require_server();
    unsigned port = 0;
    close(pgt_loopback_socket(&port, 0)); /* nothing listens there now */
    char c[256];
    snprintf(c, sizeof c, "host=127.0.0.1 port=%u user=nobody dbname=nothing sslmode=disable",
             port);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 4;
    cfg.max_connecting = 1;
    cfg.backoff_min_ms = 50;
    cfg.backoff_max_ms = 400;
    pgw_client_pool_t *p;
    /* min_size 1: the first connect's error, nothing kept. */
    cfg.min_size = 1;
    assert_int_equal(pgw_client_pool_new(&p, c, &cfg), UV_ECONNREFUSED);
    cfg.min_size = 0;
    assert_int_equal(pgw_client_pool_new(&p, c, &cfg), 0);
    uint64_t t0 = now_ms();
    /* Until the first connect has failed, a checkout can only time out
     * (PGW_EPOOLTIMEOUT): how long a refused connect takes is the
     * machine's business (valgrind, a loaded CI host). From then on every
     * call must fail with the refusal. */
    pgw_client_t *first = NULL;
    int rc = PGW_EPOOLTIMEOUT;
    for (int i = 0; i < 600 && rc == PGW_EPOOLTIMEOUT; i++)
        rc = pgw_client_pool_acquire(p, 100, &first);
    assert_int_equal(rc, UV_ECONNREFUSED);
    assert_null(first);
    enum { NT = 4 };
    refused_t rs[NT];
    for (int i = 0; i < NT; i++) {
        rs[i] = (refused_t){p, 10, 0, 0};
        assert_int_equal(pthread_create(&rs[i].th, NULL, refused_calls, &rs[i]), 0);
    }
    int other = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(rs[i].th, NULL);
        other += rs[i].other;
    }
    uint64_t ms = now_ms() - t0;
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    print_message("%d calls over %llu ms while refused: %llu connects tried\n", NT * 10 * 2,
                  (unsigned long long)ms, (unsigned long long)st.open_failures);
    assert_int_equal(other, 0);
    assert_int_equal(st.opened, 0);
    assert_true(st.open_failures >= 2); /* retried */
    /* Spaced by the backoff (50 ms doubling up to 400 ms, one at a time):
     * at most one per 50 ms, far fewer than the calls. */
    assert_true(st.open_failures <= ms / 50 + 1);
    assert_true(st.open_failures < (uint64_t)NT * 10);
    pgw_client_pool_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oneshot_16_threads_4_connections),
        cmocka_unit_test(test_lifetime),
        cmocka_unit_test(test_release_seen_by_later_calls),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_liveness_after_terminate),
        cmocka_unit_test(test_backoff_server_unreachable),
        cmocka_unit_test(test_results_freed_on_callers_threads),
        cmocka_unit_test(test_close_under_oneshot_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
