/*
 * Allocation failure, swept, on the session's hot paths (sans-IO, against
 * tests/common/pgresponder.h): for every path, a clean run counts its
 * allocations, then the path runs again once for every N from 1 to that
 * count with the N-th allocation failing, and once more with every
 * allocation from the N-th on failing (an exhausted budget). Each run must:
 *   - not crash (ASan and valgrind watch the CI runs);
 *   - surface the failure as PGW_ENOMEM: a submit or start that returns it
 *     (nothing queued, no callback), or a request or the startup that
 *     completes with it (the session broken with it); a request the
 *     failure did not touch completes as it would have;
 *   - fire every accepted request's callback exactly once;
 *   - leave no block allocated once the session and results are freed.
 * Paths: startup with trust, cleartext, MD5 and SCRAM-SHA-256; a pipeline
 * of 100 requests; a buffered result over many read chunks; streamed rows;
 * COPY in and out; the statement cache (miss, prepare, hit, eviction, a
 * transparent re-prepare after 26000, 0A000 inside a transaction block);
 * a batch, a portal read in batches and closed. The TLS handshake, the
 * connection, the pool and the listener are swept against the real server
 * in tests/integration/test_alloc_sweep_live.c.
 */
#include "pgresponder.h"
#include "test_session_util.h"

static rec_t R;
static pgt_alloc_t fa = PGT_ALLOC_INITIALIZER(fa);

/* The statuses a path's requests may end with besides 0 and PGW_ENOMEM. */
static int extra_ok[4];

/* Requests submitted by the path: accepted or not. */
#define MAXREQ 256
static int accepted[MAXREQ];
static int nreq;

/* A submit refused for the failure: PGW_ENOMEM, or PGW_ECLOSED once the
 * failure broke the session. */
static void refusal_ok(pgw_session_t *s, int rc, int i)
{
    if (rc == 0 || rc == PGW_ENOMEM) return;
    if (rc == PGW_ECLOSED && pgw_session_state(s) == PGW_SESSION_BROKEN &&
        pgw_session_error(s) == PGW_ENOMEM)
        return;
    fail_msg("request %d refused with %s (allocation %ld failing%s)", i, pgw_err_name(rc),
             fa.fail_at, fa.fail_rest ? " on" : "");
}

static int submit(pgw_session_t *s, pgw_request_t *r)
{
    assert_true(nreq < MAXREQ);
    int i = nreq++;
    r->on_result = rec_cb;
    r->ud = UD(i);
    int rc = pgw_session_submit(s, r);
    refusal_ok(s, rc, i);
    accepted[i] = rc == 0;
    return rc;
}

/* Let the responder answer what the session wrote, feed the answers back,
 * pump a COPY FROM, until nothing moves. */
static void exchange(pgw_session_t *s, pgt_responder_t *rs)
{
    for (int guard = 0; guard < 100000; guard++) {
        size_t n = 0;
        const uint8_t *p = pgw_session_pending_output(s, &n);
        size_t used = n ? pgt_responder_answer(rs, p, n) : 0;
        if (used) pgw_session_consumed_output(s, used);
        int pumped = pgw_session_copy_pump(s);
        if (rs->out.len) {
            int rc = pgw_session_recv(s, rs->out.data, rs->out.len);
            pgw_buf_reset(&rs->out);
            if (rc < 0) return;
        } else if (!used && pumped <= 0) {
            return;
        }
    }
    fail_msg("the exchange does not settle");
}

/* A session on the failing allocator, started; NULL when its creation or
 * start met the failure (PGW_ENOMEM, as documented). */
static pgw_session_t *start(const sess_opts_t *given)
{
    sess_opts_t o = given ? *given : (sess_opts_t){0};
    o.alloc = &fa.base;
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = NULL;
    int rc = new_session_opts(&s, &R, &o);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        return NULL;
    }
    rc = pgw_session_start(s);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        pgw_session_free(s);
        return NULL;
    }
    return s;
}

