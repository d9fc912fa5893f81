/*
 * Pipelining and result assembly, driven from byte arrays: responses split
 * at every byte offset, errors inside sync groups, batches, prepared
 * statement formats, multi-statement simple queries, asynchronous messages
 * interleaved with rows, streaming, re-entrant callbacks, freeing from a
 * callback, FATAL errors, chunk growth and results outliving the session.
 */
#include "test_session_util.h"

static rec_t R;

/* ------------------------------------------------- pipelined, split input */

static void test_pipeline_split_every_offset(void **state)
{
    (void)state;
    enum { N = 4 };
    pgw_buf_t w = {0};
    for (int i = 0; i < N; i++)
        w_int8_query(&w, 1000 + i, 1);
    for (size_t split = 0; split <= w.len; split++) {
        pgw_session_t *s = ready_session(&R, &(sess_opts_t){.read_chunk_size = 40});
        for (int i = 0; i < N; i++) {
            pgw_param_t p = pgw_int8(1000 + i);
            assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i)), 0);
        }
        assert_int_equal(pgw_session_pending(s), N);
        assert_int_equal(pgw_session_recv(s, w.data, split), 0);
        assert_int_equal(pgw_session_recv(s, w.data + split, w.len - split), 0);
        for (int i = 0; i < N; i++) {
            assert_int_equal(R.done[i].calls, 1);
            assert_int_equal(R.done[i].status, 0);
            assert_true(R.done[i].has_value);
            assert_int_equal(R.done[i].value, 1000 + i);
            assert_int_equal(R.done[i].order, i);
            assert_string_equal(R.done[i].tag, "SELECT 1");
        }
        assert_int_equal(pgw_session_pending(s), 0);
        pgw_session_free(s);
    }
    /* And one byte at a time. */
    pgw_session_t *s = ready_session(&R, NULL);
    for (int i = 0; i < N; i++) {
        pgw_param_t p = pgw_int8(1000 + i);
        assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i)), 0);
    }
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDESPBDESPBDESPBDES");
    for (size_t i = 0; i < w.len; i++)
        assert_int_equal(pgw_session_recv(s, w.data + i, 1), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(R.done[i].value, 1000 + i);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------------ refused parameters */

static int failing_encoder(const void *ctx, pgw_buf_t *out);

/* A parameter that cannot be sent is refused before anything is queued,
 * and the refusal says which parameter and why. */
static void test_bad_parameter_named(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t p[3] = {pgw_int4(1), pgw_bytea(NULL, 4), pgw_int4(3)};
    assert_int_equal(pgw_session_query(s, "SELECT $1, $2, $3", p, 3, 0, rec_cb, UD(0)), PGW_EINVAL);
    assert_non_null(strstr(pgw_session_refusal(s), "parameter $2"));
    assert_non_null(strstr(pgw_session_refusal(s), "NULL pointer"));
    p[1] = pgw_int4(2);
    p[2].format = 7;
    assert_int_equal(pgw_session_execute(s, "st", p, 3, 0, rec_cb, UD(0)), PGW_EINVAL);
    assert_non_null(strstr(pgw_session_refusal(s), "parameter $3"));
    assert_non_null(strstr(pgw_session_refusal(s), "format"));
    pgw_param_t e = pgw_encoded(25, failing_encoder, NULL);
    pgw_request_t batch[2] = {PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0)),
                              PGW_QUERY("SELECT $1", &e, 1, rec_cb, UD(1))};
    assert_int_equal(pgw_session_submit_batch(s, batch, 2, 0, rec_cb, UD(2)), PGW_ERANGE);
    assert_non_null(strstr(pgw_session_refusal(s), "request 1: parameter $1"));
    size_t n = 1;
    assert_null(pgw_session_pending_output(s, &n));
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
}

/* ------------------------------------------------------- streamed batches */

/* The driver's side of a streamed batch: each part's output is taken at
 * once, as a connection writes it. */
typedef struct parts {
    int n;
    size_t bytes;
} parts_t;

static void take_part(pgw_session_t *s, void *ctx)
{
    parts_t *p = ctx;
    size_t len = 0;
    pgw_session_pending_output(s, &len);
    pgw_session_consumed_output(s, len);
    p->n++;
    p->bytes += len;
}

#define STREAM_N 100

static void stream_reqs(pgw_request_t *reqs, pgw_param_t *ps)
{
    for (int i = 0; i < STREAM_N; i++) {
        ps[i] = pgw_int8(i);
        reqs[i] = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(i));
    }
}

/* PGW_BATCH_STREAM hands out parts of at least part_bytes while the batch
 * is encoded; refused part way it keeps the parts handed out and closes
 * them with the batch's Sync; a COPY holds the rest back; without
 * pgw_session_set_stream the flag changes nothing. */
static void test_streamed_batch_parts(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t ps[STREAM_N];
    pgw_request_t reqs[STREAM_N];
    stream_reqs(reqs, ps);
    parts_t parts = {0, 0};
    assert_int_equal(pgw_session_submit_batch(s, reqs, STREAM_N, PGW_BATCH_STREAM, rec_cb, UD(900)),
                     0);
    assert_int_equal(pgw_session_batch_accepted(s), STREAM_N);
    size_t len = 0;
    pgw_session_pending_output(s, &len);
    size_t whole = len; /* not streamed: all of it is pending */
    pgw_session_consumed_output(s, len);

    pgw_session_set_stream(s, 512, take_part, &parts);
    assert_int_equal(pgw_session_submit_batch(s, reqs, STREAM_N, PGW_BATCH_STREAM, rec_cb, UD(901)),
                     0);
    const uint8_t *tail = pgw_session_pending_output(s, &len);
    assert_true(parts.n >= (int)(whole / 512) - 1);
    assert_true(parts.bytes >= 512u * (size_t)parts.n);
    assert_int_equal(parts.bytes + len, whole); /* the same bytes, in parts */
    assert_int_equal(tail[len - 5], 'S');
    pgw_session_consumed_output(s, len);

    /* Refused at request 80: the parts before it stand, closed by a Sync. */
    parts = (parts_t){0, 0};
    ps[80] = pgw_encoded(20, failing_encoder, NULL);
    size_t pending = pgw_session_pending(s);
    assert_int_equal(pgw_session_submit_batch(s, reqs, STREAM_N, PGW_BATCH_STREAM, rec_cb, UD(902)),
                     PGW_ERANGE);
    assert_non_null(strstr(pgw_session_refusal(s), "request 80"));
    size_t k = pgw_session_batch_accepted(s);
    assert_true(k > 0 && k <= 80);
    assert_true(parts.n > 0);
    assert_int_equal(pgw_session_pending(s), pending + k + 1); /* + the batch's Sync */
    tail = pgw_session_pending_output(s, &len);
    assert_int_equal(len, 5);
    assert_int_equal(tail[0], 'S');
    pgw_session_consumed_output(s, len);
    /* An atomic batch refused the same way queues nothing. */
    assert_int_equal(pgw_session_submit_batch(s, reqs, STREAM_N, 0, rec_cb, UD(903)), PGW_ERANGE);
    assert_int_equal(pgw_session_batch_accepted(s), 0);
    assert_int_equal(pgw_session_pending(s), pending + k + 1);

    /* A COPY first: its output is held, nothing is handed out. */
    ps[80] = pgw_int8(80);
    pgw_request_t copy = PGW_COPY_OUT_REQ("COPY t TO STDOUT", NULL, rec_cb, UD(0));
    reqs[0] = copy;
    parts = (parts_t){0, 0};
    assert_int_equal(pgw_session_submit_batch(s, reqs, STREAM_N, PGW_BATCH_STREAM, rec_cb, UD(904)),
                     0);
    assert_int_equal(parts.n, 0);
    pgw_session_free(s);
}

/* ------------------------------------------------------ errors in a group */

