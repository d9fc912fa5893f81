/*
 * Loops libpgwire makes itself (loop.h), and the one loop a process keeps
 * between a connection that closed and the next (pgw__loop_take).
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
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
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

/* ------------------------------------------------------------ kept loop
 *
 * A libpq connection makes a loop and closes it at PQfinish; a program
 * that connects for each piece of work would pay, each time, for the
 * kernel objects of a loop (an epoll instance, libuv's signal pipe and
 * eventfd: three creations, four closes, two registrations). The process
 * keeps the last loop given back instead, and the next take reuses it.
 *
 * A kept loop must not be reused where its descriptors are not what they
 * were: in a child of fork(), whose descriptors are the parent's (the
 * epoll instance itself is shared), or after the program closed
 * descriptors it did not open (the number of the loop's epoll descriptor
 * may then be another epoll instance, the program's own). So a kept loop
 * carries a marker: a socket of its own, registered with no events in the
 * loop's epoll instance. A take reuses the loop only in the process that
 * kept it, and only while the instance at the loop's epoll descriptor
 * still holds the marker at the marker's descriptor (EPOLL_CTL_MOD).
 */

typedef struct kept_loop {
    uv_loop_t loop; /* first: the uv_loop_t * handed out is the struct's */
    pid_t pid;      /* the process that made it */
    int marker;     /* -1 until the loop is first kept */
} kept_loop_t;

static _Atomic(kept_loop_t *) kept;

static int marker_event(int op, const kept_loop_t *k)
{
    /* No events asked for; an error or hang-up, which an unbound datagram
     * socket never has, would come once (edge-triggered), and libuv skips
     * an event whose descriptor is -1. */
    struct epoll_event ev = {.events = EPOLLET, .data.fd = -1};
    return epoll_ctl(uv_backend_fd(&k->loop), op, k->marker, &ev);
}

/* epoll knows a descriptor by its number and its file: the instance at
 * the loop's number holds the marker's number and file only when both
 * are still the loop's (in a child of fork(), its copies of them). */
static bool descriptors_ours(const kept_loop_t *k)
{
    return marker_event(EPOLL_CTL_MOD, k) == 0;
}

static void close_loop(kept_loop_t *k)
{
    uv_loop_close(&k->loop);
    if (k->marker >= 0) close(k->marker);
    free(k);
}

/* A kept loop that will not be reused. A parent's, in a child, is closed:
 * that closes the child's copies of its descriptors and leaves the
 * parent's instance as it was (uv_loop_close makes no epoll_ctl). One whose
 * descriptors are no longer its own is forgotten: closing them would
 * close someone else's, and libuv frees its part of a loop only with them,
 * so that part (a few hundred bytes) stays allocated. */
static void drop(kept_loop_t *k)
{
    if (descriptors_ours(k))
        close_loop(k);
    else
        free(k);
}

uv_loop_t *pgw__loop_take(int *err)
{
    kept_loop_t *k = atomic_exchange_explicit(&kept, NULL, memory_order_acquire);
    if (k) {
        if (descriptors_ours(k) && k->pid == getpid()) {
            uv_update_time(&k->loop); /* its time is that of its last turn */
            return &k->loop;
        }
        drop(k);
    }
    k = malloc(sizeof *k);
    if (!k) {
        *err = UV_ENOMEM;
        return NULL;
    }
    int rc = pgw__loop_init(&k->loop);
    if (rc < 0) {
        free(k);
        *err = rc;
        return NULL;
    }
    k->pid = getpid();
    k->marker = -1;
    return &k->loop;
}

/* The marker of a loop about to be kept; false when it cannot be made. */
static bool mark(kept_loop_t *k)
{
    if (k->marker >= 0) return true;
    k->marker = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (k->marker < 0) return false;
    if (marker_event(EPOLL_CTL_ADD, k) != 0) {
        close(k->marker);
        k->marker = -1;
        return false;
    }
    return true;
}

void pgw__loop_give(uv_loop_t *loop)
{
    kept_loop_t *k = (kept_loop_t *)loop;
    kept_loop_t *none = NULL;
    /* a loop a child of fork() inherited is not kept: its epoll instance
     * is the parent's */
    if (k->pid == getpid() && mark(k) &&
        atomic_compare_exchange_strong_explicit(&kept, &none, k, memory_order_release,
                                                memory_order_relaxed))
        return;
    close_loop(k);
}

/* At exit, or when a program unloads the library: the kept loop's
 * descriptors and memory. */
__attribute__((destructor)) static void drop_kept(void)
{
    kept_loop_t *k = atomic_exchange_explicit(&kept, NULL, memory_order_acquire);
    if (k) drop(k);
}
