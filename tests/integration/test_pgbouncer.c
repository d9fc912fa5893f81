/*
 * Through PgBouncer 1.18 in transaction mode (the pgbouncer fixture,
 * tests/pg/pgbouncer.sh: default_pool_size 5), 50 pgw_conn_t connections on
 * one loop:
 *
 *   - with stmt_cache_mode = PGW_STMT_UNNAMED, a mixed workload of 10,000
 *     transactions: parameterized queries, pipelined batches (one Sync for
 *     several statements, and sync groups pipelined behind each other),
 *     COPY FROM STDIN inside a transaction block, and cursors (a portal
 *     fetched in batches) inside a transaction block. Every result is
 *     checked; no error at all is allowed (in particular no 42P05, 26000,
 *     08P01), and the errors seen are printed by SQLSTATE (expected: none).
 *   - with the default mode (statements cached and prepared by name), a
 *     workload that repeats queries from several connections (each its own
 *     SQL under what would be the same cached name): it must fail loudly,
 *     PGW_ESTMTINVALID or PGW_ESERVER with 42P05 / 26000 and a hint naming
 *     stmt_cache_mode, and never return a wrong value. One switch of server
 *     connection is made certain (admin console RECONNECT), as a slow
 *     machine may run the connections' transactions one after the other.
 *
 * Counts scale down under valgrind; PGW_TEST_BOUNCER_TXNS sets the number
 * of transactions.
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"
#include "pgwire/types_container.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

enum { NCLIENTS = 50, COPY_ROWS = 10, CURSOR_ROWS = 25, CURSOR_BATCH = 7, MAX_STATES = 16 };

/* ------------------------------------------------------------- error tally */

typedef struct tally {
    char key[MAX_STATES][32]; /* a SQLSTATE, or a library code's name */
    uint64_t n[MAX_STATES];
    size_t count;
    uint64_t total;
} tally_t;

static void tally_add(tally_t *t, const char *key)
{
    t->total++;
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(t->key[i], key) == 0) {
            t->n[i]++;
            return;
        }
    }
    if (t->count == MAX_STATES) return;
    snprintf(t->key[t->count], sizeof t->key[0], "%s", key);
    t->n[t->count++] = 1;
}

static uint64_t tally_get(const tally_t *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(t->key[i], key) == 0) return t->n[i];
    }
    return 0;
}

static void tally_print(const char *what, const tally_t *t)
{
    print_message("%s: %" PRIu64 " errors%s\n", what, t->total, t->total ? ", by SQLSTATE:" : "");
    for (size_t i = 0; i < t->count; i++)
        print_message("  %-16s %" PRIu64 "\n", t->key[i], t->n[i]);
}

/* The SQLSTATE of a failed request ("" for none), its tally key. */
static void error_key(int status, const pgw_result_t *res, char *key, size_t n)
{
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e != NULL && e->sqlstate != NULL)
        snprintf(key, n, "%s", e->sqlstate);
    else
        snprintf(key, n, "%s", pgw_err_name(status));
}

/* ------------------------------------------------------------------ setup */

static const char *bouncer_conninfo(char *buf, size_t n)
{
    return pgt_pgbouncer_conninfo(buf, n, NULL, NULL, "pgw_test_pgbouncer");
}

/* PgBouncer's admin console. */
static const char *admin_conninfo(char *buf, size_t n)
{
    return pgt_pgbouncer_conninfo(buf, n, NULL, "pgbouncer", "pgw_test_pgbouncer");
}

/* One statement on a connection of its own to conninfo. */
static void exec_at(const char *conninfo, const char *sql)
{
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, conninfo, NULL), 0);
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql, pgw_result_error(res) ? pgw_result_error(res)->message : "");
    pgw_result_free(res);
    pgw_client_close(c);
}

/* One statement straight to the cluster (not through the pooler). */
static void direct_exec(const char *sql)
{
    char ci[1024];
    exec_at(pgt_conninfo(ci, sizeof ci, NULL), sql);
}

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    pgt_require_pgbouncer();
    direct_exec("DROP TABLE IF EXISTS pgw_bouncer_t; "
                "CREATE TABLE pgw_bouncer_t (client int4, txn int4, v int8)");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    direct_exec("DROP TABLE IF EXISTS pgw_bouncer_t");
    return 0;
}

