/*
 * Deadlines in the sans-IO session (session.h, "Deadlines"): tickets, the
 * on_deadline announcements with the default and overrides, and
 * pgw_session_expire for a running request (completes with PGW_ETIMEDOUT
 * at the server's answer, its 57014 kept), a queued one (completes at once,
 * its replies dropped, rows not streamed), a batch member, a session that
 * fails afterwards, and the calls it refuses; the output held behind a
 * request with a deadline until it completes (its cancel can then land on
 * nothing else).
 */
#include "test_session_util.h"

static rec_t R;

typedef struct announced {
    int n;
    uint64_t ticket[16];
    uint32_t ms[16];
} announced_t;

static announced_t A;

static void on_deadline_hook(pgw_session_t *s, uint64_t ticket, uint32_t ms, void *ud)
{
    (void)s, (void)ud;
    A.ticket[A.n] = ticket;
    A.ms[A.n++] = ms;
}

/* A ready session whose driver keeps time, with default_ms for requests
 * that ask none. (The hook and default are set on the session directly:
 * the shared helper builds the config.) */
static pgw_session_t *timed_session(uint32_t default_ms)
{
    pgw_session_t *s = ready_session(&R, NULL);
    s->cb.on_deadline = on_deadline_hook;
    s->fifo.request_timeout_ms = default_ms;
    memset(&A, 0, sizeof A);
    return s;
}

static int submit(pgw_session_t *s, uint32_t timeout_ms, int i)
{
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(i));
    r.timeout_ms = timeout_ms;
    return pgw_session_submit(s, &r);
}

/* One int8 row with its own Sync, or the server's 57014 for it. */
static void answer(pgw_buf_t *w, int64_t v)
{
    w_int8_query(w, v, 1);
}

static void answer_cancelled(pgw_buf_t *w)
{
    static const char *const names[] = {"v"};
    static const uint32_t oids[] = {20};
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg_row_desc(w, 1, names, oids, 1);
    pgt_msg_error(w, "ERROR", "57014", "canceling statement due to user request");
    pgt_msg_ready(w, 'I');
}

