/*
 * LISTEN/NOTIFY for the blocking client against the real server:
 * notifications queued while other calls run, pgw_client_wait_notification
 * returning them, waiting for one sent from another thread, its timeout,
 * the queue's bound and what it reports when full, connection loss.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/listen.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include <cmocka.h>

#define NCHAN  3
#define PER_CH 30

static const char *const chans[NCHAN] = {"c_one", "C Two", "c \"three\""};

static pgw_client_t *open_client(void)
{
    char ci[512];
    pgt_require_server();
    pgw_client_t *c;
    int rc = pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), NULL);
    if (rc) fail_msg("connect: %s", pgw_err_name(rc));
    return c;
}

static void listen_all(pgw_client_t *c)
{
    for (int i = 0; i < NCHAN; i++)
        assert_int_equal(pgw_client_listen(c, chans[i]), 0);
}

static void notify(pgw_client_t *c, const char *channel, const char *payload)
{
    pgw_param_t v[] = {pgw_text(channel), pgw_text(payload)};
    assert_int_equal(pgw_client_query(c, "SELECT pg_notify($1, $2)", v, 2, NULL), 0);
}

static int chan_index(const char *name)
{
    for (int i = 0; i < NCHAN; i++)
        if (strcmp(chans[i], name) == 0) return i;
    fail_msg("unexpected channel %s", name);
    return -1;
}

/* Notifications to the client's own channels, sent by itself, are queued
 * during the call that sent them and returned by the wait without
 * blocking; then the wait times out on time. */
static void test_queued_during_calls(void **state)
{
    pgw_client_t *c = open_client();
    listen_all(c);
    assert_int_equal(pgw_client_exec(c,
                                     "SELECT pg_notify('c_one', 'a'), pg_notify('C Two', 'b'), "
                                     "pg_notify('c \"three\"', '')",
                                     NULL),
                     0);
    assert_int_equal(pgw_client_notifications_queued(c), 3);
    pgw_notification_t n;
    const char *want_pl[NCHAN] = {"a", "b", ""};
    for (int i = 0; i < NCHAN; i++) {
        assert_int_equal(pgw_client_wait_notification(c, 0, &n), 0);
        assert_string_equal(n.channel, chans[i]);
        assert_int_equal(n.channel_len, strlen(chans[i]));
        assert_string_equal(n.payload, want_pl[i]);
        assert_int_equal(n.payload_len, strlen(want_pl[i]));
        assert_int_equal(n.pid, pgw_client_backend_pid(c));
        assert_int_equal(n.missed, 0);
    }
    /* The strings stay valid across other calls, until the next wait. */
    assert_int_equal(pgw_client_exec(c, "SELECT 1", NULL), 0);
    assert_string_equal(n.channel, chans[2]);

    assert_int_equal(pgw_client_wait_notification(c, 0, &n), PGW_ETIMEDOUT);
    assert_null(n.channel);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_client_wait_notification(c, 200, &n), PGW_ETIMEDOUT);
    /* nothing is sent: only the 200 ms end the wait */
    pgt_assert_in_time("wait_notification(200 ms) timed out", pgt_ms_since(t0), 190,
                       PGT_WORK_ENDLESS);

    assert_int_equal(pgw_client_unlisten(c, NULL), 0);
    notify(c, "c_one", "after unlisten");
    assert_int_equal(pgw_client_wait_notification(c, 50, &n), PGW_ETIMEDOUT);
    assert_int_equal(pgw_client_listen(c, "bad\xff"), PGW_EENCODING);
    assert_int_equal(pgw_client_listen(c, NULL), PGW_EINVAL);
    assert_int_equal(pgw_client_listen(NULL, "x"), PGW_EINVAL);
    assert_int_equal(pgw_client_wait_notification(NULL, 0, &n), PGW_EINVAL);
    assert_int_equal(pgw_client_wait_notification(c, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_client_set_notification_limit(NULL, 1), PGW_EINVAL);
    assert_int_equal(pgw_client_notifications_queued(NULL), 0);
    pgw_client_close(c);
}

typedef struct sender {
    unsigned delay_ms;
    int per_channel;
    int32_t pid;
} sender_t;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Another thread, another connection: per_channel rounds over the three
 * channels, after delay_ms. */
static void *send_thread(void *arg)
{
    sender_t *s = arg;
    pgw_client_t *c = open_client();
    s->pid = pgw_client_backend_pid(c);
    sleep_ms(s->delay_ms);
    for (int k = 0; k < s->per_channel; k++)
        for (int i = 0; i < NCHAN; i++) {
            char pl[16];
            snprintf(pl, sizeof pl, "%d", k);
            notify(c, chans[i], pl);
        }
    pgw_client_close(c);
    return NULL;
}

/* Waiting while the notifications arrive from another connection, with
 * queries run between the waits (what arrives during those is queued):
 * every one exactly once, in order per channel, from the sender's pid. */
