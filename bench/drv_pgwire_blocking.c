/* libpgwire's blocking API (client.h) where a scenario fits it: one call at
 * a time (pgw_client_exec / query / run / prepare / execute), and
 * pgw_client_run_batch for the calls that go out together: with one Sync for
 * Unit of Work and suite C's transaction tests, with PGW_BATCH_SYNC_EACH
 * (independent calls, each its own Sync) for Extended Query concurrency and
 * suite C's autocommit tests. Binary results (the library's default), every
 * value decoded through the library's typed accessors, checked and folded
 * by the functions the asynchronous driver (drv_pgwire.c) uses too
 * (pgwire_checks.c), so the checksums agree. The mixed-row scenarios stream
 * (pgw_client_run with on_row); their *_buffered variants keep the whole result
 * and read it cell by cell.
 *
 * Not applicable, reported as "unsupported": the concurrent scenarios that
 * pgw_client_run_batch cannot express (a batch takes extended-protocol
 * requests only: no Simple Query). The pool scenarios run
 * pgw_client_pool_t from threads (drv_pgwire_blocking_pool.c). Bulk Load runs
 * pgw_client_copy_in with the source the asynchronous driver uses; Cursor
 * Streaming iterates pgw_client_cursor_*. */
#define _GNU_SOURCE
#include "bench.h"
#include "pgwire_checks.h"

#include <pgwire/client.h>
#include <pgwire/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NYI[] = "not yet implemented";
static const char WHO[] = "libpgwire blocking";
static const char NA_SIMPLE[] =
    "not applicable: the blocking API runs one Simple Query call at a time "
    "(pgw_client_run_batch takes extended queries only)";

#define MAX_CONC 64

typedef struct bls {
    pgw_client_t *c;
    const bench_env_t *env;
    int counter;
    int limit;
    uint64_t h;
    int64_t uow_expect[5];
    int32_t *arr;
    bench_pgw_copy_t copy;
    char conninfo[512];
    pgw_request_t items[MAX_CONC];
    pgw_param_t params[MAX_CONC];
    pgw_result_t *results[MAX_CONC];
    int statuses[MAX_CONC];
    bench_pgw_ceiling_t ceil; /* Per-Connection Ceiling: one batch, its results */
    pgw_result_t **ceil_results;
} bls_t;

/* Report a failed call with the server's message when there is one; frees r. */
static int call_fail(const char *what, int rc, pgw_result_t *r)
{
    const pgw_error_t *e = r ? pgw_result_error(r) : NULL;
    bench_fail("libpgwire blocking %s: %s%s%s", what, pgw_strerror(rc), e ? ": " : "",
               e && e->message ? e->message : "");
    pgw_result_free(r);
    return -1;
}

/* Connect with s->conninfo. */
static int open_client_ci(bls_t *s)
{
    char err[256] = "";
    int rc = pgw_client_connect_err(&s->c, s->conninfo, NULL, err, sizeof err);
    if (rc != 0)
        return bench_fail("libpgwire blocking connect: %s%s%s", pgw_strerror(rc),
                          err[0] ? ": " : "", err);
    return 0;
}

static int open_client_mode(bls_t *s, const char *host, const char *sslmode)
{
    snprintf(s->conninfo, sizeof s->conninfo,
             "host=%s port=%s user=%s dbname=%s sslmode=%s gssencmode=disable", host, s->env->port,
             s->env->user, s->env->db, sslmode);
    return open_client_ci(s);
}

static int open_client(bls_t *s, const char *host)
{
    return open_client_mode(s, host, "disable");
}

static void close_client(bls_t *s)
{
    pgw_client_close(s->c);
    s->c = NULL;
}