static int total_txns(void)
{
    int n = pgt_env_int("PGW_TEST_BOUNCER_TXNS", 0);
    if (n > 0) return n;
    return RUNNING_ON_VALGRIND ? 500 : 10000;
}

/* ------------------------------------------------------- the mixed workload */

typedef struct run run_t;

typedef struct client {
    run_t *run;
    int id;
    pgw_conn_t *conn;
    int txns_left; /* this connection's share, one transaction at a time */
    int txn;       /* the transaction's number (unique per connection) */
    int pending;   /* callbacks the transaction still waits for */
    int failed;    /* a request of the transaction failed */
    int copy_sent; /* rows the COPY source wrote */
    int cursor_next;
    int closed;
    char portal[16];
} client_t;

struct run {
    client_t clients[NCLIENTS];
    int unnamed; /* 1: PGW_STMT_UNNAMED, 0: the default mode */
    int per_kind[4];
    uint64_t txns_ok, txns_failed, wrong, checked;
    tally_t errors;
    int clients_done;
    uv_timer_t watchdog;
    int timed_out;
};

static void start_txn(client_t *c);

static void client_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    client_t *c = ud;
    c->closed = 1;
    c->run->clients_done++;
}

static void next_or_close(client_t *c)
{
    if (--c->txns_left <= 0 || !pgw_conn_is_ready(c->conn)) {
        pgw_conn_close(c->conn, client_closed, c);
        return;
    }
    start_txn(c);
}

static void on_rollback(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    if (status != 0) tally_add(&c->run->errors, "ROLLBACK failed");
    pgw_result_free(res);
    next_or_close(c);
}

static void txn_finished(client_t *c)
{
    run_t *r = c->run;
    if (c->failed)
        r->txns_failed++;
    else
        r->txns_ok++;
    c->failed = 0;
    /* a failure inside a transaction block must not leak into the next one */
    pgw_session_t *s = pgw_conn_session(c->conn);
    if (pgw_conn_is_ready(c->conn) && pgw_session_txn_status(s) != 'I') {
        pgw_request_t rb = PGW_SIMPLE("ROLLBACK", on_rollback, c);
        if (pgw_conn_submit(c->conn, &rb) == 0) return;
    }
    next_or_close(c);
}

/* Every callback of a transaction ends here: status, and what it checked. */
static void request_done(client_t *c, int status, const pgw_result_t *res, int correct)
{
    run_t *r = c->run;
    if (status != 0) {
        char key[32];
        error_key(status, res, key, sizeof key);
        tally_add(&r->errors, key);
        c->failed = 1;
    } else {
        r->checked++;
        if (!correct) {
            r->wrong++;
            c->failed = 1;
        }
    }
    if (--c->pending == 0) txn_finished(c);
}

static int64_t row_int8(const pgw_result_t *res, size_t row, size_t col)
{
    int64_t v = INT64_MIN;
    if (pgw_result_int8(res, row, col, &v) != 0) return INT64_MIN;
    return v;
}

static int64_t expected_v(const client_t *c)
{
    return (int64_t)c->id * 1000003 + c->txn;
}

/* kind 0: one parameterized query. */
static void on_params(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    int ok = 0;
    if (status == 0 && pgw_result_nrows(res) == 1) {
        pgw_str_t s;
        ok = row_int8(res, 0, 0) == expected_v(c) * 2 && pgw_result_text(res, 0, 1, &s) == 0;
        char want[32];
        int n = snprintf(want, sizeof want, "c%d", c->id);
        ok = ok && s.len == (size_t)n && memcmp(s.p, want, (size_t)n) == 0;
    }
    request_done(c, status, res, ok);
    pgw_result_free(res);
}

/* kind 1: INSERT, UPDATE ... RETURNING, SELECT in one sync group, and one
 * more sync group pipelined right behind it. */
static void on_batch_insert(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    request_done(c, status, res, status != 0 || pgw_result_rows_affected(res) == 1);
    pgw_result_free(res);
}

static void on_batch_update(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    int ok = status == 0 && pgw_result_nrows(res) == 1 && row_int8(res, 0, 0) == expected_v(c) + 1;
    request_done(c, status, res, ok);
    pgw_result_free(res);
}

static void on_count_sum(int status, pgw_result_t *res, void *ud, int64_t count, int64_t sum)
{
    client_t *c = ud;
    int ok = status == 0 && pgw_result_nrows(res) == 1 && row_int8(res, 0, 0) == count &&
             row_int8(res, 0, 1) == sum;
    request_done(c, status, res, ok);
    pgw_result_free(res);
}

