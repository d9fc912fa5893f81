/*
 * The blocking pool (pool.h, pgw_client_pool_t): a driver of the pool on a
 * loop (pool.c, pgw_pool_t, and so of its core), as curl's easy interface
 * drives its multi handle. The pool lives on a uv loop shared by threads
 * (client/shared_loop.c). A checkout (pgw_pool_acquire, and a client
 * attached to the pooled connection), a release (pgw_pool_release) and a
 * one-shot request (pgw_pool_submit) are jobs posted to whoever runs the
 * loop, their threads asleep until they are done (a release the pool
 * settles at once is only pushed: its thread goes on); an engine thread runs
 * it when no call does (those jobs, and the pool's timers: idle timeouts,
 * lifetimes, refills, the backoff). A checked-out client's calls post
 * theirs too, or hold the loop while they run and wait (client.c).
 * Every decision (sizing, the waiter queue, the release rule, health,
 * routing) is the pool's.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "client/client_internal.h"
#include "pgwire/pool.h"
#include "pool/pool_internal.h"
#include "util/internal.h"

#include <pthread.h>
#include <string.h>

struct pgw_client_pool {
    const pgw_allocator_t *alloc;
    pgw__shared_loop_t *loop;
    pgw_pool_t *pool;
    pgw_conn_config_t conn; /* the pool's connection options, for its clients */
    pthread_t engine;
    /* Read and written holding the loop: */
    int stop;        /* the engine thread returns (atomic: it reads it without the loop) */
    int closing;     /* pgw_client_pool_close was called (written atomically) */
    int pool_closed; /* pgw_pool_close was called */
    int freeing;     /* last_out chose the thread that frees the pool */
    uint32_t out;    /* clients checked out */
    /* Posted calls in progress (checkouts, releases, one-shot requests):
     * changed without the loop, atomically, as closing is read by them. */
    uint32_t posted;
};

static void *engine_main(void *arg)
{
    pgw_client_pool_t *p = arg;
    while (pgw__shared_loop_background_turn(p->loop, &p->stop))
        ;
    return NULL;
}

/* Free everything (the loop not held; no call in progress, no client
 * out). */
static void destroy(pgw_client_pool_t *p, int engine_running)
{
    pgw__shared_loop_enter(p->loop);
    if (!p->pool_closed) pgw_pool_close(p->pool);
    p->pool_closed = 1;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pgw__shared_loop_leave(p->loop);
    if (engine_running) {
        pgw__shared_loop_wake(p->loop);
        pthread_join(p->engine, NULL);
    }
    pgw__shared_loop_free(p->loop); /* runs the pool's close to its end */
    pgw__free(p->alloc, p);
}

/* Holding the loop: once freed, the last call out frees the pool (1:
 * the caller must call destroy once it let go of the loop). */
static int last_out(pgw_client_pool_t *p)
{
    if (!p->closing || p->out || p->freeing) return 0;
    if (!p->pool_closed) pgw_pool_close(p->pool); /* waiters fail with PGW_ECLOSED */
    p->pool_closed = 1;
    /* Posted calls end without the loop: two may both find themselves the
     * last (posted_end); only the first frees the pool. */
    p->freeing = __atomic_load_n(&p->posted, __ATOMIC_SEQ_CST) == 0;
    return p->freeing;
}

static void leave(pgw_client_pool_t *p)
{
    int last = last_out(p);
    pgw__shared_loop_leave(p->loop);
    if (last) destroy(p, 1);
}

/* Wait (holding the loop) until min connections are up (or the pool
 * opens no more: it clamps min_size to its max_size), or a connect
 * failed: its error. */
static int wait_min(pgw_client_pool_t *p, uint32_t min)
{
    pgw_pool_stats_t st;
    for (;;) {
        pgw_pool_stats(p->pool, &st);
        if (st.opened >= min || (st.opened && !st.opening)) return 0;
        int err = pgw__pool_open_error(p->pool);
        if (err) return err;
        pgw__shared_loop_turn(p->loop, UV_RUN_ONCE);
    }
}

