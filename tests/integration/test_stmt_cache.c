/*
 * The statement cache against the throwaway cluster (session.h, "Statement
 * cache"): repeated queries are prepared once and executed by name
 * (counted, and visible in pg_prepared_statements), the LRU bounds, and what
 * happens when the server changes or drops a cached statement behind the
 * session's back: ALTER TABLE, ALTER TYPE, a search_path change, DISCARD
 * ALL, and a DEALLOCATE the session cannot see, each outside and inside a
 * transaction block; and PGW_STMT_UNNAMED, which names no statement at all.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/types_container.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static pgw_client_t *open_mode(uint32_t mode, uint32_t size, size_t bytes)
{
    char ci[512];
    pgt_require_server();
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.stmt_cache_mode = mode;
    cfg.stmt_cache_size = size;
    cfg.stmt_cache_bytes = bytes;
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), &cfg), 0);
    return c;
}

/* Run an extended query; returns its status, the result in *res (freed
 * when res is NULL). */
static int run(pgw_client_t *c, const char *sql, const pgw_param_t *p, size_t n, pgw_result_t **res)
{
    pgw_request_t rq = PGW_QUERY(sql, p, n, NULL, NULL);
    pgw_result_t *r = NULL;
    int rc = pgw_client_run(c, &rq, &r);
    if (res)
        *res = r;
    else
        pgw_result_free(r);
    return rc;
}

/* The int4 in row 0, column col of a query that must succeed. */
static int32_t run_int4(pgw_client_t *c, const char *sql, const pgw_param_t *p, size_t n, int col)
{
    pgw_result_t *r = NULL;
    int rc = run(c, sql, p, n, &r);
    if (rc != 0)
        fail_msg("%s: %s %s", sql, pgw_err_name(rc),
                 r && pgw_result_error(r) ? pgw_result_error(r)->message : "");
    int32_t v = -1;
    assert_int_equal(pgw_result_int4(r, 0, (size_t)col, &v), 0);
    pgw_result_free(r);
    return v;
}

/* A count from the server by simple query (never cached itself). */
static int64_t simple_count(pgw_client_t *c, const char *sql)
{
    pgw_result_t *r = NULL;
    assert_int_equal(pgw_client_exec(c, sql, &r), 0);
    char buf[32];
    pgw_value_t v;
    assert_int_equal(pgw_result_value(r, 0, 0, &v), 0);
    snprintf(buf, sizeof buf, "%.*s", (int)v.len, (const char *)v.p);
    pgw_result_free(r);
    return strtoll(buf, NULL, 10);
}

static int64_t prepared_here(pgw_client_t *c)
{
    return simple_count(c, "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'pgw\\_%'");
}

static pgw_stmt_cache_stats_t stats(pgw_client_t *c)
{
    pgw_stmt_cache_stats_t st;
    pgw_client_stmt_cache_stats(c, &st);
    return st;
}

static const char *sqlstate(const pgw_result_t *r)
{
    const pgw_error_t *e = r ? pgw_result_error(r) : NULL;
    return e && e->sqlstate ? e->sqlstate : "";
}

/* ------------------------------------------------------------- hits */

