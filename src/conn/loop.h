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

#endif
