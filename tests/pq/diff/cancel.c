/*
 * Cancel: PQgetCancel/PQcancel of a running pg_sleep (the error result and
 * its fields), PQcancel when nothing runs, PQrequestCancel, a cancel sent by
 * hand from libpq's own PGcancel members (as ruby-pg sends it), and the
 * connection's state afterwards. The cancel is sent only once the server
 * shows the query as active, so the outcome does not depend on timing.
 */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "pqdiff.h"

/* The start of libpq 15's struct pg_cancel (libpq-int.h), which ruby-pg
 * 1.4 copies to send a cancel of its own. */
struct libpq_cancel_head {
    struct {
        struct sockaddr_storage addr;
        socklen_t salen;
    } raddr;
    int be_pid;
    int be_key;
};

/* As ruby-pg's cancel: the CancelRequest built from the PGcancel's members,
 * sent on a new connection to its address; the server closes it. */
static int cancel_by_hand(PGconn *conn)
{
    PGcancel *c = PQgetCancel(conn);
    const struct libpq_cancel_head *h = (const struct libpq_cancel_head *)c;
    printf("head: be_pid %s\n", h->be_pid == PQbackendPID(conn) ? "= PQbackendPID" : "wrong");
    uint32_t req[4] = {htonl(16), htonl(80877102), htonl((uint32_t)h->be_pid),
                       htonl((uint32_t)h->be_key)};
    int fd = socket(h->raddr.addr.ss_family, SOCK_STREAM, 0);
    int ok = fd >= 0 && connect(fd, (const struct sockaddr *)&h->raddr.addr, h->raddr.salen) == 0 &&
             send(fd, req, sizeof req, 0) == (ssize_t)sizeof req;
    char b;
    if (ok) ok = recv(fd, &b, 1, 0) == 0; /* until the server closes */
    if (fd >= 0) close(fd);
    PQfreeCancel(c);
    return ok;
}

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
    if (use_request == 2) {
        printf("by hand -> %d\n", cancel_by_hand(conn));
    } else if (use_request) {
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
    cancel_sleep(conn, watcher, 2);

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
