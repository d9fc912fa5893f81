/*
 * Random COPY rounds (from a fixed seed, PQDIFF_COPY_SEED): COPY FROM STDIN
 * in text or CSV of a few random rows (NULLs, escapes, quotes, multibyte
 * text, now and then a row with a bad integer, a missing or extra column,
 * or a duplicate key) sent in chunks of a random size, ended by
 * PQputCopyEnd or a client abort; then COPY TO STDOUT of the table, read
 * with PQgetCopyData blocking or not. Every call and result printed.
 * copy.c has the named cases; this one looks for the rounds nobody named.
 */
#include "pqdiff.h"

#define ROUNDS   40
#define MAX_ROWS 8

static void random_rows(char *out, size_t cap, int csv)
{
    static const char *const text_values[] = {
        "a", "b c", "", "\\N", "x\\ty", "q\"", "\xc3\xa9", "back\\\\slash", "tab\tsplit", "1,2"};
    static const char *const csv_values[] = {"a",         "\"b c\"",  "",        "\"\"",
                                             "\"q\"\"\"", "\xc3\xa9", "\"1,2\"", "\"line\nbreak\"",
                                             "x,y",       "\"open"};
    size_t n = 0;
    int rows = (int)pqd_next(MAX_ROWS + 1);
    out[0] = '\0';
    for (int i = 0; i < rows && n + 64 < cap; i++) {
        const char *v = csv ? csv_values[pqd_next(10)] : text_values[pqd_next(10)];
        char sep = csv ? ',' : '\t';
        switch (pqd_next(12)) {
        case 0: /* a bad integer */
            n += (size_t)snprintf(out + n, cap - n, "x%d%c%s\n", i, sep, v);
            break;
        case 1: /* a missing column */
            n += (size_t)snprintf(out + n, cap - n, "%d\n", i);
            break;
        case 2: /* a duplicate key */
            n += (size_t)snprintf(out + n, cap - n, "0%c%s\n", sep, v);
            break;
        default:
            n += (size_t)snprintf(out + n, cap - n, "%d%c%s\n", i, sep, v);
            break;
        }
    }
}

int main(void)
{
    pqd_init();
    pqd_seed("PQDIFF_COPY_SEED", "20261204");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "copy_random");
    pqd_exec(conn, "CREATE TEMP TABLE cr (id int PRIMARY KEY, t text)");
    for (int round = 0; round < ROUNDS; round++) {
        int csv = (int)pqd_next(2);
        char data[1024];
        random_rows(data, sizeof data, csv);
        printf("=== round %d: ", round);
        pqd_print_str("data", data);
        pqd_exec(conn, "TRUNCATE cr");
        pqd_copy_in(conn, csv ? "COPY cr FROM STDIN WITH (FORMAT csv)" : "COPY cr FROM STDIN", data,
                    1 + pqd_next(24), pqd_next(8) ? NULL : "client says no");
        pqd_copy_out(conn,
                     csv ? "COPY (SELECT * FROM cr ORDER BY id) TO STDOUT WITH (FORMAT csv)"
                         : "COPY (SELECT * FROM cr ORDER BY id) TO STDOUT",
                     (int)pqd_next(2));
    }
    PQfinish(conn);
    return 0;
}