static void on_batch_select(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    on_count_sum(status, res, ud, 1, expected_v(c) + 1);
}

static void on_batch_done(int status, pgw_result_t *res, void *ud)
{
    request_done(ud, status, res, 1);
    pgw_result_free(res);
}

static void on_behind(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    int32_t v = 0;
    int ok = status == 0 && pgw_result_int4(res, 0, 0, &v) == 0 && v == c->id;
    request_done(c, status, res, ok);
    pgw_result_free(res);
}

/* kinds 2 and 3: BEGIN and COMMIT, whose results carry nothing to check. */
static void on_plain(int status, pgw_result_t *res, void *ud)
{
    request_done(ud, status, res, 1);
    pgw_result_free(res);
}

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    client_t *c = ud;
    while (c->copy_sent < COPY_ROWS) {
        if (pgw_copy_text_int4(out, c->id) || pgw_copy_text_int4(out, c->txn) ||
            pgw_copy_text_int8(out, expected_v(c) + c->copy_sent) || pgw_copy_text_row_end(out))
            return PGW_ENOMEM;
        c->copy_sent++;
    }
    return PGW_COPY_END;
}

static void on_copy(int status, pgw_result_t *res, void *ud)
{
    request_done(ud, status, res, status != 0 || pgw_result_rows_affected(res) == COPY_ROWS);
    pgw_result_free(res);
}

static void on_copy_check(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    int64_t sum = (int64_t)COPY_ROWS * expected_v(c) + COPY_ROWS * (COPY_ROWS - 1) / 2;
    on_count_sum(status, res, ud, COPY_ROWS, sum);
}

/* A cursor's batch: rows cursor_next, cursor_next + 1, ... in order. */
static void on_cursor_batch(int status, pgw_result_t *res, void *ud)
{
    client_t *c = ud;
    int ok = status == 0;
    size_t n = pgw_result_nrows(res);
    for (size_t i = 0; ok && i < n; i++) {
        int32_t g = 0;
        ok = pgw_result_int4(res, i, 0, &g) == 0 && g == c->cursor_next++;
    }
    int more = ok && pgw_result_suspended(res);
    if (ok && !more) ok = c->cursor_next == CURSOR_ROWS + 1;
    c->pending++; /* what comes next is submitted before this one counts */
    if (more) {
        pgw_request_t f = PGW_FETCH(c->portal, CURSOR_BATCH, on_cursor_batch, c);
        if (pgw_conn_submit(c->conn, &f) != 0) c->pending--;
    } else if (status == 0) {
        pgw_request_t cl = PGW_CLOSE_PORTAL(c->portal, on_plain, c);
        pgw_request_t commit = PGW_SIMPLE("COMMIT", on_plain, c);
        if (pgw_conn_submit(c->conn, &cl) != 0) c->pending--;
        c->pending++;
        if (pgw_conn_submit(c->conn, &commit) != 0) c->pending--;
    } else {
        c->pending--;
    }
    request_done(c, status, res, ok);
    pgw_result_free(res);
}

static void submit_or_count(client_t *c, const pgw_request_t *req)
{
    c->pending++;
    int rc = pgw_conn_submit(c->conn, req);
    if (rc != 0) {
        c->pending--;
        tally_add(&c->run->errors, pgw_err_name(rc));
        c->failed = 1;
    }
}

