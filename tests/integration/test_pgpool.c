/*
 * Through pgpool-II 4.3 in streaming-replication mode with load balancing
 * (the pgpool fixture, tests/pg/pgpool.sh: backend 0 the cluster, backend 1
 * its standby of the pgreplica fixture, backend 2 the standby an hour
 * behind of the pgreplica_delayed fixture, weight 0: every answer's port
 * checked below is the primary's or the first standby's, never its):
 *
 *   - every statement-cache mode (PGW_STMT_CACHE_AUTO: statements prepared
 *     by name; PGW_STMT_CACHE_OFF; PGW_STMT_UNNAMED) with repeated
 *     parameterized queries, a pipelined batch, SQL PREPARE / EXECUTE,
 *     protocol-level PREPARE / EXECUTE (where the mode allows it) and a
 *     transaction: every result checked, none wrong, no error;
 *   - reads are load-balanced: fresh sessions' read-only queries answer from
 *     both servers (current_setting('port')), and whatever ran in a
 *     transaction that wrote answers from the primary;
 *   - a mixed load through the libpgwire pool (transactions that write,
 *     read-only one-shots) with pgpool restarted mid-run: every request
 *     succeeds with the right result or fails with a connection-loss error,
 *     none hangs, and requests succeed again after the restart.
 *
 * PGW_TEST_PGPOOL_OPS sets the number of requests of the mixed load.
 */
#define _DEFAULT_SOURCE
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/pool.h"

#include <libpq-fe.h>

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

static const char *pool_env(const char *key)
{
    return pgt_env_file_get(PGW_TEST_PGPOOL_ENV_FILE, key);
}

static int primary_port(void)
{
    return atoi(pool_env("PGW_PGPOOL_PRIMARY_PORT"));
}

static int standby_port(void)
{
    return atoi(pool_env("PGW_PGPOOL_STANDBY_PORT"));
}

static char *pgpool_conninfo(char *buf, size_t n)
{
    buf[0] = '\0';
    assert_int_equal(pgt_conninfo_append(buf, n, "host", pool_env("PGW_PGPOOL_HOST")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "port", pool_env("PGW_PGPOOL_PORT")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "user", pool_env("PGW_PGPOOL_USER")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", pool_env("PGW_PGPOOL_DB")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "application_name", "pgw_test_pgpool"), 0);
    return buf;
}

/* One statement straight to the primary (not through pgpool). */
static void direct_exec(const char *sql)
{
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, sql);
    pgw_client_close(c);
}

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    if (pool_env("PGW_PGPOOL_PORT") == NULL)
        fail_msg("no pgpool fixture: %s is missing (ctest starts it as the pgpool fixture; by "
                 "hand: bash tests/pg/pgpool.sh start DIR CLUSTER_ENV)",
                 PGW_TEST_PGPOOL_ENV_FILE);
    direct_exec("DROP TABLE IF EXISTS pgw_pgpool_t; "
                "CREATE TABLE pgw_pgpool_t (k int8 PRIMARY KEY, v int8)");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    direct_exec("DROP TABLE IF EXISTS pgw_pgpool_t");
    return 0;
}

static int64_t int8_at(const pgw_result_t *res, size_t row, size_t col)
{
    int64_t v = INT64_MIN;
    if (res == NULL || pgw_result_int8(res, row, col, &v) != 0) return INT64_MIN;
    return v;
}

static const char *err_text(int rc, const pgw_result_t *res)
{
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    return e && e->message ? e->message : pgw_err_name(rc);
}

/* ------------------------------------------------ (a) modes and features */

typedef struct counts {
    uint64_t checked, wrong;
} counts_t;

static void check(counts_t *n, int ok, const char *what)
{
    n->checked++;
    if (!ok) {
        n->wrong++;
        print_message("wrong result: %s\n", what);
    }
}

/* Run req on c: must succeed (the test fails naming what otherwise). */
static pgw_result_t *run_ok(pgw_client_t *c, const pgw_request_t *req, const char *what)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_run(c, req, &res);
    if (rc != 0) fail_msg("%s through pgpool: %s", what, err_text(rc, res));
    return res;
}

