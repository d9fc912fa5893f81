/*
 * Large objects as psql's \lo_* use them, and the rest of the lo_* API:
 * lo_creat/lo_create, lo_open, lo_write, lo_read, lo_lseek(64), lo_tell(64),
 * lo_truncate(64), lo_close, lo_import/lo_export, lo_unlink, and their
 * errors (no transaction, unknown object, bad descriptor). The OIDs the
 * server assigns differ per run: only whether one was given is printed.
 */
#include <fcntl.h>

#include "libpq/libpq-fs.h"
#include "pqdiff.h"

static void err(PGconn *conn, const char *what, long long rc)
{
    printf("%s -> %lld", what, rc);
    if (rc < 0)
        pqd_print_str(" error", PQerrorMessage(conn));
    else
        putchar('\n');
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    PQsetNoticeProcessor(conn, pqd_notice_printer, "lo");

    /* Outside a transaction: descriptors do not survive, opens fail. */
    Oid oid = lo_creat(conn, INV_READ | INV_WRITE);
    printf("lo_creat outside tx -> %s\n", oid ? "oid" : "0");
    err(conn, "lo_open outside tx then write",
        lo_write(conn, lo_open(conn, oid, INV_WRITE), "x", 1));

    pqd_exec(conn, "BEGIN");
    int fd = lo_open(conn, oid, INV_READ | INV_WRITE);
    err(conn, "lo_open", fd);
    char data[5000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 7);
    err(conn, "lo_write", lo_write(conn, fd, data, sizeof data));
    err(conn, "lo_tell", lo_tell(conn, fd));
    err(conn, "lo_tell64", (long long)lo_tell64(conn, fd));
    err(conn, "lo_lseek SET 10", lo_lseek(conn, fd, 10, SEEK_SET));
    char buf[6000];
    int n = lo_read(conn, fd, buf, 20);
    printf("lo_read 20 -> %d same=%d\n", n, n == 20 && !memcmp(buf, data + 10, 20));
    err(conn, "lo_lseek64 END -100", (long long)lo_lseek64(conn, fd, -100, SEEK_END));
    n = lo_read(conn, fd, buf, sizeof buf);
    printf("lo_read to end -> %d same=%d\n", n, n == 100 && !memcmp(buf, data + 4900, 100));
    err(conn, "lo_truncate 1000", lo_truncate(conn, fd, 1000));
    err(conn, "lo_truncate64 500", lo_truncate64(conn, fd, 500));
    err(conn, "lo_lseek CUR 0", lo_lseek(conn, fd, 0, SEEK_CUR));
    err(conn, "lo_lseek SET 0", lo_lseek(conn, fd, 0, SEEK_SET));
    n = lo_read(conn, fd, buf, sizeof buf);
    printf("lo_read all -> %d same=%d\n", n, n == 500 && !memcmp(buf, data, 500));
    err(conn, "lo_close", lo_close(conn, fd));
    err(conn, "lo_close again", lo_close(conn, fd));
    err(conn, "lo_read bad fd", lo_read(conn, 12345, buf, 1));
    pqd_exec(conn, "ROLLBACK");
    pqd_exec(conn, "BEGIN");
    err(conn, "lo_open unknown", lo_open(conn, 1, INV_READ));
    pqd_exec(conn, "ROLLBACK");

    /* Import and export, as psql's \lo_import and \lo_export. */
    FILE *f = fopen("lo_in.bin", "wb");
    fwrite(data, 1, sizeof data, f);
    fclose(f);
    pqd_exec(conn, "BEGIN");
    Oid imported = lo_import(conn, "lo_in.bin");
    printf("lo_import -> %s\n", imported ? "oid" : "0");
    err(conn, "lo_export", lo_export(conn, imported, "lo_out.bin"));
    f = fopen("lo_out.bin", "rb");
    n = f ? (int)fread(buf, 1, sizeof buf, f) : -1;
    if (f) fclose(f);
    printf("exported %d bytes same=%d\n", n,
           n == (int)sizeof data && !memcmp(buf, data, sizeof data));
    printf("lo_import missing -> %u", lo_import(conn, "no_such_file"));
    pqd_print_str(" error", PQerrorMessage(conn));
    pqd_exec(conn, "ROLLBACK");
    pqd_exec(conn, "BEGIN");
    err(conn, "lo_export unknown", lo_export(conn, 1, "lo_none.bin"));
    pqd_exec(conn, "ROLLBACK");
    printf("lo_create(0) -> %s\n", lo_create(conn, 0) ? "oid" : "0"); /* unlinked below */
    Oid fixed = lo_create(conn, 424242);
    printf("lo_create(424242) -> %u\n", fixed);
    printf("lo_create(424242) again -> %u", lo_create(conn, 424242));
    pqd_print_str(" error", PQerrorMessage(conn));
    err(conn, "lo_unlink", lo_unlink(conn, fixed));
    err(conn, "lo_unlink again", lo_unlink(conn, fixed));
    err(conn, "lo_unlink first", lo_unlink(conn, oid));
    pqd_exec(conn, "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = 424242");
    pqd_exec(conn, "SELECT lo_unlink(max(oid)) = 1 AS unlinked FROM pg_largeobject_metadata"
                   " WHERE lomowner = current_user::regrole");
    PQfinish(conn);
    return 0;
}
