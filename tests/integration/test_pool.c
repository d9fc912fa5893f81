/*
 * The pool (pool.h) against the real server: 10,000 concurrent queries
 * with distinct parameters through 10 connections; pg_terminate_backend of
 * every pooled connection under load (each affected request fails once
 * with PGW_ERETRY, its retry and every other request succeed), with the
 * retries resubmitted later and from inside the PGW_ERETRY callback; a
 * one-connection pool whose backend is terminated under 10 requests (and
 * under a batch), each PGW_ERETRY callback resubmitting: every resubmit is
 * accepted and succeeds; a private cluster restarted with pg_ctl restart
 * -m fast under load (then 100 queries succeed and the pool is back at min
 * size), and again with every PGW_ERETRY resubmitted from its callback (no
 * request fails twice on connections that were up, no submit is refused
 * with PGW_ECLOSED); the acquire timeout
 * of an exhausted pool; 1,000 releases inside an open transaction leaving
 * no `idle in transaction` session; a connection released with an
 * unfinished COPY or an open cursor never handed out; the transaction
 * checkout, batches, the listener and the blocking pool. Scaled down under
 * valgrind (or PGW_TEST_SLOW=1).
 */
#define _GNU_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/pool.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

static int slow_mode(void)
{
    const char *s = getenv("PGW_TEST_SLOW");
    return RUNNING_ON_VALGRIND || (s && *s && strcmp(s, "0") != 0);
}

static uv_loop_t loop;
/* Wakes the loop every 5 ms (unreferenced), so that the run helpers below
 * never sleep past their own deadline. */
static uv_timer_t waker;

static void on_waker(uv_timer_t *t)
{
    (void)t;
}

static int setup(void **state)
{
    uv_loop_init(&loop);
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_waker, 5, 5);
    uv_unref((uv_handle_t *)&waker);
    return 0;
}

/* The pool of the running test, closed by teardown when an assertion
 * left it open. */
static pgw_pool_t *cur;

static int teardown(void **state)
{
    if (cur) pgw_pool_close(cur);
    cur = NULL;
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&waker, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    return 0;
}

/* Run the loop until *flag or ms passed. */
static void run_until(atomic_int *flag, unsigned ms)
{
    uint64_t end = uv_hrtime() / 1000000 + ms;
    while (!(flag && atomic_load(flag)) && uv_hrtime() / 1000000 < end)
        uv_run(&loop, UV_RUN_ONCE);
}

/* Run the loop for ms. */
static void run_for(unsigned ms)
{
    uint64_t end = uv_hrtime() / 1000000 + ms;
    while (uv_hrtime() / 1000000 < end)
        uv_run(&loop, UV_RUN_ONCE);
}

static void close_pool(pgw_pool_t *p)
{
    cur = NULL;
    pgw_pool_close(p);
    uv_run(&loop, UV_RUN_DEFAULT);
}

/* Wait until the pool has n idle connections. */
static void wait_idle(pgw_pool_t *p, uint32_t n, unsigned ms)
{
    uint64_t end = uv_hrtime() / 1000000 + ms;
    pgw_pool_stats_t st;
    for (;;) {
        pgw_pool_stats(p, &st);
        if (st.idle >= n) return;
        if (uv_hrtime() / 1000000 > end) fail_msg("pool has %u idle of %u wanted", st.idle, n);
        run_for(5);
    }
}

static void ci(char *buf, size_t n, const char *app)
{
    char extra[128];
    snprintf(extra, sizeof extra, "application_name=%s", app);
    pgt_conninfo(buf, n, extra);
}

/* A separate blocking connection for checks and kills. */
static long count_sql(const char *sql)
{
    char c[512];
    pgt_conninfo(c, sizeof c, NULL);
    pgw_client_t *cl;
    assert_int_equal(pgw_client_connect(&cl, c, NULL), 0);
    pgw_request_t r = PGW_SIMPLE(sql, NULL, NULL);
    pgw_result_t *res = NULL;
    int rc = pgw_client_run(cl, &r, &res);
    if (rc != 0) fail_msg("%s: %s", sql, pgw_strerror(rc));
    pgw_str_t v = {0};
    assert_int_equal(pgw_result_text(res, 0, 0, &v), 0);
    long n = strtol(v.p, NULL, 10);
    pgw_result_free(res);
    pgw_client_close(cl);
    return n;
}

/* ------------------------------------------------------------ tagged load */

typedef struct load {
    pgw_pool_t *p;
    uint32_t n;        /* requests to make */
    uint32_t next;     /* next tag */
    uint32_t window;   /* in flight at most */
    uint32_t inflight; /* accepted, not completed */
    uint32_t done_ok;
    uint32_t wrong;
    uint32_t other_err;
    int first_err;
    uint8_t *calls;   /* per tag: callbacks */
    uint8_t *retries; /* per tag: PGW_ERETRY seen */
    uint32_t retries_total;
    int retry_ok;       /* retry a PGW_ERETRY (else it is an error) */
    int retry_delay_ms; /* -1: resubmitted from inside the callback */
    int stop;
    atomic_int finished;
} load_t;

typedef struct tagreq {
    load_t *l;
    uint32_t tag;
    uv_timer_t t;
} tagreq_t;

static void load_fill(load_t *l);
static int load_submit(load_t *l, tagreq_t *tr);

static void on_tag(int status, pgw_result_t *res, void *ud);

static void on_retry_timer(uv_timer_t *t)
{
    tagreq_t *tr = t->data;
    if (load_submit(tr->l, tr) != 0) fail_msg("retry refused");
}

