/*
 * The sans-IO session driven by a loop of the program's own: a socket
 * opened here, poll() for readiness, bytes moved between the socket and
 * the session. No libuv: this is the structure a binding for another
 * event loop (Python's asyncio, Tokio, an in-house reactor) follows.
 * Connects as the environment says (PGHOST, PGPORT, PGUSER, ...; no TLS),
 * runs 10 pipelined queries, terminates. Exits 1 if an answer is wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pgwire.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define N 10

typedef struct app {
    int answered, wrong;
    int broken; /* the session failed: stop */
} app_t;

/* The first host of the parsed connection string: a Unix socket or TCP. */
static int open_socket(const pgw_host_t *h)
{
    int fd = -1;
    if (h->is_unix) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (pgw_host_socket_path(h, sa.sun_path, sizeof sa.sun_path) < 0) return -1;
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fd);
            return -1;
        }
    } else {
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
        if (getaddrinfo(h->hostaddr ? h->hostaddr : h->host, h->port_text, &hints, &ai) != 0)
            return -1;
        fd = socket(ai->ai_family, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
        freeaddrinfo(ai);
    }
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    (void)s;
    if (status < 0) {
        fprintf(stderr, "startup: %s %s\n", pgw_strerror(status), err ? err->message : "");
        ((app_t *)ud)->broken = 1;
    }
}

static void on_broken(pgw_session_t *s, int err, void *ud)
{
    (void)s;
    fprintf(stderr, "session broken: %s\n", pgw_strerror(err));
    ((app_t *)ud)->broken = 1;
}

static app_t app;

static void on_result(int status, pgw_result_t *res, void *ud)
{
    int64_t v = -1, expect = (int64_t)(intptr_t)ud;
    if (status != 0 || pgw_result_int8(res, 0, 0, &v) != 0 || v != expect) app.wrong++;
    pgw_result_free(res);
    app.answered++;
}

/* One round of the loop: wait for the socket, then write what the session
 * has for the server and feed it what the server sent. */
static int pump(pgw_session_t *s, int fd)
{
    size_t out_len;
    pgw_session_pending_output(s, &out_len);
    struct pollfd pfd = {fd, (short)(POLLIN | (out_len ? POLLOUT : 0)), 0};
    if (poll(&pfd, 1, 10000) <= 0) return PGW_ETIMEDOUT;
    if (pfd.revents & POLLOUT) {
        const uint8_t *out = pgw_session_pending_output(s, &out_len);
        ssize_t n = send(fd, out, out_len, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN) return PGW_ECONNLOST;
        if (n > 0) pgw_session_consumed_output(s, (size_t)n);
        pgw_session_copy_pump(s); /* a COPY FROM's source fills the room made */
    }
    if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
        uint8_t *in;
        size_t room;
        int rc = pgw_session_input_buffer(s, &in, &room);
        if (rc < 0) return rc;
        ssize_t n = recv(fd, in, room, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN)) return PGW_ECONNLOST;
        if (n > 0) return pgw_session_input_commit(s, (size_t)n); /* callbacks fire here */
    }
    return 0;
}

int main(void)
{
    /* Everything libpq would read: the string, environment, .pgpass. */
    char err[512];
    pgw_conninfo_t *ci;
    if (pgw_conninfo_parse(&ci, "", NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    pgw_host_t host;
    pgw_conninfo_host(ci, 0, &host);
    const char *params[32];
    int npairs = pgw_conninfo_startup_params(ci, params, 16);

    pgw_session_config_t cfg;
    pgw_session_config_init(&cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = npairs > 0 ? (size_t)npairs : 0;
    cfg.password = pgw_conninfo_password(ci, &host);
    cfg.require_auth = pgw_conninfo_get(ci, "require_auth");
    cfg.cb.on_startup = on_startup;
    cfg.cb.on_broken = on_broken;
    cfg.ud = &app;

    int fd = open_socket(&host);
    pgw_session_t *s = NULL;
    if (fd < 0 || pgw_session_new(&s, &cfg) < 0 || pgw_session_start(s) < 0) {
        fprintf(stderr, "cannot connect to %s\n", host.host);
        pgw_conninfo_free(ci);
        return 1;
    }
    pgw_conninfo_free(ci); /* the session copied what it needs */

    /* Requests may be queued at once: they go out after startup. */
    for (int i = 0; i < N; i++) {
        pgw_param_t p[] = {pgw_int8(i)};
        pgw_request_t r =
            PGW_QUERY("SELECT $1::int8 + 100", p, 1, on_result, (void *)(intptr_t)(i + 100));
        if (pgw_session_submit(s, &r) < 0) app.wrong++;
    }
    int rc = 0;
    while (rc == 0 && !app.broken && app.answered + app.wrong < N)
        rc = pump(s, fd);
    if (rc < 0 && !app.broken) pgw_session_fail(s, rc); /* pending requests fail once */

    /* Say goodbye: Terminate, written out before the socket is closed. */
    pgw_session_terminate(s);
    size_t left;
    const uint8_t *out = pgw_session_pending_output(s, &left);
    if (left) (void)!send(fd, out, left, MSG_NOSIGNAL);
    pgw_session_free(s);
    close(fd);
    printf("%d answers, %d wrong\n", app.answered, app.wrong);
    return app.answered == N && app.wrong == 0 ? 0 : 1;
}
