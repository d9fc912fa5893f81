/*
 * The codec against a real server: every message the test throwaway cluster
 * sends for startup, simple and extended queries, errors and notices is
 * decoded and checked field by field. The socket is a plain blocking one
 * (tests/common/pgraw.c); only the codec is under test here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/proto.h"

static void assert_str_eq(pgw_str_t s, const char *want)
{
    char got[256];
    size_t n = s.len < sizeof got - 1 ? s.len : sizeof got - 1;
    memcpy(got, s.p, n);
    got[n] = '\0';
    assert_string_equal(got, want);
}

static void assert_view_eq(pgw_view_t v, const char *want)
{
    char got[256];
    assert_true(v.len >= 0);
    assert_string_equal(pgt_view_cstr(v, got, sizeof got), want);
    assert_int_equal(v.len, strlen(want));
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void expect_ready(pgt_raw_t *r, char status)
{
    pgw_msg_t m;
    pgt_raw_expect(r, PGW_B_READY, &m);
    assert_int_equal(m.u.ready.status, status);
}

static void expect_complete(pgt_raw_t *r, const char *tag, uint64_t rows)
{
    pgw_msg_t m;
    pgt_raw_expect(r, PGW_B_COMMAND_COMPLETE, &m);
    assert_str_eq(m.u.command_complete.tag, tag);
    assert_true(m.u.command_complete.has_rows);
    assert_int_equal(m.u.command_complete.rows, rows);
}

static void send_query(pgt_raw_t *r, const char *sql)
{
    assert_int_equal(pgw_enc_query(&r->out, sql, strlen(sql), 0), 0);
    pgt_raw_send(r);
}

/* One field of a RowDescription, checked. */
static void expect_one_column(pgt_raw_t *r, const char *name, uint32_t type_oid, int16_t format)
{
    pgw_msg_t m;
    pgt_raw_expect(r, PGW_B_ROW_DESC, &m);
    assert_int_equal(m.u.row_desc.nfields, 1);
    pgw_rowdesc_iter_t it;
    pgw_field_desc_t fd;
    pgw_rowdesc_iter_init(&it, &m);
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 1);
    assert_str_eq(fd.name, name);
    assert_int_equal(fd.type_oid, type_oid);
    assert_int_equal(fd.format, format);
    assert_int_equal(fd.table_oid, 0);
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 0);
}

static pgw_view_t expect_one_field(pgt_raw_t *r, pgw_msg_t *m)
{
    pgw_view_t f[1];
    pgt_raw_expect(r, PGW_B_DATA_ROW, m);
    assert_int_equal(pgw_datarow_fields(m, f, 1), 1);
    return f[0];
}

/* Startup as the trust user, decoding every message up to ReadyForQuery. */
static void test_startup_trust(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_open(NULL);
    const char *params[] = {"user",
                            pgt_env_required("PGUSER"),
                            "database",
                            pgt_env_required("PGDATABASE"),
                            "application_name",
                            "proto_wire"};
    assert_int_equal(pgw_enc_startup(&r->out, PGW_PROTO_3_0, params, 3), 0);
    pgt_raw_send(r);

    pgw_msg_t m;
    pgt_raw_expect(r, PGW_B_AUTH, &m);
    assert_int_equal(m.u.auth.code, PGW_AUTH_OK);

    int saw_key = 0, saw_version = 0, saw_app = 0, saw_encoding = 0;
    for (;;) {
        pgt_raw_next(r, &m);
        if (m.type == PGW_B_READY) break;
        if (m.type == PGW_B_BACKEND_KEY) {
            assert_true(m.u.backend_key.pid > 0);
            assert_int_equal(m.u.backend_key.key_len, 4);
            saw_key++;
            continue;
        }
        assert_int_equal(m.type, PGW_B_PARAM_STATUS);
        pgw_str_t name = m.u.param_status.name, value = m.u.param_status.value;
        if (name.len == 14 && memcmp(name.p, "server_version", 14) == 0) {
            const char *want = pgt_env("PGW_TEST_SERVER_VERSION_STRING");
            if (want != NULL) {
                assert_true(value.len >= strlen(want));
                assert_memory_equal(value.p, want, strlen(want));
            }
            saw_version++;
        } else if (name.len == 16 && memcmp(name.p, "application_name", 16) == 0) {
            assert_str_eq(value, "proto_wire");
            saw_app++;
        } else if (name.len == 15 && memcmp(name.p, "client_encoding", 15) == 0) {
            assert_str_eq(value, "UTF8");
            saw_encoding++;
        }
    }
    assert_int_equal(m.u.ready.status, 'I');
    assert_int_equal(saw_key, 1);
    assert_int_equal(saw_version, 1);
    assert_int_equal(saw_app, 1);
    assert_int_equal(saw_encoding, 1);
    pgt_raw_close(r);
}