static void on_retry_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_tag(int status, pgw_result_t *res, void *ud)
{
    tagreq_t *tr = ud;
    load_t *l = tr->l;
    l->inflight--;
    if (status == PGW_ERETRY && l->retry_ok && l->retries[tr->tag] == 0) {
        pgw_result_free(res);
        l->retries[tr->tag]++;
        l->retries_total++;
        uv_timer_init(&loop, &tr->t);
        tr->t.data = tr;
        if (l->retry_delay_ms < 0) {
            int rc = load_submit(l, tr);
            if (rc != 0) fail_msg("resubmit from the callback refused: %s", pgw_err_name(rc));
            return;
        }
        uv_timer_start(&tr->t, on_retry_timer, (uint64_t)l->retry_delay_ms, 0);
        return;
    }
    l->calls[tr->tag]++;
    if (status == PGW_ERETRY) l->retries[tr->tag]++; /* a second one: reported */
    if (status == 0) {
        int64_t v = -1;
        if (pgw_result_int8(res, 0, 0, &v) != 0 || v != (int64_t)tr->tag)
            l->wrong++;
        else
            l->done_ok++;
    } else {
        if (!l->other_err) l->first_err = status;
        l->other_err++;
    }
    pgw_result_free(res);
    if (l->retries[tr->tag]) {
        uv_close((uv_handle_t *)&tr->t, on_retry_closed);
    } else {
        free(tr);
    }
    if (!l->stop) load_fill(l);
    if (l->done_ok + l->wrong + l->other_err == l->n) atomic_store(&l->finished, 1);
}

static int load_submit(load_t *l, tagreq_t *tr)
{
    pgw_param_t prm[1] = {pgw_int8(tr->tag)};
    pgw_request_t r = PGW_QUERY("SELECT $1::int8", prm, 1, on_tag, tr);
    int rc = pgw_pool_submit(l->p, &r);
    if (rc == 0) l->inflight++;
    return rc;
}

static void load_fill(load_t *l)
{
    while (l->next < l->n && l->inflight < l->window) {
        tagreq_t *tr = calloc(1, sizeof *tr);
        tr->l = l;
        tr->tag = l->next++;
        int rc = load_submit(l, tr);
        if (rc != 0) {
            /* refused at once (server down and backing off): try later */
            free(tr);
            l->next--;
            break;
        }
    }
}

static void load_init(load_t *l, pgw_pool_t *p, uint32_t n, uint32_t window)
{
    memset(l, 0, sizeof *l);
    l->p = p;
    l->n = n;
    l->window = window;
    l->calls = calloc(n, 1);
    l->retries = calloc(n, 1);
    l->retry_delay_ms = 100;
}

static void load_check(load_t *l)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->calls[i] != 1) fail_msg("tag %u completed %u times", i, l->calls[i]);
        if (l->retries[i] > 1) fail_msg("tag %u failed %u times with PGW_ERETRY", i, l->retries[i]);
    }
    assert_int_equal(l->wrong, 0);
    if (l->other_err)
        fail_msg("%u requests failed, first %s", l->other_err, pgw_err_name(l->first_err));
    assert_int_equal(l->done_ok, l->n);
    free(l->calls);
    free(l->retries);
}

/* 10,000 concurrent distinct queries through a pool of 10. */
static void test_concurrent_distinct(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_conc");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 10;
    cfg.max_size = 10;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    wait_idle(p, 10, 20000);
    uint32_t n = slow_mode() ? 2000 : 10000;
    load_t l;
    load_init(&l, p, n, n); /* all at once */
    load_fill(&l);
    assert_int_equal(l.inflight, n);
    uint32_t fl[16];
    size_t nm = pgw_pool_inflight(p, fl, 16);
    assert_int_equal(nm, 10);
    for (size_t i = 0; i < nm; i++)
        assert_int_equal(fl[i], n / 10); /* least in flight first */
    run_until(&l.finished, 60000);
    load_check(&l);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.size, 10);
    assert_int_equal(st.opened, 10);
    assert_int_equal(st.retried, 0);
    close_pool(p);
}

/* A pool of size connections for application_name app, once they are up. */
static pgw_pool_t *fixed_pool(const char *app, uint32_t size)
{
    char c[512];
    ci(c, sizeof c, app);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = size;
    cfg.max_size = size;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    wait_idle(p, size, 20000);
    return p;
}

/* pg_terminate_backend of every pooled connection under load; retries
 * resubmitted retry_delay_ms later (-1: from inside the callback). */
