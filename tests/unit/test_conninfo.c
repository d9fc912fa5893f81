/*
 * Unit tests of pgw_conninfo: libpq's documented connection string and URI
 * examples, environment variables, service files, the password file and the
 * errors. Every test runs with a clean environment: PG* variables unset and
 * HOME, PGSYSCONFDIR pointing into a private temporary directory, so the real
 * user's files are never read.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <sys/stat.h>
#include <pwd.h>
#include <unistd.h>

#include <cmocka.h>

#include "conn/peercred.h"
#include "failalloc.h"
#include "pgtest.h"
#include "pgwire/conninfo.h"
#include <sys/socket.h>

static char tmpdir[256];
static char errbuf[512];

static void write_file(const char *name, const char *text, mode_t mode, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

/* Unset every PG* variable, point HOME and PGSYSCONFDIR at tmpdir, and
 * remove the files a previous test left there. */
static int clean_env(void **state)
{
    (void)state;
    pgt_clear_pg_env(tmpdir);
    unlink(strcat(strcpy((char[300]){0}, tmpdir), "/.pgpass"));
    unlink(strcat(strcpy((char[300]){0}, tmpdir), "/.pg_service.conf"));
    unlink(strcat(strcpy((char[300]){0}, tmpdir), "/pg_service.conf"));
    return 0;
}

static pgw_conninfo_t *parse_ok(const char *s)
{
    pgw_conninfo_t *ci = NULL;
    int rc = pgw_conninfo_parse(&ci, s, NULL, errbuf, sizeof errbuf);
    if (rc != 0) fail_msg("parse of \"%s\" failed: %d %s", s ? s : "(NULL)", rc, errbuf);
    return ci;
}

static void parse_fails(const char *s, const char *message_part)
{
    pgw_conninfo_t *ci = (pgw_conninfo_t *)1;
    int rc = pgw_conninfo_parse(&ci, s, NULL, errbuf, sizeof errbuf);
    if (rc != PGW_ECONNINFO) fail_msg("\"%s\": expected PGW_ECONNINFO, got %d", s, rc);
    assert_null(ci);
    if (!strstr(errbuf, message_part))
        fail_msg("\"%s\": message \"%s\" lacks \"%s\"", s, errbuf, message_part);
}

/* s parses, and its only host has error message_part (ends_connect: 1 if
 * reaching it ends the connect). */
static void host_fails(const char *s, const char *message_part, int ends_connect)
{
    pgw_conninfo_t *ci = parse_ok(s);
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 0, &h), 0);
    if (!h.error || !strstr(h.error, message_part))
        fail_msg("\"%s\": host error \"%s\" lacks \"%s\"", s, h.error ? h.error : "(none)",
                 message_part);
    assert_int_equal(h.error_ends_connect, ends_connect);
    pgw_conninfo_free(ci);
}

static void expect(const pgw_conninfo_t *ci, const char *kw, const char *want)
{
    const char *got = pgw_conninfo_get(ci, kw);
    if (!want) {
        if (got) fail_msg("%s: expected unset, got \"%s\"", kw, got);
        return;
    }
    if (!got) fail_msg("%s: expected \"%s\", got unset", kw, want);
    assert_string_equal(got, want);
}

static void expect_host(const pgw_conninfo_t *ci, size_t i, const char *host, const char *addr,
                        unsigned port, int is_unix)
{
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, i, &h), 0);
    assert_string_equal(h.host, host);
    if (addr)
        assert_string_equal(h.hostaddr, addr);
    else
        assert_null(h.hostaddr);
    assert_int_equal(h.port, port);
    assert_int_equal(h.is_unix, is_unix);
}

/* The OS user name, looked up independently of the library. */
static const char *os_user(void)
{
    struct passwd *pw = getpwuid(geteuid());
    assert_non_null(pw);
    return pw->pw_name;
}

/* ---- keyword/value ---- */

static void test_keyword_value_basic(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("host=localhost port=5432 dbname=mydb connect_timeout=10");
    expect(ci, "host", "localhost");
    expect(ci, "port", "5432");
    expect(ci, "dbname", "mydb");
    expect(ci, "connect_timeout", "10");
    expect(ci, "user", os_user());
    expect(ci, "sslmode", "prefer");
    expect(ci, "channel_binding", "prefer");
    expect(ci, "target_session_attrs", "any");
    expect(ci, "load_balance_hosts", "disable");
    expect(ci, "min_protocol_version", "3.0");
    expect(ci, "max_protocol_version", "3.0");
    expect(ci, "password", NULL);
    assert_null(pgw_conninfo_get(ci, "nonsense"));
    assert_int_equal(pgw_conninfo_nhosts(ci), 1);
    expect_host(ci, 0, "localhost", NULL, 5432, 0);
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 1, &h), PGW_EINDEX);
    pgw_conninfo_free(ci);
}

static void test_defaults(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("");
    expect(ci, "host", PGW_DEFAULT_SOCKET_DIR);
    expect(ci, "port", "5432");
    expect(ci, "user", os_user());
    expect(ci, "dbname", os_user()); /* dbname defaults to the user */
    expect_host(ci, 0, "/var/run/postgresql", NULL, 5432, 1);
    pgw_host_t h;
    pgw_conninfo_host(ci, 0, &h);
    char path[128];
    assert_int_equal(pgw_host_socket_path(&h, path, sizeof path), 33);
    assert_string_equal(path, "/var/run/postgresql/.s.PGSQL.5432");
    assert_int_equal(pgw_host_socket_path(&h, path, 10), PGW_ERANGE);
    pgw_conninfo_free(ci);

    ci = parse_ok(NULL);
    expect(ci, "dbname", os_user());
    pgw_conninfo_free(ci);

    ci = parse_ok("user=alice");
    expect(ci, "dbname", "alice");
    pgw_conninfo_free(ci);

    ci = parse_ok("host=localhost");
    pgw_conninfo_host(ci, 0, &h);
    assert_int_equal(pgw_host_socket_path(&h, path, sizeof path), PGW_EINVAL);
    pgw_conninfo_free(ci);
}