static void start_txn(client_t *c)
{
    run_t *r = c->run;
    c->txn++;
    c->pending = 1; /* held until everything is submitted */
    int kind = (c->id + c->txn) % 4;
    r->per_kind[kind]++;
    pgw_param_t p[3] = {pgw_int4(c->id), pgw_int4(c->txn), pgw_int8(expected_v(c))};
    char tag[16];
    snprintf(tag, sizeof tag, "c%d", c->id);
    switch (kind) {
    case 0: {
        pgw_param_t q[2] = {pgw_int8(expected_v(c)), pgw_text(tag)};
        pgw_request_t req = PGW_QUERY("SELECT $1::int8 * 2, $2::text", q, 2, on_params, c);
        submit_or_count(c, &req);
        break;
    }
    case 1: {
        pgw_request_t b[3] = {
            PGW_QUERY("INSERT INTO pgw_bouncer_t VALUES ($1, $2, $3)", p, 3, on_batch_insert, c),
            PGW_QUERY("UPDATE pgw_bouncer_t SET v = v + 1 WHERE client = $1 AND txn = $2 "
                      "RETURNING v",
                      p, 2, on_batch_update, c),
            PGW_QUERY("SELECT count(*), sum(v)::int8 FROM pgw_bouncer_t "
                      "WHERE client = $1 AND txn = $2",
                      p, 2, on_batch_select, c),
        };
        c->pending += 4;
        int rc = pgw_conn_submit_batch(c->conn, b, 3, 0, on_batch_done, c);
        if (rc != 0) {
            c->pending -= 4;
            tally_add(&r->errors, pgw_err_name(rc));
            c->failed = 1;
        }
        pgw_request_t behind = PGW_QUERY("SELECT $1::int4", p, 1, on_behind, c);
        submit_or_count(c, &behind);
        break;
    }
    case 2: {
        c->copy_sent = 0;
        pgw_request_t begin = PGW_SIMPLE("BEGIN", on_plain, c);
        pgw_request_t copy = PGW_COPY_IN_REQ("COPY pgw_bouncer_t (client, txn, v) FROM STDIN",
                                             copy_source, on_copy, c);
        pgw_request_t check = PGW_QUERY("SELECT count(*), sum(v)::int8 FROM pgw_bouncer_t "
                                        "WHERE client = $1 AND txn = $2",
                                        p, 2, on_copy_check, c);
        pgw_request_t commit = PGW_SIMPLE("COMMIT", on_plain, c);
        submit_or_count(c, &begin);
        submit_or_count(c, &copy);
        submit_or_count(c, &check);
        submit_or_count(c, &commit);
        break;
    }
    default: {
        c->cursor_next = 1;
        snprintf(c->portal, sizeof c->portal, "cur%d", c->id);
        pgw_param_t n[1] = {pgw_int4(CURSOR_ROWS)};
        pgw_request_t begin = PGW_SIMPLE("BEGIN", on_plain, c);
        pgw_request_t open =
            PGW_QUERY("SELECT g FROM generate_series(1, $1) g", n, 1, on_cursor_batch, c);
        open.portal = c->portal;
        open.max_rows = CURSOR_BATCH;
        submit_or_count(c, &begin);
        submit_or_count(c, &open);
        break;
    }
    }
    if (--c->pending == 0) txn_finished(c);
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn;
    client_t *c = ud;
    if (status != 0) {
        fail_msg("connect %d through pgbouncer: %s (%s)", c->id, pgw_err_name(status),
                 err && err->message ? err->message : pgw_conn_error_message(conn));
    }
    if (c->txns_left > 0)
        start_txn(c);
    else
        pgw_conn_close(c->conn, client_closed, c);
}

static void on_watchdog(uv_timer_t *t)
{
    run_t *r = t->data;
    r->timed_out = 1;
    for (int i = 0; i < NCLIENTS; i++) {
        if (!r->clients[i].closed)
            pgw_conn_close(r->clients[i].conn, client_closed, &r->clients[i]);
    }
}

static void init_config(pgw_conn_config_t *cfg, int unnamed)
{
    pgw_conn_config_init(cfg);
    cfg->stmt_cache_mode = unnamed ? PGW_STMT_UNNAMED : PGW_STMT_CACHE_AUTO;
}

