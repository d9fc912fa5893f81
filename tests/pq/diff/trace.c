/*
 * PQtrace, PQsetTraceFlags, PQuntrace: the trace file of a sequence of
 * exchanges printed line by line, so that libpq's and libpgwire-pq's are
 * compared byte for byte.
 *
 *   1. PQTRACE_SUPPRESS_TIMESTAMPS: simple queries (rows, an empty query, an
 *      error), extended queries with text and binary parameters and errors
 *      at Parse and at Execute, a notice, LISTEN/NOTIFY (the sender's PID replaced by "PID"), a
 *      pipeline with an error and two syncs, COPY FROM STDIN (data, and an
 *      abort), COPY TO STDOUT; nothing after PQuntrace.
 *   2. With PQTRACE_REGRESS_MODE too: the values libpq hides (OIDs of a
 *      table the program creates, parameter type OIDs, the NOTIFY sender's
 *      PID, an error's file, line and routine and its length).
 *   3. The default flags: every line starts with libpq's timestamp
 *      ("%Y-%m-%d %H:%M:%S.uuuuuu" and a tab); only that shape is printed.
 *   4. The calls' edges: flags set before PQtrace are ignored, PQtrace
 *      resets them, PQtrace(conn, NULL) stops tracing, PQfinish traces its
 *      Terminate, a trace started before the connection is made.
 */
#include <poll.h>
#include <regex.h>

#include "pqdiff.h"

/* Prints the trace written to f since the last call and empties it, with
 * every occurrence of pid (the backend's PID in a NotificationResponse)
 * replaced by "PID". */
static void print_trace(const char *label, FILE *f, int pid)
{
    char pidtext[32], line[2048];
    snprintf(pidtext, sizeof pidtext, " %d ", pid);
    fflush(f);
    rewind(f);
    while (fgets(line, sizeof line, f)) {
        char *at = pid ? strstr(line, pidtext) : NULL;
        if (at) {
            *at = '\0';
            printf("%s: %s PID %s", label, line, at + strlen(pidtext));
        } else {
            printf("%s: %s", label, line);
        }
    }
    rewind(f);
    if (ftruncate(fileno(f), 0) != 0) printf("ftruncate failed\n");
}

static void exec_quiet(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    printf("exec [%s] -> %s\n", sql, PQresStatus(PQresultStatus(r)));
    PQclear(r);
}

static void params(PGconn *conn, const char *sql, int n, const Oid *types,
                   const char *const *values, const int *lengths, const int *formats,
                   int result_format)
{
    PGresult *r = PQexecParams(conn, sql, n, types, values, lengths, formats, result_format);
    printf("params [%s] -> %s\n", sql, PQresStatus(PQresultStatus(r)));
    PQclear(r);
}

/* Results until the pipeline's `syncs` syncs were read. */
static void read_syncs(PGconn *conn, int syncs)
{
    for (int n = 0; syncs > 0 && n < 50; n++) {
        PGresult *r = PQgetResult(conn);
        printf("  pipeline result %s\n", r ? PQresStatus(PQresultStatus(r)) : "NULL");
        if (r && PQresultStatus(r) == PGRES_PIPELINE_SYNC) syncs--;
        PQclear(r);
    }
}

/* Each segment's results are read before the next is sent: libpgwire-pq
 * traces a server message when it arrives, libpq when a call parses it, so
 * with results still unread the lines of the two directions could
 * interleave differently (src/pq/README.md). */
