/*
 * Notices: the default processor replaced by one that prints, a notice
 * receiver that prints the PGresult it gets (status and every field), the
 * processor's argument, notices of every level from RAISE, notices in the
 * middle of a multi-statement string and of a pipeline, and
 * PQsetErrorVerbosity/PQsetErrorContextVisibility applied to them; the
 * setters with a NULL hook and with a NULL connection; notices with a
 * position, shown in the command's text; the default receiver set again.
 */
#include "pqdiff.h"

static void receiver(void *arg, const PGresult *r)
{
    printf("receiver(%s): ", (const char *)arg);
    pqd_print_result("notice", r);
    char *verbose = PQresultVerboseErrorMessage(r, PQERRORS_VERBOSE, PQSHOW_CONTEXT_ALWAYS);
    pqd_print_str("  verbose", verbose);
    PQfreemem(verbose);
}

static const char *raise_sql =
    "DO $$ BEGIN "
    "RAISE DEBUG 'debug %', 1; "
    "RAISE LOG 'log'; "
    "RAISE INFO 'info %', 'x'; "
    "RAISE NOTICE 'notice' USING DETAIL = 'the detail', HINT = 'the hint'; "
    "RAISE WARNING 'warning' USING ERRCODE = '01007'; "
    "END $$";

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    pqd_exec(conn, "SET client_min_messages = debug1");
    PQnoticeProcessor old = PQsetNoticeProcessor(conn, pqd_notice_printer, "p1");
    printf("default processor was %s\n", old ? "set" : "NULL");
    printf("query processor: %s\n",
           PQsetNoticeProcessor(conn, NULL, NULL) == pqd_notice_printer ? "ours" : "other");
    pqd_exec(conn, "SET client_min_messages = notice");
    pqd_exec(conn, raise_sql);
    pqd_exec(conn, "DROP TABLE IF EXISTS no_such_table; DROP TABLE IF EXISTS no_such_either");
    pqd_exec(conn, "SET client_min_messages = debug1");
    pqd_exec(conn, raise_sql);

    const PGVerbosity levels[] = {PQERRORS_TERSE, PQERRORS_DEFAULT, PQERRORS_VERBOSE,
                                  PQERRORS_SQLSTATE};
    for (int i = 0; i < 4; i++) {
        printf("verbosity %d (was %d)\n", (int)levels[i],
               (int)PQsetErrorVerbosity(conn, levels[i]));
        pqd_exec(conn, "DO $$ BEGIN RAISE NOTICE 'v' USING DETAIL = 'd', HINT = 'h'; END $$");
        pqd_exec(conn, "SELECT 1/0");
    }
    PQsetErrorVerbosity(conn, PQERRORS_DEFAULT);
    const PGContextVisibility ctx[] = {PQSHOW_CONTEXT_NEVER, PQSHOW_CONTEXT_ERRORS,
                                       PQSHOW_CONTEXT_ALWAYS};
    for (int i = 0; i < 3; i++) {
        printf("context visibility %d (was %d)\n", (int)ctx[i],
               (int)PQsetErrorContextVisibility(conn, ctx[i]));
        pqd_exec(conn, "DO $$ BEGIN RAISE NOTICE 'in do'; PERFORM 1/0; END $$");
    }
    PQsetErrorContextVisibility(conn, PQSHOW_CONTEXT_ERRORS);

    PQnoticeReceiver oldr = PQsetNoticeReceiver(conn, receiver, "r1");
    printf("default receiver was %s\n", oldr ? "set" : "NULL");
    pqd_exec(conn, raise_sql);

    /* A NULL hook only reads (its argument stays r1); a NULL conn gives
     * NULL hooks and the default settings. */
    printf("query receiver: %s\n",
           PQsetNoticeReceiver(conn, NULL, "r2") == receiver ? "ours" : "other");
    pqd_exec(conn, "DO $$ BEGIN RAISE NOTICE 'still r1'; END $$");
    printf("no conn: receiver %s, processor %s, verbosity %d, context visibility %d\n",
           PQsetNoticeReceiver(NULL, receiver, "r3") ? "set" : "NULL",
           PQsetNoticeProcessor(NULL, pqd_notice_printer, "p3") ? "set" : "NULL",
           (int)PQsetErrorVerbosity(NULL, PQERRORS_VERBOSE),
           (int)PQsetErrorContextVisibility(NULL, PQSHOW_CONTEXT_ALWAYS));

    /* In a pipeline: notices arrive between results. */
    PQenterPipelineMode(conn);
    PQsendQueryParams(conn, "DO $$ BEGIN RAISE NOTICE 'piped'; END $$", 0, NULL, NULL, NULL, NULL,
                      0);
    PQsendQueryParams(conn, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0);
    PQpipelineSync(conn);
    for (int i = 0; i < 5; i++)
        pqd_show("piped", PQgetResult(conn));
    PQexitPipelineMode(conn);

    /* A notice with a position shows it in the text of the command the
     * server is running, as an error does: PQexec (a position on the
     * second line), PQexecParams, PQprepare, and a command in a pipeline. */
    PQsetNoticeProcessor(conn, pqd_notice_printer, "p4");
    pqd_exec(conn, "SET standard_conforming_strings = off");
    pqd_exec(conn, "SELECT 1 AS one,\n  'a\\\\b' AS two");
    const char *const five[] = {"5"};
    pqd_show("params",
             PQexecParams(conn, "SELECT $1::int, 'x\\\\y'", 1, NULL, five, NULL, NULL, 0));
    pqd_show("prepare", PQprepare(conn, "notice_stmt", "SELECT 'p\\\\q'", 0, NULL));
    PQsetErrorVerbosity(conn, PQERRORS_VERBOSE);
    pqd_exec(conn, "SELECT 'verbose \\\\'");
    PQsetErrorVerbosity(conn, PQERRORS_DEFAULT);
    PQenterPipelineMode(conn);
    PQsendQueryParams(conn, "SELECT 'first \\\\'", 0, NULL, NULL, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 2", 0, NULL, NULL, NULL, NULL, 0);
    PQpipelineSync(conn);
    for (int i = 0; i < 5; i++)
        pqd_show("piped", PQgetResult(conn));
    PQexitPipelineMode(conn);
    pqd_exec(conn, "SET standard_conforming_strings = on");

    /* The default receiver set again with an argument of the caller's (NULL,
     * as ruby-pg restores it): it still calls the connection's processor. */
    PQsetNoticeReceiver(conn, oldr, NULL);
    PQsetNoticeProcessor(conn, pqd_notice_printer, "p5");
    pqd_exec(conn, "DO $$ BEGIN RAISE NOTICE 'default receiver again'; END $$");
    PQfinish(conn);
    return 0;
}