static void test_error_in_sync_group(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t ps[4];
    pgw_request_t reqs[4];
    for (int i = 0; i < 4; i++) {
        ps[i] = pgw_int8(i);
        reqs[i] = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(i));
    }
    /* (Was: batch_begin twice and a simple query inside an open batch were
     * PGW_EBUSY.) A Simple Query cannot be part of a batch, an empty batch
     * is refused, and neither queues anything. */
    pgw_request_t with_simple[2] = {reqs[0], PGW_SIMPLE("SELECT 1", rec_cb, UD(9))};
    assert_int_equal(pgw_session_submit_batch(s, with_simple, 2, 0, rec_cb, UD(4)), PGW_EINVAL);
    assert_non_null(strstr(pgw_session_refusal(s), "request 1"));
    assert_int_equal(pgw_session_submit_batch(s, reqs, 0, 0, rec_cb, UD(4)), PGW_EINVAL);
    size_t pending_len = 1;
    assert_null(pgw_session_pending_output(s, &pending_len));
    assert_int_equal(pending_len, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_submit_batch(s, reqs, 4, 0, rec_cb, UD(4)), 0);
    assert_string_equal(pgw_session_refusal(s), "");
    pgw_param_t p = pgw_int8(77);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(5)), 0);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEPBDEPBDEPBDESPBDES");

    pgw_buf_t w = {0};
    w_int8_query(&w, 0, 0);
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_error(&w, "ERROR", "22012", "division by zero");
    pgt_msg_ready(&w, 'I'); /* requests 2 and 3 were skipped */
    w_int8_query(&w, 77, 1);
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[0].value, 0);
    assert_int_equal(R.done[1].status, PGW_ESERVER);
    assert_string_equal(R.done[1].sqlstate, "22012");
    assert_int_equal(R.done[2].status, PGW_EABORTED);
    assert_int_equal(R.done[3].status, PGW_EABORTED);
    assert_int_equal(R.done[4].status, PGW_ESERVER); /* batch: the first failure */
    assert_true(R.done[4].order > R.done[3].order);
    assert_int_equal(R.done[5].status, 0);
    assert_int_equal(R.done[5].value, 77);
    for (int i = 0; i < 6; i++)
        assert_int_equal(R.done[i].calls, 1);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A query's implicit transaction fails at its Sync (a deferred constraint
 * checked at commit): the query's callback waits for ReadyForQuery and gets
 * the commit error with the rows it had, never a success. */
static void test_commit_failure_at_sync(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t p = pgw_int8(5);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(1)), 0);

    pgw_buf_t w = {0};
    w_int8_query(&w, 5, 0);
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 0); /* not before its commit is known */
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "23505", "duplicate key value violates unique constraint");
    pgt_msg_ready(&w, 'I');
    w_int8_query(&w, 5, 1);
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, PGW_ESERVER);
    assert_string_equal(R.done[0].sqlstate, "23505");
    assert_int_equal(R.done[0].value, 5); /* the rows received stay readable */
    assert_int_equal(R.done[1].calls, 1);
    assert_int_equal(R.done[1].status, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_batch_sync_each(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t ps[3];
    pgw_request_t reqs[3];
    for (int i = 0; i < 3; i++) {
        ps[i] = pgw_int8(i);
        reqs[i] = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(i));
    }
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, PGW_BATCH_SYNC_EACH, rec_cb, UD(3)), 0);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDESPBDESPBDESS");
    pgw_buf_t w = {0};
    w_int8_query(&w, 0, 1);
    pgt_msg_error(&w, "ERROR", "42601", "syntax error");
    pgt_msg_ready(&w, 'I');
    w_int8_query(&w, 2, 1);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].status, PGW_ESERVER);
    assert_int_equal(R.done[2].status, 0); /* error barrier: not aborted */
    assert_int_equal(R.done[2].value, 2);
    assert_int_equal(R.done[3].status, PGW_ESERVER);
    assert_int_equal(R.done[3].order, 3);
    assert_int_equal(pgw_session_pending(s), 0);

    /* A batch where everything succeeds ends with 0 and a result. */
    pgw_param_t p = pgw_int8(1);
    pgw_request_t one = PGW_QUERY("SELECT $1::int8", &p, 1, rec_cb, UD(10));
    assert_int_equal(pgw_session_submit_batch(s, &one, 1, 0, rec_cb, UD(11)), 0);
    w.len = 0;
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    assert_int_equal(R.done[10].status, 0);
    assert_int_equal(R.done[11].status, 0);
    assert_int_equal(R.done[11].calls, 1);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* Without pipelining (PgBouncer in transaction mode), a submit is written
 * only once every request before it has completed: one sync group on the
 * wire at a time, in submit order, none lost; a batch of one sync group
 * goes out whole, one of several is refused with nothing queued. */
