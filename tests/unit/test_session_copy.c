/*
 * COPY in the sans-IO session, driven from byte arrays: what is written
 * when (nothing after a COPY's Execute until the server knows where its
 * data ends), the pump target, pausing and resuming a source, CopyFail on
 * abandon and on terminate, COPY TO chunks, the binary COPY decoder fed at
 * every split, and the write high-water mark.
 */
#include "test_session_util.h"

#include "pgwire/types_container.h"

static void w_copy_response(pgw_buf_t *w, uint8_t type, uint8_t format, int ncols)
{
    size_t at = pgt_msg_begin(w, type);
    pgt_msg_put_u8(w, format);
    pgt_msg_put_i16(w, (int16_t)ncols);
    for (int i = 0; i < ncols; i++)
        pgt_msg_put_i16(w, format);
    pgt_msg_end(w, at);
}

/* ParseComplete, BindComplete, NoData: a COPY's answers before it begins. */
static void w_copy_prelude(pgw_buf_t *w)
{
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg(w, 'n', NULL, 0);
}

typedef struct src {
    int rows_left;
    int calls;
    int pause_at; /* return PGW_COPY_PAUSE once when calls reaches it */
    int fail;     /* return this code at the first call */
    size_t row_len;
} src_t;

static int source(pgw_buf_t *out, size_t room, void *ud)
{
    src_t *x = ud;
    x->calls++;
    if (x->fail) {
        pgw_buf_append(out, "stop", 4);
        return x->fail;
    }
    if (x->pause_at && x->calls == x->pause_at) return PGW_COPY_PAUSE;
    size_t start = out->len;
    char row[256];
    memset(row, 'r', sizeof row);
    row[x->row_len - 1] = '\n';
    while (x->rows_left > 0 && out->len - start < room) {
        pgw_buf_append(out, row, x->row_len);
        x->rows_left--;
    }
    return x->rows_left ? PGW_COPY_MORE : PGW_COPY_END;
}

/* The COPY's result callback is rec_cb with UD(0); the source's ud must be
 * its own: the session gives one ud to every callback of a request, so the
 * tests keep the source state in a global. */
static src_t g_src;
static int src_global(pgw_buf_t *out, size_t room, void *ud)
{
    (void)ud;
    return source(out, room, &g_src);
}

static int submit_copy(pgw_session_t *s, const char *sql)
{
    pgw_request_t r = PGW_COPY_IN_REQ(sql, src_global, rec_cb, UD(0));
    return pgw_session_submit(s, &r);
}

static void test_nothing_after_copy_until_done(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    g_src = (src_t){3, 0, 0, 0, 16};
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
    char t[64];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "PBDEH"); /* its Sync and the query wait */
    pgw_buf_t w = {0};
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 2);
    feed(s, &w);
    assert_int_equal(g_src.rows_left, 0);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "dcSPBDES"); /* data, CopyDone, its Sync, the query */
    pgw_buf_reset(&w);
    pgt_msg_command_complete(&w, "COPY 3");
    pgt_msg_ready(&w, 'I');
    w_int8_query(&w, 5, 1);
    feed(s, &w);
    assert_int_equal(rec->done[0].status, 0);
    assert_string_equal(rec->done[0].tag, "COPY 3");
    assert_int_equal(rec->done[1].value, 5);
    assert_true(rec->done[0].order < rec->done[1].order);
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

static void test_two_copies_in_a_batch(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    g_src = (src_t){1, 0, 0, 0, 8};
    pgw_request_t reqs[4] = {
        PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(1)),
        PGW_COPY_IN_REQ("COPY a FROM STDIN", src_global, rec_cb, UD(2)),
        PGW_COPY_IN_REQ("COPY b FROM STDIN", src_global, rec_cb, UD(3)),
        PGW_QUERY("SELECT 2", NULL, 0, rec_cb, UD(4)),
    };
    assert_int_equal(pgw_session_submit_batch(s, reqs, 4, 0, rec_cb, UD(5)), 0);
    char t[64];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "PBDEPBDEH");
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 0);
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "dcPBDEH"); /* up to the second COPY's Execute */
    g_src = (src_t){1, 0, 0, 0, 8};
    pgw_buf_reset(&w);
    pgt_msg_command_complete(&w, "COPY 1");
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "dcPBDES"); /* then the rest and the batch's Sync */
    pgw_buf_reset(&w);
    pgt_msg_command_complete(&w, "COPY 1");
    w_int8_query(&w, 2, 1);
    feed(s, &w);
    for (int i = 1; i <= 5; i++)
        assert_int_equal(rec->done[i].status, 0);
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

