/*
 * Cancel: PQgetCancel/PQcancel of a running pg_sleep (the error result and
 * its fields), PQcancel when nothing runs, PQrequestCancel, and the
 * connection's state afterwards. The cancel is sent only once the server
 * shows the query as active, so the outcome does not depend on timing.
 */
#include "pqdiff.h"

static void wait_active(PGconn *watcher, PGconn *conn)
{
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT 1 FROM pg_stat_activity WHERE pid = %d AND state = 'active'"
             " AND query LIKE 'SELECT pg_sleep%%'",
             PQbackendPID(conn));
    for (int i = 0; i < 1000; i++) {
        PGresult *r = PQexec(watcher, sql);
        int found = PQntuples(r) == 1;
        PQclear(r);
        if (found) return;
        usleep(10000);
    }
    printf("the query never became active\n");
}

static void cancel_sleep(PGconn *conn, PGconn *watcher, int use_request)
{
    printf("send -> %d\n", PQsendQuery(conn, "SELECT pg_sleep(60)"));
    wait_active(watcher, conn);
    if (use_request) {
        printf("requestCancel -> %d\n", PQrequestCancel(conn));
    } else {
        char err[256] = "untouched";
        PGcancel *c = PQgetCancel(conn);
        printf("getCancel: %s\n", c ? "set" : "NULL");
        printf("cancel -> %d err=[%s]\n", PQcancel(c, err, sizeof err), err);
        PQfreeCancel(c);
    }
    pqd_drain(conn, "r");
    printf("tx=%s status=%s\n", pqd_txstatus(PQtransactionStatus(conn)),
           pqd_connstatus(PQstatus(conn)));
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PGconn *watcher = pqd_connect();
    cancel_sleep(conn, watcher, 0);
    pqd_exec(conn, "SELECT 'still usable'");

    /* Inside a transaction: it is left in error. */
    pqd_exec(conn, "BEGIN");
    cancel_sleep(conn, watcher, 0);
    pqd_exec(conn, "SELECT 1");
    pqd_exec(conn, "ROLLBACK");

    cancel_sleep(conn, watcher, 1);

    /* Nothing running: the request is sent and ignored. */
    char err[256] = "untouched";
    PGcancel *c = PQgetCancel(conn);
    printf("idle cancel -> %d err=[%s]\n", PQcancel(c, err, sizeof err), err);
    pqd_exec(conn, "SELECT 'after idle cancel'");
    printf("cancel NULL -> %d", PQcancel(NULL, err, sizeof err));
    printf(" err=[%s]\n", err);
    PQfinish(conn);
    /* The PGcancel outlives its connection. */
    printf("after finish -> %d err=[%s]\n", PQcancel(c, err, sizeof err), err);
    PQfreeCancel(c);
    printf("getCancel(NULL): %s\n", PQgetCancel(NULL) ? "set" : "NULL");
    PQfinish(watcher);
    return 0;
}
