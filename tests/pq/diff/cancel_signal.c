/*
 * PQcancel from a signal handler, as psql calls it on SIGINT: the handler
 * runs on the thread that waits in PQexec (a watcher thread raises it once
 * the server shows the query as active), the query ends with SQLSTATE
 * 57014, and PQcancel allocated nothing (libpq's PQcancel is
 * async-signal-safe: malloc in a handler that interrupted malloc can
 * deadlock). The allocations are counted by this program's own malloc,
 * calloc and realloc on the handler's thread; under a sanitizer, which
 * owns malloc, they are not counted (both runs say so).
 */
#include "pqdiff.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>

#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define COUNT_ALLOCS 0
#endif
#endif
#ifndef COUNT_ALLOCS
#define COUNT_ALLOCS 1
#endif

static _Thread_local int counting;
static volatile sig_atomic_t allocs;

#if COUNT_ALLOCS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n)
{
    if (counting) allocs++;
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (counting) allocs++;
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (counting) allocs++;
    return __libc_realloc(p, n);
}
#endif

static PGcancel *cancel;
static volatile sig_atomic_t cancel_ok = -1, errno_kept;
static char cancel_err[256] = "untouched";

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    errno = 4242; /* PQcancel must leave errno as it found it */
    counting = 1;
    cancel_ok = PQcancel(cancel, cancel_err, sizeof cancel_err);
    counting = 0;
    errno_kept = errno == 4242;
    errno = saved;
}

typedef struct watch {
    PGconn *watcher;
    int pid;
    pthread_t target;
} watch_t;

/* Raise the signal on the target thread once its query runs. */
static void *watch_main(void *arg)
{
    watch_t *w = arg;
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT 1 FROM pg_stat_activity WHERE pid = %d AND state = 'active'"
             " AND query LIKE 'SELECT pg_sleep%%'",
             w->pid);
    for (int i = 0; i < 1000; i++) {
        PGresult *r = PQexec(w->watcher, sql);
        int found = PQntuples(r) == 1;
        PQclear(r);
        if (found) {
            pthread_kill(w->target, SIGUSR1);
            return NULL;
        }
        usleep(10000);
    }
    return NULL;
}

int main(void)
{
    pqd_init();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);

    PGconn *conn = pqd_connect();
    watch_t w = {pqd_connect(), PQbackendPID(conn), pthread_self()};
    cancel = PQgetCancel(conn);
    printf("getCancel: %s\n", cancel ? "set" : "NULL");
    pthread_t th;
    pthread_create(&th, NULL, watch_main, &w);
    PGresult *r = PQexec(conn, "SELECT pg_sleep(60)");
    pthread_join(th, NULL);
    pqd_show("sleep", r);
    printf("cancel in the handler -> %d err=[%s] errno kept: %s\n", (int)cancel_ok, cancel_err,
           errno_kept ? "yes" : "no");
    if (COUNT_ALLOCS)
        printf("allocations in PQcancel: %d\n", (int)allocs);
    else
        printf("allocations in PQcancel: not counted under a sanitizer\n");
    pqd_exec(conn, "SELECT 'still usable'");
    PQfreeCancel(cancel);
    PQfinish(w.watcher);
    PQfinish(conn);
    return 0;
}
