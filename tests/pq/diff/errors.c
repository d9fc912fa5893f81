/*
 * Error results: every PG_DIAG_* field, PQresultErrorMessage and
 * PQresultVerboseErrorMessage at every verbosity and context visibility, for
 * a syntax error with a position, an internal query position, constraint
 * violations (unique, foreign key, check, not null), RAISE with detail, hint
 * and errcode, a division by zero in a function; PQerrorMessage after each;
 * errors of PQexecParams (a parameter the SQL does not use, with and
 * without paramTypes), PQprepare, a fatal error that ends the session, and
 * a socket the program closed.
 */
#include "pqdiff.h"

static void err(PGconn *conn, const char *sql)
{
    printf("== ");
    pqd_print_str("sql", sql);
    pqd_show_error(conn, PQexec(conn, sql));
}

/* Terminates conn's backend from another session and waits until it is
 * gone: its FATAL error and the close wait on conn's socket, unread. */
static void terminate_idle(PGconn *conn)
{
    PGconn *other = pqd_connect();
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", PQbackendPID(conn));
    PQclear(PQexec(other, sql));
    snprintf(sql, sizeof sql, "SELECT 1 FROM pg_stat_activity WHERE pid = %d", PQbackendPID(conn));
    for (int i = 0; i < 500; i++) { /* until the backend is gone */
        PGresult *r = PQexec(other, sql);
        int gone = PQntuples(r) == 0;
        PQclear(r);
        if (gone) break;
        usleep(10000);
    }
    PQfinish(other);
}

/* Terminated while idle: the next query's results begin with the FATAL,
 * then the loss (whether or not the query's send fails, as libpq reads
 * on). */
static void terminated_while_idle(void)
{
    printf("== terminated while idle\n");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "idle");
    terminate_idle(conn);
    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1"));
    pqd_drain(conn, "after");
    printf("status=%s errmsg=[%s]\n", pqd_connstatus(PQstatus(conn)), PQerrorMessage(conn));
    PQfinish(conn);
}

/* Terminated while idle, read by a program's own loop (a LISTEN loop):
 * the FATAL goes to the notice processor, as libpq parses it with no
 * command running, and a PQconsumeInput returns 0 with the loss. How many
 * calls returned 1 before is not printed: libpq finds the close one read
 * after the FATAL, this library in the same one (src/pq/README.md). */
static void terminated_while_listening(void)
{
    printf("== terminated while idle, read by PQconsumeInput\n");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "listen");
    terminate_idle(conn);
    int ok = 1;
    for (int i = 0; i < 100 && ok; i++) {
        ok = PQconsumeInput(conn);
        PGnotify *n = PQnotifies(conn);
        if (n) printf("notification %s\n", n->relname);
        PQfreemem(n);
        if (ok) usleep(10000);
    }
    printf("consume -> %d status=%s busy=%d\n", ok, pqd_connstatus(PQstatus(conn)), PQisBusy(conn));
    printf("errmsg=[%s]\n", PQerrorMessage(conn));
    PGresult *r = PQgetResult(conn);
    printf("result %s\n", r ? PQresStatus(PQresultStatus(r)) : "NULL");
    PQclear(r);
    PQfinish(conn);
}

/* The program closes the connection's socket under it: the send and the
 * read fail with an errno other than a reset, which libpq's message names
 * ("could not receive data from server: Bad file descriptor", over TLS
 * with the TLS layer's line after it) where a reset or EOF gets "server
 * closed the connection unexpectedly". */
