/*
 * COPY against the real server: 200,000 rows loaded through the text, CSV
 * and binary row encoders and checked by the server (count and an md5 of
 * every row in order, against the same rows the server generates itself);
 * COPY TO compared byte for byte with libpq's PQgetCopyData of the same
 * statement, and binary COPY TO read back with the binary row decoder;
 * bad rows (22P02, 22P04) inside and outside a transaction block; an
 * abandoned COPY FROM (CopyFail); a COPY FROM without a source; COPY inside
 * a one-Sync batch and pipelined between other requests on a pgw_conn_t;
 * closing the connection during a COPY FROM; write backpressure
 * (PGW_ECONGESTED and on_drain) and the bound on pending requests.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define NROWS 200000

/* ------------------------------------------------------------- the rows */

/* Row i (1-based) as C values; the same formulas as REF_SQL. */
typedef struct row {
    int32_t a;
    int64_t b;
    double c;
    int d_null;
    char d[48];
    size_t dlen;
} row_t;

static void make_row(int i, row_t *r)
{
    r->a = 1000000000 + i;
    r->b = INT64_C(1000000000000000000) + (int64_t)i * 1000000007;
    r->c = i % 100000 == 0 ? (i % 200000 == 0 ? -1.0 / 0.0 : 1.0 / 0.0)
                           : (double)i / 7.0 * (i % 2 ? -1.0 : 1.0);
    r->d_null = i % 1000 == 0;
    int n = snprintf(r->d, sizeof r->d, "r%d\t\\%d", i, i * 3);
    while (n < 40)
        r->d[n++] = 'x';
    r->d[n] = '\0';
    r->dlen = (size_t)n;
}

#define TABLE_SQL "(a int4 PRIMARY KEY, b int8, c float8, d varchar(40))"
static const char REF_SQL[] =
    "CREATE TABLE IF NOT EXISTS copy_ref AS SELECT 1000000000 + i AS a,"
    " 1000000000000000000 + i::int8 * 1000000007 AS b,"
    " CASE WHEN i % 100000 = 0 THEN CASE WHEN i % 200000 = 0 THEN '-Infinity'::float8"
    " ELSE 'Infinity'::float8 END"
    " ELSE i::float8 / 7 * (CASE WHEN i % 2 = 1 THEN -1 ELSE 1 END)::float8 END AS c,"
    " CASE WHEN i % 1000 = 0 THEN NULL"
    " ELSE rpad('r' || i || E'\\t\\\\' || (i * 3), 40, 'x')::varchar(40) END AS d"
    " FROM generate_series(1, 200000) i";

/* ------------------------------------------------------------ helpers */

/* md5 of every row of table, in order, computed by the server. */
static void table_md5(pgw_client_t *c, const char *table, char out[33])
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT md5(string_agg(t::text, '|' ORDER BY a)) FROM %s t", table);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_query(c, sql, NULL, 0, &res), 0);
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, 0, &s), 0);
    assert_int_equal(s.len, 32);
    memcpy(out, s.p, 32);
    out[32] = '\0';
    pgw_result_free(res);
}

static void assert_same_as_ref(pgw_client_t *c, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    assert_int_equal(pgt_client_int8(c, sql), NROWS);
    char got[33], want[33];
    table_md5(c, table, got);
    table_md5(c, "copy_ref", want);
    assert_string_equal(got, want);
}

static void fresh_table(pgw_client_t *c, const char *table)
{
    char sql[256];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s; CREATE TABLE %s " TABLE_SQL, table, table);
    pgt_client_exec_ok(c, sql);
}

static int group_setup(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, REF_SQL);
    pgw_client_close(c);
    return 0;
}

/* ---------------------------------------------------------- the sources */

enum { FMT_TEXT, FMT_CSV, FMT_BINARY };

typedef struct gen {
    int fmt;
    int next;     /* next row to write (1-based) */
    int last;     /* last row */
    int fail_at;  /* abandon when reaching this row (0: never) */
    int bad_at;   /* write a malformed row here (0: never) */
    int bad_kind; /* 0: a bad integer; 1: an extra column */
    int calls;
    int header_done;
} gen_t;

