/*
 * pgw_params_t (ffi.h) against the real server: each pgw_params_set_X
 * sends what the constructor pgw_X sends, and keeps its own copy of what
 * the parameter points to, so the caller's buffers may change or go once
 * the setter returned (a binding's temporaries).
 */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"
#include "pgwire/ffi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define NPARAMS 28

/* The caller's buffers every pointer-taking parameter points to. */
struct inputs {
    char text[16], typed[16], num[16], json[16], jsonb[16], encoded[16];
    uint8_t bytes[3], uuid[16], mac[6], mac8[8], digits[4];
    pgw_numeric_t numeric;
    pgw_timetz_t tz;
    pgw_interval_t iv;
    pgw_inet_t inet;
};

static void fill(struct inputs *in)
{
    memset(in, 0, sizeof *in);
    strcpy(in->text, "h\xc3\xa9llo");
    strcpy(in->typed, "abcdef");
    strcpy(in->num, "-1.5");
    strcpy(in->json, "{\"a\": 1}");
    strcpy(in->jsonb, "{\"b\": 2}");
    strcpy(in->encoded, "3.25");
    memcpy(in->bytes, "\x00\x01\xff", 3);
    for (int i = 0; i < 16; i++)
        in->uuid[i] = (uint8_t)(i * 17);
    memcpy(in->mac, "\x08\x00\x2b\x01\x02\x03", 6);
    memcpy(in->mac8, "\x08\x00\x2b\x01\x02\x03\x04\x05", 8);
    memcpy(in->digits, "\x00\x0c\x13\x88", 4); /* 12.5: 12, 5000 */
    in->numeric = (pgw_numeric_t){PGW_NUMERIC_POS, 0, 1, 2, in->digits};
    in->tz = (pgw_timetz_t){3600 * INT64_C(1000000), -7200};
    in->iv = (pgw_interval_t){1, 2, 3};
    in->inet = (pgw_inet_t){PGW_INET_AF_INET, 24, 1, 4, {10, 1, 2, 0}};
}

static void constructors(pgw_param_t *p, const struct inputs *in)
{
    const pgw_param_t all[NPARAMS] = {
        pgw_null(PGW_OID_INT4),
        pgw_bool(true),
        pgw_int2(-7),
        pgw_int4(41),
        pgw_int8(INT64_C(1) << 40),
        pgw_float4(1.5f),
        pgw_float8(2.25),
        pgw_text_typed(in->typed, 3, PGW_OID_TEXT),
        pgw_text(in->text),
        pgw_bytea(in->bytes, 3),
        pgw_raw(PGW_OID_INT4, PGW_FORMAT_TEXT, "123", 3),
        pgw_encoded(PGW_OID_NUMERIC, pgw_encode_numeric_str, in->encoded),
        pgw_oid_param(12345),
        pgw_numeric_str(in->num),
        pgw_numeric(&in->numeric),
        pgw_date(1),
        pgw_time(3600 * INT64_C(1000000)),
        pgw_timetz(&in->tz),
        pgw_timestamp(1000000),
        pgw_timestamptz(2000000),
        pgw_interval(&in->iv),
        pgw_uuid(in->uuid),
        pgw_inet(&in->inet),
        pgw_macaddr(in->mac),
        pgw_macaddr8(in->mac8),
        pgw_money(12345),
        pgw_json(in->json),
        pgw_jsonb(in->jsonb),
    };
    memcpy(p, all, sizeof all);
}

