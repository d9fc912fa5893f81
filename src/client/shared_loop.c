/*
 * A uv loop shared by threads (the blocking pool's engine, pool.h): the
 * loop and everything on it belong to whichever thread holds the loop's
 * ticket. A thread takes a ticket, wakes the holder (its uv_run returns),
 * and waits for its turn; the holder hands over at its next turn, or when
 * its call ends. So a
 * blocking call runs the shared loop on its own thread while it waits, as
 * curl_easy_perform drives its multi handle, and the engine thread runs it
 * when no call does (the pool's timers, requests of threads not waiting).
 * Tickets are served in order: every waiting thread gets the loop in turn.
 *
 * A call that only needs something done on the loop and then waits for a
 * callback (the pool's one-shot requests) does not take a ticket: it posts
 * a job and sleeps on a semaphore of its own. The holder runs posted jobs
 * at its next turn (the wake handle's callback), so one turn submits the
 * jobs of every posting thread, and a job's thread is woken once, when its
 * job is finished: no hand-over of the loop per call. A job whose thread
 * need not wait for it (a release the pool settles at once) is pushed
 * alone; a thread that takes the loop runs the jobs posted before it
 * first, so the pushed job's effect is seen by every later call.
 */
#define _DEFAULT_SOURCE
#include "client/client_internal.h"
#include "conn/loop.h"
#include "util/internal.h"

#include <pthread.h>

/* A call that handed the loop on and sleeps until its flag is set or the
 * loop is free: woken alone, on a condition variable of its own, instead
 * of every sleeping thread after every turn. */
typedef struct sleeper {
    pthread_cond_t cv;
    const int *done;
    struct sleeper *next;
} sleeper_t;

/* A thread waiting for its ticket to be served, woken alone when it is:
 * with many threads in line, a broadcast at every hand-over would wake
 * them all to find that one ticket moved. */
typedef struct in_line {
    pthread_cond_t cv;
    uint64_t ticket;
    struct in_line *next;
} in_line_t;

struct pgw__shared_loop {
    uv_loop_t loop;
    uv_async_t wake;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* turns of the loop (gen) */
    int cv_waiters;         /* threads waiting on cv */
    pthread_cond_t bg_cv;   /* the loop free, for the background thread */
    int bg_waiting;         /* it waits on bg_cv */
    uint64_t next, serving; /* tickets: taken, holding the loop */
    uint64_t gen;           /* turns of the loop and hand-overs */
    int running;            /* the holder is in uv_run */
    in_line_t *line;        /* threads waiting for their ticket, in ticket order */
    in_line_t **line_tail;
    sleeper_t *sleepers; /* calls in pgw__shared_loop_wait that handed over */
    /* Jobs (pgw__shared_loop_post): posted and not yet run, a stack
     * pushed by the posting threads without a lock (newest first; the
     * holder takes it whole and runs it oldest first); and jobs run that
     * asked to run again, touched holding the loop, retried at every turn
     * by the check handle while there are any. */
    pgw__shared_job_t *jobs;
    pgw__shared_job_t *again, **again_tail;
    uv_check_t retry;
    const pgw_allocator_t *alloc;
};

static void on_retry(uv_check_t *h);

/* Holding the loop: run job; one that asks to run again waits for the
 * next turn. */
static void run_job(pgw__shared_loop_t *s, pgw__shared_job_t *job)
{
    job->next = NULL;
    if (job->run(job) == 0) return; /* taken: job may be gone already */
    *s->again_tail = job;
    s->again_tail = &job->next;
    if (!uv_is_active((uv_handle_t *)&s->retry)) uv_check_start(&s->retry, on_retry);
}

/* Holding the loop: run the jobs of list, in order. */
static void run_jobs(pgw__shared_loop_t *s, pgw__shared_job_t *list)
{
    while (list) {
        pgw__shared_job_t *next = list->next;
        run_job(s, list);
        list = next;
    }
}

static void on_retry(uv_check_t *h)
{
    pgw__shared_loop_t *s = h->data;
    pgw__shared_job_t *list = s->again;
    s->again = NULL;
    s->again_tail = &s->again;
    uv_check_stop(&s->retry);
    run_jobs(s, list);
}

/* Holding the loop: run the jobs posted so far, in posting order. */
static void run_posted(pgw__shared_loop_t *s)
{
    pgw__shared_job_t *newest = __atomic_exchange_n(&s->jobs, NULL, __ATOMIC_ACQUIRE);
    pgw__shared_job_t *list = NULL;
    while (newest) { /* posting order */
        pgw__shared_job_t *next = newest->next;
        newest->next = list;
        list = newest;
        newest = next;
    }
    run_jobs(s, list);
}

/* The wake handle: the holder's uv_run returns (wait_turn), and it runs
 * the jobs posted since its last turn. */
static void on_wake(uv_async_t *a)
{
    run_posted(a->data);
}

