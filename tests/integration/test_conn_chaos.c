/*
 * Chaos: backend kills and a server restart under a pipelined load, on
 * unix sockets and TCP at once, with SIGPIPE at its default disposition.
 *
 * Several async connections on one loop each keep a window of
 * `SELECT $1::int8` requests in flight, every one with its own tag. In the
 * first scenario a separate connection runs pg_terminate_backend on them
 * over and over (on the shared test cluster: only this test's backends);
 * in the second, a private cluster started by this test is restarted with
 * `pg_ctl restart -m fast` (the shared cluster is never restarted: other
 * tests run against it in parallel). Lost connections are closed and
 * replaced, and the load goes on. Checked: every accepted request's
 * callback fires exactly once; a success carries its own tag (nothing is
 * misrouted); failures are PGW_ECONNLOST (or the server's FATAL 57P01 as
 * PGW_ESERVER for the request at the head of the queue); a submission
 * refused synchronously is PGW_ECLOSED and never calls back; pending
 * counts return to 0; the process survives and SIGPIPE is still SIG_DFL.
 *
 * Runtime is bounded (a few seconds; scaled down under valgrind, or with
 * PGW_TEST_SLOW=1).
 */
#define _GNU_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/conn.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

#include "test_conn_signals.h"

#define NSLOTS   4 /* even: unix, odd: TCP */
#define MAX_TAGS (1u << 20)

typedef struct slot {
    int idx;
    pgw_conn_t *conn;
    int tcp;
    int connecting;
    unsigned pending; /* accepted requests whose callback has not fired */
    uv_timer_t retry;
} slot_t;

typedef struct tag_rec {
    uint8_t calls;
    uint8_t accepted;
    uint8_t slot;
} tag_rec_t;

typedef struct chaos {
    uv_loop_t loop;
    char ci_unix[512];
    char ci_tcp[512];
    slot_t slots[NSLOTS];
    tag_rec_t *tags;
    uint32_t next_tag;
    int stopping; /* no new requests */
    unsigned window;
    /* outcomes */
    unsigned long ok, lost, fatal, refused, misrouted, unexpected, losses, reconnects;
    int first_unexpected;
    unsigned closes_pending;
    /* the killer (terminate scenario) */
    pgw_conn_t *killer;
    int killer_ready;
    int kill_inflight;
    unsigned kills;
    unsigned kill_rr;
    uv_timer_t load_timer, kill_timer;
} chaos_t;

static chaos_t *g;

static int slow_mode(void)
{
    const char *s = getenv("PGW_TEST_SLOW");
    return RUNNING_ON_VALGRIND || (s && *s && strcmp(s, "0") != 0);
}

/* ------------------------------------------------------------- requests */

static void on_req(int status, pgw_result_t *res, void *ud)
{
    uint32_t tag = (uint32_t)(uintptr_t)ud;
    tag_rec_t *t = &g->tags[tag];
    t->calls++;
    g->slots[t->slot].pending--;
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    int64_t v = -1;
    if (status == 0) {
        if (pgw_result_int8(res, 0, 0, &v) == 0 && v == (int64_t)tag)
            g->ok++;
        else
            g->misrouted++;
    } else if (status == PGW_ECONNLOST) {
        g->lost++;
    } else if (status == PGW_ESERVER && e && e->sqlstate && strcmp(e->sqlstate, "57P01") == 0) {
        g->fatal++;
    } else {
        if (!g->unexpected) g->first_unexpected = status;
        g->unexpected++;
    }
    pgw_result_free(res);
}

/* Queue requests on s until `window` are in flight. */
static void submit_upto(slot_t *s, unsigned window)
{
    while (!g->stopping && s->pending < window && g->next_tag < MAX_TAGS) {
        uint32_t tag = g->next_tag++;
        pgw_param_t p[] = {pgw_int8((int64_t)tag)};
        g->tags[tag].slot = (uint8_t)s->idx;
        int rc = pgw_conn_query(s->conn, "SELECT $1::int8", p, 1, on_req, (void *)(uintptr_t)tag);
        if (rc == PGW_ECLOSED) { /* lost, not yet replaced */
            g->refused++;
            return;
        }
        if (rc != 0) {
            if (!g->unexpected) g->first_unexpected = rc;
            g->unexpected++;
            return;
        }
        g->tags[tag].accepted = 1;
        s->pending++;
    }
}