/* A trust startup answered by the responder's startup bytes. */
static pgw_session_t *ready(const sess_opts_t *o, pgt_responder_t *rs)
{
    pgw_session_t *s = start(o);
    if (!s) return NULL;
    size_t n = 0;
    pgw_session_pending_output(s, &n);
    pgw_session_consumed_output(s, n);
    pgw_buf_t w = {0};
    pgt_responder_startup(&w);
    pgw_session_recv(s, w.data, w.len);
    pgw_buf_free(&w);
    (void)rs;
    return s;
}

static int status_ok(int st)
{
    if (st == 0 || st == PGW_ENOMEM) return 1;
    for (size_t i = 0; i < sizeof extra_ok / sizeof extra_ok[0]; i++)
        if (extra_ok[i] && st == extra_ok[i]) return 1;
    return 0;
}

/* Free the session and check the run; returns 1 when it was clean (ready,
 * every request accepted and completed with 0 or an expected status). */
static int finish(pgw_session_t *s, int ok_so_far)
{
    int clean = ok_so_far && s && pgw_session_state(s) == PGW_SESSION_READY;
    /* a session the failure broke says so with PGW_ENOMEM */
    if (R.broken_calls) assert_int_equal(R.broken_err, PGW_ENOMEM);
    if (s) {
        if (pgw_session_pending(s) != 0) clean = 0;
        pgw_session_free(s);
    }
    for (int i = 0; i < nreq; i++) {
        if (!accepted[i]) {
            if (R.done[i].calls != 0) fail_msg("request %d refused, yet called", i);
            clean = 0;
            continue;
        }
        if (R.done[i].calls != 1) fail_msg("request %d: %d callbacks", i, R.done[i].calls);
        if (!status_ok(R.done[i].status))
            fail_msg("request %d completed with %s %s (allocation %ld failing%s)", i,
                     pgw_err_name(R.done[i].status), R.done[i].sqlstate, fa.fail_at,
                     fa.fail_rest ? " on" : "");
        if (R.done[i].status == PGW_ENOMEM) clean = 0;
    }
    return clean;
}

/* ------------------------------------------------------------- paths */

static int path_startup_trust(void)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(NULL, &rs);
    int ok = s && R.startup_status == 0;
    if (s && R.startup_calls == 1 && R.startup_status != 0)
        assert_int_equal(R.startup_status, PGW_ENOMEM);
    pgw_request_t q = PGW_QUERY("SELECT $1::int8", NULL, 0, NULL, NULL);
    pgw_param_t p = pgw_int8(7);
    q.params = &p;
    q.nparams = 1;
    if (s && pgw_session_state(s) == PGW_SESSION_READY) {
        submit(s, &q);
        exchange(s, &rs);
    }
    pgt_responder_free(&rs);
    return finish(s, ok);
}

/* Startup answered by auth (code, data), then the password message the
 * session must write, then the rest of the startup. */
static int path_password(int code, const void *data, size_t len)
{
    sess_opts_t o = {.user = "alice", .password = "secret"};
    pgw_session_t *s = start(&o);
    if (!s) return finish(NULL, 0);
    pgw_buf_t w = {0}, out = {0};
    take_out(s, &out);
    pgt_msg_auth(&w, code, data, len);
    int rc = pgw_session_recv(s, w.data, w.len);
    pgw_buf_reset(&out);
    take_out(s, &out);
    int wrote = out.len > 0 && out.data[0] == 'p';
    if (rc == 0 && wrote) {
        pgw_buf_reset(&w);
        pgt_responder_startup(&w);
        pgw_session_recv(s, w.data, w.len);
    }
    int ok = rc == 0 && wrote && R.startup_status == 0 && R.startup_calls == 1;
    if (R.startup_calls) assert_true(R.startup_status == 0 || R.startup_status == PGW_ENOMEM);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    return finish(s, ok);
}

static int path_startup_cleartext(void)
{
    return path_password(3, NULL, 0);
}

