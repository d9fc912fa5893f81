/*
 * Statement descriptions and result formats, driven from byte arrays: a late
 * reply never brings back a description its statement lost, SQL that can
 * replace statements makes the next executions describe their portal, the
 * server's 26000 / 0A000 at Bind is PGW_ESTMTINVALID, and a one-shot query
 * whose result has a type without binary output is re-run with text for
 * that column when nothing else depends on it; a query's Parse names the
 * types it declares and no more.
 */
#include "test_session_util.h"

static rec_t R;

enum { OID_INT4 = 23, OID_INT8 = 20, OID_TEXT = 25, OID_ACLITEM = 1033 };

/* Output since the last call: message types, and the first Bind's result
 * formats (nf -1 when there is no Bind). */
typedef struct sent {
    char types[64];
    int16_t fmts[16];
    int nf;
    uint8_t params[8192];
    size_t plen;
} sent_t;

static void take_sent(pgw_session_t *s, sent_t *o)
{
    pgw_buf_t w = {0};
    take_out(s, &w);
    msg_types(&w, 0, o->types, sizeof o->types);
    o->nf = -1;
    o->plen = 0;
    size_t b = find_msg(&w, 0, 'B');
    if (b != SIZE_MAX) {
        const uint8_t *p;
        bind_parts(&w, b, &p, &o->plen, o->fmts, &o->nf);
        assert_true(o->plen <= sizeof o->params);
        memcpy(o->params, p, o->plen);
    }
    pgw_buf_free(&w);
}

static void w_desc1(pgw_buf_t *w, const char *name, uint32_t oid, int16_t fmt)
{
    pgt_msg_row_desc(w, 1, (const char *const[]){name}, (const uint32_t[]){oid}, fmt);
}

/* The answer to a prepare (or describe) of one column col of type oid. */
static void w_prepared(pgw_buf_t *w, const char *col, uint32_t oid)
{
    pgt_msg(w, '1', NULL, 0);
    pgt_msg_param_desc(w, 0, NULL);
    w_desc1(w, col, oid, 0);
    pgt_msg_ready(w, 'I');
}

/* The answer to an execute of a statement not described yet (Describe
 * statement, Bind, Describe portal, Execute), bound with binary for every
 * column: one row holding the binary value v[0..n). */
static void w_described_row(pgw_buf_t *w, const char *col, uint32_t oid, const void *v, size_t n)
{
    pgt_msg_param_desc(w, 0, NULL);
    w_desc1(w, col, oid, 0); /* a statement's: formats not known yet */
    pgt_msg(w, '2', NULL, 0);
    w_desc1(w, col, oid, PGW_FORMAT_BINARY);
    size_t at = pgt_msg_begin(w, 'D');
    pgt_msg_put_i16(w, 1);
    pgt_msg_put_i32(w, (int32_t)n);
    pgt_msg_raw(w, v, n);
    pgt_msg_end(w, at);
    pgt_msg_command_complete(w, "SELECT 1");
    pgt_msg_ready(w, 'I');
}

/* The session's rule (session.h, "Result formats"): binary for every type
 * the server sends in binary. */
static int16_t column_format(uint32_t oid)
{
    return pgw_type_binary_output(oid) ? PGW_FORMAT_BINARY : PGW_FORMAT_TEXT;
}

/* Prepare name (answered: one column col of type oid) and check it is then
 * executed on the fast path. */
static void prepare_known(pgw_session_t *s, const char *name, const char *col, uint32_t oid)
{
    assert_int_equal(pgw_session_prepare(s, name, "SELECT ...", NULL, 0, rec_cb, UD(100)), 0);
    sent_t o;
    take_sent(s, &o);
    assert_string_equal(o.types, "PDS");
    pgw_buf_t w = {0};
    w_prepared(&w, col, oid);
    feed(s, &w);
    pgw_buf_free(&w);
    assert_int_equal(R.done[100].status, 0);
}

/* ------------------------------------------------------ stale descriptions */

/* prepare s, close s pipelined: the reply to the Parse arrives after the
 * close was queued and must not bring the old description back. */