static void test_no_pipelining(void **state)
{
    (void)state;
    sess_opts_t o = {.no_pipelining = true};
    pgw_session_t *s = ready_session(&R, &o);
    pgw_param_t ps[3];
    for (int i = 0; i < 3; i++) {
        ps[i] = pgw_int8(i);
        pgw_request_t r = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(i));
        assert_int_equal(pgw_session_submit(s, &r), 0);
    }
    char types[64];
    pgw_buf_t w = {0};
    for (int i = 0; i < 3; i++) {
        out_types(s, types, sizeof types);
        assert_string_equal(types, "PBDES"); /* the next one waits for this answer */
        out_types(s, types, sizeof types);
        assert_string_equal(types, "");
        w.len = 0;
        w_int8_query(&w, i, 1);
        feed(s, &w);
        assert_int_equal(R.done[i].status, 0);
        assert_int_equal(R.done[i].value, i);
    }
    out_types(s, types, sizeof types);
    assert_string_equal(types, "");

    /* A batch of one sync group: all of it at once, then nothing more
     * until its Sync is answered. */
    pgw_request_t reqs[2] = {PGW_QUERY("SELECT $1::int8", &ps[1], 1, rec_cb, UD(10)),
                             PGW_QUERY("SELECT $1::int8", &ps[2], 1, rec_cb, UD(11))};
    assert_int_equal(pgw_session_submit_batch(s, reqs, 2, 0, rec_cb, UD(12)), 0);
    pgw_request_t after = PGW_QUERY("SELECT $1::int8", &ps[0], 1, rec_cb, UD(13));
    assert_int_equal(pgw_session_submit(s, &after), 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEPBDES");

    /* Several sync groups in one batch: refused whole, the reason named. */
    size_t pending = pgw_session_pending(s);
    assert_int_equal(pgw_session_submit_batch(s, reqs, 2, PGW_BATCH_SYNC_EACH, rec_cb, UD(14)),
                     PGW_ENOTSUP);
    assert_non_null(strstr(pgw_session_refusal(s), "no_pipelining"));
    pgw_request_t own_sync = reqs[0];
    own_sync.flags |= PGW_Q_SYNC;
    assert_int_equal(pgw_session_submit_batch(s, &own_sync, 1, 0, rec_cb, UD(15)), PGW_ENOTSUP);
    assert_int_equal(pgw_session_pending(s), pending);

    w.len = 0;
    w_int8_query(&w, 1, 0);
    w_int8_query(&w, 2, 1);
    feed(s, &w);
    assert_int_equal(R.done[10].value, 1);
    assert_int_equal(R.done[11].value, 2);
    assert_int_equal(R.done[12].status, 0);
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDES"); /* the submit behind the batch */
    w.len = 0;
    w_int8_query(&w, 0, 1);
    feed(s, &w);
    assert_int_equal(R.done[13].value, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------- prepare / execute formats */

/* Result formats in the first Bind message at or after offset at of w. */
static void bind_result_formats(const pgw_buf_t *w, size_t at, int16_t *fmts, int *n)
{
    const uint8_t *params;
    size_t plen;
    size_t b = find_msg(w, at, 'B');
    assert_true(b != SIZE_MAX);
    bind_parts(w, b, &params, &plen, fmts, n);
}

static void test_prepare_execute(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    static const uint32_t poids[] = {23};
    assert_int_equal(pgw_session_prepare(s, "s1", "SELECT $1::int4, x", poids, 1, keep_cb, UD(0)),
                     0);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PDS");
    pgw_buf_t w = {0};
    static const char *const names[] = {"a", "b"};
    static const uint32_t coids[] = {23, 1033}; /* int4 and aclitem (no binary output) */
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_param_desc(&w, 1, poids);
    pgt_msg_row_desc(&w, 2, names, coids, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    pgw_result_t *d = R.keep[0];
    assert_non_null(d);
    assert_int_equal(pgw_result_nparams(d), 1);
    assert_int_equal(pgw_result_param_type(d, 0), 23);
    assert_int_equal(pgw_result_param_type(d, 1), 0);
    assert_int_equal(pgw_result_ncols(d), 2);
    assert_string_equal(pgw_result_fname(d, 1), "b");
    pgw_result_free(d);

    /* Known statement: Bind with per-column formats, no Describe. */
    pgw_param_t p = pgw_int4(5);
    assert_int_equal(pgw_session_execute(s, "s1", &p, 1, 0, keep_cb, UD(1)), 0);
    pgw_buf_t out = {0};
    take_out(s, &out);
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "BES");
    int16_t fmts[8];
    int nf;
    bind_result_formats(&out, 0, fmts, &nf);
    assert_int_equal(nf, 2);
    assert_int_equal(fmts[0], 1);
    assert_int_equal(fmts[1], 0);
    w.len = 0;
    pgt_msg(&w, '2', NULL, 0);
    size_t at = pgt_msg_begin(&w, 'D');
    pgt_msg_put_i16(&w, 2);
    pgt_msg_put_i32(&w, 4);
    pgt_msg_put_i32(&w, 5);
    pgt_msg_put_i32(&w, 3);
    pgt_msg_raw(&w, "abc", 3);
    pgt_msg_end(&w, at);
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    pgw_result_t *r = R.keep[1];
    assert_int_equal(R.done[1].status, 0);
    assert_non_null(r);
    assert_int_equal(pgw_result_fformat(r, 0), 1);
    assert_int_equal(pgw_result_fformat(r, 1), 0);
    assert_int_equal(pgw_result_fformat(r, 2), -1);
    int32_t v;
    assert_int_equal(pgw_result_int4(r, 0, 0, &v), 0);
    assert_int_equal(v, 5);
    pgw_value_t val;
    assert_int_equal(pgw_result_value(r, 0, 1, &val), 0);
    assert_int_equal(val.len, 3);
    assert_memory_equal(val.p, "abc", 3);
    assert_int_equal(val.oid, 1033);
    assert_int_equal(pgw_result_value(r, 1, 0, &val), PGW_EINDEX);
    /* The whole row: the same values, the result's own descriptions. */
    pgw_row_t row;
    assert_int_equal(pgw_result_row(r, 0, &row), 0);
    assert_int_equal(row.ncols, 2);
    assert_int_equal(row.index, 0);
    assert_ptr_equal(row.fields, pgw_result_field(r, 0));
    assert_ptr_equal(row.values[1].p, val.p);
    assert_int_equal(row.values[1].len, 3);
    assert_int_equal(row.values[1].format, 0);
    assert_int_equal(row.values[1].oid, 1033);
    assert_int_equal(row.values[0].format, 1);
    assert_int_equal(row.values[0].len, 4);
    assert_int_equal(pgw_result_row(r, 1, &row), PGW_EINDEX);
    assert_int_equal(pgw_result_row(r, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_result_column(r, "b"), 1);
    assert_int_equal(pgw_result_column(r, "zz"), PGW_ENOTFOUND);
    assert_int_equal(pgw_result_rows_affected(r), 1);
    pgw_result_free(r);

    /* PGW_Q_TEXT: one text format for all. */
    assert_int_equal(pgw_session_execute(s, "s1", &p, 1, PGW_Q_TEXT, rec_cb, UD(2)), 0);
    out.len = 0;
    take_out(s, &out);
    bind_result_formats(&out, 0, fmts, &nf);
    assert_int_equal(nf, 1);
    assert_int_equal(fmts[0], 0);

    /* Unknown statement: Describe statement, Bind, Describe portal, binary
     * for all (as an unnamed query: the rule's format for every type but
     * the few without binary output, which bind again after a 42883). */
    assert_int_equal(pgw_session_execute(s, "other", NULL, 0, 0, rec_cb, UD(3)), 0);
    out.len = 0;
    take_out(s, &out);
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "DBDES");
    bind_result_formats(&out, 0, fmts, &nf);
    assert_int_equal(nf, 1);
    assert_int_equal(fmts[0], 1);

    /* Close forgets the description. */
    assert_int_equal(pgw_session_close_statement(s, "s1", rec_cb, UD(4)), 0);
    assert_int_equal(pgw_session_execute(s, "s1", &p, 1, 0, rec_cb, UD(5)), 0);
    out.len = 0;
    take_out(s, &out);
    msg_types(&out, 0, types, sizeof types);
    assert_string_equal(types, "CSDBDES");

    /* Answers for 2..5. */
    w.len = 0;
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg_data_row(&w, 2, (const char *const[]){"5", "abc"});
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    pgt_msg_param_desc(&w, 0, NULL);
    pgt_msg(&w, 'n', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg(&w, 'n', NULL, 0);
    pgt_msg_command_complete(&w, "DO");
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '3', NULL, 0);
    pgt_msg_ready(&w, 'I');
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"s1\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[3].status, 0);
    assert_string_equal(R.done[3].tag, "DO");
    assert_int_equal(R.done[4].status, 0);
    assert_int_equal(R.done[5].status, PGW_ESERVER);
    assert_string_equal(R.done[5].sqlstate, "26000");
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
}

/* ----------------------------------------------------------- simple query */

/* Simple Query with streamed rows: every statement's rows reach the row
 * callback with that statement's columns, in order, and the done callback
 * gets the chain of results without rows. */
typedef struct simple_rows {
    int rows;
    char seen[8][8];
    uint16_t ncols[8];
    int done_calls, done_status;
    char tags[2][16];
    size_t done_nrows;
} simple_rows_t;

static void on_simple_rows_done(int status, pgw_result_t *res, void *ud)
{
    simple_rows_t *x = ud;
    x->done_calls++;
    x->done_status = status;
    int i = 0;
    for (pgw_result_t *r = res; r && i < 2; r = pgw_result_next(r), i++) {
        snprintf(x->tags[i], sizeof x->tags[0], "%s", pgw_result_command_tag(r));
        x->done_nrows += pgw_result_nrows(r);
    }
    pgw_result_free(res);
}

static int on_simple_row(const pgw_row_t *row, void *ud)
{
    simple_rows_t *x = ud;
    assert_true(x->rows < 8);
    assert_int_equal(row->index, (uint64_t)x->rows);
    x->ncols[x->rows] = row->ncols;
    pgw_str_t t;
    assert_int_equal(pgw_get_text(&row->values[0], &t), 0);
    snprintf(x->seen[x->rows], sizeof x->seen[0], "%.*s", (int)t.len, t.p);
    x->rows++;
    return 0;
}

static void test_simple_query_rows(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    simple_rows_t x = {0};
    assert_int_equal(pgw_session_simple_query_rows(s, "SELECT 1", NULL, on_simple_rows_done, &x),
                     PGW_EINVAL);
    assert_int_equal(pgw_session_simple_query_rows(s, "SELECT a; SELECT b, c", on_simple_row,
                                                   on_simple_rows_done, &x),
                     0);
    pgw_buf_t w = {0};
    static const char *const n1[] = {"a"};
    static const char *const n2[] = {"b", "c"};
    static const uint32_t o1[] = {25};
    static const uint32_t o2[] = {25, 25};
    pgt_msg_row_desc(&w, 1, n1, o1, 0);
    pgt_msg_data_row(&w, 1, (const char *const[]){"p"});
    pgt_msg_data_row(&w, 1, (const char *const[]){"q"});
    pgt_msg_command_complete(&w, "SELECT 2");
    pgt_msg_row_desc(&w, 2, n2, o2, 0);
    pgt_msg_data_row(&w, 2, (const char *const[]){"r", NULL});
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(x.rows, 3);
    assert_string_equal(x.seen[0], "p");
    assert_string_equal(x.seen[1], "q");
    assert_string_equal(x.seen[2], "r");
    assert_int_equal(x.ncols[0], 1);
    assert_int_equal(x.ncols[2], 2);
    assert_int_equal(x.done_calls, 1);
    assert_int_equal(x.done_status, 0);
    assert_string_equal(x.tags[0], "SELECT 2");
    assert_string_equal(x.tags[1], "SELECT 1");
    assert_int_equal(x.done_nrows, 0); /* streamed rows are not kept */
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_simple_multi(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_simple_query(
                         s, "SELECT 1; INSERT INTO t VALUES (1); SELECT 'x', NULL", keep_cb, UD(0)),
                     0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1; SELECT 1/0; SELECT 3", keep_cb, UD(1)),
                     0);
    assert_int_equal(pgw_session_simple_query(s, "", keep_cb, UD(2)), 0);
    pgw_buf_t w = {0};
    static const char *const n1[] = {"?column?"};
    static const char *const n2[] = {"a", "b"};
    static const uint32_t o1[] = {23};
    static const uint32_t o2[] = {25, 25};
    pgt_msg_row_desc(&w, 1, n1, o1, 0);
    pgt_msg_data_row(&w, 1, (const char *const[]){"1"});
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_command_complete(&w, "INSERT 0 1");
    pgt_msg_row_desc(&w, 2, n2, o2, 0);
    pgt_msg_data_row(&w, 2, (const char *const[]){"x", NULL});
    pgt_msg_data_row(&w, 2, (const char *const[]){"y", "z"});
    pgt_msg_command_complete(&w, "SELECT 2");
    pgt_msg_ready(&w, 'I');
    pgt_msg_row_desc(&w, 1, n1, o1, 0);
    pgt_msg_data_row(&w, 1, (const char *const[]){"1"});
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_row_desc(&w, 1, n1, o1, 0);
    pgt_msg_error(&w, "ERROR", "22012", "division by zero");
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, 'I', NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);

    assert_int_equal(R.done[0].status, 0);
    pgw_result_t *r = R.keep[0];
    assert_string_equal(pgw_result_command_tag(r), "SELECT 1");
    int32_t v;
    assert_int_equal(pgw_result_int4(r, 0, 0, &v), 0);
    assert_int_equal(v, 1);
    r = pgw_result_next(r);
    assert_non_null(r);
    assert_string_equal(pgw_result_command_tag(r), "INSERT 0 1");
    assert_int_equal(pgw_result_rows_affected(r), 1);
    assert_int_equal(pgw_result_ncols(r), 0);
    r = pgw_result_next(r);
    assert_non_null(r);
    assert_int_equal(pgw_result_nrows(r), 2);
    assert_int_equal(pgw_result_isnull(r, 0, 1), 1);
    assert_int_equal(pgw_result_isnull(r, 1, 1), 0);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(r, 1, 1, &t), 0);
    assert_int_equal(t.len, 1);
    assert_memory_equal(t.p, "z", 1);
    assert_int_equal(pgw_result_text(r, 0, 1, &t), PGW_ENULL);
    assert_null(pgw_result_next(r));
    pgw_result_free(R.keep[0]);

    assert_int_equal(R.done[1].status, PGW_ESERVER);
    r = R.keep[1];
    assert_null(pgw_result_error(r));
    r = pgw_result_next(r);
    assert_non_null(r);
    assert_non_null(pgw_result_error(r));
    assert_string_equal(pgw_result_error(r)->sqlstate, "22012");
    assert_string_equal(pgw_result_error(r)->message, "division by zero");
    assert_string_equal(pgw_result_error(r)->severity, "ERROR");
    assert_null(pgw_result_error(r)->detail);
    assert_null(pgw_result_next(r));
    pgw_result_free(R.keep[1]);

    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(pgw_result_nrows(R.keep[2]), 0);
    assert_string_equal(pgw_result_command_tag(R.keep[2]), "");
    assert_int_equal(pgw_result_rows_affected(R.keep[2]), -1);
    pgw_result_free(R.keep[2]);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* --------------------------------------------------------- async messages */

static void test_async_interleaved(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    int before = R.params;
    assert_int_equal(pgw_session_simple_query(s, "SELECT", keep_cb, UD(0)), 0);
    pgw_buf_t w = {0};
    static const char *const n1[] = {"v"};
    static const uint32_t o1[] = {25};
    pgt_msg_notice(&w, "first");
    pgt_msg_row_desc(&w, 1, n1, o1, 0);
    pgt_msg_data_row(&w, 1, (const char *const[]){"a"});
    pgt_msg_notification(&w, 31, "chan", "payload");
    pgt_msg_data_row(&w, 1, (const char *const[]){"b"});
    pgt_msg_param_status(&w, "TimeZone", "Asia/Tokyo");
    pgt_msg_notice(&w, "second");
    pgt_msg_command_complete(&w, "SELECT 2");
    pgt_msg_notification(&w, 32, "chan2", "p2");
    pgt_msg_ready(&w, 'I');
    pgt_msg_notification(&w, 33, "idle", "x"); /* nothing pending: still delivered */
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(pgw_result_nrows(R.keep[0]), 2);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(R.keep[0], 1, 0, &t), 0);
    assert_memory_equal(t.p, "b", 1);
    assert_int_equal(R.notices, 2);
    assert_string_equal(R.last_notice, "second");
    assert_int_equal(R.notifies, 3);
    assert_int_equal(R.last_pid, 33);
    assert_string_equal(R.last_channel, "idle");
    assert_int_equal(R.params, before + 1);
    assert_string_equal(pgw_session_parameter(s, "TimeZone"), "Asia/Tokyo");
    pgw_result_free(R.keep[0]);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* -------------------------------------------------------------- streaming */

static int rows_seen;
static int64_t rows_sum;

static int row_cb(const pgw_row_t *row, void *ud)
{
    (void)ud;
    assert_int_equal(row->ncols, 1);
    assert_int_equal(row->index, (uint64_t)rows_seen);
    assert_int_equal(row->values[0].format, 1);
    assert_int_equal(row->values[0].oid, 20);
    int64_t v;
    assert_int_equal(pgw_get_int8(&row->values[0], &v), 0);
    rows_sum += v;
    rows_seen++;
    return rows_seen == 3 ? -42 : 0;
}

static void test_streaming(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_query_rows(s, "SELECT g", NULL, 0, 0, row_cb, keep_cb, UD(0)), 0);
    assert_int_equal(pgw_session_query_rows(s, "SELECT g", NULL, 0, 0, NULL, keep_cb, UD(1)),
                     PGW_EINVAL);
    pgw_buf_t w = {0};
    static const char *const names[] = {"g"};
    static const uint32_t oids[] = {20};
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg_row_desc(&w, 1, names, oids, 1);
    for (int i = 1; i <= 5; i++)
        pgt_msg_data_row_int8(&w, i);
    pgt_msg_command_complete(&w, "SELECT 5");
    pgt_msg_ready(&w, 'I');
    rows_seen = 0;
    rows_sum = 0;
    feed(s, &w);
    assert_int_equal(rows_seen, 3); /* stopped after the third */
    assert_int_equal(rows_sum, 6);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, -42);
    assert_non_null(R.keep[0]);
    assert_int_equal(pgw_result_nrows(R.keep[0]), 0);
    assert_string_equal(pgw_result_command_tag(R.keep[0]), "SELECT 5");
    assert_int_equal(pgw_result_ncols(R.keep[0]), 1);
    pgw_result_free(R.keep[0]);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------------------ re-entrancy */