static int put_row(gen_t *g, pgw_buf_t *b, const row_t *r)
{
    int rc;
    switch (g->fmt) {
    case FMT_TEXT:
        rc = pgw_copy_text_int4(b, r->a);
        if (rc == 0) rc = pgw_copy_text_int8(b, r->b);
        if (rc == 0) rc = pgw_copy_text_float8(b, r->c);
        if (rc == 0) rc = r->d_null ? pgw_copy_text_null(b) : pgw_copy_text_field(b, r->d, r->dlen);
        if (rc == 0) rc = pgw_copy_text_row_end(b);
        return rc;
    case FMT_CSV:
        rc = pgw_copy_csv_int4(b, r->a);
        if (rc == 0) rc = pgw_copy_csv_int8(b, r->b);
        if (rc == 0) rc = pgw_copy_csv_float8(b, r->c);
        if (rc == 0) rc = r->d_null ? pgw_copy_csv_null(b) : pgw_copy_csv_field(b, r->d, r->dlen);
        if (rc == 0) rc = pgw_copy_csv_row_end(b);
        return rc;
    default:
        rc = pgw_copy_bin_row_begin(b, 4);
        if (rc == 0) rc = pgw_copy_bin_int4(b, r->a);
        if (rc == 0) rc = pgw_copy_bin_int8(b, r->b);
        if (rc == 0) rc = pgw_copy_bin_float8(b, r->c);
        if (rc == 0) rc = r->d_null ? pgw_copy_bin_null(b) : pgw_copy_bin_text(b, r->d, r->dlen);
        return rc;
    }
}

static int gen_source(pgw_buf_t *out, size_t room, void *ud)
{
    gen_t *g = ud;
    g->calls++;
    size_t start = out->len;
    if (g->fmt == FMT_BINARY && !g->header_done) {
        assert_int_equal(pgw_copy_bin_begin(out), 0);
        g->header_done = 1;
    }
    while (g->next <= g->last && out->len - start < room) {
        if (g->fail_at && g->next == g->fail_at) {
            static const char why[] = "the producer gave up";
            out->len = start; /* this call's rows are dropped: the text is the message */
            pgw_buf_append(out, why, sizeof why - 1);
            return PGW_EFORMAT;
        }
        if (g->bad_at && g->next == g->bad_at) {
            const char *bad = g->bad_kind ? "1,2,3,x,extra\n" : "1,notanumber,3,x\n";
            pgw_buf_append(out, bad, strlen(bad));
            g->next++;
            continue;
        }
        row_t r;
        make_row(g->next++, &r);
        assert_int_equal(put_row(g, out, &r), 0);
    }
    if (g->next <= g->last) return PGW_COPY_MORE;
    if (g->fmt == FMT_BINARY) assert_int_equal(pgw_copy_bin_end(out), 0);
    return PGW_COPY_END;
}

static const char *copy_from_sql(int fmt, const char *table, char *buf, size_t n)
{
    static const char *const opts[] = {"", " (FORMAT csv)", " (FORMAT binary)"};
    snprintf(buf, n, "COPY %s FROM STDIN%s", table, opts[fmt]);
    return buf;
}

static void load(int fmt, const char *table)
{
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, table);
    gen_t g = {fmt, 1, NROWS, 0, 0, 0, 0, 0};
    char sql[128];
    pgw_result_t *res = NULL;
    int rc =
        pgw_client_copy_in(c, copy_from_sql(fmt, table, sql, sizeof sql), gen_source, &g, &res);
    if (rc != 0)
        fail_msg("%s: %s %s", sql, pgw_err_name(rc),
                 res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
    assert_int_equal(pgw_result_rows_affected(res), NROWS);
    assert_string_equal(pgw_result_command_tag(res), "COPY 200000");
    assert_int_equal(pgw_result_copy_direction(res), PGW_COPY_IN);
    assert_int_equal(pgw_result_copy_format(res), fmt == FMT_BINARY ? 1 : 0);
    assert_int_equal(pgw_result_copy_column_format(res, 3), fmt == FMT_BINARY ? 1 : 0);
    assert_int_equal(pgw_result_copy_column_format(res, 4), -1);
    assert_true(pgw_result_copy_bytes(res) > (uint64_t)NROWS * 40);
    assert_true(g.calls > 1); /* pulled in pieces, not built whole */
    pgw_result_free(res);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    assert_same_as_ref(c, table);
    char drop[64];
    snprintf(drop, sizeof drop, "DROP TABLE %s", table);
    pgt_client_exec_ok(c, drop);
    pgw_client_close(c);
}