static void test_late_reply_after_close(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_prepare(s, "s", "select 1::int8 as a", NULL, 0, rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_close_statement(s, "s", rec_cb, UD(1)), 0);
    sent_t o;
    take_sent(s, &o);
    assert_string_equal(o.types, "PDSCS");
    pgw_buf_t w = {0};
    w_prepared(&w, "a", OID_INT8);
    pgt_msg(&w, '3', NULL, 0);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[1].status, 0);

    /* A new statement under the same name, executed before its description
     * is back: Describe statement and portal, binary for every column (what
     * the rule gives for any column but the few without binary output,
     * which bind again after the server's 42883). */
    assert_int_equal(pgw_session_prepare(s, "s", "select 'x'::text as z", NULL, 0, rec_cb, UD(2)),
                     0);
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, keep_cb, UD(3)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "PDSDBDES");
    assert_int_equal(o.nf, 1);
    assert_int_equal(o.fmts[0], PGW_FORMAT_BINARY);
    w.len = 0;
    w_prepared(&w, "z", OID_TEXT);
    w_described_row(&w, "z", OID_TEXT, "x", 1);
    feed(s, &w);
    assert_int_equal(R.done[2].status, 0);
    assert_int_equal(R.done[3].status, 0);
    pgw_result_t *r = R.keep[3];
    assert_string_equal(pgw_result_fname(r, 0), "z");
    assert_int_equal(pgw_result_ftype(r, 0), OID_TEXT);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(r, 0, 0, &t), 0);
    assert_int_equal(t.len, 1);
    assert_memory_equal(t.p, "x", 1);
    pgw_result_free(r);

    /* Now the description is known: the fast path, with its formats. */
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(4)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "BES");
    assert_int_equal(o.nf, 1);
    assert_int_equal(o.fmts[0], column_format(OID_TEXT));
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* Two prepares of one name in flight: only the newest one's reply counts,
 * whatever order the table sees them in. */
static void test_replaced_while_pending(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_prepare(s, "s", "A", NULL, 0, rec_cb, UD(0)), 0);
    assert_int_equal(pgw_session_close_statement(s, "s", rec_cb, UD(1)), 0);
    assert_int_equal(pgw_session_prepare(s, "s", "B", NULL, 0, rec_cb, UD(2)), 0);
    sent_t o;
    take_sent(s, &o);
    pgw_buf_t w = {0};
    w_prepared(&w, "a", OID_INT8);
    feed(s, &w);
    /* Only A's reply is in: s is still pending (B not described yet). */
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(3)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "DBDES");
    assert_int_equal(o.fmts[0], PGW_FORMAT_BINARY);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* A statement this session never described (prepared as SQL, or by another
 * library on the same connection) is executed with binary results and a
 * Describe; that reply teaches the session its description. */
static void test_execute_unknown_learns(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_execute(s, "x", NULL, 0, 0, rec_cb, UD(0)), 0);
    sent_t o;
    take_sent(s, &o);
    assert_string_equal(o.types, "DBDES");
    assert_int_equal(o.nf, 1);
    assert_int_equal(o.fmts[0], PGW_FORMAT_BINARY);
    pgw_buf_t w = {0};
    static const uint8_t v42[8] = {0, 0, 0, 0, 0, 0, 0, 42};
    w_described_row(&w, "n", OID_INT8, v42, sizeof v42);
    feed(s, &w);
    assert_int_equal(R.done[0].status, 0);
    assert_int_equal(R.done[0].value, 42);
    assert_int_equal(pgw_session_execute(s, "x", NULL, 0, 0, rec_cb, UD(1)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "BES");
    assert_int_equal(o.nf, 1);
    assert_int_equal(o.fmts[0], PGW_FORMAT_BINARY);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* SQL that can replace or drop statements (DEALLOCATE, PREPARE, DISCARD) as
 * a whole word, through either query path, makes every statement unknown. */
static void test_sql_replacing_statements(void **state)
{
    (void)state;
    static const char *const replacing[] = {
        "DEALLOCATE s; PREPARE s AS select 'x'::text as z",
        "discard all",
        "  Prepare s(int) as select $1",
        "/* x */DEALLOCATE ALL",
    };
    for (size_t i = 0; i < sizeof replacing / sizeof *replacing; i++) {
        for (int simple = 0; simple < 2; simple++) {
            pgw_session_t *s = ready_session(&R, NULL);
            prepare_known(s, "s", "a", OID_INT8);
            if (simple)
                assert_int_equal(pgw_session_simple_query(s, replacing[i], rec_cb, UD(0)), 0);
            else
                assert_int_equal(pgw_session_query(s, replacing[i], NULL, 0, 0, rec_cb, UD(0)), 0);
            assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(1)), 0);
            sent_t o;
            take_sent(s, &o);
            assert_string_equal(o.types, simple ? "QDBDES" : "PBDESDBDES");
            pgw_session_free(s);
        }
    }
    /* Words that only contain a keyword change nothing. */
    static const char *const harmless[] = {"select discarded_at, prepared from t",
                                           "select 1 as deallocated"};
    for (size_t i = 0; i < sizeof harmless / sizeof *harmless; i++) {
        pgw_session_t *s = ready_session(&R, NULL);
        prepare_known(s, "s", "a", OID_INT8);
        assert_int_equal(pgw_session_simple_query(s, harmless[i], rec_cb, UD(0)), 0);
        assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(1)), 0);
        sent_t o;
        take_sent(s, &o);
        assert_string_equal(o.types, "QBES");
        pgw_session_free(s);
    }
}