static void test_keyword_value_quoting(void **state)
{
    (void)state;
    pgw_conninfo_t *ci =
        parse_ok("  dbname = 'my db'  user='it\\'s' password=a\\ b options='-c x=\\\\y' "
                 "application_name=''");
    expect(ci, "dbname", "my db");
    expect(ci, "user", "it's");
    expect(ci, "password", "a b");
    expect(ci, "options", "-c x=\\y");
    expect(ci, "application_name", "");
    pgw_conninfo_free(ci);

    /* a later duplicate wins */
    ci = parse_ok("dbname=a dbname=b");
    expect(ci, "dbname", "b");
    pgw_conninfo_free(ci);
}

static void test_keyword_value_errors(void **state)
{
    (void)state;
    parse_fails("foo=bar", "invalid connection option \"foo\"");
    parse_fails("host", "missing \"=\" after \"host\"");
    parse_fails("host localhost", "missing \"=\" after \"host\"");
    parse_fails("dbname='abc", "unterminated quoted string");
    parse_fails("sslmode=maybe", "invalid sslmode value: \"maybe\"");
    parse_fails("target_session_attrs=master", "invalid target_session_attrs value");
    parse_fails("load_balance_hosts=yes", "invalid load_balance_hosts value");
    parse_fails("channel_binding=true", "invalid channel_binding value");
    parse_fails("min_protocol_version=2.0", "invalid min_protocol_version value");
    parse_fails("max_protocol_version=4", "invalid max_protocol_version value");
    parse_fails("min_protocol_version=3.2 max_protocol_version=3.0",
                "\"min_protocol_version\" is greater than \"max_protocol_version\"");
    parse_fails("connect_timeout=ten", "invalid integer value \"ten\"");
    /* a host's port and address are checked when libpq reaches the host */
    host_fails("port=0", "invalid port number: \"0\"", 0);
    host_fails("port=65536", "invalid port number", 0);
    /* ... but a first host whose port is not an integer ends the connect
     * before any host is contacted, as in libpq */
    parse_fails("port=54x", "invalid integer value \"54x\" for connection option \"port\"");
    host_fails("hostaddr=not-an-ip", "could not parse network address \"not-an-ip\"", 0);
    parse_fails("require_auth=kerberos", "invalid require_auth value");
    parse_fails("require_auth=md5,!password", "cannot be mixed");
    parse_fails("require_auth=md5,md5", "more than once");
    parse_fails("require_auth=md5,", "invalid require_auth value");
}

static void test_require_auth_ok(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("require_auth=scram-sha-256,md5");
    expect(ci, "require_auth", "scram-sha-256,md5");
    pgw_conninfo_free(ci);
    ci = parse_ok("require_auth=!password,!md5 min_protocol_version=3.0 "
                  "max_protocol_version=latest sslmode=verify-full");
    pgw_conninfo_free(ci);
}

/* ---- host lists ---- */

static void test_host_lists(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("host=a,b port=1,2");
    assert_int_equal(pgw_conninfo_nhosts(ci), 2);
    expect_host(ci, 0, "a", NULL, 1, 0);
    expect_host(ci, 1, "b", NULL, 2, 0);
    pgw_conninfo_free(ci);

    /* one port for all hosts; an empty host is the default socket directory */
    ci = parse_ok("host=a,,/tmp,@abstract port=6000");
    assert_int_equal(pgw_conninfo_nhosts(ci), 4);
    expect_host(ci, 0, "a", NULL, 6000, 0);
    expect_host(ci, 1, PGW_DEFAULT_SOCKET_DIR, NULL, 6000, 1);
    expect_host(ci, 2, "/tmp", NULL, 6000, 1);
    expect_host(ci, 3, "@abstract", NULL, 6000, 1);
    pgw_host_t h;
    char path[64];
    pgw_conninfo_host(ci, 3, &h);
    assert_true(pgw_host_socket_path(&h, path, sizeof path) > 0);
    assert_string_equal(path, "@abstract/.s.PGSQL.6000");
    pgw_conninfo_free(ci);

    /* empty ports fall back to 5432 */
    ci = parse_ok("host=a,b port=,7");
    expect_host(ci, 0, "a", NULL, 5432, 0);
    expect_host(ci, 1, "b", NULL, 7, 0);
    pgw_conninfo_free(ci);

    /* hostaddr: pairs with host, and alone leaves host empty */
    ci = parse_ok("host=db.example,other hostaddr=192.0.2.1,2001:db8::1");
    expect_host(ci, 0, "db.example", "192.0.2.1", 5432, 0);
    expect_host(ci, 1, "other", "2001:db8::1", 5432, 0);
    pgw_conninfo_free(ci);
    ci = parse_ok("hostaddr=127.0.0.1");
    expect_host(ci, 0, "", "127.0.0.1", 5432, 0);
    expect(ci, "host", NULL);
    pgw_conninfo_free(ci);

    parse_fails("host=a,b,c port=1,2", "could not match 2 port numbers to 3 hosts");
    parse_fails("host=a,b hostaddr=127.0.0.1", "could not match 2 host names to 1 hostaddr");
}

/* ---- URIs ---- */

