/*
 * LISTEN/NOTIFY on the libuv connection against the real server: the
 * notification callback fires on an idle connection and beside requests in
 * flight, channel names are quoted as identifiers, and the listener
 * re-listens after pg_terminate_backend and reports exactly one gap.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"
#include "pgwire/listen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define NCHAN  3
#define PER_CH 40

/* --------------------------------------------------------------- helpers */

typedef struct got {
    int n;
    int in_flight; /* received while the listening connection had requests pending */
    int32_t pid[256];
    char chan[256][64];
    char payload[256][32];
} got_t;

typedef struct peer {
    pgw_conn_t *conn;
    int connected, status, done, closed;
    got_t got;
} peer_t;

static void got_add(got_t *g, int32_t pid, pgw_str_t ch, pgw_str_t pl, size_t pending)
{
    assert_true(g->n < 256);
    g->pid[g->n] = pid;
    snprintf(g->chan[g->n], sizeof g->chan[0], "%.*s", (int)ch.len, ch.p);
    snprintf(g->payload[g->n], sizeof g->payload[0], "%.*s", (int)pl.len, pl.p);
    g->in_flight += pending > 0;
    g->n++;
}

static void on_conn_note(pgw_conn_t *conn, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    got_add(&((peer_t *)ud)->got, pid, ch, pl, pgw_session_pending(pgw_conn_session(conn)));
}

static void on_peer_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    peer_t *p = ud;
    p->connected = 1;
    p->status = status;
}

static void on_peer_done(int status, pgw_result_t *res, void *ud)
{
    peer_t *p = ud;
    if (status != 0) fail_msg("request failed: %s", pgw_err_name(status));
    p->done++;
    pgw_result_free(res);
}

static void on_peer_closed(pgw_conn_t *conn, void *ud)
{
    ((peer_t *)ud)->closed = 1;
}

static void on_expire(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop until *v >= want (fails after ms), or for ms when want < 0. */
static void spin(uv_loop_t *loop, const int *v, int want, unsigned ms)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_expire, ms, 0);
    while ((want < 0 || *v < want) && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    if (want >= 0 && *v < want) fail_msg("timed out: %d of %d", *v, want);
}

static void peer_open(peer_t *p, uv_loop_t *loop)
{
    char ci[512];
    memset(p, 0, sizeof *p);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_notification = on_conn_note;
    cfg.ud = p;
    assert_int_equal(pgw_conn_new(&p->conn, loop, &cfg), 0);
    assert_int_equal(
        pgw_conn_connect(p->conn, pgt_conninfo(ci, sizeof ci, NULL), on_peer_connected, p), 0);
    spin(loop, &p->connected, 1, 20000);
    assert_int_equal(p->status, 0);
}

static void peer_close(peer_t *p, uv_loop_t *loop)
{
    assert_int_equal(pgw_conn_close(p->conn, on_peer_closed, p), 0);
    spin(loop, &p->closed, 1, 5000);
}

/* pg_notify(channel, payload) from p, as an extended query (parameters:
 * any channel name, no quoting involved on the sending side). */
static void notify(peer_t *p, const char *channel, const char *payload)
{
    pgw_param_t v[] = {pgw_text(channel), pgw_text(payload)};
    assert_int_equal(pgw_conn_query(p->conn, "SELECT pg_notify($1, $2)", v, 2, on_peer_done, p), 0);
}

