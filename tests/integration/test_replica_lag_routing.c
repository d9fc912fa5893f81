/*
 * Lag-aware routing over the shared fixtures (pool.h, STANDBY LAG): the
 * cluster, its standby (pgreplica) and a second standby that applies every
 * commit an hour late (pgreplica_delayed). A routing pool names all three
 * servers, the delayed standby first among the standbys (so the first
 * read-only connection, made with target_session_attrs=prefer-standby,
 * lands there), and limits a standby's lag to 1 MB of WAL. The test commits
 * 3 MB of WAL on the primary, so the delayed standby is behind by more
 * than the limit for the rest of the run while the other keeps up:
 *   - the pool measures the delayed standby behind (pgw_pool_hosts:
 *     behind, lag_bytes above the limit) and sends it no request: its
 *     read-only entry shows none submitted, no answer comes from its port
 *     (inet_server_port()), and its pg_stat_activity shows none of the
 *     test's reads;
 *   - the pool then opens a read-only connection on the servers not
 *     measured behind, finds the standby that keeps up, and read-only
 *     one-shot requests are answered there (the primary takes those of
 *     the meantime, and any while that one is measured behind under the
 *     other tests' writes), every answer checked.
 */
#define _DEFAULT_SOURCE
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

enum { READERS = 8, WANT_ON_STANDBY = 200 };
#define LAG_LIMIT_BYTES (1u << 20)

/* The marker lets pg_stat_activity tell the test's reads apart. */
static const char *const read_sql = "SELECT inet_server_port() /* pgw_lag_routing_read */";

typedef struct routing {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int32_t port[3]; /* primary, standby, delayed standby */
    int stop;
    int outstanding;
    int failed;
    int retried;
    int at[3]; /* answers by server */
} routing_t;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static void reader_send(routing_t *r);

static void on_read(int status, pgw_result_t *res, void *ud)
{
    routing_t *r = ud;
    r->outstanding--;
    if (status == PGW_ERETRY) {
        /* It never ran: sent on a connection still opening that left the
         * first server it reached (pool.h, MULTI-HOST). */
        r->retried++;
    } else if (status != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        print_message("read failed: %s %s\n", pgw_err_name(status), e ? e->message : "");
        r->failed++;
    } else {
        int32_t port = -1;
        assert_int_equal(pgw_result_int4(res, 0, 0, &port), 0);
        int i = 0;
        while (i < 3 && r->port[i] != port)
            i++;
        if (i == 3) fail_msg("an answer from port %" PRId32 ", none of the servers", port);
        r->at[i]++;
    }
    pgw_result_free(res);
    if (!r->stop) reader_send(r);
}

static void reader_send(routing_t *r)
{
    pgw_request_t q = PGW_SIMPLE(read_sql, on_read, r);
    q.route = PGW_ROUTE_READ_ONLY;
    int rc = pgw_pool_submit(r->pool, &q);
    if (rc != 0) {
        print_message("read refused: %s\n", pgw_err_name(rc));
        r->failed++;
        return;
    }
    r->outstanding++;
}

/* The read-only entry of the server on port i, or NULL. */
static bool host_entry(routing_t *r, int i, pgw_pool_host_stats_t *out)
{
    pgw_pool_host_stats_t h[8];
    size_t n = pgw_pool_hosts(r->pool, h, 8);
    char port[16];
    snprintf(port, sizeof port, "%" PRId32, r->port[i]);
    for (size_t k = 0; k < n && k < 8; k++) {
        if (strcmp(h[k].port, port) == 0 && h[k].flags == PGW_POOL_READ_ONLY) {
            *out = h[k];
            return true;
        }
    }
    return false;
}

static bool delayed_held_back(routing_t *r)
{
    pgw_pool_host_stats_t h;
    return host_entry(r, 2, &h) && h.lag_checks >= 2 && h.behind;
}

/* A statement on a server of its own connection (blocking client). */
static int64_t scalar_on(const char *port, const char *sql)
{
    char ci[512];
    pgt_conninfo_at(ci, sizeof ci, "127.0.0.1", port, "sslmode=disable");
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    pgw_result_t *res = NULL;
    int rc = pgw_client_query(c, sql, NULL, 0, &res);
    if (rc != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        fail_msg("%s on port %s: %s %s", sql, port, pgw_err_name(rc), e ? e->message : "");
    }
    int64_t v = 0;
    if (pgw_result_nrows(res) > 0) assert_int_equal(pgw_result_int8(res, 0, 0, &v), 0);
    pgw_result_free(res);
    pgw_client_close(c);
    return v;
}