static void terminate_all(const char *app, int retry_delay_ms)
{
    pgt_require_server();
    pgw_pool_t *p = fixed_pool(app, 4);
    load_t l;
    uint32_t n = slow_mode() ? 3000 : 30000;
    load_init(&l, p, n, 200);
    l.retry_ok = 1;
    l.retry_delay_ms = retry_delay_ms;
    load_fill(&l);
    /* Under load: a tenth done, most still to come (however slow the
     * process runs, under valgrind too). */
    uint64_t end = uv_hrtime() / 1000000 + 30000;
    while (l.done_ok < n / 10 && uv_hrtime() / 1000000 < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(l.done_ok >= n / 10 && l.done_ok < n / 2);
    char kill[256];
    snprintf(kill, sizeof kill,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             "WHERE application_name = '%s'",
             app);
    assert_int_equal(count_sql(kill), 4);
    run_until(&l.finished, 60000);
    load_check(&l);
    assert_true(l.retries_total > 0); /* the kills met requests in flight */
    /* Every loss is seen on its event, whether or not a request was on it. */
    pgw_pool_stats_t st;
    end = uv_hrtime() / 1000000 + 5000;
    do {
        run_for(5);
        pgw_pool_stats(p, &st);
    } while (st.lost < 4 && uv_hrtime() / 1000000 < end);
    assert_int_equal(st.lost, 4);
    print_message("terminate (retry %s): %u requests, %u retried once, pool lost %llu, opened "
                  "%llu\n",
                  retry_delay_ms < 0 ? "from the callback" : "later", n, l.retries_total,
                  (unsigned long long)st.lost, (unsigned long long)st.opened);
    wait_idle(p, 4, 20000);
    close_pool(p);
}

static void test_terminate_all(void **state)
{
    terminate_all("pgw_pool_term", 100);
}

/* The retries resubmitted from inside the PGW_ERETRY callbacks: the dead
 * connection is out of the rotation before they run, and the others,
 * whose backends were terminated too, take nothing until they have
 * answered a check, so no retry fails a second time. */
static void test_terminate_all_resubmit_at_once(void **state)
{
    terminate_all("pgw_pool_term_now", -1);
}

/* ------------------------------------------- resubmit from the callback */

enum { RESUB_N = 10 };

typedef struct resub {
    pgw_pool_t *p;
    int eretry;   /* PGW_ERETRY callbacks */
    int accepted; /* resubmits accepted */
    int refused;  /* resubmits refused */
    int first_refusal;
    int ok, bad; /* resubmits completed: right answer / anything else */
    int other;   /* first attempts completed otherwise */
    int64_t got[RESUB_N];
    atomic_int done;
} resub_t;

typedef struct resub_req {
    resub_t *r;
    int64_t tag;
} resub_req_t;

static void resub_check_done(resub_t *r)
{
    if (r->ok + r->bad + r->refused + r->other == RESUB_N) atomic_store(&r->done, 1);
}

static void on_resub_answer(int status, pgw_result_t *res, void *ud)
{
    resub_req_t *q = ud;
    resub_t *r = q->r;
    int64_t v = -1;
    if (status == 0 && pgw_result_int8(res, 0, 0, &v) == 0 && v == q->tag) {
        r->ok++;
        r->got[q->tag] = v;
    } else {
        print_message("resubmit %lld: %s\n", (long long)q->tag, pgw_err_name(status));
        r->bad++;
    }
    pgw_result_free(res);
    resub_check_done(r);
}

static void resubmit(resub_t *r, resub_req_t *q)
{
    pgw_param_t prm[1] = {pgw_int8(q->tag)};
    pgw_request_t req = PGW_QUERY("SELECT $1::int8", prm, 1, on_resub_answer, q);
    int rc = pgw_pool_submit(r->p, &req);
    if (rc == 0) {
        r->accepted++;
    } else {
        if (!r->refused) r->first_refusal = rc;
        r->refused++;
        resub_check_done(r);
    }
}

/* A first attempt: PGW_ERETRY is resubmitted from inside the callback. */
static void on_resub_first(int status, pgw_result_t *res, void *ud)
{
    resub_req_t *q = ud;
    resub_t *r = q->r;
    pgw_result_free(res);
    if (status == PGW_ERETRY) {
        r->eretry++;
        resubmit(r, q);
        return;
    }
    print_message("first attempt %lld: %s\n", (long long)q->tag, pgw_err_name(status));
    r->other++;
    resub_check_done(r);
}

/* A one-connection pool running app's requests: wait until its backend is
 * busy with the first (a long pg_sleep), then terminate it. */
static void terminate_when_running(pgw_pool_t *p, const char *app)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s' "
             "AND state = 'active' AND query LIKE '%%pg_sleep%%'",
             app);
    uint64_t end = uv_hrtime() / 1000000 + 20000;
    while (count_sql(sql) != 1) {
        if (uv_hrtime() / 1000000 > end) fail_msg("the pool's backend never ran the sleep");
        run_for(10);
    }
    snprintf(sql, sizeof sql,
             "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
             "WHERE application_name = '%s'",
             app);
    assert_int_equal(count_sql(sql), 1);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.size, 1);
}

/* A one-connection pool for app, and the records of RESUB_N requests. */
static pgw_pool_t *resub_pool(const char *app, resub_t *r, resub_req_t *q)
{
    pgt_require_server();
    pgw_pool_t *p = fixed_pool(app, 1);
    memset(r, 0, sizeof *r);
    r->p = p;
    for (int i = 0; i < RESUB_N; i++)
        q[i] = (resub_req_t){r, i};
    return p;
}

static void resub_expect_all(resub_t *r, pgw_pool_t *p)
{
    run_until(&r->done, 30000);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    print_message("backend terminated under %d requests: %d PGW_ERETRY, %d resubmits accepted, "
                  "%d refused (first: %s), %d succeeded, %d failed; pool lost %llu, opened %llu\n",
                  RESUB_N, r->eretry, r->accepted, r->refused,
                  r->refused ? pgw_err_name(r->first_refusal) : "-", r->ok, r->bad,
                  (unsigned long long)st.lost, (unsigned long long)st.opened);
    assert_int_equal(r->other, 0);
    assert_int_equal(r->eretry, RESUB_N);
    assert_int_equal(r->refused, 0);
    assert_int_equal(r->accepted, RESUB_N);
    assert_int_equal(r->bad, 0);
    assert_int_equal(r->ok, RESUB_N);
    for (int i = 0; i < RESUB_N; i++)
        assert_int_equal(r->got[i], i);
    assert_int_equal(st.lost, 1);
}

/* A one-connection pool, 10 requests in flight, its backend terminated:
 * each PGW_ERETRY callback resubmits, and all 10 are accepted (the pool
 * opens a new connection for them) and succeed. */
static void test_resubmit_from_retry(void **state)
{
    static resub_t r;
    static resub_req_t q[RESUB_N];
    pgw_pool_t *p = resub_pool("pgw_pool_resub", &r, q);
    for (int i = 0; i < RESUB_N; i++) {
        pgw_param_t prm[1] = {pgw_int8(i)};
        pgw_request_t req =
            PGW_QUERY("SELECT $1::int8 FROM pg_sleep(60)", prm, 1, on_resub_first, &q[i]);
        assert_int_equal(pgw_pool_submit(p, &req), 0);
    }
    terminate_when_running(p, "pgw_pool_resub");
    resub_expect_all(&r, p);
    close_pool(p);
}

/* The same through a batch: each item's callback and the batch's own
 * resubmit a one-shot request. */
