/*
 * The request model against the throwaway cluster: batch arrays and their
 * sync groups, all-or-nothing refusal, one descriptor on a pgw_conn_t and
 * on a pgw_client_t, per-column result formats, and descriptors built
 * against an older (smaller) pgw_request_t.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

/* What one callback saw. */
typedef struct rec {
    int calls;
    int status;
    int32_t value; /* column 0 of row 0, when an int4 */
    char sqlstate[6];
    pgw_result_t *kept; /* the result, when keep is set */
    int keep;
} rec_t;

static void on_rec(int status, pgw_result_t *res, void *ud)
{
    rec_t *r = ud;
    r->calls++;
    r->status = status;
    if (res && status == 0 && pgw_result_nrows(res) > 0 && pgw_result_ftype(res, 0) == 23)
        assert_int_equal(pgw_result_int4(res, 0, 0, &r->value), 0);
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate) snprintf(r->sqlstate, sizeof r->sqlstate, "%s", e->sqlstate);
    if (r->keep)
        r->kept = res;
    else
        pgw_result_free(res);
}

/* ------------------------------------------------- a connection on a loop */

/* A pgw_conn_query on f, waited for: its status (and int4 value). */
static int fx_query(pgt_conn_t *f, const char *sql, int32_t *value)
{
    rec_t r = {0};
    assert_int_equal(pgw_conn_query(f->conn, sql, NULL, 0, on_rec, &r), 0);
    pgt_conn_run(f, &r.calls, 1);
    if (value) *value = r.value;
    return r.status;
}

/* ------------------------------------------------------ blocking helpers */

/* The committed rows of table, seen from another connection. */
static int32_t committed_count(pgw_client_t *c, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*)::int4 FROM %s", table);
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(c, sql, NULL, 0, &res), 0);
    int32_t n = -1;
    assert_int_equal(pgw_result_int4(res, 0, 0, &n), 0);
    pgw_result_free(res);
    return n;
}

/* ----------------------------------------------------------- sync groups */

/* One Sync: the second request fails, the third never runs (PGW_EABORTED),
 * done gets the first failure and the implicit transaction commits
 * nothing. A Sync each: the failure aborts no other request and both other
 * INSERTs commit. */