static void test_wait_for_other_connection(void **state)
{
    pgw_client_t *c = open_client();
    listen_all(c);
    sender_t s = {150, PER_CH, 0};
    pthread_t th;
    uint64_t t0 = uv_hrtime(); /* before the sender's delay can start */
    assert_int_equal(pthread_create(&th, NULL, send_thread, &s), 0);
    int next[NCHAN] = {0}, total = 0, during_query = 0;
    while (total < NCHAN * PER_CH) {
        pgw_notification_t n;
        int rc = pgw_client_wait_notification(c, 30000, &n);
        if (rc) fail_msg("wait: %s after %d", pgw_err_name(rc), total);
        int i = chan_index(n.channel);
        char want[16];
        snprintf(want, sizeof want, "%d", next[i]++);
        assert_string_equal(n.payload, want);
        assert_int_equal(n.missed, 0);
        total++;
        if (total % 10 == 0) {
            assert_int_equal(pgw_client_exec(c, "SELECT pg_sleep(0.01)", NULL), 0);
            during_query += pgw_client_notifications_queued(c) > 0;
        }
    }
    /* The first one took the sender's delay: the wait blocked for it. */
    assert_true((uv_hrtime() - t0) / 1000000u >= 100);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(during_query > 0);
    for (int i = 0; i < NCHAN; i++)
        assert_int_equal(next[i], PER_CH);
    pgw_notification_t n;
    assert_int_equal(pgw_client_wait_notification(c, 100, &n), PGW_ETIMEDOUT);
    pgw_client_close(c);
}

/* A full queue drops its oldest and says how many went, on the oldest
 * that is left; limit 0 queues nothing. */
static void test_queue_bound(void **state)
{
    pgw_client_t *c = open_client();
    assert_int_equal(pgw_client_listen(c, "bound"), 0);
    assert_int_equal(pgw_client_set_notification_limit(c, 3), 0);
    assert_int_equal(pgw_client_exec(c,
                                     "SELECT pg_notify('bound', g::text) "
                                     "FROM generate_series(1, 5) g",
                                     NULL),
                     0);
    assert_int_equal(pgw_client_notifications_queued(c), 3);
    pgw_notification_t n;
    assert_int_equal(pgw_client_wait_notification(c, 0, &n), 0);
    assert_string_equal(n.payload, "3");
    assert_int_equal(n.missed, 2);
    assert_int_equal(pgw_client_wait_notification(c, 0, &n), 0);
    assert_string_equal(n.payload, "4");
    assert_int_equal(n.missed, 0);
    /* Lowering the bound drops the oldest now. */
    assert_int_equal(pgw_client_set_notification_limit(c, 0), 0);
    assert_int_equal(pgw_client_notifications_queued(c), 0);
    notify(c, "bound", "unqueued");
    assert_int_equal(pgw_client_wait_notification(c, 0, &n), PGW_ETIMEDOUT);
    /* What was dropped is reported on the next one queued. */
    assert_int_equal(pgw_client_set_notification_limit(c, 10), 0);
    notify(c, "bound", "six");
    assert_int_equal(pgw_client_wait_notification(c, 0, &n), 0);
    assert_string_equal(n.payload, "six");
    assert_int_equal(n.missed, 1);
    pgw_client_close(c);
}

/* The config's on_notification still sees every notification, before the
 * queue does. */
static void on_cfg_note(pgw_conn_t *conn, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    (*(int *)ud)++;
}

static void test_config_hook_and_loss(void **state)
{
    char ci[512];
    pgt_require_server();
    int seen = 0;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_notification = on_cfg_note;
    cfg.ud = &seen;
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), &cfg), 0);
    assert_int_equal(pgw_client_listen(c, "hooked"), 0);
    notify(c, "hooked", "x");
    assert_int_equal(seen, 1);
    assert_int_equal(pgw_client_notifications_queued(c), 1);

    /* The backend is killed while the client waits: the queued one is
     * still returned, then the loss. */
    pgw_client_t *k = open_client();
    pgw_param_t pid[] = {pgw_int4(pgw_client_backend_pid(c))};
    assert_int_equal(pgw_client_query(k, "SELECT pg_terminate_backend($1)", pid, 1, NULL), 0);
    pgw_client_close(k);
    pgw_notification_t n;
    assert_int_equal(pgw_client_wait_notification(c, 2000, &n), 0);
    assert_string_equal(n.payload, "x");
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_client_wait_notification(c, 30000, &n), PGW_ECONNLOST);
    /* the loss ended the wait, not its 30 s */
    pgt_assert_in_time("the loss ended the wait", pgt_ms_since(t0), 0, 30000);
    assert_int_equal(pgw_client_wait_notification(c, 0, &n), PGW_ECONNLOST);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_during_calls),
        cmocka_unit_test(test_wait_for_other_connection),
        cmocka_unit_test(test_queue_bound),
        cmocka_unit_test(test_config_hook_and_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
