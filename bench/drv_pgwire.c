/* libpgwire's drivers, through the library's fastest path: the asynchronous
 * connection (conn.h) on a uv loop, every call of an operation issued in one
 * loop turn (so they leave in one write), binary results (the library's
 * default), prepared statements, a batch with one Sync for Unit of Work, and
 * every value decoded through the library's own typed accessors.
 *
 * Bulk Load pulls its rows through a COPY source that formats them with
 * the library's COPY row encoders as the connection asks for data; Cursor
 * Streaming reads a named portal 500 rows per FETCH, one FETCH ahead.
 * The pool scenarios go through pgw_pool_submit (drv_pgwire_pool.c, built
 * when pgwire/pool.h exists; until then they report "not yet
 * implemented"); their reference row (--lib libpgwire-single) pipelines all
 * the calls on one connection. Through PgBouncer (env->pgbouncer) every
 * connection uses unnamed statements only (stmt_cache_mode =
 * PGW_STMT_UNNAMED), as transaction mode requires.
 * The blocking API (client.h) has its own driver, drv_pgwire_blocking.c. */
#define _GNU_SOURCE
#include "bench.h"
#include "pgwire_checks.h"

#include <pgwire/conn.h>
#include <pgwire/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static const char NYI[] = "not yet implemented";
static const char WHO[] = "libpgwire";

typedef struct pgs {
    uv_loop_t loop;
    pgw_conn_t *c;
    const bench_env_t *env;
    int pending;
    int failed;
    int connected;
    int counter;
    uint64_t h;
    int limit;
    int64_t uow_expect[5];
    char conninfo[512];
    int32_t *arr;
    struct call *calls; /* the pool scenarios' 1000 completions */
    bench_pgw_copy_t copy;
    bench_pgw_ceiling_t ceil; /* Per-Connection Ceiling: one batch */
} pgs_t;

static int conn_fail(pgs_t *s, const char *what, int rc)
{
    s->failed = 1;
    return bench_fail("libpgwire %s: %s", what, pgw_strerror(rc));
}

static void run_until_done(pgs_t *s)
{
    while (s->pending > 0 && !s->failed)
        uv_run(&s->loop, UV_RUN_ONCE);
}

static void on_connect(pgw_conn_t *c, int status, const pgw_error_t *err, void *ud)
{
    pgs_t *s = ud;
    (void)c;
    s->pending--;
    if (status != 0) {
        s->failed = 1;
        bench_fail("libpgwire connect: %s%s%s", pgw_strerror(status), err ? ": " : "",
                   err && err->message ? err->message : "");
    } else {
        s->connected = 1;
    }
}

static void on_close(pgw_conn_t *c, void *ud)
{
    (void)c;
    ((pgs_t *)ud)->pending--;
}

int bench_pgw_conninfo(char *out, size_t cap, const bench_env_t *env, const char *host,
                       const char *sslmode)
{
    int n = snprintf(out, cap, "host=%s port=%s user=%s dbname=%s sslmode=%s gssencmode=disable",
                     host, env->port, env->user, env->db, sslmode);
    if (n < 0 || (size_t)n >= cap) return bench_fail("libpgwire: conninfo too long");
    if (!env->password) return 0;
    size_t at = (size_t)n;
    const char *pre = " password='";
    for (const char *p = pre; *p && at + 1 < cap; p++)
        out[at++] = *p;
    for (const char *p = env->password; *p && at + 3 < cap; p++) {
        if (*p == '\'' || *p == '\\') out[at++] = '\\';
        out[at++] = *p;
    }
    if (at + 2 >= cap) return bench_fail("libpgwire: conninfo too long");
    out[at++] = '\'';
    out[at] = '\0';
    return 0;
}

int bench_pgw_gss_conninfo(char *out, size_t cap, const bench_env_t *env)
{
    int n = snprintf(out, cap,
                     "host=%s hostaddr=%s port=%s user=%s dbname=postgres sslmode=disable "
                     "gssencmode=require",
                     env->gss_host, env->gss_hostaddr, env->gss_port, env->gss_user);
    return n < 0 || (size_t)n >= cap ? bench_fail("libpgwire: conninfo too long") : 0;
}

void bench_pgw_conn_config(pgw_conn_config_t *cfg, const bench_env_t *env)
{
    pgw_conn_config_init(cfg);
    /* PgBouncer in transaction mode: no named statement may outlive a
     * transaction, so none is made. */
    if (env->pgbouncer) cfg->stmt_cache_mode = PGW_STMT_UNNAMED;
    /* The "statement cache off" reference row. */
    if (env->stmt_cache_off) cfg->stmt_cache_mode = PGW_STMT_CACHE_OFF;
}

