/*
 * The read-only conninfo narrowed to the hosts that may be a standby within
 * the lag limits (src/pool/route.c), without a server: a pool's host
 * entries set by hand, the narrowed string parsed back with
 * pgw_conninfo_parse. Covers the keyword and URI forms, hostaddr and per-host
 * ports, a value that needs quoting, when nothing is narrowed (nothing
 * behind, the primary not known yet, no host left) and standby_left.
 */
#define _DEFAULT_SOURCE
#include "pool/driver_internal.h"

#include <pgwire/conninfo.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static pgw_pool_t *pool_with(const char *conninfo)
{
    pgw_pool_t *p = calloc(1, sizeof *p);
    assert_non_null(p);
    pgw_pool_config_init(&p->cfg);
    p->cfg.route = 1;
    p->cfg.max_standby_lag_bytes = 1024;
    p->conninfo = strdup(conninfo);
    assert_int_equal(pgw__route_conninfo(p), 0);
    assert_non_null(p->ci_hosts);
    p->hosts = calloc(8, sizeof *p->hosts);
    assert_non_null(p->hosts);
    return p;
}

static void pool_free(pgw_pool_t *p)
{
    for (int i = 0; i < PGW__NROLES; i++)
        free(p->ci_role[i]);
    pgw_conninfo_free(p->ci_hosts);
    free(p->conninfo);
    free(p->hosts);
    free(p);
}

/* A host entry as hosts.c makes it; behind: measured behind (read-only). */
static void entry(pgw_pool_t *p, const char *host, const char *port, uint8_t role, int behind)
{
    phost_t *e = &p->hosts[p->nhosts++];
    memset(e, 0, sizeof *e);
    snprintf(e->host, sizeof e->host, "%s", host);
    snprintf(e->port, sizeof e->port, "%s", port);
    e->role = role;
    e->lag_checks = 1;
    e->behind = (uint8_t)behind;
}

/* The narrowed conninfo's hosts as "host/hostaddr:port,..." (hostaddr
 * "-" when none), and its target_session_attrs. */
static void hosts_of(const char *ci, char *out, size_t n, char *attrs, size_t na)
{
    pgw_conninfo_t *c = NULL;
    char err[256];
    assert_int_equal(pgw_conninfo_parse(&c, ci, NULL, err, sizeof err), 0);
    out[0] = '\0';
    for (size_t i = 0; i < pgw_conninfo_nhosts(c); i++) {
        pgw_host_t h;
        assert_int_equal(pgw_conninfo_host(c, i, &h), 0);
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s/%s:%u", i ? "," : "", h.host,
                 h.hostaddr && h.hostaddr[0] ? h.hostaddr : "-", h.port);
    }
    const char *tsa = pgw_conninfo_get(c, "target_session_attrs");
    snprintf(attrs, na, "%s", tsa ? tsa : "");
    pgw_conninfo_free(c);
}

/* The narrowed conninfo of p names exactly the hosts want (hosts_of's
 * form) and still asks prefer-standby. */
static void expect_narrowed(pgw_pool_t *p, const char *want)
{
    char *ci = pgw__route_ro_conninfo(p);
    assert_non_null(ci);
    char hosts[256], attrs[64];
    hosts_of(ci, hosts, sizeof hosts, attrs, sizeof attrs);
    assert_string_equal(hosts, want);
    assert_string_equal(attrs, "prefer-standby");
    free(ci);
}

static void test_keyword_form(void **state)
{
    (void)state;
    pgw_pool_t *p = pool_with("host=10.0.0.1,10.0.0.2,10.0.0.3 port=5432,5433,5434 user=u "
                              "dbname=d");
    /* Nothing measured: no narrowing, any host may serve. */
    assert_null(pgw__route_ro_conninfo(p));
    assert_true(pgw__route_standby_left(p));
    /* A standby behind, the primary not known yet: none (a narrowed
     * connection could settle on the primary), and nothing left to try. */
    entry(p, "10.0.0.2", "5433", PGW__ROLE_RO, 1);
    assert_null(pgw__route_ro_conninfo(p));
    assert_false(pgw__route_standby_left(p));
    /* The primary known: the third host only. */
    entry(p, "10.0.0.1", "5432", PGW__ROLE_RW, 0);
    assert_true(pgw__route_standby_left(p));
    expect_narrowed(p, "10.0.0.3/-:5434");
    /* The third measured behind too: no host left. */
    entry(p, "10.0.0.3", "5434", PGW__ROLE_RO, 1);
    assert_null(pgw__route_ro_conninfo(p));
    assert_false(pgw__route_standby_left(p));
    pool_free(p);
}

static void test_hostaddr_and_quoting(void **state)
{
    (void)state;
    /* A socket directory with a space and a quote; hostaddr for two hosts. */
    pgw_pool_t *p = pool_with("host='a,b,/tmp/o\\'dd dir' hostaddr='127.0.0.1,127.0.0.2,' "
                              "port=7000 user=u");
    entry(p, "a", "7000", PGW__ROLE_RW, 0);
    entry(p, "b", "7000", PGW__ROLE_RO, 1);
    expect_narrowed(p, "/tmp/o'dd dir/-:7000");
    pool_free(p);

    /* Hosts known by their hostaddr (host empty). */
    p = pool_with("hostaddr=127.0.0.1,127.0.0.2,127.0.0.3 port=1,2,3");
    entry(p, "127.0.0.1", "1", PGW__ROLE_RW, 0);
    entry(p, "127.0.0.3", "3", PGW__ROLE_RO, 1);
    expect_narrowed(p, "/127.0.0.2:2");
    pool_free(p);
}

static void test_uri_form(void **state)
{
    (void)state;
    pgw_pool_t *p = pool_with("postgresql://u@h1:5432,h2:5433,h3:5434,h4:5435/d?sslmode=disable");
    entry(p, "h1", "5432", PGW__ROLE_RW, 0);
    entry(p, "h3", "5434", PGW__ROLE_RO, 1);
    /* A read-only connection there found it out of recovery. */
    entry(p, "h4", "5435", PGW__ROLE_RO, 0);
    p->hosts[p->nhosts - 1].replayed = UINT64_MAX;
    expect_narrowed(p, "h2/-:5433");
    pool_free(p);
}

int main(void)
{
    /* A conninfo without host (hostaddr alone) takes PGHOST's hosts, as in
     * libpq: the strings here must not depend on the caller's environment. */
    static const char *const env[] = {"PGHOST", "PGHOSTADDR", "PGPORT", "PGSERVICE"};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
        unsetenv(env[i]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyword_form),
        cmocka_unit_test(test_hostaddr_and_quoting),
        cmocka_unit_test(test_uri_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
