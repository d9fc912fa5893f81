/*
 * The replication stream over the sans-IO session, driven from byte
 * arrays: CopyBoth carried by the stream's request, XLogData and
 * keepalives parsed and handed out, reply-requested keepalives answered at
 * once, standby status updates byte for byte (walsender.c's
 * ProcessStandbyReplyMessage reads 'r', write, flush, apply, time, reply
 * flag), only the confirmed LSN reported flushed, our CopyDone on stop and
 * in answer to the server's, and the malformed stream messages, a
 * callback's abandon and the server's error ending the stream.
 */
#include "test_session_util.h"

#include "pgwire/replication.h"

#define CLOCK_US INT64_C(777000111)

typedef struct got {
    int xlogs, keepalives, ends;
    pgw_repl_xlog_t last;
    char payload[64];
    pgw_repl_keepalive_t ka;
    int end_status;
    int xlog_rc; /* what on_xlog returns */
} got_t;

static int on_xlog(const pgw_repl_xlog_t *x, void *ud)
{
    got_t *g = ud;
    g->xlogs++;
    g->last = *x;
    assert_true(x->len < sizeof g->payload);
    memcpy(g->payload, x->data, x->len);
    g->payload[x->len] = '\0';
    g->last.data = NULL;
    return g->xlog_rc;
}

static void on_keepalive(const pgw_repl_keepalive_t *k, void *ud)
{
    got_t *g = ud;
    g->keepalives++;
    g->ka = *k;
}

static void on_end(int status, pgw_result_t *res, void *ud)
{
    got_t *g = ud;
    g->ends++;
    g->end_status = status;
    pgw_result_free(res);
}

static int64_t fixed_clock(void *ud)
{
    (void)ud;
    return CLOCK_US;
}

static pgw_repl_stream_t *new_stream(got_t *g)
{
    pgw_repl_stream_config_t cfg;
    pgw_repl_stream_config_init(&cfg);
    cfg.on_xlog = on_xlog;
    cfg.on_keepalive = on_keepalive;
    cfg.on_end = on_end;
    cfg.now = fixed_clock;
    cfg.ud = g;
    pgw_repl_stream_t *st = NULL;
    assert_int_equal(pgw_repl_stream_new(&cfg, &st), 0);
    return st;
}

static void put64(pgw_buf_t *w, uint64_t v)
{
    pgt_msg_put_i32(w, (int32_t)(uint32_t)(v >> 32));
    pgt_msg_put_i32(w, (int32_t)(uint32_t)v);
}

static void w_copy_both(pgw_buf_t *w)
{
    size_t at = pgt_msg_begin(w, 'W');
    pgt_msg_put_u8(w, 0);
    pgt_msg_put_i16(w, 0);
    pgt_msg_end(w, at);
}

static void w_xlog(pgw_buf_t *w, uint64_t start, uint64_t end, int64_t t, const char *payload)
{
    size_t at = pgt_msg_begin(w, 'd');
    pgt_msg_put_u8(w, 'w');
    put64(w, start);
    put64(w, end);
    put64(w, (uint64_t)t);
    pgt_msg_raw(w, payload, strlen(payload));
    pgt_msg_end(w, at);
}

static void w_keepalive(pgw_buf_t *w, uint64_t end, int64_t t, uint8_t reply)
{
    size_t at = pgt_msg_begin(w, 'd');
    pgt_msg_put_u8(w, 'k');
    put64(w, end);
    put64(w, (uint64_t)t);
    pgt_msg_put_u8(w, reply);
    pgt_msg_end(w, at);
}