static int path_startup_md5(void)
{
    return path_password(5, "salt", 4);
}

/* RFC 7677's exchange (test_session_startup.c has the same vectors). */
#define RFC_NONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_FIRST \
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
#define RFC_SERVER_FINAL "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

static int path_startup_scram(void)
{
    sess_opts_t o = {.user = "user", .password = "pencil", .alloc = &fa.base};
    memset(&R, 0, sizeof R);
    g_rec = &R;
    pgw_session_t *s = NULL;
    int rc = new_session_opts(&s, &R, &o);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        return finish(NULL, 0);
    }
    pgw__session_set_test_nonce(s, RFC_NONCE);
    rc = pgw_session_start(s);
    if (rc != 0) {
        assert_int_equal(rc, PGW_ENOMEM);
        return finish(s, 0);
    }
    pgw_buf_t w = {0}, out = {0};
    take_out(s, &out);
    size_t at = pgt_msg_begin(&w, 'R');
    pgt_msg_put_i32(&w, 10);
    pgt_msg_put_cstr(&w, "SCRAM-SHA-256");
    pgt_msg_put_u8(&w, 0);
    pgt_msg_end(&w, at);
    int ok = pgw_session_recv(s, w.data, w.len) == 0;
    pgw_buf_reset(&w);
    pgt_msg_auth(&w, 11, RFC_SERVER_FIRST, strlen(RFC_SERVER_FIRST));
    ok = ok && pgw_session_recv(s, w.data, w.len) == 0;
    pgw_buf_reset(&w);
    pgt_msg_auth(&w, 12, RFC_SERVER_FINAL, strlen(RFC_SERVER_FINAL));
    pgt_responder_startup(&w);
    ok = ok && pgw_session_recv(s, w.data, w.len) == 0;
    ok = ok && R.startup_status == 0 && R.startup_calls == 1;
    if (R.startup_calls) assert_true(R.startup_status == 0 || R.startup_status == PGW_ENOMEM);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    return finish(s, ok);
}

static int path_pipeline_100(void)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(NULL, &rs);
    int ok = s != NULL;
    for (int i = 0; s && i < 100; i++) {
        pgw_param_t p = pgw_int8(1000 + i);
        pgw_request_t q = PGW_QUERY("SELECT $1::int8", &p, 1, NULL, NULL);
        if (submit(s, &q) != 0) break; /* nothing after a refusal: the replies stay in step */
    }
    if (s) exchange(s, &rs);
    for (int i = 0; i < nreq; i++)
        if (R.done[i].calls && R.done[i].status == 0) assert_int_equal(R.done[i].value, 1000 + i);
    pgt_responder_free(&rs);
    return finish(s, ok);
}

static int rows_seen;

static int count_row(const pgw_row_t *row, void *ud)
{
    (void)ud;
    assert_int_equal(row->ncols, 1);
    rows_seen++;
    return 0;
}

/* 3,000 rows through 512-byte read chunks: buffered (the result holds many
 * chunks) or streamed. */
static int path_rows(int streamed)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(&(sess_opts_t){.read_chunk_size = 512}, &rs);
    rows_seen = 0;
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, 3000) g", NULL, 0, NULL, NULL);
    if (streamed) q.on_row = count_row;
    if (s) {
        submit(s, &q);
        exchange(s, &rs);
    }
    int ok = s != NULL;
    if (nreq && R.done[0].calls && R.done[0].status == 0) {
        if (streamed)
            assert_int_equal(rows_seen, 3000);
        else
            assert_int_equal(R.done[0].value, 1);
    }
    pgt_responder_free(&rs);
    return finish(s, ok);
}

static int path_rows_buffered(void)
{
    return path_rows(0);
}

static int path_rows_streamed(void)
{
    return path_rows(1);
}

static int lines_left;

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    for (int i = 0; i < 20 && lines_left > 0; i++, lines_left--) {
        int rc = pgw_buf_append(out, "12345\tsome text\n", 16);
        if (rc < 0) return rc;
    }
    return lines_left > 0 ? PGW_COPY_MORE : PGW_COPY_END;
}

