/* libpgwire's pool rows: the pool scenarios through pgw_pool_submit, the
 * 1000 calls of an operation issued in one loop turn and left to the pool to
 * spread over its 10 connections (least in flight first) and pipeline.
 * Built only when pgwire/pool.h exists (bench/CMakeLists.txt). Through
 * PgBouncer (env->pgbouncer) the pool's connections use unnamed statements
 * only (conn.stmt_cache_mode = PGW_STMT_UNNAMED). */
#define _GNU_SOURCE
#include "bench.h"
#include "pgwire_checks.h"

#include <pgwire/pool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static const char WHO[] = "libpgwire pool";

typedef struct pps pps_t;

typedef struct pcall {
    pps_t *s;
    int64_t want;
} pcall_t;

struct pps {
    uv_loop_t loop;
    pgw_pool_t *pool;
    int pending;
    int failed;
    int ext;
    int counter;
    pcall_t *calls;
    char conninfo[512];
};

static void on_result(int status, pgw_result_t *r, void *ud)
{
    pcall_t *k = ud;
    pps_t *s = k->s;
    s->pending--;
    if (status != 0) {
        const pgw_error_t *e = r ? pgw_result_error(r) : NULL;
        bench_fail("%s request: %s%s%s", WHO, pgw_strerror(status), e ? ": " : "",
                   e && e->message ? e->message : "");
        s->failed = 1;
    } else if (bench_pgw_check_int4(WHO, r, k->want) != 0) {
        s->failed = 1;
    }
    if (r) pgw_result_free(r);
}

static void run_until_done(pps_t *s)
{
    while (s->pending > 0 && !s->failed)
        uv_run(&s->loop, UV_RUN_ONCE);
}

static int pool_op(void *st, uint64_t *sum)
{
    pps_t *s = st;
    for (int i = 0; i < bench_sz.pool_conc; i++) {
        pcall_t *k = &s->calls[i];
        int rc;
        s->pending++;
        if (s->ext) {
            *k = (pcall_t){s, ++s->counter};
            pgw_param_t p[] = {pgw_int4(s->counter)};
            pgw_request_t q = PGW_QUERY(SQL_POOL_EXT, p, 1, on_result, k);
            rc = pgw_pool_submit(s->pool, &q);
        } else {
            *k = (pcall_t){s, 1};
            pgw_request_t q = PGW_SIMPLE(SQL_POOL_SIMPLE, on_result, k);
            rc = pgw_pool_submit(s->pool, &q);
        }
        if (rc != 0) {
            s->pending--;
            s->failed = 1;
            return bench_fail("%s submit: %s", WHO, pgw_strerror(rc));
        }
    }
    run_until_done(s);
    *sum = 0;
    return s->failed ? -1 : 0;
}

static void teardown(void *st)
{
    pps_t *s = st;
    if (s->pool) pgw_pool_close(s->pool);
    s->failed = 0;
    run_until_done(s);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    free(s->calls);
    free(s);
}

/* A pool of pool_size connections kept open (min = max), then one operation
 * so that every connection is open before the driver's warm-up. */
static void *setup_mode(const bench_env_t *env, int ext)
{
    pps_t *s = calloc(1, sizeof *s);
    s->ext = ext;
    s->calls = bench_xmalloc(sizeof *s->calls * (size_t)bench_sz.pool_conc);
    uv_loop_init(&s->loop);
    if (bench_pgw_conninfo(s->conninfo, sizeof s->conninfo, env, env->host, "disable") != 0) {
        teardown(s);
        return NULL;
    }
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = (uint32_t)bench_sz.pool_size;
    cfg.max_size = (uint32_t)bench_sz.pool_size;
    bench_pgw_conn_config(&cfg.conn, env);
    int rc = pgw_pool_new(&s->pool, &s->loop, s->conninfo, &cfg);
    if (rc != 0) {
        s->pool = NULL;
        bench_fail("%s new: %s", WHO, pgw_strerror(rc));
        teardown(s);
        return NULL;
    }
    uint64_t sum;
    if (pool_op(s, &sum) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static void *pool_simple_setup(const bench_env_t *env)
{
    return setup_mode(env, 0);
}
static void *pool_ext_setup(const bench_env_t *env)
{
    return setup_mode(env, 1);
}

static const struct {
    const char *id;
    bench_impl_t impl;
} table[] = {
    {"pool_simple",
     {pool_simple_setup, pool_op, teardown,
      "pgw_pool_new (min = max = 10), 1000 pgw_pool_submit of a Simple Query in one loop turn"}},
    {"pool_ext",
     {pool_ext_setup, pool_op, teardown,
      "pgw_pool_new (min = max = 10), 1000 pgw_pool_submit of `select $1::int4` (binary) in one "
      "loop turn"}},
};

const bench_impl_t *bench_pgwire_pool_lookup(const char *scenario)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].id, scenario) == 0) return &table[i].impl;
    return NULL;
}