/* The server's end of a logical stream after CopyDone (PostgreSQL 15). */
static void w_stream_end(pgw_buf_t *w)
{
    pgt_msg_command_complete(w, "COPY 0");
    pgt_msg_command_complete(w, "START_REPLICATION");
    pgt_msg_ready(w, 'I');
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* The standby status update at offset at of out: a CopyData of 34 bytes. */
static void check_status(const pgw_buf_t *out, size_t at, uint64_t write, uint64_t flush,
                         uint8_t reply)
{
    assert_true(at != SIZE_MAX);
    assert_int_equal(out->data[at], 'd');
    assert_int_equal(msg_len_at(out, at), 4 + 34);
    const uint8_t *p = out->data + at + 5;
    assert_int_equal(p[0], 'r');
    assert_int_equal(get64(p + 1), write);
    assert_int_equal(get64(p + 9), flush);
    assert_int_equal(get64(p + 17), flush); /* apply: what was confirmed */
    assert_int_equal(get64(p + 25), (uint64_t)CLOCK_US);
    assert_int_equal(p[33], reply);
}

/* The hot standby feedback at offset at of out: a CopyData of 25 bytes,
 * each full transaction id as its xid, then its epoch. */
static void check_feedback(const pgw_buf_t *out, size_t at, uint64_t xmin, uint64_t catalog_xmin)
{
    assert_true(at != SIZE_MAX);
    assert_int_equal(out->data[at], 'd');
    assert_int_equal(msg_len_at(out, at), 4 + 25);
    const uint8_t *p = out->data + at + 5;
    assert_int_equal(p[0], 'h');
    assert_int_equal(get64(p + 1), (uint64_t)CLOCK_US);
    assert_int_equal(get64(p + 9) >> 32, (uint32_t)xmin);
    assert_int_equal(get64(p + 9) & 0xffffffffu, xmin >> 32);
    assert_int_equal(get64(p + 17) >> 32, (uint32_t)catalog_xmin);
    assert_int_equal(get64(p + 17) & 0xffffffffu, catalog_xmin >> 32);
}

/* A ready session streaming: the request written, CopyBoth begun. */
static pgw_session_t *streaming(rec_t *rec, got_t *g, pgw_repl_stream_t **st)
{
    pgw_session_t *s = ready_session(rec, NULL);
    *st = new_stream(g);
    pgw_request_t req;
    assert_int_equal(pgw_repl_stream_request(*st, s, "START_REPLICATION SLOT s LOGICAL 0/0", &req),
                     0);
    assert_int_equal(pgw_session_submit(s, &req), 0);
    char t[16];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "Q");
    assert_int_equal(pgw_repl_stream_active(*st), 0); /* not begun */
    assert_int_equal(pgw_repl_stream_send_status(*st, false), PGW_EBUSY);
    assert_int_equal(pgw_repl_stream_send_feedback(*st, 5, 5), PGW_EBUSY);
    pgw_buf_t w = {0};
    w_copy_both(&w);
    feed(s, &w);
    pgw_buf_free(&w);
    assert_int_equal(pgw_repl_stream_active(*st), 1);
    assert_int_equal(pgw_session_copy_both_active(s), 1);
    return s;
}

/* The server's CopyDone and the end of the command: the stream completes
 * with status, and the client writes nothing more (its CopyDone went
 * before). */
static void server_ends(pgw_session_t *s, const got_t *g, int status)
{
    pgw_buf_t w = {0};
    pgt_msg(&w, 'c', NULL, 0);
    w_stream_end(&w);
    feed(s, &w);
    pgw_buf_free(&w);
    char t[16];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "");
    assert_int_equal(g->ends, 1);
    assert_int_equal(g->end_status, status);
}

static void finish(pgw_session_t *s, pgw_repl_stream_t *st, rec_t *rec)
{
    pgw_session_free(s);
    pgw_repl_stream_free(st);
    free(rec);
}