static pgw_session_t *g_sess;

static void reissue_cb(int status, pgw_result_t *res, void *ud)
{
    rec_cb(status, res, ud);
    if ((uintptr_t)ud == 0) {
        pgw_param_t p = pgw_int8(2);
        assert_int_equal(pgw_session_query(g_sess, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(1)), 0);
    }
}

static void free_cb(int status, pgw_result_t *res, void *ud)
{
    rec_cb(status, res, ud);
    pgw_session_free(g_sess);
    pgw_session_free(g_sess); /* twice: still deferred, still once */
}

static void test_reentrancy(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    g_sess = s;
    pgw_param_t p = pgw_int8(1);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, reissue_cb, UD(0)), 0);
    pgw_buf_t w = {0};
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    assert_int_equal(R.done[0].value, 1);
    assert_int_equal(pgw_session_pending(s), 1);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDESPBDES");
    w.len = 0;
    w_int8_query(&w, 2, 1);
    feed(s, &w);
    assert_int_equal(R.done[1].value, 2);
    assert_int_equal(pgw_session_pending(s), 0);

    /* Free from inside a callback, with more requests pending and more
     * responses in the same input. */
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, free_cb, UD(2)), 0);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(3)), 0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(4)), 0);
    w.len = 0;
    w_int8_query(&w, 1, 1);
    w_int8_query(&w, 1, 1);
    assert_int_equal(pgw_session_recv(s, w.data, w.len), PGW_ECANCELED);
    assert_int_equal(R.done[2].calls, 1);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[3].calls, 1);
    assert_int_equal(R.done[3].status, PGW_ECANCELED);
    assert_int_equal(R.done[4].calls, 1);
    assert_int_equal(R.done[4].status, PGW_ECANCELED);
    pgw_buf_free(&w);
}

