/*
 * The pool against a primary and its streaming standby.
 *
 * Routing (the pgcluster and pgreplica fixtures): a pool with route set
 * and a host list naming both servers, in both orders, sends checkouts and
 * one-shot requests without flags to the primary and PGW_POOL_READ_ONLY
 * ones to the standby, as each server says of itself (pg_is_in_recovery(),
 * inet_server_port()); pgw_pool_hosts agrees with what the servers report
 * (the pool's backends in each one's pg_stat_activity, the requests each
 * answered).
 *
 * Failover (a private primary and standby, started here with
 * tests/pg/pg-cluster.sh and tests/pg/pg-replica.sh, never the shared
 * fixture): under a load of one-shot requests and checkouts, the primary
 * is stopped (pg_ctl stop -m fast) and the standby promoted: every request
 * that was in flight on the old primary completes once, with PGW_ERETRY
 * when it did not succeed, and its retry, resubmitted from inside the
 * PGW_ERETRY callback, succeeds on the new primary; no request fails twice
 * on the old primary's connections (the first loss tells the pool that
 * server is going down: its other connections take nothing more until
 * they answer a check, however late their own losses are seen); a submit
 * the pool cannot take is refused with the server's error, never with
 * PGW_ECLOSED; every callback fires; read-write checkouts from the same
 * host list land on the new primary within a bounded time, which is
 * printed with the other figures.
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/pool.h"

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

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

/* host=H1,H2 port=P1,P2 user dbname application_name, plus extra. */
static void pair_conninfo(char *buf, size_t n, const char *h1, const char *p1, const char *h2,
                          const char *p2, const char *user, const char *db, const char *app,
                          const char *extra)
{
    char hosts[128], ports[32];
    snprintf(hosts, sizeof hosts, "%s%s%s", h1, h2 ? "," : "", h2 ? h2 : "");
    snprintf(ports, sizeof ports, "%s%s%s", p1, p2 ? "," : "", p2 ? p2 : "");
    buf[0] = '\0';
    assert_int_equal(pgt_conninfo_append(buf, n, "host", hosts), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "port", ports), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "user", user), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", db), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "application_name", app), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    if (extra) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, " %s", extra);
    }
}

/* Which server answered a "SELECT pg_is_in_recovery(), inet_server_port()". */
static void server_of(const pgw_result_t *res, bool *standby, int32_t *port)
{
    assert_int_equal(pgw_result_nrows(res), 1);
    assert_int_equal(pgw_result_bool(res, 0, 0, standby), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, port), 0);
}

static const char *const whoami = "SELECT pg_is_in_recovery(), inet_server_port()";

/* ================================================================ routing */

enum { ROUTE_REQS = 200, ROUTE_CHECKOUTS = 6 };

typedef struct route {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int primary_port, standby_port;
    int pending;
    int answers[2];    /* [0] read-write, [1] read-only: answered */
    int wrong[2];      /* answered by the wrong server */
    int retried[2];    /* PGW_ERETRY, resubmitted */
    int on_port[2][2]; /* [role][0 primary, 1 standby] */
    int checkouts[2];  /* granted and checked */
    int failed;        /* any other status */
} route_t;

typedef struct rreq {
    route_t *r;
    int ro;
} rreq_t;

static void route_submit(route_t *r, rreq_t *q);

static void tally(route_t *r, int ro, const pgw_result_t *res)
{
    bool standby;
    int32_t port;
    server_of(res, &standby, &port);
    int at_standby = port == r->standby_port;
    assert_true(at_standby || port == r->primary_port);
    assert_int_equal(standby, at_standby);
    r->on_port[ro][at_standby]++;
    if (at_standby != ro) r->wrong[ro]++;
}

static void on_route_answer(int status, pgw_result_t *res, void *ud)
{
    rreq_t *q = ud;
    route_t *r = q->r;
    if (status == PGW_ERETRY) {
        /* Only a connection that never came up may do this here. */
        r->retried[q->ro]++;
        pgw_result_free(res);
        route_submit(r, q);
        return;
    }
    r->pending--;
    if (status != 0) {
        print_message("one-shot: %s\n", pgw_err_name(status));
        r->failed++;
    } else {
        tally(r, q->ro, res);
        r->answers[q->ro]++;
    }
    pgw_result_free(res);
}