static void test_repeated_queries_hit(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    for (int32_t i = 0; i < 10; i++) {
        pgw_param_t p = pgw_int4(i);
        assert_int_equal(run_int4(c, "SELECT $1::int4 + 1", &p, 1, 0), i + 1);
    }
    pgw_stmt_cache_stats_t st = stats(c);
    assert_int_equal(st.misses, 2); /* first use unnamed, second prepares */
    assert_int_equal(st.hits, 8);
    assert_int_equal(st.prepares, 1);
    assert_int_equal(st.entries, 1);
    assert_true(st.bytes > 0);
    assert_int_equal(prepared_here(c), 1);

    /* Other parameter types are another statement: an int8 never meets an
     * int4 parameter. */
    pgw_param_t big = pgw_int8(5000000000);
    pgw_result_t *r = NULL;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(run(c, "SELECT $1 + 1", &big, 1, &r), 0);
        int64_t v;
        assert_int_equal(pgw_result_int8(r, 0, 0, &v), 0);
        assert_int_equal(v, 5000000001);
        pgw_result_free(r);
    }
    assert_int_equal(stats(c).entries, 2);

    /* A column without binary output (aclitem) is asked in text from the
     * description: it works inside a transaction block, where the unnamed
     * path's rebind cannot run. */
    const char *acl = "SELECT relacl, 1::int4 FROM pg_class WHERE relname = 'pg_class'";
    pgw_request_t rq = PGW_QUERY(acl, NULL, 0, NULL, NULL);
    rq.cache = PGW_CACHE_NOW;
    assert_int_equal(pgw_client_run(c, &rq, &r), 0);
    pgw_result_free(r);
    pgt_client_exec_ok(c, "BEGIN");
    assert_int_equal(run(c, acl, NULL, 0, &r), 0);
    assert_int_equal(pgw_result_fformat(r, 0), PGW_FORMAT_TEXT);
    assert_int_equal(pgw_result_fformat(r, 1), PGW_FORMAT_BINARY);
    pgw_result_free(r);
    pgt_client_exec_ok(c, "COMMIT");

    /* PGW_CACHE_SKIP stays out. */
    uint64_t before = stats(c).prepares;
    rq = PGW_QUERY("SELECT 42::int4", NULL, 0, NULL, NULL);
    rq.cache = PGW_CACHE_SKIP;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pgw_client_run(c, &rq, &r), 0);
        pgw_result_free(r);
    }
    assert_int_equal(stats(c).prepares, before);
    /* A policy on a kind that has none is refused. */
    rq = PGW_SIMPLE("SELECT 1", NULL, NULL);
    rq.cache = PGW_CACHE_NOW;
    assert_int_equal(pgw_client_run(c, &rq, NULL), PGW_EINVAL);
    pgw_client_close(c);
}

/* ------------------------------------------------------------ bounds */

static void test_lru_bounds(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 4, 0);
    char sql[64];
    for (int round = 0; round < 2; round++)
        for (int32_t i = 0; i < 6; i++) {
            snprintf(sql, sizeof sql, "SELECT %d::int4 + $1", (int)i);
            pgw_param_t p = pgw_int4(1);
            assert_int_equal(run_int4(c, sql, &p, 1, 0), i + 1);
            assert_int_equal(run_int4(c, sql, &p, 1, 0), i + 1);
        }
    pgw_stmt_cache_stats_t st = stats(c);
    assert_int_equal(st.entries, 4);
    assert_true(st.evictions >= 8);
    assert_int_equal(st.prepares - st.evictions, 4);
    /* The evicted statements' Closes went out with later requests: the
     * server holds no more than the cache does (one more request sends
     * the last Close owed). */
    pgw_param_t p = pgw_int4(1);
    assert_int_equal(run_int4(c, "SELECT 5::int4 + $1", &p, 1, 0), 6);
    assert_true(prepared_here(c) <= 4);
    pgw_client_close(c);

    /* The byte bound: statements of ~1 KiB of SQL in a 4 KiB cache. */
    c = open_mode(PGW_STMT_CACHE_AUTO, 0, 4096);
    char longsql[1200];
    for (int32_t i = 0; i < 8; i++) {
        int n = snprintf(longsql, sizeof longsql, "SELECT %d::int4 /* ", (int)i);
        memset(longsql + n, 'x', 1000);
        strcpy(longsql + n + 1000, " */");
        assert_int_equal(run_int4(c, longsql, NULL, 0, 0), i);
        assert_int_equal(run_int4(c, longsql, NULL, 0, 0), i);
        assert_true(stats(c).bytes <= 4096);
    }
    st = stats(c);
    assert_true(st.entries >= 1 && st.entries <= 3);
    assert_true(st.evictions >= 5);
    assert_int_equal(run_int4(c, "SELECT 1::int4", NULL, 0, 0), 1);
    assert_true(prepared_here(c) <= 3);
    pgw_client_close(c);
}