/* Connect with s->conninfo. */
static int open_conn_ci(pgs_t *s)
{
    pgw_conn_config_t cfg;
    bench_pgw_conn_config(&cfg, s->env);
    int rc = pgw_conn_new(&s->c, &s->loop, &cfg);
    if (rc != 0) return conn_fail(s, "new", rc);
    s->pending++;
    rc = pgw_conn_connect(s->c, s->conninfo, on_connect, s);
    if (rc != 0) {
        s->pending--;
        return conn_fail(s, "connect", rc);
    }
    run_until_done(s);
    return s->failed ? -1 : 0;
}

/* Connect to host with sslmode (TCP hosts only negotiate TLS). */
static int open_conn_mode(pgs_t *s, const char *host, const char *sslmode)
{
    if (bench_pgw_conninfo(s->conninfo, sizeof s->conninfo, s->env, host, sslmode) != 0) return -1;
    if (open_conn_ci(s) != 0) return -1;
    pgw_tls_info_t info;
    pgw_conn_tls_info(s->c, &info);
    if (info.in_use != (strcmp(sslmode, "disable") != 0))
        return bench_fail("libpgwire connect: TLS in use %d with sslmode=%s", info.in_use, sslmode);
    return 0;
}

static int open_conn(pgs_t *s, const char *host)
{
    return open_conn_mode(s, host, "disable");
}

static void close_conn(pgs_t *s)
{
    if (!s->c) return;
    s->pending++;
    if (pgw_conn_close(s->c, on_close, s) != 0) s->pending--;
    s->failed = 0;
    run_until_done(s);
    s->c = NULL;
}

static pgs_t *new_state(const bench_env_t *env, int connect)
{
    pgs_t *s = calloc(1, sizeof *s);
    s->env = env;
    uv_loop_init(&s->loop);
    if (connect && open_conn(s, env->host) != 0) {
        uv_loop_close(&s->loop);
        free(s);
        return NULL;
    }
    return s;
}

static void teardown(void *st)
{
    pgs_t *s = st;
    close_conn(s);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    free(s->arr);
    free(s->calls);
    free(s->copy.rows);
    bench_pgw_ceiling_free(&s->ceil);
    free(s);
}

static void *plain_setup(const bench_env_t *env)
{
    return new_state(env, 1);
}

/* A request's completion, checked by a scenario-specific function. */
typedef struct call {
    pgs_t *s;
    int64_t want;
    int (*check)(struct call *k, pgw_result_t *r);
} call_t;

static void on_result(int status, pgw_result_t *r, void *ud)
{
    call_t *k = ud;
    pgs_t *s = k->s;
    s->pending--;
    if (status != 0) {
        const pgw_error_t *e = r ? pgw_result_error(r) : NULL;
        bench_fail("libpgwire request: %s%s%s", pgw_strerror(status), e ? ": " : "",
                   e && e->message ? e->message : "");
        s->failed = 1;
    } else if (k->check && k->check(k, r) != 0) {
        s->failed = 1;
    }
    if (r) pgw_result_free(r);
}

static int issue_done(pgs_t *s, int rc)
{
    if (rc != 0) {
        s->pending--;
        return conn_fail(s, "request", rc);
    }
    return 0;
}

/* ---- Connect ---------------------------------------------------------------- */
static void *connect_setup(const bench_env_t *env)
{
    return new_state(env, 0);
}
static int connect_mode_op(void *st, uint64_t *sum, const char *sslmode)
{
    pgs_t *s = st;
    if (open_conn_mode(s, s->env->tcp_host, sslmode) != 0) return -1;
    close_conn(s);
    *sum = 0;
    return 0;
}

static int connect_op(void *st, uint64_t *sum)
{
    return connect_mode_op(st, sum, "disable");
}

/* Every connect after the first reuses the process's TLS context: no
 * certificate file is read or parsed again. */
static int connect_tls_op(void *st, uint64_t *sum)
{
    return connect_mode_op(st, sum, "require");
}

/* GSS encryption to the Kerberos realm's server. */
static int connect_gss_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    if (bench_pgw_gss_conninfo(s->conninfo, sizeof s->conninfo, s->env) != 0) return -1;
    if (open_conn_ci(s) != 0) return -1;
    pgw_gss_info_t info;
    pgw_conn_gss_info(s->c, &info);
    if (!info.encrypted) return bench_fail("libpgwire connect: no GSS encryption");
    close_conn(s);
    *sum = 0;
    return 0;
}

