/*
 * Error texts of random statements: PQexec of statements built at random
 * (from a fixed seed, PQDIFF_ERRORS_SEED) out of SQL pieces, tabs,
 * newlines, comments, multibyte characters and long identifiers, most of
 * them syntax errors at a random place, shown as errors.c shows an error
 * (every field, PQresultVerboseErrorMessage at every verbosity and
 * context visibility, PQerrorMessage). The "LINE n:" lines and the caret
 * under the error position are libpq's work: tabs, wide characters and
 * lines too long to show whole are where they can go wrong.
 */
#include "pqdiff.h"

#define STATEMENTS 150

static void random_statement(char *out, size_t cap)
{
    static const char *const pieces[] = {"SELECT",
                                         "1",
                                         "x",
                                         "FROM",
                                         "t",
                                         "WHERE",
                                         "(",
                                         ")",
                                         ",",
                                         "'a'",
                                         "'\xc3\xa9'",
                                         "\"\xe6\x97\xa5\xe6\x9c\xac\"",
                                         "\xc3\xa9",
                                         "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                         "\t",
                                         "\n",
                                         "   ",
                                         "-- c\n",
                                         "/* c */",
                                         "+",
                                         "@@",
                                         "'open",
                                         "::int",
                                         "\xf0\x9d\x84\x9e",
                                         "abcdefghijklmnopqrstuvwxyz_abcdefghijklmnopqrstuvwxyz",
                                         "=",
                                         ";",
                                         "AND",
                                         "\r\n",
                                         "E'\\x41'",
                                         "$1",
                                         "no_such_column",
                                         "SELEC",
                                         "\xef\xbc\xa1"};
    size_t n = 0;
    int count = 1 + (int)pqd_next(24);
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        const char *p = pieces[pqd_next(sizeof pieces / sizeof *pieces)];
        size_t l = strlen(p);
        if (n + l + 1 >= cap) break;
        memcpy(out + n, p, l);
        n += l;
        if (pqd_next(3)) out[n++] = ' ';
        out[n] = '\0';
    }
}

int main(void)
{
    pqd_init();
    pqd_seed("PQDIFF_ERRORS_SEED", "20261204");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "errors_random");
    pqd_exec(conn, "CREATE TEMP TABLE t (x int)");
    for (int i = 0; i < STATEMENTS; i++) {
        char sql[1024];
        random_statement(sql, sizeof sql);
        printf("== ");
        pqd_print_str("sql", sql);
        PGresult *r = PQexec(conn, sql);
        if (PQresultStatus(r) == PGRES_FATAL_ERROR) {
            pqd_show_error(conn, r);
        } else {
            pqd_print_result("  ->", r);
            PQclear(r);
        }
    }
    PQfinish(conn);
    return 0;
}