static void test_uri_libpq_examples(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("postgresql://");
    expect(ci, "host", PGW_DEFAULT_SOCKET_DIR);
    expect(ci, "dbname", os_user());
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://localhost");
    expect_host(ci, 0, "localhost", NULL, 5432, 0);
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://localhost:5433");
    expect_host(ci, 0, "localhost", NULL, 5433, 0);
    expect(ci, "port", "5433");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://localhost/mydb");
    expect(ci, "dbname", "mydb");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://user@localhost");
    expect(ci, "user", "user");
    expect(ci, "password", NULL);
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://user:secret@localhost");
    expect(ci, "user", "user");
    expect(ci, "password", "secret");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp");
    expect(ci, "user", "other");
    expect(ci, "dbname", "otherdb");
    expect(ci, "connect_timeout", "10");
    expect(ci, "application_name", "myapp");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://host1:123,host2:456/somedb?target_session_attrs=any&"
                  "application_name=myapp");
    assert_int_equal(pgw_conninfo_nhosts(ci), 2);
    expect_host(ci, 0, "host1", NULL, 123, 0);
    expect_host(ci, 1, "host2", NULL, 456, 0);
    expect(ci, "dbname", "somedb");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://[2001:db8::1234]/database");
    expect_host(ci, 0, "2001:db8::1234", NULL, 5432, 0);
    expect(ci, "dbname", "database");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://[::1]:6543,host2/db");
    expect_host(ci, 0, "::1", NULL, 6543, 0);
    expect_host(ci, 1, "host2", NULL, 5432, 0);
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql:///dbname?host=/var/lib/postgresql");
    expect_host(ci, 0, "/var/lib/postgresql", NULL, 5432, 1);
    expect(ci, "dbname", "dbname");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgresql://%2Fvar%2Flib%2Fpostgresql/dbname");
    expect_host(ci, 0, "/var/lib/postgresql", NULL, 5432, 1);
    expect(ci, "dbname", "dbname");
    pgw_conninfo_free(ci);

    ci = parse_ok("postgres://us%40er:p%3Ass%2F@h/d%20b?ssl=true&options=-c%20a%3Db");
    expect(ci, "user", "us@er");
    expect(ci, "password", "p:ss/");
    expect(ci, "dbname", "d b");
    expect(ci, "sslmode", "require");
    expect(ci, "options", "-c a=b");
    pgw_conninfo_free(ci);
}

static void test_uri_errors(void **state)
{
    (void)state;
    parse_fails("postgresql://localhost/db?foo=bar", "invalid URI query parameter: \"foo\"");
    parse_fails("postgresql://localhost/db?sslmode", "missing key/value separator");
    parse_fails("postgresql://localhost/db?a=b=c", "extra key/value separator");
    parse_fails("postgresql://[::1/db", "matching \"]\"");
    parse_fails("postgresql://[]/db", "IPv6 host address may not be empty");
    parse_fails("postgresql://[::1]x/db", "unexpected character \"x\"");
    parse_fails("postgresql://localhost/d%zz", "invalid percent-encoded token");
    parse_fails("postgresql://localhost/d%4", "invalid percent-encoded token");
    parse_fails("postgresql://localhost/d%00b", "forbidden value %00");
    parse_fails("postgresql://localhost:abc/db", "invalid integer value \"abc\"");
    pgw_conninfo_t *ci = parse_ok("postgresql://h1,localhost:abc/db");
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 1, &h), 0);
    assert_string_equal(h.error, "invalid integer value \"abc\" for connection option \"port\"");
    assert_int_equal(h.error_ends_connect, 1);
    pgw_conninfo_free(ci);
    parse_fails("postgresql://localhost/db?sslmode=bogus", "invalid sslmode value");
}

/* ---- environment and service file ---- */

static void test_environment(void **state)
{
    (void)state;
    setenv("PGHOST", "envhost", 1);
    setenv("PGPORT", "6000", 1);
    setenv("PGUSER", "envuser", 1);
    setenv("PGDATABASE", "envdb", 1);
    setenv("PGAPPNAME", "envapp", 1);
    setenv("PGSSLMODE", "require", 1);
    setenv("PGTARGETSESSIONATTRS", "read-write", 1);
    setenv("PGCONNECT_TIMEOUT", "7", 1);
    setenv("PGCLIENTENCODING", "LATIN1", 1);
    setenv("PGOPTIONS", "-c geqo=off", 1);
    setenv("PGTZ", "UTC", 1);
    setenv("PGDATESTYLE", "ISO, MDY", 1);
    setenv("PGGEQO", "DeFault", 1); /* "default" is not sent */

    /* the string wins over the environment, the environment over defaults */
    pgw_conninfo_t *ci = parse_ok("port=7000 dbname=strdb");
    expect(ci, "host", "envhost");
    expect(ci, "port", "7000");
    expect(ci, "user", "envuser");
    expect(ci, "dbname", "strdb");
    expect(ci, "sslmode", "require");
    expect(ci, "target_session_attrs", "read-write");
    expect(ci, "connect_timeout", "7");

    const char *p[32];
    int n = pgw_conninfo_startup_params(ci, p, 16);
    assert_int_equal(n, 7);
    const char *want[] = {"user",
                          "envuser",
                          "database",
                          "strdb",
                          "options",
                          "-c geqo=off",
                          "application_name",
                          "envapp",
                          "client_encoding",
                          "LATIN1",
                          "datestyle",
                          "ISO, MDY",
                          "timezone",
                          "UTC"};
    for (int i = 0; i < 14; i++)
        assert_string_equal(p[i], want[i]);
    assert_int_equal(pgw_conninfo_startup_params(ci, p, 6), PGW_ERANGE);
    pgw_conninfo_free(ci);

    setenv("PGSSLMODE", "sometimes", 1);
    parse_fails("", "invalid sslmode value: \"sometimes\"");
}

/* The environment is read as getenv reads it: the first entry of a name
 * wins, and only whole names match; other PG-prefixed variables (PGW_...,
 * a digit or a non-ASCII byte after "PG") are passed over. */
static void test_environment_as_getenv(void **state)
{
    (void)state;
    extern char **environ;
    static char *env[] = {"PGPORTX=1",    "PGPORT=6001", "PGPORT=6002",    "PG=1",
                          "PGUSER",       "XPGHOST=bad", "PGREQUIRESSL=1", "PGTZ=Europe/Paris",
                          "PGTZ=UTC",     "PGAPPNAME=",  "PGW_PORT=7",     "PG9=1",
                          "PG\xc3\xa9=1", NULL};
    char **saved = environ;
    environ = env;
    assert_string_equal(getenv("PGPORT"), "6001");
    pgw_conninfo_t *ci = parse_ok("user=u");
    environ = saved;
    expect(ci, "port", "6001");
    expect(ci, "host", PGW_DEFAULT_SOCKET_DIR);
    expect(ci, "sslmode", "require");
    expect(ci, "application_name", "");
    const char *p[32];
    int n = pgw_conninfo_startup_params(ci, p, 16);
    assert_int_equal(n, 3); /* an empty application_name is not sent */
    assert_string_equal(p[4], "timezone");
    assert_string_equal(p[5], "Europe/Paris");
    pgw_conninfo_free(ci);
}