static void test_resubmit_from_retry_batch(void **state)
{
    static resub_t r;
    static resub_req_t q[RESUB_N];
    pgw_pool_t *p = resub_pool("pgw_pool_resub_b", &r, q);
    pgw_request_t b[RESUB_N - 1];
    pgw_param_t prm[RESUB_N - 1][1];
    for (int i = 0; i < RESUB_N - 1; i++) {
        prm[i][0] = pgw_int8(i);
        b[i] = PGW_QUERY(i == 0 ? "SELECT $1::int8 FROM pg_sleep(60)" : "SELECT $1::int8", prm[i],
                         1, on_resub_first, &q[i]);
    }
    assert_int_equal(pgw_pool_submit_batch(p, b, RESUB_N - 1, 0, on_resub_first, &q[RESUB_N - 1]),
                     0);
    terminate_when_running(p, "pgw_pool_resub_b");
    resub_expect_all(&r, p);
    close_pool(p);
}

/* ----------------------------------------------------- private cluster */

typedef struct restarter {
    const char *dir;
    atomic_int done;
    int failures;
} restarter_t;

static void *restart_thread(void *arg)
{
    restarter_t *r = arg;
    usleep(300000);
    if (pgt_script_exit("pg-cluster.sh", "restart", r->dir, NULL) != 0) r->failures++;
    atomic_store(&r->done, 1);
    return NULL;
}

/* Any outcome during the restart, as long as each request completes once. */
typedef struct rload {
    pgw_pool_t *p;
    unsigned inflight, ok, failed, refused;
    int stop;
} rload_t;

static void rload_fill(rload_t *l);

static void on_rl(int status, pgw_result_t *res, void *ud)
{
    rload_t *l = ud;
    l->inflight--;
    if (status == 0)
        l->ok++;
    else
        l->failed++;
    pgw_result_free(res);
    if (!l->stop) rload_fill(l);
}

static void on_rl_timer(uv_timer_t *t)
{
    rload_fill(t->data);
}

static void rload_fill(rload_t *l)
{
    while (l->inflight < 64) {
        pgw_request_t r = PGW_SIMPLE("SELECT 1", on_rl, l);
        if (pgw_pool_submit(l->p, &r) != 0) {
            l->refused++;
            return;
        }
        l->inflight++;
    }
}

typedef struct counter {
    unsigned ok, bad;
    atomic_int done;
    unsigned want;
} counter_t;

static void on_count(int status, pgw_result_t *res, void *ud)
{
    counter_t *c = ud;
    if (status == 0)
        c->ok++;
    else
        c->bad++;
    pgw_result_free(res);
    if (c->ok + c->bad == c->want) atomic_store(&c->done, 1);
}

/* A private cluster in a new directory dir (64 bytes) and a connection
 * string for it in c (768 bytes). */
static void private_cluster_start(char *dir, char *c)
{
    snprintf(dir, 64, "/tmp/pgw-pool.XXXXXX");
    assert_non_null(mkdtemp(dir));
    if (pgt_script_exit("pg-cluster.sh", "start", dir, NULL) != 0) {
        pgt_script_exit("pg-cluster.sh", "stop", dir, NULL);
        fail_msg("could not start a private cluster in %s", dir);
    }
    snprintf(c, 768, "host='%s' port=%s user=%s dbname=%s connect_timeout=5",
             pgt_dir_env(dir, "PGHOST"), pgt_dir_env(dir, "PGPORT"), pgt_dir_env(dir, "PGUSER"),
             pgt_dir_env(dir, "PGDATABASE"));
}

static void private_cluster_stop(char *dir)
{
    pgt_script_exit("pg-cluster.sh", "stop", dir, NULL);
    rmdir(dir);
}

/* A pool of 4 connections (and at most max_size) on the private cluster
 * of c, with a short backoff, once its 4 are up. */
static pgw_pool_t *restart_pool(const char *c, uint32_t max_size, uint32_t idle_timeout_ms)
{
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 4;
    cfg.max_size = max_size;
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = 500;
    cfg.idle_timeout_ms = idle_timeout_ms;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    wait_idle(p, 4, 20000);
    return p;
}

/* pg_ctl restart -m fast of dir from another thread, the loop running
 * meanwhile; refill (the caller's timer, every 10 ms, with data) keeps the
 * load going after refusals, and is closed before this returns. */
static void restart_under(const char *dir, uv_timer_t *refill, uv_timer_cb refill_cb, void *data)
{
    uv_timer_init(&loop, refill);
    refill->data = data;
    uv_timer_start(refill, refill_cb, 10, 10);
    restarter_t r = {dir, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, restart_thread, &r), 0);
    run_until(&r.done, 120000);
    pthread_join(th, NULL);
    assert_int_equal(r.failures, 0);
    run_for(300);
    uv_timer_stop(refill);
    uv_close((uv_handle_t *)refill, NULL);
}

static void test_restart_under_load(void **state)
{
    pgt_require_server();
    char dir[64], c[768];
    private_cluster_start(dir, c);
    /* What the load opened above min_size goes once idle: the pool ends at
     * min_size exactly. */
    pgw_pool_t *p = restart_pool(c, 6, 300);
    rload_t l = {p, 0, 0, 0, 0, 0};
    rload_fill(&l);
    uv_timer_t refill;
    restart_under(dir, &refill, on_rl_timer, &l);
    l.stop = 1;
    while (l.inflight)
        uv_run(&loop, UV_RUN_ONCE);
    /* Back at min size, then 100 queries succeed. */
    pgw_pool_stats_t st;
    uint64_t end = uv_hrtime() / 1000000 + 30000;
    do {
        run_for(10);
        pgw_pool_stats(p, &st);
    } while ((st.size != 4 || st.idle != 4) && uv_hrtime() / 1000000 < end);
    assert_int_equal(st.size, 4);
    assert_int_equal(st.idle, 4);
    counter_t cnt = {0, 0, 0, 100};
    for (int i = 0; i < 100; i++) {
        pgw_request_t q = PGW_SIMPLE("SELECT 1", on_count, &cnt);
        assert_int_equal(pgw_pool_submit(p, &q), 0);
    }
    run_until(&cnt.done, 30000);
    assert_int_equal(cnt.ok, 100);
    pgw_pool_stats(p, &st);
    print_message("restart: load ok %u failed %u refused %u; lost %llu opened %llu, "
                  "open failures %llu, size %u\n",
                  l.ok, l.failed, l.refused, (unsigned long long)st.lost,
                  (unsigned long long)st.opened, (unsigned long long)st.open_failures, st.size);
    assert_true(st.lost >= 4);
    close_pool(p);
    private_cluster_stop(dir);
}

