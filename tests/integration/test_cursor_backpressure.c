/*
 * Read backpressure against the throwaway cluster: a large result
 *   SELECT g, repeat('x', 1000) FROM generate_series(1, N) g
 * streamed to a deliberately slow consumer on the same loop. The row
 * callback copies each row into a small queue (256 rows) and returns
 * PGW_ROW_PAUSE when it is full; a consumer timer takes 128 rows every
 * millisecond and resumes reading when there is room. Checked: every row,
 * in order; the peak RSS (VmHWM) grows by less than 64 MiB over the stream;
 * and a 10 ms timer on the same loop keeps firing throughout (no tick later
 * than LATE_BOUND_MS or a quarter of the stream, whichever is longer: the
 * loop is never blocked by the consumer, which would show one gap about as
 * long as the stream; on a loaded machine every gap stretches with the
 * stream, see pgtime.h).
 *
 * N is 300,000 (about 300 MB through the socket) by default;
 * PGW_TEST_BACKPRESSURE_ROWS sets it (5000000 for the 5 GB run).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgtest.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define QUEUE_ROWS    256
#define TAKE_PER_TICK 128
#define RSS_BOUND_KB  (64 * 1024)
#define LATE_BOUND_MS 250

/* Peak resident set size in KiB (VmHWM). */
static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    long kb = -1;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

typedef struct stream {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected, connect_status, closed;
    /* the queue: copies of the rows' g (the text checked on arrival) */
    int64_t queue[QUEUE_ROWS];
    size_t head, len;
    int64_t next_in, next_out; /* next g expected from the server, by the consumer */
    int64_t nrows;
    int paused; /* a row callback paused reading */
    uint64_t pauses;
    int done, status;
    uv_timer_t consumer, tick;
    uint64_t last_tick, max_late, ticks;
} stream_t;

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn, (void)err;
    stream_t *s = ud;
    s->connected = 1;
    s->connect_status = status;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((stream_t *)ud)->closed = 1;
}

static int on_row(const pgw_row_t *row, void *ud)
{
    stream_t *s = ud;
    int64_t g;
    pgw_str_t x;
    assert_int_equal(pgw_get_int8(&row->values[0], &g), 0);
    assert_int_equal(pgw_get_text(&row->values[1], &x), 0);
    assert_int_equal(g, s->next_in);
    assert_int_equal(x.len, 1000);
    assert_true(x.p[0] == 'x' && x.p[999] == 'x');
    assert_true(s->len < QUEUE_ROWS); /* nothing is delivered while paused */
    s->next_in++;
    s->queue[(s->head + s->len++) % QUEUE_ROWS] = g;
    if (s->len < QUEUE_ROWS) return 0;
    s->paused = 1;
    s->pauses++;
    return PGW_ROW_PAUSE;
}

static void on_done(int status, pgw_result_t *res, void *ud)
{
    stream_t *s = ud;
    s->status = status;
    s->done = 1;
    pgw_result_free(res);
}

/* The slow consumer: a few rows per millisecond. */
static void on_consume(uv_timer_t *t)
{
    stream_t *s = t->data;
    for (int i = 0; i < TAKE_PER_TICK && s->len; i++) {
        assert_int_equal(s->queue[s->head], s->next_out);
        s->next_out++;
        s->head = (s->head + 1) % QUEUE_ROWS;
        s->len--;
    }
    if (s->paused && s->len < QUEUE_ROWS) {
        s->paused = 0;
        assert_true(pgw_conn_reading_paused(s->conn));
        assert_int_equal(pgw_conn_resume_reading(s->conn), 0);
    }
    if (s->done && s->len == 0) {
        uv_timer_stop(&s->consumer);
        uv_timer_stop(&s->tick);
        uv_stop(&s->loop); /* the idle connection keeps the loop alive */
    }
}

static void on_tick(uv_timer_t *t)
{
    stream_t *s = t->data;
    uint64_t now = uv_now(&s->loop);
    if (s->last_tick && now - s->last_tick > 10 && now - s->last_tick - 10 > s->max_late)
        s->max_late = now - s->last_tick - 10;
    s->last_tick = now;
    s->ticks++;
}

static void test_slow_consumer_bounded_memory(void **state)
{
    (void)state;
    pgt_require_server();
    int64_t n = pgt_env_int("PGW_TEST_BACKPRESSURE_ROWS", 300000);
    static stream_t s;
    memset(&s, 0, sizeof s);
    s.next_in = s.next_out = 1;
    assert_int_equal(uv_loop_init(&s.loop), 0);
    char ci[512];
    assert_int_equal(pgw_conn_new(&s.conn, &s.loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(s.conn, pgt_conninfo(ci, sizeof ci, NULL), on_connect, &s),
                     0);
    while (!s.connected)
        uv_run(&s.loop, UV_RUN_ONCE);
    assert_int_equal(s.connect_status, 0);

    long hwm0 = vm_hwm_kb();
    uint64_t t0 = uv_hrtime();
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT g::int8, repeat('x', 1000) FROM generate_series(1, %lld) g",
             (long long)n);
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, on_done, &s);
    q.on_row = on_row;
    q.flags = PGW_Q_TEXT;
    assert_int_equal(pgw_conn_submit(s.conn, &q), 0);
    uv_timer_init(&s.loop, &s.consumer);
    uv_timer_init(&s.loop, &s.tick);
    s.consumer.data = s.tick.data = &s;
    uv_timer_start(&s.consumer, on_consume, 1, 1);
    uv_timer_start(&s.tick, on_tick, 10, 10);
    uv_run(&s.loop, UV_RUN_DEFAULT); /* until all is consumed (uv_stop) */
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    long hwm1 = vm_hwm_kb();

    assert_int_equal(s.done, 1);
    assert_int_equal(s.status, 0);
    assert_int_equal(s.next_in, n + 1);
    assert_int_equal(s.next_out, n + 1);
    assert_true(s.pauses > 0);
    print_message("streamed %lld rows (%.0f MB) in %.2f s, %llu pauses; VmHWM %ld -> %ld kB "
                  "(+%ld, bound %d); %llu ticks, latest %llu ms late (bound %d)\n",
                  (long long)n, (double)n * 1008 / 1e6, secs, (unsigned long long)s.pauses, hwm0,
                  hwm1, hwm1 - hwm0, RSS_BOUND_KB, (unsigned long long)s.ticks,
                  (unsigned long long)s.max_late, LATE_BOUND_MS);
    assert_true(hwm1 - hwm0 < RSS_BOUND_KB);
    double late_bound = secs * 1000 / 4 > LATE_BOUND_MS ? secs * 1000 / 4 : LATE_BOUND_MS;
    if ((double)s.max_late >= late_bound)
        fail_msg("a tick came %llu ms late in a %.2f s stream (bound %.0f ms)",
                 (unsigned long long)s.max_late, secs, late_bound);
    assert_true(s.ticks > 0);

    uv_close((uv_handle_t *)&s.consumer, NULL);
    uv_close((uv_handle_t *)&s.tick, NULL);
    assert_int_equal(pgw_conn_close(s.conn, on_closed, &s), 0);
    while (!s.closed)
        uv_run(&s.loop, UV_RUN_ONCE);
    uv_run(&s.loop, UV_RUN_NOWAIT);
    assert_int_equal(s.closed, 1);
    assert_int_equal(uv_loop_close(&s.loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_consumer_bounded_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
