/*
 * target_session_attrs against a real primary and its streaming standby
 * (the pgcluster and pgreplica fixtures: tests/pg/pg-replica.sh): for every
 * value (any, read-write, read-only, primary, standby, prefer-standby) and
 * host lists naming both servers in both orders, or only one of them, the
 * server chosen is the one the rule picks, asked of the server itself
 * (pg_is_in_recovery(), inet_server_port()), at the pgw_conn level and at
 * the blocking client level; and libpq 15's PQconnectdb, given the same
 * connection string, chooses the same server (or fails the same way).
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>
#include <libpq-fe.h>

/* Which server answered: its recovery state and port; ok 0 when the
 * connect failed. */
typedef struct answer {
    int ok;
    int status; /* libpgwire's connect or query status (0 for libpq) */
    bool in_recovery;
    int32_t port;
} answer_t;

typedef struct server {
    const char *host;
    const char *port;
    bool standby;
} server_t;

static server_t primary, standby;

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_replica();
    primary.host = pgt_env_required("PGW_TEST_TCP_HOST");
    primary.port = pgt_env_required("PGPORT");
    primary.standby = false;
    standby.host = pgt_replica_env("PGW_STANDBY_HOST");
    standby.port = pgt_replica_env("PGW_STANDBY_PORT");
    standby.standby = true;
    return 0;
}

/* ------------------------------------------------------------ the choosers */

static const char *const query = "SELECT pg_is_in_recovery(), inet_server_port()";

static void read_answer(int status, const pgw_result_t *res, answer_t *a)
{
    a->status = status;
    if (status != 0) return;
    assert_int_equal(pgw_result_nrows(res), 1);
    assert_int_equal(pgw_result_bool(res, 0, 0, &a->in_recovery), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &a->port), 0);
    a->ok = 1;
}

typedef struct conn_ctx {
    answer_t *a;
    int done;
    pgw_conn_t *conn;
} conn_ctx_t;

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((conn_ctx_t *)ud)->done = 1;
}

static void on_answer(int status, pgw_result_t *res, void *ud)
{
    conn_ctx_t *x = ud;
    read_answer(status, res, x->a);
    pgw_result_free(res);
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), 0);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    conn_ctx_t *x = ud;
    if (status != 0) {
        x->a->status = status;
        assert_int_equal(pgw_conn_close(conn, on_closed, x), 0);
        return;
    }
    assert_int_equal(pgw_conn_simple_query(conn, query, on_answer, x), 0);
}

/* pgw_conn_t on a loop of its own; the simple query reads text, which
 * pgw_result_bool and pgw_result_int4 decode as well as binary. */