static void pipeline(PGconn *conn)
{
    const char *one[] = {"1"}, *zero[] = {"0"};
    const Oid int4[] = {23};
    printf("enter pipeline -> %d\n", PQenterPipelineMode(conn));
    PQsendQueryParams(conn, "SELECT 10 / $1", 1, int4, one, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 10 / $1", 1, int4, zero, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 'skipped'", 0, NULL, NULL, NULL, NULL, 0);
    PQpipelineSync(conn);
    read_syncs(conn, 1);
    PQsendQueryParams(conn, "SELECT $1 || '!'", 1, (const Oid[]){25}, one, NULL, NULL, 1);
    PQpipelineSync(conn);
    read_syncs(conn, 1);
    /* PQflush sends the queries and no protocol Flush: one Flush message,
     * PQsendFlushRequest's, follows the queries already sent, and only
     * then does the server answer them. */
    PQsendQueryParams(conn, "SELECT 'flushed'", 0, NULL, NULL, NULL, NULL, 0);
    printf("flush -> %d\n", PQflush(conn));
    PQsendQueryParams(conn, "SELECT 'flushed too'", 0, NULL, NULL, NULL, NULL, 0);
    printf("flush -> %d\n", PQflush(conn));
    printf("flush request -> %d\n", PQsendFlushRequest(conn));
    printf("flush -> %d\n", PQflush(conn));
    for (int i = 0; i < 2; i++) {
        pqd_show("flushed", PQgetResult(conn));
        printf("then %s\n", PQgetResult(conn) ? "a result" : "NULL");
    }
    PQpipelineSync(conn);
    read_syncs(conn, 1);
    printf("exit pipeline -> %d\n", PQexitPipelineMode(conn));
}

static void copy_in(PGconn *conn, const char *abort_msg)
{
    exec_quiet(conn, "COPY tr FROM STDIN");
    printf("put -> %d\n", PQputCopyData(conn, "1\tone\n2\t", 8));
    printf("put -> %d\n", PQputCopyData(conn, "two\n", 4));
    printf("end -> %d\n", PQputCopyEnd(conn, abort_msg));
    pqd_drain(conn, "copy in");
}

static void copy_out(PGconn *conn)
{
    exec_quiet(conn, "COPY (SELECT * FROM tr ORDER BY 1) TO STDOUT");
    char *buf;
    int n;
    while ((n = PQgetCopyData(conn, &buf, 0)) > 0) {
        printf("got %d\n", n);
        PQfreemem(buf);
    }
    pqd_drain(conn, "copy out");
}

/* NOTIFY to itself, read with the query's result. */
static void notify_self(PGconn *conn)
{
    exec_quiet(conn, "LISTEN trace_chan");
    exec_quiet(conn, "NOTIFY trace_chan, 'payload'");
    PGnotify *n = PQnotifies(conn);
    printf("notify: %s\n", n ? n->relname : "none");
    PQfreemem(n);
    exec_quiet(conn, "UNLISTEN *");
}

static void part_suppress_timestamps(PGconn *conn, FILE *f)
{
    printf("== suppress timestamps\n");
    PQtrace(conn, f);
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    exec_quiet(conn, "SELECT 1 AS one, 'a\tb'::text AS t, NULL::int AS n, '\\x01ff'::bytea AS b");
    exec_quiet(conn, "");
    exec_quiet(conn, "SELECT 1/0");
    const Oid types[] = {23, 23};
    const char *vals[] = {"7", "\x00\x00\x00\x05"};
    const int lens[] = {1, 4}, fmts[] = {0, 1};
    params(conn, "SELECT $1::int + $2::int", 2, types, vals, lens, fmts, 1);
    params(conn, "SELECT $1::int / 0", 1, types, vals, NULL, NULL, 0);
    params(conn, "SELEC $1", 1, types, vals, NULL, NULL, 0);
    params(conn, "SELECT $1::text", 1, NULL, vals, NULL, NULL, 0);
    exec_quiet(conn, "DO $$BEGIN RAISE NOTICE 'hello %', 42; END$$");
    notify_self(conn);
    pipeline(conn);
    exec_quiet(conn, "CREATE TEMP TABLE tr (id int, v text)");
    copy_in(conn, NULL);
    copy_in(conn, "client gave up");
    copy_out(conn);
    PQuntrace(conn);
    exec_quiet(conn, "SELECT 'not traced'");
    print_trace("trace", f, PQbackendPID(conn));
}

