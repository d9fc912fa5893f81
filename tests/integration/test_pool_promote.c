/*
 * A standby promoted under load, seen live through in_hot_standby.
 *
 * A private primary and standby (tests/pg/pg-cluster.sh and
 * tests/pg/pg-replica.sh in a temporary directory, never the shared
 * fixture, which other tests use). A routing pool over both (host list
 * primary, standby) carries a steady load of one-shot requests: read-only
 * ones (PGW_ROUTE_READ_ONLY, answered by the standby) and read-write ones
 * that take a transaction id (txid_current(), which a standby refuses).
 * Mid-load the standby is promoted with pg_promote() from a connection of
 * the test's own. The pool must hear in_hot_standby turn off on its
 * read-only connections there and make them read-write connections on the
 * same backends:
 *   - every request completes with status 0 (none lost, none retried, no
 *     connection lost);
 *   - no read-write request is answered by a server in recovery;
 *   - read-write requests are answered by the promoted server afterwards,
 *     by backends the pool had opened there before the promotion (their
 *     pg_backend_pid()), and the pool opened no connection there since;
 *   - pgw_pool_hosts shows the promoted server's read-write entry with
 *     promoted equal to the read-only connections it had there.
 * The same again with both servers behind a proxy (tests/common/pgproxy)
 * that drops their in_hot_standby reports, as a server before 14 never
 * sends one: the pool's own role check (every lag_check_ms) must find the
 * promotion, with the same results. Each test has a pair of its own.
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgproxy.h"
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

enum { CLIENTS = 16, MAX_PIDS = 64 };

static pgt_pair_t pair;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static int setup(void **state)
{
    (void)state;
    pgt_pair_start(&pair, "promote");
    return 0;
}

static void on_conn_up(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    if (status != 0) fail_msg("connect: %s", pgw_conn_error_message(conn));
    *(int *)ud = 1;
}

static void on_conn_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    *(int *)ud = 1;
}

/* Whether a connection to port (through a proxy or not) hears the server
 * report in_hot_standby. */
static int reports_hot_standby(uv_loop_t *loop, const char *port)
{
    char ci[512];
    pgt_pair_conninfo(&pair, ci, sizeof ci, port, NULL);
    pgw_conn_t *conn;
    int up = 0, closed = 0;
    assert_int_equal(pgw_conn_new(&conn, loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(conn, ci, on_conn_up, &up), 0);
    while (!up)
        uv_run(loop, UV_RUN_ONCE);
    int reports = pgw_session_parameter(pgw_conn_session(conn), "in_hot_standby") != NULL;
    pgw_conn_close(conn, on_conn_closed, &closed);
    while (!closed)
        uv_run(loop, UV_RUN_ONCE);
    return reports;
}

static int teardown(void **state)
{
    (void)state;
    pgt_pair_stop(&pair);
    return 0;
}

typedef struct pids {
    int32_t v[MAX_PIDS];
    int n;
} pids_t;

static int pids_has(const pids_t *s, int32_t pid)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == pid) return 1;
    return 0;
}

static void pids_add(pids_t *s, int32_t pid)
{
    if (pids_has(s, pid)) return;
    assert_true(s->n < MAX_PIDS);
    s->v[s->n++] = pid;
}

typedef struct load {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int32_t primary_port, standby_port;
    int phase; /* 0: before pg_promote; 1: it was sent; 2: it returned */
    int stop;
    int outstanding;
    int answered[2];     /* [ro] */
    int failed;          /* a status other than 0 */
    int warm_retries;    /* PGW_ERETRY while connections first open */
    int rw_in_recovery;  /* read-write answered by a standby */
    int rw_at_promoted;  /* read-write answered by the promoted server */
    int new_backend;     /* answered there by a backend first seen after phase 0 */
    pids_t standby_pids; /* the pool's backends on the standby before the promotion */
    int promoted;        /* pg_promote() returned true */
    uint64_t t_start, t_warm, t_promoted; /* now_ms() at the start, warm, pg_promote()'s answer */
} load_t;

typedef struct client {
    load_t *l;
    int ro;
} client_t;

static const char *const ro_sql = "SELECT pg_is_in_recovery(), inet_server_port(), "
                                  "pg_backend_pid()";
static const char *const rw_sql = "SELECT pg_is_in_recovery(), inet_server_port(), "
                                  "pg_backend_pid(), txid_current()";

static void client_send(client_t *c);