/* TCP with sslmode=require, for the TLS rows. */
static void *tls_setup(const bench_env_t *env)
{
    pgs_t *s = new_state(env, 0);
    if (s && open_conn_mode(s, env->tcp_host, "require") != 0) {
        uv_loop_close(&s->loop);
        free(s);
        return NULL;
    }
    return s;
}

/* ---- single int answers ------------------------------------------------------ */
static int check_int4(call_t *k, pgw_result_t *r)
{
    return bench_pgw_check_int4(WHO, r, k->want);
}

static int simple_seq_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t k = {s, 1, check_int4};
    s->pending++;
    if (issue_done(s, pgw_conn_simple_query(s->c, SQL_SIMPLE_SEQ, on_result, &k))) return -1;
    run_until_done(s);
    *sum = 1;
    return s->failed ? -1 : 0;
}

static int simple_conc_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t k[100];
    char sql[32];
    for (int i = 0; i < bench_sz.simple_conc; i++) {
        k[i] = (call_t){s, ++s->counter, check_int4};
        snprintf(sql, sizeof sql, "select %d", s->counter);
        s->pending++;
        if (issue_done(s, pgw_conn_simple_query(s->c, sql, on_result, &k[i]))) return -1;
    }
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}

/* ---- mixed rows --------------------------------------------------------------- */
/* The decode scenarios stream: each row is decoded from the read buffer as
 * it arrives (pgw_conn_submit with on_row), overlapping decoding with the server's
 * sending, with no result kept. The work is the same fold, row by row. Their
 * *_buffered variants (below) keep the whole result first. */
typedef struct mixed_stream {
    bench_pgw_mixed_t fold;
    pgs_t *s;
} mixed_stream_t;

static int on_mixed_row(const pgw_row_t *row, void *ud)
{
    return bench_pgw_mixed_row(row, &((mixed_stream_t *)ud)->fold);
}

static void on_mixed_done(int status, pgw_result_t *res, void *ud)
{
    mixed_stream_t *m = ud;
    pgs_t *s = m->s;
    s->pending--;
    if (status != 0) {
        s->failed = 1;
        bench_fail("%s mixed: %s", WHO, pgw_strerror(status));
    } else if (m->fold.rows != (size_t)bench_sz.fetch_rows) {
        s->failed = 1;
        bench_fail("%s mixed: %zu rows", WHO, m->fold.rows);
    }
    pgw_result_free(res);
}

static int simple_fetch_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    mixed_stream_t m = {{WHO, 0, 0}, s};
    s->pending++;
    pgw_request_t q = PGW_SIMPLE(SQL_SIMPLE_FETCH, on_mixed_done, &m);
    q.on_row = on_mixed_row;
    int rc = pgw_conn_submit(s->c, &q);
    if (rc != 0) {
        s->pending--;
        return conn_fail(s, "submit (simple, on_row)", rc);
    }
    run_until_done(s);
    *sum = m.fold.h;
    return s->failed ? -1 : 0;
}

static int mixed_op(pgs_t *s, unsigned flags, uint64_t *sum)
{
    mixed_stream_t m = {{WHO, 0, 0}, s};
    pgw_param_t p[] = {pgw_int4(bench_sz.fetch_rows)};
    s->pending++;
    pgw_request_t q = PGW_QUERY(SQL_MIXED, p, 1, on_mixed_done, &m);
    q.flags = flags;
    q.on_row = on_mixed_row;
    int rc = pgw_conn_submit(s->c, &q);
    if (rc != 0) {
        s->pending--;
        return conn_fail(s, "submit (on_row)", rc);
    }
    run_until_done(s);
    *sum = m.fold.h;
    return s->failed ? -1 : 0;
}
static int mixed_text_op(void *st, uint64_t *sum)
{
    return mixed_op(st, PGW_Q_TEXT, sum);
}
static int mixed_binary_op(void *st, uint64_t *sum)
{
    return mixed_op(st, 0, sum);
}

/* The buffered variants: the whole result first, then row by row through
 * pgw_result_row (the row view a row callback gets, kept by the result) and
 * the typed getters, as a program that keeps its rows does. The blocking
 * driver reads the same results cell by cell (pgw_result_value). */
static int check_mixed(call_t *k, pgw_result_t *r)
{
    return bench_pgw_fold_mixed_rows(WHO, r, (size_t)bench_sz.fetch_rows, &k->s->h);
}

static int simple_fetch_buffered_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t k = {s, 0, check_mixed};
    s->pending++;
    if (issue_done(s, pgw_conn_simple_query(s->c, SQL_SIMPLE_FETCH, on_result, &k))) return -1;
    run_until_done(s);
    *sum = s->h;
    return s->failed ? -1 : 0;
}