static void run_workload(run_t *r, int unnamed, int txns)
{
    memset(r, 0, sizeof *r);
    r->unnamed = unnamed;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    char ci[1024];
    bouncer_conninfo(ci, sizeof ci);
    pgw_conn_config_t cfg;
    init_config(&cfg, unnamed);
    for (int i = 0; i < NCLIENTS; i++) {
        client_t *c = &r->clients[i];
        c->run = r;
        c->id = i + 1;
        c->txns_left = txns / NCLIENTS + (i < txns % NCLIENTS);
        assert_int_equal(pgw_conn_new(&c->conn, &loop, &cfg), 0);
        assert_int_equal(pgw_conn_connect(c->conn, ci, on_connected, c), 0);
    }
    uv_timer_init(&loop, &r->watchdog);
    r->watchdog.data = r;
    uv_timer_start(&r->watchdog, on_watchdog, RUNNING_ON_VALGRIND ? 600000 : 240000, 0);
    uint64_t t0 = uv_hrtime();
    while (r->clients_done < NCLIENTS)
        uv_run(&loop, UV_RUN_ONCE);
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    uv_close((uv_handle_t *)&r->watchdog, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    print_message("%s: %" PRIu64 " transactions ok, %" PRIu64 " failed, in %.2f s (%.0f/s) from %d "
                  "connections; kinds: %d params, %d batches, %d COPY, %d cursors; %" PRIu64
                  " results checked, %" PRIu64 " wrong\n",
                  unnamed ? "PGW_STMT_UNNAMED" : "default mode", r->txns_ok, r->txns_failed, secs,
                  (double)(r->txns_ok + r->txns_failed) / secs, NCLIENTS, r->per_kind[0],
                  r->per_kind[1], r->per_kind[2], r->per_kind[3], r->checked, r->wrong);
    tally_print(unnamed ? "PGW_STMT_UNNAMED" : "default mode", &r->errors);
    if (r->timed_out) fail_msg("the workload did not finish in time: something hangs");
}

/* The server connections PgBouncer has open for the database (admin
 * console, SHOW SERVERS). */
static size_t server_connections(void)
{
    char admin[1024];
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, admin_conninfo(admin, sizeof admin), NULL), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, "SHOW SERVERS", &res), 0);
    int dbcol = pgw_result_column(res, "database");
    assert_true(dbcol >= 0);
    size_t n = 0;
    const char *want = pgt_pgbouncer_env("PGW_PGBOUNCER_DB");
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        pgw_str_t s;
        assert_int_equal(pgw_result_text(res, i, (size_t)dbcol, &s), 0);
        if (s.len == strlen(want) && memcmp(s.p, want, s.len) == 0) n++;
    }
    pgw_result_free(res);
    pgw_client_close(c);
    return n;
}

/* The server connections PgBouncer opened for the database: at most the
 * pool size. */
static void check_server_connections(void)
{
    size_t n = server_connections();
    const char *ps = pgt_pgbouncer_env("PGW_PGBOUNCER_POOL_SIZE");
    int pool = ps != NULL ? atoi(ps) : 0;
    print_message("server connections behind the %d clients: %zu (pool size %d)\n", NCLIENTS, n,
                  pool);
    assert_true(n >= 1);
    assert_true(pool <= 0 || n <= (size_t)pool);
}

static void test_unnamed_mixed_workload(void **state)
{
    (void)state;
    static run_t r;
    int txns = total_txns();
    run_workload(&r, 1, txns);
    assert_int_equal(r.wrong, 0);
    assert_int_equal(r.errors.total, 0);
    assert_int_equal(tally_get(&r.errors, "42P05") + tally_get(&r.errors, "26000") +
                         tally_get(&r.errors, "08P01"),
                     0);
    assert_int_equal(r.txns_ok, (uint64_t)txns);
    check_server_connections();
}

/* ------------------------------------------------------ the default mode */

enum { REPEATS = 40 };

typedef struct cached_run {
    pgw_conn_t *conn[NCLIENTS];
    int left[NCLIENTS];
    int ids[NCLIENTS];
    int closed;
    uint64_t ok, wrong, loud, hinted, other;
    tally_t errors;
} cached_run_t;

static cached_run_t *cached;

static void cached_next(int i);

static void cached_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    (void)ud;
    cached->closed++;
}

/* The outcome of one cached execution that should answer want: correct,
 * wrong, or a failure that is loud (the pooler's switch of server
 * connections shows as PGW_ESTMTINVALID, or 42P05 / 26000) or other. */
static void count_cached(int status, const pgw_result_t *res, int64_t want)
{
    if (status == 0) {
        if (row_int8(res, 0, 0) == want)
            cached->ok++;
        else
            cached->wrong++;
        return;
    }
    char key[32];
    error_key(status, res, key, sizeof key);
    tally_add(&cached->errors, key);
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    const char *st = e && e->sqlstate ? e->sqlstate : "";
    if (status == PGW_ESTMTINVALID ||
        (status == PGW_ESERVER && (!strcmp(st, "42P05") || !strcmp(st, "26000"))))
        cached->loud++;
    else
        cached->other++;
    if (e && e->hint && strstr(e->hint, "stmt_cache_mode")) cached->hinted++;
}

/* Each connection's own SQL (its id in the text): a statement prepared by
 * another connection under the same name would answer another number. */
static void on_cached(int status, pgw_result_t *res, void *ud)
{
    int i = *(int *)ud;
    count_cached(status, res, (int64_t)(i + 1) * 1000 + cached->left[i]);
    pgw_result_free(res);
    cached_next(i);
}

