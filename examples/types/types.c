/*
 * Reading and sending values: any value as text, numeric, timestamps,
 * arrays (read and sent) and a user-defined enum. Exits 1 if a value is
 * not what the query made.
 */
#include <pgwire.h>
#include <stdio.h>
#include <string.h>

static int failed(const char *what, int rc)
{
    fprintf(stderr, "%s: %s (%s)\n", what, pgw_err_name(rc), pgw_strerror(rc));
    return 1;
}

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) return failed("connect", rc);

    pgw_result_t *res;
    rc = pgw_client_exec(db, "SET TimeZone = 'Europe/Paris'", NULL);
    if (rc == 0)
        rc = pgw_client_query(db,
                              "SELECT 12345.678::numeric(12,3), "
                              "'2024-02-29 12:34:56.789+00'::timestamptz, "
                              "ARRAY[1, 2, NULL, 4]::int4[], ARRAY['a', 'b \"c\"']::text[], "
                              "'{\"k\": [1, 2]}'::jsonb",
                              NULL, 0, &res);
    if (rc < 0) return failed("query", rc);

    /* Any column as the server's text (libpq's PQgetvalue), whatever its
     * type and format; valid until pgw_result_free. */
    for (size_t c = 0; c < pgw_result_ncols(res); c++) {
        const char *text;
        if (pgw_result_value_cstr(res, 0, c, &text, NULL) < 0) return failed("value_cstr", -1);
        printf("%-12s %s\n", pgw_type_name(pgw_result_ftype(res, c)), text);
    }
    int ok = 1;

    /* numeric: exact text, or a double. */
    pgw_str_t num;
    double d;
    ok &= pgw_result_numeric_str(res, 0, 0, &num) == 0 && num.len == 9 &&
          memcmp(num.p, "12345.678", 9) == 0;
    ok &= pgw_result_numeric_double(res, 0, 0, &d) == 0 && d == 12345.678;

    /* timestamptz: an instant (microseconds since 1970 UTC), or broken
     * down in UTC. The text above used the session's TimeZone. */
    int64_t unix_us;
    pgw_tm_t tm;
    ok &= pgw_result_timestamp_unix(res, 0, 1, &unix_us) == 0 && unix_us == 1709210096789000;
    ok &= pgw_result_tm(res, 0, 1, &tm) == 0 && tm.day == 29 && tm.hour == 12 && tm.usec == 789000;

    /* int4[]: every element at once, NULLs flagged. */
    pgw_value_t v;
    int32_t ints[8];
    bool nulls[8];
    size_t n = 0;
    ok &= pgw_result_value(res, 0, 2, &v) == 0 && pgw_array_get_int4(&v, ints, 8, &n, nulls) == 0 &&
          n == 4 && nulls[2] && ints[3] == 4;

    /* text[]: element by element (views into the result). */
    pgw_array_t arr;
    pgw_array_iter_t it;
    pgw_value_t elem;
    char scratch[64]; /* text elements with escapes are unescaped here */
    ok &= pgw_result_array(res, 0, 3, &arr) == 0;
    pgw_array_iter_init(&it, &arr, scratch, sizeof scratch);
    while (pgw_array_next(&it, &elem) == 1) {
        pgw_str_t s;
        if (pgw_get_text(&elem, &s) == 0) printf("text[] element: %.*s\n", (int)s.len, s.p);
    }
    ok &= it.index == 2;
    pgw_result_free(res);

    /* An array parameter: a C array described by pgw_array_enc_t. */
    int64_t ids[] = {10, 20, 30};
    pgw_array_enc_t enc;
    pgw_array_enc_init(&enc, PGW_OID_INT8, ids, 3, NULL);
    pgw_param_t p[] = {pgw_array_param(&enc)};
    int64_t sum = 0;
    rc = pgw_client_query(db, "SELECT sum(x) FROM unnest($1::int8[]) x", p, 1, &res);
    ok &= rc == 0 && pgw_result_numeric_int64(res, 0, 0, &sum) == 0 && sum == 60;
    pgw_result_free(res);

    /* A user type: load its definition once, then read it as its base. */
    rc = pgw_client_exec(db,
                         "DROP TYPE IF EXISTS example_mood; "
                         "CREATE TYPE example_mood AS ENUM ('sad', 'ok', 'happy')",
                         NULL);
    const char *const names[] = {"example_mood"};
    if (rc == 0) rc = pgw_client_load_types(db, names, 1, NULL);
    if (rc == 0)
        rc = pgw_client_query(
            db, "SELECT 'happy'::example_mood, ARRAY['ok', 'sad']::example_mood[]", NULL, 0, &res);
    if (rc < 0) return failed("user type", rc);
    pgw_str_t mood;
    const char *moods;
    ok &= pgw_result_text(res, 0, 0, &mood) == 0 && mood.len == 5;
    ok &= pgw_result_value_cstr(res, 0, 1, &moods, NULL) == 0 && strcmp(moods, "{ok,sad}") == 0;
    printf("enum %.*s, enum[] %s\n", (int)mood.len, mood.p, moods);
    pgw_result_free(res);
    pgw_client_exec(db, "DROP TYPE example_mood", NULL);

    pgw_client_close(db);
    printf("%s\n", ok ? "all values as expected" : "MISMATCH");
    return ok ? 0 : 1;
}
