/*
 * BASE_BACKUP on a replication connection, as pg_basebackup sends it: the
 * start position and tablespace rows, then the archive as one COPY TO that
 * ends without a CommandComplete of its own, then the end position and the
 * command's CommandComplete. Read with a blocking PQgetCopyData after
 * PQsendQuery, and with PQexec then PQgetCopyData(async) over
 * PQconsumeInput and the socket, as pg_basebackup reads it; and a refused
 * BASE_BACKUP. Positions and sizes change between runs: the results print
 * their shape, the archive its messages' kinds.
 */
#include <sys/select.h>

#include "pqdiff.h"

/* The archive's CopyData, each begun by its kind: 'n' a new archive (its
 * name follows), 'd' archive data, 'p' progress, 'm' the manifest. */
typedef struct {
    long kinds[256];
    long bytes;
} archive_t;

static void take(archive_t *a, const char *buf, int n)
{
    a->kinds[(unsigned char)buf[0]]++;
    a->bytes += n;
    if (buf[0] == 'n') {
        printf("archive [");
        pqd_print_escaped(buf + 1, (size_t)n - 1);
        printf("]\n");
    }
}

static void report(const archive_t *a, int last)
{
    printf("copy -> %d: new %ld manifest %ld data %s\n", last, a->kinds['n'], a->kinds['m'],
           a->kinds['d'] > 0 && a->bytes > 0 ? "some" : "none");
}

static void drain_shapes(PGconn *conn, const char *label)
{
    PGresult *r;
    while ((r = PQgetResult(conn)))
        pqd_show_shape(label, r);
    printf("%s: NULL\n", label);
}

static const char backup[] = "BASE_BACKUP (LABEL 'pqdiff', CHECKPOINT 'fast', WAIT 0, "
                             "MANIFEST 'yes', TARGET 'client')";

int main(void)
{
    pqd_init();
    static const char *const repl[] = {"replication", "true", NULL};
    PGconn *conn = pqd_connect_with(repl);
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("connect failed: %s", PQerrorMessage(conn));
        return 1;
    }

    printf("== send, blocking reads\n");
    printf("send -> %d\n", PQsendQuery(conn, backup));
    pqd_show_shape("start", PQgetResult(conn));
    pqd_show_shape("tablespaces", PQgetResult(conn));
    pqd_show_shape("copy", PQgetResult(conn));
    archive_t a = {{0}, 0};
    char *buf;
    int n;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        take(&a, buf, n);
        PQfreemem(buf);
    }
    report(&a, n);
    drain_shapes(conn, "after");

    printf("== exec, reads as pg_basebackup's\n");
    pqd_show_shape("exec", PQexec(conn, backup));
    memset(&a, 0, sizeof a);
    for (;;) {
        n = PQgetCopyData(conn, &buf, 1);
        if (n > 0) {
            take(&a, buf, n);
            PQfreemem(buf);
        } else if (n == 0) {
            fd_set rd;
            FD_ZERO(&rd);
            FD_SET(PQsocket(conn), &rd);
            if (select(PQsocket(conn) + 1, &rd, NULL, NULL, NULL) < 0 || !PQconsumeInput(conn)) {
                printf("wait failed: %s", PQerrorMessage(conn));
                break;
            }
        } else {
            break;
        }
    }
    report(&a, n);
    drain_shapes(conn, "after");

    printf("== refused\n");
    pqd_show_shape("bad", PQexec(conn, "BASE_BACKUP (TARGET 'nowhere')"));
    pqd_show_shape("identify", PQexec(conn, "IDENTIFY_SYSTEM"));
    printf("status %s\n", pqd_connstatus(PQstatus(conn)));
    PQfinish(conn);
    return 0;
}
