/*
 * The loop a process keeps between connections (pgw__loop_take and
 * pgw__loop_give, conn/loop.c): reused while it is still the process's,
 * never in a child of fork() nor after its descriptors were closed behind
 * its back, and no descriptor left behind by a loop that was not kept.
 */
#define _GNU_SOURCE
#include "conn/loop.h"
#include "pgtest.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void on_timer(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* The loop works: a timer fires in a run, and the run ends with nothing
 * left (the loop can be given back). */
static int loop_works(uv_loop_t *loop)
{
    uv_timer_t t;
    int fired = 0;
    if (uv_timer_init(loop, &t) != 0) return 0;
    t.data = &fired;
    if (uv_timer_start(&t, on_timer, 1, 0) != 0) return 0;
    if (uv_run(loop, UV_RUN_DEFAULT) != 0) return 0;
    uv_close((uv_handle_t *)&t, NULL);
    return uv_run(loop, UV_RUN_DEFAULT) == 0 && fired;
}

static uv_loop_t *take(void)
{
    int err = 0;
    uv_loop_t *loop = pgw__loop_take(&err);
    assert_non_null(loop);
    assert_int_equal(err, 0);
    return loop;
}

/* A loop taken and given back, so that one is kept. */
static uv_loop_t *keep_one(void)
{
    uv_loop_t *loop = take();
    assert_true(loop_works(loop));
    pgw__loop_give(loop);
    return loop;
}

/* The child ran its checks and they held. */
static void child_passed(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_reused(void **state)
{
    (void)state;
    uv_loop_t *kept = keep_one();
    int fd = uv_backend_fd(kept);
    uv_loop_t *again = take();
    assert_ptr_equal(again, kept);
    assert_int_equal(uv_backend_fd(again), fd);
    assert_true(loop_works(again));
    pgw__loop_give(again);
}

/* Two loops at once: the second is new; given back, one is kept and the
 * other closed, descriptors and all. */
static void test_one_kept(void **state)
{
    (void)state;
    uv_loop_t *kept = keep_one();
    int before = pgt_open_fds();
    uv_loop_t *a = take(), *b = take();
    assert_ptr_equal(a, kept);
    assert_ptr_not_equal(b, a);
    assert_true(pgt_open_fds() > before);
    assert_true(loop_works(b));
    pgw__loop_give(a);
    pgw__loop_give(b);
    assert_int_equal(pgt_open_fds(), before);
    uv_loop_t *c = take();
    assert_ptr_equal(c, a);
    pgw__loop_give(c);
}

/* A probe: a socket registered in the loop's epoll instance, which no
 * other instance holds. */
static const struct epoll_event probe_event = {.events = EPOLLET, .data.fd = -1};

static int add_probe(uv_loop_t *loop)
{
    int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(probe >= 0);
    struct epoll_event ev = probe_event;
    assert_int_equal(epoll_ctl(uv_backend_fd(loop), EPOLL_CTL_ADD, probe, &ev), 0);
    return probe;
}

static int holds_probe(uv_loop_t *loop, int probe)
{
    struct epoll_event ev = probe_event;
    return epoll_ctl(uv_backend_fd(loop), EPOLL_CTL_MOD, probe, &ev) == 0;
}

static void remove_probe(uv_loop_t *loop, int probe)
{
    struct epoll_event ev = probe_event;
    assert_int_equal(epoll_ctl(uv_backend_fd(loop), EPOLL_CTL_DEL, probe, &ev), 0);
    close(probe);
}

/* In a child of fork(): gives back parents (unless NULL), then takes a
 * loop, which must be an epoll instance of the child's own (not holding
 * the parent's probe) and work. */
static void child_takes_own(uv_loop_t *parents, int probe)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (parents) pgw__loop_give(parents);
        int err = 0;
        uv_loop_t *mine = pgw__loop_take(&err);
        _exit(mine && !holds_probe(mine, probe) && loop_works(mine) ? 0 : 1);
    }
    child_passed(pid);
}

/* A child of fork() makes a loop of its own: the kept one's epoll
 * instance is the parent's too. Closing the child's copies leaves the
 * parent's instance as it was, and the parent's loop stays kept. */