int pgw_client_pool_new(pgw_client_pool_t **out, const char *conninfo, const pgw_pool_config_t *cfg)
{
    if (out) *out = NULL;
    if (!out || !conninfo) return PGW_EINVAL;
    pgw_pool_config_t c;
    pgw_pool_config_init(&c);
    if (cfg) pgw__copy_sized(&c, sizeof c, cfg);
    c.size = sizeof c;
    c.conn.results_any_thread = 1; /* the callers free them on their threads */
    pgw_client_pool_t *p = pgw__calloc(c.conn.alloc, 1, sizeof *p);
    if (!p) return PGW_ENOMEM;
    p->alloc = c.conn.alloc;
    p->conn = c.conn;
    int rc = pgw__shared_loop_new(&p->loop, p->alloc);
    if (rc < 0) {
        pgw__free(p->alloc, p);
        return rc;
    }
    pgw__shared_loop_enter(p->loop);
    rc = pgw_pool_new(&p->pool, pgw__shared_loop_uv(p->loop), conninfo, &c);
    p->pool_closed = rc < 0;
    if (rc == 0) rc = wait_min(p, c.min_size);
    pgw__shared_loop_leave(p->loop);
    if (rc == 0) rc = pthread_create(&p->engine, NULL, engine_main, p) ? PGW_ENOMEM : 0;
    if (rc < 0) {
        destroy(p, 0);
        return rc;
    }
    *out = p;
    return 0;
}

/*
 * Calls posted to the loop (shared_loop.c): a checkout, a release and a
 * one-shot request do not take the loop's ticket. Each is a job that
 * whoever holds the loop runs at its next turn, and its thread sleeps
 * until the job is finished, woken once. posted counts these calls, so
 * that the pool is freed only once the last has returned: a call that
 * ends while the pool is closing takes the loop to see whether it is the
 * last (last_out).
 */
static void posted_begin(pgw_client_pool_t *p)
{
    __atomic_add_fetch(&p->posted, 1, __ATOMIC_SEQ_CST);
}

static void posted_end(pgw_client_pool_t *p)
{
    if (__atomic_sub_fetch(&p->posted, 1, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&p->closing, __ATOMIC_SEQ_CST)) {
        pgw__shared_loop_enter(p->loop);
        leave(p);
    }
}

/* A checkout: pgw_pool_acquire on the loop, and a client attached to the
 * connection granted. */
typedef struct checkout {
    pgw__shared_job_t job; /* first: the job is the call */
    pgw_client_pool_t *p;
    unsigned flags;
    uint32_t timeout_ms;
    pgw_client_t *client;
    int rc;
} checkout_t;

static void on_granted(pgw_pool_t *pool, int status, pgw_conn_t *conn, void *ud)
{
    checkout_t *k = ud;
    pgw_client_pool_t *p = k->p;
    int rc = status;
    if (rc == 0 && p->closing) rc = PGW_ECLOSED;
    if (rc == 0) rc = pgw__client_attach(&k->client, conn, p->loop, &p->conn);
    if (rc == 0)
        p->out++;
    else if (conn)
        pgw_pool_release(pool, conn);
    k->rc = rc;
    pgw__shared_loop_finish(p->loop, &k->job); /* last: k may be gone after it */
}

/* Granted at once, on_granted has finished the job inside
 * pgw_pool_acquire: k is not touched after a successful call. */
static int checkout_run(pgw__shared_job_t *job)
{
    checkout_t *k = (checkout_t *)job;
    pgw_client_pool_t *p = k->p;
    int rc = p->closing ? PGW_ECLOSED
                        : pgw_pool_acquire(p->pool, k->flags, k->timeout_ms, on_granted, k);
    if (rc < 0) {
        k->rc = rc;
        pgw__shared_loop_finish(p->loop, job);
    }
    return 0;
}

int pgw_client_pool_acquire_flags(pgw_client_pool_t *p, unsigned flags, uint32_t timeout_ms,
                                  pgw_client_t **out)
{
    if (out) *out = NULL;
    if (!p || !out || (flags & ~(unsigned)PGW_POOL_READ_ONLY)) return PGW_EINVAL;
    checkout_t k = {.job = {.run = checkout_run}, .p = p, .flags = flags, .timeout_ms = timeout_ms};
    posted_begin(p);
    pgw__shared_loop_post(p->loop, &k.job);
    posted_end(p);
    if (k.rc == 0) *out = k.client;
    return k.rc;
}

int pgw_client_pool_acquire(pgw_client_pool_t *p, uint32_t timeout_ms, pgw_client_t **out)
{
    return pgw_client_pool_acquire_flags(p, 0, timeout_ms, out);
}

/* A release: the client lets go of the connection before the pool may
 * hand it on; the call returns once the connection is clean (or closed),
 * the job looking again at each turn of the loop until then. */