static void test_copy_in_text(void **state)
{
    (void)state;
    load(FMT_TEXT, "copy_in_text");
}

static void test_copy_in_csv(void **state)
{
    (void)state;
    load(FMT_CSV, "copy_in_csv");
}

static void test_copy_in_binary(void **state)
{
    (void)state;
    load(FMT_BINARY, "copy_in_binary");
}

/* ------------------------------------------------------------- COPY TO */

static int collect(const uint8_t *data, size_t len, void *ud)
{
    assert_int_equal(pgw_buf_append(ud, data, len), 0);
    return 0;
}

/* The same COPY TO through libpq. */
static void libpq_copy_out(const char *sql, pgw_buf_t *out)
{
    char ci[512];
    PGconn *pq = PQconnectdb(pgt_conninfo(ci, sizeof ci, NULL));
    assert_int_equal(PQstatus(pq), CONNECTION_OK);
    PGresult *r = PQexec(pq, sql);
    assert_int_equal(PQresultStatus(r), PGRES_COPY_OUT);
    PQclear(r);
    char *p;
    int n;
    while ((n = PQgetCopyData(pq, &p, 0)) > 0) {
        assert_int_equal(pgw_buf_append(out, p, (size_t)n), 0);
        PQfreemem(p);
    }
    assert_int_equal(n, -1);
    r = PQgetResult(pq);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(pq);
}

static void copy_out_same_as_libpq(const char *sql)
{
    pgw_client_t *c = pgt_client_open();
    pgw_buf_t ours, theirs;
    pgw_buf_init(&ours, NULL);
    pgw_buf_init(&theirs, NULL);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_copy_out(c, sql, collect, &ours, &res), 0);
    assert_int_equal(pgw_result_rows_affected(res), NROWS);
    assert_int_equal(pgw_result_copy_direction(res), PGW_COPY_OUT);
    assert_int_equal(pgw_result_copy_bytes(res), ours.len);
    pgw_result_free(res);
    libpq_copy_out(sql, &theirs);
    assert_int_equal(ours.len, theirs.len);
    assert_memory_equal(ours.data, theirs.data, ours.len);
    pgw_buf_free(&ours);
    pgw_buf_free(&theirs);
    /* The connection is idle and usable. */
    assert_int_equal(pgt_client_int8(c, "SELECT 7::int8"), 7);
    pgw_client_close(c);
}

static void test_copy_out_text(void **state)
{
    (void)state;
    copy_out_same_as_libpq("COPY (SELECT * FROM copy_ref ORDER BY a) TO STDOUT");
}

static void test_copy_out_csv(void **state)
{
    (void)state;
    copy_out_same_as_libpq("COPY (SELECT * FROM copy_ref ORDER BY a) TO STDOUT (FORMAT csv)");
}

static void test_copy_out_binary(void **state)
{
    (void)state;
    copy_out_same_as_libpq("COPY (SELECT * FROM copy_ref ORDER BY a) TO STDOUT (FORMAT binary)");
}

/* Binary COPY TO read back with the decoder, fed CopyData by CopyData. */
typedef struct reader {
    pgw_copy_bin_decoder_t d;
    pgw_buf_t pending;
    int rows;
    int ended;
} reader_t;

static void check_row(const pgw_value_t *v, int i)
{
    row_t r;
    make_row(i, &r);
    int32_t a;
    int64_t b;
    double c;
    assert_int_equal(pgw_get_int4(&v[0], &a), 0);
    assert_int_equal(pgw_get_int8(&v[1], &b), 0);
    assert_int_equal(pgw_get_float8(&v[2], &c), 0);
    assert_int_equal(a, r.a);
    assert_true(b == r.b);
    assert_memory_equal(&c, &r.c, sizeof c);
    if (r.d_null) {
        assert_true(pgw_value_is_null(&v[3]));
    } else {
        pgw_str_t d;
        assert_int_equal(pgw_get_text(&v[3], &d), 0);
        assert_int_equal(d.len, r.dlen);
        assert_memory_equal(d.p, r.d, r.dlen);
    }
}