/* ------------------------------------------------------ invalidation */

/* Prepare sql into the cache (two runs), expecting int4 value v in column
 * col of each. */
static void warm(pgw_client_t *c, const char *sql, const pgw_param_t *p, size_t n, int col,
                 int32_t v)
{
    assert_int_equal(run_int4(c, sql, p, n, col), v);
    assert_int_equal(run_int4(c, sql, p, n, col), v);
    assert_int_equal(run_int4(c, sql, p, n, col), v); /* a hit */
}

static void test_alter_table_outside_and_inside_transaction(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS sc_alter; CREATE TABLE sc_alter (id int4, v int4);"
                          "INSERT INTO sc_alter VALUES (1, 10)");
    const char *sql = "SELECT * FROM sc_alter WHERE id = $1";
    pgw_param_t p = pgw_int4(1);
    warm(c, sql, &p, 1, 1, 10);

    /* Outside a transaction: prepared again and retried, transparently. */
    pgt_client_exec_ok(c, "ALTER TABLE sc_alter ADD COLUMN w int4 DEFAULT 7");
    pgw_result_t *r = NULL;
    assert_int_equal(run(c, sql, &p, 1, &r), 0);
    assert_int_equal(pgw_result_ncols(r), 3);
    int32_t w;
    assert_int_equal(pgw_result_int4(r, 0, 2, &w), 0);
    assert_int_equal(w, 7);
    pgw_result_free(r);
    pgw_stmt_cache_stats_t st = stats(c);
    assert_int_equal(st.invalidations, 1);
    assert_int_equal(st.reprepares, 1);
    assert_int_equal(run_int4(c, sql, &p, 1, 2), 7); /* the new statement hits */
    assert_int_equal(stats(c).hits, st.hits + 1);

    /* Inside a transaction block: PGW_ESTMTINVALID with the server's
     * 0A000; the transaction is failed, and after it the query works. */
    pgt_client_exec_ok(c, "ALTER TABLE sc_alter ADD COLUMN x int4 DEFAULT 8");
    pgt_client_exec_ok(c, "BEGIN");
    assert_int_equal(run(c, sql, &p, 1, &r), PGW_ESTMTINVALID);
    assert_string_equal(sqlstate(r), "0A000");
    pgw_result_free(r);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(pgw_client_conn(c))), 'E');
    pgt_client_exec_ok(c, "ROLLBACK");
    assert_int_equal(run_int4(c, sql, &p, 1, 3), 8);
    assert_int_equal(run_int4(c, sql, &p, 1, 3), 8);
    st = stats(c);
    assert_int_equal(st.invalidations, 2);
    assert_int_equal(st.reprepares, 1);

    /* A column added to a table whose columns the query names changes no
     * result type: the server plans again and the cached statement goes on. */
    const char *named = "SELECT v FROM sc_alter WHERE id = $1";
    warm(c, named, &p, 1, 0, 10);
    pgt_client_exec_ok(c, "ALTER TABLE sc_alter ADD COLUMN y int4");
    uint64_t inv = stats(c).invalidations;
    pgt_client_exec_ok(c, "BEGIN");
    assert_int_equal(run_int4(c, named, &p, 1, 0), 10);
    pgt_client_exec_ok(c, "COMMIT");
    assert_int_equal(stats(c).invalidations, inv);
    pgt_client_exec_ok(c, "DROP TABLE sc_alter");
    pgw_client_close(c);
}

