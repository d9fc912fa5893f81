/*
 * A program with its own poll loop, as psycopg and pg-native drive libpq:
 * PQconnectStartParams + PQconnectPoll on PQsocket (25 times over SCRAM
 * too: no wait may go unanswered), then non-blocking
 * PQsendQuery* / PQflush, waiting on PQsocket, PQconsumeInput and PQisBusy
 * before each PQgetResult (which then must not block), for plain queries, a
 * large parameter that needs several flushes, an error, COPY OUT read with
 * async PQgetCopyData, and a notification. How many turns the loop takes
 * depends on timing: only what the results say is printed.
 */
#include <poll.h>

#include "pqdiff.h"

static void wait_socket(PGconn *conn, short events)
{
    struct pollfd p = {.fd = PQsocket(conn), .events = events};
    poll(&p, 1, 5000);
}

/* Flush everything queued, waiting for the socket as PQflush asks. */
static void flush_all(PGconn *conn)
{
    int rc;
    while ((rc = PQflush(conn)) == 1)
        wait_socket(conn, POLLIN | POLLOUT), PQconsumeInput(conn);
    if (rc < 0) printf("flush failed: %s", PQerrorMessage(conn));
}

/* Results without ever blocking: PQgetResult only once PQisBusy is 0. */
static void results(PGconn *conn, const char *label)
{
    for (int i = 0;; i++) {
        while (PQisBusy(conn)) {
            wait_socket(conn, POLLIN);
            if (!PQconsumeInput(conn)) {
                printf("consumeInput failed: %s", PQerrorMessage(conn));
                return;
            }
        }
        char l[64];
        snprintf(l, sizeof l, "%s#%d", label, i);
        PGresult *r = PQgetResult(conn);
        pqd_print_result(l, r);
        if (!r) return;
        ExecStatusType st = PQresultStatus(r);
        PQclear(r);
        if (st == PGRES_COPY_OUT) {
            char *buf;
            int n;
            while ((n = PQgetCopyData(conn, &buf, 1)) >= 0) {
                if (n == 0) {
                    wait_socket(conn, POLLIN);
                    PQconsumeInput(conn);
                    continue;
                }
                printf("  copy row [%.*s]\n", n - 1, buf);
                PQfreemem(buf);
            }
            printf("  getCopyData -> %d\n", n);
        }
    }
}

/* SCRAM through PQconnectStart + PQconnectPoll, waiting for exactly what
 * each PQconnectPoll asks: a connect whose wait sees nothing for 5 s
 * stalled (the library asked to read where the server waits for us). */
static void scram_polled(int rounds)
{
    const char *keys[] = {"host", "port", "user", "password", "dbname", NULL};
    const char *vals[] = {getenv("PGHOST"),
                          getenv("PGPORT"),
                          getenv("PGW_TEST_SCRAM_USER"),
                          getenv("PGW_TEST_SCRAM_PASSWORD"),
                          getenv("PGDATABASE"),
                          NULL};
    int ok = 0, stalled = 0, failed = 0;
    for (int i = 0; i < rounds; i++) {
        PGconn *conn = PQconnectStartParams(keys, vals, 0);
        PostgresPollingStatusType st =
            PQstatus(conn) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING;
        int stall = 0;
        while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
            struct pollfd p = {.fd = PQsocket(conn),
                               .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
            if (poll(&p, 1, 5000) == 0) stall = 1;
            st = PQconnectPoll(conn);
        }
        if (stall)
            stalled++;
        else if (st == PGRES_POLLING_OK)
            ok++;
        else
            failed++;
        PQfinish(conn);
    }
    printf("scram polled connects: ok=%d stalled=%d failed=%d\n", ok, stalled, failed);
}

int main(void)
{
    pqd_init();
    const char *keys[] = {"host", "port", "user", "dbname", NULL};
    const char *vals[] = {getenv("PGHOST"), getenv("PGPORT"), getenv("PGUSER"),
                          getenv("PGDATABASE"), NULL};
    PGconn *conn = PQconnectStartParams(keys, vals, 0);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        wait_socket(conn, st == PGRES_POLLING_READING ? POLLIN : POLLOUT);
        st = PQconnectPoll(conn);
    }
    printf("connectPoll %s status=%s\n", st == PGRES_POLLING_OK ? "OK" : "FAILED",
           pqd_connstatus(PQstatus(conn)));
    scram_polled(25);
    printf("setnonblocking -> %d isnonblocking=%d\n", PQsetnonblocking(conn, 1),
           PQisnonblocking(conn));

    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1 AS a; SELECT 'two' AS b"));
    flush_all(conn);
    results(conn, "simple");

    /* 4 MB of parameter: several PQflush calls in non-blocking mode. */
    size_t big = 4 << 20;
    char *param = malloc(big + 1);
    memset(param, 'x', big);
    param[big] = 0;
    const char *values[] = {param};
    printf("send big -> %d\n",
           PQsendQueryParams(conn, "SELECT length($1::text) AS len, md5($1::text) AS md5", 1, NULL,
                             values, NULL, NULL, 0));
    flush_all(conn);
    results(conn, "big");
    free(param);

    printf("send error -> %d\n", PQsendQuery(conn, "SELECT 1; SELECT 1/0; SELECT 3"));
    flush_all(conn);
    results(conn, "error");

    printf(
        "send copy -> %d\n",
        PQsendQuery(conn, "COPY (SELECT g, repeat('y', g) FROM generate_series(1,4) g) TO STDOUT"));
    flush_all(conn);
    results(conn, "copy");

    printf("send listen -> %d\n", PQsendQuery(conn, "LISTEN async_chan; NOTIFY async_chan, 'p'"));
    flush_all(conn);
    results(conn, "listen");
    PGnotify *n = PQnotifies(conn);
    if (n) {
        printf("notify %s [%s] self=%d\n", n->relname, n->extra, n->be_pid == PQbackendPID(conn));
        PQfreemem(n);
    } else {
        printf("no notification\n");
    }

    printf("setnonblocking -> %d\n", PQsetnonblocking(conn, 0));
    PQfinish(conn);
    return 0;
}
