/*
 * Statements, parameters, results and server errors with the blocking
 * client: a table is filled with parameterised INSERTs, read back with a
 * parameterised SELECT, and a duplicate key shows what a server error
 * carries. Exits 1 if anything does not go as described.
 */
#include <pgwire.h>
#include <stdio.h>
#include <string.h>

/* Print a failed request's error as psql would, and free its result. */
static int fail(const char *sql, int rc, pgw_result_t *res)
{
    char text[1024];
    const pgw_error_t *err = pgw_result_error(res);
    if (err) {
        pgw_error_format(err, sql, PGW_ERRORS_DEFAULT, text, sizeof text);
        fprintf(stderr, "%s", text);
    } else {
        fprintf(stderr, "%s: %s\n", pgw_err_name(rc), pgw_strerror(rc));
    }
    pgw_result_free(res);
    return 1;
}

int main(void)
{
    pgw_client_t *db;
    char err[512];
    int rc = pgw_client_connect_err(&db, "", NULL, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", err);
        return 1;
    }

    /* No parameters, nothing to read: pass NULL for the result. */
    rc = pgw_client_exec(db,
                         "CREATE TEMP TABLE item (id int4 PRIMARY KEY, name text NOT NULL,"
                         " price numeric(10,2), note text)",
                         NULL);
    if (rc < 0) return fail("CREATE TABLE", rc, NULL);

    /* Parameters are typed C values, sent in binary; NULL is pgw_null. */
    const char *insert = "INSERT INTO item VALUES ($1, $2, $3, $4)";
    const char *names[] = {"pen", "notebook", "lamp"};
    const char *prices[] = {"1.50", "4.25", "19.90"};
    for (int i = 0; i < 3; i++) {
        pgw_param_t p[] = {pgw_int4(i + 1), pgw_text(names[i]), pgw_numeric_str(prices[i]),
                           i == 1 ? pgw_text("recycled paper") : pgw_null(PGW_OID_TEXT)};
        pgw_result_t *res;
        rc = pgw_client_query(db, insert, p, 4, &res);
        if (rc < 0) return fail(insert, rc, res);
        printf("%s: %lld row\n", pgw_result_command_tag(res),
               (long long)pgw_result_rows_affected(res));
        pgw_result_free(res);
    }

    /* Rows: typed accessors; text views point into the result. */
    const char *select = "SELECT id, name, price, note FROM item WHERE price < $1 ORDER BY id";
    pgw_param_t limit[] = {pgw_numeric_str("10")};
    pgw_result_t *res;
    rc = pgw_client_query(db, select, limit, 1, &res);
    if (rc < 0) return fail(select, rc, res);
    size_t nrows = pgw_result_nrows(res);
    for (size_t i = 0; i < nrows; i++) {
        int32_t id;
        pgw_str_t name, price, note = {"-", 1};
        if (pgw_result_int4(res, i, 0, &id) < 0 || pgw_result_text(res, i, 1, &name) < 0 ||
            pgw_result_numeric_str(res, i, 2, &price) < 0)
            return fail(select, PGW_EFORMAT, res);
        if (!pgw_result_isnull(res, i, 3)) pgw_result_text(res, i, 3, &note);
        printf("%d %.*s %.*s %.*s\n", (int)id, (int)name.len, name.p, (int)price.len, price.p,
               (int)note.len, note.p);
    }
    pgw_result_free(res);
    if (nrows != 2) return 1;

    /* A server error: PGW_ESERVER, and the result holds every field. */
    pgw_param_t dup[] = {pgw_int4(1), pgw_text("pen again"), pgw_null(0), pgw_null(0)};
    rc = pgw_client_query(db, insert, dup, 4, &res);
    const pgw_error_t *e = pgw_result_error(res);
    int expected = rc == PGW_ESERVER && e && strcmp(e->sqlstate, "23505") == 0;
    if (e) printf("expected error %s (%s): %s\n", e->sqlstate, e->constraint, e->message);
    pgw_result_free(res);

    /* The client is usable after a server error. */
    rc = pgw_client_exec(db, "SELECT count(*) FROM item; SELECT 'two statements'", &res);
    int ok = rc == 0 && pgw_result_next(res) != NULL;
    pgw_result_free(res); /* frees the chain */
    pgw_client_close(db);
    return expected && ok ? 0 : 1;
}
