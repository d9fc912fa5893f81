/*
 * The libuv connection against the scripted fake server: protocol 3.2
 * startup and downgrade, connection loss in the middle of a message, and
 * hostile framing over a real socket (RELIABILITY case 2).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h needs POSIX types under -std=c11 */
#include "fakepg.h"
#include "pgtime.h"

#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define NREQ         5
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct req_rec {
    int calls;
    int status;
    int32_t value;
} req_rec_t;

typedef struct ctx {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected;
    int connect_status;
    int lost;
    int lost_err;
    int closed;
    req_rec_t req[NREQ];
} ctx_t;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    req_rec_t *r = ud;
    r->calls++;
    r->status = status;
    if (res && status == 0) pgw_result_int4(res, 0, 0, &r->value);
    pgw_result_free(res);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    ctx_t *x = ud;
    x->connected++;
    x->connect_status = status;
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    ctx_t *x = ud;
    x->lost++;
    x->lost_err = err;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ctx_t *x = ud;
    x->closed++;
}

static void on_deadline(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

/* Run the loop until *flag is non-zero or 60 s passed (a guard against hangs, not a bound). */
static void run_until(ctx_t *x, const int *flag)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(&x->loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_deadline, 60000, 0);
    while (!*flag && !expired)
        uv_run(&x->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&x->loop, UV_RUN_NOWAIT);
    assert_true(*flag);
}

static void ctx_init_threshold(ctx_t *x, size_t threshold)
{
    memset(x, 0, sizeof(*x));
    assert_int_equal(uv_loop_init(&x->loop), 0);
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.on_lost = on_lost;
    cfg.ud = x;
    cfg.write_threshold = threshold;
    assert_int_equal(pgw_conn_new(&x->conn, &x->loop, &cfg), 0);
}

static void ctx_init(ctx_t *x)
{
    ctx_init_threshold(x, 0);
}

static void ctx_connect(ctx_t *x, fakepg_t *f, const char *extra)
{
    char ci[256];
    snprintf(ci, sizeof(ci), "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable %s",
             (unsigned)fakepg_port(f), extra ? extra : "");
    assert_int_equal(pgw_conn_connect(x->conn, ci, on_connect, x), 0);
}

static void ctx_close(ctx_t *x)
{
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), 0);
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), PGW_ECLOSED);
    run_until(x, &x->closed);
    assert_int_equal(x->closed, 1);
    assert_int_equal(uv_run(&x->loop, UV_RUN_NOWAIT), 0);
    assert_int_equal(uv_loop_close(&x->loop), 0);
}

static void queue_queries(ctx_t *x, int n)
{
    for (int i = 0; i < n; i++) {
        pgw_param_t p[] = {pgw_int4(i + 1)};
        assert_int_equal(pgw_conn_query(x->conn, "SELECT $1::int4", p, 1, on_req, &x->req[i]), 0);
    }
}

/* ------------------------------------------------------------------ tests */

/* Requests queued before connect completes go out after startup, in one
 * write, and are answered in order; close sends Terminate. */
static void test_basic_pipeline(void **state)
{
    pgw_buf_t hello = {0}, answers = {0};
    pgt_msg_startup_ok(&hello, "17.0", 42, 0x01020304u);
    for (int i = 0; i < 3; i++) {
        int32_t v = i + 1;
        fakepg_query_answer(&answers, &v, 1);
    }
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, 3}, {FAKEPG_SEND, 0, answers.data, answers.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    ctx_init(&x);
    ctx_connect(&x, f, NULL);
    queue_queries(&x, 3);
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    run_until(&x, &x.req[2].calls);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(x.req[i].calls, 1);
        assert_int_equal(x.req[i].status, 0);
        assert_int_equal(x.req[i].value, i + 1);
    }
    pgw_conn_stats_t st;
    pgw_conn_stats(x.conn, &st);
    assert_int_equal(st.writes, 2); /* startup, then the three queries */
    assert_string_equal(fakepg_startup_param(f, "user"), "fake");
    assert_int_equal(fakepg_startup_version(f), PGW_PROTO_3_0);
    ctx_close(&x);
    assert_int_equal(fakepg_wait(f), 0);
    fakepg_free(f);
    pgw_buf_free(&hello);
    pgw_buf_free(&answers);
}