/* Every field of PGW_ERROR_FIELD_MAP reaches the request's pgw_error_t, for
 * an extended and a simple query, as a copy that outlives the input bytes
 * and the session. */
static void test_error_every_field(void **state)
{
    (void)state;
    static const struct {
        char code;
        size_t offset;
        const char *member;
    } fields[] = {
#define FIELD_ENTRY(code, member, desc) {code, offsetof(pgw_error_t, member), #member},
        PGW_ERROR_FIELD_MAP(FIELD_ENTRY)
#undef FIELD_ENTRY
    };
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_param_t p = pgw_int8(1);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, keep_cb, UD(0)), 0);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", keep_cb, UD(1)), 0);
    pgw_buf_t w = {0};
    for (int q = 0; q < 2; q++) {
        size_t at = pgt_msg_begin(&w, 'E');
        pgt_msg_put_u8(&w, 'Z'); /* a code the table does not know */
        pgt_msg_put_cstr(&w, "skipped");
        for (size_t i = 0; i < PGW__ARRAY_LEN(fields); i++) {
            pgt_msg_put_u8(&w, (uint8_t)fields[i].code);
            pgt_msg_put_cstr(&w, fields[i].member);
        }
        pgt_msg_put_u8(&w, 0);
        pgt_msg_end(&w, at);
        pgt_msg_ready(&w, 'I');
    }
    feed(s, &w);
    memset(w.data, 'x', w.len); /* the results hold copies */
    pgw_session_free(s);
    for (int q = 0; q < 2; q++) {
        assert_int_equal(R.done[q].calls, 1);
        assert_int_equal(R.done[q].status, PGW_ESERVER);
        const pgw_error_t *e = pgw_result_error(R.keep[q]);
        assert_non_null(e);
        for (size_t i = 0; i < PGW__ARRAY_LEN(fields); i++) {
            const char *got =
                *(const char *const *)(const void *)((const char *)e + fields[i].offset);
            assert_non_null(got);
            assert_string_equal(got, fields[i].member);
        }
        pgw_result_free(R.keep[q]);
    }
    pgw_buf_free(&w);
}

/* ------------------------------------------------------ FATAL, fail, free */

static void test_fatal_error(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    for (int i = 0; i < 3; i++) {
        pgw_param_t p = pgw_int8(i);
        assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i)), 0);
    }
    pgw_buf_t w = {0};
    w_int8_query(&w, 0, 1);
    pgt_msg_error(&w, "FATAL", "57P01", "terminating connection due to administrator command");
    assert_int_equal(pgw_session_recv(s, w.data, w.len), PGW_ECONNLOST);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].status, PGW_ESERVER);
    assert_string_equal(R.done[1].sqlstate, "57P01");
    assert_int_equal(R.done[2].status, PGW_ECONNLOST);
    for (int i = 0; i < 3; i++)
        assert_int_equal(R.done[i].calls, 1);
    assert_int_equal(R.broken_calls, 1);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_fail(s, PGW_ECONNLOST); /* no second on_broken */
    assert_int_equal(R.broken_calls, 1);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_fail_and_free(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_sync(s, rec_cb, UD(1)), 0);
    pgw_session_fail(s, PGW_ECONNLOST);
    assert_int_equal(R.done[0].status, PGW_ECONNLOST);
    assert_int_equal(R.done[1].status, PGW_ECONNLOST);
    assert_int_equal(R.broken_calls, 1);
    assert_int_equal(R.broken_err, PGW_ECONNLOST);
    assert_int_equal(pgw_session_error(s), PGW_ECONNLOST);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(2)), PGW_ECLOSED);
    pgw_session_free(s);

    s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_terminate(s), 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_TERMINATED);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", rec_cb, UD(1)), PGW_ECLOSED);
    char types[16];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "QX");
    pgw_session_free(s);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, PGW_ECANCELED);
    assert_int_equal(R.done[1].calls, 0);
}

/* --------------------------------------------------- encoding is atomic */

static int failing_encoder(const void *ctx, pgw_buf_t *out)
{
    (void)ctx;
    pgw_buf_append(out, "junk", 4);
    return PGW_ERANGE;
}

static void test_encode_failure_rolls_back(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    int ww = R.want_write;
    pgw_param_t p[2] = {pgw_int8(1), pgw_encoded(20, failing_encoder, NULL)};
    assert_int_equal(pgw_session_query(s, "SELECT $1, $2", p, 2, 0, rec_cb, UD(0)), PGW_ERANGE);
    size_t n;
    assert_null(pgw_session_pending_output(s, &n));
    assert_int_equal(n, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(R.want_write, ww);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 1, 0, rec_cb, UD(0)), PGW_EINVAL);
    /* A good request after it goes out alone; want_write fires once for two. */
    pgw_param_t q = pgw_int8(3);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &q, 1, 0, rec_cb, UD(1)), 0);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &q, 1, 0, rec_cb, UD(2)), 0);
    assert_int_equal(R.want_write, ww + 1);
    pgw_buf_t taken;
    pgw_buf_init(&taken, NULL);
    pgw_session_take_output(s, &taken);
    assert_true(taken.len > 0);
    assert_int_equal(taken.data[0], 'P');
    assert_null(pgw_session_pending_output(s, &n));
    /* Hand the buffer back empty: its storage is reused. */
    taken.len = 0;
    pgw_session_take_output(s, &taken);
    assert_int_equal(taken.len, 0);
    pgw_buf_free(&taken);
    assert_int_equal(pgw_session_sync(s, rec_cb, UD(3)), 0);
    assert_int_equal(R.want_write, ww + 2);
    assert_int_equal(R.done[0].calls, 0);
    pgw_session_free(s);
}

/* --------------------------------------------------- chunks and lifetimes */

static void test_big_rows_and_lifetime(void **state)
{
    (void)state;
    /* 64-byte chunks; rows of 1000 bytes must grow a chunk once each, and
     * buffered rows must survive later input (no chunk reused under them). */
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.read_chunk_size = 64});
    enum { NQ = 5, NROWS = 20 };
    for (int i = 0; i < NQ; i++)
        assert_int_equal(pgw_session_simple_query(s, "SELECT", keep_cb, UD(i)), 0);
    pgw_buf_t w = {0};
    static const char *const names[] = {"a", "b"};
    static const uint32_t oids[] = {25, 25};
    char big[1001], small[16];
    for (int q = 0; q < NQ; q++) {
        pgt_msg_row_desc(&w, 2, names, oids, 0);
        for (int r = 0; r < NROWS; r++) {
            memset(big, 'a' + (q + r) % 26, 1000);
            big[1000] = 0;
            snprintf(small, sizeof small, "%d-%d", q, r);
            pgt_msg_data_row(&w, 2, (const char *const[]){(q + r) % 3 ? small : big, small});
        }
        pgt_msg_command_complete(&w, "SELECT 20");
        pgt_msg_ready(&w, 'I');
    }
    /* Feed in odd pieces. */
    for (size_t at = 0; at < w.len;) {
        size_t n = 1 + (at * 7) % 97;
        if (n > w.len - at) n = w.len - at;
        assert_int_equal(pgw_session_recv(s, w.data + at, n), 0);
        at += n;
    }
    pgw_session_free(s); /* results outlive the session */
    for (int q = 0; q < NQ; q++) {
        assert_int_equal(R.done[q].status, 0);
        pgw_result_t *res = R.keep[q];
        assert_int_equal(pgw_result_nrows(res), NROWS);
        for (int r = 0; r < NROWS; r++) {
            pgw_value_t v;
            snprintf(small, sizeof small, "%d-%d", q, r);
            assert_int_equal(pgw_result_value(res, r, 1, &v), 0);
            assert_int_equal(v.len, (int32_t)strlen(small));
            assert_memory_equal(v.p, small, strlen(small));
            assert_int_equal(pgw_result_value(res, r, 0, &v), 0);
            if ((q + r) % 3 == 0) {
                assert_int_equal(v.len, 1000);
                assert_int_equal(v.p[0], 'a' + (q + r) % 26);
                assert_int_equal(v.p[999], 'a' + (q + r) % 26);
            }
        }
        pgw_result_free(res);
    }
    pgw_buf_free(&w);
}

