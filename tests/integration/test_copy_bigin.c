/*
 * A COPY FROM STDIN far larger than memory, generated on the fly by the
 * source on a pgw_conn_t: the process's peak RSS (VmHWM) stays under
 * RSS_BOUND and a 10 ms timer on the same loop keeps firing throughout: no
 * gap between its ticks is longer than MAX_GAP_MS or a quarter of the COPY,
 * whichever is longer (a loop the COPY blocked would show one gap about as
 * long as the COPY; on a loaded machine every gap stretches with the COPY,
 * see pgtime.h).
 * PGW_TEST_COPY_BYTES sets the size (default 256 MiB, about 0.7 s here;
 * 2147483648 for the 2 GB: 5.3 s, VmHWM 4.9 MiB, longest timer gap
 * 12 ms on the development machine). The server discards the rows in a BEFORE INSERT trigger
 * (counting them), so the test measures the client, not the disk.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
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

#define RSS_BOUND_KB (64 * 1024)
#define LINE         8192 /* bytes per row, newline included */
#define TICK_MS      10
#define MAX_GAP_MS   250

typedef struct big {
    uv_loop_t loop;
    uv_timer_t tick;
    pgw_conn_t *conn;
    int connected, connect_status, done, status, closed;
    uint64_t total, sent, rows;
    uint64_t last_tick_ms, max_gap_ms, ticks;
    int64_t affected;
    uint64_t copy_bytes;
    char line[LINE];
} big_t;

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char l[256];
    long kb = -1;
    while (fgets(l, sizeof l, f))
        if (strncmp(l, "VmHWM:", 6) == 0) kb = strtol(l + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* Under valgrind or a sanitizer the memory and timing figures measure the
 * instrumentation: the COPY is smaller and only its result is checked. */
static int instrumented(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#else
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload") != NULL;
#endif
}

static void on_tick(uv_timer_t *t)
{
    big_t *b = t->data;
    uv_update_time(&b->loop);
    uint64_t now = uv_now(&b->loop);
    if (b->last_tick_ms && now - b->last_tick_ms > b->max_gap_ms)
        b->max_gap_ms = now - b->last_tick_ms;
    b->last_tick_ms = now;
    b->ticks++;
}

static int source(pgw_buf_t *out, size_t room, void *ud)
{
    big_t *b = ud;
    size_t start = out->len;
    while (b->sent < b->total && out->len - start < room) {
        /* A distinct first field per row, the rest constant. */
        int n = snprintf(b->line, 24, "%020llu", (unsigned long long)b->rows);
        b->line[n] = 'x';
        assert_int_equal(pgw_buf_append(out, b->line, LINE), 0);
        b->sent += LINE;
        b->rows++;
    }
    return b->sent < b->total ? PGW_COPY_MORE : PGW_COPY_END;
}

static void on_copied(int status, pgw_result_t *res, void *ud)
{
    big_t *b = ud;
    b->done = 1;
    b->status = status;
    b->affected = pgw_result_rows_affected(res);
    b->copy_bytes = pgw_result_copy_bytes(res);
    if (status != 0 && res && pgw_result_error(res))
        print_error("COPY: %s\n", pgw_result_error(res)->message);
    pgw_result_free(res);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    big_t *b = ud;
    b->connected = 1;
    b->connect_status = status;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ((big_t *)ud)->closed = 1;
}

static void test_copy_in_bounded(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c,
                       "DROP TABLE IF EXISTS copy_big; DROP SEQUENCE IF EXISTS copy_big_n;"
                       "CREATE SEQUENCE copy_big_n; CREATE TABLE copy_big (t text);"
                       "CREATE OR REPLACE FUNCTION copy_big_drop() RETURNS trigger LANGUAGE plpgsql"
                       " AS $$BEGIN PERFORM nextval('copy_big_n'); RETURN NULL; END$$;"
                       "CREATE TRIGGER copy_big_drop BEFORE INSERT ON copy_big FOR EACH ROW"
                       " EXECUTE FUNCTION copy_big_drop()");

    big_t *b = calloc(1, sizeof *b);
    assert_non_null(b);
    const char *env = getenv("PGW_TEST_COPY_BYTES");
    int inst = instrumented();
    b->total = env ? strtoull(env, NULL, 10) : (inst ? 16ull : 256ull) * 1024 * 1024;
    b->total -= b->total % LINE;
    memset(b->line, 'x', LINE);
    b->line[LINE - 1] = '\n';
    char ci[512];
    assert_int_equal(uv_loop_init(&b->loop), 0);
    assert_int_equal(pgw_conn_new(&b->conn, &b->loop, NULL), 0);
    assert_int_equal(pgw_conn_connect(b->conn, pgt_conninfo(ci, sizeof ci, NULL), on_connect, b),
                     0);
    assert_true(pgt_loop_run_until(&b->loop, &b->connected, 1, 10000));
    assert_int_equal(b->connect_status, 0);

    uv_timer_init(&b->loop, &b->tick);
    b->tick.data = b;
    uv_timer_start(&b->tick, on_tick, TICK_MS, TICK_MS);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_copy_in(b->conn, "COPY copy_big FROM STDIN", source, on_copied, b),
                     0);
    assert_true(pgt_loop_run_until(&b->loop, &b->done, 1, 3600u * 1000u));
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    uv_timer_stop(&b->tick);
    uv_close((uv_handle_t *)&b->tick, NULL);
    long hwm = vm_hwm_kb();
    print_message("COPY of %llu MiB in %.1f s (%.0f MiB/s), VmHWM %ld KiB (bound %d), "
                  "%llu ticks, longest gap %llu ms\n",
                  (unsigned long long)(b->total >> 20), secs, (double)(b->total >> 20) / secs, hwm,
                  RSS_BOUND_KB, (unsigned long long)b->ticks, (unsigned long long)b->max_gap_ms);
    assert_int_equal(b->status, 0);
    assert_true(b->copy_bytes == b->total);
    if (!inst) {
        assert_true(hwm > 0 && hwm < RSS_BOUND_KB);
        double gap_bound = secs * 1000 / 4 > MAX_GAP_MS ? secs * 1000 / 4 : MAX_GAP_MS;
        if ((double)b->max_gap_ms >= gap_bound)
            fail_msg("the timer stopped for %llu ms of a %.1f s COPY (bound %.0f ms)",
                     (unsigned long long)b->max_gap_ms, secs, gap_bound);
    }

    assert_int_equal(pgw_conn_close(b->conn, on_closed, b), 0);
    assert_true(pgt_loop_run_until(&b->loop, &b->closed, 1, 10000));
    assert_int_equal(uv_loop_close(&b->loop), 0);
    assert_true(pgt_client_int8(c, "SELECT last_value FROM copy_big_n") == (int64_t)b->rows);
    pgt_client_exec_ok(
        c, "DROP TABLE copy_big; DROP SEQUENCE copy_big_n; DROP FUNCTION copy_big_drop()");
    pgw_client_close(c);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_in_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