/* A request says its route either way, taking turns: the descriptor's
 * route field, or pgw_pool_submit_flags's flag. */
static void route_submit(route_t *r, rreq_t *q)
{
    static unsigned turn;
    pgw_request_t req = PGW_QUERY(whoami, NULL, 0, on_route_answer, q);
    if (turn++ % 2) {
        req.route = q->ro ? PGW_ROUTE_READ_ONLY : PGW_ROUTE_PRIMARY;
        assert_int_equal(pgw_pool_submit(r->pool, &req), 0);
    } else {
        assert_int_equal(pgw_pool_submit_flags(r->pool, &req, q->ro ? PGW_POOL_READ_ONLY : 0), 0);
    }
}

/* A batch's route is its descriptors': the pool's flag is not a batch
 * flag (it would have meant Sync after each), and mixed routes are
 * refused. Returns after the batch ran where it says. */
static void route_batch(route_t *r)
{
    rreq_t q = {r, 1};
    pgw_request_t b[2] = {PGW_QUERY(whoami, NULL, 0, NULL, NULL),
                          PGW_QUERY(whoami, NULL, 0, NULL, NULL)};
    assert_int_equal(pgw_pool_submit_batch(r->pool, b, 2, PGW_POOL_READ_ONLY, NULL, NULL),
                     PGW_EINVAL);
    b[0].route = PGW_ROUTE_READ_ONLY;
    assert_int_equal(pgw_pool_submit_batch(r->pool, b, 2, 0, NULL, NULL), PGW_EINVAL);
    b[1].route = PGW_ROUTE_READ_ONLY;
    for (int i = 0; i < 2; i++) {
        b[i].on_result = on_route_answer;
        b[i].ud = &q;
    }
    r->pending += 2;
    int rc;
    while ((rc = pgw_pool_submit_batch(r->pool, b, 2, 0, NULL, NULL)) != 0) {
        assert_int_not_equal(rc, PGW_EINVAL);
        uv_run(&r->loop, UV_RUN_ONCE); /* the standby's connection still opening */
    }
    while (r->pending > 0)
        uv_run(&r->loop, UV_RUN_ONCE);
    assert_int_equal(r->wrong[1], 0);
}

typedef struct rco {
    route_t *r;
    int ro;
    pgw_conn_t *conn;
} rco_t;

static void on_route_checked(int status, pgw_result_t *res, void *ud)
{
    rco_t *c = ud;
    route_t *r = c->r;
    assert_int_equal(status, 0);
    tally(r, c->ro, res);
    pgw_result_free(res);
    r->checkouts[c->ro]++;
    r->pending--;
    assert_int_equal(pgw_pool_release(r->pool, c->conn), 0);
}

static void on_route_acquired(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    rco_t *c = ud;
    if (status != 0) fail_msg("acquire: %s", pgw_err_name(status));
    c->conn = conn;
    assert_int_equal(pgw_conn_simple_query(conn, whoami, on_route_checked, c), 0);
}

static void run_until_idle(route_t *r)
{
    uint64_t deadline = now_ms() + (RUNNING_ON_VALGRIND ? 120000 : 30000);
    while (r->pending > 0 && now_ms() < deadline)
        uv_run(&r->loop, UV_RUN_ONCE);
    if (r->pending > 0) fail_msg("%d requests still pending", r->pending);
}

/* The pool's backends on one server, as its pg_stat_activity lists them. */
static int backends_at(const char *host, const char *port, const char *app)
{
    char ci[1024], sql[256];
    pair_conninfo(ci, sizeof ci, host, port, NULL, NULL, pgt_env_required("PGUSER"),
                  pgt_env_required("PGDATABASE"), "pgw_pool_replica_probe", NULL);
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    snprintf(sql, sizeof sql,
             "SELECT count(*)::int4 FROM pg_stat_activity WHERE application_name = '%s'", app);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_query(c, sql, NULL, 0, &res), 0);
    int32_t n = -1;
    assert_int_equal(pgw_result_int4(res, 0, 0, &n), 0);
    pgw_result_free(res);
    pgw_client_close(c);
    return n;
}