static int decode_chunk(const uint8_t *data, size_t len, void *ud)
{
    reader_t *x = ud;
    assert_int_equal(pgw_buf_append(&x->pending, data, len), 0);
    for (;;) {
        pgw_value_t v[4];
        size_t used = 0, nf = 0;
        int rc = pgw_copy_bin_next(&x->d, x->pending.data, x->pending.len, &used, v, 4, &nf);
        if (rc == 1) {
            assert_int_equal(nf, 4);
            check_row(v, ++x->rows); /* before the bytes are dropped */
        }
        pgw_buf_consume(&x->pending, used);
        if (rc == PGW_EAGAIN) return 0;
        if (rc == 0) {
            x->ended = 1;
            return 0;
        }
        assert_int_equal(rc, 1);
    }
}

static void test_copy_out_binary_decoded(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    static const uint32_t oids[] = {23, 20, 701, 1043};
    reader_t x = {{oids, 4, 0, 0, 0, 0, 0}, {0}, 0, 0};
    pgw_buf_init(&x.pending, NULL);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_copy_out(c,
                                         "COPY (SELECT * FROM copy_ref ORDER BY a) TO STDOUT"
                                         " (FORMAT binary)",
                                         decode_chunk, &x, &res),
                     0);
    assert_int_equal(x.rows, NROWS);
    assert_true(x.ended);
    assert_int_equal(x.pending.len, 0);
    assert_int_equal(pgw_copy_bin_rows(&x.d), NROWS);
    assert_int_equal(pgw_result_copy_format(res), 1);
    pgw_result_free(res);
    pgw_buf_free(&x.pending);
    pgw_client_close(c);
}

/* ----------------------------------------------------------- bad rows */

static void bad_row(int in_txn, int kind, const char *sqlstate)
{
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_bad");
    if (in_txn) pgt_client_exec_ok(c, "BEGIN");
    gen_t g = {FMT_CSV, 1, 20000, 0, 10000, kind, 0, 0};
    pgw_result_t *res = NULL;
    int rc = pgw_client_copy_in(c, "COPY copy_bad FROM STDIN (FORMAT csv)", gen_source, &g, &res);
    assert_int_equal(rc, PGW_ESERVER);
    assert_non_null(res);
    assert_string_equal(pgw_result_error(res)->sqlstate, sqlstate);
    pgw_result_free(res);
    /* The request completes at the error; its Sync's ReadyForQuery tells
     * the transaction status. */
    pgw_request_t sync = PGW_SYNC(NULL, NULL);
    assert_int_equal(pgw_client_run(c, &sync, NULL), 0);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), in_txn ? 'E' : 'I');
    if (in_txn) {
        /* The failed transaction refuses statements until it ends. */
        rc = pgw_client_query(c, "SELECT 1", NULL, 0, &res);
        assert_int_equal(rc, PGW_ESERVER);
        assert_string_equal(pgw_result_error(res)->sqlstate, "25P02");
        pgw_result_free(res);
        pgt_client_exec_ok(c, "ROLLBACK");
    }
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_bad"), 0);
    pgt_client_exec_ok(c, "DROP TABLE copy_bad");
    pgw_client_close(c);
}

static void test_bad_int_outside_txn(void **state)
{
    (void)state;
    bad_row(0, 0, "22P02");
}

static void test_bad_int_inside_txn(void **state)
{
    (void)state;
    bad_row(1, 0, "22P02");
}

static void test_extra_column_outside_txn(void **state)
{
    (void)state;
    bad_row(0, 1, "22P04");
}

static void test_extra_column_inside_txn(void **state)
{
    (void)state;
    bad_row(1, 1, "22P04");
}

/* ------------------------------------------------------- abandoning */

