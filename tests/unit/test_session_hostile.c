/*
 * Hostile server input (RELIABILITY.md case 2) and allocation failure: every
 * case breaks the session with the protocol error, fires every pending
 * callback exactly once and leaves nothing pending; a 0x7FFFFFFF DataRow is
 * refused at its header without a large allocation; failing the Nth
 * allocation of a scripted exchange never crashes or leaks.
 */
#include "test_session_util.h"

static rec_t R;

/* Allocator that counts live blocks, records the largest request and can
 * fail the Nth allocation. */
static pgt_alloc_t fa = PGT_ALLOC_INITIALIZER(fa);

/* A ready session with one request of each kind pending. */
static pgw_session_t *loaded_session(int *npending)
{
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = &fa.base});
    pgw_param_t p = pgw_int8(1);
    int i = 0;
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i++)), 0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(i++)), 0);
    assert_int_equal(pgw_session_prepare(s, "st", "SELECT 1", NULL, 0, rec_cb, UD(i++)), 0);
    pgw_request_t batch[3] = {PGW_EXECUTE("st", NULL, 0, rec_cb, UD(i)),
                              PGW_DESCRIBE("st", rec_cb, UD(i + 1)),
                              PGW_CLOSE("st", rec_cb, UD(i + 2))};
    assert_int_equal(pgw_session_submit_batch(s, batch, 3, 0, rec_cb, UD(i + 3)), 0);
    i += 4;
    assert_int_equal(pgw_session_sync(s, rec_cb, UD(i++)), 0);
    *npending = i;
    assert_int_equal(pgw_session_pending(s), (size_t)i);
    return s;
}

static void expect_broken(const pgw_buf_t *w, int expect_err)
{
    int n;
    pgw_session_t *s = loaded_session(&n);
    fa.biggest = 0;
    int rc = pgw_session_recv(s, w->data, w->len);
    assert_int_equal(rc, expect_err);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    assert_int_equal(pgw_session_error(s), expect_err);
    assert_int_equal(R.broken_calls, 1);
    assert_int_equal(R.broken_err, expect_err);
    assert_int_equal(pgw_session_pending(s), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(R.done[i].calls, 1);
        assert_int_equal(R.done[i].status, expect_err);
    }
    /* Nothing near the declared size was ever allocated. */
    assert_true(fa.biggest < 1024 * 1024);
    /* Further input is refused with the same error. */
    assert_int_equal(pgw_session_recv(s, w->data, w->len), expect_err);
    pgw_session_free(s);
    assert_int_equal(fa.blocks, 0);
}

static void raw(pgw_buf_t *w, char type, uint32_t len)
{
    pgt_msg_put_u8(w, (uint8_t)type);
    pgt_msg_put_i32(w, (int32_t)len);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    pgw_buf_t w = {0};
    raw(&w, 'Z', 3); /* below 4 */
    expect_broken(&w, PGW_EPROTO);
    static const char short_types[] = {'Z', 'C', '1', '2', 't'};
    for (size_t i = 0; i < sizeof short_types; i++) {
        w.len = 0;
        raw(&w, short_types[i], 30001);
        expect_broken(&w, PGW_EPROTO);
    }
    w.len = 0;
    raw(&w, 'D', 0x7FFFFFFF);
    expect_broken(&w, PGW_ETOOBIG);
    w.len = 0;
    raw(&w, 'x', 5); /* unknown type */
    expect_broken(&w, PGW_EPROTO);
    pgw_buf_free(&w);
}

/* Parse, Bind, RowDescription(1 text column) prefix for the first request. */
static void prefix(pgw_buf_t *w)
{
    static const char *const names[] = {"a"};
    static const uint32_t oids[] = {25};
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg_row_desc(w, 1, names, oids, 1);
}

static void test_bad_rows(void **state)
{
    (void)state;
    pgw_buf_t w = {0};
    /* Field length -2. */
    prefix(&w);
    size_t at = pgt_msg_begin(&w, 'D');
    pgt_msg_put_i16(&w, 1);
    pgt_msg_put_i32(&w, -2);
    pgt_msg_end(&w, at);
    expect_broken(&w, PGW_EPROTO);
    /* Field past the end. */
    w.len = 0;
    prefix(&w);
    at = pgt_msg_begin(&w, 'D');
    pgt_msg_put_i16(&w, 1);
    pgt_msg_put_i32(&w, 10);
    pgt_msg_raw(&w, "abc", 3);
    pgt_msg_end(&w, at);
    expect_broken(&w, PGW_EPROTO);
    /* Wrong field count against the RowDescription. */
    w.len = 0;
    prefix(&w);
    pgt_msg_data_row(&w, 2, (const char *const[]){"a", "b"});
    expect_broken(&w, PGW_EPROTO);
    /* Trailing bytes after the last field. */
    w.len = 0;
    prefix(&w);
    at = pgt_msg_begin(&w, 'D');
    pgt_msg_put_i16(&w, 1);
    pgt_msg_put_i32(&w, 1);
    pgt_msg_raw(&w, "ab", 2);
    pgt_msg_end(&w, at);
    expect_broken(&w, PGW_EPROTO);
    /* A row before any description. */
    w.len = 0;
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg_data_row(&w, 1, (const char *const[]){"a"});
    expect_broken(&w, PGW_EPROTO);
    pgw_buf_free(&w);
}