static int copy_lines_out;

static int copy_sink(const uint8_t *data, size_t len, void *ud)
{
    (void)data, (void)len, (void)ud;
    copy_lines_out++;
    return 0;
}

static int path_copy(void)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(NULL, &rs);
    lines_left = 300;
    copy_lines_out = 0;
    pgw_request_t in = PGW_COPY_IN_REQ("COPY t FROM STDIN", copy_source, NULL, NULL);
    pgw_request_t out = PGW_COPY_OUT_REQ("COPY t TO STDOUT", copy_sink, NULL, NULL);
    if (s && submit(s, &in) == 0) submit(s, &out);
    if (s) exchange(s, &rs);
    if (nreq == 2 && R.done[0].calls && R.done[0].status == 0) assert_int_equal(rs.messages > 0, 1);
    if (nreq == 2 && R.done[1].calls && R.done[1].status == 0)
        assert_int_equal(copy_lines_out, PGT_COPY_OUT_ROWS);
    pgt_responder_free(&rs);
    /* a source that met the failure abandons the COPY with it */
    extra_ok[0] = PGW_ESERVER;
    return finish(s, s != NULL);
}

/* One query (its answer settled before the next). */
static int one(pgw_session_t *s, pgt_responder_t *rs, const char *sql, int64_t v)
{
    pgw_param_t p = pgw_int8(v);
    pgw_request_t q = PGW_QUERY(sql, &p, 1, NULL, NULL);
    if (submit(s, &q) != 0) return 0;
    exchange(s, rs);
    return pgw_session_state(s) == PGW_SESSION_READY;
}

static int simple(pgw_session_t *s, pgt_responder_t *rs, const char *sql)
{
    pgw_request_t q = PGW_SIMPLE(sql, NULL, NULL);
    if (submit(s, &q) != 0) return 0;
    exchange(s, rs);
    return pgw_session_state(s) == PGW_SESSION_READY;
}

static int path_stmt_cache(void)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(&(sess_opts_t){.stmt_cache = true, .stmt_cache_size = 2}, &rs);
    int ok = s != NULL;
    static const char *const a = "SELECT $1::int8 AS a", *const b = "SELECT $1::int8 AS b",
                             *const c = "SELECT $1::int8 AS c";
    /* miss, prepare, hit; B; C evicts A; A prepared again evicts B */
    const char *seq[] = {a, a, a, b, b, b, c, c, a};
    for (size_t i = 0; ok && i < sizeof seq / sizeof seq[0]; i++)
        ok = one(s, &rs, seq[i], (int64_t)i);
    /* C's statement vanished (DISCARD ALL behind the session's back): its
     * hit is refused with 26000 and prepared again, transparently. */
    memcpy(rs.fail_bind, "26000", 6);
    ok = ok && one(s, &rs, c, 100);
    /* A no longer returns its rows' type (ALTER TABLE): 0A000 inside a
     * transaction block is PGW_ESTMTINVALID and the entry goes. */
    ok = ok && simple(s, &rs, "BEGIN");
    memcpy(rs.fail_bind, "0A000", 6);
    if (ok) one(s, &rs, a, 101); /* PGW_ESTMTINVALID */
    ok = ok && simple(s, &rs, "ROLLBACK");
    ok = ok && one(s, &rs, a, 102);
    extra_ok[0] = PGW_ESTMTINVALID;
    for (int i = 0; ok && i < nreq; i++)
        if (R.done[i].status == 0 && i < 9) assert_int_equal(R.done[i].value, i);
    if (fa.fail_at == 0) { /* the clean run went where this path says */
        pgw_stmt_cache_stats_t st;
        pgw_session_stmt_cache_stats(s, &st);
        assert_true(st.hits >= 1 && st.evictions >= 2);
        assert_int_equal(st.reprepares, 1);
        assert_int_equal(st.invalidations, 2);
        assert_int_equal(R.done[9].status, 0);
        assert_int_equal(R.done[9].value, 100);
        assert_int_equal(R.done[11].status, PGW_ESTMTINVALID);
        assert_int_equal(R.done[13].status, 0);
    }
    pgt_responder_free(&rs);
    return finish(s, ok);
}

