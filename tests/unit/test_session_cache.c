/*
 * The statement cache's messages and bookkeeping, driven from byte arrays:
 * the shape of a first use, a prepare and a hit; a refused statement
 * prepared again and retried; a Close the server skipped sent again; a
 * refused submit leaving nothing in the cache; no allocation on a hit;
 * two sessions' names differ, by a nonce not drawn from OpenSSL.
 * test_stmt_cache.c runs the same against the real server.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>

#include "test_session_util.h"

static rec_t R;

/* The statement name of the first Parse (or, without one, Bind) in the
 * pending output, and the message types; the output is consumed. */
static void take(pgw_session_t *s, char *types, size_t cap, char name[64])
{
    pgw_buf_t w = {0};
    take_out(s, &w);
    msg_types(&w, 0, types, cap);
    name[0] = '\0';
    for (size_t at = 0; at + 5 <= w.len;) {
        uint32_t len = (uint32_t)w.data[at + 1] << 24 | (uint32_t)w.data[at + 2] << 16 |
                       (uint32_t)w.data[at + 3] << 8 | w.data[at + 4];
        const char *body = (const char *)w.data + at + 5;
        if (w.data[at] == 'P') {
            snprintf(name, 64, "%s", body);
            break;
        }
        if (w.data[at] == 'B') {
            snprintf(name, 64, "%s", body + strlen(body) + 1);
            break;
        }
        at += 1 + len;
    }
    pgw_buf_free(&w);
}

static pgw_stmt_cache_stats_t stats(pgw_session_t *s)
{
    pgw_stmt_cache_stats_t st;
    pgw_session_stmt_cache_stats(s, &st);
    return st;
}

/* The replies to a hit: Bind, the row, the tag, ReadyForQuery. */
static void w_hit(pgw_buf_t *w, int64_t v)
{
    pgt_msg(w, '2', NULL, 0);
    pgt_msg_data_row_int8(w, v);
    pgt_msg_command_complete(w, "SELECT 1");
    pgt_msg_ready(w, 'I');
}

static int query(pgw_session_t *s, const char *sql, int i)
{
    pgw_param_t p = pgw_int8(i);
    return pgw_session_query(s, sql, &p, 1, 0, rec_cb, UD(i));
}

/* Run sql twice (first use, then its prepare), answering each. */
static void warm(pgw_session_t *s, const char *sql, char name[64])
{
    char types[32];
    pgw_buf_t w = {0};
    assert_int_equal(query(s, sql, 0), 0);
    take(s, types, sizeof types, name);
    assert_string_equal(types, "PBDES");
    assert_string_equal(name, "");
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    assert_int_equal(query(s, sql, 1), 0);
    take(s, types, sizeof types, name);
    assert_string_equal(types, "PBDES");
    assert_memory_equal(name, "pgw_", 4);
    pgw_buf_reset(&w);
    w_int8_query(&w, 2, 1);
    feed(s, &w);
    assert_int_equal(R.done[1].status, 0);
    assert_int_equal(R.done[1].value, 2);
    pgw_buf_free(&w);
}

static void test_first_use_prepare_hit(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    char name[64], hit[64], types[32];
    warm(s, "SELECT $1::int8", name);
    assert_int_equal(query(s, "SELECT $1::int8", 2), 0);
    take(s, types, sizeof types, hit);
    assert_string_equal(types, "BES"); /* no Parse, no Describe */
    assert_string_equal(hit, name);
    pgw_buf_t w = {0};
    w_hit(&w, 3);
    feed(s, &w);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[2].value, 3);
    pgw_stmt_cache_stats_t st = stats(s);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 2);
    assert_int_equal(st.prepares, 1);
    assert_int_equal(st.entries, 1);

    /* Another session's names differ (a random part per session). */
    rec_t r2;
    pgw_session_t *s2 = ready_session(&r2, &(sess_opts_t){.stmt_cache = true});
    char name2[64];
    warm(s2, "SELECT $1::int8", name2);
    assert_string_not_equal(name, name2);
    pgw_session_free(s2);
    g_rec = &R;
    pgw_buf_free(&w);
    pgw_session_free(s);
}

/* 26000 at a hit's Bind with nothing behind it and no transaction: the
 * ReadyForQuery brings a new Parse under a new name, and the caller sees
 * one success. Inside a transaction ('T'... 'E'): PGW_ESTMTINVALID. */
static void test_refused_hit_retried(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    char name[64], again[64], types[32];
    warm(s, "SELECT $1::int8", name);
    assert_int_equal(query(s, "SELECT $1::int8", 2), 0);
    take(s, types, sizeof types, again);
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[2].calls, 0);
    take(s, types, sizeof types, again);
    assert_string_equal(types, "PBDES");
    assert_memory_equal(again, "pgw_", 4);
    assert_string_not_equal(again, name);
    pgw_buf_reset(&w);
    w_int8_query(&w, 7, 1);
    feed(s, &w);
    assert_int_equal(R.done[2].calls, 1);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[2].value, 7);
    pgw_stmt_cache_stats_t st = stats(s);
    assert_int_equal(st.invalidations, 1);
    assert_int_equal(st.reprepares, 1);

    /* The new statement hits; refused again inside a transaction block. */
    assert_int_equal(query(s, "SELECT $1::int8", 3), 0);
    take(s, types, sizeof types, name);
    assert_string_equal(types, "BES");
    assert_string_equal(name, again);
    pgw_buf_reset(&w);
    pgt_msg_error(&w, "ERROR", "0A000", "cached plan must not change result type");
    pgt_msg_ready(&w, 'E');
    feed(s, &w);
    assert_int_equal(R.done[3].calls, 1);
    assert_int_equal(R.done[3].status, PGW_ESTMTINVALID);
    assert_string_equal(R.done[3].sqlstate, "0A000");
    /* 0A000: the statement still exists, so its Close goes out with the
     * next request. */
    assert_int_equal(query(s, "SELECT $1::int8", 4), 0);
    take(s, types, sizeof types, name);
    assert_string_equal(types, "CPBDES");
    pgw_buf_free(&w);
    pgw_session_free(s);
}

