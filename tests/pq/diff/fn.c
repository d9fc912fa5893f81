/*
 * PQfn, the fast-path function call: large objects by function OID as old
 * libpq did it (lo_creat, lo_open, lowrite with a byte argument, loread
 * with a byte result, lo_lseek, lo_close, then lo_unlink), an int2 result, a
 * NULL argument to a strict function (NULL result), the server's error
 * (division by zero, an unknown function OID), and PQfn refused in
 * pipeline mode and while a command is in progress. The OIDs the server
 * assigns differ per run: only whether one was given is printed.
 */
#include "pqdiff.h"

#define INV_WRITE 0x00020000
#define INV_READ  0x00040000

/* The OID of the function named by a regprocedure literal. */
static int fn_oid(PGconn *conn, const char *sig)
{
    const char *v[] = {sig};
    PGresult *r = PQexecParams(conn, "SELECT $1::regprocedure::oid", 1, NULL, v, NULL, NULL, 0);
    int oid = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return oid;
}

static PQArgBlock int_arg(int v)
{
    PQArgBlock a;
    a.len = 4;
    a.isint = 1;
    a.u.integer = v;
    return a;
}

/* Call fn with args; print the status, the length and (int) the value. */
static int call_int(PGconn *conn, const char *label, int fn, const PQArgBlock *args, int nargs)
{
    int value = -12345, len = -99;
    PGresult *r = PQfn(conn, fn, &value, &len, 1, args, nargs);
    printf("%s: %s len=%d", label, r ? PQresStatus(PQresultStatus(r)) : "NULL", len);
    if (r && PQresultStatus(r) == PGRES_COMMAND_OK && len > 0) printf(" value=%d", value);
    putchar('\n');
    if (r && PQresultStatus(r) != PGRES_COMMAND_OK) pqd_print_result("  error", r);
    if (!r) pqd_print_str("  errmsg", PQerrorMessage(conn));
    PQclear(r);
    return value;
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "fn");
    int f_creat = fn_oid(conn, "lo_creat(int4)"), f_open = fn_oid(conn, "lo_open(oid,int4)");
    int f_write = fn_oid(conn, "lowrite(int4,bytea)"), f_read = fn_oid(conn, "loread(int4,int4)");
    int f_seek = fn_oid(conn, "lo_lseek(int4,int4,int4)"), f_close = fn_oid(conn, "lo_close(int4)");
    int f_unlink = fn_oid(conn, "lo_unlink(oid)"), f_int2pl = fn_oid(conn, "int2pl(int2,int2)");
    int f_int4div = fn_oid(conn, "int4div(int4,int4)");

    pqd_exec(conn, "BEGIN");
    PQArgBlock a[3];
    a[0] = int_arg(INV_READ | INV_WRITE);
    int value = -1, len = -99;
    PGresult *r = PQfn(conn, f_creat, &value, &len, 1, a, 1);
    printf("lo_creat: %s len=%d oid=%s\n", PQresStatus(PQresultStatus(r)), len,
           value > 0 ? "given" : "none");
    PQclear(r);
    Oid lobj = (Oid)value;
    a[0] = int_arg((int)lobj);
    a[1] = int_arg(INV_READ | INV_WRITE);
    int fd = call_int(conn, "lo_open", f_open, a, 2);

    static char data[] = "fast path \001\002\003 bytes";
    a[0] = int_arg(fd);
    a[1].len = (int)sizeof data;
    a[1].isint = 0;
    a[1].u.ptr = (int *)data;
    call_int(conn, "lowrite", f_write, a, 2);
    a[1] = int_arg(0);
    a[2] = int_arg(0); /* SEEK_SET */
    call_int(conn, "lo_lseek", f_seek, a, 3);

    /* loread: a byte result into the buffer. */
    char buf[64];
    memset(buf, 'z', sizeof buf);
    a[1] = int_arg(40);
    r = PQfn(conn, f_read, (int *)buf, &len, 0, a, 2);
    printf("loread: %s len=%d [", PQresStatus(PQresultStatus(r)), len);
    pqd_print_escaped(buf, len > 0 ? (size_t)len : 0);
    printf("] after=%c\n", buf[len > 0 ? len : 0]);
    PQclear(r);
    call_int(conn, "lo_close", f_close, a, 1);
    pqd_exec(conn, "COMMIT");
    a[0] = int_arg((int)lobj);
    call_int(conn, "lo_unlink", f_unlink, a, 1);
    pqd_exec(conn, "BEGIN");

    /* An int2 result, a NULL argument, errors. */
    PQArgBlock s[2];
    s[0].len = 2;
    s[0].isint = 1;
    s[0].u.integer = 300;
    s[1] = s[0];
    s[1].u.integer = -1;
    call_int(conn, "int2pl", f_int2pl, s, 2);
    s[1].len = -1;
    call_int(conn, "int2pl null", f_int2pl, s, 2);
    PQArgBlock d[2] = {int_arg(1), int_arg(0)};
    call_int(conn, "int4div by zero", f_int4div, d, 2);
    printf("tx after error: %s\n", pqd_txstatus(PQtransactionStatus(conn)));
    pqd_exec(conn, "ROLLBACK");
    call_int(conn, "unknown function", 1, d, 2);

    /* Refused states. */
    printf("send -> %d\n", PQsendQuery(conn, "SELECT 1"));
    call_int(conn, "while busy", f_int4div, d, 2);
    pqd_drain(conn, "busy");
    printf("enter -> %d\n", PQenterPipelineMode(conn));
    call_int(conn, "in pipeline", f_int4div, d, 2);
    printf("exit -> %d\n", PQexitPipelineMode(conn));
    d[0] = int_arg(84);
    d[1] = int_arg(2);
    call_int(conn, "int4div", f_int4div, d, 2);
    PQfinish(conn);
    return 0;
}
