/*
 * A client behind PgBouncer in transaction pool mode: no named prepared
 * statements (PGW_STMT_UNNAMED), parameterised queries and transaction
 * blocks as usual. The connection string is the first argument. Exits 1
 * if anything fails.
 *
 *   ./example_behind_pgbouncer "host=pgbouncer.example.com port=6432 dbname=app"
 */
#include <pgwire.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.stmt_cache_mode = PGW_STMT_UNNAMED; /* transaction or statement pool mode */
    cfg.no_pipelining = 1;                  /* one sync group on the wire at a time (README.md) */

    pgw_client_t *db;
    char err[1024];
    int rc = pgw_client_connect_err(&db, argc > 1 ? argv[1] : "", &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", err);
        return 1;
    }
    int ok = 1;

    /* Each query may run on another server connection: nothing of it
     * outlives its Sync. */
    for (int i = 0; i < 20; i++) {
        pgw_param_t p[] = {pgw_int4(i)};
        pgw_result_t *res;
        int32_t v = -1;
        rc = pgw_client_query(db, "SELECT $1::int4 * 2", p, 1, &res);
        ok &= rc == 0 && pgw_result_int4(res, 0, 0, &v) == 0 && v == 2 * i;
        pgw_result_free(res);
    }

    /* A transaction block keeps its server connection until COMMIT: use
     * SET LOCAL, not SET, for settings. */
    ok &= pgw_client_exec(db, "BEGIN", NULL) == 0;
    ok &= pgw_client_exec(db, "SET LOCAL statement_timeout = '5s'", NULL) == 0;
    ok &= pgw_client_query(db, "SELECT current_setting('statement_timeout')", NULL, 0, NULL) == 0;
    ok &= pgw_client_exec(db, "COMMIT", NULL) == 0;

    /* Named statements are refused before anything is sent. */
    rc = pgw_client_prepare(db, "mine", "SELECT 1", NULL, 0, NULL);
    printf("named prepare: %s (%s)\n", pgw_err_name(rc), pgw_client_refusal(db));
    ok &= rc == PGW_ENOTSUP;

    pgw_stmt_cache_stats_t st;
    pgw_client_stmt_cache_stats(db, &st);
    ok &= st.prepares == 0;
    printf("%s\n", ok ? "ok" : "FAILED");
    pgw_client_close(db);
    return ok ? 0 : 1;
}
