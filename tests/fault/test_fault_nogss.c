/*
 * A library built without GSSAPI (cmake -DPGW_GSSAPI=OFF, or no
 * krb5-gssapi at configure time) behaves as libpq built without it
 * (fe-connect.c, fe-auth.c under !ENABLE_GSS): gssencmode defaults to
 * disable, gssencmode=require is refused before any socket is opened, and
 * a server asking for GSSAPI authentication gets "GSSAPI authentication
 * not supported". In a build with GSSAPI the first test checks the other
 * side (prefer by default, require accepted) and the server test is
 * skipped: tests/integration/test_gss_libpq.c covers it against a realm.
 */
#define _POSIX_C_SOURCE 200809L
#include "fakepg.h"

#include "auth/gss.h"
#include "pgwire/client.h"
#include "pgwire/conninfo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_gssencmode(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = NULL;
    assert_int_equal(pgw_conninfo_parse(&ci, "host=127.0.0.1", NULL, NULL, 0), 0);
    assert_string_equal(pgw_conninfo_get(ci, "gssencmode"),
                        pgw__gss_available() ? "prefer" : "disable");
    pgw_conninfo_free(ci);

    /* Port 1 on loopback: nothing listens, so a build with GSSAPI fails to
     * connect, and one without fails before trying. */
    pgw_client_t *c = NULL;
    char err[512] = "";
    int rc = pgw_client_connect_err(&c, "host=127.0.0.1 port=1 gssencmode=require", NULL, err,
                                    sizeof err);
    assert_null(c);
    if (pgw__gss_available()) {
        assert_int_not_equal(rc, PGW_ENOTSUP);
        assert_null(strstr(err, "not compiled in"));
    } else {
        assert_int_equal(rc, PGW_ENOTSUP);
        if (!strstr(err, "gssencmode value \"require\" invalid when GSSAPI support is not "
                         "compiled in"))
            fail_msg("unexpected message: %s", err);
    }
}

static void test_gss_auth_refused(void **state)
{
    (void)state;
    if (pgw__gss_available()) skip();
    pgw_buf_t ask = {0};
    pgt_msg_auth(&ask, 7, NULL, 0); /* AuthenticationGSS */
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, ask.data, ask.len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    char ci[256], err[512] = "";
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable",
             (unsigned)fakepg_port(f));
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect_err(&c, ci, NULL, err, sizeof err), PGW_ENOTSUP);
    assert_null(c);
    if (!strstr(err, "GSSAPI authentication not supported"))
        fail_msg("unexpected message: %s", err);
    if (fakepg_wait(f) != 0) fail_msg("%s", fakepg_error(f));
    /* the default gssencmode (disable here) sent no GSSENCRequest first */
    assert_int_equal(fakepg_startup_version(f), 196608);
    fakepg_free(f);
    pgw_buf_free(&ask);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gssencmode),
        cmocka_unit_test(test_gss_auth_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
