/*
 * libpq-events.h: event procedures. Registration (refused arguments, a proc
 * registered twice, a proc refusing PGEVT_REGISTER), instance data on the
 * connection and on results, PGEVT_RESULTCREATE for the results of PQexec,
 * PQgetResult (an error, a COPY, pipeline mode), PQdescribePrepared and
 * PQmakeEmptyPGresult + PQfireResultCreateEvents, a proc failing
 * RESULTCREATE (the result turns into an error), PQcopyResult with and
 * without PG_COPYRES_EVENTS (RESULTCOPY, a failing one), PGEVT_RESULTDESTROY
 * at PQclear (only for results whose RESULTCREATE succeeded),
 * PGEVT_CONNRESET at PQreset and PQresetStart/PQresetPoll, and
 * PGEVT_CONNDESTROY at PQfinish. Every event is printed as it fires, with
 * what it carries.
 */
#include <libpq-events.h>
#include <poll.h>

#include "pqdiff.h"

typedef struct proc_state {
    const char *name;
    int refuse_register;
    int refuse_create; /* refuse RESULTCREATE for results of this status + 1 */
    int refuse_copy;
    int refuse_reset;
    int data_seq;
} proc_state_t;

static proc_state_t state_a = {"A", 0, 0, 0, 0, 0};
static proc_state_t state_b = {"B", 0, 0, 0, 0, 0};

static int proc_a(PGEventId id, void *info, void *pass);
static int proc_b(PGEventId id, void *info, void *pass);

static PGconn *g_conn;

/* The instance data each proc gives a result: a small tag, freed at
 * RESULTDESTROY. */
static char *tag(proc_state_t *s, const char *what)
{
    char *t = malloc(64);
    snprintf(t, 64, "%s-%s-%d", s->name, what, ++s->data_seq);
    return t;
}

static int handle(PGEventProc self, PGEventId id, void *info, proc_state_t *s)
{
    switch (id) {
    case PGEVT_REGISTER: {
        PGEventRegister *e = info;
        printf("  [%s] REGISTER conn=%s\n", s->name, e->conn == g_conn ? "same" : "other");
        if (s->refuse_register) return 0;
        PQsetInstanceData(e->conn, self, (void *)s->name);
        return 1;
    }
    case PGEVT_CONNRESET: {
        PGEventConnReset *e = info;
        printf("  [%s] CONNRESET conn=%s status=%s data=%s\n", s->name,
               e->conn == g_conn ? "same" : "other", pqd_connstatus(PQstatus(e->conn)),
               (const char *)PQinstanceData(e->conn, self));
        return !s->refuse_reset;
    }
    case PGEVT_CONNDESTROY: {
        PGEventConnDestroy *e = info;
        printf("  [%s] CONNDESTROY conn=%s data=%s\n", s->name,
               e->conn == g_conn ? "same" : "other", (const char *)PQinstanceData(e->conn, self));
        return 1;
    }
    case PGEVT_RESULTCREATE: {
        PGEventResultCreate *e = info;
        ExecStatusType st = PQresultStatus(e->result);
        printf("  [%s] RESULTCREATE conn=%s status=%s ntuples=%d data=%s\n", s->name,
               e->conn == g_conn ? "same" : (e->conn ? "other" : "null"), PQresStatus(st),
               PQntuples(e->result), PQresultInstanceData(e->result, self) ? "set" : "null");
        if (s->refuse_create && (int)st + 1 == s->refuse_create) return 0;
        PQresultSetInstanceData(e->result, self, tag(s, "create"));
        return 1;
    }
    case PGEVT_RESULTCOPY: {
        PGEventResultCopy *e = info;
        printf("  [%s] RESULTCOPY src=%s dest ntuples=%d dest data=%s\n", s->name,
               (const char *)PQresultInstanceData(e->src, self), PQntuples(e->dest),
               PQresultInstanceData(e->dest, self) ? "set" : "null");
        if (s->refuse_copy) return 0;
        PQresultSetInstanceData(e->dest, self, tag(s, "copy"));
        return 1;
    }
    case PGEVT_RESULTDESTROY: {
        PGEventResultDestroy *e = info;
        char *d = PQresultInstanceData(e->result, self);
        printf("  [%s] RESULTDESTROY status=%s data=%s\n", s->name,
               PQresStatus(PQresultStatus(e->result)), d ? d : "(null)");
        free(d);
        return 1;
    }
    }
    printf("  [%s] unknown event %d\n", s->name, (int)id);
    return 1;
}