static void socket_closed_under_it(const char *label, const char *const *extra)
{
    printf("== socket closed under the connection, %s\n", label);
    PGconn *conn = pqd_connect_with(extra);
    printf("ssl=%d\n", PQsslInUse(conn));
    close(PQsocket(conn));
    pqd_show_error(conn, PQexec(conn, "SELECT 1"));
    printf("errmsg=[%s]\n", PQerrorMessage(conn));
    printf("status=%s\n", pqd_connstatus(PQstatus(conn)));
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "errors");
    pqd_exec(conn, "CREATE TEMP TABLE parent (id int PRIMARY KEY)");
    pqd_exec(conn, "CREATE TEMP TABLE child (id int PRIMARY KEY, pid int REFERENCES parent,"
                   " n int NOT NULL, CONSTRAINT positive CHECK (n > 0))");
    pqd_exec(conn, "INSERT INTO parent VALUES (1)");
    pqd_exec(conn, "INSERT INTO child VALUES (1, 1, 1)");
    pqd_exec(conn, "CREATE FUNCTION pg_temp.divide(a int, b int) RETURNS int LANGUAGE plpgsql"
                   " AS $$ BEGIN RETURN a / b; END $$");

    err(conn, "SELECT 1 FROM\nWHERE x = 1");
    err(conn, "SELECT * FROM no_such_table");
    err(conn, "SELECT 'abc'::int");
    err(conn, "INSERT INTO child VALUES (1, 1, 1)");
    err(conn, "INSERT INTO child VALUES (2, 99, 1)");
    err(conn, "INSERT INTO child VALUES (3, 1, -1)");
    err(conn, "INSERT INTO child VALUES (4, 1, NULL)");
    err(conn, "DO $$ BEGIN RAISE EXCEPTION 'custom % failure', 42 USING DETAIL = 'the detail',"
              " HINT = 'the hint', ERRCODE = 'P1234', SCHEMA = 's', TABLE = 't', COLUMN = 'c',"
              " DATATYPE = 'd', CONSTRAINT = 'k'; END $$");
    err(conn, "SELECT pg_temp.divide(1, 0)");
    err(conn, "DO $$ BEGIN EXECUTE 'SELECT * FROM nowhere_at_all'; END $$");
    err(conn, "SELECT 1/0 FROM generate_series(1,3)");
    err(conn, "SELECT E'\\xff'");
    err(conn, "SELECT repeat('é', 3)::varchar(2)::text, 'x' || 1 + 2");

    printf("== execParams error\n");
    pqd_show_error(conn, PQexecParams(conn, "SELECT $1::int", 1, NULL, (const char *[]){"nope"},
                                      NULL, NULL, 0));
    /* A parameter the SQL does not use: without paramTypes libpq's Parse
     * names no type, so the Bind supplies more than the statement takes;
     * with a type named (0 included) the statement has the parameter and
     * its type cannot be determined. */
    static const Oid unknown[] = {0, 0}, typed[] = {23, 0};
    const char *two[] = {"1", "2"};
    printf("== execParams unused parameter, no types\n");
    pqd_show_error(conn, PQexecParams(conn, "SELECT 1", 1, NULL, two, NULL, NULL, 0));
    printf("== execParams unused parameter, type 0\n");
    pqd_show_error(conn, PQexecParams(conn, "SELECT 1", 1, unknown, two, NULL, NULL, 0));
    printf("== execParams second parameter unused, types 23 and 0\n");
    pqd_show_error(conn, PQexecParams(conn, "SELECT $1", 2, typed, two, NULL, NULL, 0));
    printf("== execParams second parameter unused, no types\n");
    pqd_show_error(conn, PQexecParams(conn, "SELECT $1", 2, NULL, two, NULL, NULL, 0));
    printf("== prepare error\n");
    pqd_show_error(conn, PQprepare(conn, "bad", "SELEC 1", 0, NULL));
    printf("== exec unknown prepared\n");
    pqd_show_error(conn, PQexecPrepared(conn, "bad", 0, NULL, NULL, NULL, 0));

    /* The session ends: a FATAL error, then the connection is bad. */
    printf("== terminate\n");
    pqd_show_error(conn, PQexec(conn, "SELECT pg_terminate_backend(pg_backend_pid())"));
    printf("status=%s socket=%s\n", pqd_connstatus(PQstatus(conn)),
           PQsocket(conn) >= 0 ? "set" : "-1");
    pqd_show_error(conn, PQexec(conn, "SELECT 1"));
    printf("status=%s socket=%s\n", pqd_connstatus(PQstatus(conn)),
           PQsocket(conn) >= 0 ? "set" : "-1");
    PQfinish(conn);

    terminated_while_idle();
    terminated_while_listening();
    socket_closed_under_it("unix socket", NULL);
    const char *tcp = pqd_env("PGW_TEST_TCP_HOST", "127.0.0.1");
    socket_closed_under_it("TLS", (const char *[]){"host", tcp, "sslmode", "require", NULL});
    return 0;
}