/* 0A000 / 26000 at the Bind of a named execute: PGW_ESTMTINVALID with the
 * server's error attached, and the description is forgotten. */
static void test_stmt_invalid(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    prepare_known(s, "s", "a", OID_INT8);
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, keep_cb, UD(0)), 0);
    sent_t o;
    take_sent(s, &o);
    assert_string_equal(o.types, "BES");
    pgw_buf_t w = {0};
    pgt_msg_error(&w, "ERROR", "0A000", "cached plan must not change result type");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, PGW_ESTMTINVALID);
    assert_non_null(R.keep[0]);
    assert_string_equal(pgw_result_error(R.keep[0])->sqlstate, "0A000");
    pgw_result_free(R.keep[0]);
    /* Forgotten: the next execute describes it again. */
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, keep_cb, UD(1)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "DBDES");
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"s\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[1].status, PGW_ESTMTINVALID);
    assert_string_equal(pgw_result_error(R.keep[1])->sqlstate, "26000");
    pgw_result_free(R.keep[1]);

    /* A name the session never saw, or closed itself: the caller's mistake,
     * PGW_ESERVER. */
    assert_int_equal(pgw_session_execute(s, "never", NULL, 0, 0, rec_cb, UD(7)), 0);
    assert_int_equal(pgw_session_close_statement(s, "s", rec_cb, UD(8)), 0);
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(9)), 0);
    take_sent(s, &o);
    assert_string_equal(o.types, "DBDESCSDBDES");
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"never\" does not exist");
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '3', NULL, 0);
    pgt_msg_ready(&w, 'I');
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"s\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[7].status, PGW_ESERVER);
    assert_string_equal(R.done[7].sqlstate, "26000");
    assert_int_equal(R.done[9].status, PGW_ESERVER);

    /* Other errors stay PGW_ESERVER; an unnamed query's 26000 too. */
    prepare_known(s, "s", "a", OID_INT8);
    assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(2)), 0);
    assert_int_equal(pgw_session_query(s, "execute s", NULL, 0, 0, rec_cb, UD(3)), 0);
    take_sent(s, &o);
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "22012", "division by zero");
    pgt_msg_ready(&w, 'I');
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"s\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[2].status, PGW_ESERVER);
    assert_int_equal(R.done[3].status, PGW_ESERVER);
    /* A later request of the same sync group is aborted as usual. */
    pgw_request_t two[2] = {PGW_EXECUTE("s", NULL, 0, rec_cb, UD(4)),
                            PGW_EXECUTE("s", NULL, 0, rec_cb, UD(5))};
    assert_int_equal(pgw_session_submit_batch(s, two, 2, 0, rec_cb, UD(6)), 0);
    take_sent(s, &o);
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "26000", "prepared statement \"s\" does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[4].status, PGW_ESTMTINVALID);
    assert_int_equal(R.done[5].status, PGW_EABORTED);
    assert_int_equal(R.done[6].status, PGW_ESTMTINVALID);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------ types without binary output */

static void w_acl_desc(pgw_buf_t *w, int16_t fmt)
{
    pgt_msg_row_desc(w, 2, (const char *const[]){"relacl", "n"},
                     (const uint32_t[]){OID_ACLITEM, OID_INT4}, fmt);
}

static void w_no_binary_output(pgw_buf_t *w, char status)
{
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    w_acl_desc(w, 1);
    pgt_msg_error(w, "ERROR", "42883", "no binary output function available for type aclitem");
    pgt_msg_ready(w, status);
}

static void query_acl(pgw_session_t *s, size_t i, sent_t *o)
{
    pgw_param_t p[] = {pgw_int4(7), pgw_text("pg_class")};
    assert_int_equal(pgw_session_query(s,
                                       "SELECT relacl, $1::int4 FROM pg_class WHERE relname = $2",
                                       p, 2, 0, keep_cb, UD(i)),
                     0);
    take_sent(s, o);
    assert_string_equal(o->types, "PBDES");
}