/* The server resets the connection after its ReadyForQuery, while the
 * connect callback runs (which waits for the reset, then submits). The
 * write of those requests, made as the connect completes, inside the
 * session's startup callback, fails. The connect has reported success,
 * having seen ReadyForQuery; then every request and on_lost get the
 * connection-lost error, once each. */
static fakepg_t *resetting;

static void on_connect_submit(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    on_connect(conn, status, err, ud);
    if (fakepg_wait(resetting) != 0) fail_msg("%s", fakepg_error(resetting));
    if (status == 0) queue_queries(ud, NREQ);
}

static void test_reset_behind_startup(void **state)
{
    pgw_buf_t hello = {0};
    pgt_msg_startup_ok(&hello, "17.0", 42, 0x01020304u);
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_SLEEP, 0, NULL, 100},
        {FAKEPG_SEND_RESET, 0, NULL, 0},
    };
    assert_int_equal(fakepg_start(&resetting, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    ctx_init(&x);
    char ci[256];
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable",
             (unsigned)fakepg_port(resetting));
    assert_int_equal(pgw_conn_connect(x.conn, ci, on_connect_submit, &x), 0);
    run_until(&x, &x.connected);
    run_until(&x, &x.lost);
    assert_int_equal(x.connect_status, 0);
    for (int i = 0; i < NREQ; i++) {
        if (x.req[i].calls != 1 || x.req[i].status != PGW_ECONNLOST)
            fail_msg("request %d: %d calls, %s", i, x.req[i].calls, pgw_err_name(x.req[i].status));
    }
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    ctx_close(&x);
    fakepg_free(resetting);
    pgw_buf_free(&hello);
}

/* Output past the write threshold is written at once, not at the end of
 * the loop turn. */
static void test_write_threshold(void **state)
{
    pgw_buf_t hello = {0}, answers = {0};
    pgt_msg_startup_ok(&hello, "17.0", 42, 0x01020304u);
    for (int i = 0; i < 3; i++) {
        int32_t v = i + 1;
        fakepg_query_answer(&answers, &v, 1);
    }
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, 3}, {FAKEPG_SEND, 0, answers.data, answers.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    ctx_init_threshold(&x, 16);
    ctx_connect(&x, f, NULL);
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    pgw_conn_stats_t st0, st1;
    pgw_conn_stats(x.conn, &st0);
    queue_queries(&x, 3);
    pgw_conn_stats(x.conn, &st1);
    /* Each query passed the threshold and was written inside its own call
     * (the socket took each write whole, so none had to wait for another). */
    assert_int_equal(st1.writes, st0.writes + 3);
    run_until(&x, &x.req[2].calls);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(x.req[i].status, 0);
        assert_int_equal(x.req[i].value, i + 1);
    }
    pgw_conn_stats(x.conn, &st1);
    assert_int_equal(st1.writes, st0.writes + 3); /* nothing was left for the loop turn */
    ctx_close(&x);
    assert_int_equal(fakepg_wait(f), 0);
    fakepg_free(f);
    pgw_buf_free(&hello);
    pgw_buf_free(&answers);
}

/* A PostgreSQL 18 server's answer to the startup: trust, its version, the
 * backend key (pid 4242) and ReadyForQuery. */
static void hello_32(pgw_buf_t *b, const uint8_t *key, size_t keylen)
{
    pgt_msg_auth(b, 0, NULL, 0);
    pgt_msg_param_status(b, "server_version", "18.0");
    pgt_msg_backend_key(b, 4242, key, keylen);
    pgt_msg_ready(b, 'I');
}

/* max_protocol_version=3.2: the client asks 3.2; the server's 32-byte
 * cancel key is accepted. */
