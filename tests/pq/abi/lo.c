/*
 * Large objects through lo_*, as psql's \lo_import / \lo_export and
 * programs use them: results and PQerrorMessage texts, compared between
 * libpq and libpgwire-pq by run-diff.sh. OIDs the server assigns differ
 * from run to run: only whether one was assigned is printed.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INV_WRITE 0x00020000
#define INV_READ  0x00040000

static PGconn *conn;

static void report(const char *what, long long rc)
{
    printf("%s -> %lld err=[", what, rc);
    for (const char *p = PQerrorMessage(conn); *p; p++)
        if (*p == '\n')
            printf("\\n");
        else
            putchar(*p);
    printf("]\n");
}

static void exec(const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    printf("%s -> %s\n", sql, PQresStatus(PQresultStatus(r)));
    PQclear(r);
}

int main(void)
{
    conn = PQconnectdb("");
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("connect: %s", PQerrorMessage(conn));
        return 1;
    }
    char in[] = "lo_in_XXXXXX";
    int fd = mkstemp(in);
    const char *text = "large object data\nline two\n";
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) return 1;
    close(fd);

    exec("BEGIN");
    Oid imported = lo_import(conn, in);
    report(imported ? "lo_import (an oid)" : "lo_import (none)", 0);
    int lo = lo_open(conn, imported, INV_READ | INV_WRITE);
    report("lo_open", lo);
    char buf[64] = {0};
    int n = lo_read(conn, lo, buf, sizeof buf - 1);
    report("lo_read", n);
    printf("  read [%s]\n", buf);
    report("lo_lseek", lo_lseek(conn, lo, 6, SEEK_SET));
    report("lo_tell", lo_tell(conn, lo));
    report("lo_write", lo_write(conn, lo, "OBJECT", 6));
    report("lo_write 0", lo_write(conn, lo, "", 0));
    report("lo_lseek64 end", lo_lseek64(conn, lo, 0, SEEK_END));
    report("lo_tell64", lo_tell64(conn, lo));
    report("lo_truncate", lo_truncate(conn, lo, 20));
    report("lo_truncate64", lo_truncate64(conn, lo, 18));
    report("lo_lseek back", lo_lseek(conn, lo, 0, SEEK_SET));
    memset(buf, 0, sizeof buf);
    n = lo_read(conn, lo, buf, sizeof buf - 1);
    report("lo_read again", n);
    printf("  read [%s]\n", buf);
    report("lo_read too long", lo_read(conn, lo, buf, (size_t)1 << 33));
    report("lo_close", lo_close(conn, lo));
    char out[] = "lo_out_XXXXXX";
    fd = mkstemp(out);
    close(fd);
    report("lo_export", lo_export(conn, imported, out));
    FILE *f = fopen(out, "r");
    memset(buf, 0, sizeof buf);
    if (f) {
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        (void)got;
        fclose(f);
    }
    printf("  exported [%s]\n", buf);
    report("lo_export to a directory that is not there",
           lo_export(conn, imported, "/nonexistent/dir/file"));
    exec("ROLLBACK");
    exec("BEGIN");
    report("lo_import of a missing file", lo_import(conn, "/nonexistent/file"));
    Oid fixed = lo_create(conn, 3999999000u);
    report("lo_create 3999999000", fixed);
    report("lo_import_with_oid taken", lo_import_with_oid(conn, in, 3999999000u));
    exec("ROLLBACK");
    exec("BEGIN");
    report("lo_creat (an oid)", lo_creat(conn, INV_READ | INV_WRITE) != 0);
    report("lo_open of no object", lo_open(conn, 3999999001u, INV_READ));
    exec("ROLLBACK");
    report("lo_unlink of no object", lo_unlink(conn, 3999999001u));
    report("lo_close outside a transaction", lo_close(conn, 0));
    unlink(in);
    unlink(out);
    PQfinish(conn);
    return 0;
}