void pgw__shared_loop_push(pgw__shared_loop_t *s, pgw__shared_job_t *job)
{
    job->next = __atomic_load_n(&s->jobs, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&s->jobs, &job->next, job, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
        ;
    uv_async_send(&s->wake); /* coalesced by libuv while one is pending */
}

/* The job is pushed without a lock and its thread sleeps on a semaphore
 * of its own: with many threads posting, none waits for a lock another
 * holds, and the holder's finish wakes exactly the one thread. */
void pgw__shared_loop_post(pgw__shared_loop_t *s, pgw__shared_job_t *job)
{
    /* Fails only for a value above SEM_VALUE_MAX or a semaphore shared
     * between processes: neither here. */
    sem_init(&job->done, 0, 0);
    pgw__shared_loop_push(s, job);
    while (sem_wait(&job->done) != 0) /* EINTR: a signal handler ran */
        ;
    sem_destroy(&job->done);
}

void pgw__shared_loop_finish(pgw__shared_loop_t *s, pgw__shared_job_t *job)
{
    (void)s;
    sem_post(&job->done); /* last: the job may be gone after it (glibc's
                           * sem_post allows a sem_destroy as soon as the
                           * waiter returns) */
}

int pgw__shared_loop_new(pgw__shared_loop_t **out, const pgw_allocator_t *alloc)
{
    pgw__shared_loop_t *s = pgw__calloc(alloc, 1, sizeof *s);
    if (!s) return PGW_ENOMEM;
    s->alloc = alloc;
    int rc = pgw__loop_init(&s->loop);
    if (rc < 0) {
        pgw__free(alloc, s);
        return rc;
    }
    rc = uv_async_init(&s->loop, &s->wake, on_wake);
    if (rc < 0) {
        uv_loop_close(&s->loop);
        pgw__free(alloc, s);
        return rc;
    }
    s->wake.data = s;
    uv_check_init(&s->loop, &s->retry); /* cannot fail: no system call */
    s->retry.data = s;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->bg_cv, NULL);
    s->line_tail = &s->line;
    s->again_tail = &s->again;
    *out = s;
    return 0;
}

uv_loop_t *pgw__shared_loop_uv(pgw__shared_loop_t *s)
{
    return &s->loop;
}

/* The ticket being served changed (s->mu held): wake its thread, the
 * first in line (tickets are taken and served in order). */
static void serve_next(pgw__shared_loop_t *s)
{
    if (s->line && s->line->ticket == s->serving) pthread_cond_signal(&s->line->cv);
}

/* Wait on s->cv (s->mu held), counted so that it is signalled only when
 * someone waits on it. */
static void wait_cv(pgw__shared_loop_t *s)
{
    s->cv_waiters++;
    pthread_cond_wait(&s->cv, &s->mu);
    s->cv_waiters--;
}

static void wake_cv(pgw__shared_loop_t *s)
{
    if (s->cv_waiters) pthread_cond_broadcast(&s->cv);
}

/* Take a ticket and wait for it (s->mu held). A holder blocked in uv_run
 * is woken to hand over. */
static void wait_turn(pgw__shared_loop_t *s)
{
    uint64_t t = s->next++;
    if (t == s->serving) return;
    if (s->running) uv_async_send(&s->wake);
    in_line_t me = {.ticket = t};
    pthread_cond_init(&me.cv, NULL);
    *s->line_tail = &me;
    s->line_tail = &me.next;
    while (t != s->serving)
        pthread_cond_wait(&me.cv, &s->mu);
    s->line = me.next; /* served in order: it is the first in line */
    if (!s->line) s->line_tail = &s->line;
    pthread_cond_destroy(&me.cv);
}

/* The holder lets go of the loop (s->mu held). */
static void hand_over(pgw__shared_loop_t *s)
{
    s->serving++;
    serve_next(s);
}

/* The jobs posted before the call run before it: a call of a thread
 * that pushed a job (a release) finds it done. */
void pgw__shared_loop_enter(pgw__shared_loop_t *s)
{
    pthread_mutex_lock(&s->mu);
    wait_turn(s);
    pthread_mutex_unlock(&s->mu);
    run_posted(s);
}