/* Request i completed with the server's 42883 and nothing was sent again. */
static void expect_reported(pgw_session_t *s, size_t i)
{
    assert_int_equal(R.done[i].calls, 1);
    assert_int_equal(R.done[i].status, PGW_ESERVER);
    assert_string_equal(pgw_result_error(R.keep[i])->sqlstate, "42883");
    pgw_result_free(R.keep[i]);
    sent_t o;
    take_sent(s, &o);
    assert_string_equal(o.types, "");
}

static void test_no_binary_output_retried(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, NULL);
    sent_t first, o;
    query_acl(s, 0, &first);
    assert_int_equal(first.nf, 1);
    assert_int_equal(first.fmts[0], PGW_FORMAT_BINARY);
    pgw_buf_t w = {0};
    w_no_binary_output(&w, 'I');
    feed(s, &w);
    /* Not completed: the same parameters are bound again, with text for the
     * column without a binary decoder, in the same order. */
    assert_int_equal(R.done[0].calls, 0);
    assert_int_equal(pgw_session_pending(s), 1);
    take_sent(s, &o);
    assert_string_equal(o.types, "BDES");
    assert_int_equal(o.nf, 2);
    assert_int_equal(o.fmts[0], PGW_FORMAT_TEXT);
    assert_int_equal(o.fmts[1], PGW_FORMAT_BINARY);
    assert_int_equal(o.plen, first.plen);
    assert_memory_equal(o.params, first.params, first.plen);
    w.len = 0;
    pgt_msg(&w, '2', NULL, 0);
    /* The portal's description reports the formats asked per column. */
    size_t d = pgt_msg_begin(&w, 'T');
    pgt_msg_put_i16(&w, 2);
    static const char *const names[] = {"relacl", "n"};
    static const uint32_t oids[] = {OID_ACLITEM, OID_INT4};
    for (int i = 0; i < 2; i++) {
        pgt_msg_put_cstr(&w, names[i]);
        pgt_msg_put_i32(&w, 0);
        pgt_msg_put_i16(&w, 0);
        pgt_msg_put_i32(&w, (int32_t)oids[i]);
        pgt_msg_put_i16(&w, -1);
        pgt_msg_put_i32(&w, -1);
        pgt_msg_put_i16(&w, (int16_t)i);
    }
    pgt_msg_end(&w, d);
    size_t at = pgt_msg_begin(&w, 'D');
    pgt_msg_put_i16(&w, 2);
    pgt_msg_put_i32(&w, 13);
    pgt_msg_raw(&w, "{a=r/b,c=w/b}", 13);
    pgt_msg_put_i32(&w, 4);
    pgt_msg_put_i32(&w, 7);
    pgt_msg_end(&w, at);
    pgt_msg_command_complete(&w, "SELECT 1");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[0].calls, 1);
    assert_int_equal(R.done[0].status, 0);
    pgw_result_t *r = R.keep[0];
    assert_int_equal(pgw_result_fformat(r, 0), PGW_FORMAT_TEXT);
    assert_int_equal(pgw_result_fformat(r, 1), PGW_FORMAT_BINARY);
    int32_t v;
    assert_int_equal(pgw_result_int4(r, 0, 1, &v), 0);
    assert_int_equal(v, 7);
    pgw_result_free(r);

    /* A retried query that fails again is reported, not retried twice. */
    query_acl(s, 1, &first);
    w.len = 0;
    w_no_binary_output(&w, 'I');
    feed(s, &w);
    take_sent(s, &o);
    assert_string_equal(o.types, "BDES");
    w.len = 0;
    pgt_msg(&w, '2', NULL, 0);
    w_acl_desc(&w, 0);
    pgt_msg_error(&w, "ERROR", "42883", "no binary output function available for type aclitem");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    expect_reported(s, 1);
    assert_int_equal(pgw_session_pending(s), 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* Where a re-run could change what happened (a transaction block, requests
 * after it, a shared Sync) or would fail the same way, the error is
 * reported as it is. */
static void test_no_binary_output_reported(void **state)
{
    (void)state;
    pgw_buf_t w = {0};
    sent_t o;
    /* Inside a transaction block. */
    pgw_session_t *s = ready_session(&R, NULL);
    query_acl(s, 0, &o);
    w_no_binary_output(&w, 'E');
    feed(s, &w);
    expect_reported(s, 0);
    pgw_session_free(s);

    /* Another request queued after it. */
    s = ready_session(&R, NULL);
    query_acl(s, 0, &o);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, rec_cb, UD(1)), 0);
    take_sent(s, &o);
    w.len = 0;
    w_no_binary_output(&w, 'I');
    w_int8_query(&w, 1, 1);
    feed(s, &w);
    assert_int_equal(R.done[1].status, 0);
    assert_true(R.done[0].order < R.done[1].order);
    expect_reported(s, 0);
    pgw_session_free(s);

    /* In a batch (shared Sync). */
    s = ready_session(&R, NULL);
    pgw_request_t acl = PGW_QUERY("SELECT relacl FROM pg_class", NULL, 0, keep_cb, UD(0));
    assert_int_equal(pgw_session_submit_batch(s, &acl, 1, 0, rec_cb, UD(1)), 0);
    take_sent(s, &o);
    w.len = 0;
    w_no_binary_output(&w, 'I');
    feed(s, &w);
    assert_int_equal(R.done[1].status, PGW_ESERVER);
    expect_reported(s, 0);
    pgw_session_free(s);

    /* Every column already has a binary decoder: a retry would fail alike. */
    s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_query(s, "SELECT f()", NULL, 0, 0, keep_cb, UD(0)), 0);
    take_sent(s, &o);
    w.len = 0;
    pgt_msg(&w, '1', NULL, 0);
    pgt_msg(&w, '2', NULL, 0);
    w_desc1(&w, "f", OID_INT4, 1);
    pgt_msg_error(&w, "ERROR", "42883", "no binary output function available for type x");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    expect_reported(s, 0);
    pgw_session_free(s);

    /* 42883 at Parse means "operator does not exist". */
    s = ready_session(&R, NULL);
    assert_int_equal(pgw_session_query(s, "SELECT 'a' - 1", NULL, 0, 0, keep_cb, UD(0)), 0);
    take_sent(s, &o);
    w.len = 0;
    pgt_msg_error(&w, "ERROR", "42883", "operator does not exist");
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    expect_reported(s, 0);
    pgw_session_free(s);

    /* Parameters larger than the kept copy's bound (4 KiB). */
    s = ready_session(&R, NULL);
    static char big[5000];
    memset(big, 'x', sizeof big - 1);
    pgw_param_t p = pgw_text(big);
    assert_int_equal(
        pgw_session_query(s, "SELECT relacl, $1 FROM pg_class", &p, 1, 0, keep_cb, UD(0)), 0);
    take_sent(s, &o);
    w.len = 0;
    w_no_binary_output(&w, 'I');
    feed(s, &w);
    expect_reported(s, 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* The kept copy is recycled with its request: no allocation per query once
 * warm. */
static void test_steady_state_allocations(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.alloc = count_alloc});
    prepare_known(s, "s", "a", OID_INT8);
    pgw_buf_t w = {0};
    w_int8_query(&w, 5, 1);
    for (int round = 0; round < 3; round++) {
        if (round == 2) g_count.calls = 0;
        for (int i = 0; i < 8; i++) {
            pgw_param_t p = pgw_int8(5);
            assert_int_equal(pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, rec_cb, UD(i)), 0);
        }
        for (int i = 0; i < 8; i++)
            assert_int_equal(pgw_session_execute(s, "s", NULL, 0, 0, rec_cb, UD(8 + i)), 0);
        sent_t o;
        take_sent(s, &o);
        for (int i = 0; i < 8; i++)
            feed(s, &w);
        for (int i = 0; i < 8; i++) {
            pgw_buf_t x = {0};
            pgt_msg(&x, '2', NULL, 0);
            pgt_msg_data_row_int8(&x, 6);
            pgt_msg_command_complete(&x, "SELECT 1");
            pgt_msg_ready(&x, 'I');
            feed(s, &x);
            pgw_buf_free(&x);
        }
        assert_int_equal(pgw_session_pending(s), 0);
        assert_int_equal(R.done[15].value, 6);
    }
    assert_int_equal(g_count.calls, 0);
    pgw_session_free(s);
    pgw_buf_free(&w);
}

