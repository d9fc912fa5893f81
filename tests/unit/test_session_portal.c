/*
 * Portals, open groups, Flush and read backpressure on the session layer,
 * driven from byte arrays: what is written (and, above all, which Sync is
 * not written yet) and when each callback fires.
 */
#include "test_session_util.h"

static rec_t R;

static const char *const int8_name[] = {"g"};
static const uint32_t int8_oid[] = {20};

/* The answer to a portal open: ParseComplete, BindComplete, the columns,
 * rows first..last, then PortalSuspended ('s') or CommandComplete. */
static void w_batch(pgw_buf_t *w, int parse_bind, int64_t first, int64_t last, int suspended)
{
    if (parse_bind) {
        pgt_msg(w, '1', NULL, 0);
        pgt_msg(w, '2', NULL, 0);
    }
    pgt_msg_row_desc(w, 1, int8_name, int8_oid, 1);
    for (int64_t v = first; v <= last; v++)
        pgt_msg_data_row_int8(w, v);
    if (suspended)
        pgt_msg(w, 's', NULL, 0);
    else
        pgt_msg_command_complete(w, "SELECT 5");
}

/* The text of the first cstring after the message at offset at's header. */
static const char *first_cstr(const pgw_buf_t *w, size_t at)
{
    return (const char *)w->data + at + 5;
}

static void test_portal_batches_and_close(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_request_t open = PGW_QUERY("SELECT g FROM generate_series(1,5) g", NULL, 0, keep_cb, UD(0));
    open.portal = "c1";
    open.max_rows = 3;
    assert_int_equal(pgw_session_submit(s, &open), 0);
    pgw_buf_t out = {0};
    take_out(s, &out);
    char types[32];
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "PBDEH"); /* no Sync: the portal's group stays open */
    pgw_buf_free(&out);

    pgw_buf_t w = {0};
    w_batch(&w, 1, 1, 3, 1);
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(pgw_result_nrows(R.keep[0]), 3);
    assert_true(pgw_result_suspended(R.keep[0]));
    pgw_result_free(R.keep[0]);

    /* A request submitted meanwhile joins the group: no Sync of its own. */
    pgw_param_t p = pgw_int8(7);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(1)), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEH");

    pgw_request_t fetch = PGW_FETCH("c1", 3, keep_cb, UD(2));
    assert_int_equal(pgw_session_submit(s, &fetch), 0);
    take_out(s, &out);
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "DEH");
    assert_string_equal(first_cstr(&out, 0) + 1, "c1"); /* Describe 'P' "c1" */
    pgw_buf_free(&out);

    pgw_buf_reset(&w);
    w_int8_query(&w, 7, 0);
    w_batch(&w, 0, 4, 5, 0);
    feed(s, &w);
    assert_int_equal(R.done[1].status, 0);
    assert_int_equal(R.done[1].value, 7);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(pgw_result_nrows(R.keep[2]), 2);
    assert_false(pgw_result_suspended(R.keep[2]));
    int64_t v;
    assert_int_equal(pgw_result_int8(R.keep[2], 1, 0, &v), 0);
    assert_int_equal(v, 5);
    pgw_result_free(R.keep[2]);

    /* Closing the last portal ends the group with its Sync; the close
     * completes at ReadyForQuery (the implicit commit). */
    pgw_request_t close = PGW_CLOSE_PORTAL("c1", rec_cb, UD(3));
    assert_int_equal(pgw_session_submit(s, &close), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "CS");
    pgw_buf_reset(&w);
    pgt_msg(&w, '3', NULL, 0);
    feed(s, &w);
    assert_int_equal(R.done[3].calls, 0);
    pgw_buf_reset(&w);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[3].calls, 1);
    assert_int_equal(R.done[3].status, 0);

    /* The group is over: a query has its own Sync again. */
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(4)), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDES");
    assert_int_equal(pgw_session_pending(s), 1);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_two_portals_one_sync(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_request_t a = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0));
    a.portal = "a";
    a.max_rows = 1;
    pgw_request_t b = a;
    b.portal = "b";
    b.ud = UD(1);
    assert_int_equal(pgw_session_submit(s, &a), 0);
    assert_int_equal(pgw_session_submit(s, &b), 0);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEHPBDEH");
    pgw_request_t ca = PGW_CLOSE_PORTAL("a", rec_cb, UD(2));
    pgw_request_t cb = PGW_CLOSE_PORTAL("b", rec_cb, UD(3));
    assert_int_equal(pgw_session_submit(s, &ca), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "CH"); /* b is still open: no Sync yet */
    assert_int_equal(pgw_session_submit(s, &cb), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "CS");
    pgw_session_free(s);
}

