/* The process-wide counters of pgw-bench-driver: every allocation
 * (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) and
 * every byte moved on a socket (read, recv, recvmsg, readv; write, send,
 * sendmsg, writev), whichever library makes the call.
 *
 * These functions are defined in the executable itself (linked with
 * ENABLE_EXPORTS), so libpq, libpgwire, libuv and OpenSSL all bind to them;
 * allocations are forwarded to glibc's __libc_* entry points, socket calls
 * as raw system calls (which set errno as the wrappers would). Nothing is
 * counted outside bench_count_start .. bench_count_stop, so setup and
 * teardown do not show. realloc counts as one allocation of its new size.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- allocation counting ------------------------------------------------ */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static volatile int counting;
static uint64_t n_allocs, alloc_bytes, net_in, net_out;

static inline void count_alloc(size_t n)
{
    if (counting) {
        __atomic_fetch_add(&n_allocs, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&alloc_bytes, n, __ATOMIC_RELAXED);
    }
}

void *malloc(size_t n)
{
    count_alloc(n);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    count_alloc(a * b);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    count_alloc(n);
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}
void *memalign(size_t al, size_t n)
{
    count_alloc(n);
    return __libc_memalign(al, n);
}
void *aligned_alloc(size_t al, size_t n)
{
    count_alloc(n);
    return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n)
{
    count_alloc(n);
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

/* ---- socket byte counting ------------------------------------------------ */
#define FD_CACHE 4096
static signed char fd_kind[FD_CACHE]; /* 0 unknown, 1 socket, -1 other */

static int is_socket(int fd)
{
    struct stat st;
    if (fd < 0) return 0;
    if (fd < FD_CACHE && fd_kind[fd]) return fd_kind[fd] > 0;
    int sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
    if (fd < FD_CACHE) fd_kind[fd] = sock ? 1 : -1;
    return sock;
}

static inline ssize_t count_io(int fd, ssize_t r, uint64_t *ctr)
{
    if (r > 0 && counting && is_socket(fd)) __atomic_fetch_add(ctr, (uint64_t)r, __ATOMIC_RELAXED);
    return r;
}

/* Raw system calls set errno through syscall(), as the wrappers would. */
ssize_t read(int fd, void *b, size_t n)
{
    return count_io(fd, syscall(SYS_read, fd, b, n), &net_in);
}
ssize_t write(int fd, const void *b, size_t n)
{
    return count_io(fd, syscall(SYS_write, fd, b, n), &net_out);
}
ssize_t readv(int fd, const struct iovec *v, int n)
{
    return count_io(fd, syscall(SYS_readv, fd, v, n), &net_in);
}
ssize_t writev(int fd, const struct iovec *v, int n)
{
    return count_io(fd, syscall(SYS_writev, fd, v, n), &net_out);
}
ssize_t recv(int fd, void *b, size_t n, int fl)
{
    return count_io(fd, syscall(SYS_recvfrom, fd, b, n, fl, NULL, NULL), &net_in);
}
ssize_t recvmsg(int fd, struct msghdr *m, int fl)
{
    return count_io(fd, syscall(SYS_recvmsg, fd, m, fl), &net_in);
}
ssize_t send(int fd, const void *b, size_t n, int fl)
{
    return count_io(fd, syscall(SYS_sendto, fd, b, n, fl, NULL, 0), &net_out);
}
ssize_t sendmsg(int fd, const struct msghdr *m, int fl)
{
    return count_io(fd, syscall(SYS_sendmsg, fd, m, fl), &net_out);
}
int close(int fd)
{
    if (fd >= 0 && fd < FD_CACHE) fd_kind[fd] = 0; /* the number may come back as something else */
    return (int)syscall(SYS_close, fd);
}

/* ---- the counting window -------------------------------------------------- */
void bench_count_start(void)
{
    counting = 1;
}

void bench_count_stop(void)
{
    counting = 0;
}

bench_counts_t bench_counts(void)
{
    bench_counts_t c = {n_allocs, alloc_bytes, net_in, net_out};
    return c;
}