static int mixed_buffered_op(pgs_t *s, unsigned flags, uint64_t *sum)
{
    call_t k = {s, 0, check_mixed};
    pgw_param_t p[] = {pgw_int4(bench_sz.fetch_rows)};
    s->pending++;
    pgw_request_t q = PGW_QUERY(SQL_MIXED, p, 1, on_result, &k);
    q.flags = flags;
    if (issue_done(s, pgw_conn_submit(s->c, &q))) return -1;
    run_until_done(s);
    *sum = s->h;
    return s->failed ? -1 : 0;
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
static int ext_n(pgs_t *s, int n)
{
    call_t k[64];
    for (int i = 0; i < n; i++) {
        k[i] = (call_t){s, ++s->counter, check_int4};
        pgw_param_t p[] = {pgw_int4(s->counter)};
        s->pending++;
        if (issue_done(s, pgw_conn_query(s->c, SQL_EXT_SEQ, p, 1, on_result, &k[i]))) return -1;
    }
    run_until_done(s);
    return s->failed ? -1 : 0;
}
static int ext_seq_op(void *st, uint64_t *sum)
{
    *sum = 0;
    return ext_n(st, 1);
}
static int ext_conc_op(void *st, uint64_t *sum)
{
    *sum = 0;
    return ext_n(st, bench_sz.ext_conc);
}

static int check_blob(call_t *k, pgw_result_t *r)
{
    return bench_pgw_fold_blob(WHO, r, &k->s->h);
}

static int check_array(call_t *k, pgw_result_t *r)
{
    return bench_pgw_fold_array(WHO, r, k->s->arr, &k->s->h);
}

static int fetch_op(pgs_t *s, const char *sql, int (*check)(call_t *, pgw_result_t *),
                    uint64_t *sum)
{
    call_t k = {s, 0, check};
    pgw_param_t p[] = {pgw_int4(10)};
    s->pending++;
    if (issue_done(s, pgw_conn_query(s->c, sql, p, 1, on_result, &k))) return -1;
    run_until_done(s);
    *sum = s->h;
    return s->failed ? -1 : 0;
}
static int blob_op(void *st, uint64_t *sum)
{
    return fetch_op(st, SQL_BLOB, check_blob, sum);
}
static void *array_setup(const bench_env_t *env)
{
    pgs_t *s = new_state(env, 1);
    if (s) s->arr = bench_xmalloc(sizeof(int32_t) * (size_t)bench_sz.array_elems);
    return s;
}
static int array_op(void *st, uint64_t *sum)
{
    return fetch_op(st, SQL_ARRAY, check_array, sum);
}

/* ---- Prepared Statement Reuse ----------------------------------------------------- */
static int prepare(pgs_t *s, const char *name, const char *sql, const uint32_t *oids, uint16_t n)
{
    call_t k = {s, 0, NULL};
    s->pending++;
    if (issue_done(s, pgw_conn_prepare(s->c, name, sql, oids, n, on_result, &k))) return -1;
    run_until_done(s);
    return s->failed ? -1 : 0;
}

static void *prep_setup(const bench_env_t *env)
{
    static const uint32_t int4 = 23;
    pgs_t *s = new_state(env, 1);
    if (s && !env->prep_by_cache && prepare(s, "bench_prep", SQL_PREP, &int4, 1) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int check_prep(call_t *k, pgw_result_t *r)
{
    return bench_pgw_fold_prep(WHO, r, k->want, &k->s->h);
}

/* One execution: of the statement prepared by name, or (the
 * libpgwire-autoprep row) the same SQL as a query the statement cache
 * prepares by itself; the int4 parameter is the declared type either way. */
static int exec_prep(pgs_t *s, const pgw_param_t *p, call_t *k)
{
    if (s->env->prep_by_cache) return pgw_conn_query(s->c, SQL_PREP, p, 1, on_result, k);
    return pgw_conn_execute(s->c, "bench_prep", p, 1, on_result, k);
}

static int prep_seq_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    s->h = 0;
    for (int i = 0; i < bench_sz.prep_reuse; i++) {
        call_t k = {s, i + 1, check_prep};
        pgw_param_t p[] = {pgw_int4(i + 1)};
        s->pending++;
        if (issue_done(s, exec_prep(s, p, &k))) return -1;
        run_until_done(s);
        if (s->failed) return -1;
    }
    *sum = s->h;
    return 0;
}

static int prep_conc_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t k[64];
    int n = bench_sz.prep_reuse, first = s->counter;
    for (int i = 0; i < n; i++) {
        int id = (first + i) % 1000 + 1;
        k[i] = (call_t){s, id, check_prep};
        pgw_param_t p[] = {pgw_int4(id)};
        s->pending++;
        if (issue_done(s, exec_prep(s, p, &k[i]))) return -1;
    }
    s->counter += n;
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}

/* ---- Unit of Work ------------------------------------------------------------------- */
/* want: the counter a read returns after this unit's writes; -1 for a write. */
static int check_uow(call_t *k, pgw_result_t *r)
{
    return bench_pgw_check_uow(WHO, r, k->want);
}

static int uow_read_base(pgs_t *s);

static void *uow_setup(const bench_env_t *env)
{
    pgs_t *s = new_state(env, 1);
    if (s && uow_read_base(s) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int uow_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t k[20];
    pgw_request_t reqs[20];
    pgw_param_t one[] = {pgw_int4(1)};
    for (int i = 0; i < 5; i++)
        s->uow_expect[i]++;
    int n = bench_sz.uow_stmts;
    for (int j = 0; j < n; j++) {
        int read = bench_uow_is_read(j);
        k[j] = (call_t){s, read ? s->uow_expect[j - 10] : -1, check_uow};
        reqs[j] = PGW_QUERY(bench_uow_sql(j), one, read ? 0 : 1, on_result, &k[j]);
    }
    /* One array, one Sync: the unit of work is one implicit transaction. */
    call_t end = {s, 0, NULL};
    s->pending += n + 1;
    int rc = pgw_conn_submit_batch(s->c, reqs, (size_t)n, 0, on_result, &end);
    if (rc != 0) {
        s->pending -= n;
        return issue_done(s, rc);
    }
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}

static int check_base(call_t *k, pgw_result_t *r)
{
    return bench_pgw_read_uow_base(WHO, r, k->s->uow_expect);
}

static int uow_read_base(pgs_t *s)
{
    call_t k = {s, 0, check_base};
    s->pending++;
    if (issue_done(s, pgw_conn_query(s->c,
                                     "select v from bench_uow where id between 1 and 5 order by id",
                                     NULL, 0, on_result, &k)))
        return -1;
    run_until_done(s);
    return s->failed ? -1 : 0;
}

/* ---- Connection Pooling: the single-connection reference ------------------------ */
/* The 1000 calls of a pool operation pipelined on ONE connection, issued in
 * one loop turn: what the pool's 10 connections are measured against. */
static int pool_single_op(void *st, uint64_t *sum, int ext)
{
    pgs_t *s = st;
    int n = bench_sz.pool_conc;
    call_t *k = s->calls;
    for (int i = 0; i < n; i++) {
        int rc;
        s->pending++;
        if (ext) {
            k[i] = (call_t){s, ++s->counter, check_int4};
            pgw_param_t p[] = {pgw_int4(s->counter)};
            rc = pgw_conn_query(s->c, SQL_POOL_EXT, p, 1, on_result, &k[i]);
        } else {
            k[i] = (call_t){s, 1, check_int4};
            rc = pgw_conn_simple_query(s->c, SQL_POOL_SIMPLE, on_result, &k[i]);
        }
        if (issue_done(s, rc)) return -1;
    }
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}
static void *pool_single_setup(const bench_env_t *env)
{
    pgs_t *s = new_state(env, 1);
    if (s) s->calls = bench_xmalloc(sizeof *s->calls * (size_t)bench_sz.pool_conc);
    return s;
}
static int pool_single_simple_op(void *st, uint64_t *sum)
{
    return pool_single_op(st, sum, 0);
}
static int pool_single_ext_op(void *st, uint64_t *sum)
{
    return pool_single_op(st, sum, 1);
}

/* ---- Bulk Load ----------------------------------------------------------------------- */
static void *copy_setup_fmt(const bench_env_t *env, int binary)
{
    pgs_t *s = new_state(env, 1);
    if (s) bench_pgw_copy_init(&s->copy, binary);
    return s;
}
BENCH_PGW_COPY_SETUPS(copy_setup_fmt)

/* One ud for the COPY's completion and its source. */
typedef struct copy_call {
    call_t k; /* first: on_result reads the ud as a call_t */
    bench_pgw_copy_t *rows;
} copy_call_t;

static int check_copy(call_t *k, pgw_result_t *r)
{
    (void)k;
    return bench_pgw_check_copy(WHO, r);
}

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    return bench_pgw_copy_source(out, room, ((copy_call_t *)ud)->rows);
}

/* TRUNCATE and the COPY go out together; the COPY's source is pulled on the
 * loop while the socket takes the data. */
static int copy_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    call_t trunc = {s, 0, NULL};
    copy_call_t copy = {{s, 0, check_copy}, &s->copy};
    bench_pgw_copy_reset(&s->copy);
    s->pending++;
    if (issue_done(s, pgw_conn_simple_query(s->c, "TRUNCATE bench_copy", on_result, &trunc)))
        return -1;
    s->pending++;
    if (issue_done(s, pgw_conn_copy_in(s->c,
                                       s->copy.binary ? "COPY bench_copy FROM STDIN (FORMAT binary)"
                                                      : "COPY bench_copy FROM STDIN (FORMAT csv)",
                                       copy_source, on_result, &copy)))
        return -1;
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}

