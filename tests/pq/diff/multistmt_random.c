/*
 * Random multi-statement strings (from a fixed seed, PQDIFF_MULTISTMT_SEED):
 * statements that return rows, fail, notice, open, end or fail
 * transactions, set a savepoint, or are empty, joined by ';' (sometimes
 * doubled, sometimes trailing), each run with PQexec and with PQsendQuery
 * (in single-row mode at random), every result printed (notices raised
 * while a statement's rows are made among them), the transaction
 * status after each. multistmt.c has the named strings; this one looks for
 * the strings nobody named.
 */
#include "pqdiff.h"

#define STRINGS   120
#define MAX_STMTS 6

static void random_string(char *out, size_t cap)
{
    static const char *const stmts[] = {
        "SELECT generate_series(1, 3) AS g",
        "SELECT 1 / 0",
        "SELECT 'x' AS a, NULL AS b",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT s",
        "ROLLBACK TO s",
        "",
        "DO $$ BEGIN RAISE NOTICE 'hello'; END $$",
        "SET application_name = 'multi'",
        "SHOW application_name",
        "CREATE TEMP TABLE IF NOT EXISTS m (n int)",
        "INSERT INTO m VALUES (1), (2)",
        "DELETE FROM m",
        "SELECT * FROM m",
        "SELECT no_such_column",
        "SELECT 1 WHERE false",
        "SELECT pg_temp.noisy(g) FROM generate_series(1, 3) g",
    };
    size_t n = 0;
    int count = 1 + (int)pqd_next(MAX_STMTS);
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        const char *s = stmts[pqd_next(sizeof stmts / sizeof *stmts)];
        const char *sep = i + 1 < count ? (pqd_next(5) ? "; " : ";; ") : (pqd_next(2) ? ";" : "");
        if (n + strlen(s) + strlen(sep) + 1 >= cap) break;
        n += (size_t)sprintf(out + n, "%s%s", s, sep);
    }
}

int main(void)
{
    pqd_init();
    pqd_seed("PQDIFF_MULTISTMT_SEED", "20261204");
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "multistmt_random");
    /* A notice while each row is made. */
    pqd_exec(conn, "CREATE FUNCTION pg_temp.noisy(n int) RETURNS int LANGUAGE plpgsql AS "
                   "$$ BEGIN RAISE NOTICE 'row %', n; RETURN n; END $$");
    for (int i = 0; i < STRINGS; i++) {
        char sql[1024];
        random_string(sql, sizeof sql);
        printf("== ");
        pqd_print_str("sql", sql);
        pqd_show("exec", PQexec(conn, sql));
        printf("  tx=%s\n", pqd_txstatus(PQtransactionStatus(conn)));
        if (PQtransactionStatus(conn) != PQTRANS_IDLE) pqd_exec(conn, "ROLLBACK");
        printf("send -> %d", PQsendQuery(conn, sql));
        if (pqd_next(2)) printf(" single-row -> %d", PQsetSingleRowMode(conn));
        putchar('\n');
        pqd_drain(conn, "  r");
        printf("  tx=%s\n", pqd_txstatus(PQtransactionStatus(conn)));
        if (PQtransactionStatus(conn) != PQTRANS_IDLE) pqd_exec(conn, "ROLLBACK");
    }
    PQfinish(conn);
    return 0;
}
