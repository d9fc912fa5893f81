/*
 * A batch and its sync groups, with the blocking client: four requests
 * leave in one write; the second fails, which aborts the rest of its
 * group but not the group after PGW_Q_SYNC. Then the same batch with a
 * Sync after each request. Exits 1 if a status is not the one expected.
 */
#include <pgwire.h>
#include <stdio.h>

#define N 4

static int run(pgw_client_t *db, const pgw_request_t *reqs, unsigned flags, const int *expect)
{
    pgw_result_t *results[N];
    int statuses[N];
    int rc = pgw_client_run_batch(db, reqs, N, flags, results, statuses);
    int ok = rc == PGW_ESERVER; /* the first failure's status */
    for (int i = 0; i < N; i++) {
        const pgw_error_t *e = pgw_result_error(results[i]);
        printf("  request %d: %-8s %s\n", i, pgw_err_name(statuses[i]),
               e            ? e->message
               : results[i] ? pgw_result_command_tag(results[i])
                            : "(no result)");
        ok = ok && statuses[i] == expect[i];
        pgw_result_free(results[i]); /* NULL for an aborted request: a no-op */
    }
    return ok;
}

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }
    pgw_param_t zero[] = {pgw_int4(0)};
    pgw_request_t reqs[N] = {
        PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL),
        PGW_QUERY("SELECT 1 / $1", zero, 1, NULL, NULL), /* division by zero */
        PGW_QUERY("SELECT 3", NULL, 0, NULL, NULL),
        PGW_QUERY("SELECT 4", NULL, 0, NULL, NULL),
    };
    reqs[2].flags = PGW_Q_SYNC; /* its group ends here: request 3 runs in the next */

    printf("one batch, a Sync after request 2:\n");
    int one[N] = {0, PGW_ESERVER, PGW_EABORTED, 0};
    int ok = run(db, reqs, 0, one);

    printf("PGW_BATCH_SYNC_EACH:\n");
    int each[N] = {0, PGW_ESERVER, 0, 0};
    ok = run(db, reqs, PGW_BATCH_SYNC_EACH, each) && ok;

    pgw_client_close(db);
    return ok ? 0 : 1;
}