/* Steady state: once warm, a query/free cycle allocates nothing. */
static void test_steady_state_no_alloc(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = count_alloc});
    pgw_buf_t w = {0};
    for (int i = 0; i < 50; i++)
        w_int8_query(&w, i, 1);
    size_t warm = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 50; i++) {
            pgw_param_t p = pgw_int8(i);
            assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i)), 0);
        }
        size_t n;
        pgw_session_pending_output(s, &n);
        pgw_session_consumed_output(s, n);
        assert_int_equal(pgw_session_recv(s, w.data, w.len), 0);
        assert_int_equal(R.done[49].value, 49);
        if (round == 1) warm = g_count.calls;
    }
    assert_int_equal(g_count.calls, warm);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* Rows streamed to one request's row callback: how many, and whether
 * each came with the next index of its request. */
typedef struct streamed {
    int rows;
    int in_order;
    int64_t sum;
} streamed_t;

static int on_streamed_row(const pgw_row_t *row, void *ud)
{
    streamed_t *st = ud;
    if (row->index != (uint64_t)st->rows) st->in_order = 0;
    st->rows++;
    int64_t v;
    if (pgw_get_int8(&row->values[0], &v) == 0) st->sum += v;
    return 0;
}

static void on_streamed_done(int status, pgw_result_t *res, void *ud)
{
    (void)ud;
    assert_int_equal(status, 0);
    pgw_result_free(res);
}

/* Streaming requests keep their row callback in a block apart from their
 * FIFO entry (session_internal.h, pgw__req_aux), taken back with the
 * entry: once warm, a stream of them allocates nothing, and each request
 * numbers its rows from 0 (the count lives in the block and starts again
 * with each request that takes it). */
static void test_steady_state_streamed(void **state)
{
    (void)state;
    enum { NQ = 40, NROWS = 3 };
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = count_alloc});
    pgw_buf_t w = {0};
    static const char *const names[] = {"v"};
    static const uint32_t oids[] = {20};
    for (int i = 0; i < NQ; i++) {
        pgt_msg(&w, '1', NULL, 0);
        pgt_msg(&w, '2', NULL, 0);
        pgt_msg_row_desc(&w, 1, names, oids, 1);
        for (int r = 0; r < NROWS; r++)
            pgt_msg_data_row_int8(&w, i);
        pgt_msg_command_complete(&w, "SELECT 3");
        pgt_msg_ready(&w, 'I');
    }
    size_t warm = 0;
    /* Rounds enough that blocks not taken back would outgrow what the
     * first two rounds grew (each growth doubles the room). */
    for (int round = 0; round < 6; round++) {
        streamed_t st[NQ];
        memset(st, 0, sizeof st);
        for (int i = 0; i < NQ; i++) {
            st[i].in_order = 1;
            pgw_param_t p = pgw_int8(i);
            pgw_request_t q = PGW_QUERY("SELECT $1::int8 FROM generate_series(1, 3)", &p, 1,
                                        on_streamed_done, &st[i]);
            q.on_row = on_streamed_row;
            assert_int_equal(pgw_session_submit(s, &q), 0);
        }
        size_t n;
        pgw_session_pending_output(s, &n);
        pgw_session_consumed_output(s, n);
        assert_int_equal(pgw_session_recv(s, w.data, w.len), 0);
        assert_int_equal(pgw_session_pending(s), 0);
        for (int i = 0; i < NQ; i++) {
            assert_int_equal(st[i].rows, NROWS);
            assert_true(st[i].in_order);
            assert_int_equal(st[i].sum, (int64_t)NROWS * i);
        }
        if (round == 1) warm = g_count.calls;
    }
    assert_int_equal(g_count.calls, warm);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A text query answered with rows copies of one text value: the whole reply
 * to feed, built once. */
static void w_text_rows(pgw_buf_t *w, int rows, const char *text, const char *tag)
{
    static const char *const names[] = {"t"};
    static const uint32_t oids[] = {25};
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg_row_desc(w, 1, names, oids, 0);
    for (int i = 0; i < rows; i++)
        pgt_msg_data_row(w, 1, (const char *const[]){text});
    pgt_msg_command_complete(w, tag);
    pgt_msg_ready(w, 'I');
}

/* Three rounds of the query answered by w, fed piece bytes at a time: the
 * third allocates nothing the second did not. */
static void assert_steady_state(pgw_session_t *s, const pgw_buf_t *w, size_t piece, const char *tag)
{
    size_t warm = 0;
    for (int round = 0; round < 3; round++) {
        assert_int_equal(pgw_session_query(s, "SELECT t", NULL, 0, PGW_Q_TEXT, rec_cb, UD(0)), 0);
        size_t n;
        pgw_session_pending_output(s, &n);
        pgw_session_consumed_output(s, n);
        for (size_t off = 0; off < w->len; off += piece) {
            size_t len = w->len - off < piece ? w->len - off : piece;
            assert_int_equal(pgw_session_recv(s, w->data + off, len), 0);
        }
        assert_int_equal(R.done[0].status, 0);
        assert_string_equal(R.done[0].tag, tag);
        if (round == 1) warm = g_count.calls;
    }
    assert_int_equal(g_count.calls, warm);
}

/* A text value of n copies of c, NUL-terminated (free it). */
static char *repeated(char c, size_t n)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    memset(t, c, n);
    t[n] = '\0';
    return t;
}

/* Rows larger than a read chunk each get a chunk of their own; once their
 * result is freed those chunks are kept (within chunk_cache_bytes) and
 * reused, so a steady stream of large rows allocates nothing either. */
static void test_steady_state_big_rows(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = count_alloc});
    char *big = repeated('x', 300 * 1024);
    pgw_buf_t w = {0};
    w_text_rows(&w, 10, big, "SELECT 10");
    assert_steady_state(s, &w, w.len, "SELECT 10");
    pgw_session_free(s);
    pgw_buf_free(&w);
    free(big);
}

/* -------------------------------------------------- request descriptors */

/* A caller built against an older, shorter pgw_request_t: the fields past
 * its size are not read (here they hold 0xff bytes, which as timeout_ms
 * would be refused). Size 0 is refused. */
static void test_request_size(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    size_t old_size = offsetof(pgw_request_t, timeout_ms);
    union {
        pgw_request_t r;
        unsigned char bytes[2 * sizeof(pgw_request_t)];
    } u;
    memset(u.bytes, 0xff, sizeof u.bytes);
    pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0));
    memcpy(u.bytes, &q, old_size);
    u.r.size = old_size;
    assert_int_equal(pgw_session_submit(s, &u.r), 0);

    /* A batch of such descriptors: the array's stride is the caller's size. */
    memset(u.bytes, 0xff, sizeof u.bytes);
    pgw_request_t q1 = PGW_QUERY("SELECT 2", NULL, 0, rec_cb, UD(1));
    q1.size = old_size;
    memcpy(u.bytes, &q1, old_size);
    pgw_request_t q2 = PGW_QUERY("SELECT 3", NULL, 0, rec_cb, UD(2));
    q2.size = old_size;
    memcpy(u.bytes + old_size, &q2, old_size);
    assert_ptr_equal(pgw_request_nth(&u.r, 1), (const void *)(u.bytes + old_size));
    assert_int_equal(pgw_session_submit_batch(s, &u.r, 2, 0, rec_cb, UD(3)), 0);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDESPBDEPBDES");

    pgw_request_t z = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(4));
    z.size = 0;
    assert_int_equal(pgw_session_submit(s, &z), PGW_EINVAL);
    assert_int_equal(pgw_session_submit(s, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_pending(s), 4);
    pgw_session_free(s);
}