static void test_alter_column_type(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS sc_type; CREATE TABLE sc_type (v int4);"
                          "INSERT INTO sc_type VALUES (3)");
    const char *sql = "SELECT v FROM sc_type";
    warm(c, sql, NULL, 0, 0, 3);
    pgt_client_exec_ok(c, "ALTER TABLE sc_type ALTER COLUMN v TYPE int8");
    pgw_result_t *r = NULL;
    assert_int_equal(run(c, sql, NULL, 0, &r), 0);
    assert_int_equal(pgw_result_ftype(r, 0), 20);
    int64_t v;
    assert_int_equal(pgw_result_int8(r, 0, 0, &v), 0);
    assert_int_equal(v, 3);
    pgw_result_free(r);
    assert_int_equal(stats(c).reprepares, 1);
    pgt_client_exec_ok(c, "DROP TABLE sc_type");
    pgw_client_close(c);
}

/* ALTER TYPE on a composite behind a cached statement: the column's type
 * is the same type, so the server keeps the plan's result type and the
 * rows come with the new attribute (binary records carry their fields'
 * types); inside a transaction too. */
static void test_alter_type(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS sc_comp; DROP TYPE IF EXISTS sc_pair;"
                          "CREATE TYPE sc_pair AS (a int4, b int4);"
                          "CREATE TABLE sc_comp (id int4, p sc_pair);"
                          "INSERT INTO sc_comp VALUES (1, ROW(1, 2))");
    const char *sql = "SELECT id, p FROM sc_comp WHERE id = $1";
    pgw_param_t one = pgw_int4(1);
    warm(c, sql, &one, 1, 0, 1);
    for (int in_tx = 0; in_tx < 2; in_tx++) {
        pgt_client_exec_ok(c, in_tx ? "ALTER TYPE sc_pair ADD ATTRIBUTE d int4"
                                    : "ALTER TYPE sc_pair ADD ATTRIBUTE c int4");
        pgt_client_exec_ok(c, "UPDATE sc_comp SET p.c = 3");
        if (in_tx) pgt_client_exec_ok(c, "BEGIN");
        pgw_result_t *r = NULL;
        assert_int_equal(run(c, sql, &one, 1, &r), 0);
        pgw_record_t rec;
        pgw_value_t v;
        assert_int_equal(pgw_result_value(r, 0, 1, &v), 0);
        assert_int_equal(pgw_record_parse(&v, &rec), 0);
        assert_int_equal(rec.nfields, 3 + in_tx);
        pgw_result_free(r);
        if (in_tx) pgt_client_exec_ok(c, "COMMIT");
    }
    pgt_client_exec_ok(c, "DROP TABLE sc_comp; DROP TYPE sc_pair");
    pgw_client_close(c);
}

static void test_search_path(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    pgt_client_exec_ok(c,
                       "DROP SCHEMA IF EXISTS sc_a CASCADE; DROP SCHEMA IF EXISTS sc_b CASCADE;"
                       "CREATE SCHEMA sc_a; CREATE SCHEMA sc_b;"
                       "CREATE TABLE sc_a.t (v int4); INSERT INTO sc_a.t VALUES (1);"
                       "CREATE TABLE sc_b.t (v int8, w int4); INSERT INTO sc_b.t VALUES (2, 22)");
    pgt_client_exec_ok(c, "SET search_path = sc_a");
    const char *sql = "SELECT * FROM t";
    warm(c, sql, NULL, 0, 0, 1);
    /* Outside: the retry runs against the new search_path. */
    pgt_client_exec_ok(c, "SET search_path = sc_b");
    assert_int_equal(run_int4(c, sql, NULL, 0, 1), 22);
    assert_int_equal(stats(c).reprepares, 1);
    /* Inside: the error, then the query works after the transaction. */
    pgt_client_exec_ok(c, "BEGIN");
    pgt_client_exec_ok(c, "SET LOCAL search_path = sc_a");
    pgw_result_t *r = NULL;
    assert_int_equal(run(c, sql, NULL, 0, &r), PGW_ESTMTINVALID);
    assert_string_equal(sqlstate(r), "0A000");
    pgw_result_free(r);
    pgt_client_exec_ok(c, "ROLLBACK");
    assert_int_equal(run_int4(c, sql, NULL, 0, 1), 22);
    pgt_client_exec_ok(c, "RESET search_path; DROP SCHEMA sc_a CASCADE; DROP SCHEMA sc_b CASCADE");
    pgw_client_close(c);
}