/* Callbacks 0..n-1 fired once each, successfully, in that order. */
static void assert_done_in_order(int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(R.done[i].calls, 1);
        assert_int_equal(R.done[i].status, 0);
        assert_int_equal(R.done[i].order, i);
    }
}

/* A batch ending with FLUSH: its results arrive and its callbacks fire
 * while no Sync has been written; a SYNC ends the group later. */
static void test_flush_results_before_sync(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t p[2] = {pgw_int8(1), pgw_int8(2)};
    pgw_request_t reqs[3] = {
        PGW_QUERY("SELECT $1::int8", &p[0], 1, rec_cb, UD(0)),
        PGW_QUERY("SELECT $1::int8", &p[1], 1, rec_cb, UD(1)),
        PGW_FLUSH(rec_cb, UD(2)),
    };
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, 0, rec_cb, UD(3)), 0);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEPBDEH");
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 0);
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1); /* before the second answer, and no Sync */
    assert_int_equal(R.done[1].calls, 0);
    pgw_buf_reset(&w);
    w_int8_query(&w, 2, 0);
    feed(s, &w);
    assert_done_in_order(4);
    assert_int_equal(R.done[1].value, 2);
    size_t n = 1;
    assert_null(pgw_session_pending_output(s, &n)); /* still no Sync */
    /* A later request joins the open group, a SYNC ends it. */
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p[0], 1, 0, rec_cb, UD(4)), 0);
    assert_int_equal(pgw_session_sync(s, rec_cb, UD(5)), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEHS");
    pgw_buf_reset(&w);
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    assert_int_equal(R.done[4].status, 0);
    assert_int_equal(R.done[5].calls, 1);
    assert_int_equal(R.done[5].status, 0);
    /* A FLUSH with nothing before it has nothing to wait for. */
    pgw_request_t f = PGW_FLUSH(rec_cb, UD(6));
    assert_int_equal(pgw_session_submit(s, &f), PGW_EINVAL);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A batch ending with a FLUSH flagged PGW_Q_NO_MESSAGE (libpq's PQflush in
 * pipeline mode): its requests go out without a Flush message, the group
 * stays open, and the answers the server gives at the later Sync complete
 * them and the FLUSH, in order. The flag on another kind is refused. */
static void test_flush_without_message(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t p = pgw_int8(7);
    pgw_request_t reqs[2] = {
        PGW_QUERY("SELECT $1::int8", &p, 1, rec_cb, UD(0)),
        PGW_FLUSH(rec_cb, UD(1)),
    };
    reqs[1].flags = PGW_Q_NO_MESSAGE;
    assert_int_equal(pgw_session_submit_batch(s, reqs, 2, 0, rec_cb, UD(2)), 0);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDE");
    assert_true(pgw_session_group_open(s));
    assert_int_equal(pgw_session_sync(s, rec_cb, UD(3)), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "S");
    pgw_buf_t w = {0};
    w_int8_query(&w, 7, 1);
    feed(s, &w);
    assert_done_in_order(4);
    assert_int_equal(R.done[0].value, 7);
    pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(4));
    q.flags = PGW_Q_NO_MESSAGE;
    assert_int_equal(pgw_session_submit(s, &q), PGW_EINVAL);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* An error in an open group: the session sends the group's Sync at once,
 * the requests already sent in it are aborted, later ones run on their own. */
static void test_error_in_open_group_syncs(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_request_t open = PGW_QUERY("SELECT 1/0", NULL, 0, rec_cb, UD(0));
    open.portal = "c";
    open.max_rows = 10;
    assert_int_equal(pgw_session_submit(s, &open), 0);
    pgw_request_t fetch = PGW_FETCH("c", 10, rec_cb, UD(1));
    assert_int_equal(pgw_session_submit(s, &fetch), 0);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEHDEH");
    pgw_buf_t w = {0};
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg_row_desc(&w, 1, int8_name, int8_oid, 1);
    pgt_msg_error(&w, "ERROR", "22012", "division by zero");
    feed(s, &w);
    assert_int_equal(R.done[0].status, PGW_ESERVER);
    assert_string_equal(R.done[0].sqlstate, "22012");
    assert_int_equal(R.done[1].status, PGW_EABORTED);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "S"); /* the group's Sync, sent by the session */
    pgw_request_t close = PGW_CLOSE_PORTAL("c", rec_cb, UD(2));
    assert_int_equal(pgw_session_submit(s, &close), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "CS"); /* a group of its own */
    pgw_buf_reset(&w);
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '3', NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_simple_ends_open_group(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_request_t open = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0));
    open.max_rows = 1; /* the unnamed portal */
    assert_int_equal(pgw_session_submit(s, &open), 0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 2", rec_cb, UD(1)), 0);
    char types[32];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEHSQ");
    pgw_request_t bad = PGW_FETCH(NULL, 1, rec_cb, UD(2));
    assert_int_equal(pgw_session_submit(s, &bad), PGW_EINVAL);
    pgw_request_t bad2 = PGW_PREPARE("x", "SELECT 1", NULL, 0, rec_cb, UD(2));
    bad2.portal = "p";
    assert_int_equal(pgw_session_submit(s, &bad2), PGW_EINVAL);
    pgw_session_free(s);
    assert_int_equal(R.done[0].status, PGW_ECANCELED);
    assert_int_equal(R.done[1].status, PGW_ECANCELED);
}