static void test_abandoned_copy_in(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_abandon");
    gen_t g = {FMT_TEXT, 1, NROWS, 50000, 0, 0, 0, 0};
    pgw_result_t *res = NULL;
    int rc = pgw_client_copy_in(c, "COPY copy_abandon FROM STDIN", gen_source, &g, &res);
    assert_int_equal(rc, PGW_EFORMAT); /* the source's own code */
    assert_non_null(res);
    const pgw_error_t *e = pgw_result_error(res);
    assert_string_equal(e->sqlstate, "57014");
    assert_non_null(strstr(e->message, "the producer gave up"));
    pgw_result_free(res);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_abandon"), 0);
    pgt_client_exec_ok(c, "DROP TABLE copy_abandon");
    pgw_client_close(c);
}

static int refuse_start(const pgw_copy_info_t *info, void *ud)
{
    assert_int_equal(info->direction, PGW_COPY_IN);
    assert_int_equal(info->ncols, 4);
    (*(int *)ud)++;
    return PGW_ERANGE;
}

static int never_called(pgw_buf_t *out, size_t room, void *ud)
{
    fail_msg("the source of a refused COPY was called");
    return PGW_COPY_END;
}

static void test_start_callback_abandons(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_start");
    int started = 0;
    pgw_request_t r = PGW_COPY_IN_REQ("COPY copy_start FROM STDIN", never_called, NULL, &started);
    r.on_copy_start = refuse_start;
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_run(c, &r, &res), PGW_ERANGE);
    assert_int_equal(started, 1);
    assert_string_equal(pgw_result_error(res)->sqlstate, "57014");
    pgw_result_free(res);
    pgt_client_exec_ok(c, "DROP TABLE copy_start");
    pgw_client_close(c);
}

static void test_copy_in_without_source(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_nosrc");
    pgw_request_t r = PGW_COPY_OUT_REQ("COPY copy_nosrc FROM STDIN", collect, NULL, NULL);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_run(c, &r, &res), PGW_EINVAL);
    pgw_result_free(res);
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_nosrc"), 0);
    pgt_client_exec_ok(c, "DROP TABLE copy_nosrc");
    pgw_client_close(c);
}

static void test_copy_refusals(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgw_param_t p[] = {pgw_int4(1)};
    pgw_request_t r = PGW_COPY_IN_REQ("COPY t FROM STDIN", never_called, NULL, NULL);
    r.params = p;
    r.nparams = 1;
    assert_int_equal(pgw_client_run(c, &r, NULL), PGW_EINVAL);
    pgw_request_t q = PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL);
    q.copy_source = never_called;
    assert_int_equal(pgw_client_run(c, &q, NULL), PGW_EINVAL);
    pgw_request_t s = PGW_COPY_IN_REQ(NULL, never_called, NULL, NULL);
    assert_int_equal(pgw_client_run(c, &s, NULL), PGW_EINVAL);
    /* A COPY that fails before it begins leaves nothing behind. */
    pgw_result_t *res = NULL;
    assert_int_equal(
        pgw_client_copy_in(c, "COPY no_such_table FROM STDIN", never_called, NULL, &res),
        PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "42P01");
    pgw_result_free(res);
    assert_int_equal(pgt_client_int8(c, "SELECT 3::int8"), 3);
    pgw_client_close(c);
}

/* ------------------------------------------------------------- batches */

