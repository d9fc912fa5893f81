/*
 * Random pipelines: rounds of pipeline mode, each a random sequence (from a
 * fixed seed, PQDIFF_PIPELINE_SEED) of queries that succeed, fail or return
 * rows, prepares (some of a name already prepared), executions and
 * describes of prepared statements (some never prepared), syncs and flush
 * requests, ended by a sync; then every result up to the last sync, the
 * pipeline and transaction status after each sync, and PQexitPipelineMode.
 * pipeline.c has the named sequences; this one looks for the sequences
 * nobody named: where an error aborts up to which sync, what a describe of
 * a missing statement gives inside an aborted pipeline, a BEGIN left open
 * across syncs.
 */
#include "pqdiff.h"

#define ROUNDS  60
#define MAX_OPS 12

int main(void)
{
    pqd_init();
    pqd_seed("PQDIFF_PIPELINE_SEED", "20261204");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "pipeline_random");
    for (int round = 0; round < ROUNDS; round++) {
        printf("== round %d: enter -> %d\n", round, PQenterPipelineMode(conn));
        int ops = 1 + (int)pqd_next(MAX_OPS), syncs = 0;
        for (int i = 0; i < ops; i++) {
            char name[16], value[16];
            snprintf(name, sizeof name, "s%u", pqd_next(3));
            snprintf(value, sizeof value, "%u", pqd_next(100));
            const char *values[1] = {value};
            int rc;
            switch (pqd_next(10)) {
            case 0:
                rc = PQsendQueryParams(conn, "SELECT $1::int", 1, NULL, values, NULL, NULL, 0);
                printf("query ok %s -> %d\n", value, rc);
                break;
            case 1:
                rc = PQsendQueryParams(conn, "SELECT 1 / ($1::int - $1::int)", 1, NULL, values,
                                       NULL, NULL, 0);
                printf("query division by zero -> %d\n", rc);
                break;
            case 2:
                rc = PQsendQueryParams(conn, "SELECT generate_series(1, 3)", 0, NULL, NULL, NULL,
                                       NULL, 1);
                printf("query rows (binary) -> %d\n", rc);
                break;
            case 3:
                rc = PQsendPrepare(conn, name, "SELECT $1::int + 1", 0, NULL);
                printf("prepare %s -> %d\n", name, rc);
                break;
            case 4:
                rc = PQsendQueryPrepared(conn, name, 1, values, NULL, NULL, 0);
                printf("execute %s %s -> %d\n", name, value, rc);
                break;
            case 5:
                rc = PQsendDescribePrepared(conn, name);
                printf("describe %s -> %d\n", name, rc);
                break;
            case 6:
                rc = PQpipelineSync(conn);
                printf("sync -> %d\n", rc);
                syncs += rc == 1;
                break;
            case 7:
                printf("flush request -> %d\n", PQsendFlushRequest(conn));
                break;
            case 8:
                rc = PQsendQueryParams(conn, pqd_next(2) ? "BEGIN" : "COMMIT", 0, NULL, NULL, NULL,
                                       NULL, 0);
                printf("transaction -> %d\n", rc);
                break;
            default:
                rc = PQsendQueryParams(conn, "SELECT no_such_column", 0, NULL, NULL, NULL, NULL, 0);
                printf("query no such column -> %d\n", rc);
                break;
            }
        }
        int rc = PQpipelineSync(conn);
        printf("last sync -> %d\n", rc);
        syncs += rc == 1;
        pqd_read_until_syncs(conn, syncs);
        printf("exit -> %d\n", PQexitPipelineMode(conn));
        pqd_pipeline_status(conn, "after exit");
        /* A transaction left open ends here, outside the pipeline. */
        if (PQtransactionStatus(conn) != PQTRANS_IDLE) pqd_exec(conn, "ROLLBACK");
        pqd_exec(conn, "DEALLOCATE ALL");
    }
    PQfinish(conn);
    return 0;
}
