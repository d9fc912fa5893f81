/*
 * Pipeline mode: the result sequence (each result, the NULL after each
 * query, PGRES_PIPELINE_SYNC, PGRES_PIPELINE_ABORTED after an error up to the
 * next sync), prepared statements and describes inside a pipeline, a flush
 * request, single-row mode for the query at the head of the queue, the
 * pipeline and transaction status between steps, and the calls pipeline
 * mode refuses.
 */
#include "pqdiff.h"

static void send_params(PGconn *conn, const char *sql, int nparams, const char *const *values)
{
    printf("send [%s] -> %d\n", sql,
           PQsendQueryParams(conn, sql, nparams, NULL, values, NULL, NULL, 0));
}

/* The long pipeline's i-th value: its number, then up to 511 bytes. */
static void long_value(char *val, int i)
{
    int n = snprintf(val, 16, "%d:", i);
    int pad = (i * 37) % 512;
    memset(val + n, 'a' + i % 26, (size_t)pad);
    val[n + pad] = '\0';
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "pipeline");
    pqd_exec(conn, "CREATE TEMP TABLE pt (id int PRIMARY KEY, v text)");

    pqd_pipeline_status(conn, "before");
    printf("exit when off -> %d\n", PQexitPipelineMode(conn));
    printf("enter -> %d\n", PQenterPipelineMode(conn));
    printf("enter again -> %d\n", PQenterPipelineMode(conn));
    pqd_pipeline_status(conn, "entered");

    /* Not allowed in pipeline mode. */
    PGresult *r = PQexec(conn, "SELECT 1");
    pqd_show("PQexec in pipeline", r);
    printf("errmsg after PQexec: [%s]\n", PQerrorMessage(conn));
    printf("sendQuery in pipeline -> %d\n", PQsendQuery(conn, "SELECT 1"));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));

    /* Batch 1: success, an error, a query aborted by it, then sync. */
    const char *one[] = {"1"};
    send_params(conn, "INSERT INTO pt VALUES ($1::int, 'a')", 1, one);
    send_params(conn, "SELECT id, v FROM pt", 0, NULL);
    send_params(conn, "INSERT INTO pt VALUES ($1::int, 'dup')", 1, one);
    send_params(conn, "SELECT 'aborted'", 0, NULL);
    send_params(conn, "SELECT 1/0", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    /* Batch 2 runs after the error: a new implicit transaction. */
    printf("prepare -> %d\n", PQsendPrepare(conn, "ps", "SELECT $1::int + 1 AS next", 1, NULL));
    const char *two[] = {"41"};
    printf("queryPrepared -> %d\n", PQsendQueryPrepared(conn, "ps", 1, two, NULL, NULL, 0));
    printf("describePrepared -> %d\n", PQsendDescribePrepared(conn, "ps"));
    printf("describePortal -> %d\n", PQsendDescribePortal(conn, ""));
    send_params(conn, "SELECT count(*) FROM pt", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_pipeline_status(conn, "queued");
    printf("exit with pending -> %d\n", PQexitPipelineMode(conn));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    pqd_read_until_syncs(conn, 2);

    /* A flush request: the result arrives before any sync. */
    send_params(conn, "SELECT 'flushed' AS f", 0, NULL);
    printf("flushRequest -> %d\n", PQsendFlushRequest(conn));
    printf("flush -> %d\n", PQflush(conn));
    pqd_show("flushed#0", PQgetResult(conn));
    pqd_show("flushed#1", PQgetResult(conn));
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_read_until_syncs(conn, 1);

    /* An explicit transaction across syncs, with an error in it. */
    send_params(conn, "BEGIN", 0, NULL);
    send_params(conn, "INSERT INTO pt VALUES (2, 'b')", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    send_params(conn, "SELECT nosuchcolumn FROM pt", 0, NULL);
    send_params(conn, "SELECT 'skipped'", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    send_params(conn, "SELECT 'in failed tx'", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    send_params(conn, "ROLLBACK", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_read_until_syncs(conn, 4);

    /* Single-row mode inside a pipeline. */
    send_params(conn, "SELECT g FROM generate_series(1,3) g", 0, NULL);
    printf("singleRow -> %d\n", PQsetSingleRowMode(conn));
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_read_until_syncs(conn, 1);

    /* ... for a later query of the segment, set once the results before it
     * were taken (then for the one after that, whose rows an error cuts),
     * and once more after the sync went out. */
    send_params(conn, "SELECT 'first'", 0, NULL);
    printf("flush request -> %d\n", PQsendFlushRequest(conn));
    send_params(conn, "SELECT g, repeat('y', g) FROM generate_series(1,4) g", 0, NULL);
    send_params(conn, "SELECT 10 / (3 - g) FROM generate_series(1,5) g", 0, NULL);
    send_params(conn, "SELECT 'skipped'", 0, NULL);
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_show("first", PQgetResult(conn));
    pqd_show("first end", PQgetResult(conn));
    printf("singleRow -> %d\n", PQsetSingleRowMode(conn));
    pqd_drain(conn, "rows");
    printf("singleRow -> %d\n", PQsetSingleRowMode(conn));
    pqd_drain(conn, "cut");
    printf("singleRow on aborted -> %d\n", PQsetSingleRowMode(conn));
    pqd_read_until_syncs(conn, 1);
    send_params(conn, "SELECT g FROM generate_series(1,2) g", 0, NULL);
    printf("flush -> %d\n", PQflush(conn));
    printf("singleRow after flush -> %d\n", PQsetSingleRowMode(conn));
    printf("sync -> %d\n", PQpipelineSync(conn));
    pqd_read_until_syncs(conn, 1);

    /* A long pipeline: more requests than are held before a batch goes
     * out, each with a parameter of its own size, answered in order. */
    enum { LONG = 3000 };
    char val[600];
    int sent = 0;
    for (int i = 0; i < LONG; i++) {
        long_value(val, i);
        const char *v[] = {val};
        sent += PQsendQueryParams(conn, "SELECT $1::text AS v", 1, NULL, v, NULL, NULL, 0);
    }
    printf("long pipeline: %d sent, sync -> %d\n", sent, PQpipelineSync(conn));
    int right = 0, wrong = 0;
    for (int i = 0; i < LONG; i++) {
        r = PQgetResult(conn);
        long_value(val, i);
        if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
            strcmp(PQgetvalue(r, 0, 0), val) == 0)
            right++;
        else
            wrong++;
        PQclear(r);
        r = PQgetResult(conn);
        if (r) wrong++;
        PQclear(r);
    }
    r = PQgetResult(conn);
    printf("long pipeline: %d right, %d wrong, then %s\n", right, wrong,
           r ? PQresStatus(PQresultStatus(r)) : "NULL");
    PQclear(r);

    printf("getResult when idle: %s\n", PQgetResult(conn) ? "result" : "NULL");
    pqd_pipeline_status(conn, "drained");
    printf("exit -> %d\n", PQexitPipelineMode(conn));
    pqd_pipeline_status(conn, "exited");
    pqd_exec(conn, "SELECT id, v FROM pt ORDER BY id");
    PQfinish(conn);
    return 0;
}