static void test_startup_params_fallback(void **state)
{
    (void)state;
    pgw_conninfo_t *ci =
        parse_ok("user=u dbname=d fallback_application_name=fb replication=database "
                 "client_encoding=auto");
    const char *p[32];
    int n = pgw_conninfo_startup_params(ci, p, 16);
    assert_int_equal(n, 5); /* client_encoding=auto: SQL_ASCII in the C locale */
    assert_string_equal(p[0], "user");
    assert_string_equal(p[1], "u");
    assert_string_equal(p[2], "database");
    assert_string_equal(p[3], "d");
    assert_string_equal(p[4], "replication");
    assert_string_equal(p[5], "database");
    assert_string_equal(p[6], "application_name");
    assert_string_equal(p[7], "fb");
    pgw_conninfo_free(ci);

    ci = parse_ok("application_name=app fallback_application_name=fb");
    n = pgw_conninfo_startup_params(ci, p, 16);
    assert_int_equal(n, 3);
    assert_string_equal(p[5], "app");
    pgw_conninfo_free(ci);
}

static void test_service_file(void **state)
{
    (void)state;
    char path[512], sys[512];
    write_file("services.conf",
               "# comment\n"
               "[other]\n"
               "host=wrong\n"
               "\n"
               "[mysvc]\n"
               "  host=svchost\n"
               "port=6001\n"
               "dbname=svcdb  \r\n"
               "sslmode=verify-full\n"
               "[after]\n"
               "user=wrong\n",
               0600, path, sizeof path);
    setenv("PGSERVICEFILE", path, 1);
    setenv("PGPORT", "9999", 1); /* the service file beats the environment, as in libpq */
    setenv("PGUSER", "envuser", 1);

    pgw_conninfo_t *ci = parse_ok("service=mysvc dbname=strdb");
    expect(ci, "host", "svchost");
    expect(ci, "port", "6001");
    expect(ci, "dbname", "strdb"); /* the string beats the service */
    expect(ci, "sslmode", "verify-full");
    expect(ci, "user", "envuser");
    pgw_conninfo_free(ci);

    /* PGSERVICE names the service too */
    setenv("PGSERVICE", "mysvc", 1);
    ci = parse_ok("");
    expect(ci, "host", "svchost");
    pgw_conninfo_free(ci);
    unsetenv("PGSERVICE");

    parse_fails("service=missing", "definition of service \"missing\" not found");

    /* the system file, when the user file lacks the service */
    write_file("pg_service.conf", "[syssvc]\nhost=syshost\n", 0644, sys, sizeof sys);
    ci = parse_ok("service=syssvc");
    expect(ci, "host", "syshost");
    pgw_conninfo_free(ci);

    /* ~/.pg_service.conf when PGSERVICEFILE is unset */
    unsetenv("PGSERVICEFILE");
    write_file(".pg_service.conf", "[homesvc]\nhost=homehost\n", 0600, path, sizeof path);
    ci = parse_ok("service=homesvc");
    expect(ci, "host", "homehost");
    pgw_conninfo_free(ci);

    write_file("bad.conf", "[s]\nbogus=1\n", 0600, path, sizeof path);
    setenv("PGSERVICEFILE", path, 1);
    parse_fails("service=s", "syntax error in service file");
    write_file("bad.conf", "[s]\nhost\n", 0600, path, sizeof path);
    parse_fails("service=s", "line 2");
    write_file("bad.conf", "[s]\nservice=t\n", 0600, path, sizeof path);
    parse_fails("service=s", "nested \"service\"");
}

/* ---- the password file ---- */

static const char *password_for(const pgw_conninfo_t *ci, size_t i)
{
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, i, &h), 0);
    return pgw_conninfo_password(ci, &h);
}

static void test_pgpass(void **state)
{
    (void)state;
    char path[512];
    write_file("pgpass",
               "# host:port:db:user:password\n"
               "dbhost:5432:mydb:alice:exact\n"
               "dbhost:*:*:bob:wild\n"
               "localhost:5432:*:carol:sock\n"
               "we\\:ird:5432:*:dave:esc\\:aped\\\\pw:with:colons\r\n"
               "\\*:*:*:erin:literal-star\n"
               "short:line\n"
               "*:*:*:*:fallback\n",
               0600, path, sizeof path);
    setenv("PGPASSFILE", path, 1);

    pgw_conninfo_t *ci = parse_ok("host=dbhost dbname=mydb user=alice");
    assert_null(pgw_conninfo_passfile_warning(ci));
    assert_string_equal(password_for(ci, 0), "exact");
    expect(ci, "password", NULL); /* get() reports only an explicit password */
    pgw_conninfo_free(ci);

    ci = parse_ok("host=dbhost port=6000 dbname=x user=bob");
    assert_string_equal(password_for(ci, 0), "wild");
    pgw_conninfo_free(ci);

    /* the default socket directory matches "localhost" */
    ci = parse_ok("user=carol");
    assert_string_equal(password_for(ci, 0), "sock");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=/tmp user=carol");
    assert_string_equal(password_for(ci, 0), "fallback");
    pgw_conninfo_free(ci);

    /* the password ends at the first unescaped ':' */
    ci = parse_ok("host=we:ird user=dave");
    assert_string_equal(password_for(ci, 0), "esc:aped\\pw");
    pgw_conninfo_free(ci);

    /* "\*" is a literal star, not a wildcard */
    ci = parse_ok("host=h user=erin");
    assert_string_equal(password_for(ci, 0), "fallback");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=* user=erin");
    assert_string_equal(password_for(ci, 0), "literal-star");
    pgw_conninfo_free(ci);

    /* per host of a list, and by hostaddr when host is empty */
    ci = parse_ok("host=dbhost,other dbname=mydb user=alice");
    assert_string_equal(password_for(ci, 0), "exact");
    assert_string_equal(password_for(ci, 1), "fallback");
    pgw_conninfo_free(ci);

    /* an explicit password wins; an empty one does not count */
    ci = parse_ok("host=dbhost dbname=mydb user=alice password=given");
    assert_string_equal(password_for(ci, 0), "given");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=dbhost dbname=mydb user=alice password=");
    assert_string_equal(password_for(ci, 0), "exact");
    pgw_conninfo_free(ci);

    /* passfile= beats PGPASSFILE */
    char other[512];
    write_file("pgpass2", "*:*:*:*:second\n", 0600, other, sizeof other);
    char s[700];
    snprintf(s, sizeof s, "passfile=%s user=zed", other);
    ci = parse_ok(s);
    assert_string_equal(password_for(ci, 0), "second");
    pgw_conninfo_free(ci);
}