static void submit(slot_t *s)
{
    submit_upto(s, g->window);
}

static void on_load(uv_timer_t *t)
{
    for (int i = 0; i < NSLOTS; i++)
        if (g->slots[i].conn && pgw_conn_is_ready(g->slots[i].conn)) submit(&g->slots[i]);
}

/* ---------------------------------------------------------- connections */

static void slot_connect(slot_t *s);

static void on_closed(pgw_conn_t *conn, void *ud)
{
    g->closes_pending--;
}

static void slot_drop(slot_t *s)
{
    if (!s->conn) return;
    assert_int_equal(pgw_conn_close(s->conn, on_closed, NULL), 0);
    g->closes_pending++;
    s->conn = NULL;
}

static void on_retry(uv_timer_t *t)
{
    slot_t *s = t->data;
    if (!g->stopping) slot_connect(s);
}

static void on_slot_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    slot_t *s = ud;
    s->connecting = 0;
    if (status == 0) {
        submit(s);
        return;
    }
    /* the server is restarting (refused, or "shutting down"): retry */
    slot_drop(s);
    if (!g->stopping) uv_timer_start(&s->retry, on_retry, 20, 0);
}

static void on_slot_lost(pgw_conn_t *conn, int err, void *ud)
{
    slot_t *s = ud;
    if (err != PGW_ECONNLOST) {
        if (!g->unexpected) g->first_unexpected = err;
        g->unexpected++;
    }
    g->losses++;
    /* A request submitted after the loss is refused at once. */
    uint32_t tag = g->next_tag < MAX_TAGS ? g->next_tag++ : 0;
    pgw_param_t p[] = {pgw_int8((int64_t)tag)};
    int rc = pgw_conn_query(conn, "SELECT $1::int8", p, 1, on_req, (void *)(uintptr_t)tag);
    if (rc == PGW_ECLOSED) {
        g->refused++;
    } else {
        if (!g->unexpected) g->first_unexpected = rc;
        g->unexpected++;
    }
    slot_drop(s); /* close from inside its own callback */
    g->reconnects++;
    if (!g->stopping) slot_connect(s);
}

static void slot_connect(slot_t *s)
{
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.on_lost = on_slot_lost;
    cfg.ud = s;
    assert_int_equal(pgw_conn_new(&s->conn, &g->loop, &cfg), 0);
    s->connecting = 1;
    assert_int_equal(
        pgw_conn_connect(s->conn, s->tcp ? g->ci_tcp : g->ci_unix, on_slot_connected, s), 0);
}

/* -------------------------------------------------------------- killing */

/* The victim's backend was signalled. Like an application busy elsewhere,
 * wait (without running the loop) until the server has closed the
 * victim's socket, then issue more requests on it: they are written to a
 * closed socket before its end is read, which raised SIGPIPE before the
 * connection wrote with MSG_NOSIGNAL. */
static void on_killed(int status, pgw_result_t *res, void *ud)
{
    slot_t *s = ud;
    g->kill_inflight = 0;
    pgw_result_free(res);
    if (status != 0) return;
    g->kills++;
    int fd = s->conn ? pgw_conn_fd(s->conn) : -1;
    if (fd < 0) return;
    struct pollfd pfd = {fd, POLLRDHUP, 0};
    (void)poll(&pfd, 1, 200);
    submit_upto(s, s->pending + 8);
}

static void on_kill_tick(uv_timer_t *t)
{
    if (!g->killer_ready || g->kill_inflight || g->stopping) return;
    for (int n = 0; n < NSLOTS; n++) {
        slot_t *s = &g->slots[g->kill_rr++ % NSLOTS];
        int32_t pid;
        if (!s->conn || !pgw_conn_is_ready(s->conn) ||
            pgw_session_backend_key(pgw_conn_session(s->conn), &pid, NULL, NULL) != 0)
            continue;
        pgw_param_t p[] = {pgw_int4(pid)};
        if (pgw_conn_query(g->killer, "SELECT pg_terminate_backend($1)", p, 1, on_killed, s) == 0)
            g->kill_inflight = 1;
        return;
    }
}

static void on_killer_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    assert_int_equal(status, 0);
    g->killer_ready = 1;
}

/* ---------------------------------------------------------------- frame */