static void test_bad_messages(void **state)
{
    (void)state;
    pgw_buf_t w = {0};
    /* ErrorResponse whose last string has no NUL. */
    size_t at = pgt_msg_begin(&w, 'E');
    pgt_msg_put_u8(&w, 'S');
    pgt_msg_raw(&w, "ERROR", 5);
    pgt_msg_end(&w, at);
    expect_broken(&w, PGW_EPROTO);
    /* Unexpected for the head request: CloseComplete for a query. */
    w.len = 0;
    pgt_msg(&w, '3', NULL, 0);
    expect_broken(&w, PGW_EPROTO);
    /* ReadyForQuery before the query finished. */
    w.len = 0;
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_ready(&w, 'I');
    expect_broken(&w, PGW_EPROTO);
    /* An authentication message after startup. */
    w.len = 0;
    pgt_msg_auth(&w, 0, NULL, 0);
    expect_broken(&w, PGW_EPROTO);
    /* Bad transaction status. */
    w.len = 0;
    w_int8_query(&w, 1, 0);
    pgt_msg_ready(&w, 'Q');
    int n;
    pgw_session_t *s = loaded_session(&n);
    assert_int_equal(pgw_session_recv(s, w.data, w.len), PGW_EPROTO);
    /* The query's own Sync never completed, so its commit was never
     * confirmed: it fails with the protocol error like the rest. */
    for (int i = 0; i < n; i++) {
        assert_int_equal(R.done[i].calls, 1);
        assert_int_equal(R.done[i].status, PGW_EPROTO);
    }
    pgw_session_free(s);
    /* Anything at all with nothing pending. */
    s = ready_session(&R, NULL);
    w.len = 0;
    pgt_msg_command_complete(&w, "SELECT 1");
    assert_int_equal(pgw_session_recv(s, w.data, w.len), PGW_EPROTO);
    assert_int_equal(R.broken_calls, 1);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A message cut off, then EOF from the driver. */
static void test_truncated_then_eof(void **state)
{
    (void)state;
    int n;
    pgw_session_t *s = loaded_session(&n);
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 1);
    assert_int_equal(pgw_session_recv(s, w.data, w.len - 3), 0);
    pgw_session_fail(s, PGW_ECONNLOST);
    assert_int_equal(R.broken_calls, 1);
    /* CommandComplete arrived but the ReadyForQuery closing the query's
     * implicit transaction did not: whether it committed is unknown, so it
     * reports the lost connection, not success. */
    for (int i = 0; i < n; i++) {
        assert_int_equal(R.done[i].calls, 1);
        assert_int_equal(R.done[i].status, PGW_ECONNLOST);
    }
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    assert_int_equal(fa.blocks, 0);
    pgw_buf_free(&w);
}

/* The smaller configured limit applies too. */
static void test_max_message(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.max_message_size = 1000});
    assert_int_equal(pgw_session_simple_query(s, "SELECT", rec_cb, UD(0)), 0);
    pgw_buf_t w = {0};
    raw(&w, 'D', 2000);
    assert_int_equal(pgw_session_recv(s, w.data, w.len), PGW_ETOOBIG);
    assert_int_equal(R.done[0].status, PGW_ETOOBIG);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------------------- failmalloc */

static int fm_calls[16];

static void fm_cb(int status, pgw_result_t *res, void *ud)
{
    fm_calls[(uintptr_t)ud]++;
    (void)status;
    pgw_result_free(res);
}

