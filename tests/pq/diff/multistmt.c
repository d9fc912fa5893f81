/*
 * PQexec and PQsendQuery of multi-statement strings: PQexec keeps the last
 * result (or the error), PQsendQuery gives them all; empty queries,
 * transaction blocks inside a string, and the transaction status after each.
 */
#include "pqdiff.h"

static void both(PGconn *conn, const char *sql)
{
    pqd_exec(conn, sql);
    printf("  tx=%s\n", pqd_txstatus(PQtransactionStatus(conn)));
    printf("send -> %d\n", PQsendQuery(conn, sql));
    printf("  tx while busy=%s\n", pqd_txstatus(PQtransactionStatus(conn)));
    pqd_drain(conn, "  r");
    printf("  tx=%s\n", pqd_txstatus(PQtransactionStatus(conn)));
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "multi");
    both(conn, "SELECT 1 AS one; SELECT 2 AS two");
    both(conn, "SELECT 1; SELECT 1/0; SELECT 3");
    both(conn, "");
    both(conn, ";;;");
    both(conn, "  -- just a comment\n");
    both(conn, "CREATE TEMP TABLE IF NOT EXISTS ms(a int); INSERT INTO ms VALUES (1),(2); "
               "UPDATE ms SET a = a + 1; DELETE FROM ms WHERE a = 3");
    both(conn, "DROP TABLE IF EXISTS no_such_table_here; SELECT count(*) FROM ms");
    both(conn, "BEGIN; SELECT 1/0; COMMIT");
    pqd_exec(conn, "ROLLBACK");
    both(conn, "BEGIN; INSERT INTO ms VALUES (7)");
    both(conn, "SELECT a FROM ms; COMMIT");
    both(conn, "SELECT 1; VACUUM ms");
    both(conn, "SELECT 'a' AS x UNION ALL SELECT 'b'; SELECT; SELECT NULL AS n");
    both(conn, "SELEC 1; SELECT 2");
    PQfinish(conn);
    return 0;
}