static void on_answer(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    load_t *l = c->l;
    l->outstanding--;
    if (status == PGW_ERETRY && l->phase == 0) {
        /* While connections open, one for read-only work may reach the
         * primary first and leave it, failing what it carried (pool.h,
         * MULTI-HOST): it never ran. The promotion must cause none. */
        pgw_result_free(res);
        l->warm_retries++;
        client_send(c);
        return;
    }
    if (status != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        print_message("request (%s) failed: %d %s\n", c->ro ? "ro" : "rw", status,
                      e ? e->message : "");
        l->failed++;
        pgw_result_free(res);
        return;
    }
    bool in_recovery;
    int32_t port, pid;
    assert_int_equal(pgw_result_nrows(res), 1);
    assert_int_equal(pgw_result_bool(res, 0, 0, &in_recovery), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &port), 0);
    assert_int_equal(pgw_result_int4(res, 0, 2, &pid), 0);
    pgw_result_free(res);
    l->answered[c->ro]++;
    if (port == l->standby_port) {
        if (l->phase == 0)
            pids_add(&l->standby_pids, pid);
        else if (!pids_has(&l->standby_pids, pid))
            l->new_backend++;
    }
    if (!c->ro) {
        if (in_recovery) l->rw_in_recovery++;
        if (port == l->standby_port) l->rw_at_promoted++;
    }
    if (!l->stop) client_send(c);
}

static void client_send(client_t *c)
{
    pgw_request_t r = PGW_SIMPLE(c->ro ? ro_sql : rw_sql, on_answer, c);
    if (c->ro) r.route = PGW_ROUTE_READ_ONLY;
    int rc = pgw_pool_submit(c->l->pool, &r);
    if (rc != 0) {
        print_message("submit refused: %d\n", rc);
        c->l->failed++;
        return;
    }
    c->l->outstanding++;
}

/* ---------------------------------------------------------- pg_promote() */

typedef struct promoter {
    load_t *l;
    pgw_conn_t *conn;
    int closed;
} promoter_t;

static void on_promoter_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((promoter_t *)ud)->closed = 1;
}

static void on_promoted(int status, pgw_result_t *res, void *ud)
{
    promoter_t *pr = ud;
    bool ok = false;
    if (status == 0) assert_int_equal(pgw_result_bool(res, 0, 0, &ok), 0);
    pgw_result_free(res);
    pr->l->promoted = ok;
    pr->l->phase = 2;
    pr->l->t_promoted = now_ms();
    pgw_conn_close(pr->conn, on_promoter_closed, pr);
}

static void on_promoter_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    promoter_t *pr = ud;
    if (status != 0) fail_msg("connect to the standby: %s", pgw_conn_error_message(conn));
    pgw_request_t r = PGW_SIMPLE("SELECT pg_promote()", on_promoted, pr);
    assert_int_equal(pgw_conn_submit(conn, &r), 0);
    pr->l->phase = 1;
}

/* The stats entry of port with flags, or NULL. */
static const pgw_pool_host_stats_t *host_entry(const pgw_pool_host_stats_t *h, size_t n,
                                               int32_t port, unsigned flags)
{
    char p[16];
    snprintf(p, sizeof p, "%" PRId32, port);
    for (size_t i = 0; i < n; i++)
        if (strcmp(h[i].port, p) == 0 && h[i].flags == flags) return &h[i];
    return NULL;
}

/* The pool is done growing and as many standby backends have answered as
 * it has read-only connections there: a standby backend first seen after
 * this is one the promotion made, not one a slow machine's warm-up opened
 * late. */
static bool standby_settled(const load_t *l, int32_t entry_port)
{
    pgw_pool_stats_t st;
    pgw_pool_stats(l->pool, &st);
    pgw_pool_host_stats_t hosts[8];
    size_t nh = pgw_pool_hosts(l->pool, hosts, 8);
    const pgw_pool_host_stats_t *ro =
        host_entry(hosts, nh < 8 ? nh : 8, entry_port, PGW_POOL_READ_ONLY);
    return st.opening == 0 && ro && l->standby_pids.n >= (int)ro->open;
}

/* The load, the promotion and the checks; with hide, the pool reaches
 * both servers through proxies that drop in_hot_standby. */