/* PGW_Q_SYNC ends a sync group inside a one-Sync batch: an error before it
 * aborts only its own group. The batch is queued on s; check_queued (may be
 * NULL) looks at the FIFO before the answers come. */
static void check_group_boundary(pgw_session_t *s, void (*check_queued)(pgw_session_t *s))
{
    pgw_param_t ps[3] = {pgw_int8(0), pgw_int8(1), pgw_int8(2)};
    pgw_request_t reqs[3];
    for (int i = 0; i < 3; i++)
        reqs[i] = PGW_QUERY("SELECT $1::int8", &ps[i], 1, rec_cb, UD(i));
    reqs[1].flags = PGW_Q_SYNC;
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, 0, rec_cb, UD(3)), 0);
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "PBDEPBDESPBDES");
    if (check_queued) check_queued(s);
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "ERROR", "22012", "division by zero"); /* request 0 fails */
    pgt_msg_ready(&w, 'I');                                  /* request 1 skipped */
    w_int8_query(&w, 2, 1); /* request 2 runs, then the last Sync */
    feed(s, &w);
    assert_int_equal(R.done[0].status, PGW_ESERVER);
    assert_int_equal(R.done[1].status, PGW_EABORTED);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[2].value, 2);
    assert_int_equal(R.done[3].status, PGW_ESERVER); /* the batch: its first failure */
    assert_true(R.done[3].order > R.done[2].order);
    for (int i = 0; i < 4; i++)
        assert_int_equal(R.done[i].calls, 1);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

static void test_batch_group_boundary(void **state)
{
    (void)state;
    check_group_boundary(ready_session(&R, NULL), NULL);
}

/* Requests 0 and 1 in the last group before the wrap, request 2 and the
 * batch's Sync in group 0. */
static void check_groups_wrapped(pgw_session_t *s)
{
    assert_int_equal(s->fifo.head->group, PGW__GROUP_INTERNAL - 1);
    assert_int_equal(s->fifo.tail->group, 0);
    assert_int_equal(s->fifo.tx_group, 1);
}

/* Sync groups are numbered in 32 bits and only compared for equality: the
 * numbers wrap, and never to the number of the session's own queries
 * (PGW__GROUP_INTERNAL). Across the wrap, an error still aborts the rest
 * of its own group and nothing of the next. */
static void test_group_numbers_wrap(void **state)
{
    (void)state;
    assert_int_equal(pgw__group_next(5), 6);
    assert_int_equal(pgw__group_next(PGW__GROUP_INTERNAL - 1), 0);
    assert_int_not_equal(pgw__group_next(PGW__GROUP_INTERNAL - 2), PGW__GROUP_INTERNAL);
    pgw_session_t *s = ready_session(&R, NULL);
    s->fifo.tx_group = PGW__GROUP_INTERNAL - 1;
    check_group_boundary(s, check_groups_wrapped);
}

static uint64_t g_clock;

static uint64_t test_clock(void *ud)
{
    (void)ud;
    return g_clock;
}

/* pgw_result_timing of pipelined requests whose answers are split across
 * reads: a request's first reply is the time of the read that brought it
 * (the clock is read once per read), not the earlier one that brought the
 * request before it, nor the one that completed it. */
static void test_timing_first_reply(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.now_ns = test_clock});
    g_clock = 50;
    pgw_param_t p[2] = {pgw_int8(1), pgw_int8(2)};
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p[0], 1, 0, keep_cb, UD(0)), 0);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p[1], 1, 0, keep_cb, UD(1)), 0);
    static const char *const names[] = {"tag"};
    static const uint32_t oids[] = {20};
    pgw_buf_t w = {0};
    g_clock = 100; /* request 0's answer begins */
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    feed(s, &w);
    w.len = 0;
    g_clock = 200; /* request 0 completes, request 1's answer begins */
    pgt_msg_row_desc(&w, 1, names, oids, 1);
    pgt_msg_data_row_int8(&w, 1);
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '1', NULL, 0);
    feed(s, &w);
    w.len = 0;
    g_clock = 300; /* request 1 completes */
    pgt_msg(&w, '2', NULL, 0);
    pgt_msg_row_desc(&w, 1, names, oids, 1);
    pgt_msg_data_row_int8(&w, 2);
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    static const uint64_t want[2][3] = {{50, 100, 200}, {50, 200, 300}};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(R.done[i].calls, 1);
        assert_int_equal(R.done[i].status, 0);
        uint64_t q, f, d;
        pgw_result_timing(R.keep[i], &q, &f, &d);
        assert_int_equal(q, want[i][0]);
        assert_int_equal(f, want[i][1]);
        assert_int_equal(d, want[i][2]);
        pgw_result_free(R.keep[i]);
    }
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A batch is queued whole or not at all: a request that cannot be encoded
 * (a parameter over max_message_size) leaves no byte and no entry behind,
 * and a prepare earlier in the failed batch does not vouch for a statement
 * the server never saw. */
