/*
 * Single-row mode: PGRES_SINGLE_TUPLE results then an empty PGRES_TUPLES_OK,
 * an error in the middle of the rows, the calls refused at the wrong time,
 * a multi-statement string, and notices raised among the rows (also in
 * pipeline mode): the whole answer read at once (so the order of the
 * notices among the rows does not depend on when the server's writes
 * arrive), and taken row by row as it comes.
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

/* A notice while each row is made (and one before them, one after). */
static void noisy(PGconn *conn, const char *sql, int params)
{
    printf("== %s (%s, read at once)\n", sql, params ? "params" : "simple");
    int ok = params ? PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0)
                    : PQsendQuery(conn, sql);
    printf("send -> %d singleRow -> %d\n", ok, PQsetSingleRowMode(conn));
    pqd_await_whole_answer(conn);
    pqd_drain(conn, "r");
}

/* The same in pipeline mode (set while the query waits in the pipeline,
 * at the head of its queue). */
static void noisy_pipeline(PGconn *conn, const char *sql)
{
    printf("== %s (pipeline, read at once)\n", sql);
    int on = PQenterPipelineMode(conn);
    int ok = PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
    int single = PQsetSingleRowMode(conn);
    int sync = PQpipelineSync(conn);
    printf("pipeline -> %d send -> %d singleRow -> %d sync -> %d\n", on, ok, single, sync);
    pqd_await_whole_answer(conn);
    pqd_read_until_syncs(conn, 1);
    printf("exit -> %d\n", PQexitPipelineMode(conn));
}

/* In a pipeline, the mode set for a query whose first rows (and the
 * notices among them) came with the result before it, the query then
 * waiting on a lock another session holds: libpq, which parses only what
 * the caller asks for, hands them out one by one all the same. (What came
 * is the server's first 8 kB of output, which it flushed when its buffer
 * filled: less than libpq's buffer of 16 kB, so that both libraries read
 * the same bytes before the lock goes.) */
static void read_ahead_pipeline(PGconn *conn)
{
    printf("== rows read ahead (pipeline)\n");
    PGconn *holder = pqd_connect();
    pqd_exec(holder, "SELECT pg_advisory_lock(727310)");
    char pid[16];
    snprintf(pid, sizeof pid, "%d", PQbackendPID(conn));
    int on = PQenterPipelineMode(conn);
    int first = PQsendQueryParams(conn, "SELECT 'before'", 0, NULL, NULL, NULL, NULL, 0);
    int flush = PQsendFlushRequest(conn);
    int ok = PQsendQueryParams(conn,
                               "SELECT pg_temp.noisy(g), repeat('z', 300),"
                               " CASE WHEN g = 40 THEN pg_advisory_lock(727310)::text END"
                               " FROM generate_series(1, 42) g",
                               0, NULL, NULL, NULL, NULL, 0);
    int sync = PQpipelineSync(conn);
    printf("pipeline -> %d send -> %d %d %d sync -> %d\n", on, first, flush, ok, sync);
    /* until the query waits: what the server flushed before is here */
    const char *const values[] = {pid};
    for (int waiting = 0; !waiting; usleep(1000)) {
        PGresult *r = PQexecParams(holder,
                                   "SELECT 1 FROM pg_stat_activity"
                                   " WHERE pid = $1 AND wait_event_type = 'Lock'",
                                   1, NULL, values, NULL, NULL, 0);
        waiting = PQntuples(r) == 1;
        PQclear(r);
    }
    usleep(100000);
    pqd_show("before", PQgetResult(conn));
    pqd_show("before end", PQgetResult(conn));
    printf("singleRow -> %d\n", PQsetSingleRowMode(conn));
    pqd_exec(holder, "SELECT pg_advisory_unlock(727310)");
    pqd_read_until_syncs(conn, 1);
    printf("exit -> %d\n", PQexitPipelineMode(conn));
    PQfinish(holder);
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

    pqd_exec(conn, "CREATE FUNCTION pg_temp.noisy(n int) RETURNS int LANGUAGE plpgsql AS "
                   "$$ BEGIN RAISE NOTICE 'row %', n; RETURN n; END $$");
    pqd_exec(conn, "CREATE FUNCTION pg_temp.loud(n int) RETURNS int LANGUAGE plpgsql AS "
                   "$$ BEGIN RAISE NOTICE 'only at %', n; RETURN n; END $$");
    PQsetNoticeProcessor(conn, pqd_notice_printer, "singlerow");
    noisy(conn, "SELECT pg_temp.noisy(g) FROM generate_series(1,4) g", 0);
    noisy(conn, "SELECT pg_temp.noisy(g) FROM generate_series(1,4) g", 1);
    noisy(conn, "SELECT pg_temp.loud(0), g FROM generate_series(1,3) g", 1);
    noisy(conn, "SELECT g, CASE WHEN g = 3 THEN pg_temp.loud(g) END FROM generate_series(1,3) g",
          1);
    noisy(conn, "SELECT pg_temp.noisy(g), 10 / (3 - g) FROM generate_series(1,5) g", 1);
    noisy_pipeline(conn, "SELECT pg_temp.noisy(g) FROM generate_series(1,4) g");
    noisy_pipeline(conn, "SELECT pg_temp.noisy(g), 10 / (3 - g) FROM generate_series(1,5) g");
    read_ahead_pipeline(conn);
    /* Taken as they come: each PQgetResult waits for the next row. */
    run(conn, "SELECT pg_temp.noisy(g) FROM generate_series(1,3) g", 1);

    /* Too late: the first result was already taken. */
    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1; SELECT 2"));
    pqd_show("first", PQgetResult(conn));
    printf("singleRow late -> %d\n", PQsetSingleRowMode(conn));
    pqd_drain(conn, "rest");
    PQfinish(conn);
    return 0;
}
