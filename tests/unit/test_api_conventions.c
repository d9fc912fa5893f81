/*
 * Conventions every layer shares: the one error-code space (names,
 * messages and the fatal flag from PGW_ERRNO_MAP, libuv's codes passed
 * through and named), and versioned config structs (a caller built against
 * an older, shorter struct: the options past its size read as defaults).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/conn.h"
#include "pgwire/session.h"

static void test_error_table(void **state)
{
    (void)state;
    static const struct {
        int code, fatal;
        const char *name, *msg;
    } codes[] = {
#define ENTRY(name, value, fatal, msg) {value, fatal, #name, msg},
        PGW_ERRNO_MAP(ENTRY)
#undef ENTRY
    };
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i].code <= -1000 && codes[i].code > -2000);
        assert_string_equal(pgw_err_name(codes[i].code), codes[i].name);
        assert_string_equal(pgw_strerror(codes[i].code), codes[i].msg);
        assert_int_equal(pgw_is_fatal(codes[i].code) != 0, codes[i].fatal != 0);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(codes[i].code, codes[j].code);
            assert_string_not_equal(codes[i].name, codes[j].name);
        }
    }
    assert_string_equal(pgw_err_name(0), "OK");
    assert_string_equal(pgw_err_name(-1999), "UNKNOWN");
    assert_string_equal(pgw_strerror(-1999), "unknown error");
}

/* libuv hands errno values through negated (UV_ECONNREFUSED is
 * -ECONNREFUSED on Unix): named and described like errno. */
static void test_passed_through_codes(void **state)
{
    (void)state;
    assert_string_equal(pgw_err_name(-ECONNREFUSED), "ECONNREFUSED");
    assert_string_equal(pgw_err_name(-ENOENT), "ENOENT");
    assert_string_equal(pgw_strerror(-ECONNREFUSED), strerror(ECONNREFUSED));
}

static void test_config_init(void **state)
{
    (void)state;
    pgw_session_config_t sc;
    memset(&sc, 0xab, sizeof sc);
    pgw_session_config_init(&sc);
    assert_int_equal(sc.size, sizeof sc);
    assert_null(sc.alloc);
    assert_null(sc.startup_params);
    assert_int_equal(sc.max_message_size, 0);
    pgw_conn_config_t cc;
    memset(&cc, 0xab, sizeof cc);
    pgw_conn_config_init(&cc);
    assert_int_equal(cc.size, sizeof cc);
    assert_int_equal(cc.chunk_cache_bytes, 0);
    assert_null(cc.on_lost);
    pgw_session_config_init(NULL); /* no crash */
    pgw_conn_config_init(NULL);
}

/* A session config from a caller whose struct ends before the callbacks:
 * the bytes after its size (here 0xab garbage, which as pointers would
 * crash) are not read, so the callbacks are NULL and the session works. */
static void test_config_older_caller(void **state)
{
    (void)state;
    union {
        pgw_session_config_t c;
        unsigned char bytes[sizeof(pgw_session_config_t)];
    } u;
    memset(u.bytes, 0xab, sizeof u.bytes);
    static const char *const params[] = {"user", "alice"};
    size_t old_size = offsetof(pgw_session_config_t, cb);
    pgw_session_config_t full;
    pgw_session_config_init(&full);
    full.size = old_size;
    full.startup_params = params;
    full.nstartup_params = 1;
    memcpy(u.bytes, &full, old_size);
    pgw_session_t *s = NULL;
    assert_int_equal(pgw_session_new(&s, &u.c), 0);
    assert_null(pgw_session_userdata(s));
    assert_int_equal(pgw_session_start(s), 0);
    size_t n = 0;
    assert_non_null(pgw_session_pending_output(s, &n));
    assert_true(n > 0);
    pgw_session_free(s);

    /* A zeroed struct (size 0) is this header's size. */
    pgw_session_config_t z;
    memset(&z, 0, sizeof z);
    z.startup_params = params;
    z.nstartup_params = 1;
    assert_int_equal(pgw_session_new(&s, &z), 0);
    pgw_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_table),
        cmocka_unit_test(test_passed_through_codes),
        cmocka_unit_test(test_config_init),
        cmocka_unit_test(test_config_older_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