static void test_simple_select_1(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    send_query(r, "select 1");
    expect_one_column(r, "?column?", 23, 0);
    pgw_msg_t m;
    assert_view_eq(expect_one_field(r, &m), "1");
    expect_complete(r, "SELECT 1", 1);
    expect_ready(r, 'I');
    pgt_raw_close(r);
}

static void test_extended_binary_param(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    const char *sql = "select $1::int4 + 1";
    uint32_t oid = 23;
    uint8_t be41[4] = {0, 0, 0, 41};
    pgw_view_t param = {be41, 4};
    int16_t binary = 1;
    assert_int_equal(pgw_enc_parse(&r->out, "", sql, strlen(sql), &oid, 1, 0), 0);
    assert_int_equal(pgw_enc_bind(&r->out, "", "", &binary, 1, &param, 1, &binary, 1, 0), 0);
    assert_int_equal(pgw_enc_describe(&r->out, 'P', ""), 0);
    assert_int_equal(pgw_enc_execute(&r->out, "", 0), 0);
    assert_int_equal(pgw_enc_sync(&r->out), 0);
    pgt_raw_send(r);

    pgw_msg_t m;
    pgt_raw_expect(r, PGW_B_PARSE_COMPLETE, &m);
    assert_int_equal(m.len, 0);
    pgt_raw_expect(r, PGW_B_BIND_COMPLETE, &m);
    expect_one_column(r, "?column?", 23, 1);
    pgw_view_t v = expect_one_field(r, &m);
    assert_int_equal(v.len, 4);
    assert_int_equal(be32(v.p), 42);
    expect_complete(r, "SELECT 1", 1);
    expect_ready(r, 'I');
    pgt_raw_close(r);
}

static void check_div0(const pgw_msg_t *m)
{
    pgw_error_fields_t ef;
    assert_int_equal(pgw_error_fields_parse(m, &ef), 0);
    assert_view_eq(ef.sqlstate, "22012");
    assert_view_eq(ef.severity_nonlocal, "ERROR");
    assert_view_eq(ef.message, "division by zero");
    assert_true(ef.file.len > 0);
    assert_int_equal(ef.detail.len, -1);
    assert_null(ef.detail.p);
}

/* An error answers with E then Z, and the connection stays usable. */
static void test_error_division_by_zero(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    pgw_msg_t m;
    send_query(r, "select 1/0");
    pgt_raw_expect(r, PGW_B_ERROR, &m);
    check_div0(&m);
    expect_ready(r, 'I');

    /* Extended: the rest of the group is skipped up to Sync. */
    const char *sql = "select 1/0";
    assert_int_equal(pgw_enc_parse(&r->out, "", sql, strlen(sql), NULL, 0, 0), 0);
    assert_int_equal(pgw_enc_bind(&r->out, "", "", NULL, 0, NULL, 0, NULL, 0, 0), 0);
    assert_int_equal(pgw_enc_execute(&r->out, "", 0), 0);
    assert_int_equal(pgw_enc_sync(&r->out), 0);
    pgt_raw_send(r);
    pgt_raw_expect(r, PGW_B_PARSE_COMPLETE, &m);
    pgt_raw_expect(r, PGW_B_ERROR, &m);
    check_div0(&m);
    expect_ready(r, 'I');

    send_query(r, "select 1");
    expect_one_column(r, "?column?", 23, 0);
    assert_view_eq(expect_one_field(r, &m), "1");
    expect_complete(r, "SELECT 1", 1);
    expect_ready(r, 'I');
    pgt_raw_close(r);
}

static void test_notice(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    pgw_msg_t m;
    send_query(r, "DO $$BEGIN RAISE NOTICE 'hi'; END$$");
    pgt_raw_expect(r, PGW_B_NOTICE, &m);
    pgw_error_fields_t ef;
    assert_int_equal(pgw_error_fields_parse(&m, &ef), 0);
    assert_view_eq(ef.severity_nonlocal, "NOTICE");
    assert_view_eq(ef.sqlstate, "00000");
    assert_view_eq(ef.message, "hi");
    pgt_raw_expect(r, PGW_B_COMMAND_COMPLETE, &m);
    assert_str_eq(m.u.command_complete.tag, "DO");
    assert_false(m.u.command_complete.has_rows);
    expect_ready(r, 'I');
    pgt_raw_close(r);
}