/* ------------------------------------------------------ Parse's types */

/* The first Parse of the output since the last call: its statement name
 * and the parameter types it names (how many: the return). */
static size_t sent_parse(pgw_session_t *s, char *name, size_t cap, uint32_t *oids, size_t max)
{
    pgw_buf_t w = {0};
    take_out(s, &w);
    size_t at = find_msg(&w, 0, 'P');
    assert_true(at != SIZE_MAX);
    const char *p = (const char *)w.data + at + 5;
    assert_true(strlen(p) < cap);
    strcpy(name, p);
    p += strlen(p) + 1; /* the name */
    p += strlen(p) + 1; /* the SQL */
    const uint8_t *q = (const uint8_t *)p;
    size_t n = (size_t)(q[0] << 8 | q[1]);
    assert_true(n <= max);
    for (size_t i = 0; i < n; i++, q += 4)
        oids[i] = (uint32_t)q[2] << 24 | (uint32_t)q[3] << 16 | (uint32_t)q[4] << 8 | q[5];
    pgw_buf_free(&w);
    return n;
}

/* A query's Parse names its parameters' types up to the last that is not
 * 0 (none for text parameters, as libpq's Parse without paramTypes), or
 * param_types as given; a query that gives param_types stays out of the
 * statement cache. */
static void test_parse_types(void **state)
{
    (void)state;
    pgw_session_t *s = ready_session(&R, &(sess_opts_t){.stmt_cache = true});
    char name[64];
    uint32_t oids[8];
    pgw_param_t texts[] = {pgw_text("1"), pgw_text("2")};
    pgw_param_t mixed[] = {pgw_text("1"), pgw_int4(2), pgw_text("3"), pgw_null(0)};
    pgw_param_t typed[] = {pgw_int4(1), pgw_int8(2)};

    pgw_request_t rq = PGW_QUERY("SELECT $1, $2", texts, 2, rec_cb, UD(0));
    rq.cache = PGW_CACHE_SKIP;
    assert_int_equal(pgw_session_submit(s, &rq), 0);
    assert_int_equal(sent_parse(s, name, sizeof name, oids, 8), 0);
    assert_string_equal(name, "");

    rq = PGW_QUERY("SELECT $1, $2, $3, $4", mixed, 4, rec_cb, UD(1));
    rq.cache = PGW_CACHE_SKIP;
    assert_int_equal(pgw_session_submit(s, &rq), 0);
    assert_int_equal(sent_parse(s, name, sizeof name, oids, 8), 2);
    assert_int_equal(oids[0], 0);
    assert_int_equal(oids[1], OID_INT4);

    rq = PGW_QUERY("SELECT $1, $2", typed, 2, rec_cb, UD(2));
    rq.cache = PGW_CACHE_SKIP;
    assert_int_equal(pgw_session_submit(s, &rq), 0);
    assert_int_equal(sent_parse(s, name, sizeof name, oids, 8), 2);
    assert_int_equal(oids[0], OID_INT4);
    assert_int_equal(oids[1], OID_INT8);

    /* Given types go out as given, trailing 0s included, and a query that
     * gives them is never prepared into the cache, even when asked to. */
    static const uint32_t given[] = {OID_INT8, 0, 0};
    for (int i = 0; i < 3; i++) {
        rq = PGW_QUERY("SELECT $1, $2", texts, 2, rec_cb, UD(3 + i));
        rq.cache = PGW_CACHE_NOW;
        rq.param_types = given;
        rq.nparam_types = 3;
        assert_int_equal(pgw_session_submit(s, &rq), 0);
        assert_int_equal(sent_parse(s, name, sizeof name, oids, 8), 3);
        assert_string_equal(name, "");
        assert_int_equal(oids[0], OID_INT8);
        assert_int_equal(oids[1], 0);
        assert_int_equal(oids[2], 0);
    }

    /* Without them the same query is prepared under a name of the cache's,
     * and its Parse names no type for its text parameters. */
    rq = PGW_QUERY("SELECT $1, $2", texts, 2, rec_cb, UD(6));
    rq.cache = PGW_CACHE_NOW;
    assert_int_equal(pgw_session_submit(s, &rq), 0);
    assert_int_equal(sent_parse(s, name, sizeof name, oids, 8), 0);
    assert_true(strncmp(name, "pgw_", 4) == 0);
    pgw_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_reply_after_close),
        cmocka_unit_test(test_replaced_while_pending),
        cmocka_unit_test(test_execute_unknown_learns),
        cmocka_unit_test(test_sql_replacing_statements),
        cmocka_unit_test(test_stmt_invalid),
        cmocka_unit_test(test_no_binary_output_retried),
        cmocka_unit_test(test_no_binary_output_reported),
        cmocka_unit_test(test_steady_state_allocations),
        cmocka_unit_test(test_parse_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