static void test_error_before_copy_releases(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    g_src = (src_t){1, 0, 0, 0, 8};
    assert_int_equal(submit_copy(s, "COPY nosuch FROM STDIN"), 0);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
    char t[64];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "PBDEH");
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "ERROR", "42P01", "relation does not exist");
    feed(s, &w);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "SPBDES"); /* released at the error */
    /* The COPY completes at its ReadyForQuery, like any request. */
    pgw_buf_reset(&w);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(rec->done[0].status, PGW_ESERVER);
    assert_string_equal(rec->done[0].sqlstate, "42P01");
    assert_int_equal(g_src.calls, 0);
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

static void test_pump_target_pause_resume(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    g_src = (src_t){100000, 0, 3, 0, 100}; /* 10 MB, paused at the third call */
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    pgw_buf_t out = {0};
    take_out(s, &out);
    pgw_buf_t w = {0};
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    size_t n;
    pgw_session_pending_output(s, &n);
    /* The default mark (8 MiB) gives the 256 KiB maximum target: one call
     * filled it. */
    assert_true(n >= 256 * 1024 && n < 256 * 1024 + 4096);
    assert_int_equal(pgw_session_copy_wants_room(s), 1);
    assert_int_equal(pgw_session_copy_pump(s), 1); /* still full */
    pgw_session_consumed_output(s, n);
    assert_int_equal(pgw_session_copy_pump(s), 1);
    pgw_session_pending_output(s, &n);
    pgw_session_consumed_output(s, n);
    assert_int_equal(pgw_session_copy_pump(s), 0); /* the third call paused */
    assert_int_equal(pgw_session_copy_wants_room(s), 0);
    int ww = rec->want_write;
    assert_int_equal(pgw_session_copy_resume(s), 0);
    assert_int_equal(rec->want_write, ww + 1);
    assert_int_equal(pgw_session_copy_resume(s), PGW_EBUSY);
    int rc;
    while ((rc = pgw_session_copy_pump(s)) == 1) {
        pgw_session_pending_output(s, &n);
        pgw_session_consumed_output(s, n);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(g_src.rows_left, 0);
    char t[64];
    pgw_session_pending_output(s, &n);
    pgw_buf_reset(&out);
    take_out(s, &out);
    msg_types(&out, 0, t, sizeof t);
    assert_int_equal(t[strlen(t) - 2], 'c');
    assert_int_equal(t[strlen(t) - 1], 'S');
    pgw_buf_free(&out);
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

/* A clock that moves 2 ms at each reading: every pump's time slice (1 ms)
 * has run out by its first check, as on a loaded machine or under
 * valgrind, where the first run of a code path is slow. */
static uint64_t g_clock;
static uint64_t slow_clock(void *ud)
{
    (void)ud;
    return g_clock += 2u * 1000u * 1000u;
}

/* Under that clock, the pump started by CopyInResponse and each later one
 * still call the source: a pump that ended before its first call appended
 * nothing, so the driver (which pumps again after writing) never came back,
 * and the server waited for the data forever. */
static void test_copy_in_slice_over_before_first_pull(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, &(sess_opts_t){.now_ns = slow_clock});
    pgw_buf_t w = {0};
    size_t n;
    /* A source with more than a pump takes: each pump calls it once. */
    g_src = (src_t){100000, 0, 0, 0, 100};
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    out_types(s, (char[64]){0}, 64);
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    assert_int_equal(g_src.calls, 1);
    assert_int_equal(pgw_session_copy_wants_room(s), 1);
    pgw_session_pending_output(s, &n);
    assert_true(n > 0); /* the write that brings the driver back */
    pgw_session_consumed_output(s, n);
    assert_int_equal(pgw_session_copy_pump(s), 1);
    assert_int_equal(g_src.calls, 2);
    assert_int_equal(pgw_session_terminate(s), 0);
    pgw_session_free(s);

    /* A source that pauses at once (libpgwire-pq's before PQputCopyData),
     * then is resumed: the resumed pump calls it and the COPY ends. */
    s = ready_session(rec, &(sess_opts_t){.now_ns = slow_clock});
    g_src = (src_t){2, 0, 1, 0, 8};
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    out_types(s, (char[64]){0}, 64);
    feed(s, &w);
    assert_int_equal(g_src.calls, 1);
    assert_int_equal(pgw_session_copy_wants_room(s), 0);
    assert_int_equal(pgw_session_copy_resume(s), 0);
    assert_int_equal(pgw_session_copy_pump(s), 0);
    assert_int_equal(g_src.calls, 2);
    char t[64];
    out_types(s, t, sizeof t);
    assert_string_equal(t, "dcS");
    pgw_buf_free(&w);
    pgw_session_free(s);
    free(rec);
}

static void test_abandon_and_terminate(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    g_src = (src_t){10, 0, 0, PGW_ERANGE, 8};
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    char t[64];
    out_types(s, t, sizeof t);
    pgw_buf_t w = {0};
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    pgw_buf_t out = {0};
    take_out(s, &out);
    msg_types(&out, 0, t, sizeof t);
    assert_string_equal(t, "fS");
    assert_memory_equal(out.data + 5, "stop", 5); /* the source's text, NUL-terminated */
    pgw_buf_reset(&w);
    pgt_msg_error(&w, "ERROR", "57014", "COPY from stdin failed: stop");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(rec->done[0].status, PGW_ERANGE);
    assert_string_equal(rec->done[0].sqlstate, "57014");

    /* Terminate during a COPY FROM: CopyFail, then Terminate; what was
     * queued behind the COPY is never sent. */
    g_src = (src_t){0, 0, 1, 0, 8}; /* pauses at once */
    assert_int_equal(submit_copy(s, "COPY t FROM STDIN"), 0);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
    out_types(s, t, sizeof t);
    pgw_buf_reset(&w);
    w_copy_prelude(&w);
    w_copy_response(&w, 'G', 0, 1);
    feed(s, &w);
    assert_int_equal(pgw_session_terminate(s), 0);
    out_types(s, t, sizeof t);
    assert_string_equal(t, "fX");
    pgw_buf_free(&out);
    pgw_buf_free(&w);
    pgw_session_free(s);
    assert_int_equal(rec->done[0].calls, 2);
    assert_int_equal(rec->done[1].status, PGW_ECANCELED);
    free(rec);
}

typedef struct sink {
    pgw_buf_t got;
    int calls;
    int stop_at;
} sink_t;

static sink_t g_sink;
static int on_data(const uint8_t *p, size_t n, void *ud)
{
    (void)ud;
    g_sink.calls++;
    pgw_buf_append(&g_sink.got, p, n);
    return g_sink.calls == g_sink.stop_at ? PGW_EFORMAT : 0;
}

static void test_copy_out_chunks(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    pgw_session_t *s = ready_session(rec, NULL);
    memset(&g_sink, 0, sizeof g_sink);
    for (int stop = 0; stop <= 2; stop += 2) {
        g_sink.calls = 0;
        g_sink.stop_at = stop;
        pgw_buf_reset(&g_sink.got);
        pgw_request_t r = PGW_COPY_OUT_REQ("COPY t TO STDOUT", on_data, keep_cb, UD(0));
        assert_int_equal(pgw_session_submit(s, &r), 0);
        assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
        char t[64];
        out_types(s, t, sizeof t);
        assert_string_equal(t, "PBDEH");
        pgw_buf_t w = {0};
        w_copy_prelude(&w);
        w_copy_response(&w, 'H', 0, 2);
        feed(s, &w);
        out_types(s, t, sizeof t);
        assert_string_equal(t, "SPBDES"); /* released at CopyOutResponse */
        pgw_buf_reset(&w);
        pgt_msg(&w, 'd', "1\tx\n", 4);
        pgt_msg(&w, 'd', "2\ty\n", 4);
        pgt_msg(&w, 'd', "3\tz\n", 4);
        pgt_msg(&w, 'c', NULL, 0);
        pgt_msg_command_complete(&w, "COPY 3");
        pgt_msg_ready(&w, 'I');
        w_int8_query(&w, 9, 1);
        feed(s, &w);
        pgw_result_t *res = rec->keep[0];
        assert_int_equal(rec->done[0].status, stop ? PGW_EFORMAT : 0);
        assert_int_equal(g_sink.calls, stop ? 2 : 3);
        assert_int_equal(pgw_result_copy_direction(res), PGW_COPY_OUT);
        assert_int_equal(pgw_result_copy_bytes(res), 12);
        assert_int_equal(pgw_result_copy_column_format(res, 1), 0);
        assert_int_equal(pgw_result_rows_affected(res), 3);
        if (!stop) assert_memory_equal(g_sink.got.data, "1\tx\n2\ty\n3\tz\n", 12);
        pgw_result_free(res);
        assert_int_equal(rec->done[1].value, 9);
        pgw_buf_free(&w);
    }
    pgw_buf_free(&g_sink.got);
    pgw_session_free(s);
    free(rec);
}

static int drains;
static void on_drain_cb(pgw_session_t *s, void *ud)
{
    (void)s;
    (void)ud;
    drains++;
}

/* A ready session with on_drain_cb and the given bounds (0: defaults), the
 * statement cache off. */
static pgw_session_t *bounded_session(rec_t *rec, size_t high_water, size_t max_pending)
{
    const char *params[] = {"user", "alice"};
    pgw_session_config_t cfg;
    pgw_session_config_init(&cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 1;
    cfg.cb.on_startup = on_startup;
    cfg.ud = rec;
    cfg.stmt_cache_mode = PGW_STMT_CACHE_OFF;
    cfg.output_high_water = high_water;
    cfg.max_pending = max_pending;
    cfg.on_drain = on_drain_cb;
    pgw_session_t *s = NULL;
    assert_int_equal(pgw_session_new(&s, &cfg), 0);
    startup_trust(s, rec);
    return s;
}

static void test_high_water(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    g_rec = rec;
    pgw_session_t *s = bounded_session(rec, 4096, 0);
    int accepted = 0, rc;
    while ((rc = pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(accepted))) == 0)
        accepted++;
    assert_int_equal(rc, PGW_ECONGESTED);
    assert_int_equal(pgw_session_congested(s), 1);
    assert_non_null(strstr(pgw_session_refusal(s), "high-water"));
    assert_int_equal(pgw_session_pending(s), (size_t)accepted);
    size_t n;
    pgw_session_pending_output(s, &n);
    assert_true(n >= 4096 && n < 4096 + 64);
    drains = 0;
    pgw_session_consumed_output(s, 1024);
    assert_int_equal(drains, 0); /* still over half */
    pgw_session_consumed_output(s, n - 1024);
    assert_int_equal(drains, 1);
    assert_int_equal(pgw_session_congested(s), 0);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(accepted)), 0);
    pgw_session_free(s);
    free(rec);
}