static void test_not_in_child(void **state)
{
    (void)state;
    uv_loop_t *kept = keep_one();
    int probe = add_probe(kept);
    child_takes_own(NULL, probe);
    uv_loop_t *again = take();
    assert_ptr_equal(again, kept);
    assert_true(holds_probe(again, probe));
    remove_probe(again, probe);
    assert_true(loop_works(again));
    pgw__loop_give(again);
}

/* A loop in use when the process forked, given back in the child (a
 * PQfinish there): the child does not keep it, as its epoll instance is
 * the parent's, and its next loop is an instance of its own. */
static void test_given_in_child(void **state)
{
    (void)state;
    uv_loop_t *used = take();
    int probe = add_probe(used);
    child_takes_own(used, probe);
    assert_true(holds_probe(used, probe));
    remove_probe(used, probe);
    assert_true(loop_works(used));
    pgw__loop_give(used);
}

/* A loop taken, checked to work and given back, in a child (no cmocka
 * assertions there): it is then the one kept. NULL when it failed. */
static uv_loop_t *child_keeps_one(void)
{
    int err = 0;
    uv_loop_t *loop = pgw__loop_take(&err);
    if (!loop || !loop_works(loop)) return NULL;
    pgw__loop_give(loop);
    return loop;
}

/* check, in a child process of its own, which ends by exec when it holds:
 * a loop forgotten there, its descriptors closed behind its back, leaves
 * libuv's part of it allocated by design (conn/loop.c), and a leak check
 * (valgrind's, LeakSanitizer's) runs at a process's exit, not at exec. */
static void in_child(int (*check)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (check()) execl("/bin/true", "true", (char *)NULL);
        _exit(1);
    }
    child_passed(pid);
}

/* The program closed the kept loop's epoll descriptor, and its own epoll
 * instance took the number: a take must not hand that instance out. */
static int epoll_number_reused(void)
{
    uv_loop_t *kept = child_keeps_one();
    if (!kept) return 0;
    int fd = uv_backend_fd(kept);
    int own = epoll_create1(EPOLL_CLOEXEC);
    if (own < 0 || dup2(own, fd) != fd) return 0; /* closes the loop's */
    close(own);
    int err = 0;
    uv_loop_t *loop = pgw__loop_take(&err);
    struct epoll_event ev;
    int ok = loop && uv_backend_fd(loop) != fd && loop_works(loop) &&
             epoll_wait(fd, &ev, 1, 0) == 0; /* nothing of the loop's */
    if (loop) pgw__loop_give(loop);
    return ok;
}

static void test_epoll_number_reused(void **state)
{
    (void)state;
    in_child(epoll_number_reused);
}

/* The kept loop's marker, the one unbound unix datagram socket; -1 when
 * there is none or more than one. */
static int find_marker(void)
{
    int found = -1, n = 0;
    for (int fd = 3; fd < 1024; fd++) {
        int type = 0;
        socklen_t len = sizeof type;
        struct sockaddr_storage ss;
        socklen_t slen = sizeof ss;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM &&
            getsockname(fd, (struct sockaddr *)&ss, &slen) == 0 && ss.ss_family == AF_UNIX) {
            found = fd;
            n++;
        }
    }
    return n == 1 ? found : -1;
}

/* The program closed the marker and another socket took its number: the
 * loop is no longer known to be the one kept. */
static int marker_replaced(void)
{
    uv_loop_t *kept = child_keeps_one();
    if (!kept) return 0;
    int fd = uv_backend_fd(kept);
    int marker = find_marker();
    int other = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (marker < 0 || other < 0 || dup2(other, marker) != marker) return 0; /* closes it */
    close(other);
    int err = 0;
    uv_loop_t *loop = pgw__loop_take(&err);
    int ok = loop && uv_backend_fd(loop) != fd && loop_works(loop) &&
             fcntl(marker, F_GETFD) != -1; /* the program's socket left open */
    if (loop) pgw__loop_give(loop);
    return ok;
}

static void test_marker_replaced(void **state)
{
    (void)state;
    in_child(marker_replaced);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reused),          cmocka_unit_test(test_one_kept),
        cmocka_unit_test(test_not_in_child),    cmocka_unit_test(test_given_in_child),
        cmocka_unit_test(test_marker_replaced), cmocka_unit_test(test_epoll_number_reused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