static void setters(pgw_params_t *ps, const struct inputs *in)
{
    size_t i = 0;
    assert_int_equal(pgw_params_set_null(ps, i++, PGW_OID_INT4), 0);
    assert_int_equal(pgw_params_set_bool(ps, i++, true), 0);
    assert_int_equal(pgw_params_set_int2(ps, i++, -7), 0);
    assert_int_equal(pgw_params_set_int4(ps, i++, 41), 0);
    assert_int_equal(pgw_params_set_int8(ps, i++, INT64_C(1) << 40), 0);
    assert_int_equal(pgw_params_set_float4(ps, i++, 1.5f), 0);
    assert_int_equal(pgw_params_set_float8(ps, i++, 2.25), 0);
    assert_int_equal(pgw_params_set_text_typed(ps, i++, in->typed, 3, PGW_OID_TEXT), 0);
    assert_int_equal(pgw_params_set_text(ps, i++, in->text), 0);
    assert_int_equal(pgw_params_set_bytea(ps, i++, in->bytes, 3), 0);
    assert_int_equal(pgw_params_set_raw(ps, i++, PGW_OID_INT4, PGW_FORMAT_TEXT, "123", 3), 0);
    assert_int_equal(
        pgw_params_set_encoded(ps, i++, PGW_OID_NUMERIC, pgw_encode_numeric_str, "3.25"), 0);
    assert_int_equal(pgw_params_set_oid_param(ps, i++, 12345), 0);
    assert_int_equal(pgw_params_set_numeric_str(ps, i++, in->num), 0);
    assert_int_equal(pgw_params_set_numeric(ps, i++, &in->numeric), 0);
    assert_int_equal(pgw_params_set_date(ps, i++, 1), 0);
    assert_int_equal(pgw_params_set_time(ps, i++, 3600 * INT64_C(1000000)), 0);
    assert_int_equal(pgw_params_set_timetz(ps, i++, &in->tz), 0);
    assert_int_equal(pgw_params_set_timestamp(ps, i++, 1000000), 0);
    assert_int_equal(pgw_params_set_timestamptz(ps, i++, 2000000), 0);
    assert_int_equal(pgw_params_set_interval(ps, i++, &in->iv), 0);
    assert_int_equal(pgw_params_set_uuid(ps, i++, in->uuid), 0);
    assert_int_equal(pgw_params_set_inet(ps, i++, &in->inet), 0);
    assert_int_equal(pgw_params_set_macaddr(ps, i++, in->mac), 0);
    assert_int_equal(pgw_params_set_macaddr8(ps, i++, in->mac8), 0);
    assert_int_equal(pgw_params_set_money(ps, i++, 12345), 0);
    assert_int_equal(pgw_params_set_json(ps, i++, in->json), 0);
    assert_int_equal(pgw_params_set_jsonb(ps, i++, in->jsonb), 0);
    assert_int_equal(i, NPARAMS);
}

static const char *select_all(char *sql, size_t n)
{
    size_t len = (size_t)snprintf(sql, n, "SELECT $1");
    for (int i = 2; i <= NPARAMS; i++)
        len += (size_t)snprintf(sql + len, n - len, ", $%d", i);
    return sql;
}

