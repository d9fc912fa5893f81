/*
 * Loops libpgwire makes itself (loop.h).
 *
 * libuv's first uv_loop_init in a process creates a pipe shared by all
 * loops (uv__signal_global_init) and calls abort() when the pipe cannot be
 * made: a program out of descriptors would die inside a connect. Making
 * and closing a pipe first turns that into an error the caller reports.
 * Another thread could take the descriptors between the two calls; that
 * window exists only until the process's first loop exists.
 */
#define _GNU_SOURCE /* pipe2 */
#include "conn/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

static atomic_bool loop_made;

int pgw__loop_init(uv_loop_t *loop)
{
    if (!atomic_load_explicit(&loop_made, memory_order_acquire)) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) return errno ? -errno : UV_EMFILE;
        close(p[0]);
        close(p[1]);
    }
    int rc = uv_loop_init(loop);
    if (rc == 0) atomic_store_explicit(&loop_made, true, memory_order_release);
    return rc;
}