static void test_delayed_standby_gets_no_reads(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_replica();
    pgt_require_replica_delayed();
    const char *ports[3] = {pgt_env_required("PGPORT"), pgt_replica_env("PGW_STANDBY_PORT"),
                            pgt_replica_delayed_env("PGW_STANDBY_PORT")};
    assert_non_null(ports[1]);
    assert_non_null(ports[2]);
    static routing_t r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < 3; i++)
        r.port[i] = atoi(ports[i]);
    int valgrind = RUNNING_ON_VALGRIND;
    uint64_t deadline = now_ms() + (valgrind ? 300000 : 90000);

    /* A commit the delayed standby holds back for an hour, then 3 MB of
     * WAL behind it. (Its replay stops at the held commit record: WAL
     * written before that commit is replayed, so the table's own contents
     * would not put it behind in bytes, only in visibility.) */
    char table[64], sql[256];
    snprintf(table, sizeof table, "pgw_lag_routing_%d", (int)getpid());
    snprintf(sql, sizeof sql, "CREATE TABLE %s (g int4, pad text)", table);
    scalar_on(ports[0], sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s SELECT g, repeat('x', 1000) FROM generate_series(1, 3000) g", table);
    scalar_on(ports[0], sql);

    char ci[1024], port_list[64];
    snprintf(port_list, sizeof port_list, "%s,%s,%s", ports[0], ports[2], ports[1]);
    pgt_conninfo_at(ci, sizeof ci, "127.0.0.1,127.0.0.1,127.0.0.1", port_list, "sslmode=disable");
    assert_int_equal(uv_loop_init(&r.loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.min_size = 1; /* a read-write connection measures the primary's position */
    cfg.max_size = 8;
    cfg.pipeline_target = 4;
    cfg.max_standby_lag_bytes = LAG_LIMIT_BYTES;
    cfg.lag_check_ms = 100;
    assert_int_equal(pgw_pool_new(&r.pool, &r.loop, ci, &cfg), 0);

    /* Readers run until the delayed standby has been measured behind and
     * the other standby has answered enough of them. */
    for (int i = 0; i < READERS; i++)
        reader_send(&r);
    while ((!delayed_held_back(&r) || r.at[1] < WANT_ON_STANDBY) && !r.failed &&
           now_ms() < deadline)
        uv_run(&r.loop, UV_RUN_ONCE);
    r.stop = 1;
    while (r.outstanding > 0 && now_ms() < deadline)
        uv_run(&r.loop, UV_RUN_ONCE);

    pgw_pool_host_stats_t sb, dl;
    assert_true(host_entry(&r, 1, &sb));
    bool dl_known = host_entry(&r, 2, &dl);
    print_message("reads: %d by the primary, %d by the standby, %d by the delayed standby, %d "
                  "PGW_ERETRY (sent again); "
                  "standby lag %" PRId64 " bytes (%" PRIu64 " measures, behind %u), delayed "
                  "standby lag %" PRId64 " bytes (%" PRIu64 " measures, behind %u, %" PRIu64
                  " requests submitted there)\n",
                  r.at[0], r.at[1], r.at[2], r.retried, sb.lag_bytes, sb.lag_checks, sb.behind,
                  dl_known ? dl.lag_bytes : -1, dl_known ? dl.lag_checks : 0,
                  dl_known ? dl.behind : 0, dl_known ? dl.submitted : 0);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.outstanding, 0);
    assert_true(dl_known);
    assert_true(dl.behind);
    assert_true(dl.lag_bytes > (int64_t)LAG_LIMIT_BYTES);
    assert_int_equal(dl.submitted, 0);
    assert_int_equal(r.at[2], 0);
    assert_true(r.at[1] >= WANT_ON_STANDBY);
    assert_int_equal(sb.submitted, sb.completed);
    assert_int_equal(scalar_on(ports[2], "SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                         "'%pgw_lag_routing_read */' AND pid <> pg_backend_pid()"),
                     0);

    pgw_pool_close(r.pool);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&r.loop), 0);
    snprintf(sql, sizeof sql, "DROP TABLE %s", table);
    scalar_on(ports[0], sql);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delayed_standby_gets_no_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