/* max_pending bounds the requests waiting for their answers: at the bound a
 * submit is refused with PGW_ECONGESTED naming the count, the output being
 * tiny; the replies of half of them bring on_drain, from the input call. */
static void test_max_pending(void **state)
{
    (void)state;
    rec_t *rec = calloc(1, sizeof *rec);
    g_rec = rec;
    pgw_session_t *s = bounded_session(rec, 0, 8);
    int accepted = 0, rc;
    while ((rc = pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(accepted))) == 0)
        accepted++;
    assert_int_equal(rc, PGW_ECONGESTED);
    assert_int_equal(accepted, 8);
    assert_int_equal(pgw_session_congested(s), 1);
    assert_non_null(strstr(pgw_session_refusal(s), "8 requests are pending"));
    pgw_buf_t out = {0};
    take_out(s, &out); /* written: only the count holds them back */
    assert_int_equal(pgw_session_congested(s), 1);
    drains = 0;
    pgw_buf_t w = {0};
    for (int i = 0; i < 4; i++)
        w_int8_query(&w, i, 1);
    feed(s, &w); /* 4 answered, 4 pending: not under half */
    assert_int_equal(pgw_session_pending(s), 4);
    assert_int_equal(drains, 0);
    assert_int_equal(pgw_session_congested(s), 0);
    w.len = 0;
    w_int8_query(&w, 4, 1);
    feed(s, &w);
    assert_int_equal(drains, 1);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(accepted)), 0);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    pgw_session_free(s);
    free(rec);
}