static int path_batch_and_portal(void)
{
    pgt_responder_t rs;
    pgt_responder_init(&rs);
    pgw_session_t *s = ready(NULL, &rs);
    int ok = s != NULL;
    if (s) {
        static pgw_param_t ps[5];
        pgw_request_t batch[5];
        int first = nreq;
        for (int i = 0; i < 5; i++) {
            ps[i] = pgw_int8(i);
            batch[i] = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(first + i));
            if (i == 2) batch[i].flags = PGW_Q_SYNC;
        }
        nreq += 6;
        int rc = pgw_session_submit_batch(s, batch, 5, 0, rec_cb, UD(first + 5));
        refusal_ok(s, rc, first);
        for (int i = 0; i < 6; i++)
            accepted[first + i] = rc == 0;
        pgw_request_t cur =
            PGW_QUERY("SELECT g FROM generate_series(1, 10) g", NULL, 0, NULL, NULL);
        cur.portal = "c";
        cur.max_rows = 4;
        pgw_request_t fetch = PGW_FETCH("c", 4, NULL, NULL);
        pgw_request_t close = PGW_CLOSE_PORTAL("c", NULL, NULL);
        if (rc == 0 && submit(s, &cur) == 0 && submit(s, &fetch) == 0) submit(s, &close);
        exchange(s, &rs);
    }
    pgt_responder_free(&rs);
    return finish(s, ok);
}

/* ------------------------------------------------------------- sweeps */

typedef int (*path_fn)(void);

static int run(path_fn fn, long fail_at, int rest)
{
    pgt_alloc_reset(&fa);
    fa.fail_at = fail_at;
    fa.fail_rest = rest;
    memset(accepted, 0, sizeof accepted);
    memset(extra_ok, 0, sizeof extra_ok);
    nreq = 0;
    int clean = fn();
    if (fa.blocks != 0)
        fail_msg("failing allocation %ld%s: %ld blocks leaked", fail_at, rest ? " on" : "",
                 fa.blocks);
    return clean;
}

static void sweep(const char *name, path_fn fn)
{
    fa.blocks = 0;
    fa.bytes = 0;
    if (!run(fn, 0, 0)) fail_msg("%s: the path fails without an allocation failure", name);
    long total = fa.calls;
    assert_true(total > 0);
    for (long n = 1; n <= total; n++) {
        run(fn, n, 0);
        if (fa.failures != 1) fail_msg("%s: allocation %ld was not reached", name, n);
        run(fn, n, 1);
    }
    /* past the last allocation, nothing fails */
    assert_true(run(fn, total + 1, 0));
    print_message("%-22s %5ld allocations, each failed alone and as the start of an exhausted "
                  "budget\n",
                  name, total);
}

#define SWEEP(fn)                       \
    static void test_##fn(void **state) \
    {                                   \
        (void)state;                    \
        sweep(#fn, path_##fn);          \
    }

SWEEP(startup_trust)
SWEEP(startup_cleartext)
SWEEP(startup_md5)
SWEEP(startup_scram)
SWEEP(pipeline_100)
SWEEP(rows_buffered)
SWEEP(rows_streamed)
SWEEP(copy)
SWEEP(stmt_cache)
SWEEP(batch_and_portal)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup_trust), cmocka_unit_test(test_startup_cleartext),
        cmocka_unit_test(test_startup_md5),   cmocka_unit_test(test_startup_scram),
        cmocka_unit_test(test_pipeline_100),  cmocka_unit_test(test_rows_buffered),
        cmocka_unit_test(test_rows_streamed), cmocka_unit_test(test_copy),
        cmocka_unit_test(test_stmt_cache),    cmocka_unit_test(test_batch_and_portal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