/* ---- Suite B -------------------------------------------------------------------------- */
static int check_b(call_t *k, pgw_result_t *r)
{
    return bench_pgw_fold_b(WHO, r, k->s->limit, &k->s->h);
}

static void *b_setup(const bench_env_t *env, int limit)
{
    char sql[128];
    snprintf(sql, sizeof sql, SQL_B_FMT, limit);
    pgs_t *s = new_state(env, 1);
    if (!s) return NULL;
    s->limit = limit;
    if (prepare(s, "bench_b", sql, NULL, 0) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int b_op(pgs_t *s, int n, uint64_t *sum)
{
    call_t k[10];
    s->h = 0;
    for (int i = 0; i < n; i++) {
        k[i] = (call_t){s, 0, check_b};
        s->pending++;
        if (issue_done(s, pgw_conn_execute(s->c, "bench_b", NULL, 0, on_result, &k[i]))) return -1;
    }
    run_until_done(s);
    *sum = s->h;
    return s->failed ? -1 : 0;
}
static int b_seq_op(void *st, uint64_t *sum)
{
    return b_op(st, 1, sum);
}
static int b_pipe_op(void *st, uint64_t *sum)
{
    return b_op(st, 10, sum);
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
/* One pgw_conn_submit_batch of bench_sz.ceiling executions, one Sync,
 * written in parts while it is encoded (PGW_BATCH_STREAM); each row is
 * checked as it arrives and no result is kept (PGW_Q_NO_RESULT). */
static void *ceiling_setup(const bench_env_t *env)
{
    static const uint32_t int4 = 23;
    pgs_t *s = new_state(env, 1);
    if (!s) return NULL;
    bench_pgw_ceiling_init(&s->ceil, WHO);
    if (prepare(s, CEILING_STMT, SQL_EXT_SEQ, &int4, 1) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static void on_ceiling_done(int status, pgw_result_t *res, void *ud)
{
    pgs_t *s = ud;
    s->pending--;
    s->failed = status != 0;
    s->counter = status;
    pgw_result_free(res);
}

static int ceiling_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    bench_pgw_ceiling_start(&s->ceil);
    s->pending++;
    if (issue_done(s, pgw_conn_submit_batch(s->c, s->ceil.reqs, (size_t)bench_sz.ceiling,
                                            PGW_BATCH_STREAM, on_ceiling_done, s)))
        return -1;
    run_until_done(s);
    return bench_pgw_ceiling_check(&s->ceil, s->counter, sum);
}

/* ---- Cursor Streaming ------------------------------------------------------------------- */
/* A named portal opened with max_rows, its rows decoded as they arrive
 * (on_row), and one FETCH ahead: the open and a first FETCH go out
 * together, and each batch's completion submits the FETCH after the one
 * already in flight, so the server always has the next Execute waiting
 * and never idles for a round trip. The first batch that is not suspended
 * closes the portal (its Sync ends the implicit transaction the open
 * started); the FETCH still in flight then answers with no rows. */
#define CURSOR_PORTAL "bench_cursor"

typedef struct cursor_run {
    pgs_t *s;
    bench_pgw_cursor_t fold;
    int closing; /* CLOSE_PORTAL submitted */
} cursor_run_t;

static int cursor_row(const pgw_row_t *row, void *ud)
{
    return bench_pgw_cursor_row(row, &((cursor_run_t *)ud)->fold);
}

static void on_cursor_closed(int status, pgw_result_t *res, void *ud)
{
    cursor_run_t *k = ud;
    k->s->pending--;
    if (status != 0) {
        k->s->failed = 1;
        bench_fail("%s cursor close: %s", WHO, pgw_strerror(status));
    }
    pgw_result_free(res);
}

static void on_cursor_batch(int status, pgw_result_t *res, void *ud);

static int cursor_fetch(cursor_run_t *k)
{
    pgw_request_t f = PGW_FETCH(CURSOR_PORTAL, (uint32_t)bench_sz.cursor_batch, on_cursor_batch, k);
    f.on_row = cursor_row;
    k->s->pending++;
    return issue_done(k->s, pgw_conn_submit(k->s->c, &f));
}

static void on_cursor_batch(int status, pgw_result_t *res, void *ud)
{
    cursor_run_t *k = ud;
    pgs_t *s = k->s;
    s->pending--;
    if (status != 0) {
        const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
        s->failed = 1;
        bench_fail("%s cursor: %s%s%s", WHO, pgw_strerror(status), e ? ": " : "",
                   e && e->message ? e->message : "");
    } else if (k->closing) {
        /* the FETCH that was ahead of the end: nothing left for it */
    } else if (pgw_result_suspended(res)) {
        cursor_fetch(k);
    } else {
        pgw_request_t c = PGW_CLOSE_PORTAL(CURSOR_PORTAL, on_cursor_closed, k);
        k->closing = 1;
        s->pending++;
        issue_done(s, pgw_conn_submit(s->c, &c));
    }
    pgw_result_free(res);
}

static int cursor_op(void *st, uint64_t *sum)
{
    pgs_t *s = st;
    char sql[160];
    snprintf(sql, sizeof sql, SQL_CURSOR, bench_sz.cursor_rows);
    cursor_run_t k = {s, {WHO, 0, 0}, 0};
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, on_cursor_batch, &k);
    q.portal = CURSOR_PORTAL;
    q.max_rows = (uint32_t)bench_sz.cursor_batch;
    q.on_row = cursor_row;
    s->pending++;
    if (issue_done(s, pgw_conn_submit(s->c, &q)) || cursor_fetch(&k)) {
        run_until_done(s);
        return -1;
    }
    run_until_done(s);
    if (s->failed) return -1;
    if (k.fold.rows != bench_sz.cursor_rows)
        return bench_fail("%s cursor: %lld rows", WHO, (long long)k.fold.rows);
    *sum = k.fold.h;
    return 0;
}

static const char NOTE_ASYNC[] = "pgw_conn_* on a uv loop, calls issued in one loop turn";

static const struct {
    const char *id;
    bench_impl_t impl;
} table[] = {
    {"connect",
     {connect_setup, connect_op, teardown, "pgw_conn_connect over TCP + pgw_conn_close"}},
    {"simple_seq", {plain_setup, simple_seq_op, teardown, "pgw_conn_simple_query"}},
    {"simple_conc",
     {plain_setup, simple_conc_op, teardown,
      "100 pgw_conn_simple_query calls issued together (pipelined Query messages)"}},
    {"simple_fetch",
     {plain_setup, simple_fetch_op, teardown,
      "pgw_conn_submit of a Simple Query with on_row: rows decoded as they arrive, typed getters"}},
    {"simple_fetch_buffered",
     {plain_setup, simple_fetch_buffered_op, teardown,
      "pgw_conn_simple_query: buffered result, pgw_result_row + typed getters per row"}},
    {"mixed_text_buffered",
     {plain_setup, mixed_text_buffered_op, teardown,
      "pgw_conn_submit (PGW_Q_TEXT): buffered result, pgw_result_row + typed getters per "
      "row"}},
    {"mixed_binary_buffered",
     {plain_setup, mixed_binary_buffered_op, teardown,
      "pgw_conn_query: buffered result, pgw_result_row + typed getters per row"}},
    {"ext_seq", {plain_setup, ext_seq_op, teardown, "pgw_conn_query, binary"}},
    {"ext_conc", {plain_setup, ext_conc_op, teardown, NOTE_ASYNC}},
    {"mixed_text",
     {plain_setup, mixed_text_op, teardown,
      "pgw_conn_submit with on_row (PGW_Q_TEXT): rows decoded as they arrive, typed getters"}},
    {"mixed_binary",
     {plain_setup, mixed_binary_op, teardown,
      "pgw_conn_submit with on_row: rows decoded as they arrive, typed getters"}},
    {"blob_fetch", {plain_setup, blob_op, teardown, "pgw_conn_query, bytea views"}},
    {"connect_tls",
     {connect_setup, connect_tls_op, teardown,
      "pgw_conn_connect over TCP, sslmode=require (TLS context shared across connects) + "
      "pgw_conn_close"}},
    {"blob_fetch_tls",
     {tls_setup, blob_op, teardown,
      "pgw_conn_query, bytea views; TCP with sslmode=require, decrypted into the read chunks"}},
    {"connect_gss",
     {connect_setup, connect_gss_op, teardown,
      "pgw_conn_connect over TCP, gssencmode=require + pgw_conn_close"}},
    {"array_fetch", {array_setup, array_op, teardown, "pgw_conn_query, pgw_array_get_int4"}},
    {"prep_seq", {prep_setup, prep_seq_op, teardown, "pgw_conn_prepare once, pgw_conn_execute"}},
    {"prep_conc", {prep_setup, prep_conc_op, teardown, NOTE_ASYNC}},
    {"unit_of_work",
     {uow_setup, uow_op, teardown, "one pgw_conn_submit_batch of 20 queries: one Sync"}},
    {"copy_text",
     {copy_text_setup, copy_op, teardown,
      "pgw_conn_simple_query TRUNCATE + pgw_conn_submit of a COPY whose source formats CSV rows "
      "with pgw_copy_csv_* as the connection pulls them"}},
    {"copy_binary",
     {copy_binary_setup, copy_op, teardown,
      "pgw_conn_simple_query TRUNCATE + pgw_conn_submit of a COPY whose source encodes binary "
      "rows with pgw_copy_bin_* as the connection pulls them"}},
    {"c_rtt", {plain_setup, simple_seq_op, teardown, "pgw_conn_simple_query"}},
    {"ceiling",
     {ceiling_setup, ceiling_op, teardown,
      "one pgw_conn_submit_batch (PGW_BATCH_STREAM: written in parts while encoded), rows "
      "checked as they arrive, PGW_Q_NO_RESULT"}},
    {"b_seq_1", {b_setup_1, b_seq_op, teardown, "pgw_conn_execute, binary"}},
    {"b_seq_100", {b_setup_100, b_seq_op, teardown, "pgw_conn_execute, binary"}},
    {"b_seq_500", {b_setup_500, b_seq_op, teardown, "pgw_conn_execute, binary"}},
    {"b_pipe_1", {b_setup_1, b_pipe_op, teardown, NOTE_ASYNC}},
    {"b_pipe_100", {b_setup_100, b_pipe_op, teardown, NOTE_ASYNC}},
    {"b_pipe_500", {b_setup_500, b_pipe_op, teardown, NOTE_ASYNC}},
    {"cursor",
     {plain_setup, cursor_op, teardown,
      "named portal opened with max_rows=500 (pgw_conn_submit), rows decoded as they arrive "
      "(on_row), one FETCH ahead (two in flight), CLOSE_PORTAL at the end"}},
};

const bench_impl_t *bench_pgwire_lookup(const char *scenario, const char **reason)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].id, scenario) == 0) return &table[i].impl;
    const bench_impl_t *pool = bench_pgwire_pool_lookup(scenario);
    if (pool) return pool;
    *reason = NYI;
    return NULL;
}

