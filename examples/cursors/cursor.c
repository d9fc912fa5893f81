/*
 * A large result read in batches through a cursor (a portal), with the
 * blocking client: at most three batches are in memory at once, however
 * many rows the query returns. Exits 1 if a row is missing.
 */
#include <pgwire.h>
#include <stdio.h>

#define ROWS 100000

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }
    pgw_param_t p[] = {pgw_int4(ROWS)};
    pgw_request_t q = PGW_QUERY("SELECT g FROM generate_series(1, $1) g", p, 1, NULL, NULL);
    pgw_client_cursor_t *cur;
    rc = pgw_client_cursor_open(db, &q, 5000, &cur);
    if (rc < 0) {
        fprintf(stderr, "cursor: %s\n", pgw_strerror(rc));
        pgw_client_close(db);
        return 1;
    }
    int64_t sum = 0;
    size_t rows = 0, batches = 0;
    pgw_result_t *res;
    while ((rc = pgw_client_cursor_next(cur, &res)) == 0) {
        batches++;
        for (size_t i = 0; i < pgw_result_nrows(res); i++) {
            int32_t g;
            if (pgw_result_int4(res, i, 0, &g) == 0) sum += g;
        }
        rows += pgw_result_nrows(res);
        pgw_result_free(res);
    }
    if (rc != PGW_EDONE) { /* the query or a fetch failed */
        const pgw_error_t *e = pgw_result_error(res);
        fprintf(stderr, "cursor: %s %s\n", pgw_strerror(rc), e ? e->message : "");
        pgw_result_free(res);
    }
    pgw_client_cursor_close(cur); /* always, also after PGW_EDONE */
    printf("%zu rows in %zu batches, sum %lld\n", rows, batches, (long long)sum);
    pgw_client_close(db);
    return rc == PGW_EDONE && rows == ROWS && sum == (int64_t)ROWS * (ROWS + 1) / 2 ? 0 : 1;
}
