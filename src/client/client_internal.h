/*
 * Internals shared by the blocking client's files (client.c, cursor.c,
 * notify.c, shared_loop.c) and the blocking pool (pool/blocking.c).
 * Not installed.
 */
#ifndef PGW_CLIENT_INTERNAL_H
#define PGW_CLIENT_INTERNAL_H

#include "pgwire/client.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <uv.h>

/* The allocator the client was made with. */
const pgw_allocator_t *pgw__client_alloc(const pgw_client_t *c);

/* A uv loop shared by threads (shared_loop.c): whoever holds it runs it.
 * enter waits for the loop (waking its holder), leave hands it on; turn
 * runs the loop once in mode, after letting every thread that waits for
 * the loop have it first. Only the holder touches the loop and what runs
 * on it. free (by the last thread, once nobody holds it) closes what is
 * left on the loop. */
typedef struct pgw__shared_loop pgw__shared_loop_t;
int pgw__shared_loop_new(pgw__shared_loop_t **out, const pgw_allocator_t *alloc);
uv_loop_t *pgw__shared_loop_uv(pgw__shared_loop_t *s);
void pgw__shared_loop_enter(pgw__shared_loop_t *s);
void pgw__shared_loop_leave(pgw__shared_loop_t *s);
int pgw__shared_loop_turn(pgw__shared_loop_t *s, uv_run_mode mode);
/* Hold the loop until *done, running it or letting another waiting
 * thread run it for everyone (shared_loop.c). */
int pgw__shared_loop_wait(pgw__shared_loop_t *s, const int *done, void (*before_turn)(void *),
                          void *arg);
/* One turn of the loop for the pool's background thread, only while no
 * call holds or wants the loop (0 once *stop is set). */
int pgw__shared_loop_background_turn(pgw__shared_loop_t *s, const int *stop);
/* Make the holder's uv_run return (from any thread). */
void pgw__shared_loop_wake(pgw__shared_loop_t *s);
/* A job of another thread for the loop: pgw__shared_loop_post queues it
 * and sleeps until it is finished, without holding the loop; whoever holds
 * the loop runs run(job) at its next turn (the pool's background thread
 * when no call does), and whoever takes the loop (enter) runs the jobs
 * posted before it first. run returns 0 once the job is taken (it or a
 * callback calls pgw__shared_loop_finish, and nothing touches the job
 * after that), 1 to be run again at the loop's next turn. */
typedef struct pgw__shared_job {
    int (*run)(struct pgw__shared_job *job);
    void *ctx;  /* the poster's, for run */
    sem_t done; /* posted once, by pgw__shared_loop_finish */
    struct pgw__shared_job *next;
} pgw__shared_job_t;
void pgw__shared_loop_post(pgw__shared_loop_t *s, pgw__shared_job_t *job);
/* Queue job as pgw__shared_loop_post does, and return at once: run must
 * take it at its first run (return 0, never finish it), and its memory
 * lives until then. */
void pgw__shared_loop_push(pgw__shared_loop_t *s, pgw__shared_job_t *job);
/* On the loop: job is done; its thread returns from pgw__shared_loop_post. */
void pgw__shared_loop_finish(pgw__shared_loop_t *s, pgw__shared_job_t *job);
void pgw__shared_loop_free(pgw__shared_loop_t *s);

/* A client over conn, a connection of the shared loop s that someone else
 * owns (a pooled connection): its calls hold s while they run and wait.
 * cfg: the options conn was made with (its notification hook is the
 * client's while attached, and given back at detach). Call both holding
 * s. */
int pgw__client_attach(pgw_client_t **out, pgw_conn_t *conn, pgw__shared_loop_t *s,
                       const pgw_conn_config_t *cfg);
void pgw__client_detach(pgw_client_t *c);
/* The shared loop c is attached to, NULL for a client of its own loop. */
pgw__shared_loop_t *pgw__client_shared(const pgw_client_t *c);
/* What an attached client's connection looked like when its last call
 * ended (or at attach): the transaction status, requests still pending,
 * a portal group open. Taken on the loop, before the call returned, and
 * read by the client's thread, which owns the client between its calls:
 * so its release can tell, without the loop, what the release will do. */
typedef struct pgw__client_rest {
    char txn;
    int pending;
    int group_open;
} pgw__client_rest_t;
pgw__client_rest_t pgw__client_rest(const pgw_client_t *c);
/* A job inside c, for its release (pgw__shared_loop_push); c is found
 * again from it. Gone with c (pgw__client_detach). */
pgw__shared_job_t *pgw__client_job(pgw_client_t *c);
pgw_client_t *pgw__client_of_job(pgw__shared_job_t *job);

/* A call of c begins / ends: an attached client holds its shared loop
 * meanwhile (calls nest). */
void pgw__client_enter(pgw_client_t *c);
void pgw__client_leave(pgw_client_t *c);
/* Run c's loop once (inside a call). */
int pgw__client_turn(pgw_client_t *c, uv_run_mode mode);
/* Run c's loop (inside a call) until done(arg), timeout_ms passed (< 0: no
 * limit; 0: one non-blocking turn only) or nothing is left to run
 * (notify.c). */
void pgw__client_run_until(pgw_client_t *c, int timeout_ms, bool (*done)(void *arg), void *arg);

/* Submit one request through submit (a pool's driven submit, called with
 * sctx on the loop of s, not held by the caller) as a job of s and sleep
 * until it completed: the result as pgw_client_run returns it. submit
 * returns PGW_ECONNECT to be called again at the loop's next turn (no
 * connection can take the request yet). */
typedef int (*pgw__driven_submit_fn)(void *sctx, const pgw_request_t *req, pgw_driver_hook hook,
                                     void *ctx);
int pgw__client_run_posted(pgw__shared_loop_t *s, pgw__driven_submit_fn submit, void *sctx,
                           const pgw_request_t *req, pgw_result_t **res);

#endif