/* The restart again, with every PGW_ERETRY resubmitted from inside its
 * callback, as fast as the pool lets it: the first loss tells the pool the
 * server is going down, so the retries never land on the other
 * connections to it (they take nothing until they answer a check, and
 * they die instead), nor wait on a connection opened while it refuses
 * connects: a request fails at most once on connections that were up, and
 * a submit the pool cannot take is refused with the server's error (never
 * PGW_ECLOSED: the pool is not closing). */
typedef struct rsload rsload_t;

typedef struct rsreq {
    rsload_t *l;
    int64_t tag;
    int eretry;
    int waiting; /* refused: resubmitted by its timer */
    uv_timer_t t;
} rsreq_t;

struct rsload {
    pgw_pool_t *p;
    rsreq_t *reqs;
    int n, next, inflight, window, waiting;
    int ok, bad, eretry, with_eretry, multi_eretry;
    int refused, refused_closed, first_refusal;
    int stop, after; /* stop starting new ones; successes since the restart */
    atomic_int restarted;
};

static void rs_submit(rsreq_t *q);

static void on_rs_timer(uv_timer_t *t)
{
    rsreq_t *q = t->data;
    q->waiting = 0;
    q->l->waiting--;
    rs_submit(q);
}

static void rs_fill(rsload_t *l);

static void on_rs_answer(int status, pgw_result_t *res, void *ud)
{
    rsreq_t *q = ud;
    rsload_t *l = q->l;
    l->inflight--;
    if (status == PGW_ERETRY) {
        pgw_result_free(res);
        l->eretry++;
        if (q->eretry++ == 0) l->with_eretry++;
        if (q->eretry == 2) l->multi_eretry++;
        rs_submit(q); /* at once, from the callback */
        return;
    }
    int64_t v = -1;
    if (status == 0 && pgw_result_int8(res, 0, 0, &v) == 0 && v == q->tag) {
        l->ok++;
        if (atomic_load(&l->restarted)) l->after++;
    } else {
        print_message("request %lld: %s\n", (long long)q->tag, pgw_err_name(status));
        l->bad++;
    }
    pgw_result_free(res);
    rs_fill(l);
}

static void rs_submit(rsreq_t *q)
{
    rsload_t *l = q->l;
    pgw_param_t prm[1] = {pgw_int8(q->tag)};
    pgw_request_t r = PGW_QUERY("SELECT $1::int8 FROM pg_sleep(0.01)", prm, 1, on_rs_answer, q);
    int rc = pgw_pool_submit(l->p, &r);
    if (rc == 0) {
        l->inflight++;
        return;
    }
    /* The server is down and the pool backs off: later. */
    if (!l->refused) l->first_refusal = rc;
    l->refused++;
    if (rc == PGW_ECLOSED) l->refused_closed++;
    q->waiting = 1;
    l->waiting++;
    uv_timer_start(&q->t, on_rs_timer, 20, 0);
}

static void rs_fill(rsload_t *l)
{
    while (!l->stop && l->next < l->n && l->inflight + l->waiting < l->window) {
        rsreq_t *q = &l->reqs[l->next];
        q->l = l;
        q->tag = l->next++;
        uv_timer_init(&loop, &q->t);
        q->t.data = q;
        rs_submit(q);
    }
}

static void on_rs_refill(uv_timer_t *t)
{
    rs_fill(t->data);
}

static void test_restart_resubmit_at_once(void **state)
{
    pgt_require_server();
    char dir[64], c[768];
    private_cluster_start(dir, c);
    pgw_pool_t *p = restart_pool(c, 4, 0);
    static rsload_t l;
    memset(&l, 0, sizeof l);
    l.p = p;
    l.n = 60000;
    l.window = 32;
    l.reqs = calloc((size_t)l.n, sizeof *l.reqs);
    assert_non_null(l.reqs);
    rs_fill(&l);
    while (l.ok < 500)
        uv_run(&loop, UV_RUN_ONCE);
    int in_flight_at_restart = l.inflight;
    uv_timer_t refill;
    restart_under(dir, &refill, on_rs_refill, &l);
    atomic_store(&l.restarted, 1);
    uint64_t end = uv_hrtime() / 1000000 + 60000;
    while (l.after < 500 && uv_hrtime() / 1000000 < end)
        uv_run(&loop, UV_RUN_ONCE);
    l.stop = 1;
    while ((l.inflight || l.waiting) && uv_hrtime() / 1000000 < end)
        uv_run(&loop, UV_RUN_ONCE);
    pgw_pool_host_stats_t hs[4];
    size_t nh = pgw_pool_hosts(p, hs, 4);
    assert_int_equal(nh, 1);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    print_message("restart, retries resubmitted from the callback: %d requests (%d in flight at "
                  "the restart), %d PGW_ERETRY (%d requests got one, %d more than one), %u of "
                  "them on connections that were up; %d submits refused (first: %s, "
                  "PGW_ECLOSED: %d); pool lost %llu, opened %llu, open failures %llu\n",
                  l.next, in_flight_at_restart, l.eretry, l.with_eretry, l.multi_eretry,
                  (unsigned)hs[0].retried, l.refused,
                  l.refused ? pgw_err_name(l.first_refusal) : "-", l.refused_closed,
                  (unsigned long long)st.lost, (unsigned long long)st.opened,
                  (unsigned long long)st.open_failures);
    assert_int_equal(l.inflight, 0);
    assert_int_equal(l.waiting, 0);
    assert_int_equal(l.bad, 0);
    assert_int_equal(l.ok, l.next);
    assert_true(l.after >= 500);
    assert_true(l.with_eretry >= 1); /* the restart met requests in flight */
    assert_int_equal(l.refused_closed, 0);
    /* At most once on connections that were up: no more PGW_ERETRY there
     * than requests that got one. */
    assert_true(hs[0].retried <= (uint64_t)l.with_eretry);
    assert_int_equal(hs[0].submitted, hs[0].completed);
    for (int i = 0; i < l.next; i++)
        uv_close((uv_handle_t *)&l.reqs[i].t, NULL);
    close_pool(p);
    free(l.reqs);
    private_cluster_stop(dir);
}

