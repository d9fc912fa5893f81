/*
 * COPY both ways: PQputCopyData in uneven chunks and PQputCopyEnd, a client
 * abort (PQputCopyEnd with a message), a server error inside COPY FROM,
 * PQgetCopyData of text, CSV and binary COPY TO (each chunk printed), an
 * error inside COPY TO, the old PQputline/PQendcopy that pgbench -i uses,
 * COPY in a multi-statement string (one of 10 MB too), notices among a COPY
 * TO's rows, a notice right behind a COPY FROM's start, and the calls made
 * in the wrong state.
 */
#include "pqdiff.h"

#include <poll.h>

/* 1 when PQsocket turns readable within 10 s (0: a poll loop would wait
 * there forever). */
static int wait_readable(PGconn *conn)
{
    struct pollfd p = {PQsocket(conn), POLLIN, 0};
    return poll(&p, 1, 10000) > 0;
}

/* 1 when the socket holds, unread, a CopyInResponse and a NoticeResponse
 * behind it (within 10 s). */
static int await_copy_in_notice(PGconn *conn)
{
    static unsigned char buf[4096];
    for (int i = 0; i < 10000; i++) {
        ssize_t n = recv(PQsocket(conn), buf, sizeof buf, MSG_PEEK);
        if (n >= 5 && buf[0] == 'G') {
            size_t next =
                1 + ((size_t)buf[1] << 24 | (size_t)buf[2] << 16 | (size_t)buf[3] << 8 | buf[4]);
            if ((size_t)n > next) return buf[next] == 'N';
        }
        usleep(1000);
    }
    return 0;
}

/* A simple query with a COPY TO among its statements, read as a program
 * with its own poll loop reads it (psycopg, ruby-pg): PQisBusy, a wait on
 * PQsocket, PQconsumeInput, and PQgetCopyData with async set. What follows
 * the COPY may have come with its last rows: the PQisBusy after the -1
 * finds it parsed, with nothing more on the socket. */