static void promote_under_load(int hide)
{
    static load_t l;
    memset(&l, 0, sizeof l);
    const char *pport = pgt_dir_env(pair.primary, "PGPORT");
    const char *sport = pgt_dir_env(pair.standby, "PGW_STANDBY_PORT");
    l.primary_port = atoi(pport);
    l.standby_port = atoi(sport);
    int valgrind = RUNNING_ON_VALGRIND;
    l.t_start = now_ms();
    uint64_t deadline = l.t_start + (valgrind ? 300000 : 90000);
    assert_int_equal(uv_loop_init(&l.loop), 0);
    /* The pool's host list, and the port its entries name the standby by. */
    pgt_proxy_t *px[2] = {NULL, NULL};
    char pool_pport[16], pool_sport[16];
    snprintf(pool_pport, sizeof pool_pport, "%s", pport);
    snprintf(pool_sport, sizeof pool_sport, "%s", sport);
    if (hide) {
        px[0] = pgt_proxy_start("127.0.0.1", (unsigned)l.primary_port);
        px[1] = pgt_proxy_start("127.0.0.1", (unsigned)l.standby_port);
        for (int i = 0; i < 2; i++)
            pgt_proxy_hide_parameter(px[i], "in_hot_standby");
        snprintf(pool_pport, sizeof pool_pport, "%u", pgt_proxy_port(px[0]));
        snprintf(pool_sport, sizeof pool_sport, "%u", pgt_proxy_port(px[1]));
        assert_true(reports_hot_standby(&l.loop, sport));
        assert_false(reports_hot_standby(&l.loop, pool_sport));
    }
    int32_t entry_port = atoi(pool_sport);
    char ci[1024];
    pgt_pair_conninfo(&pair, ci, sizeof ci, pool_pport, pool_sport);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.max_size = 8;
    cfg.pipeline_target = 4;
    cfg.lag_check_ms = 100; /* the role check of servers that do not report */
    assert_int_equal(pgw_pool_new(&l.pool, &l.loop, ci, &cfg), 0);

    static client_t clients[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        clients[i] = (client_t){.l = &l, .ro = i % 2};
        client_send(&clients[i]);
    }
    int warm = valgrind ? 200 : 2000;
    while ((l.answered[0] < warm || l.answered[1] < warm || !standby_settled(&l, entry_port)) &&
           !l.failed && now_ms() < deadline)
        uv_run(&l.loop, UV_RUN_ONCE);
    assert_int_equal(l.failed, 0);
    assert_true(l.answered[1] >= warm);
    assert_true(l.standby_pids.n > 0);
    assert_int_equal(l.rw_at_promoted, 0);
    l.t_warm = now_ms();
    pgw_pool_stats_t before;
    pgw_pool_stats(l.pool, &before);

    /* pg_promote() while the load runs. */
    promoter_t pr = {.l = &l};
    char sci[512];
    pgt_pair_conninfo(&pair, sci, sizeof sci, sport, NULL);
    assert_int_equal(pgw_conn_new(&pr.conn, &l.loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(pr.conn, sci, on_promoter_connected, &pr), 0);
    int after = valgrind ? 100 : 1000;
    while ((l.phase < 2 || l.rw_at_promoted < after) && !l.failed && now_ms() < deadline)
        uv_run(&l.loop, UV_RUN_ONCE);
    l.stop = 1;
    while ((l.outstanding || !pr.closed) && now_ms() < deadline)
        uv_run(&l.loop, UV_RUN_ONCE);
    if (now_ms() >= deadline)
        fail_msg("not done in time: phase %d, %d read-write answers from the promoted server, "
                 "%d outstanding; answers ro %d rw %d; warm after %" PRIu64
                 " ms, pg_promote() answered %" PRIu64 " ms after that, deadline %" PRIu64
                 " ms after the start",
                 l.phase, l.rw_at_promoted, l.outstanding, l.answered[1], l.answered[0],
                 l.t_warm - l.t_start, l.t_promoted ? l.t_promoted - l.t_warm : 0,
                 deadline - l.t_start);

    pgw_pool_stats_t st;
    pgw_pool_stats(l.pool, &st);
    pgw_pool_host_stats_t hosts[8];
    size_t nh = pgw_pool_hosts(l.pool, hosts, 8);
    assert_true(nh <= 8);
    const pgw_pool_host_stats_t *ro_at = host_entry(hosts, nh, entry_port, PGW_POOL_READ_ONLY);
    const pgw_pool_host_stats_t *rw_at = host_entry(hosts, nh, entry_port, 0);
    print_message("standby backends before: %d; answers ro %d rw %d, rw at the promoted server "
                  "%d; opened %" PRIu64 " -> %" PRIu64 ", promoted %" PRIu64 "\n",
                  l.standby_pids.n, l.answered[1], l.answered[0], l.rw_at_promoted, before.opened,
                  st.opened, rw_at ? rw_at->promoted : 0);

    assert_true(l.promoted);
    assert_int_equal(l.failed, 0);
    assert_int_equal(l.rw_in_recovery, 0);
    assert_true(l.rw_at_promoted >= after);
    assert_int_equal(l.new_backend, 0);
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.retried, before.retried);
    assert_int_equal(st.retried, (uint64_t)l.warm_retries);
    assert_non_null(ro_at);
    assert_non_null(rw_at);
    /* Every connection to the standby was made for read-only work before
     * the promotion and moved to read-write there: none opened since. */
    assert_int_equal(ro_at->opened, (uint64_t)l.standby_pids.n);
    assert_int_equal(rw_at->opened, 0);
    assert_int_equal(rw_at->promoted, (uint64_t)l.standby_pids.n);
    assert_int_equal(rw_at->open, (uint32_t)l.standby_pids.n);
    assert_int_equal(ro_at->open, 0);
    for (size_t i = 0; i < nh; i++)
        assert_int_equal(hosts[i].submitted, hosts[i].completed);

    pgw_pool_close(l.pool);
    uv_run(&l.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&l.loop), 0);
    for (int i = 0; i < 2; i++)
        pgt_proxy_stop(px[i]);
}

static void test_promote_under_load(void **state)
{
    (void)state;
    promote_under_load(0);
}

static void test_promote_without_in_hot_standby(void **state)
{
    (void)state;
    promote_under_load(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_promote_under_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_promote_without_in_hot_standby, setup, teardown),
    };
    return cmocka_run_group_tests_name("promote", tests, NULL, NULL);
}