static int proc_a(PGEventId id, void *info, void *pass)
{
    return handle(proc_a, id, info, pass);
}

static int proc_b(PGEventId id, void *info, void *pass)
{
    return handle(proc_b, id, info, pass);
}

/* A proc that is never registered. */
static int proc_c(PGEventId id, void *info, void *pass)
{
    (void)id, (void)info, (void)pass;
    return 1;
}

static void show(const char *label, PGresult *r)
{
    printf("%s: %s", label, r ? PQresStatus(PQresultStatus(r)) : "NULL");
    if (r && PQresultErrorMessage(r)[0]) printf(" err=[%s]", PQresultErrorMessage(r));
    printf(" A=%s B=%s\n", r && PQresultInstanceData(r, proc_a) ? "set" : "null",
           r && PQresultInstanceData(r, proc_b) ? "set" : "null");
}

static void exec_show(PGconn *conn, const char *label, const char *sql)
{
    printf("%s\n", label);
    PGresult *r = PQexec(conn, sql);
    show(label, r);
    PQclear(r);
}

static void drain(PGconn *conn, const char *label)
{
    PGresult *r;
    int i = 0;
    while ((r = PQgetResult(conn)) != NULL) {
        char l[64];
        snprintf(l, sizeof l, "%s#%d", label, i++);
        show(l, r);
        PQclear(r);
    }
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    g_conn = conn;
    if (PQstatus(conn) != CONNECTION_OK) return 1;

    printf("register bad args: %d %d %d %d\n", PQregisterEventProc(NULL, proc_a, "a", &state_a),
           PQregisterEventProc(conn, NULL, "a", &state_a),
           PQregisterEventProc(conn, proc_a, NULL, &state_a),
           PQregisterEventProc(conn, proc_a, "", &state_a));
    printf("register A: %d\n", PQregisterEventProc(conn, proc_a, "proc A", &state_a));
    printf("register A again: %d\n", PQregisterEventProc(conn, proc_a, "proc A", &state_a));
    state_b.refuse_register = 1;
    printf("register B refusing: %d\n", PQregisterEventProc(conn, proc_b, "proc B", &state_b));
    state_b.refuse_register = 0;
    printf("register B: %d\n", PQregisterEventProc(conn, proc_b, "proc B", &state_b));
    printf("instance data: A=%s B=%s C=%s\n", (const char *)PQinstanceData(conn, proc_a),
           (const char *)PQinstanceData(conn, proc_b), (const char *)PQinstanceData(conn, proc_c));
    printf("set instance data C: %d, NULL conn: %d, NULL proc: %d\n",
           PQsetInstanceData(conn, proc_c, "x"), PQsetInstanceData(NULL, proc_a, "x"),
           PQsetInstanceData(conn, NULL, "x"));
    printf("instance data NULL conn: %s\n", PQinstanceData(NULL, proc_a) ? "set" : "null");

    exec_show(conn, "select", "SELECT 1 AS a UNION ALL SELECT 2");
    exec_show(conn, "error", "SELECT 1/0");
    exec_show(conn, "command", "SET application_name = 'events'");

    /* A COPY: the COPY_OUT result, then the command's. */
    printf("copy\n");
    PGresult *r = PQexec(conn, "COPY (SELECT 1) TO STDOUT");
    show("copy", r);
    PQclear(r);
    char *buf;
    while (PQgetCopyData(conn, &buf, 0) > 0)
        PQfreemem(buf);
    drain(conn, "copy-end");

    /* A describe. */
    PQclear(PQprepare(conn, "s1", "SELECT $1::int4 AS v", 0, NULL));
    printf("describe\n");
    r = PQdescribePrepared(conn, "s1");
    show("describe", r);

    /* PQcopyResult with and without the events. */
    printf("copyResult without events\n");
    PGresult *c = PQcopyResult(r, PG_COPYRES_ATTRS);
    show("copied", c);
    PQclear(c);
    printf("copyResult with events\n");
    c = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_EVENTS);
    show("copied", c);
    PQclear(c);
    state_b.refuse_copy = 1;
    printf("copyResult with events, B refusing\n");
    c = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_EVENTS);
    show("copied", c);
    PQclear(c);
    state_b.refuse_copy = 0;
    PQclear(r);

    /* Results the program makes. */
    printf("makeEmpty\n");
    PGresult *e = PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK);
    show("empty", e);
    printf("fire: %d\n", PQfireResultCreateEvents(conn, e));
    show("empty", e);
    printf("fire again: %d\n", PQfireResultCreateEvents(conn, e));
    printf("fire NULL: %d\n", PQfireResultCreateEvents(conn, NULL));
    PQclear(e);
    state_a.refuse_create = PGRES_COMMAND_OK + 1;
    e = PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK);
    printf("fire, A refusing: %d\n", PQfireResultCreateEvents(NULL, e));
    show("empty", e);
    state_a.refuse_create = 0;
    printf("fire again: %d\n", PQfireResultCreateEvents(conn, e));
    show("empty", e);
    PQclear(e);
    e = PQmakeEmptyPGresult(NULL, PGRES_COMMAND_OK);
    printf("fire without conn events: %d\n", PQfireResultCreateEvents(NULL, e));
    show("empty-null", e);
    printf("result set instance data: %d %d\n", PQresultSetInstanceData(e, proc_a, "x"),
           PQresultSetInstanceData(NULL, proc_a, "x"));
    PQclear(e);

    /* A proc refusing RESULTCREATE: the result turns into an error. */
    state_a.refuse_create = PGRES_TUPLES_OK + 1;
    exec_show(conn, "refused create", "SELECT 42");
    printf("conn error: [%s]\n", PQerrorMessage(conn));
    state_a.refuse_create = 0;
    exec_show(conn, "after refused create", "SELECT 43");

    /* PQfn: libpq's event procedures hear of no result of a function call. */
    r = PQexec(conn, "SELECT 'int4abs(int4)'::regprocedure::oid");
    int fnid = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    printf("fn\n");
    PQArgBlock arg = {.len = 4, .isint = 1, .u.integer = -7};
    int value = 0, len = 0;
    r = PQfn(conn, fnid, &value, &len, 1, &arg, 1);
    show("fn", r);
    printf("fn value=%d len=%d\n", value, len);
    PQclear(r);

    /* Pipeline mode: every result and the sync's. */
    printf("pipeline\n");
    PQenterPipelineMode(conn);
    PQsendQueryParams(conn, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 1/0", 0, NULL, NULL, NULL, NULL, 0);
    PQsendQueryParams(conn, "SELECT 3", 0, NULL, NULL, NULL, NULL, 0);
    PQpipelineSync(conn);
    for (int i = 0; i < 3; i++)
        drain(conn, "pipe");
    r = PQgetResult(conn);
    show("pipe-sync", r);
    PQclear(r);
    PQexitPipelineMode(conn);

    /* Reset: CONNRESET after the new connection is up. */
    printf("reset\n");
    PQreset(conn);
    printf("reset status=%s\n", pqd_connstatus(PQstatus(conn)));
    state_b.refuse_reset = 1;
    printf("reset, B refusing\n");
    PQreset(conn);
    printf("reset status=%s err=[%s]\n", pqd_connstatus(PQstatus(conn)), PQerrorMessage(conn));
    state_b.refuse_reset = 0;
    printf("resetStart: %d\n", PQresetStart(conn));
    PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
    while (ps != PGRES_POLLING_OK && ps != PGRES_POLLING_FAILED) {
        struct pollfd p = {.fd = PQsocket(conn),
                           .events = ps == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        poll(&p, 1, 5000);
        ps = PQresetPoll(conn);
    }
    printf("resetPoll %s status=%s\n", ps == PGRES_POLLING_OK ? "OK" : "FAILED",
           pqd_connstatus(PQstatus(conn)));
    exec_show(conn, "after reset", "SELECT 5");

    printf("finish\n");
    PQfinish(conn);
    printf("done\n");
    return 0;
}