static void route_case(int standby_first)
{
    const char *ph = pgt_env_required("PGW_TEST_TCP_HOST"), *pp = pgt_env_required("PGPORT");
    const char *sh = pgt_replica_env("PGW_STANDBY_HOST"), *sp = pgt_replica_env("PGW_STANDBY_PORT");
    char app[64], ci[1024];
    snprintf(app, sizeof app, "pgw_pool_replica_%d_%d", (int)getpid(), standby_first);
    if (standby_first)
        pair_conninfo(ci, sizeof ci, sh, sp, ph, pp, pgt_env_required("PGUSER"),
                      pgt_env_required("PGDATABASE"), app, NULL);
    else
        pair_conninfo(ci, sizeof ci, ph, pp, sh, sp, pgt_env_required("PGUSER"),
                      pgt_env_required("PGDATABASE"), app, NULL);

    static route_t r;
    memset(&r, 0, sizeof r);
    r.primary_port = atoi(pp);
    r.standby_port = atoi(sp);
    assert_int_equal(uv_loop_init(&r.loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.max_size = 6;
    cfg.pipeline_target = 8;
    assert_int_equal(pgw_pool_new(&r.pool, &r.loop, ci, &cfg), 0);

    /* Opened lazily by the requests themselves: read-write and read-only
     * interleaved. */
    static rreq_t q[ROUTE_REQS];
    int n = RUNNING_ON_VALGRIND ? ROUTE_REQS / 4 : ROUTE_REQS;
    for (int i = 0; i < n; i++) {
        q[i] = (rreq_t){&r, i % 2};
        r.pending++;
        route_submit(&r, &q[i]);
    }
    run_until_idle(&r);
    /* Checkouts of both kinds, at once. */
    static rco_t c[ROUTE_CHECKOUTS];
    for (int i = 0; i < ROUTE_CHECKOUTS; i++) {
        c[i] = (rco_t){&r, i % 2, NULL};
        r.pending++;
        assert_int_equal(pgw_pool_acquire(r.pool, c[i].ro ? PGW_POOL_READ_ONLY : 0, 10000,
                                          on_route_acquired, &c[i]),
                         0);
    }
    run_until_idle(&r);
    print_message("%s first: %d read-write answers (primary %d, standby %d), %d read-only "
                  "(primary %d, standby %d), checkouts %d + %d, PGW_ERETRY while opening %d + %d\n",
                  standby_first ? "standby" : "primary", r.answers[0], r.on_port[0][0],
                  r.on_port[0][1], r.answers[1], r.on_port[1][0], r.on_port[1][1], r.checkouts[0],
                  r.checkouts[1], r.retried[0], r.retried[1]);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.wrong[0], 0);
    assert_int_equal(r.wrong[1], 0);
    assert_int_equal(r.answers[0] + r.answers[1], n);
    assert_int_equal(r.checkouts[0], ROUTE_CHECKOUTS / 2);
    assert_int_equal(r.checkouts[1], ROUTE_CHECKOUTS / 2);

    /* Per-host counters against what the servers say, once no connection
     * is still opening (its backend would be listed, not yet counted). */
    pgw_pool_stats_t st;
    for (pgw_pool_stats(r.pool, &st); st.opening > 0; pgw_pool_stats(r.pool, &st))
        uv_run(&r.loop, UV_RUN_ONCE);
    pgw_pool_host_stats_t hs[8];
    size_t nh = pgw_pool_hosts(r.pool, hs, 8);
    assert_int_equal(nh, 2);
    assert_int_equal(pgw_pool_hosts(r.pool, NULL, 0), 2);
    uint32_t open_total = 0;
    for (size_t i = 0; i < nh; i++) {
        const pgw_pool_host_stats_t *h = &hs[i];
        int ro = (h->flags & PGW_POOL_READ_ONLY) != 0;
        const char *port = ro ? sp : pp;
        print_message("  host %s:%s %s: open %u in use %u in flight %u, opened %" PRIu64
                      " lost %" PRIu64 ", acquires %" PRIu64 ", submitted %" PRIu64
                      " completed %" PRIu64 " retried %" PRIu64 "\n",
                      h->host, h->port, ro ? "read-only" : "read-write", h->open, h->in_use,
                      h->inflight, h->opened, h->lost, h->acquires, h->submitted, h->completed,
                      h->retried);
        assert_string_equal(h->host, ro ? sh : ph);
        assert_string_equal(h->port, port);
        assert_int_equal(h->inflight, 0);
        assert_int_equal(h->in_use, 0);
        assert_int_equal(h->lost, 0);
        assert_int_equal(h->retried, 0);
        assert_int_equal(h->submitted, h->completed);
        assert_int_equal(h->completed, (uint64_t)r.answers[ro]);
        assert_int_equal(h->acquires, ROUTE_CHECKOUTS / 2);
        assert_true(h->open >= 1 && h->open == h->opened);
        assert_int_equal(backends_at(ro ? sh : ph, port, app), (int)h->open);
        open_total += h->open;
    }
    assert_int_equal(open_total, st.size);
    assert_int_equal(st.submitted, (uint64_t)(n + r.retried[0] + r.retried[1]));
    route_batch(&r);

    pgw_pool_close(r.pool);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&r.loop), 0);
}

