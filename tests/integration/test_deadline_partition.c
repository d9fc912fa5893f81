/*
 * Silent partitions (conn.h, DEADLINES and DEAD PEERS), against the real
 * server reached through a network namespace: the test creates a namespace
 * and a veth pair (10.213.N.1 here, 10.213.N.2 there), and a child process
 * relays TCP from a listener inside the namespace to the cluster's
 * 127.0.0.1 port. Setting the namespace's end of the link down then drops
 * every packet both ways, without an error or a reset: a vanished peer.
 *
 *   - a request with a deadline fails with PGW_ETIMEDOUT by its deadline
 *     plus the cancel grace period (the cancel cannot get through), the
 *     other pending requests with PGW_ECONNLOST, and the connection is
 *     closed;
 *   - with the default TCP options and no deadline, pending requests fail
 *     with PGW_ECONNLOST within the documented ~30 s, whether what was
 *     written had been acknowledged (keepalive probes) or not
 *     (TCP_USER_TIMEOUT), and pgw_conn_error_message words the timeout
 *     as libpq does.
 *
 * Needs root (network namespaces) and iproute2's `ip`; skipped with a
 * message otherwise.
 */
#define _GNU_SOURCE /* setns, CLONE_NEWNET */
#include "deadline_conn.h"
#include "pgtest.h"
#include "pgwire/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>

#define RELAY_PORT  5433
#define RELAY_PAIRS 16

typedef struct netns {
    char name[32];
    char host_if[16], ns_if[16];
    char host_ip[16], ns_ip[16];
    pid_t relay;
} netns_t;

static int sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* --------------------------------------------------------------- the relay */

/* Copy what is readable on from to to; 0, or -1 when either side ended. */
static int pump(int from, int to)
{
    char buf[16384];
    ssize_t n = recv(from, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w <= 0) return -1;
        off += w;
    }
    return 0;
}

static int upstream(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* The child: relay every connection accepted on lfd (a socket of the
 * namespace) to the cluster, until killed. */
static void relay_main(int lfd, int port)
{
    int a[RELAY_PAIRS], b[RELAY_PAIRS];
    for (int i = 0; i < RELAY_PAIRS; i++)
        a[i] = b[i] = -1;
    for (;;) {
        struct pollfd p[1 + 2 * RELAY_PAIRS];
        int n = 0;
        p[n++] = (struct pollfd){lfd, POLLIN, 0};
        for (int i = 0; i < RELAY_PAIRS; i++) {
            p[n++] = (struct pollfd){a[i], POLLIN, 0};
            p[n++] = (struct pollfd){b[i], POLLIN, 0};
        }
        if (poll(p, (nfds_t)n, -1) < 0) continue;
        if (p[0].revents & POLLIN) {
            int c = accept(lfd, NULL, NULL);
            int u = c >= 0 ? upstream(port) : -1;
            int slot = 0;
            while (slot < RELAY_PAIRS && a[slot] >= 0)
                slot++;
            if (u < 0 || slot == RELAY_PAIRS) {
                if (c >= 0) close(c);
                if (u >= 0) close(u);
            } else {
                a[slot] = c;
                b[slot] = u;
            }
        }
        for (int i = 0; i < RELAY_PAIRS; i++) {
            short ra = p[1 + 2 * i].revents, rb = p[2 + 2 * i].revents;
            if (a[i] < 0 || !(ra | rb)) continue;
            int rc = 0;
            if (ra) rc = pump(a[i], b[i]);
            if (rc == 0 && rb) rc = pump(b[i], a[i]);
            if (rc < 0) {
                close(a[i]);
                close(b[i]);
                a[i] = b[i] = -1;
            }
        }
    }
}

/* A listening socket created inside the namespace (a socket keeps the
 * namespace it was made in). */
static int listen_in(const netns_t *ns)
{
    char path[64];
    snprintf(path, sizeof path, "/var/run/netns/%s", ns->name);
    int here = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int there = open(path, O_RDONLY | O_CLOEXEC);
    int fd = -1;
    if (here >= 0 && there >= 0 && setns(there, CLONE_NEWNET) == 0) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(RELAY_PORT)};
        inet_pton(AF_INET, ns->ns_ip, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0) {
            close(fd);
            fd = -1;
        }
        if (setns(here, CLONE_NEWNET) != 0) abort();
    }
    if (here >= 0) close(here);
    if (there >= 0) close(there);
    return fd;
}