static void test_pgpass_hostaddr_and_nomatch(void **state)
{
    (void)state;
    char path[512];
    write_file("pgpass", "10.0.0.1:5432:*:u:byaddr\n", 0600, path, sizeof path);
    setenv("PGPASSFILE", path, 1);
    pgw_conninfo_t *ci = parse_ok("hostaddr=10.0.0.1 user=u");
    assert_string_equal(password_for(ci, 0), "byaddr");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=elsewhere hostaddr=10.0.0.1 user=u");
    assert_null(password_for(ci, 0));
    pgw_conninfo_free(ci);
}

static void test_pgpass_permissions(void **state)
{
    (void)state;
    char path[512];
    write_file(".pgpass", "*:*:*:*:secret\n", 0644, path, sizeof path);
    /* ~/.pgpass by default; group/world readable => ignored with a reason */
    pgw_conninfo_t *ci = parse_ok("host=h");
    assert_null(password_for(ci, 0));
    const char *w = pgw_conninfo_passfile_warning(ci);
    assert_non_null(w);
    assert_non_null(strstr(w, "group or world access"));
    pgw_conninfo_free(ci);

    assert_int_equal(chmod(path, 0600), 0);
    ci = parse_ok("host=h");
    assert_string_equal(password_for(ci, 0), "secret");
    assert_null(pgw_conninfo_passfile_warning(ci));
    pgw_conninfo_free(ci);

    /* a directory is not a password file */
    setenv("PGPASSFILE", tmpdir, 1);
    ci = parse_ok("host=h");
    assert_null(password_for(ci, 0));
    assert_non_null(strstr(pgw_conninfo_passfile_warning(ci), "not a plain file"));
    pgw_conninfo_free(ci);

    /* a missing file is silently absent */
    setenv("PGPASSFILE", "/nonexistent/pgpass", 1);
    ci = parse_ok("host=h");
    assert_null(password_for(ci, 0));
    assert_null(pgw_conninfo_passfile_warning(ci));
    pgw_conninfo_free(ci);
}

/* ---- misc ---- */

static void test_keywords_listing(void **state)
{
    (void)state;
    size_t n = 0;
    int saw_sslmode = 0;
    for (const char *k; (k = pgw_conninfo_keyword(n)) != NULL; n++)
        if (strcmp(k, "sslmode") == 0) saw_sslmode = 1;
    assert_true(n > 30);
    assert_true(saw_sslmode);
    assert_string_equal(pgw_conninfo_keyword_envvar("host"), "PGHOST");
    assert_null(pgw_conninfo_keyword_envvar("fallback_application_name"));
    assert_null(pgw_conninfo_keyword_envvar("bogus"));
}

static void test_out_of_memory(void **state)
{
    (void)state;
    char path[512];
    write_file("pgpass", "*:*:*:*:pw\n", 0600, path, sizeof path);
    setenv("PGPASSFILE", path, 1);
    const char *s = "postgresql://u:p@h1:1,h2:2/db?application_name=x&sslmode=require";
    int saw_ok = 0;
    for (long n = 1; n < 80; n++) {
        pgt_alloc_t c;
        pgw_allocator_t a = *pgt_alloc_init(&c);
        c.fail_at = n;
        pgw_conninfo_t *ci = NULL;
        int rc = pgw_conninfo_parse(&ci, s, &a, errbuf, sizeof errbuf);
        assert_true(rc == 0 || rc == PGW_ENOMEM);
        if (rc == 0) saw_ok = 1;
        pgw_conninfo_free(ci);
        assert_int_equal(c.blocks, 0);
    }
    assert_true(saw_ok);
}

/* ---- libpq 15 compatibility: each case is a difference that was found
 * by comparing with libpq (tests/integration/test_conninfo_libpq.c) ---- */

/* libpq checks ports per host when it reaches the host: one bad port does
 * not reject the string. */
static void test_libpq_port_per_host(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("host=a,b port=0,5432");
    assert_int_equal(pgw_conninfo_nhosts(ci), 2);
    expect_host(ci, 1, "b", NULL, 5432, 0);
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 0, &h), 0);
    assert_string_equal(h.error, "invalid port number: \"0\"");
    assert_int_equal(h.error_ends_connect, 0);
    assert_int_equal(pgw_conninfo_host(ci, 1, &h), 0);
    assert_null(h.error);
    assert_string_equal(h.port_text, "5432");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=a,b port=5433,abc");
    expect_host(ci, 0, "a", NULL, 5433, 0);
    assert_int_equal(pgw_conninfo_host(ci, 1, &h), 0);
    assert_int_equal(h.error_ends_connect, 1);
    pgw_conninfo_free(ci);
    ci = parse_ok("hostaddr=not-an-ip,127.0.0.1");
    expect_host(ci, 1, "", "127.0.0.1", 5432, 0);
    pgw_conninfo_free(ci);
}

/* Integers follow libpq's parse_int_param: an int, nothing but blanks
 * around it, and never empty. */
static void test_libpq_integers(void **state)
{
    (void)state;
    parse_fails("connect_timeout=", "invalid integer value \"\" for connection option "
                                    "\"connect_timeout\"");
    parse_fails("connect_timeout=3000000000", "invalid integer value \"3000000000\"");
    parse_fails("connect_timeout=0x10", "invalid integer value \"0x10\"");
    pgw_conninfo_t *ci = parse_ok("connect_timeout=' +7 '");
    pgw_conninfo_free(ci);
}

