/*
 * RELIABILITY case 15, the pool's part (the listener across a reconnect is
 * test_notify.c's test_listener_survives_backend_kill, its gap held before
 * the notifications of the new connection test_fault_notify.c):
 *   - a listener made by the pool (pgw_pool_listener) LISTENs on 3
 *     channels, its backend is killed, NOTIFYs sent during the gap are
 *     announced by the gap event (before anything of the new connection),
 *     every channel is listened again before the gap is reported, and the
 *     notifications sent after it arrive exactly once each;
 *   - a checked-out connection whose user installs a notification callback
 *     receives its notifications; once released, that callback is never
 *     called again (its ud belongs to a user who has gone), whatever the
 *     connection still listens on.
 */
#define _GNU_SOURCE /* memmem; uv.h */
#include "deadline_conn.h"
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/pool.h"

static uv_loop_t loop;
static uv_timer_t waker;

static void on_waker(uv_timer_t *t)
{
    (void)t;
}

static void loop_open(void)
{
    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_waker, 5, 5);
    uv_unref((uv_handle_t *)&waker);
}

static void loop_close(void)
{
    uv_close((uv_handle_t *)&waker, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void run_until(const int *flag, int want, unsigned ms)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ms * 1000000u;
    while (*flag < want && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
}

/* NOTIFY from a separate client. */
static void notify(pgw_client_t *c, const char *channel, const char *payload)
{
    char sql[256];
    snprintf(sql, sizeof sql, "NOTIFY %s, '%s'", channel, payload);
    pgt_client_exec_ok(c, sql);
}

/* ------------------------------------------------------------ listener */

#define NCHAN 3
static const char *const chans[NCHAN] = {"case15_a", "case15_b", "case15_c"};

typedef struct lst {
    int ready, lost, gaps;
    int got[NCHAN][8];     /* per channel, per payload number: deliveries */
    int after_gap;         /* notifications delivered after the gap event */
    int before_gap_of_new; /* notifications of the new connection before the gap */
    int listens_at_gap;    /* LISTENs the new connection sent before the gap */
    int listens_sent;
} lst_t;

static void on_event(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    (void)l, (void)status;
    lst_t *s = ud;
    if (ev == PGW_LISTENER_READY) s->ready++;
    if (ev == PGW_LISTENER_LOST) {
        s->lost++;
        s->listens_sent = 0;
    }
    if (ev == PGW_LISTENER_GAP) {
        s->gaps++;
        s->listens_at_gap = s->listens_sent;
    }
}

static void on_notification(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t payload,
                            void *ud)
{
    (void)l, (void)pid;
    lst_t *s = ud;
    for (int i = 0; i < NCHAN; i++)
        if (ch.len == strlen(chans[i]) && memcmp(ch.p, chans[i], ch.len) == 0 && payload.len == 1 &&
            payload.p[0] >= '0' && payload.p[0] <= '7')
            s->got[i][payload.p[0] - '0']++;
    if (s->gaps) s->after_gap++;
}

static void count_listens(pgw_conn_t *c, char dir, const uint8_t *m, size_t n, void *ud)
{
    (void)c, (void)ud;
    if (dir == 'F' && n > 12 && m[0] == 'Q' && memmem(m, n, "LISTEN", 6))
        ((lst_t *)ud)->listens_sent++;
}

static void test_pool_listener_across_kill(void **state)
{
    (void)state;
    loop_open();
    char ci[512];
    pgw_pool_t *pool;
    pgw_pool_config_t pc;
    pgw_pool_config_init(&pc);
    pc.min_size = 1;
    lst_t s;
    memset(&s, 0, sizeof s);
    /* The pool's connection options are the listener's too. */
    pc.conn.on_trace = count_listens;
    pc.conn.ud = &s;
    assert_int_equal(
        pgw_pool_new(&pool, &loop, pgt_conninfo(ci, sizeof ci, "application_name=case15"), &pc), 0);
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    lc.on_notification = on_notification;
    lc.on_event = on_event;
    lc.ud = &s;
    lc.backoff_min_ms = 20;
    pgw_listener_t *l;
    assert_int_equal(pgw_pool_listener(pool, &l, &lc), 0);
    for (int i = 0; i < NCHAN; i++)
        assert_int_equal(pgw_listener_listen(l, chans[i], NULL, NULL), 0);
    run_until(&s.ready, 1, 20000);
    assert_int_equal(s.ready, 1);
    pgw_client_t *other = pgt_client_open();
    for (int i = 0; i < NCHAN; i++)
        notify(other, chans[i], "0");
    int want = NCHAN;
    int total = 0;
    uint64_t end = pgt_now_ns() + 20000000000ull;
    while (total < want && pgt_now_ns() < end) {
        uv_run(&loop, UV_RUN_ONCE);
        total = s.got[0][0] + s.got[1][0] + s.got[2][0];
    }
    assert_int_equal(total, NCHAN);
    /* The listener's backend dies; NOTIFYs during the gap. */
    int32_t pid = pgw_conn_backend_pid(pgw_listener_conn(l));
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", (int)pid);
    pgt_client_exec_ok(other, sql);
    for (int i = 0; i < NCHAN; i++)
        notify(other, chans[i], "1");
    run_until(&s.gaps, 1, 20000);
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.gaps, 1);
    assert_int_equal(s.listens_at_gap, NCHAN); /* every channel listened before the gap */
    assert_int_equal(pgw_listener_is_ready(l), 1);
    /* After the gap: each exactly once. */
    for (int i = 0; i < NCHAN; i++)
        notify(other, chans[i], "2");
    end = pgt_now_ns() + 20000000000ull;
    do {
        uv_run(&loop, UV_RUN_ONCE);
        total = s.got[0][2] + s.got[1][2] + s.got[2][2];
    } while (total < NCHAN && pgt_now_ns() < end);
    int never = 0;
    dl_run(&loop, &never, NULL, 200); /* a duplicate would show now */
    for (int i = 0; i < NCHAN; i++) {
        assert_int_equal(s.got[i][0], 1);
        assert_int_equal(s.got[i][2], 1);
        /* sent while no connection listened: lost, announced by the gap */
        assert_true(s.got[i][1] <= 1);
    }
    pgw_client_close(other);
    pgw_listener_close(l, NULL, NULL);
    pgw_pool_close(pool);
    loop_close();
}

/* ------------------------------------------------------------ checkout */

typedef struct user {
    int got;
} user_t;

static void user_notified(pgw_conn_t *c, int32_t pid, pgw_str_t ch, pgw_str_t payload, void *ud)
{
    (void)c, (void)pid, (void)ch, (void)payload;
    ((user_t *)ud)->got++;
}

static void on_acq(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    assert_int_equal(status, 0);
    *(pgw_conn_t **)ud = conn;
}

static pgw_conn_t *acquire(pgw_pool_t *pool)
{
    pgw_conn_t *conn = NULL;
    assert_int_equal(pgw_pool_acquire(pool, 0, 20000, on_acq, &conn), 0);
    uint64_t end = pgt_now_ns() + 20000000000ull;
    while (!conn && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    assert_non_null(conn);
    return conn;
}

static void test_checkout_callback_ends_at_release(void **state)
{
    (void)state;
    loop_open();
    char ci[512];
    pgw_pool_t *pool;
    pgw_pool_config_t pc;
    pgw_pool_config_init(&pc);
    pc.min_size = 1;
    pc.max_size = 1;
    assert_int_equal(pgw_pool_new(&pool, &loop, pgt_conninfo(ci, sizeof ci, NULL), &pc), 0);
    pgw_client_t *other = pgt_client_open();
    user_t first = {0}, second = {0};
    pgw_conn_t *conn = acquire(pool);
    assert_int_equal(pgw_conn_set_notification_cb(conn, user_notified, &first), 0);
    outcome_t o = {0};
    assert_int_equal(pgw_conn_listen(conn, "case15_pooled", record, &o), 0);
    run_until(&o.calls, 1, 20000);
    assert_int_equal(o.status, 0);
    notify(other, "case15_pooled", "1");
    run_until(&first.got, 1, 20000);
    assert_int_equal(first.got, 1);
    assert_int_equal(pgw_pool_release(pool, conn), 0);
    /* The connection still listens: its next notification must not reach
     * the first user, who has released it. */
    notify(other, "case15_pooled", "2");
    int never = 0;
    dl_run(&loop, &never, NULL, 300);
    assert_int_equal(first.got, 1);
    /* The next user of the connection starts without the old callback. */
    conn = acquire(pool);
    assert_int_equal(pgw_conn_set_notification_cb(conn, user_notified, &second), 0);
    notify(other, "case15_pooled", "3");
    run_until(&second.got, 1, 2000);
    assert_int_equal(first.got, 1);
    assert_int_equal(pgw_pool_release(pool, conn), 0);
    pgw_client_close(other);
    pgw_pool_close(pool);
    loop_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_listener_across_kill),
        cmocka_unit_test(test_checkout_callback_ends_at_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