static const struct {
    const char *id;
    bench_impl_t impl;
} single_table[] = {
    {"pool_simple",
     {pool_single_setup, pool_single_simple_op, teardown,
      "the 1000 pgw_conn_simple_query calls pipelined on ONE connection, issued in one loop turn"}},
    {"pool_ext",
     {pool_single_setup, pool_single_ext_op, teardown,
      "the 1000 pgw_conn_query calls (binary) pipelined on ONE connection, issued in one loop "
      "turn"}},
};

const bench_impl_t *bench_pgwire_single_lookup(const char *scenario, const char **reason)
{
    for (size_t i = 0; i < sizeof single_table / sizeof single_table[0]; i++)
        if (strcmp(single_table[i].id, scenario) == 0) return &single_table[i].impl;
    *reason = "the single-connection reference row belongs to the pool scenarios only";
    return NULL;
}

/* ---- suite C ------------------------------------------------------------------------------ */
static int check_c(call_t *k, pgw_result_t *r)
{
    return bench_pgw_check_c(WHO, r, k->want);
}

static int c_run(void *st, const bench_c_test_t *t)
{
    pgs_t *s = st;
    size_t n = (size_t)t->nstmts;
    call_t *k = bench_xmalloc(sizeof *k * (n + 1));
    pgw_request_t *reqs = bench_xmalloc(sizeof *reqs * (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        k[i] = (call_t){s, t->stmts[i].expect_rows, check_c};
        reqs[i] = PGW_QUERY(t->stmts[i].sql, NULL, 0, on_result, &k[i]);
    }
    k[n] = (call_t){s, -1, NULL};
    s->pending += (int)n + 1;
    int rc = pgw_conn_submit_batch(s->c, reqs, n, t->sync_each ? PGW_BATCH_SYNC_EACH : 0, on_result,
                                   &k[n]);
    free(reqs);
    if (rc != 0) {
        s->pending -= (int)n;
        free(k);
        return issue_done(s, rc);
    }
    run_until_done(s);
    free(k);
    return s->failed ? -1 : 0;
}

static const bench_c_impl_t c_impl = {plain_setup, c_run, teardown};

const bench_c_impl_t *bench_pgwire_c(const char **reason)
{
    (void)reason;
    return &c_impl;
}