static void test_announce_default_and_overrides(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(50);
    assert_int_equal(submit(s, 100, 0), 0);
    assert_int_equal(submit(s, 0, 1), 0);
    assert_int_equal(submit(s, PGW_TIMEOUT_NONE, 2), 0);
    assert_int_equal(A.n, 2);
    assert_int_equal(A.ticket[0], 1);
    assert_int_equal(A.ms[0], 100);
    assert_int_equal(A.ticket[1], 2);
    assert_int_equal(A.ms[1], 50);
    assert_int_equal(pgw_session_last_ticket(s), 3);
    assert_int_equal(pgw_session_oldest_ticket(s), 1);
    /* A refused submit gives its ticket back and announces nothing. */
    pgw_request_t bad = PGW_EXECUTE(NULL, NULL, 0, rec_cb, UD(3));
    bad.timeout_ms = 10;
    assert_int_equal(pgw_session_submit(s, &bad), PGW_EINVAL);
    assert_int_equal(pgw_session_last_ticket(s), 3);
    assert_int_equal(A.n, 2);
    pgw_buf_t w = {0};
    for (int i = 0; i < 3; i++)
        answer(&w, i);
    feed(s, &w);
    assert_int_equal(pgw_session_oldest_ticket(s), 4);
    assert_int_equal(pgw_session_expire(s, 1, 0), PGW_ENOTFOUND);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* No driver keeping time: a timeout is refused, "none" is not. */
static void test_no_hook_refuses_timeouts(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(submit(s, 100, 0), PGW_ENOTSUP);
    assert_non_null(strstr(pgw_session_refusal(s), "timeout_ms"));
    assert_int_equal(submit(s, PGW_TIMEOUT_NONE, 0), 0);
    assert_int_equal(submit(s, 0, 1), 0);
    pgw_session_free(s);
}

static void test_expire_running(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(0);
    assert_int_equal(submit(s, 100, 0), 0);
    assert_int_equal(submit(s, 0, 1), 0);
    assert_int_equal(pgw_session_expire(s, 1, 0), 1);
    assert_int_equal(R.done[0].calls, 0); /* waits for the server */
    assert_int_equal(pgw_session_expire(s, 1, 0), 1);
    pgw_buf_t w = {0};
    answer_cancelled(&w);
    answer(&w, 9);
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, PGW_ETIMEDOUT);
    assert_string_equal(R.done[0].sqlstate, "57014");
    assert_int_equal(R.done[1].status, 0);
    assert_int_equal(R.done[1].value, 9);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static int zombie_rows;

static int count_row(const pgw_row_t *row, void *ud)
{
    (void)row, (void)ud;
    zombie_rows++;
    return 0;
}

/* Queued behind another: completes at once; its rows are not streamed and
 * its answer is dropped; the one before it is not touched. */
static void test_expire_queued(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(0);
    assert_int_equal(submit(s, 0, 0), 0);
    pgw_request_t r = PGW_QUERY("SELECT g", NULL, 0, rec_cb, UD(1));
    r.on_row = count_row;
    r.timeout_ms = 100;
    assert_int_equal(pgw_session_submit(s, &r), 0);
    assert_int_equal(submit(s, 0, 2), 0);
    assert_int_equal(pgw_session_pending(s), 3);
    assert_int_equal(pgw_session_expire(s, 2, 0), 0);
    assert_int_equal(R.done[1].calls, 1);
    assert_int_equal(R.done[1].status, PGW_ETIMEDOUT);
    assert_int_equal(R.done[0].calls, 0);
    assert_int_equal(pgw_session_pending(s), 2);
    assert_int_equal(pgw_session_expire(s, 2, 0), 0); /* already reported */
    assert_int_equal(pgw_session_oldest_ticket(s), 1);
    pgw_buf_t w = {0};
    answer(&w, 5);
    feed(s, &w);
    assert_int_equal(pgw_session_oldest_ticket(s), 2); /* it runs now */
    pgw_buf_reset(&w);
    answer(&w, 6);
    answer(&w, 7);
    zombie_rows = 0;
    feed(s, &w);
    assert_int_equal(zombie_rows, 0);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].calls, 1);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[2].value, 7);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_oldest_ticket(s), 4);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A member of the head's sync group counts as running. */
static void test_expire_batch_member(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(0);
    pgw_request_t b[2] = {PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0)),
                          PGW_QUERY("SELECT pg_sleep(5)", NULL, 0, rec_cb, UD(1))};
    b[1].timeout_ms = 100;
    assert_int_equal(pgw_session_submit_batch(s, b, 2, 0, rec_cb, UD(2)), 0);
    assert_int_equal(A.n, 1);
    assert_int_equal(A.ticket[0], 2);
    assert_int_equal(pgw_session_expire(s, 2, 0), 1);
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 0);
    answer_cancelled(&w);
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].status, PGW_ETIMEDOUT);
    assert_string_equal(R.done[1].sqlstate, "57014");
    assert_int_equal(R.done[2].status, PGW_ETIMEDOUT);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* The driver gives up: the expired request still says PGW_ETIMEDOUT, the
 * others get the failure. PGW_EXPIRE_NOW reports even the running one. */