/* DISCARD ALL as SQL: the session sees it and drops every cached statement
 * (nothing fails); a DEALLOCATE it cannot see (inside a function): 26000,
 * retried outside a transaction, PGW_ESTMTINVALID with the pooler hint
 * inside one. */
static void test_discard_and_hidden_deallocate(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    const char *sql = "SELECT $1::int4 * 2";
    pgw_param_t p = pgw_int4(21);
    warm(c, sql, &p, 1, 0, 42);
    pgt_client_exec_ok(c, "DISCARD ALL");
    assert_int_equal(stats(c).entries, 0);
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42); /* prepared again at once */
    pgt_client_exec_ok(c, "BEGIN");
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    pgt_client_exec_ok(c, "COMMIT");
    pgw_stmt_cache_stats_t st = stats(c);
    assert_int_equal(st.invalidations, 0);
    assert_int_equal(st.entries, 1);

    /* The keyword split, so the session does not see it. */
    const char *dealloc_fn = "CREATE OR REPLACE FUNCTION pg_temp.sc_dealloc() RETURNS void "
                             "LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DEALLOC' || 'ATE ALL'; END $$";
    pgt_client_exec_ok(c, dealloc_fn);
    warm(c, sql, &p, 1, 0, 42);
    pgt_client_exec_ok(c, "SELECT pg_temp.sc_dealloc()");
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    assert_int_equal(stats(c).reprepares, 1);
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);

    pgt_client_exec_ok(c, "SELECT pg_temp.sc_dealloc()");
    pgt_client_exec_ok(c, "BEGIN");
    pgw_result_t *r = NULL;
    assert_int_equal(run(c, sql, &p, 1, &r), PGW_ESTMTINVALID);
    assert_string_equal(sqlstate(r), "26000");
    const pgw_error_t *e = pgw_result_error(r);
    assert_non_null(e->hint);
    assert_non_null(strstr(e->hint, "PGW_STMT_UNNAMED"));
    pgw_result_free(r);
    pgt_client_exec_ok(c, "ROLLBACK");
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    st = stats(c);
    assert_int_equal(st.invalidations, 2);
    assert_int_equal(st.reprepares, 1);
    /* A third vanishing, outside a transaction: statements that keep
     * vanishing are not retried any more (what a transaction-mode pooler
     * does to them), the hint says why. */
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    pgt_client_exec_ok(c, "SELECT pg_temp.sc_dealloc()");
    assert_int_equal(run(c, sql, &p, 1, &r), PGW_ESTMTINVALID);
    assert_string_equal(sqlstate(r), "26000");
    assert_non_null(strstr(pgw_result_error(r)->hint, "PGW_STMT_UNNAMED"));
    pgw_result_free(r);
    assert_int_equal(stats(c).reprepares, 1);
    /* SQL the session sees deallocating starts the count again. */
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    pgt_client_exec_ok(c, "DISCARD ALL"); /* drops pg_temp's function too */
    pgt_client_exec_ok(c, dealloc_fn);
    warm(c, sql, &p, 1, 0, 42);
    pgt_client_exec_ok(c, "SELECT pg_temp.sc_dealloc()");
    assert_int_equal(run_int4(c, sql, &p, 1, 0), 42);
    assert_int_equal(stats(c).reprepares, 2);
    pgw_client_close(c);
}

/* With a request pipelined behind it, an invalidated statement is not
 * retried (the retry would run after the request behind it): it fails
 * with PGW_ESTMTINVALID and the request behind runs. */