/* The TCP options are checked only when a TCP socket is opened. */
static void test_libpq_keepalives_unix(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("host=/tmp keepalives=abc keepalives_idle=x "
                                  "tcp_user_timeout=");
    pgw_tcp_options_t t;
    assert_int_equal(pgw_conninfo_tcp_options(ci, &t, errbuf, sizeof errbuf), PGW_ECONNINFO);
    assert_string_equal(errbuf, "invalid integer value \"abc\" for connection option "
                                "\"keepalives\"\nkeepalives parameter must be an integer");
    pgw_conninfo_free(ci);

    ci = parse_ok("keepalives_idle=' 30 ' keepalives_interval=-5 tcp_user_timeout=");
    assert_int_equal(pgw_conninfo_tcp_options(ci, &t, errbuf, sizeof errbuf), PGW_ECONNINFO);
    assert_string_equal(errbuf, "invalid integer value \"\" for connection option "
                                "\"tcp_user_timeout\"");
    pgw_conninfo_free(ci);
    ci = parse_ok("keepalives_idle=' 30 ' keepalives_interval=-5 keepalives_count=3");
    assert_int_equal(pgw_conninfo_tcp_options(ci, &t, errbuf, sizeof errbuf), 0);
    assert_int_equal(t.keepalives, 1);
    assert_int_equal(t.keepalives_idle, 30);
    assert_int_equal(t.keepalives_interval, 0);
    assert_int_equal(t.keepalives_count, 3);
    assert_int_equal(t.tcp_user_timeout, -1);
    assert_string_equal(errbuf, "");
    pgw_conninfo_free(ci);
    /* keepalives=0: libpq looks at none of the others */
    ci = parse_ok("keepalives=0 keepalives_idle=x");
    assert_int_equal(pgw_conninfo_tcp_options(ci, &t, NULL, 0), 0);
    assert_int_equal(t.keepalives, 0);
    assert_int_equal(t.keepalives_idle, -1);
    pgw_conninfo_free(ci);
    assert_int_equal(pgw_conninfo_tcp_options(NULL, &t, NULL, 0), PGW_EINVAL);
}

static void test_libpq_ssl_protocol_versions(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("ssl_min_protocol_version=tlsv1.2 "
                                  "ssl_max_protocol_version=TLSV1.3");
    pgw_conninfo_free(ci);
    ci = parse_ok("ssl_min_protocol_version=TLSv1 ssl_max_protocol_version=TLSv1");
    pgw_conninfo_free(ci);
    ci = parse_ok("ssl_min_protocol_version='' ssl_max_protocol_version=TLSv1");
    pgw_conninfo_free(ci);
    parse_fails("ssl_max_protocol_version=TLSv1", "invalid SSL protocol version range");
    parse_fails("ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=tlsv1.2",
                "invalid SSL protocol version range");
    parse_fails("ssl_min_protocol_version=TLSv2", "invalid ssl_min_protocol_version value");
}

/* libpq 16: sslrootcert=system makes the default sslmode verify-full; an
 * explicit weaker sslmode, even from PGSSLMODE, is refused before any
 * connect (libpq 18). libpq 17: sslnegotiation=direct needs require or
 * stronger. */
static void test_libpq_ssl_defaults(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("sslrootcert=system");
    assert_string_equal(pgw_conninfo_get(ci, "sslmode"), "verify-full");
    pgw_conninfo_free(ci);
    parse_fails("sslrootcert=system sslmode=require",
                "weak sslmode \"require\" may not be used with sslrootcert=system (use "
                "\"verify-full\")");
    setenv("PGSSLMODE", "verify-ca", 1);
    parse_fails("sslrootcert=system", "weak sslmode \"verify-ca\"");
    setenv("PGSSLMODE", "verify-full", 1);
    ci = parse_ok("sslrootcert=system");
    assert_string_equal(pgw_conninfo_get(ci, "sslmode"), "verify-full");
    pgw_conninfo_free(ci);
    unsetenv("PGSSLMODE");
    ci = parse_ok("sslrootcert=/some/file.crt");
    assert_string_equal(pgw_conninfo_get(ci, "sslmode"), "prefer");
    pgw_conninfo_free(ci);
    ci = parse_ok("sslnegotiation=direct sslmode=verify-full");
    pgw_conninfo_free(ci);
    parse_fails("sslnegotiation=direct", "weak sslmode \"prefer\" may not be used with "
                                         "sslnegotiation=direct (use \"require\", \"verify-ca\", "
                                         "or \"verify-full\")");
    parse_fails("sslnegotiation=direct sslmode=allow", "weak sslmode \"allow\"");
}

static void test_libpq_service_edge_cases(void **state)
{
    (void)state;
    char path[512];
    write_file("svc.conf", "[]\nhost=emptyname\n[x]\nhost=x\n", 0600, path, sizeof path);
    setenv("PGSERVICEFILE", path, 1);
    pgw_conninfo_t *ci = parse_ok("service=");
    expect(ci, "host", "emptyname");
    pgw_conninfo_free(ci);

    write_file("svc.conf", "[x]\nhost=x\n", 0600, path, sizeof path);
    parse_fails("service=", "definition of service \"\" not found");
    setenv("PGSERVICE", "", 1);
    parse_fails("", "definition of service \"\" not found");
    unsetenv("PGSERVICE");

    char missing[600];
    snprintf(missing, sizeof missing, "%s/no-such-file", tmpdir);
    setenv("PGSERVICEFILE", missing, 1);
    parse_fails("service=x", "service file \"");
    parse_fails("service=x", "\" not found");

    /* libpq reads lines of up to 1022 characters */
    char big[1100];
    memset(big, 'a', sizeof big);
    memcpy(big, "[x]\nhost=", 9);
    big[1030] = '\n';
    big[1031] = '\0';
    write_file("svc.conf", big, 0600, path, sizeof path);
    setenv("PGSERVICEFILE", path, 1);
    parse_fails("service=x", "line 2 too long in service file");
}