static void test_protocol_32_long_key(void **state)
{
    uint8_t key[32];
    for (size_t i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(0xA0 + i);
    pgw_buf_t hello = {0};
    hello_32(&hello, key, sizeof(key));
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    ctx_init(&x);
    ctx_connect(&x, f, "max_protocol_version=3.2");
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    pgw_session_t *s = pgw_conn_session(x.conn);
    assert_int_equal(pgw_session_protocol(s), PGW_PROTO_3_2);
    int32_t pid;
    const uint8_t *k;
    size_t klen;
    assert_int_equal(pgw_session_backend_key(s, &pid, &k, &klen), 0);
    assert_int_equal(pid, 4242);
    assert_int_equal(klen, 32);
    assert_memory_equal(k, key, 32);
    ctx_close(&x);
    assert_int_equal(fakepg_wait(f), 0);
    assert_int_equal(fakepg_startup_version(f), PGW_PROTO_3_2);
    fakepg_free(f);
    pgw_buf_free(&hello);
}

static void on_cancel_done(pgw_conn_t *conn, int status, void *ud)
{
    req_rec_t *r = ud;
    r->calls++;
    r->status = status;
}

/* Protocol 3.2's 256-bit cancel key goes out whole: the CancelRequest on a
 * second connection carries the pid and the 32-byte key (length 48), and
 * the version is reported as libpq 18's PQfullProtocolVersion does. */
static void test_protocol_32_cancel_key(void **state)
{
    uint8_t key[32];
    for (size_t i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)(0x40 + 7 * i);
    pgw_buf_t hello = {0};
    hello_32(&hello, key, sizeof(key));
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_ACCEPT, 0, NULL, 0},         {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_RESUME, 0, NULL, 0},         {FAKEPG_EXPECT, 'X', NULL, 0},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    ctx_t x;
    ctx_init(&x);
    assert_int_equal(pgw_conn_protocol_version(x.conn), 0);
    ctx_connect(&x, f, "max_protocol_version=3.2");
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    assert_int_equal(pgw_conn_protocol_version(x.conn), 30002);
    req_rec_t cancel = {0, 1, 0};
    assert_int_equal(pgw_conn_cancel(x.conn, on_cancel_done, &cancel), 0);
    run_until(&x, &cancel.calls);
    assert_int_equal(cancel.status, 0);
    ctx_close(&x);
    assert_int_equal(pgw_conn_protocol_version(NULL), 0);
    if (fakepg_wait(f) != 0) fail_msg("%s", fakepg_error(f));
    assert_int_equal(fakepg_startup_version(f), 80877102); /* CancelRequest */
    size_t n;
    const uint8_t *body = fakepg_startup_body(f, &n);
    assert_int_equal(n, 4 + sizeof(key));
    assert_int_equal((int32_t)((uint32_t)body[0] << 24 | (uint32_t)body[1] << 16 |
                               (uint32_t)body[2] << 8 | body[3]),
                     4242);
    assert_memory_equal(body + 4, key, sizeof(key));
    fakepg_free(f);
    pgw_buf_free(&hello);
}

/* The server answers NegotiateProtocolVersion 3.0, as the bare minor
 * number the protocol documents or as the whole version PostgreSQL 15-17
 * send (0x00030000): accepted with the default min_protocol_version,
 * refused with min_protocol_version=3.2 as unsupported, not as a protocol
 * violation. */
