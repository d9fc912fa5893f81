/*
 * The sans-IO session driven by a loop of the program's own: a socket
 * opened here, poll() for readiness, bytes moved between the socket, the
 * library's TLS engine and the session. No libuv: this is the structure a
 * binding for another event loop (Python's asyncio, Tokio, an in-house
 * reactor) follows. Connects as the connection string in argv[1] and the
 * environment say (PGHOST, PGPORT, PGUSER, PGSSLMODE, ...), TLS as sslmode
 * says, runs 10 pipelined queries, terminates. Exits 1 if an answer is
 * wrong.
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
    int started, broken; /* the login succeeded; the session failed: stop */
} app_t;

/* The socket, and the TLS engine when the attempt runs TLS. */
typedef struct wire {
    int fd;
    pgw_tls_t *tls; /* NULL: plaintext */
} wire_t;

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

static app_t app;

/* The session's callbacks get cfg.ud: here the wire (for channel binding);
 * what they learn goes to app. */
static void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    (void)s, (void)ud;
    if (status < 0) {
        fprintf(stderr, "startup: %s %s\n", pgw_strerror(status), err ? err->message : "");
        app.broken = 1;
    } else {
        app.started = 1;
    }
}

static void on_broken(pgw_session_t *s, int err, void *ud)
{
    (void)s, (void)ud;
    fprintf(stderr, "session broken: %s\n", pgw_strerror(err));
    app.broken = 1;
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    int64_t v = -1, expect = (int64_t)(intptr_t)ud;
    if (status != 0 || pgw_result_int8(res, 0, 0, &v) != 0 || v != expect) app.wrong++;
    pgw_result_free(res);
    app.answered++;
}

/* The bytes to send: the TLS engine's, or the session's in plaintext. */
static const uint8_t *wire_output(pgw_session_t *s, wire_t *w, size_t *len)
{
    if (!w->tls) return pgw_session_pending_output(s, len);
    /* The session's plaintext goes into the engine first (as much as fits). */
    size_t plain, took = 0;
    const uint8_t *p = pgw_session_pending_output(s, &plain);
    if (plain && pgw_tls_write(w->tls, p, plain, &took) == 0) pgw_session_consumed_output(s, took);
    return pgw_tls_output(w->tls, len);
}

static void wire_sent(pgw_session_t *s, wire_t *w, size_t n)
{
    if (w->tls)
        pgw_tls_output_consumed(w->tls, n);
    else
        pgw_session_consumed_output(s, n);
}

/* Bytes from the server: straight into the session's read buffer, or
 * through the engine (decrypted into that buffer). */
static int wire_input(pgw_session_t *s, wire_t *w)
{
    uint8_t *in, buf[16384];
    size_t room, used, got;
    int rc = pgw_session_input_buffer(s, &in, &room);
    if (rc < 0) return rc;
    ssize_t n = recv(w->fd, w->tls ? buf : in, w->tls ? sizeof buf : room, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN)) return PGW_ECONNLOST;
    if (n < 0) return 0;
    if (!w->tls) return pgw_session_input_commit(s, (size_t)n); /* callbacks fire here */
    for (size_t off = 0; off < (size_t)n; off += used) {
        rc = pgw_tls_feed(w->tls, buf + off, (size_t)n - off, &used);
        while (rc == 0 && (rc = pgw_session_input_buffer(s, &in, &room)) == 0 &&
               (rc = pgw_tls_read(w->tls, in, room, &got)) == 0)
            rc = pgw_session_input_commit(s, got);
        if (rc != PGW_EAGAIN) return rc < 0 ? rc : 0;
    }
    return 0;
}

/* One round of the loop: wait for the socket, then write what is pending
 * for the server and take what the server sent. */
static int pump(pgw_session_t *s, wire_t *w)
{
    size_t out_len;
    wire_output(s, w, &out_len);
    struct pollfd pfd = {w->fd, (short)(POLLIN | (out_len ? POLLOUT : 0)), 0};
    if (poll(&pfd, 1, 10000) <= 0) return PGW_ETIMEDOUT;
    if (pfd.revents & POLLOUT) {
        const uint8_t *out = wire_output(s, w, &out_len);
        ssize_t n = send(w->fd, out, out_len, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN) return PGW_ECONNLOST;
        if (n > 0) wire_sent(s, w, (size_t)n);
        pgw_session_copy_pump(s); /* a COPY FROM's source fills the room made */
    }
    if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) return wire_input(s, w);
    return 0;
}

/* Send all of p, waiting for room. */
static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        if (poll(&pfd, 1, 10000) <= 0) return PGW_ETIMEDOUT;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN) return PGW_ECONNLOST;
        if (w > 0) p += w, n -= (size_t)w;
    }
    return 0;
}

/* The start of an attempt with method m on a connected socket: SSLRequest
 * and the server's answer, then the handshake (or nothing, in plaintext).
 * Leaves w->tls NULL when the attempt goes on in plaintext. */
