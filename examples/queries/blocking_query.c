/*
 * A parameterized query with the blocking client. The connection string is
 * empty: PGHOST, PGPORT, PGUSER, PGDATABASE and ~/.pgpass apply, as in libpq.
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
    pgw_param_t p[] = {pgw_int4(3)};
    pgw_result_t *res;
    rc = pgw_client_query(db, "SELECT g AS id, 'item ' || g AS name FROM generate_series(1, $1) g",
                          p, 1, &res);
    if (rc == PGW_ESERVER) fprintf(stderr, "server: %s\n", pgw_result_error(res)->message);
    if (rc == 0) {
        for (size_t i = 0; i < pgw_result_nrows(res); i++) {
            int32_t id;
            pgw_str_t name; /* points into res: valid until pgw_result_free */
            if (pgw_result_int4(res, i, 0, &id) == 0 && pgw_result_text(res, i, 1, &name) == 0)
                printf("%d %.*s\n", id, (int)name.len, name.p);
        }
    }
    pgw_result_free(res);
    pgw_client_close(db);
    return rc == 0 ? 0 : 1;
}
