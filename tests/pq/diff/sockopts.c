/*
 * The TCP socket a connection gets: TCP_NODELAY, SO_KEEPALIVE,
 * TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT and TCP_USER_TIMEOUT read back
 * with getsockopt on PQsocket, for connection strings that leave the
 * keepalive and timeout options unset (libpq then leaves the kernel's
 * values), set some or all of them, turn keepalives off, and set them to 0.
 * Each value is printed as the number, or as "kernel" when it is what a
 * new socket of this machine has, so the output is the same on machines
 * with other sysctl settings.
 */
#include "pqdiff.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static const struct {
    const char *name;
    int level, opt;
} opts[] = {
    {"TCP_NODELAY", IPPROTO_TCP, TCP_NODELAY},
    {"SO_KEEPALIVE", SOL_SOCKET, SO_KEEPALIVE},
    {"TCP_KEEPIDLE", IPPROTO_TCP, TCP_KEEPIDLE},
    {"TCP_KEEPINTVL", IPPROTO_TCP, TCP_KEEPINTVL},
    {"TCP_KEEPCNT", IPPROTO_TCP, TCP_KEEPCNT},
    {"TCP_USER_TIMEOUT", IPPROTO_TCP, TCP_USER_TIMEOUT},
};
enum { NOPTS = sizeof opts / sizeof opts[0] };

/* An option of fd, or -1 when getsockopt fails. */
static int get_opt(int fd, int i)
{
    int v = -1;
    socklen_t len = sizeof v;
    if (getsockopt(fd, opts[i].level, opts[i].opt, &v, &len) != 0) return -1;
    return v;
}

static void attempt(const char *label, const int *kernel, const char *const *extra)
{
    printf("%s\n", label);
    PGconn *conn = pqd_connect_with(extra);
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("  failed: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return;
    }
    int fd = PQsocket(conn);
    for (int i = 0; i < NOPTS; i++) {
        int v = get_opt(fd, i);
        if (v == kernel[i])
            printf("  %s=kernel\n", opts[i].name);
        else
            printf("  %s=%d\n", opts[i].name, v);
    }
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    const char *tcp = pqd_env("PGW_TEST_TCP_HOST", "127.0.0.1");
    int kernel[NOPTS];
    int fresh = socket(AF_INET, SOCK_STREAM, 0);
    if (fresh < 0) {
        printf("socket failed\n");
        return 1;
    }
    for (int i = 0; i < NOPTS; i++)
        kernel[i] = get_opt(fresh, i);
    close(fresh);

    attempt("unset", kernel, (const char *[]){"host", tcp, NULL});
    attempt("keepalives=1", kernel, (const char *[]){"host", tcp, "keepalives", "1", NULL});
    attempt("keepalives=0", kernel, (const char *[]){"host", tcp, "keepalives", "0", NULL});
    attempt("idle only", kernel, (const char *[]){"host", tcp, "keepalives_idle", "11", NULL});
    attempt("all set", kernel,
            (const char *[]){"host", tcp, "keepalives_idle", "11", "keepalives_interval", "4",
                             "keepalives_count", "6", "tcp_user_timeout", "12345", NULL});
    attempt("keepalives=0 with values", kernel,
            (const char *[]){"host", tcp, "keepalives", "0", "keepalives_idle", "11",
                             "tcp_user_timeout", "2500", NULL});
    attempt("zeros", kernel,
            (const char *[]){"host", tcp, "keepalives_idle", "0", "keepalives_interval", "0",
                             "keepalives_count", "0", "tcp_user_timeout", "0", NULL});
    attempt("user timeout only", kernel,
            (const char *[]){"host", tcp, "tcp_user_timeout", "777", NULL});
    return 0;
}