static void on_deadline(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop for ms milliseconds, or until *done (when done is set). */
static void run_for(unsigned ms, const atomic_int *done)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(&g->loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_deadline, ms, 0);
    while (!expired && !(done && atomic_load(done)))
        uv_run(&g->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&g->loop, UV_RUN_NOWAIT);
}

static void chaos_start(const char *ci_unix, const char *ci_tcp, unsigned window)
{
    g = calloc(1, sizeof(*g));
    assert_non_null(g);
    g->tags = calloc(MAX_TAGS, sizeof(*g->tags));
    assert_non_null(g->tags);
    g->window = window;
    snprintf(g->ci_unix, sizeof(g->ci_unix), "%s", ci_unix);
    snprintf(g->ci_tcp, sizeof(g->ci_tcp), "%s", ci_tcp);
    assert_int_equal(uv_loop_init(&g->loop), 0);
    uv_timer_init(&g->loop, &g->load_timer);
    uv_timer_init(&g->loop, &g->kill_timer);
    uv_timer_start(&g->load_timer, on_load, 1, 1);
    for (int i = 0; i < NSLOTS; i++) {
        slot_t *s = &g->slots[i];
        s->idx = i;
        s->tcp = i % 2;
        uv_timer_init(&g->loop, &s->retry);
        s->retry.data = s;
        slot_connect(s);
    }
}

/* Stop the load, let every request complete, close everything and check
 * the books. */
static void chaos_finish(void)
{
    g->stopping = 1;
    uv_timer_stop(&g->load_timer);
    uv_timer_stop(&g->kill_timer);
    int settled = 0;
    for (int i = 0; i < 1000 && !settled; i++) {
        settled = 1;
        for (int k = 0; k < NSLOTS; k++)
            if (g->slots[k].pending || g->slots[k].connecting) settled = 0;
        if (!settled) run_for(10, NULL);
    }
    for (int k = 0; k < NSLOTS; k++)
        assert_int_equal(g->slots[k].pending, 0);
    for (int k = 0; k < NSLOTS; k++) {
        uv_timer_stop(&g->slots[k].retry);
        uv_close((uv_handle_t *)&g->slots[k].retry, NULL);
        slot_drop(&g->slots[k]);
    }
    if (g->killer) {
        assert_int_equal(pgw_conn_close(g->killer, on_closed, NULL), 0);
        g->closes_pending++;
    }
    uv_close((uv_handle_t *)&g->load_timer, NULL);
    uv_close((uv_handle_t *)&g->kill_timer, NULL);
    for (int i = 0; i < 500 && g->closes_pending; i++)
        run_for(10, NULL);
    assert_int_equal(g->closes_pending, 0);
    assert_int_equal(uv_run(&g->loop, UV_RUN_NOWAIT), 0);
    assert_int_equal(uv_loop_close(&g->loop), 0);

    unsigned long accepted = 0, once = 0;
    for (uint32_t t = 0; t < g->next_tag; t++) {
        if (g->tags[t].accepted) {
            accepted++;
            if (g->tags[t].calls == 1) once++;
        } else {
            assert_int_equal(g->tags[t].calls, 0); /* refused: never called back */
        }
    }
    print_message("chaos: %lu accepted, %lu ok, %lu lost, %lu fatal 57P01, %lu refused "
                  "(ECLOSED), %lu connection losses, %u kills\n",
                  accepted, g->ok, g->lost, g->fatal, g->refused, g->losses, g->kills);
    if (g->unexpected)
        fail_msg("%lu unexpected outcomes, first %s", g->unexpected,
                 pgw_err_name(g->first_unexpected));
    assert_int_equal(once, accepted);
    assert_int_equal(g->misrouted, 0);
    assert_int_equal(g->ok + g->lost + g->fatal, accepted);
    assert_true(g->ok > 0);
    assert_true(g->losses > 0);
    assert_true(g->lost + g->fatal > 0);
    assert_int_equal(g->refused, g->losses);
    free(g->tags);
    free(g);
    g = NULL;
    assert_sigpipe_default();
}

/* ------------------------------------------------ pg_terminate_backend */