static void poll_loop(PGconn *conn, const char *sql)
{
    printf("== poll loop: %s\n", sql);
    printf("send -> %d\n", PQsendQuery(conn, sql));
    for (;;) {
        while (PQisBusy(conn)) {
            if (!wait_readable(conn) || !PQconsumeInput(conn)) {
                printf("stuck: busy, nothing to read\n");
                return;
            }
        }
        PGresult *r = PQgetResult(conn);
        if (!r) break;
        int copy = PQresultStatus(r) == PGRES_COPY_OUT;
        pqd_show("r", r);
        if (!copy) continue;
        long rows = 0, bytes = 0;
        char *buf = NULL;
        int n;
        while ((n = PQgetCopyData(conn, &buf, 1)) >= 0) {
            if (n > 0) {
                rows++;
                bytes += n;
                PQfreemem(buf);
            } else if (!wait_readable(conn) || !PQconsumeInput(conn)) {
                printf("stuck: COPY, nothing to read\n");
                return;
            }
        }
        printf("getCopyData -> %d after %ld rows, %ld bytes\n", n, rows, bytes);
    }
    printf("end: NULL\n");
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "copy");
    pqd_exec(conn, "CREATE TEMP TABLE ct (id int PRIMARY KEY, t text, b bytea)");

    pqd_copy_in(conn, "COPY ct FROM STDIN", "1\tone\t\\\\x01\n2\t\\N\t\\N\n3\ttab\\there\t\\\\x\n",
                5, NULL);
    pqd_copy_in(conn, "COPY ct (id, t) FROM STDIN (FORMAT csv)", "4,\"quoted, comma\"\n5,\n", 100,
                NULL);
    pqd_copy_in(conn, "COPY ct FROM STDIN", "6\tbad\t\\N\nnotanumber\tx\t\\N\n", 7, NULL);
    pqd_copy_in(conn, "COPY ct FROM STDIN", "7\tdup\t\\N\n1\tdup\t\\N\n", 64, NULL);
    pqd_copy_in(conn, "COPY ct FROM STDIN", "8\tabort\t\\N\n", 64, "client gave up");
    pqd_copy_in(conn, "COPY ct FROM STDIN", "", 1, NULL);
    pqd_copy_in(conn, "COPY ct FROM STDIN", "9\tno newline at end\t\\N", 3, NULL);

    pqd_copy_out(conn, "COPY ct TO STDOUT", 0);
    pqd_copy_out(conn, "COPY (SELECT * FROM ct ORDER BY id) TO STDOUT (FORMAT csv, HEADER)", 1);
    pqd_copy_out(conn, "COPY (SELECT id, t FROM ct ORDER BY id) TO STDOUT (FORMAT binary)", 0);
    pqd_copy_out(conn, "COPY (SELECT 1/(id-3) FROM ct ORDER BY id) TO STDOUT", 0);
    pqd_copy_out(conn, "COPY (SELECT 1 WHERE false) TO STDOUT", 0);

    /* Binary COPY FROM: header, one row (int4 10, text "bin"), trailer. */
    static const char bin[] = "PGCOPY\n\377\r\n\0"
                              "\0\0\0\0\0\0\0\0"
                              "\0\2\0\0\0\4\0\0\0\12\0\0\0\3bin"
                              "\377\377";
    printf("== binary COPY FROM\n");
    pqd_show("start", PQexec(conn, "COPY ct (id, t) FROM STDIN (FORMAT binary)"));
    pqd_put_copy(conn, bin, sizeof bin - 1);
    printf("putCopyEnd -> %d\n", PQputCopyEnd(conn, NULL));
    pqd_drain(conn, "end");

    /* pgbench -i's way: PQputline and PQendcopy. */
    printf("== putline\n");
    pqd_show("start", PQexec(conn, "COPY ct (id, t) FROM STDIN"));
    printf("putline -> %d\n", PQputline(conn, "20\ttwenty\n"));
    printf("putline -> %d\n", PQputline(conn, "21\ttwenty-one\n"));
    printf("putline -> %d\n", PQputline(conn, "\\.\n"));
    printf("endcopy -> %d\n", PQendcopy(conn));
    pqd_drain(conn, "after endcopy");
    printf("== putline with error\n");
    pqd_show("start", PQexec(conn, "COPY ct (id, t) FROM STDIN"));
    printf("putline -> %d\n", PQputline(conn, "20\tdup\n"));
    printf("putline -> %d\n", PQputline(conn, "\\.\n"));
    printf("endcopy -> %d\n", PQendcopy(conn));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    pqd_drain(conn, "after endcopy");

    /* COPY inside a multi-statement string, and copy calls out of COPY. */
    printf("== multi\n");
    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1; COPY ct (id) TO STDOUT; SELECT 2"));
    pqd_show("r0", PQgetResult(conn));
    pqd_show("r1", PQgetResult(conn));
    char *buf;
    int n;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        printf("row [%.*s]\n", n - 1, buf);
        PQfreemem(buf);
    }
    printf("getCopyData -> %d\n", n);
    pqd_drain(conn, "rest");
    poll_loop(conn, "SELECT 1; COPY ct (id) TO STDOUT; SELECT 2");
    poll_loop(conn, "COPY (SELECT g, repeat('x', g % 500) FROM generate_series(1, 40000) g) TO "
                    "STDOUT; SELECT 3");
    /* COPY FROM STDIN between two statements: the data is the caller's. */
    printf("== multi in\n");
    pqd_show("m0", PQexec(conn, "SELECT 3; COPY ct (id, t) FROM STDIN; SELECT count(*) FROM ct"));
    pqd_put_copy(conn, "30\tthirty\n31\tthirty-one\n", 25);
    printf("putCopyEnd -> %d\n", PQputCopyEnd(conn, NULL));
    pqd_drain(conn, "m0 end");
    /* Two COPYs in one string, the second abandoned by the client: the
     * statement after it never runs. */
    printf("== multi two\n");
    printf("send -> %d\n",
           PQsendQuery(conn, "COPY (SELECT 1) TO STDOUT; COPY ct (id) FROM STDIN; SELECT 4"));
    pqd_show("t0", PQgetResult(conn));
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        printf("row [%.*s]\n", n - 1, buf);
        PQfreemem(buf);
    }
    printf("getCopyData -> %d\n", n);
    pqd_show("t1", PQgetResult(conn));
    pqd_show("t2", PQgetResult(conn));
    pqd_put_copy(conn, "40\n", 3);
    printf("putCopyEnd -> %d\n", PQputCopyEnd(conn, "stop here"));
    pqd_drain(conn, "t rest");
    /* An error inside a COPY TO among statements ends the string there. */
    printf("== multi error\n");
    pqd_show("e0", PQexec(conn, "SELECT 5; COPY (SELECT 1/(id-30) FROM ct ORDER BY id DESC) TO "
                                "STDOUT; SELECT 6"));
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        printf("row [%.*s]\n", n - 1, buf);
        PQfreemem(buf);
    }
    printf("getCopyData -> %d\n", n);
    pqd_drain(conn, "e rest");
    /* A blocking PQgetCopyData never returns 0, also when more rows come
     * than are held for it at a time (10 MB here) and the COPY is one
     * statement of several. */
    printf("== multi large\n");
    pqd_show("l0", PQexec(conn, "SELECT 7; COPY (SELECT repeat('x', 100000) FROM "
                                "generate_series(1, 100)) TO STDOUT; SELECT 8"));
    long rows = 0, bytes = 0;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        rows++;
        bytes += n;
        PQfreemem(buf);
    }
    printf("getCopyData -> %d after %ld rows, %ld bytes\n", n, rows, bytes);
    pqd_drain(conn, "l rest");
    /* Notices during a COPY TO come among its rows where libpq reads them:
     * one before the first row with PGRES_COPY_OUT, one before each row,
     * and an AFTER trigger's (sent after the CopyDone) with the results. */
    printf("== notices among rows\n");
    pqd_exec(conn, "CREATE TEMP TABLE cn (id int)");
    pqd_exec(conn, "CREATE FUNCTION pg_temp.note() RETURNS trigger LANGUAGE plpgsql AS $$ "
                   "BEGIN RAISE NOTICE '% %', TG_WHEN, TG_OP; RETURN NEW; END $$");
    pqd_exec(conn, "CREATE TRIGGER cn_b BEFORE INSERT ON cn FOR EACH ROW "
                   "EXECUTE FUNCTION pg_temp.note()");
    pqd_exec(conn, "CREATE TRIGGER cn_a AFTER INSERT ON cn FOR EACH ROW "
                   "EXECUTE FUNCTION pg_temp.note()");
    pqd_exec(conn, "CREATE FUNCTION pg_temp.loud(i int) RETURNS int LANGUAGE plpgsql AS $$ "
                   "BEGIN RAISE NOTICE 'row %', i; RETURN i; END $$");
    const char *noisy[] = {"COPY (INSERT INTO cn VALUES (8), (9) RETURNING id) TO STDOUT",
                           "COPY (SELECT pg_temp.loud(g) FROM generate_series(1, 3) g) TO STDOUT",
                           "SELECT 1; COPY (SELECT pg_temp.loud(4)) TO STDOUT"};
    for (size_t q = 0; q < sizeof noisy / sizeof noisy[0]; q++) {
        PGresult *r = PQexec(conn, noisy[q]);
        printf("exec -> %s\n", PQresStatus(PQresultStatus(r)));
        PQclear(r);
        while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
            printf("row [%.*s]\n", n - 1, buf);
            PQfreemem(buf);
        }
        printf("getCopyData -> %d\n", n);
        pqd_drain(conn, "noisy");
    }
    /* A notice right behind CopyInResponse (a BEFORE STATEMENT trigger's)
     * read with it: libpq parses it before PQgetResult returns
     * PGRES_COPY_IN, not at the COPY's end. */
    printf("== notice behind CopyInResponse\n");
    pqd_exec(conn, "CREATE TEMP TABLE cf (id int)");
    pqd_exec(conn, "CREATE TRIGGER cf_s BEFORE INSERT ON cf FOR EACH STATEMENT "
                   "EXECUTE FUNCTION pg_temp.note()");
    printf("sendQuery -> %d\n", PQsendQuery(conn, "COPY cf FROM STDIN"));
    printf("both in the socket: %d\n", await_copy_in_notice(conn));
    PGresult *r = PQgetResult(conn);
    printf("getResult -> %s\n", PQresStatus(PQresultStatus(r)));
    PQclear(r);
    printf("putCopyData -> %d\n", PQputCopyData(conn, "1\n2\n", 4));
    printf("putCopyEnd -> %d\n", PQputCopyEnd(conn, NULL));
    pqd_drain(conn, "copy in");
    pqd_exec(conn, "SELECT count(*) FROM cf");
    /* The copy calls outside a COPY start after a command of their own: the
     * error message they add to is then the same empty one in both runs,
     * whatever the multi-statement COPY above left there. */
    pqd_exec(conn, "SELECT 'outside COPY'");
    printf("putCopyData outside COPY -> %d\n", PQputCopyData(conn, "x", 1));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    printf("putCopyEnd outside COPY -> %d\n", PQputCopyEnd(conn, NULL));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    buf = NULL;
    printf("getCopyData outside COPY -> %d\n", PQgetCopyData(conn, &buf, 0));
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    pqd_exec(conn, "SELECT id, t, b FROM ct ORDER BY id");
    PQfinish(conn);
    return 0;
}
