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
 */
#define _DEFAULT_SOURCE
#include "client/client_internal.h"
#include "util/internal.h"

#include <pthread.h>

struct pgw__shared_loop {
    uv_loop_t loop;
    uv_async_t wake;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next, serving; /* tickets: taken, holding the loop */
    uint64_t gen;           /* turns of the loop and hand-overs */
    int running;            /* the holder is in uv_run */
    const pgw_allocator_t *alloc;
};

static void on_wake(uv_async_t *a)
{
    (void)a; /* only makes the holder's uv_run return */
}

int pgw__shared_loop_new(pgw__shared_loop_t **out, const pgw_allocator_t *alloc)
{
    pgw__shared_loop_t *s = pgw__calloc(alloc, 1, sizeof *s);
    if (!s) return PGW_ENOMEM;
    s->alloc = alloc;
    int rc = uv_loop_init(&s->loop);
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
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    *out = s;
    return 0;
}

uv_loop_t *pgw__shared_loop_uv(pgw__shared_loop_t *s)
{
    return &s->loop;
}

/* Take a ticket and wait for it (s->mu held). A holder blocked in uv_run
 * is woken to hand over. */
static void wait_turn(pgw__shared_loop_t *s)
{
    uint64_t t = s->next++;
    if (t != s->serving && s->running) uv_async_send(&s->wake);
    while (t != s->serving)
        pthread_cond_wait(&s->cv, &s->mu);
}

void pgw__shared_loop_enter(pgw__shared_loop_t *s)
{
    pthread_mutex_lock(&s->mu);
    wait_turn(s);
    pthread_mutex_unlock(&s->mu);
}

/* The loop changed hands or ran (s->mu held): whoever waits for that
 * looks again. */
static void progress(pgw__shared_loop_t *s)
{
    s->gen++;
    pthread_cond_broadcast(&s->cv);
}

void pgw__shared_loop_leave(pgw__shared_loop_t *s)
{
    pthread_mutex_lock(&s->mu);
    s->serving++;
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
        s->serving++;
        pthread_cond_broadcast(&s->cv);
        while (s->gen == g)
            pthread_cond_wait(&s->cv, &s->mu);
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

void pgw__shared_loop_wake(pgw__shared_loop_t *s)
{
    uv_async_send(&s->wake);
}

static void on_wake_closed(uv_handle_t *h)
{
    (void)h;
}

void pgw__shared_loop_free(pgw__shared_loop_t *s)
{
    if (!s) return;
    uv_close((uv_handle_t *)&s->wake, on_wake_closed);
    uv_run(&s->loop, UV_RUN_DEFAULT); /* everything left closing */
    uv_loop_close(&s->loop);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    pgw__free(s->alloc, s);
}