static void test_route_primary_first(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_replica();
    route_case(0);
}

static void test_route_standby_first(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_replica();
    route_case(1);
}

/* =============================================================== failover */

static pgt_pair_t pair;

static int pair_setup(void **state)
{
    (void)state;
    pgt_pair_start(&pair, "poolfo");
    return 0;
}

static int pair_teardown(void **state)
{
    (void)state;
    pgt_pair_stop(&pair);
    return 0;
}

enum { FO_MAX_CONC = 64, FO_WORKERS = 2 };

typedef struct fo fo_t;

/* One logical request: submitted until it succeeds. */
typedef struct foreq {
    fo_t *f;
    int32_t value;
    int attempts;
    int eretry; /* PGW_ERETRY callbacks it got */
    int in_flight;
    int sent_phase; /* f->phase when the last attempt was sent */
    uv_timer_t retry;
} foreq_t;

typedef struct foworker {
    fo_t *f;
    int i;
    pgw_conn_t *conn;
    int busy;
    bool standby;
    int32_t port;
    int ok;
    uv_timer_t again;
} foworker_t;

struct fo {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int old_port, new_port;
    int phase; /* 0: old primary up; 1: stop issued; 2: promote issued */
    int cap, started, succeeded, conc, outstanding;
    int enough; /* failover seen through: start no more */
    int new_ok; /* successes on the new primary */
    int eretry, rejected, rejected_closed, other_failures;
    int first_eretry, multi_eretry;
    uint64_t stop_at, promote_at, first_new_checkout_at, first_new_request_at;
    int checkouts_ok_old, checkouts_ok_new, checkout_failures, checkout_lost;
    int stop_workers;
    foreq_t *reqs;
    foworker_t w[FO_WORKERS];
};

static void fo_send(foreq_t *q);

static void on_fo_retry(uv_timer_t *t)
{
    fo_send(t->data);
}

/* Refused (no server up, the pool backing off), or failed otherwise:
 * again a little later. */
static void fo_later(foreq_t *q)
{
    uv_timer_start(&q->retry, on_fo_retry, 20, 0);
}

static void fo_start_more(fo_t *f);

static void on_fo_answer(int status, pgw_result_t *res, void *ud)
{
    foreq_t *q = ud;
    fo_t *f = q->f;
    /* Exactly once per accepted submit (never for a refused one). */
    if (!q->in_flight) fail_msg("request %d: a callback with none in flight", q->value);
    q->in_flight = 0;
    f->outstanding--;
    if (status == PGW_ERETRY) {
        f->eretry++;
        q->eretry++;
        if (q->eretry == 1) f->first_eretry++; /* distinct requests */
        pgw_result_free(res);
        fo_send(q); /* at once, from the callback */
        return;
    }
    if (status != 0) {
        /* Nothing else is acceptable from a pooled one-shot request. */
        print_message("request %d attempt %d: %s (%s)\n", q->value, q->attempts,
                      pgw_err_name(status),
                      res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
        f->other_failures++;
        pgw_result_free(res);
        fo_later(q);
        return;
    }
    int32_t v = -1, port = -1;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &port), 0);
    pgw_result_free(res);
    assert_int_equal(v, q->value);
    /* Sent once the old primary had stopped: only the new one can answer. */
    if (q->sent_phase == 2) assert_int_equal(port, f->new_port);
    if (port == f->new_port) {
        if (!f->first_new_request_at) f->first_new_request_at = now_ms();
        f->new_ok++;
    }
    if (q->eretry > 1) f->multi_eretry++;
    f->succeeded++;
    uv_close((uv_handle_t *)&q->retry, NULL);
    fo_start_more(f);
}

