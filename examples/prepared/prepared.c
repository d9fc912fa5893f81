/*
 * Prepared statements and the statement cache, with the blocking client:
 * a named statement prepared, described and executed, a parameter
 * converted to the declared type or refused before anything is sent, and
 * the cache preparing a repeated query by itself. Exits 1 if anything is
 * not as described.
 */
#include <pgwire.h>
#include <stdio.h>

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }
    int ok = 1;

    /* Prepare: the result describes the parameters and the columns. */
    pgw_result_t *res;
    rc = pgw_client_prepare(db, "double_it", "SELECT $1::int4 * 2 AS doubled", NULL, 0, &res);
    ok &= rc == 0 && pgw_result_nparams(res) == 1 && pgw_result_param_type(res, 0) == PGW_OID_INT4;
    printf("prepared: %zu parameter (%s), column %s\n", pgw_result_nparams(res),
           pgw_type_name(pgw_result_param_type(res, 0)), pgw_result_fname(res, 0));
    pgw_result_free(res);

    /* Execute by name: Bind and Execute only. An int8 parameter is
     * converted to the declared int4 when it fits... */
    for (int64_t i = 1; i <= 3; i++) {
        pgw_param_t p[] = {pgw_int8(i * 10)};
        int32_t v = 0;
        rc = pgw_client_execute(db, "double_it", p, 1, &res);
        ok &= rc == 0 && pgw_result_int4(res, 0, 0, &v) == 0 && v == i * 20;
        pgw_result_free(res);
    }
    /* ...and refused, with nothing sent, when it does not. */
    pgw_param_t big[] = {pgw_int8(5000000000)};
    rc = pgw_client_execute(db, "double_it", big, 1, &res);
    printf("refused: %s: %s\n", pgw_err_name(rc), pgw_client_refusal(db));
    ok &= rc == PGW_ERANGE && res == NULL;

    /* Deallocate it. */
    pgw_request_t close = PGW_CLOSE("double_it", NULL, NULL);
    ok &= pgw_client_run(db, &close, NULL) == 0;

    /* The statement cache: the same parameterised query run again is
     * prepared once under a name of the session's own, then executed by
     * name. Nothing to do but run it. */
    for (int i = 0; i < 5; i++) {
        pgw_param_t p[] = {pgw_int4(i)};
        rc = pgw_client_query(db, "SELECT $1::int4 + 1", p, 1, NULL);
        ok &= rc == 0;
    }
    pgw_stmt_cache_stats_t st;
    pgw_client_stmt_cache_stats(db, &st);
    printf("cache: %llu prepares, %llu hits, %llu misses, %zu cached\n",
           (unsigned long long)st.prepares, (unsigned long long)st.hits,
           (unsigned long long)st.misses, st.entries);
    ok &= st.prepares == 1 && st.hits >= 3 && st.entries == 1;
    pgw_client_close(db);

    /* Without the cache (or PGW_STMT_UNNAMED behind PgBouncer): */
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.stmt_cache_mode = PGW_STMT_CACHE_OFF;
    rc = pgw_client_connect(&db, "", &cfg);
    if (rc == 0) rc = pgw_client_query(db, "SELECT 1", NULL, 0, NULL);
    pgw_client_stmt_cache_stats(db, &st);
    ok &= rc == 0 && st.prepares == 0;
    pgw_client_close(db);
    return ok ? 0 : 1;
}