static bls_t *new_state(const bench_env_t *env, int connect)
{
    bls_t *s = calloc(1, sizeof *s);
    s->env = env;
    if (connect && open_client(s, env->host) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void teardown(void *st)
{
    bls_t *s = st;
    close_client(s);
    free(s->arr);
    free(s->copy.rows);
    bench_pgw_ceiling_free(&s->ceil);
    free(s->ceil_results);
    free(s);
}

static void *plain_setup(const bench_env_t *env)
{
    return new_state(env, 1);
}

/* ---- Connect ---------------------------------------------------------------- */
static void *connect_setup(const bench_env_t *env)
{
    return new_state(env, 0);
}
static int connect_mode_op(void *st, uint64_t *sum, const char *sslmode)
{
    bls_t *s = st;
    if (open_client_mode(s, s->env->tcp_host, sslmode) != 0) return -1;
    close_client(s);
    *sum = 0;
    return 0;
}
static int connect_op(void *st, uint64_t *sum)
{
    return connect_mode_op(st, sum, "disable");
}
static int connect_tls_op(void *st, uint64_t *sum)
{
    return connect_mode_op(st, sum, "require");
}
static int connect_gss_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    if (bench_pgw_gss_conninfo(s->conninfo, sizeof s->conninfo, s->env) != 0) return -1;
    if (open_client_ci(s) != 0) return -1;
    pgw_gss_info_t info;
    pgw_conn_gss_info(pgw_client_conn(s->c), &info);
    if (!info.encrypted) return bench_fail("libpgwire blocking connect: no GSS encryption");
    close_client(s);
    *sum = 0;
    return 0;
}

/* TCP with sslmode=require, for the TLS rows. */
static void *tls_setup(const bench_env_t *env)
{
    bls_t *s = new_state(env, 0);
    if (s && open_client_mode(s, env->tcp_host, "require") != 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* ---- single int answers ------------------------------------------------------ */
static int simple_seq_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    int rc = pgw_client_exec(s->c, SQL_SIMPLE_SEQ, &r);
    if (rc != 0) return call_fail("exec", rc, r);
    rc = bench_pgw_check_int4(WHO, r, 1);
    pgw_result_free(r);
    *sum = 1;
    return rc;
}

/* ---- mixed rows ---------------------------------------------------------------- */
/* Streamed (pgw_client_run with on_row): each row decoded from the read buffer as
 * it arrives, no result kept. Buffered (the *_buffered scenarios): the whole
 * result, then every cell through pgw_result_value + the typed getters. */
static int stream_mixed(bls_t *s, pgw_request_t *q, uint64_t *sum)
{
    bench_pgw_mixed_t m = {WHO, 0, 0};
    pgw_result_t *r = NULL;
    q->on_row = bench_pgw_mixed_row;
    q->ud = &m;
    int rc = pgw_client_run(s->c, q, &r);
    if (rc != 0) return call_fail("streamed run", rc, r);
    pgw_result_free(r);
    if (m.rows != (size_t)bench_sz.fetch_rows) return bench_fail("%s mixed: %zu rows", WHO, m.rows);
    *sum = m.h;
    return 0;
}
static int mixed_op(bls_t *s, unsigned flags, uint64_t *sum)
{
    pgw_param_t p[] = {pgw_int4(bench_sz.fetch_rows)};
    pgw_request_t q = PGW_QUERY(SQL_MIXED, p, 1, NULL, NULL);
    q.flags = flags;
    return stream_mixed(s, &q, sum);
}
static int simple_fetch_op(void *st, uint64_t *sum)
{
    pgw_request_t q = PGW_SIMPLE(SQL_SIMPLE_FETCH, NULL, NULL);
    return stream_mixed(st, &q, sum);
}
static int mixed_text_op(void *st, uint64_t *sum)
{
    return mixed_op(st, PGW_Q_TEXT, sum);
}
static int mixed_binary_op(void *st, uint64_t *sum)
{
    return mixed_op(st, 0, sum);
}

/* Check the row count, fold the rows into *sum, free r. */
static int finish_mixed(pgw_result_t *r, uint64_t *sum)
{
    int rc = bench_pgw_fold_mixed(WHO, r, (size_t)bench_sz.fetch_rows, sum);
    pgw_result_free(r);
    return rc;
}

static int simple_fetch_buffered_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    int rc = pgw_client_exec(s->c, SQL_SIMPLE_FETCH, &r);
    if (rc != 0) return call_fail("exec", rc, r);
    return finish_mixed(r, sum);
}

static int mixed_buffered_op(bls_t *s, unsigned flags, uint64_t *sum)
{
    pgw_result_t *r;
    pgw_param_t p[] = {pgw_int4(bench_sz.fetch_rows)};
    pgw_request_t q = PGW_QUERY(SQL_MIXED, p, 1, NULL, NULL);
    q.flags = flags;
    int rc = pgw_client_run(s->c, &q, &r);
    if (rc != 0) return call_fail("query", rc, r);
    return finish_mixed(r, sum);
}
static int mixed_text_buffered_op(void *st, uint64_t *sum)
{
    return mixed_buffered_op(st, PGW_Q_TEXT, sum);
}
static int mixed_binary_buffered_op(void *st, uint64_t *sum)
{
    return mixed_buffered_op(st, 0, sum);
}

/* ---- Extended Query ------------------------------------------------------------ */
static int ext_seq_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    int want = ++s->counter;
    pgw_param_t p[] = {pgw_int4(want)};
    *sum = 0;
    int rc = pgw_client_query(s->c, SQL_EXT_SEQ, p, 1, &r);
    if (rc != 0) return call_fail("query", rc, r);
    rc = bench_pgw_check_int4(WHO, r, want);
    pgw_result_free(r);
    return rc;
}