static void test_batch_one_sync_and_sync_each(void **state)
{
    (void)state;
    pgw_client_t *db = pgt_client_open();
    pgt_client_exec_ok(
        db, "DROP TABLE IF EXISTS pgw_req_sync; CREATE TABLE pgw_req_sync(v int PRIMARY KEY)");
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    rec_t r[3] = {{0}}, done = {0};
    pgw_request_t reqs[] = {
        PGW_QUERY("INSERT INTO pgw_req_sync VALUES (1)", NULL, 0, on_rec, &r[0]),
        PGW_QUERY("INSERT INTO pgw_req_sync VALUES (1)", NULL, 0, on_rec, &r[1]),
        PGW_QUERY("INSERT INTO pgw_req_sync VALUES (2)", NULL, 0, on_rec, &r[2]),
    };
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 3, 0, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(r[0].status, 0);
    assert_int_equal(r[1].status, PGW_ESERVER);
    assert_string_equal(r[1].sqlstate, "23505");
    assert_int_equal(r[2].status, PGW_EABORTED);
    assert_int_equal(done.status, PGW_ESERVER);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r[i].calls, 1);
    assert_int_equal(done.calls, 1);
    assert_int_equal(committed_count(db, "pgw_req_sync"), 0);

    memset(r, 0, sizeof r);
    memset(&done, 0, sizeof done);
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 3, PGW_BATCH_SYNC_EACH, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(r[0].status, 0);
    assert_int_equal(r[1].status, PGW_ESERVER);
    assert_string_equal(r[1].sqlstate, "23505");
    assert_int_equal(r[2].status, 0);
    assert_int_equal(done.status, PGW_ESERVER);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r[i].calls, 1);
    assert_int_equal(committed_count(db, "pgw_req_sync"), 2);

    /* The connection is usable and idle after either. */
    int32_t v = 0;
    assert_int_equal(fx_query(&f, "SELECT 7::int4", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(pgw_session_txn_status(pgw_conn_session(f.conn)), 'I');
    pgt_conn_close(&f);
    pgt_client_exec_ok(db, "DROP TABLE pgw_req_sync");
    pgw_client_close(db);
}

/* PGW_Q_SYNC inside a one-Sync batch ends a group there: the group before
 * it commits whatever fails after it, and a failure before it does not
 * abort the requests after it. */
static void test_batch_q_sync_ends_group(void **state)
{
    (void)state;
    pgw_client_t *db = pgt_client_open();
    pgt_client_exec_ok(db, "DROP TABLE IF EXISTS pgw_req_qsync; CREATE TABLE pgw_req_qsync(v int)");
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    rec_t r[4] = {{0}}, done = {0};
    pgw_request_t reqs[] = {
        PGW_QUERY("INSERT INTO pgw_req_qsync VALUES (20)", NULL, 0, on_rec, &r[0]),
        PGW_QUERY("INSERT INTO pgw_req_qsync VALUES (21)", NULL, 0, on_rec, &r[1]),
        PGW_QUERY("SELECT 1/0", NULL, 0, on_rec, &r[2]),
        PGW_QUERY("INSERT INTO pgw_req_qsync VALUES (22)", NULL, 0, on_rec, &r[3]),
    };
    reqs[1].flags = PGW_Q_SYNC;
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 4, 0, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(r[0].status, 0);
    assert_int_equal(r[1].status, 0);
    assert_int_equal(r[2].status, PGW_ESERVER);
    assert_string_equal(r[2].sqlstate, "22012");
    assert_int_equal(r[3].status, PGW_EABORTED);
    assert_int_equal(done.status, PGW_ESERVER);
    assert_int_equal(committed_count(db, "pgw_req_qsync"), 2); /* 20 and 21 */

    /* The failure first, then PGW_Q_SYNC: the next group still runs. */
    memset(r, 0, sizeof r);
    memset(&done, 0, sizeof done);
    pgw_request_t after[] = {
        PGW_QUERY("SELECT 1/0", NULL, 0, on_rec, &r[0]),
        PGW_QUERY("INSERT INTO pgw_req_qsync VALUES (30)", NULL, 0, on_rec, &r[1]),
    };
    after[0].flags = PGW_Q_SYNC;
    assert_int_equal(pgw_conn_submit_batch(f.conn, after, 2, 0, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(r[0].status, PGW_ESERVER);
    assert_int_equal(r[1].status, 0);
    assert_int_equal(done.status, PGW_ESERVER);
    assert_int_equal(committed_count(db, "pgw_req_qsync"), 3);
    pgt_conn_close(&f);
    pgt_client_exec_ok(db, "DROP TABLE pgw_req_qsync");
    pgw_client_close(db);
}

/* ------------------------------------------------------------- refusals */

/* A batch whose third descriptor is invalid (EXECUTE without a statement
 * name) queues nothing: no callback ever fires, the prepare in front of it
 * never reaches the server, the next request works, and the refusal names
 * the descriptor. */
static void test_batch_refusal_all_or_nothing(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    rec_t r[4] = {{0}}, done = {0};
    pgw_request_t reqs[] = {
        PGW_PREPARE("pgw_req_refused", "SELECT 1::int4", NULL, 0, on_rec, &r[0]),
        PGW_QUERY("SELECT 2::int4", NULL, 0, on_rec, &r[1]),
        PGW_EXECUTE(NULL, NULL, 0, on_rec, &r[2]),
        PGW_QUERY("SELECT 3::int4", NULL, 0, on_rec, &r[3]),
    };
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 4, 0, on_rec, &done), PGW_EINVAL);
    const char *why = pgw_session_refusal(pgw_conn_session(f.conn));
    if (!strstr(why, "request 2")) fail_msg("refusal: \"%s\"", why);
    assert_int_equal(pgw_session_pending(pgw_conn_session(f.conn)), 0);
    int32_t v = 0;
    assert_int_equal(fx_query(&f, "SELECT 4::int4", &v), 0);
    assert_int_equal(v, 4);
    assert_string_equal(pgw_session_refusal(pgw_conn_session(f.conn)), "");
    for (int i = 0; i < 4; i++)
        assert_int_equal(r[i].calls, 0);
    assert_int_equal(done.calls, 0);
    /* The statement was never prepared. */
    rec_t x = {0};
    assert_int_equal(pgw_conn_execute(f.conn, "pgw_req_refused", NULL, 0, on_rec, &x), 0);
    pgt_conn_run(&f, &x.calls, 1);
    assert_int_equal(x.status, PGW_ESERVER);
    assert_string_equal(x.sqlstate, "26000");
    pgt_conn_close(&f);
}

/* ------------------------------------------ one descriptor, two layers */

/* The rows of a and b are the same: columns, types, formats and bytes. */
static void expect_same_rows(const pgw_result_t *a, const pgw_result_t *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(pgw_result_nrows(a), pgw_result_nrows(b));
    assert_int_equal(pgw_result_ncols(a), pgw_result_ncols(b));
    for (size_t j = 0; j < pgw_result_ncols(a); j++) {
        assert_string_equal(pgw_result_fname(a, j), pgw_result_fname(b, j));
        assert_int_equal(pgw_result_ftype(a, j), pgw_result_ftype(b, j));
        assert_int_equal(pgw_result_fformat(a, j), pgw_result_fformat(b, j));
    }
    for (size_t i = 0; i < pgw_result_nrows(a); i++)
        for (size_t j = 0; j < pgw_result_ncols(a); j++) {
            pgw_value_t va, vb;
            assert_int_equal(pgw_result_value(a, i, j, &va), 0);
            assert_int_equal(pgw_result_value(b, i, j, &vb), 0);
            assert_int_equal(va.len, vb.len);
            if (va.len > 0) assert_memory_equal(va.p, vb.p, (size_t)va.len);
        }
}

/* The same descriptor (and the same batch array) submitted to a pgw_conn_t
 * and run on a pgw_client_t gives the same rows; the client does not call
 * the descriptor's on_result. */
static void test_same_descriptor_conn_and_client(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    pgw_client_t *db = pgt_client_open();
    pgw_param_t n[] = {pgw_int4(5)};
    rec_t on_conn = {.keep = 1};
    pgw_request_t q = PGW_QUERY("SELECT g::int4 AS n, repeat('x', g) AS s, g * 0.5 AS half "
                                "FROM generate_series(1, $1) g",
                                n, 1, on_rec, &on_conn);
    assert_int_equal(pgw_conn_submit(f.conn, &q), 0);
    pgt_conn_run(&f, &on_conn.calls, 1);
    assert_int_equal(on_conn.status, 0);
    pgw_result_t *from_client;
    assert_int_equal(pgw_client_run(db, &q, &from_client), 0);
    assert_int_equal(on_conn.calls, 1);
    assert_int_equal(pgw_result_nrows(from_client), 5);
    expect_same_rows(on_conn.kept, from_client);
    pgw_result_free(on_conn.kept);
    pgw_result_free(from_client);

    /* Text results too. */
    q.flags = PGW_Q_TEXT;
    memset(&on_conn, 0, sizeof on_conn);
    on_conn.keep = 1;
    assert_int_equal(pgw_conn_submit(f.conn, &q), 0);
    pgt_conn_run(&f, &on_conn.calls, 1);
    assert_int_equal(pgw_client_run(db, &q, &from_client), 0);
    assert_int_equal(pgw_result_fformat(from_client, 0), PGW_FORMAT_TEXT);
    expect_same_rows(on_conn.kept, from_client);
    pgw_result_free(on_conn.kept);
    pgw_result_free(from_client);

    /* A batch array: a prepare and an execution of it. */
    rec_t r[2] = {{.keep = 1}, {.keep = 1}}, done = {0};
    pgw_request_t batch[] = {
        PGW_PREPARE("pgw_req_same", "SELECT $1::int4 * 2 AS twice, 'y'::text AS t", NULL, 0, on_rec,
                    &r[0]),
        PGW_EXECUTE("pgw_req_same", n, 1, on_rec, &r[1]),
    };
    assert_int_equal(pgw_conn_submit_batch(f.conn, batch, 2, 0, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(done.status, 0);
    pgw_result_t *results[2];
    int st[2];
    assert_int_equal(pgw_client_run_batch(db, batch, 2, 0, results, st), 0);
    assert_int_equal(r[1].calls, 1);
    assert_int_equal(st[1], 0);
    assert_int_equal(pgw_result_nparams(results[0]), pgw_result_nparams(r[0].kept));
    expect_same_rows(r[1].kept, results[1]);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(results[1], 0, 0, &v), 0);
    assert_int_equal(v, 10);
    for (int i = 0; i < 2; i++) {
        pgw_result_free(r[i].kept);
        pgw_result_free(results[i]);
    }
    pgw_client_close(db);
    pgt_conn_close(&f);
}

/* -------------------------------------------------------- result formats */

/* Column 0 in text ("42"), column 1 in binary (4 bytes), both decoded by
 * the typed accessors. */
static void expect_all_text(const pgw_result_t *res, const char *a, const char *b)
{
    const char *want[] = {a, b};
    for (size_t c = 0; c < 2; c++) {
        assert_int_equal(pgw_result_fformat(res, c), PGW_FORMAT_TEXT);
        pgw_value_t v;
        assert_int_equal(pgw_result_value(res, 0, c, &v), 0);
        assert_int_equal(v.format, PGW_FORMAT_TEXT);
        assert_int_equal(v.len, (int32_t)strlen(want[c]));
        assert_memory_equal(v.p, want[c], strlen(want[c]));
    }
}

static void expect_mixed(const pgw_result_t *res, int16_t f0, int16_t f1, int32_t a, int32_t b)
{
    assert_int_equal(pgw_result_fformat(res, 0), f0);
    assert_int_equal(pgw_result_fformat(res, 1), f1);
    pgw_value_t v0, v1;
    assert_int_equal(pgw_result_value(res, 0, 0, &v0), 0);
    assert_int_equal(pgw_result_value(res, 0, 1, &v1), 0);
    char text[16];
    assert_int_equal(v0.format, f0);
    assert_int_equal(v1.format, f1);
    const pgw_value_t *tv = f0 == PGW_FORMAT_TEXT ? &v0 : &v1;
    const pgw_value_t *bv = f0 == PGW_FORMAT_TEXT ? &v1 : &v0;
    snprintf(text, sizeof text, "%d", (int)(f0 == PGW_FORMAT_TEXT ? a : b));
    assert_int_equal(tv->len, (int32_t)strlen(text));
    assert_memory_equal(tv->p, text, strlen(text));
    assert_int_equal(bv->len, 4);
    int32_t x = 0, y = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &x), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &y), 0);
    assert_int_equal(x, a);
    assert_int_equal(y, b);
}