/* A Close owed for an evicted statement, skipped by the server after an
 * error earlier in its sync group, is sent again with the next request;
 * the statement whose prepare was skipped leaves the cache. */
static void test_skipped_close_sent_again(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true, .stmt_cache_size = 1});
    char name[64], types[32];
    warm(s, "SELECT $1::int8", name);
    /* Seen once: its next use is prepared, evicting the first. */
    assert_int_equal(query(s, "SELECT $1::int8 + 0", 0), 0);
    take(s, types, sizeof types, name);
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    pgw_param_t p = pgw_int8(1);
    pgw_request_t reqs[] = {PGW_QUERY("SELECT broken", NULL, 0, rec_cb, UD(10)),
                            PGW_QUERY("SELECT $1::int8 + 0", &p, 1, rec_cb, UD(11)),
                            PGW_QUERY("SELECT 5::int8", NULL, 0, rec_cb, UD(12))};
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, 0, rec_cb, UD(13)), 0);
    take(s, types, sizeof types, name);
    /* broken | the prepare, evicting | the owed Close | the last | Sync */
    assert_string_equal(types, "PBDEPBDECPBDES");
    assert_int_equal(stats(s).evictions, 1);
    pgw_buf_reset(&w);
    pgt_msg_error(&w, "ERROR", "42601", "syntax error");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[10].status, PGW_ESERVER);
    assert_int_equal(R.done[11].status, PGW_EABORTED);
    assert_int_equal(R.done[12].status, PGW_EABORTED);
    assert_int_equal(stats(s).entries, 0); /* the skipped prepare left */
    /* The next request carries the Close again, and re-prepares at once. */
    assert_int_equal(query(s, "SELECT $1::int8 + 0", 14), 0);
    take(s, types, sizeof types, name);
    assert_string_equal(types, "CCPBDES");
    assert_memory_equal(name, "pgw_", 4);
    pgw_buf_free(&w);
    pgw_session_free(s);
}

/* A refused submit leaves nothing of it in the cache. */
static void test_refused_batch_rolls_back(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    pgw_param_t p = pgw_int8(1);
    pgw_request_t reqs[] = {PGW_QUERY("SELECT $1::int8", &p, 1, rec_cb, UD(0)),
                            PGW_QUERY("SELECT $1::int8", &p, 1, rec_cb, UD(1)),
                            PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(2))};
    reqs[2].cache = 7;
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, 0, rec_cb, UD(3)), PGW_EINVAL);
    pgw_stmt_cache_stats_t st = stats(s);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.prepares, 0);
    char types[32], name[64];
    take(s, types, sizeof types, name);
    assert_string_equal(types, "");
    pgw_session_free(s);
}

/* Hits allocate nothing once warm. */
static void test_hits_do_not_allocate(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true, .alloc = count_alloc});
    char name[64], types[32];
    warm(s, "SELECT $1::int8", name);
    pgw_buf_t w = {0};
    for (int i = 0; i < 8; i++)
        w_hit(&w, 5);
    for (int round = 0; round < 3; round++) {
        if (round == 2) g_count.calls = 0;
        for (int i = 0; i < 8; i++)
            assert_int_equal(query(s, "SELECT $1::int8", 100 + i), 0);
        take(s, types, sizeof types, name);
        feed(s, &w);
        assert_int_equal(R.done[107].status, 0);
        assert_int_equal(R.done[107].value, 5);
    }
    assert_int_equal(g_count.calls, 0);
    assert_int_equal(stats(s).hits, 24);
    pgw_buf_free(&w);
    pgw_session_free(s);
}

/* OpenSSL's generator, counted: this executable's definition is the one
 * libpgwire's objects call. */
static int g_rand_calls;

int RAND_bytes(unsigned char *buf, int num);
int RAND_bytes(unsigned char *buf, int num)
{
    g_rand_calls++;
    int (*next)(unsigned char *, int);
    void *sym = dlsym(RTLD_NEXT, "RAND_bytes");
    memcpy(&next, &sym, sizeof next); /* ISO C: no cast from void * */
    return next ? next(buf, num) : 0;
}

/* Two sessions name the same statement differently (pgw_<nonce>_<id>:
 * the same id, not the same nonce, though the server gave both the same
 * backend key), and drawing the nonce does not start OpenSSL's generator
 * where the kernel has one (its first use in a process costs
 * milliseconds). */
static void test_sessions_names_differ(void **state)
{
    (void)state;
    char a[64], b[64];
    g_rand_calls = 0;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    warm(s, "SELECT $1::int8", a);
    pgw_session_free(s);
    s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    warm(s, "SELECT $1::int8", b);
    pgw_session_free(s);
    assert_int_equal(strlen(a), strlen(b));
    assert_int_equal(strlen(a), 4 + 16 + 2);
    assert_string_equal(a + 20, b + 20); /* "_<id>" */
    assert_memory_not_equal(a, b, 20);
#if defined(PGW_HAVE_GETENTROPY)
    assert_int_equal(g_rand_calls, 0);
#else
    assert_int_equal(g_rand_calls, 2);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_use_prepare_hit),
        cmocka_unit_test(test_refused_hit_retried),
        cmocka_unit_test(test_skipped_close_sent_again),
        cmocka_unit_test(test_refused_batch_rolls_back),
        cmocka_unit_test(test_hits_do_not_allocate),
        cmocka_unit_test(test_sessions_names_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