static void test_batch_all_or_nothing(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.max_message_size = 4096});
    static char big[8192];
    memset(big, 'x', sizeof big - 1);
    pgw_param_t huge = pgw_text(big);
    int want_write = R.want_write;
    pgw_request_t reqs[3] = {PGW_PREPARE("st", "SELECT 1", NULL, 0, rec_cb, UD(0)),
                             PGW_QUERY("SELECT $1", &huge, 1, rec_cb, UD(1)),
                             PGW_QUERY("SELECT 2", NULL, 0, rec_cb, UD(2))};
    assert_int_equal(pgw_session_submit_batch(s, reqs, 3, 0, rec_cb, UD(3)), PGW_ETOOBIG);
    assert_non_null(strstr(pgw_session_refusal(s), "request 1"));
    size_t n = 1;
    assert_null(pgw_session_pending_output(s, &n));
    assert_int_equal(n, 0);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(R.want_write, want_write); /* the driver was not told */

    /* "st" is unknown to the session: its execution describes it,
     * and the server's 26000 is the caller's own error, not ESTMTINVALID. */
    pgw_request_t ex = PGW_EXECUTE("st", NULL, 0, rec_cb, UD(4));
    assert_int_equal(pgw_session_submit(s, &ex), 0);
    assert_string_equal(pgw_session_refusal(s), "");
    char types[64];
    out_types(s, types, sizeof types);
    assert_string_equal(types, "DBDES");
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"st\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[4].status, PGW_ESERVER);
    for (int i = 0; i < 4; i++)
        assert_int_equal(R.done[i].calls, 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* What a descriptor cannot ask for is refused before anything is queued,
 * with the reason in pgw_session_refusal. */
static void test_request_refusals(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, rec_cb, UD(0));
    r.timeout_ms = 100;
    assert_int_equal(pgw_session_submit(s, &r), PGW_ENOTSUP);
    assert_non_null(strstr(pgw_session_refusal(s), "timeout"));
    r = PGW_EXECUTE(NULL, NULL, 0, rec_cb, UD(0));
    assert_int_equal(pgw_session_submit(s, &r), PGW_EINVAL);
    assert_non_null(strstr(pgw_session_refusal(s), "statement name"));
    r = PGW_SIMPLE("SELECT 1", rec_cb, UD(0));
    pgw_param_t p = pgw_int4(1);
    r.params = &p;
    r.nparams = 1;
    assert_int_equal(pgw_session_submit(s, &r), PGW_EINVAL);
    r = PGW_CLOSE("st", rec_cb, UD(0));
    r.on_row = NULL;
    r.kind = (pgw_request_kind_t)99;
    assert_int_equal(pgw_session_submit(s, &r), PGW_EINVAL);

    /* A known statement taking one parameter, executed with two. */
    static const uint32_t poids[] = {23};
    assert_int_equal(pgw_session_prepare(s, "s1", "SELECT $1::int4", poids, 1, rec_cb, UD(1)), 0);
    pgw_buf_t w = {0};
    static const char *const names[] = {"a"};
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_param_desc(&w, 1, poids);
    pgt_msg_row_desc(&w, 1, names, poids, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    take_out(s, &w); /* discard what was sent */
    assert_int_equal(R.done[1].status, 0);
    pgw_param_t two[2] = {pgw_int4(1), pgw_int4(2)};
    r = PGW_EXECUTE("s1", two, 2, rec_cb, UD(2));
    assert_int_equal(pgw_session_submit(s, &r), PGW_EINVAL);
    assert_non_null(strstr(pgw_session_refusal(s), "takes 1 parameters, 2 given"));
    assert_int_equal(pgw_session_pending(s), 0);
    size_t n = 1;
    assert_null(pgw_session_pending_output(s, &n));
    assert_int_equal(R.done[0].calls, 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* The caller's result formats reach Bind: on an unnamed query, and on a
 * known statement instead of the stored per-column formats. */
static void test_request_result_formats(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    static const int16_t fm[2] = {PGW_FORMAT_TEXT, PGW_FORMAT_BINARY};
    pgw_request_t r = PGW_QUERY("SELECT 1, 2", NULL, 0, rec_cb, UD(0));
    r.result_formats = fm;
    r.nresult_formats = 2;
    assert_int_equal(pgw_session_submit(s, &r), 0);
    pgw_buf_t out = {0};
    take_out(s, &out);
    /* Parse first, then the Bind. */
    size_t at = 1 + ((size_t)out.data[1] << 24 | (size_t)out.data[2] << 16 |
                     (size_t)out.data[3] << 8 | out.data[4]);
    int16_t fmts[8];
    int nf;
    bind_result_formats(&out, at, fmts, &nf);
    assert_int_equal(nf, 2);
    assert_int_equal(fmts[0], 0);
    assert_int_equal(fmts[1], 1);
    pgw_buf_free(&out);
    pgw_session_free(s);
}

/* A buffered result spanning many default-size read chunks: once it is
 * freed its chunks are kept (within chunk_cache_bytes) for the next one, so
 * results of that size allocate nothing in steady state either. */
static void test_steady_state_many_chunks(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = count_alloc});
    char *text = repeated('y', 10 * 1024);
    pgw_buf_t w = {0};
    w_text_rows(&w, 200, text, "SELECT 200");        /* 2 MB: about 32 chunks of 64 KiB */
    assert_steady_state(s, &w, 16384, "SELECT 200"); /* socket-sized pieces */
    pgw_session_free(s);
    pgw_buf_free(&w);
    free(text);
}

/* The protocol trace's calls, by direction. */
static int g_traced_in, g_traced_out;

static void count_trace(pgw_session_t *s, char dir, const uint8_t *msg, size_t len, void *ud)
{
    (void)s;
    (void)msg;
    (void)len;
    (void)ud;
    if (dir == 'B')
        g_traced_in++;
    else
        g_traced_out++;
}

static void expect_counts(pgw_session_t *s, uint64_t messages, uint64_t ends, uint64_t rows,
                          uint64_t end_at, uint64_t rows_at_end, uint64_t other_at)
{
    pgw_rx_counts_t c;
    pgw_session_rx_counts(s, &c);
    assert_int_equal(c.messages, messages);
    assert_int_equal(c.ends, ends);
    assert_int_equal(c.rows, rows);
    assert_int_equal(c.end_at, end_at);
    assert_int_equal(c.rows_at_end, rows_at_end);
    assert_int_equal(c.other_at, other_at);
}

/* pgw_session_rx_counts counts each message as it is framed, telling the
 * ends of statements, rows, and the notices and asynchronous messages
 * apart from the rest; pgw_session_trace_received stops and restarts the
 * trace of what is received, and leaves that of what is sent. */
static void test_rx_counts_and_trace_received(void **state)
{
    (void)state;
    rec_t rec;
    sess_opts_t o = {.on_trace = count_trace};
    g_traced_in = g_traced_out = 0;
    pgw_session_t *s = ready_session(&rec, &o);
    /* AuthenticationOk, two ParameterStatus, BackendKeyData, ReadyForQuery */
    expect_counts(s, 5, 0, 0, 0, 0, 5);
    assert_int_equal(g_traced_in, 5);

    pgw_session_trace_received(s, 0);
    int sent = g_traced_out;
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1; SELECT 2; SELECT 3", rec_cb, UD(0)), 0);
    assert_int_equal(g_traced_out, sent + 1); /* the Query */
    static const char *const names[] = {"x"};
    static const uint32_t oids[] = {23};
    const char *one[] = {"1"}, *two[] = {"2"};
    pgw_buf_t w = {0};
    pgt_msg_row_desc(&w, 1, names, oids, 0);
    pgt_msg_data_row(&w, 1, one);
    pgt_msg_data_row(&w, 1, two);
    pgt_msg_command_complete(&w, "SELECT 2");
    pgt_msg_notice(&w, "after the first");
    pgt_msg_param_status(&w, "application_name", "x");
    pgt_msg_notification(&w, 7, "ch", "p");
    feed(s, &w);
    /* the end is the 9th message: 2 rows before it, the T and D's after
     * ReadyForQuery; nothing but the asynchronous three after it */
    expect_counts(s, 12, 1, 2, 9, 2, 8);
    pgw_buf_reset(&w);
    pgt_msg_row_desc(&w, 1, names, oids, 0);
    pgt_msg_notice(&w, "inside the second");
    pgt_msg_data_row(&w, 1, one);
    feed(s, &w);
    expect_counts(s, 15, 1, 3, 9, 2, 15);
    assert_int_equal(g_traced_in, 5); /* none of these traced */

    pgw_session_trace_received(s, 1);
    pgw_buf_reset(&w);
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_error(&w, "ERROR", "42P01", "no such table");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(g_traced_in, 8);
    /* CommandComplete and ErrorResponse both end a statement */
    expect_counts(s, 18, 3, 3, 17, 3, 18);
    assert_int_equal(rec.done[0].calls, 1);
    assert_int_equal(rec.done[0].status, PGW_ESERVER);
    pgw_buf_free(&w);
    pgw_session_free(s);

    /* NULL: zeros, and nothing to change */
    pgw_rx_counts_t c;
    memset(&c, 0xff, sizeof c);
    pgw_session_rx_counts(NULL, &c);
    assert_int_equal(c.messages, 0);
    assert_int_equal(c.other_at, 0);
    pgw_session_trace_received(NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_parameter_named),
        cmocka_unit_test(test_streamed_batch_parts),
        cmocka_unit_test(test_pipeline_split_every_offset),
        cmocka_unit_test(test_error_in_sync_group),
        cmocka_unit_test(test_commit_failure_at_sync),
        cmocka_unit_test(test_batch_sync_each),
        cmocka_unit_test(test_no_pipelining),
        cmocka_unit_test(test_request_size),
        cmocka_unit_test(test_batch_group_boundary),
        cmocka_unit_test(test_group_numbers_wrap),
        cmocka_unit_test(test_timing_first_reply),
        cmocka_unit_test(test_batch_all_or_nothing),
        cmocka_unit_test(test_request_refusals),
        cmocka_unit_test(test_request_result_formats),
        cmocka_unit_test(test_prepare_execute),
        cmocka_unit_test(test_simple_multi),
        cmocka_unit_test(test_simple_query_rows),
        cmocka_unit_test(test_async_interleaved),
        cmocka_unit_test(test_streaming),
        cmocka_unit_test(test_reentrancy),
        cmocka_unit_test(test_fatal_error),
        cmocka_unit_test(test_error_every_field),
        cmocka_unit_test(test_fail_and_free),
        cmocka_unit_test(test_encode_failure_rolls_back),
        cmocka_unit_test(test_big_rows_and_lifetime),
        cmocka_unit_test(test_steady_state_no_alloc),
        cmocka_unit_test(test_steady_state_streamed),
        cmocka_unit_test(test_steady_state_big_rows),
        cmocka_unit_test(test_steady_state_many_chunks),
        cmocka_unit_test(test_rx_counts_and_trace_received),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
