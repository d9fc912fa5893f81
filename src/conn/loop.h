/*
 * The libuv loops libpgwire makes itself (the pq layer's, the blocking
 * client's, the shared loop's, a blocking cancel's).
 */
#ifndef PGW_CONN_LOOP_H
#define PGW_CONN_LOOP_H

#include <uv.h>

/* uv_loop_init, without libuv's abort: the first loop of a process makes
 * libuv's process-wide signal pipe, and libuv aborts the process when it
 * cannot. Until a loop was made, a pipe is made and closed first, and
 * without one the call fails instead. Returns 0, uv_loop_init's error, or
 * the negated errno of the pipe (UV_EMFILE, UV_ENFILE). */
int pgw__loop_init(uv_loop_t *loop);

/* A loop for a connection that makes and closes its own: the idle loop
 * the last one gave back, or a new one. NULL with *err set when a new
 * loop could not be made (pgw__loop_init's errors, UV_ENOMEM). */
uv_loop_t *pgw__loop_take(int *err);

/* Gives back a loop of pgw__loop_take with every handle closed and run
 * (uv_run returned 0): kept for the next take when no loop is kept, else
 * closed and freed. */
void pgw__loop_give(uv_loop_t *loop);

#endif