/* pgw_client_run_batch, failing when nothing was sent (a refusal: every
 * status is then marked "not reported"). */
#define NOT_REPORTED 1
static int run_batch(pgw_client_t *c, const pgw_request_t *items, size_t n, unsigned flags,
                     pgw_result_t **res, int *status)
{
    int rc = pgw_client_run_batch(c, items, n, flags, res, status);
    if (rc != 0 && pgw_client_refusal(c)[0]) {
        for (size_t i = 0; i < n; i++)
            status[i] = NOT_REPORTED;
        return call_fail("batch", rc, NULL);
    }
    return 0;
}

/* Check every item of a finished batch with check(result, k), free them all. */
static int batch_check(bls_t *s, size_t n, int (*check)(bls_t *, pgw_result_t *, size_t))
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && s->statuses[i] != 0) {
            rc = call_fail("batch item", s->statuses[i], s->results[i]);
            s->results[i] = NULL;
        } else if (rc == 0 && check(s, s->results[i], i) != 0) {
            rc = -1;
        }
        pgw_result_free(s->results[i]);
        s->results[i] = NULL;
    }
    return rc;
}

static int check_ext_item(bls_t *s, pgw_result_t *r, size_t i)
{
    return bench_pgw_check_int4(WHO, r, s->params[i].u.i);
}

/* 50 independent calls: one pgw_client_run_batch, a Sync after each. */
static int ext_conc_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    size_t n = (size_t)bench_sz.ext_conc;
    for (size_t i = 0; i < n; i++) {
        s->params[i] = pgw_int4(++s->counter);
        s->items[i] = PGW_QUERY(SQL_EXT_SEQ, &s->params[i], 1, NULL, NULL);
    }
    *sum = 0;
    if (run_batch(s->c, s->items, n, PGW_BATCH_SYNC_EACH, s->results, s->statuses)) return -1;
    return batch_check(s, n, check_ext_item);
}

/* ---- Large fetches ---------------------------------------------------------------- */
static int blob_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    pgw_param_t p[] = {pgw_int4(bench_sz.blob_rows)};
    int rc = pgw_client_query(s->c, SQL_BLOB, p, 1, &r);
    if (rc != 0) return call_fail("query", rc, r);
    rc = bench_pgw_fold_blob(WHO, r, sum);
    pgw_result_free(r);
    return rc;
}

static void *array_setup(const bench_env_t *env)
{
    bls_t *s = new_state(env, 1);
    if (s) s->arr = bench_xmalloc(sizeof(int32_t) * (size_t)bench_sz.array_elems);
    return s;
}
static int array_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    pgw_param_t p[] = {pgw_int4(bench_sz.array_rows)};
    int rc = pgw_client_query(s->c, SQL_ARRAY, p, 1, &r);
    if (rc != 0) return call_fail("query", rc, r);
    rc = bench_pgw_fold_array(WHO, r, s->arr, sum);
    pgw_result_free(r);
    return rc;
}

