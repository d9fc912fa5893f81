/*
 * The blocking pool's routing (pool.h MULTI-HOST) against the primary and
 * its standby (the pgcluster and pgreplica fixtures), from several threads
 * at once: with route set and a host list naming both servers, one-shot
 * requests (pgw_client_pool_run) and checkouts without a flag are
 * answered by the primary, and those marked read-only (the descriptor's
 * route, PGW_POOL_READ_ONLY for a checkout) by the standby, as each server
 * says of itself (pg_is_in_recovery(), inet_server_port()).
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgwire/pool.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>

typedef struct router {
    pgw_client_pool_t *p;
    int ro, n;
    int primary_port, standby_port;
    int right, wrong, errors, first_error, retried;
    pthread_t th;
} router_t;

static const char *const whoami = "SELECT pg_is_in_recovery(), inet_server_port()";

static void tally(router_t *r, int rc, pgw_result_t *res)
{
    bool standby = false;
    int32_t port = 0;
    if (rc == 0 && pgw_result_bool(res, 0, 0, &standby) == 0 &&
        pgw_result_int4(res, 0, 1, &port) == 0) {
        int at_standby = port == r->standby_port && standby;
        int at_primary = port == r->primary_port && !standby;
        if (r->ro ? at_standby : at_primary) {
            r->right++;
        } else if (!r->wrong++) {
            print_message("%s work answered by port %d (in recovery: %d)\n",
                          r->ro ? "read-only" : "read-write", (int)port, (int)standby);
        }
    } else if (!r->errors++) {
        r->first_error = rc ? rc : PGW_EPROTO;
    }
    pgw_result_free(res);
}

static void *route_work(void *arg)
{
    router_t *r = arg;
    for (int i = 0; i < r->n; i++) {
        pgw_request_t q = PGW_QUERY(whoami, NULL, 0, NULL, NULL);
        if (r->ro) q.route = PGW_ROUTE_READ_ONLY;
        pgw_result_t *res = NULL;
        int rc;
        /* A connection still opening may reach the wrong server first and
         * leave it: what it carried never ran (PGW_ERETRY), and is
         * retried, as the async pool's routing test does. */
        for (int tries = 0; (rc = pgw_client_pool_run(r->p, &q, &res)) == PGW_ERETRY && tries < 50;
             tries++) {
            pgw_result_free(res);
            res = NULL;
            r->retried++;
        }
        tally(r, rc, res);
        pgw_client_t *c = NULL;
        rc = pgw_client_pool_acquire_flags(r->p, r->ro ? PGW_POOL_READ_ONLY : 0, 10000, &c);
        res = NULL;
        if (rc == 0) rc = pgw_client_query(c, whoami, NULL, 0, &res);
        tally(r, rc, res);
        if (c) pgw_client_pool_release(r->p, c);
    }
    return NULL;
}

static void test_blocking_pool_routes(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_replica();
    const char *ph = pgt_env_required("PGW_TEST_TCP_HOST"), *pp = pgt_env_required("PGPORT");
    const char *sh = pgt_replica_env("PGW_STANDBY_HOST"), *sp = pgt_replica_env("PGW_STANDBY_PORT");
    char hosts[128], ports[32], ci[1024] = "";
    snprintf(hosts, sizeof hosts, "%s,%s", sh, ph); /* the standby first */
    snprintf(ports, sizeof ports, "%s,%s", sp, pp);
    assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "host", hosts), 0);
    assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "port", ports), 0);
    assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "user", pgt_env_required("PGUSER")), 0);
    assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "dbname", pgt_env_required("PGDATABASE")),
                     0);
    assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "sslmode", "disable"), 0);
    /* The standby accepts read-only connections before the pool starts
     * (prefer-standby would otherwise take the primary). */
    char sci[1024] = "";
    assert_int_equal(pgt_conninfo_append(sci, sizeof sci, "host", sh), 0);
    assert_int_equal(pgt_conninfo_append(sci, sizeof sci, "port", sp), 0);
    assert_int_equal(pgt_conninfo_append(sci, sizeof sci, "user", pgt_env_required("PGUSER")), 0);
    assert_int_equal(pgt_conninfo_append(sci, sizeof sci, "dbname", pgt_env_required("PGDATABASE")),
                     0);
    assert_int_equal(pgt_conninfo_append(sci, sizeof sci, "target_session_attrs", "standby"), 0);
    pgw_client_t *probe = NULL;
    for (int i = 0; i < 200 && pgw_client_connect(&probe, sci, NULL) != 0; i++)
        usleep(50000);
    assert_non_null(probe);
    pgw_client_close(probe);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    /* Above the threads' peak (each of the six holds at most one
     * connection, plus those opening): at max_size with every connection
     * busy, read-only work may go to the primary (pool.h, MULTI-HOST),
     * which is not what this test is about (test_pool_core.c is). */
    cfg.max_size = 16;
    pgw_client_pool_t *p;
    assert_int_equal(pgw_client_pool_new(&p, ci, &cfg), 0);
    enum { NT = 6 };
    router_t rs[NT];
    for (int i = 0; i < NT; i++) {
        rs[i] = (router_t){
            .p = p, .ro = i % 2, .n = 20, .primary_port = atoi(pp), .standby_port = atoi(sp)};
        assert_int_equal(pthread_create(&rs[i].th, NULL, route_work, &rs[i]), 0);
    }
    int right = 0, retried = 0;
    for (int i = 0; i < NT; i++) /* every thread done before an assertion leaves */
        pthread_join(rs[i].th, NULL);
    for (int i = 0; i < NT; i++) {
        print_message("thread %d (%s): %d right, %d wrong, %d errors\n", i,
                      rs[i].ro ? "read-only" : "read-write", rs[i].right, rs[i].wrong,
                      rs[i].errors);
        if (rs[i].errors)
            fail_msg("thread %d: %d errors, first %s", i, rs[i].errors,
                     pgw_err_name(rs[i].first_error));
        assert_int_equal(rs[i].wrong, 0);
        right += rs[i].right;
        retried += rs[i].retried;
    }
    print_message("blocking pool, routed: %d answers, each from the right server (%d "
                  "PGW_ERETRY from connections that never came up, retried)\n",
                  right, retried);
    assert_int_equal(right, NT * 20 * 2);
    pgw_client_pool_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_pool_routes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