static void fo_send(foreq_t *q)
{
    fo_t *f = q->f;
    q->attempts++;
    pgw_param_t p[] = {pgw_int4(q->value)};
    int rc = pgw_pool_query(f->pool, "SELECT $1::int4, inet_server_port() FROM pg_sleep(0.002)", p,
                            1, on_fo_answer, q);
    if (rc < 0) {
        /* No connection up or coming (backing off): nothing queued. */
        f->rejected++;
        if (rc == PGW_ECLOSED) f->rejected_closed++;
        q->attempts--; /* not an attempt: never sent */
        fo_later(q);
        return;
    }
    q->in_flight = 1;
    q->sent_phase = f->phase;
    f->outstanding++;
}

/* At most conc requests started and not yet succeeded: in flight, or
 * waiting to be submitted again. */
static void fo_start_more(fo_t *f)
{
    while (!f->enough && f->started < f->cap && f->started - f->succeeded < f->conc) {
        foreq_t *q = &f->reqs[f->started];
        q->f = f;
        q->value = f->started++;
        uv_timer_init(&f->loop, &q->retry);
        q->retry.data = q;
        fo_send(q);
    }
}

static void fo_acquire(foworker_t *w);

static void on_worker_again(uv_timer_t *t)
{
    fo_acquire(t->data);
}

static void worker_done(foworker_t *w, int delay_ms)
{
    w->busy = 0;
    if (!w->f->stop_workers) uv_timer_start(&w->again, on_worker_again, (uint64_t)delay_ms, 0);
}

static void on_worker_write(int status, pgw_result_t *res, void *ud)
{
    foworker_t *w = ud;
    fo_t *f = w->f;
    pgw_result_free(res);
    if (status == 0 && w->ok) {
        bool at_new = w->port == f->new_port;
        assert_false(w->standby); /* a read-write checkout writes on a primary */
        if (at_new) {
            f->checkouts_ok_new++;
            if (!f->first_new_checkout_at && f->phase == 2) f->first_new_checkout_at = now_ms();
        } else {
            assert_int_equal(w->port, f->old_port);
            f->checkouts_ok_old++;
        }
    } else {
        f->checkout_lost++; /* the server went away under it */
    }
    assert_int_equal(pgw_pool_release(f->pool, w->conn), 0);
    w->conn = NULL;
    worker_done(w, 5);
}

static void on_worker_who(int status, pgw_result_t *res, void *ud)
{
    foworker_t *w = ud;
    w->ok = status == 0;
    if (w->ok) server_of(res, &w->standby, &w->port);
    pgw_result_free(res);
}

static void on_worker_acquired(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    foworker_t *w = ud;
    if (status != 0) {
        /* PGW_EPOOLTIMEOUT, or the last connect's error (PGW_ETARGET while
         * no server is read-write): try again. */
        w->f->checkout_failures++;
        worker_done(w, 20);
        return;
    }
    w->conn = conn;
    /* Handed out alive; it may break under these queries (ECONNLOST). */
    assert_int_equal(pgw_conn_simple_query(conn, whoami, on_worker_who, w), 0);
    assert_int_equal(
        pgw_conn_simple_query(conn, "INSERT INTO pgw_pool_failover VALUES (1)", on_worker_write, w),
        0);
}

static void fo_acquire(foworker_t *w)
{
    w->busy = 1;
    int rc = pgw_pool_acquire(w->f->pool, 0, 1000, on_worker_acquired, w);
    assert_int_equal(rc, 0);
}

static void on_setup_done(int status, pgw_result_t *res, void *ud)
{
    assert_int_equal(status, 0);
    pgw_result_free(res);
    *(int *)ud = 1;
}