/* --------------------------------------------------------------- checkout */

typedef struct acq {
    int status;
    pgw_conn_t *conn;
    atomic_int done;
    uint64_t at_ns;
} acq_t;

static void on_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    acq_t *a = ud;
    a->status = status;
    a->conn = conn;
    a->at_ns = uv_hrtime();
    atomic_store(&a->done, 1);
}

static pgw_conn_t *acquire_now(pgw_pool_t *p)
{
    acq_t a = {0};
    assert_int_equal(pgw_pool_acquire(p, 0, 10000, on_acq, &a), 0);
    run_until(&a.done, 15000);
    assert_true(atomic_load(&a.done));
    if (a.status != 0) fail_msg("acquire: %s", pgw_err_name(a.status));
    return a.conn;
}

typedef struct res1 {
    int status;
    pgw_result_t *res;
    atomic_int done;
} res1_t;

static void on_res1(int status, pgw_result_t *res, void *ud)
{
    res1_t *r = ud;
    r->status = status;
    r->res = res;
    atomic_store(&r->done, 1);
}

static int run_on(pgw_conn_t *conn, const char *sql)
{
    res1_t r = {0};
    pgw_request_t q = PGW_SIMPLE(sql, on_res1, &r);
    assert_int_equal(pgw_conn_submit(conn, &q), 0);
    run_until(&r.done, 15000);
    assert_true(atomic_load(&r.done));
    pgw_result_free(r.res);
    return r.status;
}

/* A checked-out connection given back by a timer: the moment a waiter
 * would be served if its deadline did not fire. */
typedef struct late_release {
    pgw_pool_t *p;
    pgw_conn_t *conn;
    int released;
} late_release_t;

static void on_late_release(uv_timer_t *t)
{
    late_release_t *r = t->data;
    r->released = 1;
    assert_int_equal(pgw_pool_release(r->p, r->conn), 0);
}

static void test_acquire_timeout(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_tmo");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 2;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    pgw_conn_t *a = acquire_now(p), *b = acquire_now(p);
    assert_ptr_not_equal(a, b);
    /* The deadline fires, and long before the wait would have ended on
     * its own: a connection comes back ten deadlines later. */
    unsigned deadline = 500;
    acq_t w = {0};
    late_release_t late = {p, a, 0};
    uv_timer_t release_timer;
    uv_timer_init(&loop, &release_timer);
    release_timer.data = &late;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_pool_acquire(p, 0, deadline, on_acq, &w), 0);
    uv_timer_start(&release_timer, on_late_release, 10 * deadline, 0);
    run_until(&w.done, 60000);
    uv_close((uv_handle_t *)&release_timer, NULL);
    assert_int_equal(late.released, 0);
    assert_int_equal(w.status, PGW_EPOOLTIMEOUT);
    assert_null(w.conn);
    double ms = (double)(w.at_ns - t0) / 1e6;
    print_message("acquire timeout %u ms fired after %.1f ms\n", deadline, ms);
    assert_true(ms >= deadline * 0.999);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.timeouts, 1);
    assert_int_equal(st.in_use, 2);
    /* A waiter is served once a connection is released: FIFO. */
    acq_t w1 = {0}, w2 = {0};
    assert_int_equal(pgw_pool_acquire(p, 0, 5000, on_acq, &w1), 0);
    assert_int_equal(pgw_pool_acquire(p, 0, 5000, on_acq, &w2), 0);
    run_for(20);
    assert_false(atomic_load(&w1.done));
    assert_int_equal(pgw_pool_release(p, a), 0);
    run_until(&w1.done, 5000);
    assert_int_equal(w1.status, 0);
    assert_ptr_equal(w1.conn, a);
    if (atomic_load(&w2.done)) fail_msg("w2 done: %s", pgw_err_name(w2.status));
    assert_int_equal(pgw_pool_release(p, b), 0);
    run_until(&w2.done, 5000);
    assert_ptr_equal(w2.conn, b);
    assert_int_equal(pgw_pool_release(p, w1.conn), 0);
    assert_int_equal(pgw_pool_release(p, w2.conn), 0);
    assert_int_equal(pgw_pool_release(p, w2.conn), PGW_EINVAL); /* not checked out */
    close_pool(p);
}

/* "Server down" is not "pool exhausted". */
static void test_acquire_server_down(void **state)
{
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 2;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, "host=127.0.0.1 port=1 connect_timeout=2", &cfg), 0);
    cur = p;
    acq_t w = {0};
    assert_int_equal(pgw_pool_acquire(p, 0, 300, on_acq, &w), 0);
    run_until(&w.done, 5000);
    assert_true(w.status != 0 && w.status != PGW_EPOOLTIMEOUT);
    print_message("acquire with the server down: %s\n", pgw_err_name(w.status));
    close_pool(p);
}