static void test_setters_send_what_constructors_send(void **state)
{
    (void)state;
    char ci[512], sql[512];
    pgw_client_t *c = NULL;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    select_all(sql, sizeof sql);

    struct inputs in;
    fill(&in);
    pgw_param_t direct[NPARAMS];
    constructors(direct, &in);
    pgw_result_t *want = NULL, *got = NULL;
    assert_int_equal(pgw_client_query(c, sql, direct, NPARAMS, &want), 0);

    pgw_params_t *ps = pgw_params_new(NPARAMS);
    assert_non_null(ps);
    setters(ps, &in);
    memset(&in, 0x5a, sizeof in); /* the caller's buffers change */
    pgw_request_t *q = pgw_request_new(PGW_REQ_QUERY);
    assert_int_equal(pgw_request_set_ptr(q, "sql", sql), 0);
    assert_int_equal(pgw_request_set_params(q, ps), 0);
    assert_int_equal(pgw_client_run(c, q, &got), 0);

    assert_int_equal(pgw_result_ncols(got), NPARAMS);
    for (size_t col = 0; col < NPARAMS; col++) {
        const char *w = NULL, *g = NULL;
        assert_int_equal(pgw_result_ftype(got, col), pgw_result_ftype(want, col));
        assert_int_equal(pgw_result_isnull(got, 0, col), pgw_result_isnull(want, 0, col));
        if (pgw_result_isnull(want, 0, col)) continue;
        assert_int_equal(pgw_result_value_cstr(want, 0, col, &w, NULL), 0);
        assert_int_equal(pgw_result_value_cstr(got, 0, col, &g, NULL), 0);
        assert_string_equal(g, w);
    }
    /* A few by value, so that equal is also right. */
    const char *s = NULL;
    assert_int_equal(pgw_result_value_cstr(got, 0, 8, &s, NULL), 0);
    assert_string_equal(s, "h\xc3\xa9llo");
    assert_int_equal(pgw_result_value_cstr(got, 0, 14, &s, NULL), 0);
    assert_string_equal(s, "12.5");
    assert_int_equal(pgw_result_value_cstr(got, 0, 22, &s, NULL), 0);
    assert_string_equal(s, "10.1.2.0/24");
    assert_int_equal(pgw_result_value_cstr(got, 0, 20, &s, NULL), 0);
    assert_string_equal(s, "3 mons 2 days 00:00:00.000001");

    pgw_result_free(want);
    pgw_result_free(got);
    pgw_request_free(q);
    pgw_params_free(ps);
    pgw_client_close(c);
}

/* A batch of descriptors from pgw_request_new_array, and a table
 * column's description through the pgw_field_* accessors. */
static void test_batch_and_field_descriptions(void **state)
{
    (void)state;
    char ci[512];
    pgw_client_t *c = NULL;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    assert_null(pgw_request_new_array(0, PGW_REQ_QUERY));
    pgw_request_t *reqs = pgw_request_new_array(2, PGW_REQ_QUERY);
    assert_non_null(reqs);
    pgw_params_t *ps = pgw_params_new(1);
    assert_int_equal(pgw_params_set_text(ps, 0, "pg_class"), 0);
    pgw_request_t *first = (pgw_request_t *)pgw_request_nth(reqs, 0);
    pgw_request_t *second = (pgw_request_t *)pgw_request_nth(reqs, 1);
    assert_int_equal(pgw_request_set_ptr(first, "sql", "SELECT 7"), 0);
    assert_int_equal(
        pgw_request_set_ptr(second, "sql", "SELECT relname FROM pg_class WHERE relname = $1"), 0);
    assert_int_equal(pgw_request_set_params(second, ps), 0);
    pgw_result_t *results[2] = {NULL, NULL};
    int statuses[2] = {-1, -1};
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, results, statuses), 0);
    assert_int_equal(statuses[0], 0);
    assert_int_equal(statuses[1], 0);
    assert_int_equal(pgw_result_nrows(results[1]), 1);

    const pgw_field_desc_t *fd = pgw_result_field(results[1], 0);
    size_t len = 0;
    const char *name = pgw_field_name(fd, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(name, "relname", 7);
    assert_int_equal(pgw_field_type(fd), PGW_OID_NAME);
    assert_int_equal(pgw_field_table(fd), 1259); /* pg_class's OID */
    assert_int_equal(pgw_field_attnum(fd), 2);
    assert_int_equal(pgw_field_typlen(fd), 64);
    assert_int_equal(pgw_field_typmod(fd), -1);
    assert_int_equal(pgw_field_format(fd), pgw_result_fformat(results[1], 0));
    assert_int_equal(pgw_field_table(pgw_result_field(results[0], 0)), 0);
    assert_null(pgw_field_name(NULL, &len));
    assert_int_equal(len, 0);
    assert_int_equal(pgw_field_typmod(NULL), -1);
    assert_int_equal(pgw_field_format(NULL), -1);

    pgw_result_free(results[0]);
    pgw_result_free(results[1]);
    pgw_params_free(ps);
    pgw_request_free(reqs);
    pgw_client_close(c);
}