static void run_negotiate(const char *extra, uint32_t offered, int expect_ok)
{
    pgw_buf_t hello = {0};
    pgt_msg_negotiate(&hello, offered, NULL, 0);
    pgt_msg_startup_ok(&hello, "17.0", 7, 0x0A0B0C0Du);
    fakepg_step_t ok_steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, 1}, /* the early query, never answered */
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_step_t refuse_steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(expect_ok ? fakepg_start(&f, ok_steps, ARRAY_LEN(ok_steps))
                               : fakepg_start(&f, refuse_steps, ARRAY_LEN(refuse_steps)),
                     0);
    ctx_t x;
    ctx_init(&x);
    ctx_connect(&x, f, extra);
    req_rec_t early = {0, 0, 0};
    pgw_param_t p[] = {pgw_int4(1)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $1::int4", p, 1, on_req, &early), 0);
    run_until(&x, &x.connected);
    assert_int_equal(x.connected, 1);
    if (expect_ok) {
        assert_int_equal(x.connect_status, 0);
        assert_int_equal(pgw_session_protocol(pgw_conn_session(x.conn)), PGW_PROTO_3_0);
        assert_int_equal(early.calls, 0); /* still pending: the fake never answers */
    } else {
        assert_int_equal(x.connect_status, PGW_ENOTSUP);
        assert_int_equal(early.calls, 1); /* failed exactly once with the attempt */
        assert_true(early.status < 0);
        assert_int_equal(x.lost, 0); /* a connect failure is not a loss */
        assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &early), PGW_ECLOSED);
    }
    ctx_close(&x);
    assert_int_equal(early.calls, 1);
    if (expect_ok) assert_int_equal(early.status, PGW_ECANCELED);
    assert_int_equal(fakepg_wait(f), 0);
    assert_int_equal(fakepg_startup_version(f), PGW_PROTO_3_2);
    fakepg_free(f);
    pgw_buf_free(&hello);
}

static void test_negotiate_downgrade_accepted(void **state)
{
    run_negotiate("max_protocol_version=3.2", 0, 1);
    run_negotiate("max_protocol_version=3.2", 0x00030000u, 1);
}

static void test_negotiate_downgrade_refused(void **state)
{
    run_negotiate("min_protocol_version=3.2 max_protocol_version=3.2", 0, 0);
    run_negotiate("min_protocol_version=3.2 max_protocol_version=3.2", 0x00030000u, 0);
}

/* Send prefix then the hostile bytes to NREQ pending queries; every
 * callback must fire once with expect_err, on_lost too, and the client
 * must close the socket (no resync). cut: the fake closes after sending. */
static void run_hostile(const pgw_buf_t *payload, int cut, int expect_err)
{
    pgw_buf_t hello = {0};
    pgt_msg_startup_ok(&hello, "17.0", 9, 0x11223344u);
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, NREQ},
        {cut ? FAKEPG_SEND_CUT : FAKEPG_SEND, 0, payload->data, payload->len},
    };
    fakepg_step_t eof_step[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},    {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, NREQ}, {FAKEPG_SEND, 0, payload->data, payload->len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(cut ? fakepg_start(&f, steps, ARRAY_LEN(steps))
                         : fakepg_start(&f, eof_step, ARRAY_LEN(eof_step)),
                     0);
    ctx_t x;
    ctx_init(&x);
    ctx_connect(&x, f, NULL);
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    queue_queries(&x, NREQ);
    run_until(&x, &x.lost);
    for (int i = 0; i < NREQ; i++) {
        assert_int_equal(x.req[i].calls, 1);
        assert_int_equal(x.req[i].status, expect_err);
    }
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, expect_err);
    assert_int_equal(pgw_conn_is_ready(x.conn), 0);
    req_rec_t late = {0, 0, 0};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, on_req, &late), PGW_ECLOSED);
    assert_int_equal(fakepg_wait(f), 0); /* for !cut: the client closed its socket */
    ctx_close(&x);
    for (int i = 0; i < NREQ; i++)
        assert_int_equal(x.req[i].calls, 1);
    assert_int_equal(late.calls, 0);
    fakepg_free(f);
    pgw_buf_free(&hello);
}

/* The start of an answer to the first query: ParseComplete, BindComplete,
 * RowDescription (one binary int4). */
static void answer_head(pgw_buf_t *b)
{
    static const char *const names[] = {"v"};
    static const uint32_t oids[] = {23};
    pgt_msg(b, '1', NULL, 0);
    pgt_msg(b, '2', NULL, 0);
    pgt_msg_row_desc(b, 1, names, oids, 1);
}

static void test_loss_mid_datarow(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg_data_row_int4(&b, 1);
    size_t full = b.len;
    pgt_msg_data_row_int4(&b, 2);
    b.len = full + 6; /* cut inside the second DataRow */
    run_hostile(&b, 1, PGW_ECONNLOST);
    pgw_buf_free(&b);
}