static void test_release_open_transaction(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_txn");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 2;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    int n = slow_mode() ? 200 : 1000;
    for (int i = 0; i < n; i++) {
        pgw_conn_t *conn = acquire_now(p);
        assert_int_equal(pgw_session_txn_status(pgw_conn_session(conn)), 'I');
        assert_int_equal(run_on(conn, i % 3 == 2 ? "BEGIN; SELECT 1/0" : "BEGIN; SELECT 1"),
                         i % 3 == 2 ? PGW_ESERVER : 0);
        assert_int_equal(pgw_pool_release(p, conn), 0); /* 'T' or 'E' */
    }
    pgw_conn_t *a = acquire_now(p), *b = acquire_now(p);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(a)), 'I');
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(b)), 'I');
    long idle_in_tx = count_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                                "'pgw_pool_txn' AND state LIKE 'idle in transaction%'");
    assert_int_equal(idle_in_tx, 0);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.closed, 0); /* rolled back, not closed */
    assert_int_equal(st.opened, 2);
    pgw_pool_release(p, a);
    pgw_pool_release(p, b);
    close_pool(p);
}

static int copy_pause(pgw_buf_t *out, size_t room, void *ud)
{
    return PGW_COPY_PAUSE;
}

static void test_dirty_never_handed_out(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_dirty");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 1;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, &cfg), 0);
    cur = p;
    pgw_conn_t *conn = acquire_now(p);
    int32_t pid1 = pgw_conn_backend_pid(conn);
    assert_int_equal(run_on(conn, "CREATE TEMP TABLE t (x int)"), 0);

    /* An unfinished COPY: the connection is closed, its COPY cancelled. */
    res1_t cr = {0};
    pgw_request_t cp = PGW_COPY_IN_REQ("COPY t FROM STDIN", copy_pause, on_res1, &cr);
    assert_int_equal(pgw_conn_submit(conn, &cp), 0);
    run_for(50);
    assert_false(atomic_load(&cr.done));
    assert_int_equal(pgw_pool_release(p, conn), 0);
    run_until(&cr.done, 5000);
    assert_true(cr.status != 0);
    pgw_result_free(cr.res);
    conn = acquire_now(p);
    int32_t pid2 = pgw_conn_backend_pid(conn);
    assert_true(pid2 != pid1);
    assert_int_equal(run_on(conn, "SELECT 1"), 0);

    /* A cursor in a transaction block: rolled back, the cursor gone. */
    assert_int_equal(run_on(conn, "BEGIN; DECLARE c CURSOR FOR SELECT generate_series(1, 10)"), 0);
    assert_int_equal(run_on(conn, "FETCH 1 FROM c"), 0);
    assert_int_equal(pgw_pool_release(p, conn), 0);
    conn = acquire_now(p);
    assert_int_equal(pgw_conn_backend_pid(conn), pid2);
    assert_int_equal(run_on(conn, "FETCH 1 FROM c"), PGW_ESERVER); /* 34000: no cursor */

    /* A protocol portal outside a transaction block (an open group): the
     * connection is closed. */
    res1_t pr = {0};
    pgw_request_t q = PGW_QUERY("SELECT generate_series(1, 100)", NULL, 0, on_res1, &pr);
    q.portal = "cur";
    q.max_rows = 10;
    assert_int_equal(pgw_conn_submit(conn, &q), 0);
    run_until(&pr.done, 5000);
    assert_int_equal(pr.status, 0);
    assert_int_equal(pgw_result_suspended(pr.res), 1);
    pgw_result_free(pr.res);
    assert_int_equal(pgw_pool_release(p, conn), 0);
    conn = acquire_now(p);
    int32_t pid3 = pgw_conn_backend_pid(conn);
    assert_true(pid3 != pid2);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(conn)), 'I');
    res1_t fr = {0};
    pgw_request_t f = PGW_FETCH("cur", 10, on_res1, &fr);
    assert_int_equal(pgw_conn_submit(conn, &f), 0);
    run_until(&fr.done, 5000);
    assert_int_equal(fr.status, PGW_ESERVER);
    pgw_result_free(fr.res);
    pgw_pool_release(p, conn);
    pgw_pool_stats_t st;
    pgw_pool_stats(p, &st);
    assert_int_equal(st.closed, 2);
    close_pool(p);
}

/* ---------------------------------------------------- tx, batch, listener */

typedef struct txs {
    pgw_pool_t *p;
    int begin_status, end_status;
    char txn_in;
    atomic_int done;
} txs_t;

static void on_tx_end(int status, pgw_result_t *res, void *ud)
{
    txs_t *t = ud;
    t->end_status = status;
    pgw_result_free(res);
    atomic_store(&t->done, 1);
}

static void on_tx_ins(int status, pgw_result_t *res, void *ud)
{
    pgw_result_free(res);
}

static void on_tx(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    txs_t *t = ud;
    t->begin_status = status;
    if (status != 0) {
        atomic_store(&t->done, 1);
        return;
    }
    t->txn_in = pgw_session_txn_status(pgw_conn_session(conn));
    pgw_request_t q = PGW_SIMPLE("INSERT INTO pgw_pool_tx VALUES (1)", on_tx_ins, NULL);
    assert_int_equal(pgw_conn_submit(conn, &q), 0);
    assert_int_equal(pgw_pool_tx_end(p, conn, 1, on_tx_end, t), 0);
}