/* Setting a slot again frees the copy it held; a failed set leaves it. */
static void test_reset_and_errors(void **state)
{
    (void)state;
    pgw_params_t *ps = pgw_params_new(2);
    assert_int_equal(pgw_params_count(ps), 2);
    assert_int_equal(pgw_params_array(ps)[0].kind, PGW_PARAM_NULL);
    assert_int_equal(pgw_params_set_text(ps, 0, "first"), 0);
    assert_int_equal(pgw_params_set_jsonb(ps, 0, "{}"), 0);
    assert_int_equal(pgw_params_set_int4(ps, 0, 1), 0);
    assert_int_equal(pgw_params_set_text(ps, 1, "kept"), 0);
    assert_int_equal(pgw_params_set_text(ps, 2, "out"), PGW_EINDEX);
    assert_string_equal(pgw_params_array(ps)[1].u.bytes.p, "kept");
    assert_int_equal(pgw_params_set_numeric(ps, 1, NULL), 0);
    pgw_params_free(ps);

    pgw_params_t *empty = pgw_params_new(0);
    assert_non_null(empty);
    assert_null(pgw_params_array(empty));
    assert_int_equal(pgw_params_set_int4(empty, 0, 1), PGW_EINDEX);
    pgw_params_free(empty);
    assert_null(pgw_params_new(PGW_MAX_PARAMS + 1));
    assert_int_equal(pgw_params_count(NULL), 0);
    pgw_params_free(NULL);
}