static void loop_close(uv_loop_t *loop)
{
    uv_run(loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* A listening connection l and a sending one s on one loop; l listens on
 * names[0..n) (and has seen those n LISTENs complete). */
typedef struct pair {
    uv_loop_t loop;
    peer_t l, s;
} pair_t;

static void pair_open(pair_t *p, const char *const *names, size_t n)
{
    pgt_require_server();
    uv_loop_init(&p->loop);
    peer_open(&p->l, &p->loop);
    peer_open(&p->s, &p->loop);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pgw_conn_listen(p->l.conn, names[i], on_peer_done, &p->l), 0);
}

static void pair_close(pair_t *p)
{
    peer_close(&p->l, &p->loop);
    peer_close(&p->s, &p->loop);
    loop_close(&p->loop);
}

/* ------------------------------------------------------------- the conn */

/* An idle connection (nothing in flight, nothing queued) receives a
 * NOTIFY from another connection as soon as the server sends it. */
static void test_idle_connection_receives(void **state)
{
    static const char *const names[] = {"idle_ch"};
    pair_t p;
    pair_open(&p, names, 1);
    peer_t *l = &p.l, *s = &p.s;
    spin(&p.loop, &l->done, 1, 5000);
    assert_int_equal(pgw_session_pending(pgw_conn_session(l->conn)), 0);

    notify(s, "idle_ch", "hello");
    spin(&p.loop, &l->got.n, 1, 5000);
    assert_int_equal(l->got.n, 1);
    assert_int_equal(l->got.in_flight, 0);
    assert_string_equal(l->got.chan[0], "idle_ch");
    assert_string_equal(l->got.payload[0], "hello");
    assert_int_equal(l->got.pid[0], pgw_conn_backend_pid(s->conn));
    /* Nothing more, and nothing twice. */
    spin(&p.loop, NULL, -1, 100);
    assert_int_equal(l->got.n, 1);
    pair_close(&p);
}

static const char *const odd_names[] = {
    "Mixed Case",     "with \"quotes\"", "  spaces\tand tab ",
    "ünïcødé_日本語", "semi;colon--",    "plain",
};
#define NODD (sizeof odd_names / sizeof odd_names[0])

static void on_channels(int status, pgw_result_t *res, void *ud)
{
    got_t *g = ud;
    assert_int_equal(status, 0);
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        pgw_str_t t;
        assert_int_equal(pgw_result_text(res, i, 0, &t), 0);
        got_add(g, 0, t, (pgw_str_t){"", 0}, 0);
    }
    pgw_result_free(res);
}

static int find(const got_t *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->chan[i], name) == 0) return i;
    return -1;
}

/* Channel names are identifiers used exactly as given: case, quotes,
 * spaces, SQL punctuation and UTF-8 all reach the server unchanged. */
static void test_channel_quoting(void **state)
{
    pair_t p;
    pair_open(&p, odd_names, NODD);
    peer_t *l = &p.l, *s = &p.s;
    /* Refused before anything is sent. */
    assert_int_equal(pgw_conn_listen(l->conn, "bad\xff", on_peer_done, l), PGW_EENCODING);
    assert_int_equal(pgw_conn_listen(l->conn, "", on_peer_done, l), PGW_EINVAL);
    assert_int_equal(pgw_conn_listen(l->conn, NULL, on_peer_done, l), PGW_EINVAL);
    spin(&p.loop, &l->done, (int)NODD, 5000);

    got_t listening;
    memset(&listening, 0, sizeof listening);
    assert_int_equal(
        pgw_conn_query(l->conn, "SELECT pg_listening_channels()", NULL, 0, on_channels, &listening),
        0);
    spin(&p.loop, &listening.n, (int)NODD, 5000);
    for (size_t i = 0; i < NODD; i++)
        assert_true(find(&listening, odd_names[i]) >= 0);

    for (size_t i = 0; i < NODD; i++) {
        char pl[16];
        snprintf(pl, sizeof pl, "p%zu", i);
        notify(s, odd_names[i], pl);
    }
    notify(s, "mixed case", "folded"); /* not the quoted "Mixed Case" */
    spin(&p.loop, &s->done, (int)NODD + 1, 5000);
    spin(&p.loop, &l->got.n, (int)NODD, 5000);
    spin(&p.loop, NULL, -1, 100);
    assert_int_equal(l->got.n, (int)NODD);
    for (size_t i = 0; i < NODD; i++) {
        char pl[16];
        snprintf(pl, sizeof pl, "p%zu", i);
        int k = find(&l->got, odd_names[i]);
        assert_true(k >= 0);
        assert_string_equal(l->got.payload[k], pl);
    }

    /* UNLISTEN one: its notifications stop; UNLISTEN * stops the rest. */
    assert_int_equal(pgw_conn_unlisten(l->conn, "Mixed Case", on_peer_done, l), 0);
    spin(&p.loop, &l->done, (int)NODD + 1, 5000);
    notify(s, "Mixed Case", "after");
    notify(s, "plain", "still");
    spin(&p.loop, &l->got.n, (int)NODD + 1, 5000);
    assert_string_equal(l->got.chan[NODD], "plain");
    assert_int_equal(pgw_conn_unlisten(l->conn, NULL, on_peer_done, l), 0);
    spin(&p.loop, &l->done, (int)NODD + 2, 5000);
    notify(s, "plain", "gone");
    spin(&p.loop, &s->done, (int)NODD + 4, 5000);
    spin(&p.loop, NULL, -1, 100);
    assert_int_equal(l->got.n, (int)NODD + 1);
    pair_close(&p);
}

static const char *const chans[NCHAN] = {"ch_a", "Ch B", "ch_ç"};

/* Every (channel, payload) of the sends arrived exactly once, in the
 * order sent per channel. */
