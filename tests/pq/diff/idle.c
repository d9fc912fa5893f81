/*
 * When the connection is idle again. PQgetResult hands out a command's
 * last result and stops before the ReadyForQuery behind it: until a call
 * parses that (the PQgetResult that returns NULL, PQisBusy, PQnotifies;
 * not PQconsumeInput, which only reads), libpq's connection is busy:
 * PQtransactionStatus says PQTRANS_ACTIVE, PQsend* refuses another
 * command, PQenterPipelineMode refuses (PQsetSingleRowMode accepts, for a
 * simple query's rows that will not come). And its error message then belongs
 * to a simple query still (PQescapeLiteral keeps it, the refusal appends
 * to it), where an extended query left libpq's queue with its last result.
 * Each case: a simple query, PQsendQueryParams and PQsendPrepare, failing
 * and not, with each call in between; and a COPY statement's end. Last, PQsetnonblocking, which
 * clears the message as the escape functions do (when it changes the mode), and writes what a
 * pipeline queued.
 */
#include "pqdiff.h"

typedef enum { SIMPLE, PARAMS, PREPARE } how_t;

static const char *const hows[] = {"simple", "params", "prepare"};
static const char *const betweens[] = {"nothing", "PQconsumeInput", "PQisBusy", "PQnotifies",
                                       "PQescapeLiteral"};

static int send_how(PGconn *conn, how_t how, const char *sql)
{
    switch (how) {
    case SIMPLE:
        return PQsendQuery(conn, sql);
    case PARAMS:
        return PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
    default:
        return PQsendPrepare(conn, "", sql, 0, NULL);
    }
}

static void between(PGconn *conn, int b)
{
    switch (b) {
    case 1:
        printf("  PQconsumeInput -> %d\n", PQconsumeInput(conn));
        break;
    case 2:
        printf("  PQisBusy -> %d\n", PQisBusy(conn));
        break;
    case 3: {
        PGnotify *n = PQnotifies(conn);
        printf("  PQnotifies -> %s\n", n ? "a notification" : "NULL");
        PQfreemem(n);
        break;
    }
    case 4: {
        char *e = PQescapeLiteral(conn, "it's", 4);
        pqd_print_str("  PQescapeLiteral", e);
        PQfreemem(e);
        break;
    }
    default:
        break;
    }
}

/* The last result of sql, then the call b, then what the connection says
 * and does; then the rest drained. then: 0 a PQsendQuery, 1
 * PQenterPipelineMode, 2 PQsetSingleRowMode. */
static void one(PGconn *conn, how_t how, const char *sql, int b, int then)
{
    static const char *const thens[] = {"PQsendQuery", "PQenterPipelineMode", "PQsetSingleRowMode"};
    printf("== %s %s, then %s, then %s\n", hows[how], sql, betweens[b], thens[then]);
    printf("  send -> %d\n", send_how(conn, how, sql));
    /* libpq parses the ReadyForQuery in the call after only if it read it
     * with the result: the server flushes an error before it */
    pqd_await_whole_answer(conn);
    PGresult *r = PQgetResult(conn);
    printf("  result %s\n", PQresStatus(PQresultStatus(r)));
    PQclear(r);
    pqd_print_str("  error message", PQerrorMessage(conn));
    between(conn, b);
    pqd_print_str("  error message", PQerrorMessage(conn));
    printf("  transaction status %s\n", pqd_txstatus(PQtransactionStatus(conn)));
    if (then == 1) {
        int ok = PQenterPipelineMode(conn);
        printf("  PQenterPipelineMode -> %d\n", ok);
        if (ok) printf("  PQexitPipelineMode -> %d\n", PQexitPipelineMode(conn));
    } else if (then == 2) {
        printf("  PQsetSingleRowMode -> %d\n", PQsetSingleRowMode(conn));
    } else {
        printf("  PQsendQuery -> %d\n", PQsendQuery(conn, "SELECT 'next'"));
    }
    pqd_print_str("  error message", PQerrorMessage(conn));
    pqd_drain(conn, "  rest");
    pqd_print_str("  error message after", PQerrorMessage(conn));
    printf("  transaction status %s\n", pqd_txstatus(PQtransactionStatus(conn)));
}

/* A COPY statement is a simple query to libpq: after its end's result,
 * before its NULL, it owns the error message and accepts single-row mode. */