/* Rows and values read through functions, and request members by name. */
static void test_rows_values_and_members(void **state)
{
    (void)state;
    uint8_t bytes[2] = {1, 2};
    pgw_value_t values[1] = {{bytes, 2, PGW_FORMAT_BINARY, PGW_OID_BYTEA}};
    pgw_row_t row = {1, values, NULL, 7};
    assert_int_equal(pgw_row_ncols(&row), 1);
    assert_int_equal(pgw_row_index(&row), 7);
    assert_ptr_equal(pgw_row_value(&row, 0), &values[0]);
    assert_null(pgw_row_value(&row, 1));
    assert_null(pgw_row_field(&row, 0)); /* a row without descriptions */
    int32_t len = 0;
    assert_ptr_equal(pgw_value_data(&values[0], &len), bytes);
    assert_int_equal(len, 2);
    assert_int_equal(pgw_value_oid(&values[0]), PGW_OID_BYTEA);
    assert_int_equal(pgw_value_format(&values[0]), PGW_FORMAT_BINARY);
    assert_null(pgw_value_data(NULL, &len));
    assert_int_equal(len, -1);
    assert_int_equal(pgw_value_format(NULL), -1);

    pgw_request_t *r = pgw_request_new(PGW_REQ_FETCH);
    uint64_t v = 0;
    assert_int_equal(r->size, sizeof *r);
    assert_int_equal(pgw_request_get_uint(r, "kind", &v), 0);
    assert_int_equal(v, PGW_REQ_FETCH);
    assert_int_equal(pgw_request_set_uint(r, "max_rows", 10), 0);
    assert_int_equal(r->max_rows, 10);
    assert_int_equal(pgw_request_set_ptr(r, "portal", "p1"), 0);
    assert_string_equal(r->portal, "p1");
    assert_int_equal(pgw_request_set_uint(r, "timeout_ms", UINT32_MAX), 0);
    assert_int_equal(r->timeout_ms, PGW_TIMEOUT_NONE);
    assert_int_equal(pgw_request_set_uint(r, "timeout_ms", UINT64_C(1) << 32), PGW_ERANGE);
    assert_int_equal(r->timeout_ms, PGW_TIMEOUT_NONE);
    assert_int_equal(pgw_request_set_fn(r, "on_row", NULL), 0);
    assert_int_equal(pgw_request_set_fn(r, "sql", NULL), PGW_ETYPE);
    assert_int_equal(pgw_request_get_uint(r, "kind", NULL), PGW_EINVAL);
    assert_int_equal(pgw_request_set_params(r, NULL), 0);
    assert_null(r->params);
    pgw_request_free(r);

    /* A configuration from *_new is its *_config_init's. */
    pgw_pool_config_t *pc = pgw_pool_config_new(), init;
    pgw_pool_config_init(&init);
    assert_memory_equal(pc, &init, sizeof init);
    assert_int_equal(pgw_pool_config_set_ptr(pc, "conn.ud", &init), 0);
    assert_ptr_equal(pc->conn.ud, &init);
    pgw_pool_config_free(pc);
    pgw_listener_config_t *lc = pgw_listener_config_new();
    assert_int_equal(pgw_listener_config_set_uint(lc, "backoff_max_ms", 9), 0);
    assert_int_equal(lc->backoff_max_ms, 9);
    pgw_listener_config_free(lc);
    pgw_session_config_t *sc = pgw_session_config_new();
    assert_int_equal(pgw_session_config_set_uint(sc, "results_any_thread", 1), 0);
    assert_int_equal(pgw_session_config_get_uint(sc, "results_any_thread", &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(sc->results_any_thread, 1);
    pgw_session_config_free(sc);
}

/* A blocking client connected to the test server in *c, and the buffered
 * result of sql run there (the request is freed once the run returns). */
static pgw_result_t *connect_and_query(pgw_client_t **c, const char *sql)
{
    char ci[512];
    pgt_require_server();
    assert_int_equal(pgw_client_connect(c, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    pgw_request_t *q = pgw_request_new(PGW_REQ_QUERY);
    assert_int_equal(pgw_request_set_ptr(q, "sql", sql), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_run(*c, q, &res), 0);
    pgw_request_free(q);
    return res;
}

/* A buffered result's cells, a connection string's hosts and an encoder's
 * buffer, each read without the struct's layout. */
static void test_cells_hosts_and_buffers(void **state)
{
    (void)state;
    pgw_client_t *c = NULL;
    pgw_result_t *res = connect_and_query(&c, "SELECT '\\x0102'::bytea, NULL::int4, ''::text");
    int32_t len = 0;
    const uint8_t *p = pgw_result_cell(res, 0, 0, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(p, "\x01\x02", 2);
    assert_null(pgw_result_cell(res, 0, 1, &len)); /* SQL NULL */
    assert_int_equal(len, -1);
    len = -5;
    pgw_result_cell(res, 0, 2, &len); /* empty, not NULL */
    assert_int_equal(len, 0);
    assert_null(pgw_result_cell(res, 1, 0, &len)); /* out of range */
    assert_int_equal(len, -1);
    assert_null(pgw_result_cell(NULL, 0, 0, NULL));
    pgw_result_free(res);
    pgw_client_close(c);

    pgw_conninfo_t *info = NULL;
    char err[256];
    assert_int_equal(pgw_conninfo_parse(&info, "host=db.example,/tmp hostaddr=192.0.2.1, port=6543",
                                        NULL, err, sizeof err),
                     0);
    pgw_host_t *h = pgw_host_new();
    assert_int_equal(pgw_conninfo_host(info, 0, h), 0);
    assert_string_equal(pgw_host_name(h), "db.example");
    assert_string_equal(pgw_host_addr(h), "192.0.2.1");
    assert_int_equal(pgw_host_port(h), 6543);
    assert_string_equal(pgw_host_port_text(h), "6543");
    assert_int_equal(pgw_host_is_unix(h), 0);
    assert_null(pgw_host_error(h));
    assert_int_equal(pgw_host_error_ends_connect(h), 0);
    assert_int_equal(pgw_conninfo_host(info, 1, h), 0);
    assert_int_equal(pgw_host_is_unix(h), 1);
    assert_string_equal(pgw_host_name(h), "/tmp");
    pgw_host_free(h);
    pgw_conninfo_free(info);
    assert_null(pgw_host_name(NULL));
    assert_int_equal(pgw_host_port(NULL), 0);
    pgw_host_free(NULL);

    pgw_buf_t *b = pgw_buf_new();
    size_t n = 9;
    assert_null(pgw_buf_data(b, &n));
    assert_int_equal(n, 0);
    assert_int_equal(pgw_enc_ssl_request(b), 0);
    const uint8_t ssl_request[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    assert_memory_equal(pgw_buf_data(b, &n), ssl_request, 8);
    assert_int_equal(n, 8);
    pgw_buf_delete(b);
    pgw_buf_delete(NULL);
}

/* A row range's cells in one call: column by column, each as
 * pgw_result_cell reads it, SQL NULL -1 and taking no byte; a buffer too
 * small is told with the size it needs and left untouched. */
static void test_cells_of_a_row_range(void **state)
{
    (void)state;
    pgw_client_t *c = NULL;
    pgw_result_t *res = connect_and_query(&c, "SELECT i::text, CASE WHEN i = 2 THEN NULL ELSE "
                                              "repeat('x', i) END, ''::text "
                                              "FROM generate_series(1, 3) i");
    assert_int_equal(pgw_result_ncols(res), 3);

    int32_t lens[9];
    uint8_t buf[16];
    size_t needed = 99;
    memset(buf, '#', sizeof buf);
    assert_int_equal(pgw_result_cells(res, 1, 2, lens, buf, 4, &needed), PGW_ERANGE);
    assert_int_equal(needed, 5);
    const int32_t range_lens[6] = {1, 1, -1, 3, 0, 0};
    assert_memory_equal(lens, range_lens, sizeof range_lens);
    assert_int_equal(buf[0], '#'); /* untouched */
    assert_int_equal(pgw_result_cells(res, 1, 2, lens, buf, sizeof buf, &needed), 0);
    assert_int_equal(needed, 5);
    assert_memory_equal(lens, range_lens, sizeof range_lens);
    assert_memory_equal(buf, "23xxx", 5);
    assert_int_equal(buf[5], '#');

    /* The whole result agrees with pgw_result_cell cell by cell. */
    assert_int_equal(pgw_result_cells(res, 0, 3, lens, buf, sizeof buf, &needed), 0);
    size_t at = 0;
    for (size_t col = 0; col < 3; col++) {
        for (size_t row = 0; row < 3; row++) {
            int32_t len;
            const uint8_t *p = pgw_result_cell(res, row, col, &len);
            assert_int_equal(lens[col * 3 + row], len);
            if (len > 0) assert_memory_equal(buf + at, p, (size_t)len);
            at += len > 0 ? (size_t)len : 0;
        }
    }
    assert_int_equal(needed, at);

    assert_int_equal(pgw_result_cells(res, 3, 0, NULL, NULL, 0, &needed), 0); /* no rows */
    assert_int_equal(needed, 0);
    assert_int_equal(pgw_result_cells(res, 2, 2, lens, buf, sizeof buf, &needed), PGW_EINDEX);
    assert_int_equal(pgw_result_cells(res, 4, 0, lens, buf, sizeof buf, NULL), PGW_EINDEX);
    assert_int_equal(pgw_result_cells(res, 0, 1, NULL, buf, sizeof buf, NULL), PGW_EINVAL);
    assert_int_equal(pgw_result_cells(NULL, 0, 0, lens, buf, sizeof buf, NULL), PGW_EINVAL);
    assert_int_equal(pgw_result_cells(res, 0, 1, lens, NULL, 0, &needed), PGW_ERANGE);
    assert_int_equal(needed, 1 + 1 + 0);
    pgw_result_free(res);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setters_send_what_constructors_send),
        cmocka_unit_test(test_batch_and_field_descriptions),
        cmocka_unit_test(test_reset_and_errors),
        cmocka_unit_test(test_rows_values_and_members),
        cmocka_unit_test(test_cells_hosts_and_buffers),
        cmocka_unit_test(test_cells_of_a_row_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