/* Per-column result_formats on QUERY and EXECUTE, on both layers. */
static void test_per_column_result_formats(void **state)
{
    (void)state;
    pgw_client_t *db = pgt_client_open();
    static const int16_t text_bin[] = {PGW_FORMAT_TEXT, PGW_FORMAT_BINARY};
    static const int16_t bin_text[] = {PGW_FORMAT_BINARY, PGW_FORMAT_TEXT};
    pgw_request_t q = PGW_QUERY("SELECT 42::int4 AS a, 43::int4 AS b", NULL, 0, NULL, NULL);
    q.result_formats = text_bin;
    q.nresult_formats = 2;
    pgw_result_t *res;
    assert_int_equal(pgw_client_run(db, &q, &res), 0);
    expect_mixed(res, PGW_FORMAT_TEXT, PGW_FORMAT_BINARY, 42, 43);
    pgw_result_free(res);
    /* Formats win over PGW_Q_TEXT. */
    q.flags = PGW_Q_TEXT;
    q.result_formats = bin_text;
    assert_int_equal(pgw_client_run(db, &q, &res), 0);
    expect_mixed(res, PGW_FORMAT_BINARY, PGW_FORMAT_TEXT, 42, 43);
    pgw_result_free(res);

    assert_int_equal(pgw_client_prepare(db, "pgw_req_fmt",
                                        "SELECT $1::int4 AS a, $1::int4 + 1 AS b", NULL, 0, &res),
                     0);
    pgw_result_free(res);
    pgw_param_t p[] = {pgw_int4(7)};
    pgw_request_t x = PGW_EXECUTE("pgw_req_fmt", p, 1, NULL, NULL);
    x.result_formats = bin_text;
    x.nresult_formats = 2;
    assert_int_equal(pgw_client_run(db, &x, &res), 0);
    expect_mixed(res, PGW_FORMAT_BINARY, PGW_FORMAT_TEXT, 7, 8);
    pgw_result_free(res);
    x.result_formats = text_bin;
    assert_int_equal(pgw_client_run(db, &x, &res), 0);
    expect_mixed(res, PGW_FORMAT_TEXT, PGW_FORMAT_BINARY, 7, 8);
    pgw_result_free(res);
    /* PGW_Q_TEXT: every column in text, as its Bind asks, though the
     * statement's description (known since the prepare) has its own. */
    x.result_formats = NULL;
    x.nresult_formats = 0;
    x.flags = PGW_Q_TEXT;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pgw_client_run(db, &x, &res), 0);
        expect_all_text(res, "7", "8");
        pgw_result_free(res);
    }
    x.flags = 0;
    x.nresult_formats = 2;

    /* The same descriptors on a connection. */
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    rec_t r = {.keep = 1};
    q.flags = 0;
    q.result_formats = text_bin;
    q.on_result = on_rec;
    q.ud = &r;
    assert_int_equal(pgw_conn_submit(f.conn, &q), 0);
    pgt_conn_run(&f, &r.calls, 1);
    assert_int_equal(r.status, 0);
    expect_mixed(r.kept, PGW_FORMAT_TEXT, PGW_FORMAT_BINARY, 42, 43);
    pgw_result_free(r.kept);
    /* EXECUTE of a statement this session never described: the portal is
     * described in the same round trip, the caller's formats still apply. */
    rec_t prep = {0};
    assert_int_equal(pgw_conn_prepare(f.conn, "pgw_req_fmt", "SELECT $1::int4 AS a, $1::int4 + 1",
                                      NULL, 0, on_rec, &prep),
                     0);
    memset(&r, 0, sizeof r);
    r.keep = 1;
    x.result_formats = bin_text;
    x.on_result = on_rec;
    x.ud = &r;
    assert_int_equal(pgw_conn_submit(f.conn, &x), 0);
    pgt_conn_run(&f, &r.calls, 1);
    assert_int_equal(prep.status, 0);
    assert_int_equal(r.status, 0);
    expect_mixed(r.kept, PGW_FORMAT_BINARY, PGW_FORMAT_TEXT, 7, 8);
    pgw_result_free(r.kept);
    pgt_conn_close(&f);
    pgw_client_close(db);
}

