/*
 * A typical libpq program, written with libpgwire; each step names the
 * libpq call it replaces. Exits 1 if anything fails.
 */
#include <pgwire.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    /* PQconnectdb + PQstatus + PQerrorMessage */
    char err[1024];
    pgw_client_t *db;
    if (pgw_client_connect_err(&db, argc > 1 ? argv[1] : "", NULL, err, sizeof err) < 0) {
        fprintf(stderr, "connection failed: %s\n", err);
        return 1;
    }
    /* PQparameterStatus, PQbackendPID */
    printf("server %s, pid %d\n", pgw_session_parameter(pgw_client_session(db), "server_version"),
           (int)pgw_client_backend_pid(db));

    /* PQexec + PQresultStatus == PGRES_COMMAND_OK + PQclear */
    if (pgw_client_exec(db, "CREATE TEMP TABLE person (id int, name text, born date)", NULL) < 0)
        return 1;

    /* PQexecParams with text parameters: pgw_text lets the server infer
     * each type, as libpq's untyped parameters do. */
    const char *sql = "INSERT INTO person VALUES ($1, $2, $3)";
    pgw_param_t p[] = {pgw_text("1"), pgw_text("Ada"), pgw_text("1815-12-10")};
    pgw_result_t *res;
    int rc = pgw_client_query(db, sql, p, 3, &res);
    if (rc == PGW_ESERVER) { /* PGRES_FATAL_ERROR, PQresultErrorMessage */
        char msg[1024];
        pgw_error_format(pgw_result_error(res), sql, PGW_ERRORS_DEFAULT, msg, sizeof msg);
        fprintf(stderr, "%s", msg);
    }
    printf("%s\n", pgw_result_command_tag(res)); /* PQcmdStatus */
    pgw_result_free(res);
    if (rc < 0) return 1;

    /* PQexec + PQntuples + PQnfields + PQfname + PQgetisnull + PQgetvalue */
    rc = pgw_client_exec(db, "SELECT id, name, born, NULL::text AS note FROM person", &res);
    for (size_t r = 0; rc == 0 && r < pgw_result_nrows(res); r++)
        for (size_t c = 0; c < pgw_result_ncols(res); c++) {
            const char *v = "";
            if (!pgw_result_isnull(res, r, c)) pgw_result_value_cstr(res, r, c, &v, NULL);
            printf("%s=%s%s", pgw_result_fname(res, c), v,
                   c + 1 < pgw_result_ncols(res) ? " " : "\n");
        }
    pgw_result_free(res);

    pgw_client_close(db); /* PQfinish */
    return rc == 0 ? 0 : 1;
}