static void assert_exactly_once(const got_t *g, int from, int per_channel, int first_seq)
{
    int next[NCHAN] = {0};
    for (int i = from; i < g->n; i++) {
        int c = 0;
        while (c < NCHAN && strcmp(g->chan[i], chans[c]) != 0)
            c++;
        assert_true(c < NCHAN);
        char want[32];
        snprintf(want, sizeof want, "%d", first_seq + next[c]++);
        assert_string_equal(g->payload[i], want);
    }
    for (int c = 0; c < NCHAN; c++)
        assert_int_equal(next[c], per_channel);
}

static void send_round(peer_t *s, int per_channel, int first_seq)
{
    for (int k = 0; k < per_channel; k++)
        for (int c = 0; c < NCHAN; c++) {
            char pl[32];
            snprintf(pl, sizeof pl, "%d", first_seq + k);
            notify(s, chans[c], pl);
        }
}

/* Three channels, every NOTIFY exactly once with its payload: first with
 * the listening connection idle, then while it runs a pipeline of
 * queries. */
static void test_three_channels_with_and_without_queries(void **state)
{
    pair_t p;
    pair_open(&p, chans, NCHAN);
    peer_t *l = &p.l, *s = &p.s;
    spin(&p.loop, &l->done, NCHAN, 5000);

    send_round(s, PER_CH, 0);
    spin(&p.loop, &l->got.n, NCHAN * PER_CH, 10000);
    assert_int_equal(l->got.in_flight, 0);
    assert_exactly_once(&l->got, 0, PER_CH, 0);

    /* Busy: ten sleeps pipelined on the listener while the sends arrive. */
    int base = l->got.n, done0 = l->done;
    for (int i = 0; i < 10; i++)
        assert_int_equal(pgw_conn_simple_query(l->conn, "SELECT pg_sleep(0.03)", on_peer_done, l),
                         0);
    send_round(s, PER_CH, 1000);
    spin(&p.loop, &l->got.n, base + NCHAN * PER_CH, 10000);
    spin(&p.loop, &l->done, done0 + 10, 10000);
    spin(&p.loop, NULL, -1, 100);
    assert_int_equal(l->got.n, base + NCHAN * PER_CH);
    assert_true(l->got.in_flight > 0);
    assert_exactly_once(&l->got, base, PER_CH, 1000);
    pair_close(&p);
}