/* --------------------------------------------- descriptor size (ABI) */

/* pgw_request_t as a caller built against an older header has it: every
 * field up to ud, without the reserved timeout_ms and cache. */
typedef struct old_request {
    size_t size;
    pgw_request_kind_t kind;
    const char *sql;
    const char *stmt;
    const pgw_param_t *params;
    size_t nparams;
    const uint32_t *param_types;
    size_t nparam_types;
    const int16_t *result_formats;
    size_t nresult_formats;
    unsigned flags;
    pgw_result_cb on_result;
    pgw_row_cb on_row;
    void *ud;
} old_request_t;

_Static_assert(sizeof(old_request_t) == offsetof(pgw_request_t, timeout_ms),
               "old_request_t must be pgw_request_t's prefix up to ud");
_Static_assert(sizeof(old_request_t) < sizeof(pgw_request_t),
               "the current descriptor has fields past the old one");

static old_request_t old_query(const char *sql, const pgw_param_t *params, size_t n,
                               pgw_result_cb cb, void *ud)
{
    old_request_t r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.kind = PGW_REQ_QUERY;
    r.sql = sql;
    r.params = params;
    r.nparams = n;
    r.on_result = cb;
    r.ud = ud;
    return r;
}

/* An old descriptor followed by bytes that would be a non-zero timeout_ms
 * and cache (PGW_ENOTSUP) if they were read. */