/* ------------------------------------------------------------ the network */

static void netns_down(netns_t *ns)
{
    if (ns->relay > 0) {
        kill(ns->relay, SIGKILL);
        waitpid(ns->relay, NULL, 0);
        ns->relay = 0;
    }
    sh("ip link del %s 2>/dev/null", ns->host_if);
    sh("ip netns del %s 2>/dev/null", ns->name);
}

/* Build the namespace pair and start the relay. Returns 0, or -1 with why
 * in msg (the test is then skipped). */
static int netns_up(netns_t *ns, char *msg, size_t n)
{
    memset(ns, 0, sizeof *ns);
    int id = (int)(getpid() % 200) + 10;
    snprintf(ns->name, sizeof ns->name, "pgwdl%d", (int)getpid());
    snprintf(ns->host_if, sizeof ns->host_if, "pgwdl%da", id);
    snprintf(ns->ns_if, sizeof ns->ns_if, "pgwdl%db", id);
    snprintf(ns->host_ip, sizeof ns->host_ip, "10.213.%d.1", id);
    snprintf(ns->ns_ip, sizeof ns->ns_ip, "10.213.%d.2", id);
    if (geteuid() != 0) {
        snprintf(msg, n, "not root: network namespaces cannot be created");
        return -1;
    }
    if (sh("command -v ip >/dev/null 2>&1") != 0) {
        snprintf(msg, n, "iproute2's ip is not installed");
        return -1;
    }
    int rc = sh("ip netns add %s", ns->name);
    if (rc == 0) rc = sh("ip link add %s type veth peer name %s", ns->host_if, ns->ns_if);
    if (rc == 0) rc = sh("ip link set %s netns %s", ns->ns_if, ns->name);
    if (rc == 0) rc = sh("ip addr add %s/30 dev %s", ns->host_ip, ns->host_if);
    if (rc == 0) rc = sh("ip link set %s up", ns->host_if);
    if (rc == 0) rc = sh("ip -n %s addr add %s/30 dev %s", ns->name, ns->ns_ip, ns->ns_if);
    if (rc == 0) rc = sh("ip -n %s link set %s up", ns->name, ns->ns_if);
    if (rc == 0) rc = sh("ip -n %s link set lo up", ns->name);
    int lfd = rc == 0 ? listen_in(ns) : -1;
    if (lfd < 0) {
        snprintf(msg, n, "could not set up the namespace pair (ip failed or setns refused)");
        netns_down(ns);
        return -1;
    }
    int port = pgt_env_int("PGPORT", 5432);
    ns->relay = fork();
    if (ns->relay == 0) {
        relay_main(lfd, port);
        _exit(0);
    }
    close(lfd);
    return ns->relay > 0 ? 0 : -1;
}

/* Drop everything on the link, both ways, without a word. */
static void partition(const netns_t *ns)
{
    assert_int_equal(sh("ip -n %s link set %s down", ns->name, ns->ns_if), 0);
}

/* ------------------------------------------------------------- the client */

typedef dl_conn_t side_t;

static void side_open(side_t *x, uv_loop_t *loop, const netns_t *ns, uint32_t grace_ms)
{
    char ci[512];
    snprintf(ci, sizeof ci, "host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5",
             ns->ns_ip, RELAY_PORT, pgt_env_required("PGUSER"), pgt_env_required("PGDATABASE"));
    dl_open(x, loop, ci, 0, grace_ms);
    /* the path works before the partition */
    outcome_t o = {0};
    assert_int_equal(pgw_conn_simple_query(x->conn, "SELECT 1", record, &o), 0);
    dl_spin(x, &o.calls, DL_WAIT_MS);
    assert_int_equal(o.status, 0);
}

static int setup(void **state)
{
    static netns_t ns;
    static char why[128];
    pgt_require_server();
    if (netns_up(&ns, why, sizeof why) < 0) {
        print_message("partition tests skipped: %s\n", why);
        *state = NULL;
        return 0;
    }
    *state = &ns;
    return 0;
}

