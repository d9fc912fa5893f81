/*
 * What the fuzz targets found in the session, each as the smallest
 * scripted exchange that shows it (tests/fuzz/fuzz_session_struct.c found
 * them; the inputs are also in its corpus). Every case must leave the
 * session consistent: each accepted callback fired once, nothing leaked.
 */
#include "test_session_util.h"

static rec_t R;
static pgt_alloc_t fa = PGT_ALLOC_INITIALIZER(fa);

static int query(pgw_session_t *s, const char *sql, int i)
{
    pgw_param_t p = pgw_int8(i);
    return pgw_session_query(s, sql, &p, 1, 0, rec_cb, UD(i));
}

/* A cached statement evicted: its Close travels, as an entry of the
 * session's own without a result, ahead of the next request. The server's
 * error for that Close (a FATAL when the backend is terminated just then:
 * pg_terminate_backend, a shutdown, idle_session_timeout) once dereferenced
 * the result that entry does not have. */
static void test_error_at_internal_close(void **state)
{
    (void)state;
    static const char *const severities[] = {"FATAL", "ERROR"};
    for (int k = 0; k < 2; k++) {
        pgw_session_t *s = ready_session(
            &R, &(sess_opts_t){.stmt_cache = true, .stmt_cache_size = 1, .alloc = &fa.base});
        pgw_buf_t w = {0};
        /* A cached (first use, then prepared), then B evicts it. */
        for (int i = 0; i < 4; i++) {
            assert_int_equal(query(s, i < 2 ? "SELECT $1::int8" : "SELECT $1::int8 + 0", i), 0);
            take_out(s, &w);
            pgw_buf_reset(&w);
            w_int8_query(&w, i, 1);
            feed(s, &w);
            assert_int_equal(R.done[i].status, 0);
        }
        pgw_stmt_cache_stats_t st;
        pgw_session_stmt_cache_stats(s, &st);
        assert_int_equal(st.evictions, 1);
        /* The next request carries the owed Close first. */
        assert_int_equal(query(s, "SELECT $1::int8 + 1", 4), 0);
        pgw_buf_reset(&w);
        take_out(s, &w);
        char types[16];
        msg_types(&w, 0, types, sizeof types);
        assert_int_equal(types[0], 'C');
        pgw_buf_reset(&w);
        pgt_msg_error(&w, severities[k], k ? "XX000" : "57P01", "at the Close");
        if (k) pgt_msg_ready(&w, 'I');
        pgw_session_recv(s, w.data, w.len);
        assert_int_equal(R.done[4].calls, 1);
        if (k == 0) {
            assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
            assert_int_equal(R.done[4].status, PGW_ECONNLOST);
        }
        assert_int_equal(pgw_session_pending(s), 0);
        pgw_session_free(s);
        assert_int_equal(fa.blocks, 0);
        pgw_buf_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_at_internal_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