/* The binary decoder gives the same rows whatever the split. */
static void test_bin_decoder_every_split(void **state)
{
    (void)state;
    pgw_buf_t b = {0};
    assert_int_equal(pgw_copy_bin_begin(&b), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pgw_copy_bin_row_begin(&b, 3), 0);
        assert_int_equal(pgw_copy_bin_int4(&b, i * 1000 - 7), 0);
        if (i == 1)
            assert_int_equal(pgw_copy_bin_null(&b), 0);
        else
            assert_int_equal(pgw_copy_bin_text(&b, "hello", 5), 0);
        assert_int_equal(pgw_copy_bin_float8(&b, 0.1 * i), 0);
    }
    assert_int_equal(pgw_copy_bin_end(&b), 0);
    static const uint32_t oids[] = {23, 25, 701};
    for (size_t split = 1; split <= b.len; split++) {
        pgw_copy_bin_decoder_t d = PGW_COPY_BIN_DECODER_INIT;
        d.oids = oids;
        d.noids = 3;
        pgw_buf_t acc = {0};
        size_t fed = 0;
        int rows = 0, ended = 0;
        while (!ended) {
            pgw_value_t v[3];
            size_t used, nf;
            int rc = pgw_copy_bin_next(&d, acc.data, acc.len, &used, v, 3, &nf);
            if (rc == 1) {
                int32_t a;
                double f;
                assert_int_equal(nf, 3);
                assert_int_equal(pgw_get_int4(&v[0], &a), 0);
                assert_int_equal(a, rows * 1000 - 7);
                assert_int_equal(pgw_value_is_null(&v[1]), rows == 1);
                assert_int_equal(pgw_get_float8(&v[2], &f), 0);
                assert_true(f == 0.1 * rows);
                rows++;
            }
            pgw_buf_consume(&acc, used); /* the views are read: drop the row */
            if (rc == 0) {
                ended = 1;
            } else if (rc != 1) {
                assert_int_equal(rc, PGW_EAGAIN);
                assert_true(fed < b.len);
                size_t k = b.len - fed < split ? b.len - fed : split;
                pgt_msg_raw(&acc, b.data + fed, k);
                fed += k;
            }
        }
        assert_int_equal(rows, 3);
        assert_int_equal(acc.len, 0);
        pgw_buf_free(&acc);
    }
    /* Too few value slots, a bad length, bytes after the trailer. */
    pgw_copy_bin_decoder_t d = PGW_COPY_BIN_DECODER_INIT;
    pgw_value_t v[3];
    size_t used, nf;
    assert_int_equal(pgw_copy_bin_next(&d, b.data, b.len, &used, v, 2, &nf), PGW_ERANGE);
    assert_int_equal(used, 19);
    assert_int_equal(nf, 3);
    b.data[19 + 2] = 0xff; /* first field length: negative, not -1 */
    assert_int_equal(pgw_copy_bin_next(&d, b.data + 19, b.len - 19, &used, v, 3, &nf), PGW_EFORMAT);
    assert_int_equal(pgw_copy_bin_error_pos(&d), 19 + 2);
    assert_int_equal(pgw_copy_bin_next(&d, b.data + 19, b.len - 19, &used, v, 3, &nf), PGW_EFORMAT);
    static const uint8_t tail[] = {0xff, 0xff, 'x'};
    pgw_copy_bin_decoder_t e = {NULL, 0, 2, 0, 0, 0, 0}; /* rows state */
    assert_int_equal(pgw_copy_bin_next(&e, tail, 2, &used, v, 3, &nf), 0);
    assert_int_equal(pgw_copy_bin_next(&e, tail + 2, 1, &used, v, 3, &nf), PGW_EFORMAT);
    pgw_buf_free(&b);
}