static int flag_set(const int *flag)
{
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* The loop changed hands or ran (s->mu held): whoever waits for that
 * looks again; of the sleepers, those whose flag is set, and the first
 * one when the loop is free (it takes it; the others sleep on). */
static void progress(pgw__shared_loop_t *s)
{
    s->gen++;
    wake_cv(s);
    int free_loop = !s->running && s->next == s->serving;
    if (free_loop && s->bg_waiting) pthread_cond_signal(&s->bg_cv);
    for (sleeper_t *w = s->sleepers; w; w = w->next) {
        if (flag_set(w->done) || free_loop) pthread_cond_signal(&w->cv);
        if (!flag_set(w->done)) free_loop = 0;
    }
}

/* Sleep (s->mu held) until *done or the loop is free. */
static void sleep_until(pgw__shared_loop_t *s, const int *done)
{
    sleeper_t me = {.done = done, .next = s->sleepers};
    pthread_cond_init(&me.cv, NULL);
    s->sleepers = &me;
    while (!flag_set(done) && (s->running || s->next != s->serving))
        pthread_cond_wait(&me.cv, &s->mu);
    sleeper_t **p = &s->sleepers;
    while (*p != &me)
        p = &(*p)->next;
    *p = me.next;
    pthread_cond_destroy(&me.cv);
}

void pgw__shared_loop_leave(pgw__shared_loop_t *s)
{
    pthread_mutex_lock(&s->mu);
    hand_over(s);
    progress(s);
    pthread_mutex_unlock(&s->mu);
}

/* While others wait for the loop, the holder hands it on and waits until
 * the loop ran (or changed hands) before it takes a ticket again: a
 * thread waiting for its request does not run the loop when another can,
 * and does not spin. The last one in line runs it. */
int pgw__shared_loop_turn(pgw__shared_loop_t *s, uv_run_mode mode)
{
    pthread_mutex_lock(&s->mu);
    if (s->next != s->serving + 1) {
        uint64_t g = s->gen;
        hand_over(s);
        while (s->gen == g)
            wait_cv(s);
        wait_turn(s);
        pthread_mutex_unlock(&s->mu);
        return 1;
    }
    s->running = 1;
    pthread_mutex_unlock(&s->mu);
    int rc = uv_run(&s->loop, mode);
    pthread_mutex_lock(&s->mu);
    s->running = 0;
    progress(s);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* The caller holds the loop and waits for *done, which a callback on the
 * loop sets (with an atomic store: a thread that handed the loop on reads
 * it while another runs the loop). While nobody else wants the loop it
 * runs it; when others wait, it hands the loop on and sleeps until *done
 * is set or the loop is free again, then takes a ticket. So one thread
 * runs the loop for every waiting call (each turn completes whatever
 * arrived, for anyone), instead of the loop going round every waiting
 * thread once per turn. before_turn (may be NULL) runs with arg before
 * each turn this thread runs. Returns 1 once *done, 0 when the loop has
 * nothing left that could set it. */
int pgw__shared_loop_wait(pgw__shared_loop_t *s, const int *done, void (*before_turn)(void *),
                          void *arg)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (flag_set(done)) break;
        if (s->next != s->serving + 1) { /* others wait: hand over */
            hand_over(s);
            progress(s);
            sleep_until(s, done);
            wait_turn(s);
            continue;
        }
        s->running = 1;
        pthread_mutex_unlock(&s->mu);
        if (before_turn) before_turn(arg);
        int alive = uv_run(&s->loop, UV_RUN_ONCE);
        pthread_mutex_lock(&s->mu);
        s->running = 0;
        progress(s);
        if (!alive && !flag_set(done)) {
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return 1;
}

/* The background thread's turn: it waits until nobody holds or wants the
 * loop, runs one turn, and lets go. A caller that takes a ticket
 * meanwhile wakes it (wait_turn), so the loop is the callers' whenever
 * they need it, and runs in the background only between their calls.
 * Returns 0 once *stop is set (read atomically), else 1. */
int pgw__shared_loop_background_turn(pgw__shared_loop_t *s, const int *stop)
{
    pthread_mutex_lock(&s->mu);
    /* Woken only when the loop is free (progress), not at every turn of
     * the calls that hold it. */
    while (s->next != s->serving && !flag_set(stop)) {
        s->bg_waiting = 1;
        pthread_cond_wait(&s->bg_cv, &s->mu);
        s->bg_waiting = 0;
    }
    if (flag_set(stop)) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    s->next++; /* its ticket is the one served */
    s->running = 1;
    pthread_mutex_unlock(&s->mu);
    uv_run(&s->loop, UV_RUN_ONCE);
    pthread_mutex_lock(&s->mu);
    s->running = 0;
    hand_over(s);
    progress(s);
    pthread_mutex_unlock(&s->mu);
    return 1;
}

void pgw__shared_loop_wake(pgw__shared_loop_t *s)
{
    uv_async_send(&s->wake);
}

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

void pgw__shared_loop_free(pgw__shared_loop_t *s)
{
    if (!s) return;
    uv_close((uv_handle_t *)&s->wake, on_handle_closed);
    uv_close((uv_handle_t *)&s->retry, on_handle_closed);
    /* Everything left closing. A uv_stop made outside a turn (a checkout
     * granted at once) ends the next run early: run until none is left. */
    while (uv_run(&s->loop, UV_RUN_DEFAULT) != 0)
        ;
    uv_loop_close(&s->loop);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->bg_cv);
    pthread_mutex_destroy(&s->mu);
    pgw__free(s->alloc, s);
}
