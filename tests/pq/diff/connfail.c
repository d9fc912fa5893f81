/*
 * Connections that fail: nothing listening at a TCP port or a socket
 * directory, a wrong password, no password, an unknown role and database,
 * a bad connection string; PQstatus, PQerrorMessage,
 * PQconnectionNeedsPassword, PQconnectionUsedPassword of each; the same
 * through PQconnectStart/PQconnectPoll; PQping of each; and a good password.
 */
#include <poll.h>

#include "pqdiff.h"

static void report(PGconn *conn)
{
    printf("  status=%s needsPassword=%d usedPassword=%d\n", pqd_connstatus(PQstatus(conn)),
           PQconnectionNeedsPassword(conn), PQconnectionUsedPassword(conn));
    pqd_print_str("  error", PQerrorMessage(conn));
}

static void attempt(const char *what, const char *const *extra)
{
    printf("== %s\n", what);
    PGconn *conn = pqd_connect_with(extra);
    report(conn);
    PQfinish(conn);
}

static void attempt_string(const char *conninfo)
{
    printf("== connectdb ");
    pqd_print_str("conninfo", conninfo);
    PGconn *conn = PQconnectdb(conninfo);
    report(conn);
    PQfinish(conn);
    printf("  ping -> %d\n", (int)PQping(conninfo));

    /* The non-blocking way ends in the same state with the same message.
     * PQconnectStart fails only when no attempt could start a connect: a
     * TCP port that refuses at once leaves its socket to wait on, and the
     * first PQconnectPoll fails (psycopg 3 words the two differently). */
    conn = PQconnectStart(conninfo);
    printf("  after PQconnectStart: %s, %s\n", PQstatus(conn) == CONNECTION_BAD ? "bad" : "not bad",
           PQsocket(conn) >= 0 ? "a socket" : "no socket");
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    if (PQstatus(conn) == CONNECTION_BAD) st = PGRES_POLLING_FAILED;
    for (int i = 0; i < 10000 && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED; i++) {
        struct pollfd p = {.fd = PQsocket(conn),
                           .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        poll(&p, 1, 1000);
        st = PQconnectPoll(conn);
    }
    printf("  connectPoll ends %s\n", st == PGRES_POLLING_OK       ? "OK"
                                      : st == PGRES_POLLING_FAILED ? "FAILED"
                                                                   : "?");
    report(conn);
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    const char *tcp = pqd_env("PGW_TEST_TCP_HOST", "127.0.0.1");
    const char *scram = pqd_env("PGW_TEST_SCRAM_USER", "pgw_scram");
    const char *scram_pw = pqd_env("PGW_TEST_SCRAM_PASSWORD", "");
    const char *md5 = pqd_env("PGW_TEST_MD5_USER", "pgw_md5");
    const char *clear = pqd_env("PGW_TEST_CLEAR_USER", "pgw_clear");

    attempt("tcp port 1", (const char *[]){"host", tcp, "port", "1", NULL});
    attempt("no socket directory", (const char *[]){"host", "/nonexistent/dir", NULL});
    attempt("two hosts, both failing",
            (const char *[]){"host", "/nonexistent/a,/nonexistent/b", "port", "1,2", NULL});
    attempt("scram wrong password",
            (const char *[]){"host", tcp, "user", scram, "password", "wrong", NULL});
    attempt("scram no password", (const char *[]){"host", tcp, "user", scram, NULL});
    attempt("md5 wrong password",
            (const char *[]){"host", tcp, "user", md5, "password", "wrong", NULL});
    attempt("cleartext wrong password", (const char *[]){"user", clear, "password", "wrong", NULL});
    attempt("unknown role", (const char *[]){"user", "no_such_role", NULL});
    attempt("unknown database", (const char *[]){"dbname", "no_such_db", NULL});
    attempt("bad option", (const char *[]){"bogus", "1", NULL});
    attempt("bad sslmode", (const char *[]){"sslmode", "sometimes", NULL});
    attempt("scram right password",
            (const char *[]){"host", tcp, "user", scram, "password", scram_pw, NULL});

    char s[512];
    attempt_string("host=/nonexistent/dir");
    snprintf(s, sizeof s, "host=%s port=1 connect_timeout=5", tcp);
    attempt_string(s);
    snprintf(s, sizeof s, "host=%s port=%s user=%s password=wrong", tcp, pqd_env("PGPORT", ""),
             scram);
    attempt_string(s);
    snprintf(s, sizeof s, "host=%s port=%s user=no_such_role", pqd_env("PGHOST", ""),
             pqd_env("PGPORT", ""));
    attempt_string(s);
    attempt_string("port=notanumber");
    attempt_string("postgresql://%zz");
    snprintf(s, sizeof s, "host=%s port=%s", pqd_env("PGHOST", ""), pqd_env("PGPORT", ""));
    attempt_string(s);
    printf("ping(NULL conninfo params) -> %d\n",
           (int)PQpingParams((const char *[]){"bogus", NULL}, (const char *[]){"x", NULL}, 0));
    return 0;
}