static void cached_next(int i)
{
    if (cached->left[i] == 0 || !pgw_conn_is_ready(cached->conn[i])) {
        pgw_conn_close(cached->conn[i], cached_closed, NULL);
        return;
    }
    cached->left[i]--;
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT $1::int8 + %d", (i + 1) * 1000);
    pgw_param_t p[1] = {pgw_int8(cached->left[i])};
    int rc = pgw_conn_query(cached->conn[i], sql, p, 1, on_cached, &cached->ids[i]);
    if (rc != 0) {
        tally_add(&cached->errors, pgw_err_name(rc));
        cached->other++;
        pgw_conn_close(cached->conn[i], cached_closed, NULL);
    }
}

static void on_cached_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    int i = *(int *)ud;
    if (status != 0) fail_msg("connect %d: %s", i, pgw_conn_error_message(conn));
    cached_next(i);
}

/* One statement to PgBouncer's admin console. */
static void admin_exec(const char *sql)
{
    char admin[1024];
    exec_at(admin_conninfo(admin, sizeof admin), sql);
}

/* The switch made certain, whatever the timing (the workload above needs
 * its connections' transactions to overlap for PgBouncer to move them
 * between server connections, which a slow machine may not give): a query
 * the cache has prepared by name on one server connection, PgBouncer told
 * to close its server connections once released (RECONNECT), and the same
 * query again in a transaction block, which then reaches a server
 * connection without the statement. */
static void cached_after_reconnect(void)
{
    static const char sql[] = "SELECT $1::int8 + 7000";
    char ci[1024];
    bouncer_conninfo(ci, sizeof ci);
    pgw_conn_config_t cfg;
    init_config(&cfg, 0);
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, &cfg), 0);
    pgw_param_t p[1] = {pgw_int8(1)};
    pgw_result_t *res = NULL;
    for (int i = 0; i < 2; i++) { /* unnamed, then prepared by name with its execution */
        assert_int_equal(pgw_client_query(c, sql, p, 1, &res), 0);
        assert_int_equal(row_int8(res, 0, 0), 7001);
        pgw_result_free(res);
    }
    /* PgBouncer closes the released server connections on its next
     * maintenance pass (about a second): wait for it, at most 30 s. */
    admin_exec("RECONNECT");
    for (int i = 0; i < 600 && server_connections() > 0; i++)
        uv_sleep(50);
    assert_int_equal(server_connections(), 0);
    /* Inside a transaction block, where the library cannot prepare the
     * statement again and retry behind the caller's back. */
    assert_int_equal(pgw_client_exec(c, "BEGIN", NULL), 0);
    int rc = pgw_client_query(c, sql, p, 1, &res);
    count_cached(rc, res, 7001);
    pgw_result_free(res);
    assert_int_equal(pgw_client_exec(c, "ROLLBACK", NULL), 0);
    pgw_client_close(c);
}

static void test_default_mode_fails_loudly(void **state)
{
    (void)state;
    static cached_run_t r;
    memset(&r, 0, sizeof r);
    cached = &r;
    int nconn = RUNNING_ON_VALGRIND ? 10 : NCLIENTS;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    char ci[1024];
    bouncer_conninfo(ci, sizeof ci);
    pgw_conn_config_t cfg;
    init_config(&cfg, 0);
    for (int i = 0; i < nconn; i++) {
        r.ids[i] = i;
        r.left[i] = REPEATS;
        assert_int_equal(pgw_conn_new(&r.conn[i], &loop, &cfg), 0);
        assert_int_equal(pgw_conn_connect(r.conn[i], ci, on_cached_connected, &r.ids[i]), 0);
    }
    while (r.closed < nconn)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    cached_after_reconnect();
    print_message("default mode: %" PRIu64 " correct, %" PRIu64 " wrong, %" PRIu64
                  " loud failures (%" PRIu64 " with a hint naming stmt_cache_mode), %" PRIu64
                  " other failures\n",
                  r.ok, r.wrong, r.loud, r.hinted, r.other);
    tally_print("default mode", &r.errors);
    assert_int_equal(r.wrong, 0);
    assert_int_equal(r.other, 0);
    /* statements cached per connection cannot survive the pooler's
     * switching of server connections: it must show */
    assert_true(r.loud > 0);
    assert_true(r.hinted > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unnamed_mixed_workload),
        cmocka_unit_test(test_default_mode_fails_loudly),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