static void ask_conn(const char *ci, answer_t *a)
{
    memset(a, 0, sizeof *a);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    conn_ctx_t x = {a, 0, NULL};
    assert_int_equal(pgw_conn_new(&x.conn, &loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(x.conn, ci, on_connect, &x), 0);
    while (!x.done)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* The blocking client, with an extended query (binary results). */
static void ask_client(const char *ci, answer_t *a)
{
    memset(a, 0, sizeof *a);
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect(&c, ci, NULL);
    if (rc != 0) {
        assert_null(c);
        a->status = rc;
        return;
    }
    pgw_result_t *res = NULL;
    rc = pgw_client_query(c, query, NULL, 0, &res);
    read_answer(rc, res, a);
    pgw_result_free(res);
    pgw_client_close(c);
}

static void ask_libpq(const char *ci, answer_t *a)
{
    memset(a, 0, sizeof *a);
    PGconn *pq = PQconnectdb(ci);
    assert_non_null(pq);
    if (PQstatus(pq) == CONNECTION_OK) {
        PGresult *r = PQexec(pq, query);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        a->in_recovery = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
        a->port = (int32_t)atoi(PQgetvalue(r, 0, 1));
        a->ok = 1;
        PQclear(r);
    }
    PQfinish(pq);
}

/* ------------------------------------------------------------------ cases */

/* The server the rule of target_session_attrs picks from list[0..n), or
 * NULL when none matches (libpq's order: the first acceptable host;
 * prefer-standby falls back to the first host that answers). */
static const server_t *expected(const char *tsa, const server_t *const *list, size_t n)
{
    int want_standby = -1; /* -1: any */
    if (strcmp(tsa, "read-write") == 0 || strcmp(tsa, "primary") == 0) want_standby = 0;
    if (strcmp(tsa, "read-only") == 0 || strcmp(tsa, "standby") == 0 ||
        strcmp(tsa, "prefer-standby") == 0)
        want_standby = 1;
    for (size_t i = 0; i < n; i++) {
        if (want_standby < 0 || (int)list[i]->standby == want_standby) return list[i];
    }
    if (strcmp(tsa, "prefer-standby") == 0 && n > 0) return list[0];
    return NULL;
}

static void conninfo_for(char *buf, size_t len, const char *tsa, const server_t *const *list,
                         size_t n)
{
    char hosts[256] = "", ports[64] = "";
    for (size_t i = 0; i < n; i++) {
        size_t h = strlen(hosts), p = strlen(ports);
        snprintf(hosts + h, sizeof hosts - h, "%s%s", i ? "," : "", list[i]->host);
        snprintf(ports + p, sizeof ports - p, "%s%s", i ? "," : "", list[i]->port);
    }
    buf[0] = '\0';
    assert_int_equal(pgt_conninfo_append(buf, len, "host", hosts), 0);
    assert_int_equal(pgt_conninfo_append(buf, len, "port", ports), 0);
    assert_int_equal(pgt_conninfo_append(buf, len, "user", pgt_env_required("PGUSER")), 0);
    assert_int_equal(pgt_conninfo_append(buf, len, "dbname", pgt_env_required("PGDATABASE")), 0);
    assert_int_equal(pgt_conninfo_append(buf, len, "target_session_attrs", tsa), 0);
    /* what is tested is the choice of server, not TLS (kept fast under
     * valgrind) */
    assert_int_equal(pgt_conninfo_append(buf, len, "sslmode", "disable"), 0);
}

static void expect_answer(const char *who, const char *ci, const answer_t *a, const server_t *want)
{
    if (want == NULL) {
        if (a->ok)
            fail_msg("%s: %s connected to port %d; no server should match", who, ci, a->port);
        return;
    }
    if (!a->ok)
        fail_msg("%s: %s failed (%s); expected the %s on port %s", who, ci, pgw_err_name(a->status),
                 want->standby ? "standby" : "primary", want->port);
    if (a->port != atoi(want->port) || a->in_recovery != want->standby)
        fail_msg("%s: %s chose port %d (in recovery: %d); expected the %s on port %s", who, ci,
                 a->port, a->in_recovery, want->standby ? "standby" : "primary", want->port);
}

static const char *const all_tsa[] = {"any",     "read-write", "read-only",
                                      "primary", "standby",    "prefer-standby"};

static void run_lists(const server_t *const *list, size_t n)
{
    for (size_t t = 0; t < sizeof all_tsa / sizeof all_tsa[0]; t++) {
        char ci[1024];
        conninfo_for(ci, sizeof ci, all_tsa[t], list, n);
        const server_t *want = expected(all_tsa[t], list, n);
        answer_t conn, client, pq;
        ask_libpq(ci, &pq);
        ask_conn(ci, &conn);
        ask_client(ci, &client);
        print_message("%-15s %-10s -> %s (libpq: %s)\n", all_tsa[t], n == 2 ? "both" : "one",
                      conn.ok ? (conn.in_recovery ? "standby" : "primary")
                              : pgw_err_name(conn.status),
                      pq.ok ? (pq.in_recovery ? "standby" : "primary") : "fails");
        expect_answer("libpq", ci, &pq, want);
        expect_answer("pgw_conn", ci, &conn, want);
        expect_answer("pgw_client", ci, &client, want);
        if (want == NULL) {
            /* every server was reached, none matched */
            assert_int_equal(conn.status, PGW_ETARGET);
            assert_int_equal(client.status, PGW_ETARGET);
        }
    }
}

static void test_primary_first(void **state)
{
    (void)state;
    const server_t *list[] = {&primary, &standby};
    run_lists(list, 2);
}

static void test_standby_first(void **state)
{
    (void)state;
    const server_t *list[] = {&standby, &primary};
    run_lists(list, 2);
}

/* One server only: the values that cannot match it fail with PGW_ETARGET
 * (as libpq fails), prefer-standby falls back to the primary. */
static void test_primary_alone(void **state)
{
    (void)state;
    const server_t *list[] = {&primary};
    run_lists(list, 1);
}

static void test_standby_alone(void **state)
{
    (void)state;
    const server_t *list[] = {&standby};
    run_lists(list, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primary_first),
        cmocka_unit_test(test_standby_first),
        cmocka_unit_test(test_primary_alone),
        cmocka_unit_test(test_standby_alone),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
