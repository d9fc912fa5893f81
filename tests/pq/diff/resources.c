/*
 * What a connection costs its process: a connect with no descriptor to
 * spare, before any other (a failed connection, not a dead process), the
 * threads running after connections by host name (one that resolves, one
 * that does not, a list whose first name does not), by address and by
 * socket directory (libpq starts none: it resolves on the caller's
 * thread), and the file descriptors an open connection holds and those
 * left after PQfinish: after the process's first connections, and after
 * two more.
 */
#include "pqdiff.h"

#include <dirent.h>
#include <sys/resource.h>

/* A connect with the descriptor limit spare descriptors above the lowest
 * free one. */
static void starved(const char *label, const char *tcp, int spare)
{
    struct rlimit old, low;
    int lowest = dup(0);
    if (getrlimit(RLIMIT_NOFILE, &old) != 0 || lowest < 0) {
        printf("%s: no limit to lower\n", label);
        return;
    }
    close(lowest);
    low = old;
    low.rlim_cur = (rlim_t)(lowest + spare);
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) {
        printf("%s: no limit to lower\n", label);
        return;
    }
    PGconn *conn = pqd_connect_with((const char *[]){"host", tcp, NULL});
    const char *want = "could not create socket: Too many open files";
    const char *msg = PQerrorMessage(conn);
    printf("%s: %s", label, conn ? pqd_connstatus(PQstatus(conn)) : "no connection");
    /* the message's prefix names the server: not printed */
    if (PQstatus(conn) != CONNECTION_OK) printf(", %s", strstr(msg, want) ? want : msg);
    printf("\n");
    PQfinish(conn);
    setrlimit(RLIMIT_NOFILE, &old);
}

/* Entries of a /proc/self directory ("task": threads, "fd": descriptors),
 * the one opendir holds not counted. */
static int entries(const char *dir)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/%s", dir);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - (dir[0] == 'f'); /* the directory's own descriptor */
}

static void attempt(const char *label, const char *const *extra)
{
    PGconn *conn = pqd_connect_with(extra);
    printf("%s: %s", label, PQstatus(conn) == CONNECTION_OK ? "connected\n" : "failed: ");
    if (PQstatus(conn) != CONNECTION_OK) printf("%s", PQerrorMessage(conn));
    printf("  threads: %d\n", entries("task"));
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    const char *port = pqd_env("PGPORT", "5432");
    const char *tcp = pqd_env("PGW_TEST_TCP_HOST", "127.0.0.1");
    starved("no descriptor to spare", tcp, 0);
    starved("one descriptor to spare", tcp, 1);
    printf("threads at start: %d\n", entries("task"));
    int at_start = entries("fd");
    attempt("by name", (const char *[]){"host", "localhost", "port", port, NULL});
    attempt("unknown name", (const char *[]){"host", "no-such-host.invalid", NULL});
    attempt("unknown name first",
            (const char *[]){"host", "no-such-host.invalid,localhost", "port", port, NULL});
    attempt("by address", (const char *[]){"host", tcp, NULL});
    attempt("by socket directory", NULL);
    printf("descriptors left after the first connections: %d\n", entries("fd") - at_start);

    int before = entries("fd");
    PGconn *a = pqd_connect_with((const char *[]){"host", tcp, NULL});
    PGconn *b = pqd_connect_with((const char *[]){"host", tcp, NULL});
    int open = entries("fd");
    printf("descriptors of two open connections: %d\n", open - before);
    PQfinish(a);
    PQfinish(b);
    printf("descriptors left after PQfinish: %d\n", entries("fd") - before);
    return 0;
}
