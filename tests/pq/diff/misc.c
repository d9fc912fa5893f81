/*
 * The rest of what psql and pgbench call: PQtrace (with timestamps
 * suppressed) of a few exchanges, PQencryptPasswordConn / PQencryptPassword
 * (md5 exactly; SCRAM's random salt leaves only its shape), PQfreemem of
 * NULL, PQmakeEmptyPGresult / PQcopyResult / PQsetvalue / PQsetResultAttrs,
 * PQresStatus of every status, PQresultErrorField on a non-error. (The
 * PQExpBuffer functions, not in libpq-fe.h, are exercised by psql and pgbench.)
 *
 * PQtrace, PQsetTraceFlags and PQuntrace are looked up with dlsym: a library
 * without them prints "PQtrace: not exported" instead of stopping the
 * program at the loader's symbol lookup error, so the rest of its checks
 * still run. (tests/pq/diff/trace.c covers the trace itself.)
 */
#include "pqdiff.h"

#include <dlfcn.h>

static void encrypt(PGconn *conn, const char *alg)
{
    char *e = PQencryptPasswordConn(conn, "secret", "alice", alg);
    printf("encrypt(%s) -> ", alg ? alg : "NULL");
    if (!e) {
        pqd_print_str("NULL error", PQerrorMessage(conn));
        return;
    }
    if (strncmp(e, "SCRAM-SHA-256$", 14) == 0)
        printf("SCRAM shape %s\n", strchr(e, ':') && strchr(e, '$') ? "ok" : "bad");
    else
        printf("%s\n", e);
    PQfreemem(e);
}

/* The function the loaded libpq exports as name, NULL when it does not
 * (copied out of dlsym's void *: ISO C has no conversion to a function
 * pointer). */
#define PQD_LOOKUP(fn, name)                    \
    do {                                        \
        void *sym_ = dlsym(RTLD_DEFAULT, name); \
        memcpy(&(fn), &sym_, sizeof(fn));       \
    } while (0)

static void traced_exchanges(PGconn *conn)
{
    void (*trace_fn)(PGconn *, FILE *) = NULL;
    void (*flags_fn)(PGconn *, int) = NULL;
    void (*untrace_fn)(PGconn *) = NULL;
    PQD_LOOKUP(trace_fn, "PQtrace");
    PQD_LOOKUP(flags_fn, "PQsetTraceFlags");
    PQD_LOOKUP(untrace_fn, "PQuntrace");
    int traced = trace_fn && flags_fn && untrace_fn;
    if (!traced) printf("PQtrace: not exported\n");
    FILE *trace = tmpfile();
    if (traced) {
        trace_fn(conn, trace);
        flags_fn(conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    }
    PQclear(PQexec(conn, "SELECT 1 AS one, NULL::text AS n"));
    PQclear(PQexecParams(conn, "SELECT $1::int", 1, NULL, (const char *[]){"5"}, NULL, NULL, 1));
    PQclear(PQexec(conn, "SELECT 1/0"));
    if (traced) untrace_fn(conn);
    PQclear(PQexec(conn, "SELECT 'not traced'"));
    rewind(trace);
    char line[512];
    while (fgets(line, sizeof line, trace))
        printf("trace: %s", line);
    fclose(trace);
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    traced_exchanges(conn);

    encrypt(conn, "md5");
    encrypt(conn, "scram-sha-256");
    encrypt(conn, NULL);
    encrypt(conn, "rot13");
    char *old = PQencryptPassword("secret", "alice");
    printf("encryptPassword -> %s\n", old ? old : "NULL");
    PQfreemem(old);
    PQfreemem(NULL);

    for (int s = 0; s <= PGRES_PIPELINE_ABORTED + 1; s++)
        printf("resStatus(%d)=%s\n", s, PQresStatus((ExecStatusType)s));

    PGresult *r = PQexec(conn, "SELECT 1 AS a, 'x'::text AS b");
    printf("errorField on success: %s\n", PQresultErrorField(r, PG_DIAG_SQLSTATE) ? "set" : "NULL");
    PGresult *copy = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    pqd_show("copy", copy);
    copy = PQcopyResult(r, PG_COPYRES_ATTRS);
    printf("setvalue -> %d\n", PQsetvalue(copy, 0, 1, "new", 3));
    printf("setvalue null -> %d\n", PQsetvalue(copy, 1, 0, NULL, -1));
    printf("setvalue gap -> %d\n", PQsetvalue(copy, 5, 0, "x", 1));
    pqd_show("modified", copy);
    PQclear(r);
    PGresult *e = PQmakeEmptyPGresult(conn, PGRES_FATAL_ERROR);
    pqd_show("empty fatal", e);
    e = PQmakeEmptyPGresult(NULL, PGRES_COMMAND_OK);
    PGresAttDesc attrs[2] = {{(char *)"first", 0, 0, 0, 23, 4, -1},
                             {(char *)"second", 0, 0, 1, 17, -1, -1}};
    printf("setResultAttrs -> %d\n", PQsetResultAttrs(e, 2, attrs));
    printf("setvalue -> %d\n", PQsetvalue(e, 0, 0, "\0\0\0\1", 4));
    pqd_show("built", e);
    printf("resultAlloc %s\n", PQresultAlloc(NULL, 10) ? "set" : "NULL");
    PQfinish(conn);
    return 0;
}