/* ---- Prepared Statement Reuse ----------------------------------------------------- */
static int prepare(bls_t *s, const char *name, const char *sql, const uint32_t *oids, uint16_t n)
{
    pgw_result_t *r = NULL;
    int rc = pgw_client_prepare(s->c, name, sql, oids, n, &r);
    if (rc != 0) return call_fail("prepare", rc, r);
    pgw_result_free(r);
    return 0;
}

static void *prep_setup(const bench_env_t *env)
{
    static const uint32_t int4 = 23;
    bls_t *s = new_state(env, 1);
    if (s && prepare(s, "bench_prep", SQL_PREP, &int4, 1) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int prep_seq_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    s->h = 0;
    for (int i = 0; i < bench_sz.prep_reuse; i++) {
        pgw_result_t *r;
        pgw_param_t p[] = {pgw_int4(i + 1)};
        int rc = pgw_client_execute(s->c, "bench_prep", p, 1, &r);
        if (rc != 0) return call_fail("execute", rc, r);
        rc = bench_pgw_fold_prep(WHO, r, i + 1, &s->h);
        pgw_result_free(r);
        if (rc != 0) return -1;
    }
    *sum = s->h;
    return 0;
}

/* The concurrent variant: one batch, a Sync after each execution (each its
 * own implicit transaction), every answer checked. */
static int check_prep_item(bls_t *s, pgw_result_t *r, size_t i)
{
    return bench_pgw_fold_prep(WHO, r, s->params[i].u.i, &s->h);
}

static int prep_conc_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    size_t n = (size_t)bench_sz.prep_reuse;
    int first = s->counter;
    for (size_t i = 0; i < n; i++) {
        s->params[i] = pgw_int4((first + (int)i) % 1000 + 1);
        s->items[i] = PGW_EXECUTE("bench_prep", &s->params[i], 1, NULL, NULL);
    }
    s->counter += (int)n;
    *sum = 0;
    if (run_batch(s->c, s->items, n, PGW_BATCH_SYNC_EACH, s->results, s->statuses)) return -1;
    return batch_check(s, n, check_prep_item);
}

/* ---- Unit of Work ------------------------------------------------------------------- */
static int check_uow_item(bls_t *s, pgw_result_t *r, size_t j)
{
    int64_t want = bench_uow_is_read((int)j) ? s->uow_expect[j - 10] : -1;
    return bench_pgw_check_uow(WHO, r, want);
}

static int uow_read_base(bls_t *s)
{
    pgw_result_t *r;
    int rc = pgw_client_query(s->c, "select v from bench_uow where id between 1 and 5 order by id",
                              NULL, 0, &r);
    if (rc != 0) return call_fail("uow setup", rc, r);
    rc = bench_pgw_read_uow_base(WHO, r, s->uow_expect);
    pgw_result_free(r);
    return rc;
}

static void *uow_setup(const bench_env_t *env)
{
    bls_t *s = new_state(env, 1);
    if (!s) return NULL;
    if (uow_read_base(s) != 0) {
        teardown(s);
        return NULL;
    }
    s->params[0] = pgw_int4(1);
    for (int j = 0; j < bench_sz.uow_stmts; j++) {
        int read = bench_uow_is_read(j);
        s->items[j] = PGW_QUERY(bench_uow_sql(j), s->params, read ? 0 : 1, NULL, NULL);
    }
    return s;
}

/* 20 statements, one Sync: one pgw_client_run_batch without PGW_BATCH_SYNC_EACH. */
static int uow_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    for (int i = 0; i < 5; i++)
        s->uow_expect[i]++;
    *sum = 0;
    if (run_batch(s->c, s->items, (size_t)bench_sz.uow_stmts, 0, s->results, s->statuses))
        return -1;
    return batch_check(s, (size_t)bench_sz.uow_stmts, check_uow_item);
}