/* ReadyForQuery reports the transaction state: idle, in a block, failed. */
static void test_transaction_status(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    assert_int_equal(pgt_raw_exec(r, "BEGIN"), 0);
    assert_int_equal(r->txn_status, 'T');
    assert_int_equal(pgt_raw_exec(r, "select 1/0"), -1);
    assert_string_equal(r->sqlstate, "22012");
    assert_int_equal(r->txn_status, 'E');
    assert_int_equal(pgt_raw_exec(r, "select 1"), -1);
    assert_string_equal(r->sqlstate, "25P02");
    assert_int_equal(pgt_raw_exec(r, "ROLLBACK"), 0);
    assert_int_equal(r->txn_status, 'I');
    assert_string_equal(r->sqlstate, "");
    pgt_raw_close(r);
}

/* A 1 MB value arrives over many reads: framing must wait for all of it. */
static void test_large_row(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    pgw_msg_t m;
    send_query(r, "select repeat('ab', 524288)");
    expect_one_column(r, "repeat", 25, 0);
    pgw_view_t v = expect_one_field(r, &m);
    assert_int_equal(v.len, 1048576);
    for (int32_t i = 0; i < v.len; i++)
        assert_int_equal(v.p[i], i % 2 ? 'b' : 'a');
    expect_complete(r, "SELECT 1", 1);
    expect_ready(r, 'I');
    pgt_raw_close(r);
}

/* pgt_raw_query: rows, NULLs, text and binary, and server errors. */
static void test_pgraw_query(void **state)
{
    (void)state;
    pgt_raw_t *r = pgt_raw_connect();
    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(r,
                                    "select g, nullif(g, 2)::text as t "
                                    "from generate_series(1, 3) g",
                                    0, &rows),
                     0);
    assert_int_equal(rows.nrows, 3);
    assert_int_equal(rows.ncols, 2);
    assert_int_equal(rows.col_oids[0], 23);
    assert_int_equal(rows.col_oids[1], 25);
    assert_string_equal(rows.col_names[1], "t");
    assert_string_equal(rows.command_tag, "SELECT 3");
    assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, 2, 0), "3"));
    assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, 0, 1), "1"));
    assert_int_equal(pgt_rows_cell(&rows, 1, 1).len, -1);
    assert_null(pgt_rows_cell(&rows, 1, 1).p);
    pgt_rows_free(&rows);

    uint32_t oids[2] = {25, 0};
    pgw_view_t params[2] = {{(const uint8_t *)"x", 1}, {NULL, -1}};
    assert_int_equal(pgt_raw_query(r, "select $1 || 'y', $2::int8 is null, ''::text", 2, oids,
                                   params, NULL, 1, &rows),
                     0);
    assert_int_equal(rows.nrows, 1);
    assert_int_equal(rows.col_formats[0], 1);
    assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, 0, 0), "xy"));
    pgw_view_t b = pgt_rows_cell(&rows, 0, 1);
    assert_int_equal(b.len, 1);
    assert_int_equal(b.p[0], 1);
    assert_int_equal(pgt_rows_cell(&rows, 0, 2).len, 0);
    assert_non_null(pgt_rows_cell(&rows, 0, 2).p);
    pgt_rows_free(&rows);

    assert_int_equal(pgt_raw_query0(r, "select * from no_such_table_pgw", 0, &rows), -1);
    assert_string_equal(rows.sqlstate, "42P01");
    assert_non_null(strstr(rows.message, "no_such_table_pgw"));
    assert_int_equal(rows.nrows, 0);
    pgt_rows_free(&rows);
    assert_int_equal(r->txn_status, 'I');
    pgt_raw_close(r);
}

/* TCP: trust for the test user, and cleartext password auth. */
static void test_tcp_and_password(void **state)
{
    (void)state;
    pgt_raw_opts_t o = {0};
    o.host = pgt_env_required("PGW_TEST_TCP_HOST");
    pgt_raw_t *r = pgt_raw_connect_with(&o);
    pgt_raw_exec_ok(r, "select 1");
    pgt_raw_close(r);

    o.user = pgt_env_required("PGW_TEST_CLEAR_USER");
    o.password = pgt_env_required("PGW_TEST_CLEAR_PASSWORD");
    r = pgt_raw_connect_with(&o);
    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(r, "select current_user", 0, &rows), 0);
    assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, 0, 0), o.user));
    pgt_rows_free(&rows);
    pgt_raw_close(r);

    /* A wrong password is refused with 28P01. */
    char err[300];
    o.password = "wrong-password";
    assert_int_equal(pgt_raw_try_connect(&o, &r, err, sizeof err), -1);
    assert_null(r);
    assert_non_null(strstr(err, "28P01"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup_trust),
        cmocka_unit_test(test_simple_select_1),
        cmocka_unit_test(test_extended_binary_param),
        cmocka_unit_test(test_error_division_by_zero),
        cmocka_unit_test(test_notice),
        cmocka_unit_test(test_transaction_status),
        cmocka_unit_test(test_large_row),
        cmocka_unit_test(test_pgraw_query),
        cmocka_unit_test(test_tcp_and_password),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