static void test_csv_numbers(void **state)
{
    (void)state;
    pgw_buf_t b = {0};
    assert_int_equal(pgw_copy_csv_int4(&b, -2147483647 - 1), 0);
    assert_int_equal(pgw_copy_csv_int8(&b, INT64_MAX), 0);
    assert_int_equal(pgw_copy_csv_int4(&b, 7), 0);
    assert_int_equal(pgw_copy_csv_int4(&b, 42), 0);
    assert_int_equal(pgw_copy_csv_float8(&b, 1.5), 0);
    assert_int_equal(pgw_copy_csv_row_end(&b), 0);
    static const char want[] = "-2147483648,9223372036854775807,7,42,1.5\n";
    assert_int_equal(b.len, sizeof want - 1);
    assert_memory_equal(b.data, want, b.len);
    pgw_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_after_copy_until_done),
        cmocka_unit_test(test_two_copies_in_a_batch),
        cmocka_unit_test(test_error_before_copy_releases),
        cmocka_unit_test(test_pump_target_pause_resume),
        cmocka_unit_test(test_copy_in_slice_over_before_first_pull),
        cmocka_unit_test(test_abandon_and_terminate),
        cmocka_unit_test(test_copy_out_chunks),
        cmocka_unit_test(test_high_water),
        cmocka_unit_test(test_max_pending),
        cmocka_unit_test(test_bin_decoder_every_split),
        cmocka_unit_test(test_csv_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
