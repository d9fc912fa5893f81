/* The blocking driver's pool row: pgw_client_pool_t (pool.h), the way a
 * plain C program shares 10 connections among threads. pool_size worker
 * threads live as long as the state; in each operation of Pooled Extended
 * Query every worker acquires a client, runs its share of the 1000 calls
 * as one pgw_client_run_batch (PGW_BATCH_SYNC_EACH: independent calls,
 * pipelined) and releases it. Pooled Simple Query is not applicable to the
 * blocking API (drv_pgwire_blocking.c: a batch takes extended queries only,
 * so its calls could only go one at a time). */
#define _GNU_SOURCE
#include "bench.h"
#include "pgwire_checks.h"

#include <pgwire/pool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char WHO[] = "libpgwire blocking pool";

typedef struct bps bps_t;

typedef struct worker {
    bps_t *s;
    pthread_t th;
    int first; /* its calls are first .. first + n - 1 of the operation */
    int n;
    int failed;
    pgw_request_t *reqs;
    pgw_param_t *params;
    pgw_result_t **results;
    int *statuses;
} worker_t;

struct bps {
    pgw_client_pool_t *pool;
    int counter; /* Extended Query: parameters of the last operation */
    int stop;
    int nworkers;
    pthread_barrier_t start, end;
    worker_t *w;
};

static int run_share(worker_t *w)
{
    bps_t *s = w->s;
    pgw_client_t *c;
    int rc = pgw_client_pool_acquire(s->pool, 0, &c);
    if (rc != 0) return bench_fail("%s acquire: %s", WHO, pgw_strerror(rc));
    int bad = 0;
    for (int i = 0; i < w->n; i++) {
        w->params[i] = pgw_int4(s->counter + w->first + i + 1);
        w->reqs[i] = PGW_QUERY(SQL_POOL_EXT, &w->params[i], 1, NULL, NULL);
    }
    rc = pgw_client_run_batch(c, w->reqs, (size_t)w->n, PGW_BATCH_SYNC_EACH, w->results,
                              w->statuses);
    for (int i = 0; i < w->n; i++) {
        if (!bad && w->statuses[i] != 0)
            bad = bench_fail("%s query: %s", WHO, pgw_strerror(w->statuses[i]));
        else if (!bad && bench_pgw_check_int4(WHO, w->results[i], s->counter + w->first + i + 1))
            bad = -1;
        pgw_result_free(w->results[i]);
    }
    if (!bad && rc != 0) bad = bench_fail("%s batch: %s", WHO, pgw_strerror(rc));
    rc = pgw_client_pool_release(s->pool, c);
    if (!bad && rc != 0) bad = bench_fail("%s release: %s", WHO, pgw_strerror(rc));
    return bad;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    for (;;) {
        pthread_barrier_wait(&w->s->start);
        if (w->s->stop) return NULL;
        w->failed = run_share(w) != 0;
        pthread_barrier_wait(&w->s->end);
    }
}

static int pool_op(void *st, uint64_t *sum)
{
    bps_t *s = st;
    pthread_barrier_wait(&s->start);
    pthread_barrier_wait(&s->end);
    s->counter += bench_sz.pool_conc;
    *sum = 0;
    for (int i = 0; i < s->nworkers; i++)
        if (s->w[i].failed) return -1;
    return 0;
}

static void teardown(void *st)
{
    bps_t *s = st;
    if (s->w) {
        s->stop = 1;
        pthread_barrier_wait(&s->start);
        for (int i = 0; i < s->nworkers; i++) {
            pthread_join(s->w[i].th, NULL);
            free(s->w[i].reqs);
            free(s->w[i].params);
            free(s->w[i].results);
            free(s->w[i].statuses);
        }
        pthread_barrier_destroy(&s->start);
        pthread_barrier_destroy(&s->end);
        free(s->w);
    }
    pgw_client_pool_close(s->pool);
    free(s);
}

static void *pool_ext_setup(const bench_env_t *env)
{
    bps_t *s = calloc(1, sizeof *s);
    char conninfo[512];
    if (bench_pgw_conninfo(conninfo, sizeof conninfo, env, env->host, "disable") != 0) {
        free(s);
        return NULL;
    }
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = (uint32_t)bench_sz.pool_size;
    cfg.max_size = (uint32_t)bench_sz.pool_size;
    bench_pgw_conn_config(&cfg.conn, env);
    int rc = pgw_client_pool_new(&s->pool, conninfo, &cfg);
    if (rc != 0) {
        bench_fail("%s new: %s", WHO, pgw_strerror(rc));
        free(s);
        return NULL;
    }
    int nw = bench_sz.pool_size, per = bench_sz.pool_conc / nw;
    s->nworkers = nw;
    s->w = bench_xmalloc(sizeof *s->w * (size_t)nw);
    pthread_barrier_init(&s->start, NULL, (unsigned)nw + 1);
    pthread_barrier_init(&s->end, NULL, (unsigned)nw + 1);
    for (int i = 0; i < nw; i++) {
        worker_t *w = &s->w[i];
        memset(w, 0, sizeof *w);
        w->s = s;
        w->first = i * per;
        w->n = i == nw - 1 ? bench_sz.pool_conc - w->first : per;
        w->reqs = bench_xmalloc(sizeof *w->reqs * (size_t)w->n);
        w->params = bench_xmalloc(sizeof *w->params * (size_t)w->n);
        w->results = bench_xmalloc(sizeof *w->results * (size_t)w->n);
        w->statuses = bench_xmalloc(sizeof *w->statuses * (size_t)w->n);
        pthread_create(&w->th, NULL, worker_main, w);
    }
    uint64_t sum;
    if (pool_op(s, &sum) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static const struct {
    const char *id;
    bench_impl_t impl;
} table[] = {
    {"pool_ext",
     {pool_ext_setup, pool_op, teardown,
      "pgw_client_pool_new (min = max = 10); 10 threads each acquire a client, run one "
      "pgw_client_run_batch of 100 `select $1::int4` (PGW_BATCH_SYNC_EACH), release"}},
};

const bench_impl_t *bench_pgwire_blocking_pool_lookup(const char *scenario)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].id, scenario) == 0) return &table[i].impl;
    return NULL;
}
