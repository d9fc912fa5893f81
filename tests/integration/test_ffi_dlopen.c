/*
 * libpgwire as a binding sees it: loaded with dlopen, every function found
 * with dlsym, and a parameterised query run against the real server through
 * the blocking client with opaque pointers only.
 *
 * This file includes no libpgwire header on purpose: like a ctypes or cgo
 * binding it knows function prototypes and constant values, never a struct
 * layout (a direct call of a pgw_ function would not compile). The names
 * every header declares come from tests/abi/check-exports.py --names, the
 * scan unit/exports uses, so a function a header adds is looked up here too.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Constant values, as a binding copies them from the headers. */
enum { REQ_QUERY = 1, REQ_SIMPLE = 2 }; /* pgw_request_kind_t */
enum { OID_INT4 = 23 };

typedef void (*fn_t)(void);

/* The functions this test calls: return type, name, parameters. */
#define FFI_FUNCTIONS(X)                                                                   \
    X(const char *, pgw_err_name, (int))                                                   \
    X(void *, pgw_conn_config_new, (void))                                                 \
    X(void, pgw_conn_config_free, (void *))                                                \
    X(int, pgw_conn_config_set_fn, (void *, const char *, fn_t))                           \
    X(int, pgw_conn_config_set_ptr, (void *, const char *, const void *))                  \
    X(int, pgw_conn_config_set_uint, (void *, const char *, uint64_t))                     \
    X(int, pgw_conn_config_get_uint, (const void *, const char *, uint64_t *))             \
    X(void *, pgw_session_config_new, (void))                                              \
    X(void, pgw_session_config_free, (void *))                                             \
    X(int, pgw_session_config_set_uint, (void *, const char *, uint64_t))                  \
    X(int, pgw_session_config_set_ptr, (void *, const char *, const void *))               \
    X(int, pgw_session_config_get_ptr, (const void *, const char *, const void **))        \
    X(int, pgw_session_config_set_fn, (void *, const char *, fn_t))                        \
    X(void *, pgw_pool_config_new, (void))                                                 \
    X(void, pgw_pool_config_free, (void *))                                                \
    X(int, pgw_pool_config_set_uint, (void *, const char *, uint64_t))                     \
    X(int, pgw_pool_config_get_uint, (const void *, const char *, uint64_t *))             \
    X(int, pgw_client_connect_err, (void **, const char *, const void *, char *, size_t))  \
    X(void, pgw_client_close, (void *))                                                    \
    X(int, pgw_client_run, (void *, const void *, void **))                                \
    X(void *, pgw_params_new, (size_t))                                                    \
    X(void, pgw_params_free, (void *))                                                     \
    X(size_t, pgw_params_count, (const void *))                                            \
    X(int, pgw_params_set_int4, (void *, size_t, int32_t))                                 \
    X(int, pgw_params_set_text, (void *, size_t, const char *))                            \
    X(int, pgw_params_set_bytea, (void *, size_t, const void *, int32_t))                  \
    X(int, pgw_params_set_null, (void *, size_t, uint32_t))                                \
    X(int, pgw_params_set_numeric_str, (void *, size_t, const char *))                     \
    X(void *, pgw_request_new, (int))                                                      \
    X(void, pgw_request_free, (void *))                                                    \
    X(int, pgw_request_set_ptr, (void *, const char *, const void *))                      \
    X(int, pgw_request_set_fn, (void *, const char *, fn_t))                               \
    X(int, pgw_request_set_params, (void *, const void *))                                 \
    X(int, pgw_request_get_uint, (const void *, const char *, uint64_t *))                 \
    X(size_t, pgw_result_nrows, (const void *))                                            \
    X(size_t, pgw_result_ncols, (const void *))                                            \
    X(int, pgw_result_value_cstr, (const void *, size_t, size_t, const char **, size_t *)) \
    X(int, pgw_result_isnull, (const void *, size_t, size_t))                              \
    X(const char *, pgw_result_command_tag, (const void *))                                \
    X(const void *, pgw_result_error, (const void *))                                      \
    X(const char *, pgw_error_field, (const void *, char))                                 \
    X(void, pgw_result_free, (void *))                                                     \
    X(size_t, pgw_row_ncols, (const void *))                                               \
    X(const void *, pgw_row_value, (const void *, size_t))                                 \
    X(uint32_t, pgw_value_oid, (const void *))                                             \
    X(const uint8_t *, pgw_value_data, (const void *, int32_t *))                          \
    X(int, pgw_get_int4, (const void *, int32_t *))                                        \
    X(const void *, pgw_row_field, (const void *, size_t))                                 \
    X(const char *, pgw_field_name, (const void *, size_t *))                              \
    X(int, pgw_client_listen, (void *, const char *))                                      \
    X(int, pgw_client_wait_notification, (void *, int, void *))                            \
    X(void *, pgw_notification_new, (void))                                                \
    X(void, pgw_notification_free, (void *))                                               \
    X(int32_t, pgw_notification_pid, (const void *))                                       \
    X(const char *, pgw_notification_channel, (const void *, size_t *))                    \
    X(const char *, pgw_notification_payload, (const void *, size_t *))                    \
    X(int32_t, pgw_client_backend_pid, (void *))

