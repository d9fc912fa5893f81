/*
 * Single-row mode: PGRES_SINGLE_TUPLE results then an empty PGRES_TUPLES_OK,
 * an error in the middle of the rows, the calls refused at the wrong time,
 * and a multi-statement string.
 */
#include "pqdiff.h"

static void run(PGconn *conn, const char *sql, int params)
{
    printf("== %s (%s)\n", sql, params ? "params" : "simple");
    int ok = params ? PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0)
                    : PQsendQuery(conn, sql);
    printf("send -> %d\n", ok);
    printf("singleRow -> %d\n", PQsetSingleRowMode(conn));
    printf("singleRow again -> %d\n", PQsetSingleRowMode(conn));
    pqd_drain(conn, "r");
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    printf("singleRow when idle -> %d\n", PQsetSingleRowMode(conn));
    run(conn, "SELECT g, 'x' || g AS s FROM generate_series(1,3) g", 0);
    run(conn, "SELECT g, 'x' || g AS s FROM generate_series(1,3) g", 1);
    run(conn, "SELECT g FROM generate_series(1,0) g", 1);
    run(conn, "SELECT 10 / (3 - g) FROM generate_series(1,5) g", 1);
    run(conn, "SELECT 1 AS a; SELECT 2 AS b, 3 AS c; SELECT 1/0", 0);
    run(conn, "CREATE TEMP TABLE srt(a int); INSERT INTO srt SELECT generate_series(1,2)", 0);
    run(conn, "SELECT a FROM srt", 0);

    /* Too late: the first result was already taken. */
    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1; SELECT 2"));
    pqd_show("first", PQgetResult(conn));
    printf("singleRow late -> %d\n", PQsetSingleRowMode(conn));
    pqd_drain(conn, "rest");
    PQfinish(conn);
    return 0;
}
