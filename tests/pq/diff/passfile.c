/*
 * The password file's warnings, which libpq writes to stderr (the driver
 * reads stdout and stderr as one stream): a file with group or world
 * access, a directory, a usable file (no warning), a list of two hosts
 * (once per host), a password given (the file is not looked at), PQping,
 * and PQreset (no warning: the options are not read again). The server
 * trusts this role, so every connect succeeds whatever the file holds.
 */
#include "pqdiff.h"

#include <sys/stat.h>

static void attempt(const char *label, const char *passfile, const char *host, const char *pw)
{
    printf("%s\n", label);
    fflush(stdout);
    const char *extra[7];
    int n = 0;
    extra[n++] = "passfile", extra[n++] = passfile;
    if (host) extra[n++] = "host", extra[n++] = host;
    if (pw) extra[n++] = "password", extra[n++] = pw;
    extra[n] = NULL;
    PGconn *conn = pqd_connect_with(extra);
    fflush(stderr);
    printf("  %s\n", pqd_connstatus(PQstatus(conn)));
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    const char *sockdir = pqd_env("PGHOST", "/tmp");
    FILE *f = fopen("pgpass", "w");
    if (!f) {
        printf("cannot write pgpass\n");
        return 1;
    }
    fprintf(f, "*:*:*:nobody:secret\n");
    fclose(f);
    if (mkdir("pgpass.d", 0700) != 0) {
        printf("cannot make pgpass.d\n");
        return 1;
    }
    char two[512];
    snprintf(two, sizeof two, "%s,%s", sockdir, sockdir);

    chmod("pgpass", 0644);
    attempt("group and world readable", "pgpass", NULL, NULL);
    attempt("two hosts", "pgpass", two, NULL);
    attempt("password given", "pgpass", NULL, "x");
    chmod("pgpass", 0660);
    attempt("group writable", "pgpass", NULL, NULL);
    attempt("a directory", "pgpass.d", NULL, NULL);
    chmod("pgpass", 0600);
    attempt("owner only", "pgpass", NULL, NULL);

    chmod("pgpass", 0644);
    printf("ping\n");
    fflush(stdout);
    const char *kw[] = {"host", "port", "user", "dbname", "passfile", NULL};
    const char *vals[] = {sockdir,
                          pqd_env("PGPORT", "5432"),
                          pqd_env("PGUSER", ""),
                          pqd_env("PGDATABASE", ""),
                          "pgpass",
                          NULL};
    PGPing p = PQpingParams(kw, vals, 0);
    fflush(stderr);
    printf("  %s\n", p == PQPING_OK ? "PQPING_OK" : "not OK");

    printf("reset\n");
    fflush(stdout);
    PGconn *conn = pqd_connect_with((const char *[]){"passfile", "pgpass", NULL});
    fflush(stderr);
    printf("  connected: %s\n", pqd_connstatus(PQstatus(conn)));
    fflush(stdout);
    PQreset(conn);
    fflush(stderr);
    printf("  after PQreset: %s\n", pqd_connstatus(PQstatus(conn)));
    PQfinish(conn);
    unlink("pgpass");
    rmdir("pgpass.d");
    return 0;
}
