/*
 * The blocking pool: four threads share two connections. Each round, a
 * thread checks out a client, runs a query and releases it, then runs a
 * one-shot request with no checkout (pipelined with the other threads'
 * on the pool's connections). Exits 1 if anything failed.
 */
#include <pgwire.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS  25

static pgw_client_pool_t *pool;

static void *worker(void *arg)
{
    intptr_t failed = 0;
    int32_t id = (int32_t)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pgw_client_t *db;
        int rc = pgw_client_pool_acquire(pool, 0, &db); /* 0: acquire_timeout_ms */
        if (rc < 0) {
            fprintf(stderr, "acquire: %s\n", pgw_strerror(rc));
            failed++;
            continue;
        }
        /* The client is this thread's until released. */
        pgw_param_t p[] = {pgw_int4(id), pgw_int4(i)};
        pgw_result_t *res;
        int32_t v = -1;
        rc = pgw_client_query(db, "SELECT $1::int4 * 1000 + $2::int4", p, 2, &res);
        if (rc != 0 || pgw_result_int4(res, 0, 0, &v) != 0 || v != id * 1000 + i) failed++;
        pgw_result_free(res);
        pgw_client_pool_release(pool, db);

        /* No checkout: the request goes to the connection with the fewest
         * requests in flight; the call returns with its result. */
        pgw_request_t q = PGW_QUERY("SELECT $1::int4 * 1000 + $2::int4", p, 2, NULL, NULL);
        v = -1;
        rc = pgw_client_pool_run(pool, &q, &res);
        if (rc != 0 || pgw_result_int4(res, 0, 0, &v) != 0 || v != id * 1000 + i) failed++;
        pgw_result_free(res);
    }
    return (void *)failed;
}

int main(void)
{
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 2;
    cfg.acquire_timeout_ms = 10000;
    int rc = pgw_client_pool_new(&pool, "", &cfg);
    if (rc < 0) {
        fprintf(stderr, "pool: %s\n", pgw_strerror(rc));
        return 1;
    }
    pthread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    intptr_t failed = 0;
    for (int i = 0; i < THREADS; i++) {
        void *f;
        pthread_join(t[i], &f);
        failed += (intptr_t)f;
    }
    pgw_pool_stats_t st;
    pgw_client_pool_stats(pool, &st);
    printf("%llu checkouts, %llu one-shot requests, longest wait %llu us, %u connections, "
           "%ld failed\n",
           (unsigned long long)st.acquires, (unsigned long long)st.submitted,
           (unsigned long long)st.acquire_wait_max_us, st.size, (long)failed);
    pgw_client_pool_close(pool);
    return failed == 0 && st.acquires == THREADS * ROUNDS && st.submitted == THREADS * ROUNDS ? 0
                                                                                              : 1;
}