static void test_stream_status_and_stop(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    got_t g = {0};
    pgw_repl_stream_t *st;
    pgw_session_t *s = streaming(rec, &g, &st);
    pgw_buf_t w = {0}, out = {0};
    w_xlog(&w, 0x1000, 0x2000, 5, "BEGIN");
    w_xlog(&w, 0x1800, 0x2000, 6, "abc");
    w_keepalive(&w, 0x3000, 7, 0);
    feed(s, &w);
    assert_int_equal(g.xlogs, 2);
    assert_int_equal(g.last.wal_start, 0x1800);
    assert_int_equal(g.last.wal_end, 0x2000);
    assert_int_equal(g.last.send_time, 6);
    assert_string_equal(g.payload, "abc");
    assert_int_equal(g.keepalives, 1);
    assert_int_equal(g.ka.wal_end, 0x3000);
    assert_false(g.ka.reply_requested);
    take_out(s, &out);
    assert_int_equal(out.len, 0); /* nothing asked: nothing sent */

    /* a reply-requested keepalive is answered at once; nothing confirmed
     * yet: flush and apply 0 (InvalidXLogRecPtr, ignored by the server) */
    pgw_buf_reset(&w);
    w_keepalive(&w, 0x3000, 8, 1);
    feed(s, &w);
    assert_true(g.ka.reply_requested);
    take_out(s, &out);
    check_status(&out, 0, 0x1800, 0, 0);
    assert_int_equal(find_msg(&out, 5 + 34, 'd'), SIZE_MAX);

    /* only the confirmed LSN is flushed; a lower one is ignored */
    assert_int_equal(pgw_repl_stream_confirm(st, 0x1400), 0);
    assert_int_equal(pgw_repl_stream_confirm(st, 0x1200), 0);
    assert_int_equal(pgw_repl_stream_confirmed(st), 0x1400);
    assert_int_equal(pgw_repl_stream_written(st), 0x1800);
    assert_int_equal(pgw_repl_stream_send_status(st, true), 0);
    pgw_buf_reset(&out);
    take_out(s, &out);
    check_status(&out, 0, 0x1800, 0x1400, 1);

    /* hot standby feedback: full ids as xid, epoch; nothing else sent */
    assert_int_equal(pgw_repl_stream_send_feedback(st, 0x200000010ull, 0x100000009ull), 0);
    pgw_buf_reset(&out);
    take_out(s, &out);
    check_feedback(&out, 0, 0x200000010ull, 0x100000009ull);
    assert_int_equal(out.len, 5 + 25);

    /* stop: a last status update, then CopyDone */
    assert_int_equal(pgw_repl_stream_stop(st), 0);
    assert_int_equal(pgw_repl_stream_stop(st), PGW_EBUSY);
    assert_int_equal(pgw_repl_stream_active(st), 0);
    pgw_buf_reset(&out);
    take_out(s, &out);
    char t[16];
    msg_types(&out, 0, t, sizeof t);
    assert_string_equal(t, "dc");
    check_status(&out, 0, 0x1800, 0x1400, 0);
    /* the server's data before its CopyDone still arrives */
    pgw_buf_reset(&w);
    w_xlog(&w, 0x1900, 0x2000, 9, "late");
    pgt_msg(&w, 'c', NULL, 0);
    w_stream_end(&w);
    feed(s, &w);
    assert_int_equal(g.xlogs, 3);
    assert_int_equal(g.ends, 1);
    assert_int_equal(g.end_status, 0);
    pgw_buf_reset(&out);
    take_out(s, &out);
    assert_int_equal(out.len, 0); /* no second CopyDone */
    assert_int_equal(pgw_session_copy_both_send(s, "x", 1), PGW_EBUSY);
    assert_int_equal(pgw_session_copy_both_end(s), PGW_EBUSY);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    finish(s, st, rec);
}

/* The server ends the stream (its CopyDone): ours answers it. */
static void test_server_ends(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    got_t g = {0};
    pgw_repl_stream_t *st;
    pgw_session_t *s = streaming(rec, &g, &st);
    pgw_buf_t w = {0};
    pgt_msg(&w, 'c', NULL, 0);
    feed(s, &w);
    char t[16];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "c");
    assert_int_equal(pgw_repl_stream_active(st), 0);
    assert_int_equal(g.ends, 0);
    /* a keepalive after the server's CopyDone (a walsender sends one when
     * it is due) is dropped, as libpq drops it */
    pgw_buf_reset(&w);
    w_keepalive(&w, 0x10, 1, 1);
    feed(s, &w);
    assert_int_equal(g.keepalives, 0);
    assert_int_equal(rec->broken_calls, 0);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "");
    pgw_buf_reset(&w);
    w_stream_end(&w);
    feed(s, &w);
    assert_int_equal(g.ends, 1);
    assert_int_equal(g.end_status, 0);
    pgw_buf_free(&w);
    finish(s, st, rec);
}

/* A stream message the stream cannot read ends it: CopyDone at once, and
 * the status PGW_EPROTO when the server has ended it too. */
static void malformed(const uint8_t *body, size_t len)
{
    rec_t *rec = calloc(1, sizeof *rec);
    got_t g = {0};
    pgw_repl_stream_t *st;
    pgw_session_t *s = streaming(rec, &g, &st);
    pgw_buf_t w = {0};
    pgt_msg(&w, 'd', body, len);
    w_xlog(&w, 1, 2, 3, "dropped");
    feed(s, &w);
    assert_int_equal(g.xlogs, 0);
    char t[16];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "c");
    pgw_buf_free(&w);
    server_ends(s, &g, PGW_EPROTO);
    assert_int_equal(rec->broken_calls, 0); /* the connection stays */
    finish(s, st, rec);
}

