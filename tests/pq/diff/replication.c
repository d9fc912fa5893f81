/*
 * COPY BOTH, as pg_recvlogical and pg_receivewal drive it: on a
 * replication=database connection, a temporary logical slot
 * (test_decoding), a transaction made on another connection, then
 * START_REPLICATION: PGRES_COPY_BOTH, the server's XLogData read with a
 * blocking PQgetCopyData, a standby status update sent with PQputCopyData,
 * our end with PQputCopyEnd, the server's rest until -1, and the results
 * after it. Keepalives and positions change between runs: only the
 * decoded changes are printed.
 */
#include "pqdiff.h"

/* XLogData: 'w', start, end, clock (8 bytes each), then the change. */
enum { XLOGDATA_HEADER = 1 + 8 + 8 + 8 };

int main(void)
{
    pqd_init();
    PGconn *sql = pqd_connect();
    static const char *const repl[] = {"replication", "database", NULL};
    PGconn *conn = pqd_connect_with(repl);
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("connect failed: %s", PQerrorMessage(conn));
        return 1;
    }
    pqd_show_shape("slot", PQexec(conn, "CREATE_REPLICATION_SLOT pqdiff_slot TEMPORARY LOGICAL "
                                        "test_decoding"));
    pqd_exec(sql, "DROP TABLE IF EXISTS pqdiff_repl");
    pqd_exec(sql, "CREATE TABLE pqdiff_repl (id int PRIMARY KEY, t text)");
    pqd_exec(sql, "INSERT INTO pqdiff_repl VALUES (1, 'one'), (2, 'two')");
    pqd_exec(sql, "UPDATE pqdiff_repl SET t = 'last' WHERE id = 2");

    pqd_show_shape("start", PQexec(conn, "START_REPLICATION SLOT pqdiff_slot LOGICAL 0/0 "
                                         "(\"include-xids\" '0', \"skip-empty-xacts\" '1')"));
    /* Until the UPDATE: the changes of our table only (other programs of
     * the suite may write to other tables of the database meanwhile). The
     * data is NUL-terminated, as libpq's PQgetCopyData promises. */
    int n = 0, updated = 0;
    char *buf;
    while (!updated && (n = PQgetCopyData(conn, &buf, 0)) > 0) {
        const char *change = buf + XLOGDATA_HEADER;
        int len = n - XLOGDATA_HEADER;
        if (buf[0] == 'w' && len > 0 && strstr(change, "pqdiff_repl")) {
            printf("change [%.*s]\n", len, change);
            updated = strstr(change, "UPDATE") != NULL;
        }
        PQfreemem(buf);
    }
    printf("getCopyData -> %s\n", n > 0 ? "data" : "end");
    /* A standby status update: written, flushed and applied up to 0/1. */
    char reply[1 + 8 * 4 + 1] = {'r'};
    reply[8] = reply[16] = reply[24] = 1;
    printf("status update -> %d\n", PQputCopyData(conn, reply, (int)sizeof reply));
    printf("flush -> %d\n", PQflush(conn));
    printf("copy end -> %d\n", PQputCopyEnd(conn, NULL));
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0)
        PQfreemem(buf);
    printf("getCopyData -> %d\n", n);
    PGresult *r;
    while ((r = PQgetResult(conn)))
        pqd_show_shape("after", r);
    pqd_show_shape("identify", PQexec(conn, "IDENTIFY_SYSTEM"));
    printf("putCopyData outside COPY -> %d\n", PQputCopyData(conn, "x", 1));
    pqd_exec(sql, "DROP TABLE pqdiff_repl");
    PQfinish(conn);
    PQfinish(sql);
    return 0;
}