static void test_tx_and_batch(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_tx");
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, NULL), 0);
    cur = p;
    counter_t k = {0, 0, 0, 1};
    pgw_request_t mk = PGW_SIMPLE(
        "DROP TABLE IF EXISTS pgw_pool_tx; CREATE TABLE pgw_pool_tx (x int)", on_count, &k);
    assert_int_equal(pgw_pool_submit(p, &mk), 0);
    run_until(&k.done, 10000);
    assert_int_equal(k.ok, 1);
    txs_t t = {p, 1, 1, 0, 0};
    assert_int_equal(pgw_pool_tx_begin(p, 0, 5000, NULL, on_tx, &t), 0);
    run_until(&t.done, 10000);
    assert_int_equal(t.begin_status, 0);
    assert_int_equal(t.txn_in, 'T');
    assert_int_equal(t.end_status, 0);
    assert_int_equal(count_sql("SELECT count(*) FROM pgw_pool_tx"), 1);

    /* A batch stays on one connection, with one Sync. */
    counter_t bk = {0, 0, 0, 3};
    pgw_param_t v[1] = {pgw_int8(7)};
    pgw_request_t b[2] = {
        PGW_QUERY("INSERT INTO pgw_pool_tx VALUES ($1::int8)", v, 1, on_count, &bk),
        PGW_QUERY("SELECT count(*) FROM pgw_pool_tx", NULL, 0, on_count, &bk)};
    assert_int_equal(pgw_pool_submit_batch(p, b, 2, 0, on_count, &bk), 0);
    run_until(&bk.done, 10000);
    assert_int_equal(bk.ok, 3);
    counter_t d = {0, 0, 0, 1};
    pgw_request_t dr = PGW_SIMPLE("DROP TABLE pgw_pool_tx", on_count, &d);
    assert_int_equal(pgw_pool_submit(p, &dr), 0);
    run_until(&d.done, 10000);
    close_pool(p);
}

typedef struct lst {
    atomic_int ready, got;
    char payload[32];
} lst_t;

static void on_lnotify(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    lst_t *s = ud;
    snprintf(s->payload, sizeof s->payload, "%.*s", (int)pl.len, pl.p);
    atomic_store(&s->got, 1);
}

static void on_levent(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    lst_t *s = ud;
    if (ev == PGW_LISTENER_READY) atomic_store(&s->ready, 1);
}

static void on_lclosed(pgw_listener_t *l, void *ud)
{
    (void)l;
}

static void test_listener(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_listen");
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, &loop, c, NULL), 0);
    cur = p;
    lst_t s = {0};
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    lc.on_notification = on_lnotify;
    lc.on_event = on_levent;
    lc.ud = &s;
    pgw_listener_t *l;
    assert_int_equal(pgw_pool_listener(p, &l, &lc), 0);
    assert_int_equal(pgw_listener_listen(l, "pgw_pool_chan", NULL, NULL), 0);
    run_until(&s.ready, 10000);
    assert_true(atomic_load(&s.ready));
    counter_t k = {0, 0, 0, 1};
    pgw_request_t n = PGW_SIMPLE("NOTIFY pgw_pool_chan, 'hello'", on_count, &k);
    assert_int_equal(pgw_pool_submit(p, &n), 0);
    run_until(&s.got, 10000);
    assert_string_equal(s.payload, "hello");
    pgw_listener_close(l, on_lclosed, NULL);
    close_pool(p);
}

/* ----------------------------------------------------------- blocking pool */

typedef struct bt {
    pgw_client_pool_t *p;
    int n, errors;
} bt_t;

static void *blocking_worker(void *arg)
{
    bt_t *b = arg;
    for (int i = 0; i < b->n; i++) {
        pgw_client_t *c;
        if (pgw_client_pool_acquire(b->p, 10000, &c) != 0) {
            b->errors++;
            continue;
        }
        pgw_request_t r = PGW_SIMPLE(i % 2 ? "BEGIN; SELECT 1" : "SELECT 1", NULL, NULL);
        if (pgw_client_run(c, &r, NULL) != 0) b->errors++;
        pgw_client_pool_release(b->p, c);
    }
    return NULL;
}

typedef struct late_client {
    pgw_client_pool_t *p;
    pgw_client_t *c;
    unsigned after_ms;
} late_client_t;

static void *release_later(void *arg)
{
    late_client_t *l = arg;
    usleep(l->after_ms * 1000u);
    pgw_client_pool_release(l->p, l->c);
    return NULL;
}

static void test_blocking_pool(void **state)
{
    pgt_require_server();
    char c[512];
    ci(c, sizeof c, "pgw_pool_blocking");
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 3;
    pgw_client_pool_t *p;
    assert_int_equal(pgw_client_pool_new(&p, c, &cfg), 0);
    enum { NT = 6 };
    pthread_t th[NT];
    bt_t b[NT];
    for (int i = 0; i < NT; i++) {
        b[i] = (bt_t){p, slow_mode() ? 20 : 200, 0};
        pthread_create(&th[i], NULL, blocking_worker, &b[i]);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(b[i].errors, 0);
    }
    pgw_pool_stats_t st;
    pgw_client_pool_stats(p, &st);
    assert_true(st.size <= 3);
    assert_int_equal(st.in_use, 0);
    assert_int_equal(st.acquires, (uint64_t)NT * b[0].n);
    /* Exhausted: the timeout fires with PGW_EPOOLTIMEOUT, long before the
     * wait would have ended on its own (a client comes back ten timeouts
     * later, from another thread). */
    pgw_client_t *h[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pgw_client_pool_acquire(p, 5000, &h[i]), 0);
    late_client_t late = {p, h[0], 2000};
    pthread_t releaser;
    assert_int_equal(pthread_create(&releaser, NULL, release_later, &late), 0);
    pgw_client_t *x;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_client_pool_acquire(p, 200, &x), PGW_EPOOLTIMEOUT);
    double ms = (double)(uv_hrtime() - t0) / 1e6;
    pthread_join(releaser, NULL);
    print_message("blocking acquire timeout 200 ms fired after %.1f ms\n", ms);
    assert_true(ms >= 199);
    for (int i = 1; i < 3; i++)
        assert_int_equal(pgw_client_pool_release(p, h[i]), 0);
    assert_int_equal(count_sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                               "'pgw_pool_blocking' AND state LIKE 'idle in transaction%'"),
                     0);
    pgw_client_pool_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_distinct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_terminate_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_terminate_all_resubmit_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resubmit_from_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resubmit_from_retry_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_acquire_server_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_open_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dirty_never_handed_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tx_and_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listener, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocking_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_under_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_resubmit_at_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