typedef struct release {
    pgw__shared_job_t job; /* first: the job is the call */
    pgw_client_pool_t *p;
    pgw_client_t *c;
    int started;
    int settled; /* set by the pool (atomically) */
    int rc;
} release_t;

/* On the loop: c lets go of its connection (c's job goes with it), which
 * goes back to the pool (settled, when given, set once it is clean or
 * closed: pgw__pool_release_settled). */
static int give_back(pgw_client_pool_t *p, pgw_client_t *c, int *settled)
{
    pgw_conn_t *conn = pgw_client_conn(c);
    pgw__client_detach(c);
    int rc = pgw__pool_release_settled(p->pool, conn, settled);
    if (rc == 0) p->out--;
    return rc;
}

static int release_run(pgw__shared_job_t *job)
{
    release_t *r = (release_t *)job;
    pgw_client_pool_t *p = r->p;
    if (!r->started) {
        r->started = 1;
        r->rc = give_back(p, r->c, &r->settled);
    }
    if (r->rc == 0 && !__atomic_load_n(&r->settled, __ATOMIC_ACQUIRE)) return 1;
    pgw__shared_loop_finish(p->loop, job);
    return 0;
}

/* A release the pool settles at once (the connection kept or closed):
 * its job lives in the client and its thread does not wait for it. The
 * jobs of a loop run in posting order, and before any call that takes the
 * loop, so whatever the thread does next on the pool finds the connection
 * back. */
static int release_pushed_run(pgw__shared_job_t *job)
{
    (void)give_back(job->ctx, pgw__client_of_job(job), NULL); /* job gone with it */
    return 0;
}

int pgw_client_pool_release(pgw_client_pool_t *p, pgw_client_t *c)
{
    if (!p || !c || pgw__client_shared(c) != p->loop) return PGW_EINVAL;
    posted_begin(p);
    pgw__client_rest_t rest = pgw__client_rest(c);
    if (!__atomic_load_n(&p->closing, __ATOMIC_SEQ_CST) &&
        !pgw__pool_release_waits(p->pool, rest.txn, rest.pending, rest.group_open)) {
        pgw__shared_job_t *job = pgw__client_job(c);
        *job = (pgw__shared_job_t){.run = release_pushed_run, .ctx = p};
        pgw__shared_loop_push(p->loop, job);
        posted_end(p); /* a close since: the job runs before it counts clients out */
        return 0;
    }
    release_t r = {.job = {.run = release_run}, .p = p, .c = c};
    pgw__shared_loop_post(p->loop, &r.job);
    posted_end(p);
    return r.rc;
}

/* pgw_pool_submit on the loop, for pgw__client_run_posted: while the pool
 * cannot take a request for now (PGW_ECONNECT: every connection is being
 * checked, replaced or between connect attempts at max_size), the request
 * waits for a connection, as a checkout does. A pool being closed refuses
 * it. */
static int submit_posted(void *ctx, const pgw_request_t *req, pgw_driver_hook hook, void *hctx)
{
    pgw_client_pool_t *p = ctx;
    if (p->closing) return PGW_ECLOSED;
    return pgw__pool_submit_driven(p->pool, req, hook, hctx);
}

/* A one-shot request: posted, as a checkout is; the pool's engine picks
 * its connection (pgw_pool_submit). */
int pgw_client_pool_run(pgw_client_pool_t *p, const pgw_request_t *req, pgw_result_t **res)
{
    if (res) *res = NULL;
    if (!p || !req) return PGW_EINVAL;
    posted_begin(p);
    int rc = __atomic_load_n(&p->closing, __ATOMIC_SEQ_CST)
                 ? PGW_ECLOSED
                 : pgw__client_run_posted(p->loop, submit_posted, p, req, res);
    posted_end(p);
    return rc;
}

void pgw_client_pool_stats(pgw_client_pool_t *p, pgw_pool_stats_t *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!p) return;
    pgw__shared_loop_enter(p->loop);
    pgw_pool_stats(p->pool, out);
    pgw__shared_loop_leave(p->loop);
}

void pgw_client_pool_close(pgw_client_pool_t *p)
{
    if (!p) return;
    pgw__shared_loop_enter(p->loop);
    __atomic_store_n(&p->closing, 1, __ATOMIC_SEQ_CST);
    /* One-shot requests still waiting for a connection are refused at
     * the loop's next turn: make it come. */
    pgw__shared_loop_wake(p->loop);
    leave(p);
}