/* ---- Suite B (sequential groups) --------------------------------------------------- */
static void *b_setup(const bench_env_t *env, int limit)
{
    char sql[128];
    snprintf(sql, sizeof sql, SQL_B_FMT, limit);
    bls_t *s = new_state(env, 1);
    if (!s) return NULL;
    s->limit = limit;
    if (prepare(s, "bench_b", sql, NULL, 0) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int b_seq_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r;
    s->h = 0;
    int rc = pgw_client_execute(s->c, "bench_b", NULL, 0, &r);
    if (rc != 0) return call_fail("execute", rc, r);
    rc = bench_pgw_fold_b(WHO, r, s->limit, &s->h);
    pgw_result_free(r);
    *sum = s->h;
    return rc;
}
static int check_b_item(bls_t *s, pgw_result_t *r, size_t i)
{
    (void)i;
    return bench_pgw_fold_b(WHO, r, s->limit, &s->h);
}

/* Pipelined x10: ten executions in one batch, a Sync after each. */
static int b_pipe_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    s->h = 0;
    for (size_t i = 0; i < 10; i++)
        s->items[i] = PGW_EXECUTE("bench_b", NULL, 0, NULL, NULL);
    if (run_batch(s->c, s->items, 10, PGW_BATCH_SYNC_EACH, s->results, s->statuses)) return -1;
    int rc = batch_check(s, 10, check_b_item);
    *sum = s->h;
    return rc;
}

#define B_SETUP(n)                                   \
    static void *b_setup_##n(const bench_env_t *env) \
    {                                                \
        return b_setup(env, n);                      \
    }
B_SETUP(1)
B_SETUP(100)
B_SETUP(500)

/* ---- Per-Connection Ceiling ------------------------------------------------------ */
/* One pgw_client_run_batch of bench_sz.ceiling executions, one Sync,
 * written in parts while it is encoded (PGW_BATCH_STREAM); rows checked as
 * they arrive, no result kept (PGW_Q_NO_RESULT: every results[i] NULL). */
static void *ceiling_setup(const bench_env_t *env)
{
    static const uint32_t int4 = 23;
    bls_t *s = new_state(env, 1);
    if (!s) return NULL;
    bench_pgw_ceiling_init(&s->ceil, WHO);
    s->ceil_results = bench_xmalloc((size_t)bench_sz.ceiling * sizeof *s->ceil_results);
    if (prepare(s, CEILING_STMT, SQL_EXT_SEQ, &int4, 1) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int ceiling_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    bench_pgw_ceiling_start(&s->ceil);
    int rc = pgw_client_run_batch(s->c, s->ceil.reqs, (size_t)bench_sz.ceiling, PGW_BATCH_STREAM,
                                  s->ceil_results, NULL);
    for (int i = 0; i < bench_sz.ceiling; i++)
        pgw_result_free(s->ceil_results[i]);
    return bench_pgw_ceiling_check(&s->ceil, rc, sum);
}

/* ---- Bulk Load ----------------------------------------------------------------------- */
static void *copy_setup_fmt(const bench_env_t *env, int binary)
{
    bls_t *s = new_state(env, 1);
    if (s) bench_pgw_copy_init(&s->copy, binary);
    return s;
}
BENCH_PGW_COPY_SETUPS(copy_setup_fmt)

static int copy_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    pgw_result_t *r = NULL;
    int rc = pgw_client_exec(s->c, "TRUNCATE bench_copy", &r);
    if (rc != 0) return call_fail("truncate", rc, r);
    pgw_result_free(r);
    bench_pgw_copy_reset(&s->copy);
    r = NULL;
    rc = pgw_client_copy_in(s->c,
                            s->copy.binary ? "COPY bench_copy FROM STDIN (FORMAT binary)"
                                           : "COPY bench_copy FROM STDIN (FORMAT csv)",
                            bench_pgw_copy_source, &s->copy, &r);
    if (rc != 0) return call_fail("copy", rc, r);
    rc = bench_pgw_check_copy(WHO, r);
    pgw_result_free(r);
    *sum = 0;
    return rc;
}

/* ---- Cursor Streaming ------------------------------------------------------------------- */
/* pgw_client_cursor_open with batches of 500, pgw_client_cursor_next until
 * PGW_EDONE (the cursor has the next batch on its way while this one is
 * read), every row checked and folded through pgw_result_row. */