static void repeated_queries(pgw_client_t *c, counts_t *n)
{
    for (int i = 0; i < 20; i++) {
        pgw_param_t p[1] = {pgw_int8(i)};
        pgw_request_t q =
            PGW_QUERY("SELECT $1::int8 * 3, current_setting('port')::int8", p, 1, NULL, NULL);
        pgw_result_t *res = run_ok(c, &q, "a parameterized query");
        int64_t port = int8_at(res, 0, 1);
        check(n, int8_at(res, 0, 0) == 3 * i && (port == primary_port() || port == standby_port()),
              "parameterized query");
        pgw_result_free(res);
    }
}

/* BEGIN, INSERT, UPDATE ... RETURNING, SELECT, COMMIT pipelined in one sync
 * group (one write). The explicit BEGIN is what keeps pgpool from
 * load-balancing the SELECT: see test_unwrapped_pipeline_read_balanced. */
static void pipelined_batch(pgw_client_t *c, counts_t *n, int64_t k)
{
    pgw_param_t p[2] = {pgw_int8(k), pgw_int8(k * 10)};
    pgw_request_t b[5] = {
        PGW_QUERY("BEGIN", NULL, 0, NULL, NULL),
        PGW_QUERY("INSERT INTO pgw_pgpool_t VALUES ($1, $2)", p, 2, NULL, NULL),
        PGW_QUERY("UPDATE pgw_pgpool_t SET v = v + 1 WHERE k = $1 RETURNING v", p, 1, NULL, NULL),
        PGW_QUERY("SELECT v, current_setting('port')::int8 FROM pgw_pgpool_t WHERE k = $1", p, 1,
                  NULL, NULL),
        PGW_QUERY("COMMIT", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[5] = {NULL, NULL, NULL, NULL, NULL};
    int st[5];
    int rc = pgw_client_run_batch(c, b, 5, 0, res, st);
    for (int i = 0; rc != 0 && i < 5; i++) {
        if (st[i] != 0 && st[i] != PGW_EABORTED)
            fail_msg("request %d of a pipelined batch through pgpool: %s", i,
                     err_text(st[i], res[i]));
    }
    check(n, pgw_result_rows_affected(res[1]) == 1, "batch INSERT");
    check(n, int8_at(res[2], 0, 0) == k * 10 + 1, "batch UPDATE RETURNING");
    check(n, int8_at(res[3], 0, 0) == k * 10 + 1 && int8_at(res[3], 0, 1) == primary_port(),
          "batch SELECT (on the primary)");
    for (int i = 0; i < 5; i++)
        pgw_result_free(res[i]);
}

static void sql_prepare_execute(pgw_client_t *c, counts_t *n)
{
    pgw_request_t prep = PGW_SIMPLE("PREPARE pgw_pp(int8) AS SELECT $1 + 1", NULL, NULL);
    pgw_result_free(run_ok(c, &prep, "SQL PREPARE"));
    for (int i = 0; i < 5; i++) {
        char sql[64];
        snprintf(sql, sizeof sql, "EXECUTE pgw_pp(%d)", 40 + i);
        pgw_request_t ex = PGW_SIMPLE(sql, NULL, NULL);
        pgw_result_t *res = run_ok(c, &ex, "SQL EXECUTE");
        check(n, int8_at(res, 0, 0) == 41 + i, "SQL EXECUTE");
        pgw_result_free(res);
    }
    pgw_request_t dealloc = PGW_SIMPLE("DEALLOCATE pgw_pp", NULL, NULL);
    pgw_result_free(run_ok(c, &dealloc, "DEALLOCATE"));
}

static void protocol_prepare_execute(pgw_client_t *c, counts_t *n, int unnamed)
{
    pgw_request_t prep = PGW_PREPARE("pgw_proto", "SELECT $1::int8 * 5", NULL, 0, NULL, NULL);
    pgw_result_t *res = NULL;
    int rc = pgw_client_run(c, &prep, &res);
    pgw_result_free(res);
    if (unnamed) {
        /* the mode refuses named statements before anything is sent */
        check(n, rc == PGW_ENOTSUP, "PGW_STMT_UNNAMED refuses a named PREPARE");
        return;
    }
    if (rc != 0) fail_msg("PREPARE through pgpool: %s", pgw_err_name(rc));
    for (int i = 0; i < 5; i++) {
        pgw_param_t p[1] = {pgw_int8(i + 1)};
        pgw_request_t ex = PGW_EXECUTE("pgw_proto", p, 1, NULL, NULL);
        res = run_ok(c, &ex, "EXECUTE of a named statement");
        check(n, int8_at(res, 0, 0) == 5 * (i + 1), "EXECUTE of a named statement");
        pgw_result_free(res);
    }
    pgw_request_t cl = PGW_CLOSE("pgw_proto", NULL, NULL);
    pgw_result_free(run_ok(c, &cl, "CLOSE of a named statement"));
}

/* A transaction that writes: every statement in it on the primary, and it
 * sees its own rows. */
static void transaction(pgw_client_t *c, counts_t *n, int64_t k)
{
    pgw_param_t p[2] = {pgw_int8(k), pgw_int8(k * 2)};
    pgw_request_t begin = PGW_SIMPLE("BEGIN", NULL, NULL);
    pgw_request_t ins = PGW_QUERY("INSERT INTO pgw_pgpool_t VALUES ($1, $2)", p, 2, NULL, NULL);
    pgw_request_t sel =
        PGW_QUERY("SELECT v, current_setting('port')::int8, current_setting('in_hot_standby') "
                  "= 'off' FROM pgw_pgpool_t WHERE k = $1",
                  p, 1, NULL, NULL);
    pgw_request_t commit = PGW_SIMPLE("COMMIT", NULL, NULL);
    pgw_result_free(run_ok(c, &begin, "BEGIN"));
    pgw_result_free(run_ok(c, &ins, "INSERT in a transaction"));
    pgw_result_t *res = run_ok(c, &sel, "SELECT in a transaction");
    check(n, int8_at(res, 0, 0) == k * 2 && int8_at(res, 0, 1) == primary_port(),
          "SELECT of the transaction's own row, on the primary");
    pgw_result_free(res);
    pgw_result_free(run_ok(c, &commit, "COMMIT"));
}

static void run_mode(uint32_t mode, const char *name, int64_t key_base)
{
    char ci[1024];
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.stmt_cache_mode = mode;
    pgw_client_t *c = NULL;
    char err[512];
    if (pgw_client_connect_err(&c, pgpool_conninfo(ci, sizeof ci), &cfg, err, sizeof err) != 0)
        fail_msg("connect through pgpool: %s", err);
    counts_t n = {0, 0};
    for (int round = 0; round < 3; round++) {
        repeated_queries(c, &n);
        pipelined_batch(c, &n, key_base + round * 2);
        sql_prepare_execute(c, &n);
        protocol_prepare_execute(c, &n, mode == PGW_STMT_UNNAMED);
        transaction(c, &n, key_base + round * 2 + 1);
    }
    pgw_stmt_cache_stats_t cs;
    pgw_client_stmt_cache_stats(c, &cs);
    pgw_client_close(c);
    print_message("%s: %" PRIu64 " results checked, %" PRIu64
                  " wrong; statement cache hits %" PRIu64 "\n",
                  name, n.checked, n.wrong, cs.hits);
    assert_int_equal(n.wrong, 0);
    if (mode == PGW_STMT_CACHE_AUTO) assert_true(cs.hits > 0); /* named statements were used */
}

static void test_cache_modes(void **state)
{
    (void)state;
    run_mode(PGW_STMT_CACHE_AUTO, "PGW_STMT_CACHE_AUTO", 1000);
    run_mode(PGW_STMT_CACHE_OFF, "PGW_STMT_CACHE_OFF", 2000);
    run_mode(PGW_STMT_UNNAMED, "PGW_STMT_UNNAMED", 3000);
}

/* ------------------------------------------------- (c) load balancing */

/* pgpool picks a session's load-balance node when it connects (weights
 * 1:1): over 20 sessions both servers answer read-only queries. */
static void test_reads_load_balanced(void **state)
{
    (void)state;
    char ci[1024];
    pgpool_conninfo(ci, sizeof ci);
    int on_primary = 0, on_standby = 0;
    for (int i = 0; i < 20; i++) {
        pgw_client_t *c = NULL;
        assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
        pgw_request_t q = PGW_QUERY("SELECT current_setting('port')::int8, "
                                    "current_setting('in_hot_standby')",
                                    NULL, 0, NULL, NULL);
        pgw_result_t *res = run_ok(c, &q, "a read-only query");
        pgw_str_t hs;
        assert_int_equal(pgw_result_text(res, 0, 1, &hs), 0);
        int64_t port = int8_at(res, 0, 0);
        int standby = hs.len == 2 && memcmp(hs.p, "on", 2) == 0;
        if (port == primary_port() && !standby)
            on_primary++;
        else if (port == standby_port() && standby)
            on_standby++;
        else
            fail_msg("a read answered from port %" PRId64 " (hot standby: %.*s)", port, (int)hs.len,
                     hs.p);
        pgw_result_free(res);
        pgw_client_close(c);
    }
    print_message("20 sessions' reads: %d on the primary, %d on the standby\n", on_primary,
                  on_standby);
    assert_true(on_primary > 0);
    assert_true(on_standby > 0);
}

/* pgpool answers every session's startup with the primary's parameters
 * (in_hot_standby off, default_transaction_read_only off), whichever node
 * the session's reads are balanced to: to target_session_attrs it is a
 * primary. libpgwire and libpq 15 accept and refuse the same values. */
static void test_target_session_attrs(void **state)
{
    (void)state;
    static const struct {
        const char *attrs;
        int accepted;
    } cases[] = {
        {"any", 1},       {"read-write", 1}, {"primary", 1},
        {"read-only", 0}, {"standby", 0},    {"prefer-standby", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ci[1024];
        pgpool_conninfo(ci, sizeof ci);
        assert_int_equal(pgt_conninfo_append(ci, sizeof ci, "target_session_attrs", cases[i].attrs),
                         0);
        pgw_client_t *c = NULL;
        int rc = pgw_client_connect(&c, ci, NULL);
        PGconn *pq = PQconnectdb(ci);
        int pq_ok = PQstatus(pq) == CONNECTION_OK;
        PQfinish(pq);
        print_message("target_session_attrs=%s: libpgwire %s, libpq %s\n", cases[i].attrs,
                      rc == 0 ? "accepted" : pgw_err_name(rc), pq_ok ? "accepted" : "refused");
        assert_int_equal(rc == 0, pq_ok);
        assert_int_equal(rc == 0, cases[i].accepted);
        if (!cases[i].accepted) assert_int_equal(rc, PGW_ETARGET);
        pgw_client_close(c);
    }
}

/* A session whose load-balance node is the standby (its first read
 * answered from there), or NULL after 40 tries. */
static pgw_client_t *standby_balanced_session(void)
{
    char ci[1024];
    pgpool_conninfo(ci, sizeof ci);
    for (int i = 0; i < 40; i++) {
        pgw_client_t *c = NULL;
        assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
        pgw_request_t q = PGW_QUERY("SELECT current_setting('port')::int8", NULL, 0, NULL, NULL);
        pgw_result_t *res = run_ok(c, &q, "a read-only query");
        int64_t port = int8_at(res, 0, 0);
        pgw_result_free(res);
        if (port == standby_port()) return c;
        pgw_client_close(c);
    }
    return NULL;
}

/* pgpool 4.3 tracks transactions by ReadyForQuery: a SELECT pipelined after
 * an INSERT in the same sync group but with no BEGIN (one implicit
 * transaction for the server) is sent to the session's load-balance node,
 * the standby, which has not seen the INSERT (disable_load_balance_on_write
 * = 'transaction' does not cover it). Asserted so that the advice of
 * examples/pgbouncer-replicas/README.md (wrap such a group in BEGIN/COMMIT)
 * is seen to be needed. */
static void test_unwrapped_pipeline_read_balanced(void **state)
{
    (void)state;
    pgw_client_t *c = standby_balanced_session();
    assert_non_null(c);
    pgw_param_t p[2] = {pgw_int8(900001), pgw_int8(1)};
    pgw_request_t b[2] = {
        PGW_QUERY("INSERT INTO pgw_pgpool_t VALUES ($1, $2)", p, 2, NULL, NULL),
        PGW_QUERY("SELECT current_setting('port')::int8", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[2] = {NULL, NULL};
    int st[2];
    int rc = pgw_client_run_batch(c, b, 2, 0, res, st);
    if (rc != 0) fail_msg("an INSERT and a SELECT pipelined: %s", err_text(rc, res[0]));
    int64_t port = int8_at(res[1], 0, 0);
    print_message("a SELECT pipelined after an INSERT without BEGIN answered from the %s\n",
                  port == standby_port() ? "standby" : "primary");
    assert_int_equal(port, standby_port());
    for (int i = 0; i < 2; i++)
        pgw_result_free(res[i]);
    pgw_client_close(c);
}

/* ------------------------------------ (b) mixed load, pgpool restarted */

enum { NTHREADS = 4 };

typedef struct load {
    pgw_client_pool_t *pool;
    int total;
    int64_t key_base; /* the rows this run inserts: key_base + request number */
    pthread_mutex_t mu;
    int next;      /* the next request's number */
    int done;      /* requests finished */
    int restarted; /* 1 once pgpool was restarted */
    uint64_t ok, ok_after, lost, wrong, other;
    uint64_t lost_retry, lost_connlost; /* of lost: PGW_ERETRY, PGW_ECONNLOST */
    uint64_t reads_primary, reads_standby;
} load_t;

/* A connection-loss failure: the request may or may not have run. */
static int is_loss(int rc, const pgw_result_t *res)
{
    if (rc == PGW_ERETRY || rc == PGW_ECONNLOST || rc == PGW_ECANCELED || rc == PGW_ECONNECT ||
        rc == PGW_ECLOSED || rc == PGW_EPOOLTIMEOUT || pgw_is_system_error(rc))
        return 1;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    /* FATAL at shutdown (57P01..), or pgpool's own errors when a backend
     * connection went away (08xxx) */
    return rc == PGW_ESERVER && e && e->sqlstate &&
           (strncmp(e->sqlstate, "57", 2) == 0 || strncmp(e->sqlstate, "08", 2) == 0);
}

static void tally(load_t *l, int rc, const pgw_result_t *res, int correct, int64_t port)
{
    pthread_mutex_lock(&l->mu);
    if (rc == 0 && correct) {
        l->ok++;
        if (l->restarted) l->ok_after++;
        if (port == primary_port()) l->reads_primary++;
        if (port == standby_port()) l->reads_standby++;
    } else if (rc == 0) {
        l->wrong++;
    } else if (is_loss(rc, res)) {
        l->lost++;
        l->lost_retry += rc == PGW_ERETRY;
        l->lost_connlost += rc == PGW_ECONNLOST;
    } else {
        if (l->other++ < 5)
            print_message("unexpected failure: %s (%s)\n", pgw_err_name(rc), err_text(rc, res));
    }
    l->done++;
    pthread_mutex_unlock(&l->mu);
}

static void one_read(load_t *l, int64_t i)
{
    pgw_param_t p[1] = {pgw_int8(i)};
    pgw_request_t q =
        PGW_QUERY("SELECT $1::int8 * 7, current_setting('port')::int8", p, 1, NULL, NULL);
    q.route = PGW_ROUTE_READ_ONLY;
    pgw_result_t *res = NULL;
    int rc = pgw_client_pool_run(l->pool, &q, &res);
    int64_t port = int8_at(res, 0, 1);
    tally(l, rc, res,
          rc == 0 && int8_at(res, 0, 0) == 7 * i &&
              (port == primary_port() || port == standby_port()),
          port);
    pgw_result_free(res);
}

/* BEGIN; INSERT; SELECT it back (on the primary); COMMIT on a checkout. */
static void one_write(load_t *l, int64_t i)
{
    pgw_client_t *c = NULL;
    int rc = pgw_client_pool_acquire(l->pool, 10000, &c);
    if (rc != 0) {
        tally(l, rc, NULL, 0, 0);
        return;
    }
    pgw_param_t p[2] = {pgw_int8(l->key_base + i), pgw_int8(i * 3)};
    pgw_request_t reqs[4] = {
        PGW_SIMPLE("BEGIN", NULL, NULL),
        PGW_QUERY("INSERT INTO pgw_pgpool_t VALUES ($1, $2)", p, 2, NULL, NULL),
        PGW_QUERY("SELECT v, current_setting('port')::int8 FROM pgw_pgpool_t WHERE k = $1", p, 1,
                  NULL, NULL),
        PGW_SIMPLE("COMMIT", NULL, NULL),
    };
    pgw_result_t *res = NULL;
    int correct = 1;
    for (int s = 0; s < 4 && rc == 0; s++) {
        pgw_result_free(res);
        res = NULL;
        rc = pgw_client_run(c, &reqs[s], &res);
        if (rc == 0 && s == 2)
            correct = int8_at(res, 0, 0) == i * 3 && int8_at(res, 0, 1) == primary_port();
        if (rc == 0 && s == 1) correct = pgw_result_rows_affected(res) == 1;
        if (!correct) break;
    }
    /* a transaction that writes runs on the primary: not a read */
    tally(l, rc, res, correct, 0);
    pgw_result_free(res);
    pgw_client_pool_release(l->pool, c);
}

static void *load_thread(void *arg)
{
    load_t *l = arg;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        int i = l->next < l->total ? l->next++ : -1;
        pthread_mutex_unlock(&l->mu);
        if (i < 0) return NULL;
        if (i % 4 == 0)
            one_write(l, i);
        else
            one_read(l, i);
    }
}

static void restart_pgpool(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "bash '%s' restart '%s' >&2", pool_env("PGW_PGPOOL_SCRIPT"),
             pool_env("PGW_PGPOOL_DIR"));
    assert_int_equal(system(cmd), 0);
}

/* total requests through a pool of 8 (route: cfg.route; the reads marked
 * read-only either way), pgpool restarted after a third of them, then half
 * as many again once it is back (the load may have ended while it
 * restarted): the pool must serve them. */
static void mixed_load(int route, uint32_t cache_mode, const char *name)
{
    static load_t l;
    memset(&l, 0, sizeof l);
    pthread_mutex_init(&l.mu, NULL);
    l.key_base = 1000000 * (int64_t)(route + 1); /* each run its own rows */
    l.total = pgt_env_int("PGW_TEST_PGPOOL_OPS", RUNNING_ON_VALGRIND ? 400 : 3000);
    /* a request that hangs fails the test (SIGALRM ends the process) */
    alarm(RUNNING_ON_VALGRIND ? 540 : 300);
    char ci[1024];
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.max_size = 8;
    cfg.route = route;
    cfg.conn.stmt_cache_mode = cache_mode;
    assert_int_equal(pgw_client_pool_new(&l.pool, pgpool_conninfo(ci, sizeof ci), &cfg), 0);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, load_thread, &l), 0);
    for (;;) { /* restart once a third of the load is done */
        pthread_mutex_lock(&l.mu);
        int done = l.done;
        pthread_mutex_unlock(&l.mu);
        if (done >= l.total / 3) break;
        usleep(10000);
    }
    restart_pgpool();
    pthread_mutex_lock(&l.mu);
    l.restarted = 1;
    pthread_mutex_unlock(&l.mu);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    int first = l.total;
    l.total += first / 2;
    for (int t = 0; t < NTHREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, load_thread, &l), 0);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    /* and the pool serves again: a read after the load */
    int64_t before = (int64_t)l.ok;
    one_read(&l, 12345);
    pgw_pool_stats_t st;
    pgw_client_pool_stats(l.pool, &st);
    pgw_client_pool_close(l.pool);
    alarm(0);
    print_message("%s: mixed load of %d + %d requests, pgpool restarted after %d: %" PRIu64
                  " ok (%" PRIu64 " after the restart), %" PRIu64
                  " lost with the connection (%" PRIu64 " PGW_ERETRY, %" PRIu64
                  " PGW_ECONNLOST), %" PRIu64 " wrong, %" PRIu64
                  " other failures; reads on the primary %" PRIu64 ", on the standby %" PRIu64
                  "; pool: %" PRIu64 " connections opened, %" PRIu64 " lost, %" PRIu64 " retried\n",
                  name, first, l.total - first, first / 3, l.ok, l.ok_after, l.lost, l.lost_retry,
                  l.lost_connlost, l.wrong, l.other, l.reads_primary, l.reads_standby, st.opened,
                  st.lost, st.retried);
    assert_int_equal(l.wrong, 0);
    assert_int_equal(l.other, 0);
    assert_int_equal(l.ok + l.lost, (uint64_t)l.total + 1);
    assert_true((int64_t)l.ok == before + 1); /* recovered */
    assert_true(l.ok_after > 0);
    assert_true(st.lost > 0); /* the restart broke the pool's connections */
    pthread_mutex_destroy(&l.mu);
}

static void test_mixed_load_with_restart(void **state)
{
    (void)state;
    mixed_load(0, PGW_STMT_CACHE_AUTO, "route off, PGW_STMT_CACHE_AUTO");
}

/* With the pool's routing on, read-only work takes connections made with
 * target_session_attrs=prefer-standby: pgpool looks like a primary, so
 * they are accepted on the second pass, and pgpool balances them. */
static void test_routed_mixed_load_with_restart(void **state)
{
    (void)state;
    mixed_load(1, PGW_STMT_UNNAMED, "route on, PGW_STMT_UNNAMED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_modes),
        cmocka_unit_test(test_reads_load_balanced),
        cmocka_unit_test(test_unwrapped_pipeline_read_balanced),
        cmocka_unit_test(test_target_session_attrs),
        cmocka_unit_test(test_mixed_load_with_restart),
        cmocka_unit_test(test_routed_mixed_load_with_restart),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