static void test_libpq_accepted_values(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("replication=TRUE");
    expect(ci, "replication", "TRUE");
    pgw_conninfo_free(ci);
    ci = parse_ok("replication=anything");
    pgw_conninfo_free(ci);

    ci = parse_ok("requiressl=1");
    expect(ci, "sslmode", "require");
    pgw_conninfo_free(ci);
    ci = parse_ok("sslmode=disable requiressl=0");
    expect(ci, "sslmode", "prefer");
    pgw_conninfo_free(ci);
    ci = parse_ok("postgresql:///db?requiressl=1");
    expect(ci, "sslmode", "require");
    pgw_conninfo_free(ci);

    /* glibc's numeric forms, as getaddrinfo(AI_NUMERICHOST) reads them */
    ci = parse_ok("hostaddr=1.2.3");
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 0, &h), 0);
    assert_null(h.error);
    pgw_conninfo_free(ci);
}

/* sun_path holds 107 bytes and a NUL. */
static void test_libpq_socket_path_length(void **state)
{
    (void)state;
    char s[300], path[300];
    char dir[200];
    memset(dir, 'd', sizeof dir);
    dir[0] = '/';
    dir[107 - 14] = '\0'; /* + "/.s.PGSQL.5432" = 107 bytes */
    snprintf(s, sizeof s, "host=%s", dir);
    pgw_conninfo_t *ci = parse_ok(s);
    pgw_host_t h;
    assert_int_equal(pgw_conninfo_host(ci, 0, &h), 0);
    assert_int_equal(pgw_host_socket_path(&h, path, sizeof path), 107);
    pgw_conninfo_free(ci);
    dir[107 - 14] = 'd';
    dir[108 - 14] = '\0';
    snprintf(s, sizeof s, "host=%s", dir);
    ci = parse_ok(s);
    assert_int_equal(pgw_conninfo_host(ci, 0, &h), 0);
    assert_int_equal(pgw_host_socket_path(&h, path, sizeof path), PGW_ERANGE);
    assert_non_null(h.error);
    assert_non_null(strstr(h.error, "is too long (maximum 107 bytes)"));
    assert_int_equal(h.error_ends_connect, 0);
    pgw_conninfo_free(ci);
}

static void test_libpq_trailing_backslash(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse_ok("dbname=abc\\");
    expect(ci, "dbname", "abc");
    pgw_conninfo_free(ci);
    ci = parse_ok("dbname=abc\\ user=u");
    expect(ci, "dbname", "abc user=u");
    pgw_conninfo_free(ci);
}

/* The startup parameters as libpq 15's build_startup_packet writes them. */
static int find_param(const char **p, int n, const char *name, const char **value)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(p[2 * i], name) == 0) {
            *value = p[2 * i + 1];
            return 1;
        }
    }
    return 0;
}

static void test_libpq_startup_params(void **state)
{
    (void)state;
    const char *p[32], *v;
    /* client_encoding=auto: the locale's encoding (this process runs in
     * the C locale: SQL_ASCII) */
    pgw_conninfo_t *ci = parse_ok("client_encoding=auto");
    int n = pgw_conninfo_startup_params(ci, p, 16);
    assert_true(find_param(p, n, "client_encoding", &v));
    assert_string_equal(v, "SQL_ASCII");
    pgw_conninfo_free(ci);

    /* empty PGTZ / PGDATESTYLE / PGGEQO are sent, empty, in lower case */
    setenv("PGTZ", "", 1);
    setenv("PGDATESTYLE", "", 1);
    setenv("PGGEQO", "DEFAULT", 1);
    ci = parse_ok("");
    n = pgw_conninfo_startup_params(ci, p, 16);
    assert_true(find_param(p, n, "timezone", &v));
    assert_string_equal(v, "");
    assert_true(find_param(p, n, "datestyle", &v));
    assert_string_equal(v, "");
    assert_false(find_param(p, n, "geqo", &v));
    pgw_conninfo_free(ci);
    unsetenv("PGTZ");
    unsetenv("PGDATESTYLE");
    unsetenv("PGGEQO");

    /* an empty application_name hides the fallback */
    ci = parse_ok("application_name='' fallback_application_name=fb");
    n = pgw_conninfo_startup_params(ci, p, 16);
    assert_false(find_param(p, n, "application_name", &v));
    pgw_conninfo_free(ci);
}

static void test_libpq_requiressl_env(void **state)
{
    (void)state;
    setenv("PGREQUIRESSL", "1", 1);
    pgw_conninfo_t *ci = parse_ok("");
    expect(ci, "sslmode", "require");
    pgw_conninfo_free(ci);
    setenv("PGSSLMODE", "allow", 1); /* PGSSLMODE wins */
    ci = parse_ok("");
    expect(ci, "sslmode", "allow");
    pgw_conninfo_free(ci);
    unsetenv("PGSSLMODE");
    setenv("PGREQUIRESSL", "0", 1);
    ci = parse_ok("");
    expect(ci, "sslmode", "prefer");
    pgw_conninfo_free(ci);
}

/* The password ends at the first unescaped ':'; the port is matched as
 * written. */
static void test_libpq_pgpass_fields(void **state)
{
    (void)state;
    char path[512];
    write_file("pgpass", "*:05432:d2:*:zero\n*:5432:d1:*:p:w0\n*:*:*:*:q\\:w1\n", 0600, path,
               sizeof path);
    setenv("PGPASSFILE", path, 1);
    pgw_conninfo_t *ci = parse_ok("host=h dbname=d1");
    assert_string_equal(password_for(ci, 0), "p");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=h dbname=d3");
    assert_string_equal(password_for(ci, 0), "q:w1");
    pgw_conninfo_free(ci);
    ci = parse_ok("host=h dbname=d2 port=05432");
    assert_string_equal(password_for(ci, 0), "zero");
    pgw_conninfo_free(ci);
}