static int teardown(void **state)
{
    if (*state) netns_down(*state);
    return 0;
}

/* A 300 ms deadline during a partition: the cancel cannot get through,
 * and 500 ms of grace later the connection is closed. */
static void test_deadline_during_partition(void **state)
{
    netns_t *ns = *state;
    if (!ns) skip();
    uv_loop_t loop;
    uv_loop_init(&loop);
    side_t x;
    side_open(&x, &loop, ns, 500);
    partition(ns);
    outcome_t timed = {0}, other = {0};
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, record, &timed);
    r.timeout_ms = 300;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 2", NULL, 0, record, &other), 0);
    dl_run(&loop, &timed.calls, &other.calls, DL_WAIT_MS);
    assert_int_equal(timed.calls, 1);
    assert_int_equal(timed.status, PGW_ETIMEDOUT);
    assert_int_equal(other.calls, 1);
    assert_int_equal(other.status, PGW_ECONNLOST);
    /* nothing crosses the partition: only the deadline and its grace end
     * the wait (before the dead-peer defaults' 30 s, see below) */
    pgt_assert_in_time("partition: deadline 300 ms + grace 500 ms", pgt_ms_between(t0, timed.at_ns),
                       795, 30000);
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    assert_non_null(strstr(pgw_conn_error_message(x.conn), "timed out"));
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 3", NULL, 0, record, &other), PGW_ECLOSED);
    dl_close(&x);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* msg is libpq's words for a read that failed as the kernel gave up on
 * an unreachable peer. */
static bool gave_up_words(const char *msg)
{
    printf("lost: %s\n", msg);
    return !strcmp(msg, "could not receive data from server: Connection timed out") ||
           !strcmp(msg, "could not receive data from server: No route to host");
}

/* No deadline, default TCP options: one connection whose request was
 * written and acknowledged before the partition (found by keepalive
 * probes), one that writes after it (found by TCP_USER_TIMEOUT); both fail
 * with PGW_ECONNLOST when the documented ~30 s have passed (keepalive: 15 s
 * idle and 3 probes 5 s apart, counted from the acknowledgement before the
 * partition), not before 25 s and in time (pgtime.h): nothing crosses the
 * partition, so nothing else would end the wait. */
static void test_dead_peer_found_with_defaults(void **state)
{
    netns_t *ns = *state;
    if (!ns) skip();
    uv_loop_t loop;
    uv_loop_init(&loop);
    side_t idle, busy;
    side_open(&idle, &loop, ns, 0);
    side_open(&busy, &loop, ns, 0);
    outcome_t waiting = {0}, written = {0};
    assert_int_equal(pgw_conn_simple_query(idle.conn, "SELECT pg_sleep(45)", record, &waiting), 0);
    dl_run(&loop, &written.calls, NULL, 300); /* let it be sent and acknowledged */
    partition(ns);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_simple_query(busy.conn, "SELECT 1", record, &written), 0);
    dl_run(&loop, &waiting.calls, &written.calls, 60000);
    assert_int_equal(waiting.calls, 1);
    assert_int_equal(waiting.status, PGW_ECONNLOST);
    assert_int_equal(written.calls, 1);
    assert_int_equal(written.status, PGW_ECONNLOST);
    pgt_assert_in_time("dead peer, defaults: the acknowledged request failed",
                       pgt_ms_between(t0, waiting.at_ns), 25000, PGT_WORK_ENDLESS);
    pgt_assert_in_time("dead peer, defaults: the unacknowledged request failed",
                       pgt_ms_between(t0, written.at_ns), 25000, PGT_WORK_ENDLESS);
    assert_int_equal(idle.lost, 1);
    assert_int_equal(busy.lost, 1);
    /* The kernel gave up on the peer: the read says why, in libpq's words
     * (not "server closed the connection", which a reset or EOF gets):
     * timed out, or, the link being down, no route to host. */
    assert_true(gave_up_words(pgw_conn_error_message(idle.conn)));
    assert_true(gave_up_words(pgw_conn_error_message(busy.conn)));
    dl_close(&idle);
    dl_close(&busy);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deadline_during_partition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_peer_found_with_defaults, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