static int cursor_op(void *st, uint64_t *sum)
{
    bls_t *s = st;
    char sql[160];
    snprintf(sql, sizeof sql, SQL_CURSOR, bench_sz.cursor_rows);
    bench_pgw_cursor_t fold = {WHO, 0, 0};
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    pgw_client_cursor_t *cur;
    int rc = pgw_client_cursor_open(s->c, &q, (uint32_t)bench_sz.cursor_batch, &cur);
    if (rc != 0) return call_fail("cursor open", rc, NULL);
    pgw_result_t *r;
    while ((rc = pgw_client_cursor_next(cur, &r)) == 0) {
        int bad = bench_pgw_fold_cursor(r, &fold);
        pgw_result_free(r);
        if (bad) {
            pgw_client_cursor_close(cur);
            return -1;
        }
    }
    if (rc != PGW_EDONE) {
        pgw_client_cursor_close(cur);
        return call_fail("cursor next", rc, r);
    }
    rc = pgw_client_cursor_close(cur);
    if (rc != 0) return call_fail("cursor close", rc, NULL);
    if (fold.rows != bench_sz.cursor_rows)
        return bench_fail("%s cursor: %lld rows", WHO, (long long)fold.rows);
    *sum = fold.h;
    return 0;
}

static const char NOTE_B[] = "pgw_client_prepare once, pgw_client_execute, binary";
static const char NOTE_B_PIPE[] =
    "pgw_client_prepare once; one pgw_client_run_batch of 10 executions, a Sync after each";

static const struct {
    const char *id;
    bench_impl_t impl;
} table[] = {
    {"connect",
     {connect_setup, connect_op, teardown, "pgw_client_connect over TCP + pgw_client_close"}},
    {"simple_seq", {plain_setup, simple_seq_op, teardown, "pgw_client_exec"}},
    {"simple_fetch",
     {plain_setup, simple_fetch_op, teardown,
      "pgw_client_run of a Simple Query with on_row: rows decoded as they arrive, typed getters"}},
    {"simple_fetch_buffered",
     {plain_setup, simple_fetch_buffered_op, teardown,
      "pgw_client_exec: buffered result, pgw_result_value + typed getters per cell"}},
    {"ext_seq", {plain_setup, ext_seq_op, teardown, "pgw_client_query, binary"}},
    {"ext_conc",
     {plain_setup, ext_conc_op, teardown,
      "one pgw_client_run_batch of 50 queries with PGW_BATCH_SYNC_EACH (a Sync after each)"}},
    {"mixed_text",
     {plain_setup, mixed_text_op, teardown,
      "pgw_client_run with on_row (PGW_Q_TEXT): rows decoded as they arrive, typed getters"}},
    {"mixed_binary",
     {plain_setup, mixed_binary_op, teardown,
      "pgw_client_run with on_row: rows decoded as they arrive, typed getters"}},
    {"mixed_text_buffered",
     {plain_setup, mixed_text_buffered_op, teardown,
      "pgw_client_run(PGW_Q_TEXT): buffered result, pgw_result_value + typed getters "
      "per cell"}},
    {"mixed_binary_buffered",
     {plain_setup, mixed_binary_buffered_op, teardown,
      "pgw_client_query: buffered result, pgw_result_value + typed getters per cell"}},
    {"blob_fetch", {plain_setup, blob_op, teardown, "pgw_client_query, bytea views"}},
    {"connect_tls",
     {connect_setup, connect_tls_op, teardown,
      "pgw_client_connect over TCP, sslmode=require + pgw_client_close"}},
    {"blob_fetch_tls",
     {tls_setup, blob_op, teardown, "pgw_client_query, bytea views; TCP with sslmode=require"}},
    {"connect_gss",
     {connect_setup, connect_gss_op, teardown,
      "pgw_client_connect over TCP, gssencmode=require + pgw_client_close"}},
    {"array_fetch", {array_setup, array_op, teardown, "pgw_client_query, pgw_array_get_int4"}},
    {"prep_seq",
     {prep_setup, prep_seq_op, teardown, "pgw_client_prepare once, pgw_client_execute"}},
    {"prep_conc",
     {prep_setup, prep_conc_op, teardown,
      "pgw_client_prepare once; one pgw_client_run_batch of 50 executions, a Sync after each"}},
    {"unit_of_work",
     {uow_setup, uow_op, teardown, "one pgw_client_run_batch of 20 queries: one Sync"}},
    {"copy_text",
     {copy_text_setup, copy_op, teardown,
      "pgw_client_exec TRUNCATE + pgw_client_copy_in, CSV rows formatted with pgw_copy_csv_* as "
      "the call pulls them"}},
    {"copy_binary",
     {copy_binary_setup, copy_op, teardown,
      "pgw_client_exec TRUNCATE + pgw_client_copy_in, binary rows encoded with pgw_copy_bin_* as "
      "the call pulls them"}},
    {"c_rtt", {plain_setup, simple_seq_op, teardown, "pgw_client_exec"}},
    {"ceiling",
     {ceiling_setup, ceiling_op, teardown,
      "one pgw_client_run_batch (PGW_BATCH_STREAM: written in parts while encoded), rows "
      "checked as they arrive, PGW_Q_NO_RESULT"}},
    {"b_seq_1", {b_setup_1, b_seq_op, teardown, NOTE_B}},
    {"b_seq_100", {b_setup_100, b_seq_op, teardown, NOTE_B}},
    {"b_seq_500", {b_setup_500, b_seq_op, teardown, NOTE_B}},
    {"b_pipe_1", {b_setup_1, b_pipe_op, teardown, NOTE_B_PIPE}},
    {"b_pipe_100", {b_setup_100, b_pipe_op, teardown, NOTE_B_PIPE}},
    {"b_pipe_500", {b_setup_500, b_pipe_op, teardown, NOTE_B_PIPE}},
    {"cursor",
     {plain_setup, cursor_op, teardown,
      "pgw_client_cursor_open (batches of 500), pgw_client_cursor_next until PGW_EDONE, "
      "pgw_result_row + typed getters per row"}},
};