static void test_listen_sql(void **state)
{
    char *sql;
    assert_int_equal(pgw_listen_sql(NULL, "Mixed \"Q\"", 0, &sql), 0);
    assert_string_equal(sql, "LISTEN \"Mixed \"\"Q\"\"\"");
    pgw_escape_free(NULL, sql);
    assert_int_equal(pgw_listen_sql(NULL, "x", 1, &sql), 0);
    assert_string_equal(sql, "UNLISTEN \"x\"");
    pgw_escape_free(NULL, sql);
    assert_int_equal(pgw_listen_sql(NULL, NULL, 1, &sql), 0);
    assert_string_equal(sql, "UNLISTEN *");
    pgw_escape_free(NULL, sql);
    assert_int_equal(pgw_listen_sql(NULL, NULL, 0, &sql), PGW_EINVAL);
    assert_null(sql);
    assert_int_equal(pgw_listen_sql(NULL, "\xc0\xaf", 0, &sql), PGW_EENCODING);
    assert_null(sql);
    assert_int_equal(pgw_conn_listen(NULL, "x", NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_unlisten(NULL, "x", NULL, NULL), PGW_EINVAL);
}

/* --------------------------------------------------------- the listener */

typedef struct lrec {
    got_t got;
    int ready, lost, gap, retry;
    int lost_err, retry_err;
    int got_at_gap; /* notifications delivered before the gap event */
    int done, done_status;
    int closed;
} lrec_t;

static void on_l_note(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    got_add(&((lrec_t *)ud)->got, pid, ch, pl, 0);
}

static void on_l_event(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    lrec_t *r = ud;
    switch (ev) {
    case PGW_LISTENER_READY:
        r->ready++;
        assert_int_equal(status, 0);
        assert_true(pgw_listener_is_ready(l));
        break;
    case PGW_LISTENER_LOST:
        r->lost++;
        r->lost_err = status;
        break;
    case PGW_LISTENER_GAP:
        r->gap++;
        r->got_at_gap = r->got.n;
        assert_int_equal(status, 0);
        break;
    case PGW_LISTENER_RETRY:
        r->retry++;
        r->retry_err = status;
        break;
    }
}

static void on_l_done(pgw_listener_t *l, int status, const pgw_error_t *err, void *ud)
{
    lrec_t *r = ud;
    r->done++;
    r->done_status = status;
}

static void on_l_closed(pgw_listener_t *l, void *ud)
{
    ((lrec_t *)ud)->closed++;
}

/* A listener for ci recording into r, notifications to note (NULL:
 * recorded). */
static pgw_listener_t *listener_open(uv_loop_t *loop, lrec_t *r, const char *ci,
                                     void (*note)(pgw_listener_t *, int32_t, pgw_str_t, pgw_str_t,
                                                  void *))
{
    memset(r, 0, sizeof *r);
    pgw_listener_config_t cfg;
    pgw_listener_config_init(&cfg);
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = 200;
    cfg.on_notification = note ? note : on_l_note;
    cfg.on_event = on_l_event;
    cfg.ud = r;
    pgw_listener_t *l;
    assert_int_equal(pgw_listener_new(&l, loop, ci, &cfg), 0);
    return l;
}

/* A sending connection and a listener on the test server, on one loop. */
typedef struct scene {
    uv_loop_t loop;
    peer_t s;
    lrec_t r;
    pgw_listener_t *l;
} scene_t;

static void scene_open(scene_t *x,
                       void (*note)(pgw_listener_t *, int32_t, pgw_str_t, pgw_str_t, void *))
{
    char ci[512];
    pgt_require_server();
    uv_loop_init(&x->loop);
    peer_open(&x->s, &x->loop);
    x->l = listener_open(&x->loop, &x->r, pgt_conninfo(ci, sizeof ci, NULL), note);
}

static void on_killed(int status, pgw_result_t *res, void *ud)
{
    assert_int_equal(status, 0);
    bool ok = false;
    assert_int_equal(pgw_result_bool(res, 0, 0, &ok), 0);
    assert_true(ok);
    (*(int *)ud)++;
    pgw_result_free(res);
}

/* The acceptance scenario: three channels, notifications with and without
 * queries in flight; pg_terminate_backend of the listener's backend; the
 * listener reconnects, re-listens, reports exactly one gap, and what is
 * sent after it arrives exactly once. */
static void test_listener_survives_backend_kill(void **state)
{
    scene_t x;
    scene_open(&x, NULL);
    pgw_listener_t *l = x.l;
    lrec_t *r = &x.r;
    for (int c = 0; c < NCHAN; c++)
        assert_int_equal(pgw_listener_listen(l, chans[c], on_l_done, r), 0);
    assert_int_equal(pgw_listener_nchannels(l), NCHAN);
    spin(&x.loop, &r->ready, 1, 10000);
    spin(&x.loop, &r->done, NCHAN, 5000);
    assert_int_equal(r->done_status, 0);

    send_round(&x.s, PER_CH / 2, 0);
    spin(&x.loop, &r->got.n, NCHAN * PER_CH / 2, 10000);
    assert_exactly_once(&r->got, 0, PER_CH / 2, 0);

    /* Queries beside the notifications on the listener's connection. */
    peer_t busy = {0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(pgw_conn_simple_query(pgw_listener_conn(l), "SELECT pg_sleep(0.02)",
                                               on_peer_done, &busy),
                         0);
    int base = r->got.n;
    send_round(&x.s, PER_CH / 2, 100);
    spin(&x.loop, &r->got.n, base + NCHAN * PER_CH / 2, 10000);
    spin(&x.loop, &busy.done, 5, 5000);
    assert_exactly_once(&r->got, base, PER_CH / 2, 100);

    /* Kill the listener's backend from the other connection. */
    int32_t old_pid = pgw_conn_backend_pid(pgw_listener_conn(l));
    assert_true(old_pid > 0);
    int killed = 0;
    pgw_param_t pid[] = {pgw_int4(old_pid)};
    assert_int_equal(
        pgw_conn_query(x.s.conn, "SELECT pg_terminate_backend($1)", pid, 1, on_killed, &killed), 0);
    spin(&x.loop, &r->lost, 1, 10000);
    assert_int_equal(r->gap, 0);
    spin(&x.loop, &r->gap, 1, 10000);
    assert_true(pgw_listener_is_ready(l));
    int32_t new_pid = pgw_conn_backend_pid(pgw_listener_conn(l));
    assert_true(new_pid > 0 && new_pid != old_pid);

    base = r->got.n;
    assert_int_equal(r->got_at_gap, base);
    send_round(&x.s, PER_CH / 2, 200);
    spin(&x.loop, &r->got.n, base + NCHAN * PER_CH / 2, 10000);
    spin(&x.loop, NULL, -1, 200);
    assert_exactly_once(&r->got, base, PER_CH / 2, 200);
    assert_int_equal(r->gap, 1);
    assert_int_equal(pgw_listener_gaps(l), 1);
    assert_int_equal(r->ready, 1);
    assert_int_equal(r->lost, 1);
    assert_int_equal(killed, 1);

    /* UNLISTEN through the listener: that channel stops, the others go on. */
    int done0 = r->done;
    assert_int_equal(pgw_listener_unlisten(l, chans[0], on_l_done, r), 0);
    assert_int_equal(pgw_listener_unlisten(l, "not there", on_l_done, r), PGW_ENOTFOUND);
    spin(&x.loop, &r->done, done0 + 1, 5000);
    assert_int_equal(r->done_status, 0);
    base = r->got.n;
    notify(&x.s, chans[0], "dropped");
    notify(&x.s, chans[1], "kept");
    spin(&x.loop, &r->got.n, base + 1, 5000);
    spin(&x.loop, NULL, -1, 100);
    assert_int_equal(r->got.n, base + 1);
    assert_string_equal(r->got.chan[base], chans[1]);

    assert_int_equal(pgw_listener_close(l, on_l_closed, r), 0);
    assert_int_equal(pgw_listener_close(l, on_l_closed, r), PGW_ECLOSED);
    spin(&x.loop, &r->closed, 1, 5000);
    peer_close(&x.s, &x.loop);
    loop_close(&x.loop);
}

/* Channels added while disconnected are listened on the next connection;
 * a connection string with nothing listening is retried with backoff. */
static void test_listener_retries(void **state)
{
    pgt_require_server();
    uv_loop_t loop;
    uv_loop_init(&loop);
    lrec_t r;
    /* Port 1 on the loopback: refused at once. */
    pgw_listener_t *l = listener_open(&loop, &r, "host=127.0.0.1 port=1 connect_timeout=2", NULL);
    assert_int_equal(pgw_listener_listen(l, "never", on_l_done, &r), 0);
    uint64_t t0 = uv_hrtime();
    spin(&loop, &r.retry, 4, 10000);
    /* 20 + 40 + 80 ms of backoff at least between the first and fourth. */
    assert_true(uv_hrtime() - t0 >= 140u * 1000000u);
    assert_int_not_equal(r.retry_err, 0);
    assert_int_equal(r.ready + r.lost + r.gap, 0);
    assert_false(pgw_listener_is_ready(l));
    assert_int_equal(r.done, 0);
    assert_int_equal(pgw_listener_close(l, on_l_closed, &r), 0);
    assert_int_equal(r.done, 1);
    assert_int_equal(r.done_status, PGW_ECANCELED);
    spin(&loop, &r.closed, 1, 5000);
    loop_close(&loop);

    assert_int_equal(pgw_listener_new(NULL, &loop, "", NULL), PGW_EINVAL);
    pgw_listener_t *bad = (pgw_listener_t *)&r;
    assert_int_equal(pgw_listener_new(&bad, NULL, "", NULL), PGW_EINVAL);
    assert_null(bad);
    assert_int_equal(pgw_listener_close(NULL, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_listener_listen(NULL, "x", NULL, NULL), PGW_EINVAL);
    assert_null(pgw_listener_conn(NULL));
}

/* Closing from inside a notification callback stops delivery there. */
static void on_note_close(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    lrec_t *r = ud;
    got_add(&r->got, pid, ch, pl, 0);
    assert_int_equal(pgw_listener_close(l, on_l_closed, r), 0);
}

static void test_listener_close_from_callback(void **state)
{
    scene_t x;
    scene_open(&x, on_note_close);
    assert_int_equal(pgw_listener_listen(x.l, "close_ch", NULL, NULL), 0);
    spin(&x.loop, &x.r.ready, 1, 10000);
    for (int i = 0; i < 5; i++)
        notify(&x.s, "close_ch", "x");
    spin(&x.loop, &x.r.closed, 1, 5000);
    spin(&x.loop, &x.s.done, 5, 5000);
    assert_int_equal(x.r.got.n, 1);
    peer_close(&x.s, &x.loop);
    loop_close(&x.loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_sql),
        cmocka_unit_test(test_idle_connection_receives),
        cmocka_unit_test(test_channel_quoting),
        cmocka_unit_test(test_three_channels_with_and_without_queries),
        cmocka_unit_test(test_listener_survives_backend_kill),
        cmocka_unit_test(test_listener_retries),
        cmocka_unit_test(test_listener_close_from_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