/* One scripted exchange; returns 1 if it ran without hitting the failure. */
static int scripted_exchange(void)
{
    memset(fm_calls, 0, sizeof fm_calls);
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = NULL;
    sess_opts_t o = {.alloc = &fa.base, .password = "pw", .read_chunk_size = 32};
    if (new_session_opts(&s, &R, &o) < 0) return 0;
    int accepted[16] = {0};
    int k = 0;
    pgw_param_t p = pgw_int8(7);
    if (pgw_session_start(s) < 0) {
        pgw_session_free(s);
        return 0;
    }
    accepted[k] = pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, fm_cb, UD(k)) == 0, k++;
    accepted[k] = pgw_session_simple_query(s, "SELECT 1; SELECT 2", fm_cb, UD(k)) == 0, k++;
    accepted[k] = pgw_session_prepare(s, "a_rather_long_statement_name_to_force_a_heap_copy",
                                      "SELECT 1", NULL, 0, fm_cb, UD(k)) == 0,
    k++;
    accepted[k] = pgw_session_execute(s, "x", NULL, 0, 0, fm_cb, UD(k)) == 0, k++;
    pgw_buf_t w = {0};
    static const uint8_t salt[4] = {1, 2, 3, 4};
    pgt_msg_auth(&w, 5, salt, 4);
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_param_status(&w, "server_version", "16");
    pgt_msg_notice(&w, "hi");
    pgt_msg_ready(&w, 'I');
    w_int8_query(&w, 7, 1);
    static const char *const names[] = {"a"};
    static const uint32_t oids[] = {23};
    for (int i = 0; i < 2; i++) {
        pgt_msg_row_desc(&w, 1, names, oids, 0);
        pgt_msg_data_row(&w, 1, (const char *const[]){"1"});
        pgt_msg_command_complete(&w, "SELECT 1");
    }
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_param_desc(&w, 0, NULL);
    pgt_msg_row_desc(&w, 1, names, oids, 0);
    pgt_msg_ready(&w, 'I');
    pgt_msg_error(&w, "ERROR", "26000", "no such statement");
    pgt_msg_ready(&w, 'I');
    int rc = pgw_session_recv(s, w.data, w.len);
    int clean = rc == 0 && pgw_session_state(s) == PGW_SESSION_READY;
    if (rc == 0)
        assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    else
        assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    for (int i = 0; i < k; i++)
        clean = clean && accepted[i];
    pgw_session_free(s);
    for (int i = 0; i < k; i++)
        assert_int_equal(fm_calls[i], accepted[i] ? 1 : 0);
    pgw_buf_free(&w);
    return clean;
}

static void test_failmalloc(void **state)
{
    (void)state;
    fa.fail_at = 0;
    fa.blocks = 0;
    assert_true(scripted_exchange());
    assert_int_equal(fa.blocks, 0);
    int clean_runs = 0;
    for (fa.fail_at = 1; fa.fail_at < 400 && clean_runs < 3; fa.fail_at++) {
        fa.calls = 0;
        fa.blocks = 0;
        int clean = scripted_exchange();
        assert_int_equal(fa.blocks, 0);
        /* Past the last allocation the exchange must succeed. */
        if (fa.calls < fa.fail_at) {
            assert_true(clean);
            clean_runs++;
        }
    }
    assert_true(clean_runs > 0); /* we went past the last allocation */
    fa.fail_at = 0;
}

/* ParameterStatus floods: updates of known names cost no allocation and
 * keep every value readable; distinct names are bounded, and the one past
 * the bound breaks the session with a protocol error. */
static void test_parameter_flood(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = &fa.base});
    pgw_buf_t w = {0};
    char name[32], value[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "custom.p%d", i);
        snprintf(value, sizeof value, "v%04d", i);
        pgt_msg_param_status(&w, name, value);
    }
    feed(s, &w);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    size_t calls = fa.calls;
    for (int round = 0; round < 40; round++) {
        w.len = 0;
        for (int i = 0; i < 1000; i++) {
            snprintf(name, sizeof name, "custom.p%d", i);
            snprintf(value, sizeof value, "w%04d", (i + round) % 1000);
            pgt_msg_param_status(&w, name, value);
        }
        feed(s, &w);
    }
    assert_int_equal(fa.calls, calls); /* 40,000 updates, no allocation */
    for (int i = 0; i < 1000; i += 37) {
        snprintf(name, sizeof name, "custom.p%d", i);
        snprintf(value, sizeof value, "w%04d", (i + 39) % 1000);
        assert_string_equal(pgw_session_parameter(s, name), value);
    }
    assert_null(pgw_session_parameter(s, "custom.p1000"));
    pgw_session_free(s);

    w.len = 0;
    for (int i = 0; i < PGW__MAX_SERVER_PARAMS + 1; i++) {
        snprintf(name, sizeof name, "flood.p%d", i);
        pgt_msg_param_status(&w, name, "x");
    }
    expect_broken(&w, PGW_EPROTO);
    pgw_buf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameter_flood),    cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_bad_rows),           cmocka_unit_test(test_bad_messages),
        cmocka_unit_test(test_truncated_then_eof), cmocka_unit_test(test_max_message),
        cmocka_unit_test(test_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