static void test_copy_in_batch(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_batch");
    gen_t g = {FMT_TEXT, 1, 1000, 0, 0, 0, 0, 0};
    pgw_request_t reqs[3] = {
        PGW_QUERY("INSERT INTO copy_batch VALUES (1, 1, 1, 'before')", NULL, 0, NULL, NULL),
        PGW_COPY_IN_REQ("COPY copy_batch FROM STDIN", gen_source, NULL, &g),
        PGW_QUERY("SELECT count(*) FROM copy_batch", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[3];
    int st[3];
    assert_int_equal(pgw_client_run_batch(c, reqs, 3, 0, res, st), 0);
    assert_int_equal(st[0], 0);
    assert_int_equal(st[1], 0);
    assert_int_equal(pgw_result_rows_affected(res[1]), 1000);
    int64_t n = 0;
    assert_int_equal(pgw_result_int8(res[2], 0, 0, &n), 0);
    assert_int_equal(n, 1001); /* the COPY ran between the two */
    for (int i = 0; i < 3; i++)
        pgw_result_free(res[i]);

    /* An error before the COPY aborts it and what follows; one implicit
     * transaction: nothing stays. */
    gen_t g2 = {FMT_TEXT, 2000, 3000, 0, 0, 0, 0, 0};
    pgw_request_t bad[3] = {
        PGW_QUERY("SELECT 1/0", NULL, 0, NULL, NULL),
        PGW_COPY_IN_REQ("COPY copy_batch FROM STDIN", gen_source, NULL, &g2),
        PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL),
    };
    assert_int_equal(pgw_client_run_batch(c, bad, 3, 0, res, st), PGW_ESERVER);
    assert_int_equal(st[1], PGW_EABORTED);
    assert_int_equal(st[2], PGW_EABORTED);
    assert_int_equal(g2.calls, 0);
    for (int i = 0; i < 3; i++)
        pgw_result_free(res[i]);
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_batch"), 1001);
    pgt_client_exec_ok(c, "DROP TABLE copy_batch");
    pgw_client_close(c);
}

/* ------------------------------------------------ pipelined on a conn */

/* f connected with the given high-water mark (0: the default). */
static void fx_open(pgt_conn_t *f, size_t high_water)
{
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.high_water_mark = high_water;
    pgt_conn_open(f, &cfg);
}

/* The order in which the requests of test_order completed. */
static struct {
    int ids[8];
    int n;
} g_order;

typedef struct done {
    pgt_conn_t *f;
    int id;
    int status;
    int64_t value;
    int64_t affected;
    int calls;
} done_t;

static void on_done(int status, pgw_result_t *res, void *ud)
{
    done_t *d = ud;
    d->calls++;
    d->status = status;
    if (g_order.n < (int)(sizeof g_order.ids / sizeof g_order.ids[0]))
        g_order.ids[g_order.n++] = d->id;
    d->affected = pgw_result_rows_affected(res);
    if (status == 0 && pgw_result_nrows(res) == 1) pgw_result_int8(res, 0, 0, &d->value);
    pgw_result_free(res);
}

typedef struct both {
    gen_t g;
    done_t d;
} both_t;

static int both_source(pgw_buf_t *out, size_t room, void *ud)
{
    return gen_source(out, room, &((both_t *)ud)->g);
}

static void both_done(int status, pgw_result_t *res, void *ud)
{
    on_done(status, res, &((both_t *)ud)->d);
}

typedef struct counted {
    done_t d;
    size_t bytes;
} counted_t;

static int count_bytes(const uint8_t *data, size_t len, void *ud)
{
    ((counted_t *)ud)->bytes += len;
    return 0;
}

static void counted_done(int status, pgw_result_t *res, void *ud)
{
    on_done(status, res, &((counted_t *)ud)->d);
}

static void test_conn_pipeline_around_copy(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_pipe");
    pgw_client_close(c);
    pgt_conn_t f;
    fx_open(&f, 0);
    done_t q1 = {&f, 1, 0, 0, 0, 0}, q3 = {&f, 3, 0, 0, 0, 0}, q4 = {&f, 4, 0, 0, 0, 0};
    both_t in = {{FMT_CSV, 1, NROWS, 0, 0, 0, 0, 0}, {&f, 2, 0, 0, 0, 0}};
    counted_t out = {{&f, 5, 0, 0, 0, 0}, 0};
    assert_int_equal(pgw_conn_query(f.conn, "INSERT INTO copy_pipe VALUES (1, 1, 1, 'x')", NULL, 0,
                                    on_done, &q1),
                     0);
    assert_int_equal(pgw_conn_copy_in(f.conn, "COPY copy_pipe FROM STDIN (FORMAT csv)", both_source,
                                      both_done, &in),
                     0);
    assert_int_equal(
        pgw_conn_query(f.conn, "SELECT count(*) FROM copy_pipe", NULL, 0, on_done, &q3), 0);
    assert_int_equal(
        pgw_conn_query(f.conn, "SELECT sum(a)::int8 FROM copy_pipe", NULL, 0, on_done, &q4), 0);
    assert_int_equal(
        pgw_conn_copy_out(f.conn, "COPY copy_pipe TO STDOUT", count_bytes, counted_done, &out), 0);
    pgt_conn_run(&f, &g_order.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(g_order.ids[i], i + 1);
    assert_int_equal(q1.status, 0);
    assert_int_equal(in.d.status, 0);
    assert_int_equal(in.d.affected, NROWS);
    assert_int_equal(q3.value, NROWS + 1);
    int64_t sum = 1;
    for (int i = 1; i <= NROWS; i++)
        sum += 1000000000 + i;
    assert_true(q4.value == sum);
    assert_int_equal(out.d.status, 0);
    assert_int_equal(out.d.affected, NROWS + 1);
    assert_true(out.bytes > (size_t)NROWS * 40);
    pgt_conn_close(&f);
    c = pgt_client_open();
    pgt_client_exec_ok(c, "DROP TABLE copy_pipe");
    pgw_client_close(c);
}

/* Closing the connection from the source, mid-COPY: the COPY and the
 * request queued behind it fail with PGW_ECANCELED, nothing is kept. */
typedef struct closer {
    gen_t g;
    pgt_conn_t *f;
    done_t copy, after;
} closer_t;

static int closing_source(pgw_buf_t *out, size_t room, void *ud)
{
    closer_t *x = ud;
    int rc = gen_source(out, room, &x->g);
    if (x->g.next > 30000) {
        assert_int_equal(pgt_conn_start_close(x->f), 0);
        return PGW_COPY_MORE;
    }
    return rc;
}

static void closer_copy_done(int status, pgw_result_t *res, void *ud)
{
    on_done(status, res, &((closer_t *)ud)->copy);
}

static void test_close_mid_copy(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c, "copy_close");
    pgw_client_close(c);
    pgt_conn_t f;
    fx_open(&f, 0);
    closer_t x = {
        {FMT_TEXT, 1, NROWS, 0, 0, 0, 0, 0}, &f, {&f, 1, 0, 0, 0, 0}, {&f, 2, 0, 0, 0, 0}};
    assert_int_equal(pgw_conn_copy_in(f.conn, "COPY copy_close FROM STDIN", closing_source,
                                      closer_copy_done, &x),
                     0);
    assert_int_equal(pgw_conn_query(f.conn, "INSERT INTO copy_close VALUES (1, 1, 1, 'x')", NULL, 0,
                                    on_done, &x.after),
                     0);
    pgt_conn_run(&f, &f.closed, 1);
    assert_int_equal(x.copy.calls, 1);
    assert_int_equal(x.copy.status, PGW_ECANCELED);
    assert_int_equal(x.after.calls, 1);
    assert_int_equal(x.after.status, PGW_ECANCELED);
    pgt_conn_close(&f);
    c = pgt_client_open();
    /* The server saw the COPY end (CopyFail, or the socket closed): the
     * backend is gone or idle and nothing was kept. */
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_close"), 0);
    pgt_client_exec_ok(c, "DROP TABLE copy_close");
    pgw_client_close(c);
}

/* -------------------------------------------------------- backpressure */

static void test_congestion_and_drain(void **state)
{
    (void)state;
    pgt_conn_t f;
    fx_open(&f, 64 * 1024);
    enum { MAXQ = 20000 };
    done_t *d = calloc(MAXQ, sizeof *d);
    assert_non_null(d);
    int accepted = 0, refused = 0, completed = 0;
    char pad[200];
    memset(pad, 'p', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT length('%s')::int8", pad);
    /* Queue until refused, then wait for the drain, then go on. */
    while (accepted < MAXQ) {
        d[accepted] = (done_t){&f, 0, 0, 0, 0, 0};
        int rc = pgw_conn_query(f.conn, sql, NULL, 0, on_done, &d[accepted]);
        if (rc == PGW_ECONGESTED) {
            refused++;
            assert_int_equal(pgw_conn_congested(f.conn), 1);
            int before = f.drains;
            pgt_conn_run(&f, &f.drains, before + 1);
            assert_int_equal(pgw_conn_congested(f.conn), 0);
            continue;
        }
        assert_int_equal(rc, 0);
        accepted++;
    }
    assert_true(refused > 0);
    for (int i = 0; i < MAXQ; i++) {
        while (d[i].calls == 0)
            uv_run(&f.loop, UV_RUN_ONCE);
        assert_int_equal(d[i].status, 0);
        assert_int_equal(d[i].value, 199);
        completed++;
    }
    assert_int_equal(completed, MAXQ);
    free(d);
    pgt_conn_close(&f);
}

/* max_pending bounds the requests waiting for their answers on a
 * connection: at 64 pending a request is refused with PGW_ECONGESTED (the
 * output far under its mark), on_drain fires once the server has answered
 * more than half, and every accepted request completes. */
static void test_max_pending_and_drain(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.max_pending = 64;
    pgt_conn_open(&f, &cfg);
    enum { MAXQ = 1000 };
    done_t *d = calloc(MAXQ, sizeof *d);
    assert_non_null(d);
    int accepted = 0, refused = 0;
    pgw_param_t p[1];
    while (accepted < MAXQ) {
        d[accepted] = (done_t){&f, 0, 0, 0, 0, 0};
        p[0] = pgw_int8(accepted);
        int rc = pgw_conn_query(f.conn, "SELECT $1::int8", p, 1, on_done, &d[accepted]);
        if (rc == PGW_ECONGESTED) {
            refused++;
            assert_int_equal(pgw_session_pending(pgw_conn_session(f.conn)), 64);
            int before = f.drains;
            pgt_conn_run(&f, &f.drains, before + 1);
            assert_true(pgw_session_pending(pgw_conn_session(f.conn)) < 32);
            continue;
        }
        assert_int_equal(rc, 0);
        accepted++;
    }
    assert_true(refused >= MAXQ / 64 - 1);
    for (int i = 0; i < MAXQ; i++) {
        while (d[i].calls == 0)
            uv_run(&f.loop, UV_RUN_ONCE);
        assert_int_equal(d[i].status, 0);
        assert_int_equal(d[i].value, i);
    }
    free(d);
    pgt_conn_close(&f);
}

/* The default mark takes a bench-sized pipeline (20,000 small queries in
 * one loop turn) without refusing any. */
static void test_default_mark_takes_pipeline(void **state)
{
    (void)state;
    pgt_conn_t f;
    fx_open(&f, 0);
    enum { N = 20000 };
    done_t *d = calloc(N, sizeof *d);
    assert_non_null(d);
    pgw_param_t p[1];
    for (int i = 0; i < N; i++) {
        d[i] = (done_t){&f, 0, 0, 0, 0, 0};
        p[0] = pgw_int8(i);
        assert_int_equal(pgw_conn_query(f.conn, "SELECT $1::int8", p, 1, on_done, &d[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        while (d[i].calls == 0)
            uv_run(&f.loop, UV_RUN_ONCE);
        assert_int_equal(d[i].value, i);
    }
    free(d);
    pgt_conn_close(&f);
}

static int group_teardown(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "DROP TABLE copy_ref");
    pgw_client_close(c);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_in_text),
        cmocka_unit_test(test_copy_in_csv),
        cmocka_unit_test(test_copy_in_binary),
        cmocka_unit_test(test_copy_out_text),
        cmocka_unit_test(test_copy_out_csv),
        cmocka_unit_test(test_copy_out_binary),
        cmocka_unit_test(test_copy_out_binary_decoded),
        cmocka_unit_test(test_bad_int_outside_txn),
        cmocka_unit_test(test_bad_int_inside_txn),
        cmocka_unit_test(test_extra_column_outside_txn),
        cmocka_unit_test(test_extra_column_inside_txn),
        cmocka_unit_test(test_abandoned_copy_in),
        cmocka_unit_test(test_start_callback_abandons),
        cmocka_unit_test(test_copy_in_without_source),
        cmocka_unit_test(test_copy_refusals),
        cmocka_unit_test(test_copy_in_batch),
        cmocka_unit_test(test_conn_pipeline_around_copy),
        cmocka_unit_test(test_close_mid_copy),
        cmocka_unit_test(test_congestion_and_drain),
        cmocka_unit_test(test_max_pending_and_drain),
        cmocka_unit_test(test_default_mark_takes_pipeline),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