/* client_encoding=auto follows the LC_CTYPE locale, as libpq's does. */
static void test_libpq_client_encoding_locale(void **state)
{
    (void)state;
    if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "C.utf8"))
        fail_msg("no C.UTF-8 locale on this machine");
    const char *p[32], *v;
    pgw_conninfo_t *ci = parse_ok("client_encoding=auto");
    setlocale(LC_CTYPE, "C");
    int n = pgw_conninfo_startup_params(ci, p, 16);
    assert_true(find_param(p, n, "client_encoding", &v));
    assert_string_equal(v, "UTF8");
    expect(ci, "client_encoding", "auto");
    pgw_conninfo_free(ci);
}

/* The project's NULL-handle convention. */
static void test_null_handles(void **state)
{
    (void)state;
    pgw_host_t h;
    const char *p[2];
    char buf[8];
    assert_int_equal(pgw_conninfo_parse(NULL, "", NULL, NULL, 0), PGW_EINVAL);
    pgw_conninfo_free(NULL);
    assert_null(pgw_conninfo_get(NULL, "host"));
    assert_null(pgw_conninfo_keyword_envvar(NULL));
    assert_int_equal(pgw_conninfo_nhosts(NULL), 0);
    assert_int_equal(pgw_conninfo_host(NULL, 0, &h), PGW_EINVAL);
    assert_int_equal(pgw_host_socket_path(NULL, buf, sizeof buf), PGW_EINVAL);
    assert_null(pgw_conninfo_password(NULL, &h));
    assert_null(pgw_conninfo_passfile_warning(NULL));
    assert_int_equal(pgw_conninfo_startup_params(NULL, p, 1), PGW_EINVAL);
    pgw_conninfo_t *ci = parse_ok("");
    assert_null(pgw_conninfo_get(ci, NULL));
    assert_int_equal(pgw_conninfo_host(ci, 0, NULL), PGW_EINVAL);
    assert_null(pgw_conninfo_password(ci, NULL));
    pgw_conninfo_free(ci);
}

/* requirepeer on a socketpair: the peer is this process's user. */
static void test_peercred_socketpair(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(pgw__peercred_check(sv[0], os_user(), errbuf, sizeof errbuf), 0);
    assert_string_equal(errbuf, "");
    assert_int_equal(pgw__peercred_check(sv[0], NULL, errbuf, sizeof errbuf), 0);
    assert_int_equal(pgw__peercred_check(sv[0], "", errbuf, sizeof errbuf), 0);
    assert_int_equal(pgw__peercred_check(sv[0], "nosuchpeer", errbuf, sizeof errbuf),
                     PGW_EAUTHPOLICY);
    char want[200];
    snprintf(want, sizeof want,
             "requirepeer specifies \"nosuchpeer\", but actual peer user name is \"%s\"",
             os_user());
    assert_string_equal(errbuf, want);
    assert_int_equal(pgw__peercred_check(sv[1], "nosuchpeer", NULL, 0), PGW_EAUTHPOLICY);
    close(sv[0]);
    close(sv[1]);

    /* not a socket: the peer cannot be identified, which fails */
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(pgw__peercred_check(pfd[0], "x", errbuf, sizeof errbuf), PGW_EAUTHPOLICY);
    assert_non_null(strstr(errbuf, "could not get peer credentials: "));
    close(pfd[0]);
    close(pfd[1]);

    /* TCP: libpq ignores requirepeer */
    int t = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(t >= 0);
    assert_int_equal(pgw__peercred_check(t, "x", errbuf, sizeof errbuf), 0);
    close(t);
    assert_int_equal(pgw__peercred_check(-1, "x", errbuf, sizeof errbuf), PGW_EINVAL);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pgw-conninfo-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_keyword_value_basic, clean_env),
        cmocka_unit_test_setup(test_defaults, clean_env),
        cmocka_unit_test_setup(test_keyword_value_quoting, clean_env),
        cmocka_unit_test_setup(test_keyword_value_errors, clean_env),
        cmocka_unit_test_setup(test_require_auth_ok, clean_env),
        cmocka_unit_test_setup(test_host_lists, clean_env),
        cmocka_unit_test_setup(test_uri_libpq_examples, clean_env),
        cmocka_unit_test_setup(test_uri_errors, clean_env),
        cmocka_unit_test_setup(test_environment, clean_env),
        cmocka_unit_test_setup(test_environment_as_getenv, clean_env),
        cmocka_unit_test_setup(test_startup_params_fallback, clean_env),
        cmocka_unit_test_setup(test_service_file, clean_env),
        cmocka_unit_test_setup(test_pgpass, clean_env),
        cmocka_unit_test_setup(test_pgpass_hostaddr_and_nomatch, clean_env),
        cmocka_unit_test_setup(test_pgpass_permissions, clean_env),
        cmocka_unit_test_setup(test_keywords_listing, clean_env),
        cmocka_unit_test_setup(test_out_of_memory, clean_env),
        cmocka_unit_test_setup(test_libpq_port_per_host, clean_env),
        cmocka_unit_test_setup(test_libpq_integers, clean_env),
        cmocka_unit_test_setup(test_libpq_keepalives_unix, clean_env),
        cmocka_unit_test_setup(test_libpq_ssl_protocol_versions, clean_env),
        cmocka_unit_test_setup(test_libpq_ssl_defaults, clean_env),
        cmocka_unit_test_setup(test_libpq_service_edge_cases, clean_env),
        cmocka_unit_test_setup(test_libpq_accepted_values, clean_env),
        cmocka_unit_test_setup(test_libpq_socket_path_length, clean_env),
        cmocka_unit_test_setup(test_libpq_trailing_backslash, clean_env),
        cmocka_unit_test_setup(test_libpq_startup_params, clean_env),
        cmocka_unit_test_setup(test_libpq_requiressl_env, clean_env),
        cmocka_unit_test_setup(test_libpq_pgpass_fields, clean_env),
        cmocka_unit_test_setup(test_libpq_client_encoding_locale, clean_env),
        cmocka_unit_test_setup(test_null_handles, clean_env),
        cmocka_unit_test_setup(test_peercred_socketpair, clean_env),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
}
