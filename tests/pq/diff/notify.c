/*
 * LISTEN/NOTIFY: notifications from the same session and from another one,
 * with and without payload, PQnotifies (relname, extra, whether be_pid is
 * the sender's PQbackendPID) after PQexec and after PQconsumeInput, and
 * PQnotifies on a connection that has none.
 */
#include <poll.h>

#include "pqdiff.h"

static int print_notifies(PGconn *conn, PGconn *self, PGconn *other)
{
    PGnotify *n;
    int count = 0;
    while ((n = PQnotifies(conn)) != NULL) {
        const char *from = n->be_pid == PQbackendPID(self)    ? "self"
                           : n->be_pid == PQbackendPID(other) ? "other"
                                                              : "unknown";
        printf("notify relname=[%s] extra=[%s] from=%s\n", n->relname, n->extra, from);
        PQfreemem(n);
        count++;
    }
    return count;
}

/* Waits on the socket (PQconsumeInput) for `want` notifications. */
static void wait_notifies(PGconn *conn, PGconn *other, int want)
{
    int got = 0;
    for (int tries = 0; got < want && tries < 200; tries++) {
        struct pollfd p = {.fd = PQsocket(conn), .events = POLLIN};
        poll(&p, 1, 50);
        if (!PQconsumeInput(conn)) {
            printf("consumeInput failed: %s", PQerrorMessage(conn));
            return;
        }
        got += print_notifies(conn, conn, other);
    }
    printf("got %d of %d\n", got, want);
}

int main(void)
{
    pqd_init();
    PGconn *a = pqd_connect();
    PGconn *b = pqd_connect();
    printf("none yet: %s\n", PQnotifies(a) ? "notify" : "NULL");
    pqd_exec(a, "LISTEN chan1");
    pqd_exec(a, "LISTEN \"Chan 2\"");
    pqd_exec(a, "NOTIFY chan1");
    print_notifies(a, a, b);
    pqd_exec(a, "SELECT pg_notify('Chan 2', 'payload from self')");
    print_notifies(a, a, b);

    pqd_exec(b, "NOTIFY chan1, 'from other'");
    pqd_exec(b, "SELECT pg_notify('Chan 2', repeat('x', 3000))");
    wait_notifies(a, b, 2);

    /* Delivered inside a transaction only at its commit, in order. */
    pqd_exec(b, "BEGIN");
    pqd_exec(b, "NOTIFY chan1, 'first'");
    pqd_exec(b, "NOTIFY chan1, 'second'");
    pqd_exec(b, "NOTIFY chan1, 'first'");
    pqd_exec(b, "NOTIFY nolistener, 'lost'");
    pqd_exec(a, "SELECT 'before commit'");
    printf("before commit: %d\n", print_notifies(a, a, b));
    pqd_exec(b, "COMMIT");
    wait_notifies(a, b, 2);

    pqd_exec(a, "UNLISTEN chan1");
    pqd_exec(b, "NOTIFY chan1, 'unheard'");
    pqd_exec(b, "NOTIFY \"Chan 2\", 'heard'");
    wait_notifies(a, b, 1);
    pqd_exec(a, "UNLISTEN *");
    PQfinish(a);
    PQfinish(b);
    return 0;
}