static void test_failover(void **state)
{
    (void)state;
    static fo_t f;
    memset(&f, 0, sizeof f);
    f.old_port = atoi(pgt_dir_env(pair.primary, "PGPORT"));
    f.new_port = atoi(pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));
    int valgrind = RUNNING_ON_VALGRIND;
    f.cap = valgrind ? 20000 : 200000;
    f.conc = valgrind ? 16 : FO_MAX_CONC;
    f.reqs = calloc((size_t)f.cap, sizeof *f.reqs);
    assert_non_null(f.reqs);
    char ci[1024];
    pair_conninfo(ci, sizeof ci, "127.0.0.1", pgt_dir_env(pair.primary, "PGPORT"), "127.0.0.1",
                  pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"),
                  pgt_dir_env(pair.primary, "PGUSER"), pgt_dir_env(pair.primary, "PGDATABASE"),
                  "pgw_pool_failover", "connect_timeout=2");
    assert_int_equal(uv_loop_init(&f.loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.min_size = 4;
    cfg.max_size = 8;
    cfg.pipeline_target = 16;
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = 200;
    assert_int_equal(pgw_pool_new(&f.pool, &f.loop, ci, &cfg), 0);
    uint64_t deadline = now_ms() + (valgrind ? 300000 : 60000);

    int made = 0;
    pgw_request_t mk = PGW_SIMPLE("CREATE TABLE pgw_pool_failover (n int4)", on_setup_done, &made);
    assert_int_equal(pgw_pool_submit(f.pool, &mk), 0);
    while (!made)
        uv_run(&f.loop, UV_RUN_ONCE);

    /* Load on the old primary: one-shot requests and two checkout loops. */
    fo_start_more(&f);
    for (int i = 0; i < FO_WORKERS; i++) {
        f.w[i] = (foworker_t){.f = &f, .i = i};
        uv_timer_init(&f.loop, &f.w[i].again);
        f.w[i].again.data = &f.w[i];
        fo_acquire(&f.w[i]);
    }
    int warm = valgrind ? 100 : 1000, after = valgrind ? 50 : 500;
    while (f.succeeded < warm && now_ms() < deadline)
        uv_run(&f.loop, UV_RUN_ONCE);
    assert_true(f.succeeded >= warm);
    int before = f.succeeded, in_flight_at_stop = f.outstanding;

    /* Stop the primary under load, then promote the standby. The halt keeps
     * the primary's port claimed: a server another test starts meanwhile
     * cannot take it and answer the pool's reconnects as a primary. */
    pgt_child_t stop, promote;
    f.phase = 1;
    f.stop_at = now_ms();
    pgt_script_spawn(&f.loop, &stop, "pg-cluster.sh", "halt", pair.primary, NULL);
    while (!stop.exited && now_ms() < deadline)
        uv_run(&f.loop, UV_RUN_ONCE);
    assert_true(stop.exited);
    assert_int_equal(stop.status, 0);
    f.phase = 2;
    f.promote_at = now_ms();
    pgt_script_spawn(&f.loop, &promote, "pg-replica.sh", "promote", pair.standby, NULL);
    /* Load goes on until the new primary has served both kinds of work,
     * then every request started must complete. */
    while ((!promote.exited || !f.first_new_checkout_at || f.new_ok < after) && f.started < f.cap &&
           now_ms() < deadline)
        uv_run(&f.loop, UV_RUN_ONCE);
    f.enough = 1;
    while (f.succeeded < f.started && now_ms() < deadline)
        uv_run(&f.loop, UV_RUN_ONCE);
    f.stop_workers = 1;
    while ((f.w[0].busy || f.w[1].busy) && now_ms() < deadline)
        uv_run(&f.loop, UV_RUN_ONCE);
    if (now_ms() >= deadline)
        fail_msg("not done in time: %d of %d requests succeeded, %d in flight, promote %s, "
                 "new-primary checkout %s",
                 f.succeeded, f.started, f.outstanding, promote.exited ? "done" : "running",
                 f.first_new_checkout_at ? "done" : "none");
    assert_int_equal(promote.status, 0);

    pgw_pool_stats_t st;
    pgw_pool_stats(f.pool, &st);
    pgw_pool_host_stats_t hs[8];
    size_t nh = pgw_pool_hosts(f.pool, hs, 8);
    print_message("failover under load: %d requests (%d before the stop, %d in flight when it "
                  "began), %d PGW_ERETRY (%d requests got one or more, %d of them "
                  "requests with more than one), %d submits refused while no server was up (%d "
                  "with PGW_ECLOSED), %d other failures; checkouts: %d on the old primary, %d on "
                  "the new, %d lost under a query, %d acquires failed\n",
                  f.started, before, in_flight_at_stop, f.eretry, f.first_eretry, f.multi_eretry,
                  f.rejected, f.rejected_closed, f.other_failures, f.checkouts_ok_old,
                  f.checkouts_ok_new, f.checkout_lost, f.checkout_failures);
    print_message("pg_ctl stop -m fast: %" PRIu64 " ms; promote: %" PRIu64
                  " ms; first read-write checkout on the new primary %" PRIu64
                  " ms after the promote was issued (%" PRIu64 " ms after the stop began), first "
                  "one-shot request there %" PRIu64 " ms after the promote\n",
                  stop.ended_ms - stop.started_ms, promote.ended_ms - promote.started_ms,
                  f.first_new_checkout_at - f.promote_at, f.first_new_checkout_at - f.stop_at,
                  f.first_new_request_at > f.promote_at ? f.first_new_request_at - f.promote_at
                                                        : 0);
    print_message("pool: opened %" PRIu64 " closed %" PRIu64 " lost %" PRIu64
                  " open failures %" PRIu64 " retried %" PRIu64 " submitted %" PRIu64 "\n",
                  st.opened, st.closed, st.lost, st.open_failures, st.retried, st.submitted);
    const pgw_pool_host_stats_t *old_rw = NULL, *new_rw = NULL;
    for (size_t i = 0; i < nh; i++) {
        const pgw_pool_host_stats_t *h = &hs[i];
        print_message("  host %s:%s %s: open %u, opened %" PRIu64 " lost %" PRIu64
                      ", acquires %" PRIu64 ", submitted %" PRIu64 " completed %" PRIu64
                      " retried %" PRIu64 "\n",
                      h->host, h->port, h->flags ? "read-only" : "read-write", h->open, h->opened,
                      h->lost, h->acquires, h->submitted, h->completed, h->retried);
        assert_int_equal(h->submitted, h->completed);
        if (h->flags == 0 && atoi(h->port) == f.old_port) old_rw = h;
        if (h->flags == 0 && atoi(h->port) == f.new_port) new_rw = h;
    }
    assert_non_null(old_rw);
    assert_non_null(new_rw);
    assert_int_equal(old_rw->open, 0);
    assert_true(old_rw->lost >= cfg.min_size);
    assert_true(new_rw->open >= 1);
    assert_true(new_rw->acquires >= 1);

    assert_true(f.started < f.cap);
    assert_int_equal(f.succeeded, f.started);
    assert_true(f.new_ok >= after);
    assert_int_equal(f.outstanding, 0);
    assert_int_equal(f.other_failures, 0);
    assert_int_equal(f.rejected_closed, 0); /* the pool was not closing */
    assert_true(f.first_eretry >= 1);       /* requests were in flight at the stop */
    /* At most once on the old primary: its PGW_ERETRY (requests on its
     * connections that were up) are no more than the requests that got
     * one; any others come from connections that never came up (those
     * requests never ran). This holds however late the pool sees each of
     * the old primary's connections go, since the retries are resubmitted
     * at once from the callbacks. */
    assert_true(old_rw->retried <= (uint64_t)f.first_eretry);
    assert_int_equal(new_rw->retried, 0);
    assert_int_equal((uint64_t)f.eretry, st.retried);
    assert_true(f.checkouts_ok_old >= 1 && f.checkouts_ok_new >= 1);
    /* Bounded: the backoff caps at 200 ms, the promote takes well under
     * the rest. */
    assert_true(f.first_new_checkout_at - f.promote_at < (valgrind ? 60000u : 10000u));

    for (int i = 0; i < FO_WORKERS; i++)
        uv_close((uv_handle_t *)&f.w[i].again, NULL);
    pgw_pool_close(f.pool);
    uv_run(&f.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f.loop), 0);
    free(f.reqs);
}

int main(void)
{
    const struct CMUnitTest routing[] = {
        cmocka_unit_test(test_route_primary_first),
        cmocka_unit_test(test_route_standby_first),
    };
    const struct CMUnitTest failover[] = {
        cmocka_unit_test(test_failover),
    };
    int rc = cmocka_run_group_tests_name("routing", routing, NULL, NULL);
    rc |= cmocka_run_group_tests_name("failover", failover, pair_setup, pair_teardown);
    return rc;
}