static void copy_end(PGconn *conn)
{
    pqd_exec(conn, "CREATE TEMP TABLE idle_copy (a int)");
    static const char *const rows[] = {"bad\n", "1\n"};
    for (size_t k = 0; k < 2; k++) {
        printf("== COPY FROM STDIN of %s", rows[k]);
        printf("  send -> %d\n", PQsendQuery(conn, "COPY idle_copy FROM STDIN"));
        PGresult *r = PQgetResult(conn);
        printf("  result %s\n", PQresStatus(PQresultStatus(r)));
        PQclear(r);
        printf("  PQputCopyData -> %d\n", PQputCopyData(conn, rows[k], (int)strlen(rows[k])));
        printf("  PQputCopyEnd -> %d\n", PQputCopyEnd(conn, NULL));
        /* (what follows is the same whether libpq read the ReadyForQuery
         * with the result or not: no call parses it) */
        r = PQgetResult(conn);
        printf("  result %s\n", PQresStatus(PQresultStatus(r)));
        PQclear(r);
        char *e = PQescapeLiteral(conn, "x", 1);
        PQfreemem(e);
        pqd_print_str("  error message after PQescapeLiteral", PQerrorMessage(conn));
        printf("  transaction status %s\n", pqd_txstatus(PQtransactionStatus(conn)));
        printf("  PQsetSingleRowMode -> %d\n", PQsetSingleRowMode(conn));
        printf("  PQsendQuery -> %d\n", PQsendQuery(conn, "SELECT 'next'"));
        pqd_print_str("  error message", PQerrorMessage(conn));
        pqd_drain(conn, "  rest");
    }
}

static void set_nonblocking(PGconn *conn, int on)
{
    int rc = PQsetnonblocking(conn, on);
    printf("  PQsetnonblocking(%d) -> %d\n", on, rc);
    pqd_print_str("  error message", PQerrorMessage(conn));
}

static void nonblocking_switch(PGconn *conn)
{
    printf("== PQsetnonblocking\n");
    for (int on = 0; on < 2; on++) {
        PQclear(PQexec(conn, "SELECT 1/0"));
        pqd_print_str("  error message", PQerrorMessage(conn));
        set_nonblocking(conn, on); /* the mode it has: nothing changes */
        set_nonblocking(conn, !on);
        set_nonblocking(conn, on);
    }
    printf("== PQsetnonblocking while a simple query owns the message\n");
    PQsendQuery(conn, "SELECT 1/0");
    pqd_await_whole_answer(conn);
    PQclear(PQgetResult(conn));
    set_nonblocking(conn, 1);
    pqd_drain(conn, "  rest");
    set_nonblocking(conn, 0);
    printf("== PQsetnonblocking in a pipeline\n");
    PQenterPipelineMode(conn);
    PQsendQueryParams(conn, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 1/0", 0, NULL, NULL, NULL, NULL, 0);
    PQsendFlushRequest(conn);
    set_nonblocking(conn, 1); /* writes the queries: their results come */
    pqd_drain(conn, "  first");
    pqd_drain(conn, "  second");
    PQpipelineSync(conn);
    set_nonblocking(conn, 0);
    pqd_drain(conn, "  sync");
    printf("  PQexitPipelineMode -> %d\n", PQexitPipelineMode(conn));
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    static const char *const sqls[] = {"SELECT 1 AS one", "SELECT 1/0"};
    for (int nb = 0; nb < 2; nb++) {
        if (nb) {
            printf("== non-blocking\n");
            PQsetnonblocking(conn, 1);
        }
        for (int how = SIMPLE; how <= PREPARE; how++)
            for (size_t q = 0; q < 2; q++)
                for (int b = 0; b < 5; b++)
                    one(conn, (how_t)how, sqls[q], b, 0);
        for (int how = SIMPLE; how <= PARAMS; how++)
            for (int b = 0; b < 3; b += 2)
                for (int then = 1; then <= 2; then++)
                    one(conn, (how_t)how, sqls[0], b, then);
    }
    /* Inside a transaction block: the status once idle is the block's. */
    pqd_exec(conn, "BEGIN");
    one(conn, SIMPLE, "SELECT 2", 0, 0);
    one(conn, SIMPLE, "SELECT 2", 2, 0);
    pqd_exec(conn, "ROLLBACK");
    copy_end(conn);
    nonblocking_switch(conn);
    PQfinish(conn);
    return 0;
}