/* ------------------------------------------------------ read backpressure */

static int g_rows, g_pause_at;

static int pausing_row(const pgw_row_t *row, void *ud)
{
    (void)ud;
    g_rows++;
    return (int)row->index + 1 == g_pause_at ? PGW_ROW_PAUSE : 0;
}

static void test_row_pause_keeps_input(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    g_rows = 0;
    g_pause_at = 2;
    assert_int_equal(pgw_session_query_rows(s, "SELECT g", NULL, 0, 0, pausing_row, rec_cb, UD(0)),
                     0);
    pgw_param_t p = pgw_int8(9);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(1)), 0);
    pgw_buf_t w = {0};
    w_batch(&w, 1, 1, 5, 0);
    pgt_msg_ready(&w, 'I');
    w_int8_query(&w, 9, 1);
    feed(s, &w); /* everything at once: the pause keeps the rest unparsed */
    assert_int_equal(g_rows, 2);
    assert_int_equal(R.done[0].calls, 0);
    assert_true(pgw_session_input_paused(s));
    assert_int_equal(pgw_session_resume_input(s), 0);
    assert_int_equal(g_rows, 5);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].value, 9);
    assert_false(pgw_session_input_paused(s));
    /* A pause from outside: bytes committed are kept, not processed. */
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(2)), 0);
    assert_int_equal(pgw_session_pause_input(s), 0);
    pgw_buf_reset(&w);
    w_int8_query(&w, 9, 1);
    feed(s, &w);
    assert_int_equal(R.done[2].calls, 0);
    assert_int_equal(pgw_session_resume_input(s), 0);
    assert_int_equal(R.done[2].calls, 1);
    assert_int_equal(R.done[2].value, 9);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portal_batches_and_close),
        cmocka_unit_test(test_two_portals_one_sync),
        cmocka_unit_test(test_flush_results_before_sync),
        cmocka_unit_test(test_flush_without_message),
        cmocka_unit_test(test_error_in_open_group_syncs),
        cmocka_unit_test(test_simple_ends_open_group),
        cmocka_unit_test(test_row_pause_keeps_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