static void test_pipelined_invalidation(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_CACHE_AUTO, 0, 0);
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS sc_pipe; CREATE TABLE sc_pipe (v int4);"
                          "INSERT INTO sc_pipe VALUES (4)");
    const char *sql = "SELECT * FROM sc_pipe";
    warm(c, sql, NULL, 0, 0, 4);
    pgt_client_exec_ok(c, "ALTER TABLE sc_pipe ADD COLUMN w int4");
    pgw_request_t reqs[2] = {PGW_QUERY(sql, NULL, 0, NULL, NULL),
                             PGW_QUERY("SELECT 9::int4", NULL, 0, NULL, NULL)};
    pgw_result_t *res[2] = {NULL, NULL};
    int statuses[2];
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, PGW_BATCH_SYNC_EACH, res, statuses),
                     PGW_ESTMTINVALID);
    assert_int_equal(statuses[0], PGW_ESTMTINVALID);
    assert_string_equal(sqlstate(res[0]), "0A000");
    assert_int_equal(statuses[1], 0);
    int32_t v;
    assert_int_equal(pgw_result_int4(res[1], 0, 0, &v), 0);
    assert_int_equal(v, 9);
    pgw_result_free(res[0]);
    pgw_result_free(res[1]);
    pgw_result_t *r = NULL;
    assert_int_equal(run(c, sql, NULL, 0, &r), 0);
    assert_int_equal(pgw_result_ncols(r), 2);
    pgw_result_free(r);
    pgt_client_exec_ok(c, "DROP TABLE sc_pipe");
    pgw_client_close(c);
}

/* ---------------------------------------------------- no names at all */

static void test_unnamed_mode(void **state)
{
    (void)state;
    pgw_client_t *c = open_mode(PGW_STMT_UNNAMED, 0, 0);
    for (int32_t i = 0; i < 5; i++) {
        pgw_param_t p = pgw_int4(i);
        assert_int_equal(run_int4(c, "SELECT $1::int4 + 1", &p, 1, 0), i + 1);
    }
    assert_int_equal(prepared_here(c), 0);
    assert_int_equal(simple_count(c, "SELECT count(*) FROM pg_prepared_statements"), 0);
    pgw_stmt_cache_stats_t st = stats(c);
    assert_int_equal(st.hits + st.misses + st.prepares, 0);
    pgw_request_t rq = PGW_PREPARE("named", "SELECT 1", NULL, 0, NULL, NULL);
    assert_int_equal(pgw_client_run(c, &rq, NULL), PGW_ENOTSUP);
    assert_non_null(strstr(pgw_client_refusal(c), "PGW_STMT_UNNAMED"));
    /* The unnamed statement is still there to prepare and execute. */
    rq = PGW_PREPARE("", "SELECT 3::int4", NULL, 0, NULL, NULL);
    assert_int_equal(pgw_client_run(c, &rq, NULL), 0);
    rq = PGW_EXECUTE("", NULL, 0, NULL, NULL);
    pgw_result_t *r = NULL;
    assert_int_equal(pgw_client_run(c, &rq, &r), 0);
    int32_t v;
    assert_int_equal(pgw_result_int4(r, 0, 0, &v), 0);
    assert_int_equal(v, 3);
    pgw_result_free(r);
    pgw_client_close(c);

    /* PGW_STMT_CACHE_OFF: no automatic preparation, named statements on
     * request. */
    c = open_mode(PGW_STMT_CACHE_OFF, 0, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(run_int4(c, "SELECT 1::int4", NULL, 0, 0), 1);
    assert_int_equal(prepared_here(c), 0);
    rq = PGW_PREPARE("named", "SELECT 1", NULL, 0, NULL, NULL);
    assert_int_equal(pgw_client_run(c, &rq, NULL), 0);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_queries_hit),
        cmocka_unit_test(test_lru_bounds),
        cmocka_unit_test(test_alter_table_outside_and_inside_transaction),
        cmocka_unit_test(test_alter_column_type),
        cmocka_unit_test(test_alter_type),
        cmocka_unit_test(test_search_path),
        cmocka_unit_test(test_discard_and_hidden_deallocate),
        cmocka_unit_test(test_pipelined_invalidation),
        cmocka_unit_test(test_unnamed_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