static void test_hostile_length_below_4(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg_raw(&b, "D\0\0\0\x02", 5);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_short_type_too_long(void **state)
{
    static const char types[] = {'Z', 'C', '1', '2', 't'};
    for (size_t i = 0; i < sizeof(types); i++) {
        pgw_buf_t b = {0};
        if (types[i] != '1') pgt_msg(&b, '1', NULL, 0);
        uint8_t hdr[5] = {(uint8_t)types[i], 0, 0, 0x9C, 0x44}; /* 40004 */
        pgt_msg_raw(&b, hdr, 5);
        run_hostile(&b, 0, PGW_EPROTO);
        pgw_buf_free(&b);
    }
}

static void test_hostile_datarow_huge(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg_raw(&b, "D\x7f\xff\xff\xff", 5);
    run_hostile(&b, 0, PGW_ETOOBIG);
    pgw_buf_free(&b);
}

static void test_hostile_field_len_minus_2(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg(&b, 'D', "\x00\x01\xff\xff\xff\xfe", 6);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_field_past_end(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg(&b, 'D', "\x00\x01\x00\x00\x00\x08\x00\x00\x00\x01", 10);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_field_count_mismatch(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg(&b, 'D', "\x00\x02\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x02",
            18);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_unknown_type(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg(&b, '~', "xyz", 3);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_error_without_nul(void **state)
{
    pgw_buf_t b = {0};
    pgt_msg(&b, 'E', "SERROR\0C12345\0Mno terminator", 28);
    run_hostile(&b, 0, PGW_EPROTO);
    pgw_buf_free(&b);
}

static void test_hostile_cut_then_eof(void **state)
{
    pgw_buf_t b = {0};
    answer_head(&b);
    pgt_msg_raw(&b, "C\0\0\0\x0dSELE", 9);
    run_hostile(&b, 1, PGW_ECONNLOST);
    pgw_buf_free(&b);
}

/* ------------------------------------------------------- cancel timeout */

/* The fake accepts one connection (the client's) and leaves every later
 * one in its listen backlog: the cancel's connect completes, its request
 * is sent, and nothing ever answers or closes. The client then ends its
 * connection with Terminate, or (terminates 0) closes it without one. */
static fakepg_t *start_blackhole_cancel(pgw_buf_t *hello, fakepg_step_t *steps, int32_t pid,
                                        int terminates)
{
    pgt_msg_startup_ok(hello, "17.0", pid, 0x01020304u);
    const fakepg_step_t script[4] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello->data, hello->len},
        {FAKEPG_EXPECT, 'X', NULL, 0},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    memcpy(steps, script, sizeof script); /* the fake reads them until fakepg_wait */
    if (!terminates) steps[2] = steps[3];
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, terminates ? 4 : 3), 0);
    return f;
}

/* The blocking client's cancel is bounded by connect_timeout, as the
 * conn's; the token carries it, and an explicit timeout overrides it. */
static void test_client_cancel_honours_connect_timeout(void **state)
{
    pgw_buf_t hello = {0};
    fakepg_step_t steps[4];
    fakepg_t *f = start_blackhole_cancel(&hello, steps, 77, 1);
    char ci[256];
    snprintf(ci, sizeof(ci),
             "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable connect_timeout=2",
             (unsigned)fakepg_port(f));
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_client_cancel(c), PGW_ETIMEDOUT);
    /* the fake never answers the cancel: only the timeout ends it */
    pgt_assert_in_time("client cancel gave up", pgt_ms_since(t0), 1900, PGT_WORK_ENDLESS);

    pgw_cancel_token_t *tok = NULL, *dup = NULL;
    assert_int_equal(pgw_conn_cancel_token(pgw_client_conn(c), &tok), 0);
    pgw_cancel_token_info_t info;
    assert_int_equal(pgw_cancel_token_info(tok, &info), 0);
    assert_string_equal(info.address, "127.0.0.1");
    assert_int_equal(info.port, fakepg_port(f));
    assert_int_equal(info.pid, 77);
    assert_int_equal(info.key_len, 4);
    assert_int_equal(info.tls, 0);
    assert_int_equal(info.timeout_ms, 2000);
    assert_int_equal(pgw_cancel_token_copy(tok, &dup), 0);
    pgw_cancel_token_free(tok);
    t0 = uv_hrtime();
    assert_int_equal(pgw_cancel_token_send(dup, 300), PGW_ETIMEDOUT);
    pgt_assert_in_time("token send gave up", pgt_ms_since(t0), 250, PGT_WORK_ENDLESS);
    pgw_cancel_token_free(dup);

    /* NULL handles */
    assert_int_equal(pgw_cancel_token_send(NULL, 0), PGW_EINVAL);
    assert_int_equal(pgw_cancel_token_copy(NULL, &dup), PGW_EINVAL);
    assert_null(dup);
    assert_int_equal(pgw_cancel_token_info(NULL, &info), PGW_EINVAL);
    assert_int_equal(info.pid, 0);
    assert_int_equal(pgw_conn_cancel_token(NULL, &tok), PGW_EINVAL);
    pgw_cancel_token_free(NULL);

    pgw_client_close(c);
    assert_int_equal(fakepg_wait(f), 0);
    fakepg_free(f);
    pgw_buf_free(&hello);
}

typedef struct cancel_rec {
    int calls;
    int status;
} cancel_rec_t;

static void on_cancel(pgw_conn_t *conn, int status, void *ud)
{
    cancel_rec_t *r = ud;
    r->calls++;
    r->status = status;
}

/* The asynchronous cancel: the same sender, the same bound. Its packet
 * went out unconfirmed, so the connection is closed (conn.h, DEADLINES):
 * on_lost fires, and no Terminate is sent. */
static void test_conn_cancel_honours_connect_timeout(void **state)
{
    pgw_buf_t hello = {0};
    fakepg_step_t steps[4];
    fakepg_t *f = start_blackhole_cancel(&hello, steps, 78, 0);
    ctx_t x;
    ctx_init(&x);
    pgw_cancel_token_t *tok = NULL;
    assert_int_equal(pgw_conn_cancel_token(x.conn, &tok), PGW_EBUSY); /* not connected */
    assert_null(tok);
    ctx_connect(&x, f, "connect_timeout=2");
    run_until(&x, &x.connected);
    assert_int_equal(x.connect_status, 0);
    cancel_rec_t r = {0, 0};
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_cancel(x.conn, on_cancel, &r), 0);
    run_until(&x, &r.calls);
    double ms = pgt_ms_since(t0);
    assert_int_equal(r.status, PGW_ETIMEDOUT);
    pgt_assert_in_time("conn cancel gave up", ms, 1900, PGT_WORK_ENDLESS);
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    ctx_close(&x);
    assert_int_equal(fakepg_wait(f), 0);
    fakepg_free(f);
    pgw_buf_free(&hello);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_pipeline),
        cmocka_unit_test(test_write_threshold),
        cmocka_unit_test(test_reset_behind_startup),
        cmocka_unit_test(test_protocol_32_long_key),
        cmocka_unit_test(test_protocol_32_cancel_key),
        cmocka_unit_test(test_negotiate_downgrade_accepted),
        cmocka_unit_test(test_negotiate_downgrade_refused),
        cmocka_unit_test(test_loss_mid_datarow),
        cmocka_unit_test(test_hostile_length_below_4),
        cmocka_unit_test(test_hostile_short_type_too_long),
        cmocka_unit_test(test_hostile_datarow_huge),
        cmocka_unit_test(test_hostile_field_len_minus_2),
        cmocka_unit_test(test_hostile_field_past_end),
        cmocka_unit_test(test_hostile_field_count_mismatch),
        cmocka_unit_test(test_hostile_unknown_type),
        cmocka_unit_test(test_hostile_error_without_nul),
        cmocka_unit_test(test_hostile_cut_then_eof),
        cmocka_unit_test(test_client_cancel_honours_connect_timeout),
        cmocka_unit_test(test_conn_cancel_honours_connect_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