static void test_malformed(void **state)
{
    (void)state;
    static const uint8_t empty[1] = {0};
    static const uint8_t short_xlog[24] = {'w'};
    static const uint8_t long_keepalive[19] = {'k'};
    static const uint8_t bad_reply_flag[18] = {'k', [17] = 2};
    static const uint8_t unknown[4] = {'x', 1, 2, 3};
    malformed(empty, 0);
    malformed(short_xlog, sizeof short_xlog);
    malformed(long_keepalive, sizeof long_keepalive);
    malformed(bad_reply_flag, sizeof bad_reply_flag);
    malformed(unknown, sizeof unknown);
}

/* on_xlog's negative return ends the stream with that status. */
static void test_callback_abandons(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    got_t g = {0};
    g.xlog_rc = PGW_ECANCELED;
    pgw_repl_stream_t *st;
    pgw_session_t *s = streaming(rec, &g, &st);
    pgw_buf_t w = {0};
    w_xlog(&w, 1, 2, 3, "one");
    w_xlog(&w, 4, 5, 6, "two");
    feed(s, &w);
    assert_int_equal(g.xlogs, 1);
    char t[16];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "c");
    pgw_buf_free(&w);
    server_ends(s, &g, PGW_ECANCELED);
    finish(s, st, rec);
}

/* The server's error ends the stream: PGW_ESERVER, the session usable. */
static void test_server_error(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    got_t g = {0};
    pgw_repl_stream_t *st;
    pgw_session_t *s = streaming(rec, &g, &st);
    pgw_buf_t w = {0};
    w_xlog(&w, 1, 2, 3, "one");
    pgt_msg_error(&w, "ERROR", "XX000", "requested WAL segment has already been removed");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(g.ends, 1);
    assert_int_equal(g.end_status, PGW_ESERVER);
    assert_int_equal(pgw_repl_stream_active(st), 0);
    assert_int_equal(pgw_session_copy_both_active(s), 0);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
    pgw_buf_free(&w);
    finish(s, st, rec);
}

/* A START_REPLICATION without the stream's callbacks is still refused. */
static void test_plain_request_refused(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    pgw_request_t r = PGW_SIMPLE("START_REPLICATION SLOT s LOGICAL 0/0", rec_cb, UD(0));
    assert_int_equal(pgw_session_submit(s, &r), 0);
    char t[16];
    out_types(s, t, sizeof t);
    pgw_buf_t w = {0};
    w_copy_both(&w);
    w_xlog(&w, 1, 2, 3, "dropped");
    feed(s, &w);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "c");
    assert_int_equal(pgw_session_copy_both_active(s), 0);
    assert_int_equal(pgw_session_copy_both_send(s, "x", 1), PGW_EBUSY);
    pgw_buf_reset(&w);
    pgt_msg(&w, 'c', NULL, 0);
    w_stream_end(&w);
    feed(s, &w);
    assert_int_equal(rec->done[0].status, PGW_ECOPY);
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

static void test_arguments(void **state)
{
    (void)state;
    pgw_repl_stream_config_t cfg;
    pgw_repl_stream_config_init(&cfg);
    pgw_repl_stream_t *st = (pgw_repl_stream_t *)1;
    assert_int_equal(pgw_repl_stream_new(&cfg, &st), PGW_EINVAL); /* no on_xlog */
    assert_null(st);
    assert_int_equal(pgw_repl_stream_new(NULL, &st), PGW_EINVAL);
    assert_int_equal(pgw_repl_stream_confirm(NULL, 1), PGW_EINVAL);
    assert_int_equal(pgw_repl_stream_send_status(NULL, false), PGW_EINVAL);
    assert_int_equal(pgw_repl_stream_send_feedback(NULL, 1, 1), PGW_EINVAL);
    assert_int_equal(pgw_repl_stream_stop(NULL), PGW_EINVAL);
    assert_int_equal(pgw_repl_stream_active(NULL), 0);
    assert_int_equal(pgw_session_copy_both_active(NULL), 0);
    assert_int_equal(pgw_session_copy_both_send(NULL, "x", 1), PGW_EINVAL);
    assert_int_equal(pgw_session_copy_both_end(NULL), PGW_EINVAL);
    pgw_repl_stream_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_status_and_stop),
        cmocka_unit_test(test_server_ends),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_callback_abandons),
        cmocka_unit_test(test_server_error),
        cmocka_unit_test(test_plain_request_refused),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