static const struct {
    const char *id;
    const char *reason;
} not_applicable[] = {
    {"simple_conc", NA_SIMPLE},
    {"pool_simple", NA_SIMPLE},
};

const bench_impl_t *bench_pgwire_blocking_lookup(const char *scenario, const char **reason)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].id, scenario) == 0) return &table[i].impl;
    const bench_impl_t *pool = bench_pgwire_blocking_pool_lookup(scenario);
    if (pool) return pool;
    *reason = NYI;
    for (size_t i = 0; i < sizeof not_applicable / sizeof not_applicable[0]; i++)
        if (strcmp(not_applicable[i].id, scenario) == 0) *reason = not_applicable[i].reason;
    return NULL;
}

/* ---- suite C: one pgw_client_run_batch per test, with the test's Sync policy ---------- */
static int c_run(void *st, const bench_c_test_t *t)
{
    bls_t *s = st;
    size_t n = (size_t)t->nstmts;
    pgw_request_t *items = bench_xmalloc(sizeof *items * n);
    pgw_result_t **res = bench_xmalloc(sizeof *res * n);
    int *status = bench_xmalloc(sizeof *status * n);
    for (size_t i = 0; i < n; i++)
        items[i] = PGW_QUERY(t->stmts[i].sql, NULL, 0, NULL, NULL);
    int rc = run_batch(s->c, items, n, t->sync_each ? PGW_BATCH_SYNC_EACH : 0, res, status);
    for (size_t i = 0; i < n && status[0] != NOT_REPORTED; i++) {
        int want = t->stmts[i].expect_rows;
        if (rc == 0 && status[i] != 0) {
            rc = call_fail("suite C statement", status[i], res[i]);
            res[i] = NULL;
        } else if (rc == 0) {
            rc = bench_pgw_check_c(WHO, res[i], want);
        }
        pgw_result_free(res[i]);
    }
    free(items);
    free(res);
    free(status);
    return rc;
}

static const bench_c_impl_t c_impl = {plain_setup, c_run, teardown};

const bench_c_impl_t *bench_pgwire_blocking_c(const char **reason)
{
    (void)reason;
    return &c_impl;
}