#define DECLARE(ret, name, params) ret(*name) params;
static struct {
    FFI_FUNCTIONS(DECLARE)
} f;

static void *lib;

static int load_library(void **state)
{
    (void)state;
    lib = dlopen(PGW_FFI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", PGW_FFI_LIBRARY, dlerror());
        return -1;
    }
#define LOAD(ret, name, params)                              \
    if (!(*(void **)&f.name = dlsym(lib, #name))) {          \
        fprintf(stderr, "dlsym %s: %s\n", #name, dlerror()); \
        return -1;                                           \
    }
    FFI_FUNCTIONS(LOAD)
    return 0;
}

static int unload_library(void **state)
{
    (void)state;
    return lib ? dlclose(lib) : 0;
}

/* Every function a header declares or defines inline is found by dlsym. */
static void test_every_declared_function_is_found(void **state)
{
    (void)state;
    FILE *names = popen(PGW_FFI_NAMES_COMMAND, "r");
    assert_non_null(names);
    char name[256];
    int found = 0, missing = 0, params_setters = 0;
    while (fgets(name, sizeof name, names)) {
        name[strcspn(name, "\n")] = '\0';
        if (!dlsym(lib, name)) {
            fprintf(stderr, "missing: %s\n", name);
            missing++;
        } else {
            found++;
        }
        if (strncmp(name, "pgw_params_set_", 15) == 0) params_setters++;
    }
    assert_int_equal(pclose(names), 0);
    assert_int_equal(missing, 0);
    /* The scan found the headers' declarations, the binding surface among
     * them (one setter per parameter constructor of types.h). */
    assert_true(found > 500);
    assert_int_equal(params_setters, 28);
}

static const char *err_name(int rc)
{
    return f.pgw_err_name(rc);
}

static void on_notice(void *conn, const void *notice, void *ud)
{
    (void)conn;
    snprintf(ud, 64, "%s", f.pgw_error_field(notice, 'M'));
}

static void *connect_with(const void *cfg)
{
    char ci[512], err[256];
    void *c = NULL;
    pgt_require_server();
    int rc = f.pgw_client_connect_err(&c, pgt_conninfo(ci, sizeof ci, NULL), cfg, err, sizeof err);
    if (rc != 0) fail_msg("connect: %s: %s", err_name(rc), err);
    return c;
}

static const char *cell(const void *res, size_t row, size_t col)
{
    const char *s = NULL;
    assert_int_equal(f.pgw_result_value_cstr(res, row, col, &s, NULL), 0);
    return s;
}

/* Parameters of several types, one from a buffer reused at once. */
static void test_parameterised_query(void **state)
{
    (void)state;
    void *c = connect_with(NULL);
    void *ps = f.pgw_params_new(5);
    assert_int_equal(f.pgw_params_count(ps), 5);
    char text[16];
    snprintf(text, sizeof text, "h%sllo", "\xc3\xa9");
    assert_int_equal(f.pgw_params_set_int4(ps, 0, 41), 0);
    assert_int_equal(f.pgw_params_set_text(ps, 1, text), 0);
    memset(text, 'x', sizeof text - 1); /* the list kept its own copy */
    assert_int_equal(f.pgw_params_set_bytea(ps, 2, "\x00\x01\xff", 3), 0);
    assert_int_equal(f.pgw_params_set_null(ps, 3, OID_INT4), 0);
    assert_int_equal(f.pgw_params_set_numeric_str(ps, 4, "2.50"), 0);

    void *q = f.pgw_request_new(REQ_QUERY);
    assert_int_equal(
        f.pgw_request_set_ptr(q, "sql",
                              "SELECT $1::int4 + 1 AS n, $2::text AS t, $3::bytea AS b,"
                              " $4::int4 IS NULL AS isnull, $5::numeric * 2 AS num"),
        0);
    assert_int_equal(f.pgw_request_set_params(q, ps), 0);
    uint64_t nparams = 0;
    assert_int_equal(f.pgw_request_get_uint(q, "nparams", &nparams), 0);
    assert_int_equal(nparams, 5);

    void *res = NULL;
    int rc = f.pgw_client_run(c, q, &res);
    assert_string_equal(err_name(rc), "OK");
    assert_int_equal(f.pgw_result_nrows(res), 1);
    assert_int_equal(f.pgw_result_ncols(res), 5);
    assert_string_equal(cell(res, 0, 0), "42");
    assert_string_equal(cell(res, 0, 1), "h\xc3\xa9llo");
    assert_string_equal(cell(res, 0, 2), "\\x0001ff");
    assert_string_equal(cell(res, 0, 3), "t");
    assert_string_equal(cell(res, 0, 4), "5.00");
    assert_string_equal(f.pgw_result_command_tag(res), "SELECT 1");
    f.pgw_result_free(res);
    f.pgw_request_free(q);
    f.pgw_params_free(ps);
    f.pgw_client_close(c);
}

/* A server error's fields, by protocol code. */
static void test_server_error_fields(void **state)
{
    (void)state;
    void *c = connect_with(NULL);
    void *ps = f.pgw_params_new(1);
    assert_int_equal(f.pgw_params_set_int4(ps, 0, 0), 0);
    void *q = f.pgw_request_new(REQ_QUERY);
    assert_int_equal(f.pgw_request_set_ptr(q, "sql", "SELECT 1 / $1::int4"), 0);
    assert_int_equal(f.pgw_request_set_params(q, ps), 0);
    void *res = NULL;
    assert_string_equal(err_name(f.pgw_client_run(c, q, &res)), "ESERVER");
    const void *err = f.pgw_result_error(res);
    assert_non_null(err);
    assert_string_equal(f.pgw_error_field(err, 'C'), "22012");
    assert_string_equal(f.pgw_error_field(err, 'M'), "division by zero");
    assert_string_equal(f.pgw_error_field(err, 'S'), "ERROR");
    f.pgw_result_free(res);
    f.pgw_request_free(q);
    f.pgw_params_free(ps);
    f.pgw_client_close(c);
}

struct rows {
    int32_t sum;
    int count;
};

static int on_row(const void *row, void *ud)
{
    struct rows *r = ud;
    int32_t v = 0;
    const void *value = f.pgw_row_value(row, 0);
    if (f.pgw_row_ncols(row) != 1 || f.pgw_value_oid(value) != OID_INT4) return -1;
    if (f.pgw_row_value(row, 1) != NULL) return -1;
    if (f.pgw_get_int4(value, &v) != 0) return -1;
    size_t len = 0;
    const char *name = f.pgw_field_name(f.pgw_row_field(row, 0), &len);
    if (len != 1 || !name || name[0] != 'g') return -1;
    r->sum += v;
    r->count++;
    return 0;
}

/* Rows streamed to a callback, read through pgw_row_value; a notice
 * through the connection configuration's on_notice. */
static void test_streamed_rows_and_notice(void **state)
{
    (void)state;
    char notice[64] = "";
    void *cfg = f.pgw_conn_config_new();
    assert_non_null(cfg);
    assert_int_equal(f.pgw_conn_config_set_fn(cfg, "on_notice", (fn_t)on_notice), 0);
    assert_int_equal(f.pgw_conn_config_set_ptr(cfg, "ud", notice), 0);
    void *c = connect_with(cfg);
    f.pgw_conn_config_free(cfg); /* the client copied it */

    struct rows rows = {0, 0};
    void *ps = f.pgw_params_new(1);
    assert_int_equal(f.pgw_params_set_int4(ps, 0, 2), 0);
    void *q = f.pgw_request_new(REQ_QUERY);
    assert_int_equal(
        f.pgw_request_set_ptr(q, "sql", "SELECT g::int4 FROM generate_series(1, 5) g WHERE g > $1"),
        0);
    assert_int_equal(f.pgw_request_set_params(q, ps), 0);
    assert_int_equal(f.pgw_request_set_fn(q, "on_row", (fn_t)on_row), 0);
    assert_int_equal(f.pgw_request_set_ptr(q, "ud", &rows), 0);
    void *res = NULL;
    assert_string_equal(err_name(f.pgw_client_run(c, q, &res)), "OK");
    assert_int_equal(rows.count, 3);
    assert_int_equal(rows.sum, 12);
    assert_int_equal(f.pgw_result_nrows(res), 0); /* streamed, not kept */
    assert_string_equal(f.pgw_result_command_tag(res), "SELECT 3");
    f.pgw_result_free(res);
    f.pgw_request_free(q);

    void *simple = f.pgw_request_new(REQ_SIMPLE);
    assert_int_equal(
        f.pgw_request_set_ptr(simple, "sql", "DO $$ BEGIN RAISE NOTICE 'ffi %', 7; END $$"), 0);
    assert_string_equal(err_name(f.pgw_client_run(c, simple, NULL)), "OK");
    assert_string_equal(notice, "ffi 7");
    f.pgw_request_free(simple);
    f.pgw_params_free(ps);
    f.pgw_client_close(c);
}

/* LISTEN / NOTIFY, the notification read through functions. */
static void test_notification(void **state)
{
    (void)state;
    void *c = connect_with(NULL);
    assert_string_equal(err_name(f.pgw_client_listen(c, "ffi_chan")), "OK");
    void *q = f.pgw_request_new(REQ_SIMPLE);
    assert_int_equal(f.pgw_request_set_ptr(q, "sql", "NOTIFY ffi_chan, 'hello'"), 0);
    assert_string_equal(err_name(f.pgw_client_run(c, q, NULL)), "OK");
    void *n = f.pgw_notification_new();
    assert_non_null(n);
    /* It was sent before the NOTIFY's reply: already here, the bound is
     * only there so that a failure cannot hang. */
    assert_string_equal(err_name(f.pgw_client_wait_notification(c, 60000, n)), "OK");
    size_t len = 0;
    assert_string_equal(f.pgw_notification_channel(n, &len), "ffi_chan");
    assert_int_equal(len, 8);
    assert_string_equal(f.pgw_notification_payload(n, NULL), "hello");
    assert_int_equal(f.pgw_notification_pid(n), f.pgw_client_backend_pid(c));
    f.pgw_notification_free(n);
    f.pgw_request_free(q);
    f.pgw_client_close(c);
}

/* Bad member names, kinds and values get an error, never a write. */
static void test_member_errors(void **state)
{
    (void)state;
    void *s = f.pgw_session_config_new();
    assert_non_null(s);
    assert_string_equal(err_name(f.pgw_session_config_set_uint(s, "no_such", 1)), "ENOTFOUND");
    assert_string_equal(err_name(f.pgw_session_config_set_uint(s, "size", 1)), "ENOTFOUND");
    assert_string_equal(err_name(f.pgw_session_config_set_uint(s, "password", 1)), "ETYPE");
    assert_string_equal(err_name(f.pgw_session_config_set_ptr(s, "cb.on_startup", s)), "ETYPE");
    assert_string_equal(err_name(f.pgw_session_config_set_fn(s, "cb.on_startup", NULL)), "OK");
    /* uint32_t and int members refuse what does not fit. */
    assert_string_equal(err_name(f.pgw_session_config_set_uint(s, "max_message_size", 1ull << 32)),
                        "ERANGE");
    assert_string_equal(
        err_name(f.pgw_session_config_set_uint(s, "results_any_thread", 1ull << 31)), "ERANGE");
    assert_string_equal(err_name(f.pgw_session_config_set_uint(s, "output_high_water", UINT64_MAX)),
                        "OK");
    assert_string_equal(err_name(f.pgw_session_config_set_ptr(s, NULL, s)), "EINVAL");
    assert_string_equal(err_name(f.pgw_session_config_set_ptr(NULL, "ud", s)), "EINVAL");
    const void *p = NULL;
    assert_string_equal(err_name(f.pgw_session_config_set_ptr(s, "password", "pw")), "OK");
    assert_string_equal(err_name(f.pgw_session_config_get_ptr(s, "password", &p)), "OK");
    assert_string_equal(p, "pw");
    f.pgw_session_config_free(s);

    /* The pool's conn members, by "conn." and the member's name. */
    void *pool = f.pgw_pool_config_new();
    uint64_t v = 0;
    assert_string_equal(err_name(f.pgw_pool_config_set_uint(pool, "conn.request_timeout_ms", 250)),
                        "OK");
    assert_string_equal(err_name(f.pgw_pool_config_get_uint(pool, "conn.request_timeout_ms", &v)),
                        "OK");
    assert_int_equal(v, 250);
    assert_string_equal(err_name(f.pgw_pool_config_set_uint(pool, "max_size", 3)), "OK");
    assert_string_equal(err_name(f.pgw_pool_config_get_uint(pool, "max_size", &v)), "OK");
    assert_int_equal(v, 3);
    assert_string_equal(err_name(f.pgw_pool_config_get_uint(pool, "conn.no_such", &v)),
                        "ENOTFOUND");
    f.pgw_pool_config_free(pool);

    void *ps = f.pgw_params_new(2);
    assert_string_equal(err_name(f.pgw_params_set_int4(ps, 2, 1)), "EINDEX");
    assert_string_equal(err_name(f.pgw_params_set_int4(NULL, 0, 1)), "EINVAL");
    f.pgw_params_free(ps);
    assert_null(f.pgw_params_new(65536));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_declared_function_is_found),
        cmocka_unit_test(test_parameterised_query),
        cmocka_unit_test(test_server_error_fields),
        cmocka_unit_test(test_streamed_rows_and_notice),
        cmocka_unit_test(test_notification),
        cmocka_unit_test(test_member_errors),
    };
    return cmocka_run_group_tests(tests, load_library, unload_library);
}