static void part_regress(PGconn *conn, FILE *f)
{
    printf("== regress mode\n");
    PQtrace(conn, f);
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS | PQTRACE_REGRESS_MODE);
    exec_quiet(conn, "SELECT * FROM tr ORDER BY id");
    exec_quiet(conn, "SELECT 1/0");
    exec_quiet(conn, "DO $$BEGIN RAISE NOTICE 'regress %', 1; END$$");
    const Oid types[] = {23, 25};
    const char *vals[] = {"1", "a"};
    params(conn, "SELECT $1 + 1, $2 || 'x'", 2, types, vals, NULL, NULL, 0);
    exec_quiet(conn, "PREPARE rst(int, text) AS SELECT $1 + 1, $2 || 'x'");
    PQclear(PQdescribePrepared(conn, "rst"));
    notify_self(conn);
    PQuntrace(conn);
    print_trace("regress", f, 0);
}

/* libpq's timestamp: "YYYY-MM-DD HH:MM:SS.uuuuuu", a tab, then F or B. */
static void part_timestamps(PGconn *conn, FILE *f)
{
    printf("== default flags\n");
    regex_t re;
    if (regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}\t[FB]\t",
                REG_EXTENDED | REG_NOSUB) != 0) {
        printf("regcomp failed\n");
        return;
    }
    PQtrace(conn, f);
    exec_quiet(conn, "SELECT 1");
    PQuntrace(conn);
    rewind(f);
    char line[2048];
    int lines = 0, shaped = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (regexec(&re, line, 0, NULL, 0) == 0)
            shaped++;
        else
            printf("not libpq's timestamp: %s", line);
    }
    printf("timestamped lines: %d, of libpq's shape: %d\n", lines, shaped);
    regfree(&re);
    rewind(f);
    if (ftruncate(fileno(f), 0) != 0) printf("ftruncate failed\n");
}

static void part_edges(PGconn *conn, FILE *f)
{
    printf("== edges\n");
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS); /* not tracing: ignored */
    PQtrace(conn, f);
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    PQtrace(conn, f); /* again: flags back to 0, timestamps */
    exec_quiet(conn, "SELECT 'timestamped'");
    PQtrace(conn, NULL); /* stops */
    exec_quiet(conn, "SELECT 'after PQtrace(NULL)'");
    rewind(f);
    char line[2048];
    int lines = 0, stamped = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        stamped += isdigit((unsigned char)line[0]) != 0;
    }
    printf("lines %d, timestamped %d\n", lines, stamped);
    rewind(f);
    if (ftruncate(fileno(f), 0) != 0) printf("ftruncate failed\n");
    PQtrace(NULL, f);
    PQuntrace(NULL);
    PQsetTraceFlags(NULL, 0);

    /* PQfinish of a traced connection. */
    PGconn *other = pqd_connect();
    PQtrace(other, f);
    PQsetTraceFlags(other, PQTRACE_SUPPRESS_TIMESTAMPS);
    PQfinish(other);
    print_trace("finish", f, 0);
}

/* A trace started before PQconnectPoll: what libpq traces of the startup. */
static void part_connect(FILE *f)
{
    printf("== traced from PQconnectStartParams\n");
    const char *keys[] = {"host", "port", "user", "dbname", NULL};
    const char *vals[] = {pqd_env("PGHOST", NULL), pqd_env("PGPORT", NULL), pqd_env("PGUSER", NULL),
                          pqd_env("PGDATABASE", NULL), NULL};
    PGconn *conn = PQconnectStartParams(keys, vals, 0);
    PQtrace(conn, f);
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS | PQTRACE_REGRESS_MODE);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    for (int i = 0; i < 1000 && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED; i++) {
        struct pollfd p = {.fd = PQsocket(conn),
                           .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        poll(&p, 1, 100);
        st = PQconnectPoll(conn);
    }
    printf("connect: %s\n", st == PGRES_POLLING_OK ? "ok" : PQerrorMessage(conn));
    exec_quiet(conn, "SELECT 1");
    PQfinish(conn);
    print_trace("connect", f, 0);
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    FILE *f = tmpfile();
    if (!f) {
        printf("tmpfile failed\n");
        return 1;
    }
    part_suppress_timestamps(conn, f);
    part_regress(conn, f);
    part_timestamps(conn, f);
    part_edges(conn, f);
    part_connect(f);
    fclose(f);
    PQfinish(conn);
    return 0;
}