static void test_expire_then_fail(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(0);
    assert_int_equal(submit(s, 100, 0), 0);
    assert_int_equal(submit(s, 0, 1), 0);
    assert_int_equal(submit(s, 100, 2), 0);
    assert_int_equal(pgw_session_expire(s, 1, 0), 1);
    pgw_session_fail(s, PGW_ECONNLOST);
    assert_int_equal(R.done[0].status, PGW_ETIMEDOUT);
    assert_int_equal(R.done[1].status, PGW_ECONNLOST);
    assert_int_equal(R.done[2].status, PGW_ECONNLOST);
    for (int i = 0; i < 3; i++)
        assert_int_equal(R.done[i].calls, 1);
    pgw_session_free(s);

    s = timed_session(0);
    assert_int_equal(submit(s, 100, 0), 0);
    assert_int_equal(pgw_session_expire(s, 1, PGW_EXPIRE_NOW), 0);
    assert_int_equal(R.done[0].status, PGW_ETIMEDOUT);
    pgw_session_free(s);
    assert_int_equal(R.done[0].calls, 1);
}

static pgw_session_t *g_s;
static int inner_rc;

static void expire_inside(int status, pgw_result_t *res, void *ud)
{
    (void)status, (void)ud;
    pgw_result_free(res);
    inner_rc = pgw_session_expire(g_s, 2, 0);
}

static void test_expire_refusals(void **state)
{
    (void)state;
    assert_int_equal(pgw_session_expire(NULL, 1, 0), PGW_EINVAL);
    assert_int_equal(pgw_session_oldest_ticket(NULL), 0);
    pgw_session_t *s = timed_session(0);
    g_s = s;
    assert_int_equal(pgw_session_expire(s, 7, 0), PGW_ENOTFOUND);
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, expire_inside, NULL);
    assert_int_equal(pgw_session_submit(s, &r), 0);
    assert_int_equal(submit(s, 100, 1), 0);
    pgw_buf_t w = {0};
    answer(&w, 1);
    feed(s, &w);
    assert_int_equal(inner_rc, PGW_ERECURSIVE);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static size_t output_len(pgw_session_t *s)
{
    size_t len = 0;
    pgw_session_pending_output(s, &len);
    return len;
}

/* Behind a request with a deadline nothing is handed out until it has
 * completed: a late cancel (or the second signal of one) must not find
 * another request running. Requests without deadlines are pipelined, and a
 * request with one goes out behind them. */
static void test_output_held_behind_deadline(void **state)
{
    (void)state;
    pgw_session_t *s = timed_session(0);
    assert_int_equal(submit(s, 0, 0), 0);
    size_t one = output_len(s);
    assert_int_equal(submit(s, 100, 1), 0);
    size_t two = output_len(s);
    assert_true(two > one);
    assert_int_equal(submit(s, 0, 2), 0);
    assert_int_equal(submit(s, 100, 3), 0);
    assert_int_equal(output_len(s), two);
    pgw_buf_t w = {0};
    answer(&w, 5);
    feed(s, &w);
    assert_int_equal(output_len(s), two); /* the timed one still runs */
    pgw_buf_reset(&w);
    answer_cancelled(&w); /* its ReadyForQuery releases the two behind it */
    feed(s, &w);
    assert_int_equal(R.done[1].status, PGW_ESERVER);
    assert_true(output_len(s) > two);
    size_t three = output_len(s);
    assert_int_equal(submit(s, 0, 4), 0); /* behind the last timed one: held */
    assert_int_equal(output_len(s), three);
    pgw_buf_reset(&w);
    for (int v = 6; v <= 7; v++)
        answer(&w, v);
    feed(s, &w);
    assert_true(output_len(s) > three);
    pgw_buf_reset(&w);
    answer(&w, 8);
    feed(s, &w);
    assert_int_equal(R.done[0].value, 5);
    assert_int_equal(R.done[2].value, 6);
    assert_int_equal(R.done[3].value, 7);
    assert_int_equal(R.done[4].value, 8);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_announce_default_and_overrides),
        cmocka_unit_test(test_no_hook_refuses_timeouts),
        cmocka_unit_test(test_expire_running),
        cmocka_unit_test(test_expire_queued),
        cmocka_unit_test(test_expire_batch_member),
        cmocka_unit_test(test_expire_then_fail),
        cmocka_unit_test(test_expire_refusals),
        cmocka_unit_test(test_output_held_behind_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