typedef union old_in_new {
    pgw_request_t align;
    unsigned char bytes[sizeof(pgw_request_t)];
} old_in_new_t;

static const pgw_request_t *old_with_garbage(old_in_new_t *u, const old_request_t *old)
{
    memset(u->bytes, 0xff, sizeof u->bytes);
    memcpy(u->bytes, old, sizeof *old);
    return &u->align;
}

/* A descriptor whose size is smaller than sizeof(pgw_request_t) still
 * works on every layer (fields past size read as zero; a batch array steps
 * by the caller's size); size 0 is PGW_EINVAL with nothing sent. */
static void test_descriptor_size(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    pgw_client_t *db = pgt_client_open();
    pgw_param_t p[] = {pgw_int4(3)};
    old_in_new_t u;
    rec_t r = {0};
    old_request_t old = old_query("SELECT $1::int4 + 1", p, 1, on_rec, &r);
    assert_int_equal(pgw_conn_submit(f.conn, old_with_garbage(&u, &old)), 0);
    pgt_conn_run(&f, &r.calls, 1);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.value, 4);
    pgw_result_t *res;
    assert_int_equal(pgw_client_run(db, old_with_garbage(&u, &old), &res), 0);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 4);
    pgw_result_free(res);

    /* A batch array of old descriptors. */
    rec_t rs[3] = {{0}}, done = {0};
    pgw_param_t ps[3] = {pgw_int4(10), pgw_int4(20), pgw_int4(30)};
    old_request_t olds[3];
    for (int i = 0; i < 3; i++)
        olds[i] = old_query("SELECT $1::int4", &ps[i], 1, on_rec, &rs[i]);
    olds[1].flags = PGW_Q_SYNC;
    const pgw_request_t *as_reqs = (const pgw_request_t *)(const void *)olds;
    assert_int_equal(pgw_conn_submit_batch(f.conn, as_reqs, 3, 0, on_rec, &done), 0);
    pgt_conn_run(&f, &done.calls, 1);
    assert_int_equal(done.status, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rs[i].calls, 1);
        assert_int_equal(rs[i].value, 10 * (i + 1));
    }
    pgw_result_t *results[3];
    int st[3];
    assert_int_equal(pgw_client_run_batch(db, as_reqs, 3, 0, results, st), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(st[i], 0);
        assert_int_equal(pgw_result_int4(results[i], 0, 0, &v), 0);
        assert_int_equal(v, 10 * (i + 1));
        pgw_result_free(results[i]);
    }

    /* size 0: refused everywhere, no callback. */
    memset(&r, 0, sizeof r);
    pgw_request_t zero = PGW_QUERY("SELECT 1", NULL, 0, on_rec, &r);
    zero.size = 0;
    assert_int_equal(pgw_conn_submit(f.conn, &zero), PGW_EINVAL);
    assert_string_not_equal(pgw_session_refusal(pgw_conn_session(f.conn)), "");
    assert_int_equal(pgw_conn_submit_batch(f.conn, &zero, 1, 0, on_rec, &done), PGW_EINVAL);
    res = (pgw_result_t *)1;
    assert_int_equal(pgw_client_run(db, &zero, &res), PGW_EINVAL);
    assert_null(res);
    results[0] = (pgw_result_t *)1;
    assert_int_equal(pgw_client_run_batch(db, &zero, 1, 0, results, st), PGW_EINVAL);
    assert_null(results[0]);
    assert_int_equal(st[0], PGW_EINVAL);
    /* A later element whose size differs from the first's. */
    pgw_request_t mixed[2] = {PGW_QUERY("SELECT 1", NULL, 0, on_rec, &r),
                              PGW_QUERY("SELECT 2", NULL, 0, on_rec, &r)};
    mixed[1].size = 0;
    assert_int_equal(pgw_conn_submit_batch(f.conn, mixed, 2, 0, on_rec, &done), PGW_EINVAL);
    assert_int_equal(fx_query(&f, "SELECT 5::int4", &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(r.calls, 0);
    pgw_client_close(db);
    pgt_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_one_sync_and_sync_each),
        cmocka_unit_test(test_batch_q_sync_ends_group),
        cmocka_unit_test(test_batch_refusal_all_or_nothing),
        cmocka_unit_test(test_same_descriptor_conn_and_client),
        cmocka_unit_test(test_per_column_result_formats),
        cmocka_unit_test(test_descriptor_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