static int negotiate(wire_t *w, pgw_tls_t *tls, pgw_tls_method_t m)
{
    uint8_t buf[16384];
    w->tls = NULL;
    if (m == PGW_TLS_START_PLAIN) return 0;
    if (m == PGW_TLS_START_REQUEST) {
        pgw_buf_t req;
        pgw_buf_init(&req, NULL);
        int rc = pgw_enc_ssl_request(&req);
        if (rc == 0) rc = send_all(w->fd, req.data, req.len);
        pgw_buf_free(&req);
        struct pollfd pfd = {w->fd, POLLIN, 0};
        if (rc < 0 || poll(&pfd, 1, 10000) <= 0) return rc < 0 ? rc : PGW_ETIMEDOUT;
        ssize_t n = recv(w->fd, buf, sizeof buf, 0);
        if (n <= 0) return PGW_ECONNLOST;
        rc = pgw_tls_answer(tls, buf, (size_t)n); /* libpq's rules for 'S' and 'N' */
        if (rc == PGW_TLS_PLAINTEXT) return 0;
        if (rc != PGW_TLS_HANDSHAKE) return rc;
    }
    for (;;) {
        int rc = pgw_tls_handshake(tls); /* the certificate is checked here */
        size_t len;
        const uint8_t *out;
        while ((out = pgw_tls_output(tls, &len)) && len) {
            if (send_all(w->fd, out, len) < 0) return PGW_ECONNLOST;
            pgw_tls_output_consumed(tls, len);
        }
        if (rc == 0) break;
        if (rc != PGW_EAGAIN) return rc;
        struct pollfd pfd = {w->fd, POLLIN, 0};
        if (poll(&pfd, 1, 10000) <= 0) return PGW_ETIMEDOUT;
        ssize_t n = recv(w->fd, buf, sizeof buf, 0);
        if (n <= 0) pgw_tls_input_eof(tls);
        size_t used;
        for (size_t off = 0; n > 0 && off < (size_t)n; off += used)
            if (pgw_tls_feed(tls, buf + off, (size_t)n - off, &used) < 0) return PGW_EPROTO;
    }
    w->tls = tls;
    return 0;
}

/* SCRAM-SHA-256-PLUS binds the login to the server's certificate. */
static int channel_binding(pgw_session_t *s, const uint8_t **data, size_t *len, void *ud)
{
    (void)s;
    wire_t *w = ud;
    return w->tls && pgw_tls_channel_binding(w->tls, data, len) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* Everything libpq would read: the string, environment, .pgpass. */
    char err[512];
    pgw_conninfo_t *ci;
    if (pgw_conninfo_parse(&ci, argc > 1 ? argv[1] : "", NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    pgw_host_t host;
    pgw_conninfo_host(ci, 0, &host);
    const char *params[32];
    int npairs = pgw_conninfo_startup_params(ci, params, 16);
    pgw_tls_t *tls = NULL;
    if (pgw_tls_new(&tls, ci, 0, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        pgw_conninfo_free(ci);
        return 1;
    }

    pgw_session_config_t cfg;
    pgw_session_config_init(&cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = npairs > 0 ? (size_t)npairs : 0;
    cfg.password = pgw_conninfo_password(ci, &host);
    cfg.require_auth = pgw_conninfo_get(ci, "require_auth");
    cfg.channel_binding = pgw_conninfo_get(ci, "channel_binding");
    cfg.cb.on_startup = on_startup;
    cfg.cb.on_broken = on_broken;
    cfg.cb.channel_binding = channel_binding;

    /* The attempts libpq makes at this server: one per method sslmode
     * allows (prefer: TLS, then plaintext if the TLS login is refused),
     * each on a new socket. */
    wire_t w = {-1, NULL};
    cfg.ud = &w;
    pgw_session_t *s = NULL;
    for (pgw_tls_method_t m = pgw_tls_start(tls); m != PGW_TLS_START_NONE && !app.started;
         m = pgw_tls_next_method(tls, m)) {
        app.broken = 0;
        w.fd = open_socket(&host);
        int rc = w.fd < 0 ? PGW_ECONNECT : negotiate(&w, tls, m);
        if (rc < 0) fprintf(stderr, "%s: %s\n", pgw_strerror(rc), pgw_tls_errmsg(tls));
        if (rc == 0 && pgw_session_new(&s, &cfg) == 0 && pgw_session_start(s) == 0) {
            while (rc == 0 && !app.started && !app.broken)
                rc = pump(s, &w);
            /* sslcertmode=require is checked once logged in, as libpq does */
            if (app.started && w.tls && pgw_tls_check_certificate(tls) < 0) {
                fprintf(stderr, "%s\n", pgw_tls_errmsg(tls));
                app.started = 0;
            }
        }
        if (app.started) break;
        pgw_session_free(s);
        s = NULL;
        if (w.fd >= 0) close(w.fd);
    }
    if (!app.started) {
        fprintf(stderr, "cannot connect to %s\n", host.host);
        pgw_tls_free(tls);
        pgw_conninfo_free(ci);
        return 1;
    }
    pgw_tls_info_t info;
    pgw_tls_get_info(tls, &info);
    printf("connected %s\n", w.tls && info.in_use ? info.protocol : "in plaintext");

    /* Requests go out pipelined: all ten in the first write. */
    for (int i = 0; i < N; i++) {
        pgw_param_t p[] = {pgw_int8(i)};
        pgw_request_t r =
            PGW_QUERY("SELECT $1::int8 + 100", p, 1, on_result, (void *)(intptr_t)(i + 100));
        if (pgw_session_submit(s, &r) < 0) app.wrong++;
    }
    int rc = 0;
    while (rc == 0 && !app.broken && app.answered + app.wrong < N)
        rc = pump(s, &w);
    if (rc < 0 && !app.broken) pgw_session_fail(s, rc); /* pending requests fail once */

    /* Say goodbye: Terminate (and TLS's close_notify), written out before
     * the socket is closed. */
    pgw_session_terminate(s);
    if (w.tls) pgw_tls_shutdown(w.tls);
    size_t left;
    const uint8_t *out = wire_output(s, &w, &left);
    if (left) (void)send_all(w.fd, out, left);
    pgw_session_free(s);
    close(w.fd);
    pgw_tls_free(tls);
    pgw_conninfo_free(ci);
    printf("%d answers, %d wrong\n", app.answered, app.wrong);
    return app.answered == N && app.wrong == 0 ? 0 : 1;
}