static void test_terminate_under_load(void **state)
{
    char ci_unix[512], ci_tcp[512], ci_k[512];
    pgt_require_server();
    assert_sigpipe_default();
    int slow = slow_mode();
    chaos_start(pgt_conninfo(ci_unix, sizeof(ci_unix), NULL),
                pgt_conninfo_tcp(ci_tcp, sizeof(ci_tcp), pgt_env_required("PGUSER"), NULL, NULL),
                slow ? 20 : 64);
    assert_int_equal(pgw_conn_new(&g->killer, &g->loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(g->killer, pgt_conninfo(ci_k, sizeof(ci_k), NULL),
                                      on_killer_connected, NULL),
                     0);
    uv_timer_start(&g->kill_timer, on_kill_tick, slow ? 100 : 15, slow ? 100 : 15);
    run_for(slow ? 2500 : 3000, NULL);
    /* A busy machine (valgrind beside other tests) may not have connected
     * the killer and a victim by then, or its only kill may have found
     * the victim with nothing in flight: go on until a kill cost a request
     * (lost or failed with 57P01), a few minutes at most, as the test is
     * about what a kill does to requests in flight. */
    for (int i = 0; i < 1200 && (g->kills == 0 || g->lost + g->fatal == 0); i++)
        run_for(100, NULL);
    assert_true(g->kills > 0);
    chaos_finish();
}

/* ----------------------------------------------------- pg_ctl restart */

typedef struct cluster {
    char dir[64];
    char host[256];
    char port[16];
    char user[64];
    char db[64];
} cluster_t;

typedef struct restarter {
    const char *dir;
    int restarts;
    atomic_int done;
    int failures;
} restarter_t;

static void *restart_thread(void *arg)
{
    restarter_t *r = arg;
    for (int i = 0; i < r->restarts; i++) {
        usleep(300000);
        if (pgt_script_exit("pg-cluster.sh", "restart", r->dir, NULL) != 0) r->failures++;
    }
    atomic_store(&r->done, 1);
    return NULL;
}

static void test_restart_under_load(void **state)
{
    pgt_require_server(); /* the shared cluster's presence tells the script works here */
    assert_sigpipe_default();
    cluster_t cl;
    snprintf(cl.dir, sizeof(cl.dir), "/tmp/pgw-chaos.XXXXXX");
    assert_non_null(mkdtemp(cl.dir));
    int rc = pgt_script_exit("pg-cluster.sh", "start", cl.dir, NULL);
    if (rc != 0) {
        pgt_script_exit("pg-cluster.sh", "stop", cl.dir, NULL);
        fail_msg("could not start a private cluster in %s", cl.dir);
    }
    snprintf(cl.host, sizeof cl.host, "%s", pgt_dir_env(cl.dir, "PGHOST"));
    snprintf(cl.port, sizeof cl.port, "%s", pgt_dir_env(cl.dir, "PGPORT"));
    snprintf(cl.user, sizeof cl.user, "%s", pgt_dir_env(cl.dir, "PGUSER"));
    snprintf(cl.db, sizeof cl.db, "%s", pgt_dir_env(cl.dir, "PGDATABASE"));
    char ci_unix[512], ci_tcp[512];
    snprintf(ci_unix, sizeof(ci_unix), "host='%s' port=%s user=%s dbname=%s connect_timeout=5",
             cl.host, cl.port, cl.user, cl.db);
    snprintf(ci_tcp, sizeof(ci_tcp), "host=127.0.0.1 port=%s user=%s dbname=%s connect_timeout=5",
             cl.port, cl.user, cl.db);

    int slow = slow_mode();
    chaos_start(ci_unix, ci_tcp, slow ? 20 : 64);
    /* One restart at a time, each run until it is over; a restart that
     * met no request in flight (a busy machine's timing) proves nothing,
     * so more follow until one did, six at most. */
    restarter_t r = {cl.dir, 1, 0, 0};
    int rounds = 0;
    do {
        atomic_store(&r.done, 0);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, restart_thread, &r), 0);
        run_for(120000, &r.done);
        pthread_join(th, NULL);
        rounds++;
    } while (rounds < (slow ? 1 : 2) || (g->lost + g->fatal == 0 && rounds < 6));
    unsigned long ok_at_restart = g->ok;
    run_for(slow ? 1500 : 500, NULL); /* the load resumes on the new server */
    unsigned long ok_after = g->ok - ok_at_restart;
    chaos_finish();
    pgt_script_exit("pg-cluster.sh", "stop", cl.dir, NULL);
    rmdir(cl.dir);
    assert_int_equal(r.failures, 0);
    assert_true(ok_after > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_terminate_under_load, setup_sigpipe_default),
        cmocka_unit_test_setup(test_restart_under_load, setup_sigpipe_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
