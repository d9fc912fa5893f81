/*
 * fakepg: the scripted fake server (see fakepg.h). Plain blocking POSIX
 * sockets in a pthread; poll() bounds every wait.
 */
#define _POSIX_C_SOURCE 200809L
#include "fakepg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FAKEPG_TIMEOUT_MS 10000
#define FAKEPG_MAX_MSG    (1u << 20)
#define FAKEPG_KEPT_MSGS  64

typedef struct kept_msg {
    uint8_t type;
    uint8_t *body;
    size_t len;
} kept_msg_t;

struct fakepg {
    int lfd;
    int fd;
    int parked; /* the connection FAKEPG_ACCEPT kept aside, or -1 */
    kept_msg_t msgs[FAKEPG_KEPT_MSGS];
    size_t nmsgs;
    uint16_t port;
    pthread_t thread;
    int joined;
    const fakepg_step_t *steps;
    size_t nsteps;
    size_t done;
    int failed;
    char error[256];
    uint32_t startup_version;
    char *startup; /* the startup packet's parameter area */
    size_t startup_len;
    char types[1024];
    size_t ntypes;
};

static void fail(fakepg_t *f, const char *fmt, ...)
{
    va_list ap;
    if (f->failed) return;
    f->failed = 1;
    va_start(ap, fmt);
    vsnprintf(f->error, sizeof(f->error), fmt, ap);
    va_end(ap);
}

static int wait_fd(int fd, short events)
{
    struct pollfd p = {fd, events, 0};
    int rc;
    do {
        rc = poll(&p, 1, FAKEPG_TIMEOUT_MS);
    } while (rc < 0 && errno == EINTR);
    return rc > 0 ? 0 : -1;
}

/* Read exactly n bytes. Returns 0, 1 on EOF before the first byte, -1. */
static int read_full(fakepg_t *f, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (wait_fd(f->fd, POLLIN) < 0) return -1;
        ssize_t r = recv(f->fd, (char *)p + got, n - got, 0);
        if (r == 0) return got == 0 ? 1 : -1;
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static int write_full(fakepg_t *f, const void *p, size_t n)
{
    size_t sent = 0;
    while (sent < n) {
        if (wait_fd(f->fd, POLLOUT) < 0) return -1;
        ssize_t r = send(f->fd, (const char *)p + sent, n - sent, MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        sent += (size_t)r;
    }
    return 0;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void record_type(fakepg_t *f, char t)
{
    if (f->ntypes + 1 < sizeof(f->types)) f->types[f->ntypes++] = t;
}

static int do_startup(fakepg_t *f)
{
    uint8_t hdr[8];
    if (read_full(f, hdr, 8) != 0) return fail(f, "no startup packet"), -1;
    uint32_t len = get32(hdr);
    if (len < 8 || len > 10000) return fail(f, "bad startup length %u", len), -1;
    f->startup_version = get32(hdr + 4);
    free(f->startup);
    f->startup_len = len - 8;
    f->startup = malloc(f->startup_len + 1);
    if (!f->startup) return fail(f, "oom"), -1;
    if (read_full(f, f->startup, f->startup_len) != 0) return fail(f, "startup packet cut"), -1;
    f->startup[f->startup_len] = 0;
    return 0;
}

static int do_expect(fakepg_t *f, uint8_t type)
{
    uint8_t hdr[5];
    int rc = read_full(f, hdr, 5);
    if (rc != 0)
        return fail(f, "expected '%c', got %s", type ? type : '?', rc > 0 ? "EOF" : "error"), -1;
    record_type(f, (char)hdr[0]);
    uint32_t len = get32(hdr + 1);
    if (len < 4 || len > FAKEPG_MAX_MSG) return fail(f, "bad frontend length %u", len), -1;
    uint8_t *body = malloc(len - 4 + 1);
    if (!body) return fail(f, "oom"), -1;
    rc = read_full(f, body, len - 4);
    if (rc == 0 && f->nmsgs < FAKEPG_KEPT_MSGS) {
        f->msgs[f->nmsgs++] = (kept_msg_t){hdr[0], body, len - 4};
        body = NULL;
    }
    free(body);
    if (rc != 0) return fail(f, "frontend message cut"), -1;
    if (type && hdr[0] != type) return fail(f, "expected '%c', got '%c'", type, hdr[0]), -1;
    return 0;
}

static int do_expect_until(fakepg_t *f, uint8_t type, size_t count)
{
    size_t seen = 0;
    while (seen < count) {
        size_t before = f->ntypes;
        if (do_expect(f, 0) < 0) return -1;
        if (f->ntypes > before && (uint8_t)f->types[f->ntypes - 1] == type) seen++;
    }
    return 0;
}

static int do_expect_eof(fakepg_t *f)
{
    uint8_t buf[4096];
    for (;;) {
        if (wait_fd(f->fd, POLLIN) < 0) return fail(f, "no EOF from the client"), -1;
        ssize_t r = recv(f->fd, buf, sizeof(buf), 0);
        if (r == 0) return 0;
        if (r < 0 && errno == ECONNRESET) return 0;
        if (r < 0 && errno != EINTR) return fail(f, "recv: %s", strerror(errno)), -1;
        if (r > 0) record_type(f, (char)buf[0]);
    }
}

static void close_conn(fakepg_t *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

static int do_accept(fakepg_t *f)
{
    if (wait_fd(f->lfd, POLLIN) < 0) return fail(f, "no second connection"), -1;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0) return fail(f, "accept: %s", strerror(errno)), -1;
    if (f->parked >= 0) close(f->parked);
    f->parked = f->fd;
    f->fd = fd;
    return 0;
}

static int do_resume(fakepg_t *f)
{
    if (f->parked < 0) return fail(f, "nothing to resume"), -1;
    close_conn(f);
    f->fd = f->parked;
    f->parked = -1;
    return 0;
}

static int run_step(fakepg_t *f, const fakepg_step_t *st)
{
    if (st->op == FAKEPG_ACCEPT) return do_accept(f);
    if (st->op == FAKEPG_RESUME) return do_resume(f);
    if (st->op != FAKEPG_SLEEP && f->fd < 0) return fail(f, "step after close"), -1;
    switch (st->op) {
    case FAKEPG_EXPECT_STARTUP:
        return do_startup(f);
    case FAKEPG_EXPECT:
        return do_expect(f, st->type);
    case FAKEPG_EXPECT_UNTIL:
        return do_expect_until(f, st->type, st->len);
    case FAKEPG_SEND:
        if (write_full(f, st->data, st->len) < 0) return fail(f, "send failed"), -1;
        return 0;
    case FAKEPG_SEND_CUT:
        if (write_full(f, st->data, st->len) < 0) return fail(f, "send failed"), -1;
        close_conn(f);
        return 0;
    case FAKEPG_SEND_RESET: {
        if (write_full(f, st->data, st->len) < 0) return fail(f, "send failed"), -1;
        struct linger lg = {1, 0};
        if (setsockopt(f->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) < 0)
            return fail(f, "SO_LINGER: %s", strerror(errno)), -1;
        close_conn(f);
        return 0;
    }
    case FAKEPG_SLEEP: {
        struct timespec ts = {(time_t)(st->len / 1000), (long)(st->len % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        return 0;
    }
    case FAKEPG_EXPECT_EOF:
        return do_expect_eof(f);
    case FAKEPG_CLOSE:
        close_conn(f);
        return 0;
    default:
        break;
    }
    return fail(f, "unknown step"), -1;
}

static void *fakepg_main(void *arg)
{
    fakepg_t *f = arg;
    if (wait_fd(f->lfd, POLLIN) < 0) {
        fail(f, "no client connected");
        return NULL;
    }
    f->fd = accept(f->lfd, NULL, NULL);
    if (f->fd < 0) {
        fail(f, "accept: %s", strerror(errno));
        return NULL;
    }
    for (; f->done < f->nsteps; f->done++)
        if (run_step(f, &f->steps[f->done]) < 0) break;
    close_conn(f);
    if (f->parked >= 0) close(f->parked);
    f->parked = -1;
    return NULL;
}

int fakepg_start(fakepg_t **out, const fakepg_step_t *steps, size_t n)
{
    fakepg_t *f = calloc(1, sizeof(*f));
    if (!f) return -1;
    f->fd = -1;
    f->parked = -1;
    f->steps = steps;
    f->nsteps = n;
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(f->lfd, 4) < 0 || getsockname(f->lfd, (struct sockaddr *)&sa, &sl) < 0) {
        if (f->lfd >= 0) close(f->lfd);
        free(f);
        return -1;
    }
    f->port = ntohs(sa.sin_port);
    if (pthread_create(&f->thread, NULL, fakepg_main, f) != 0) {
        close(f->lfd);
        free(f);
        return -1;
    }
    *out = f;
    return 0;
}

uint16_t fakepg_port(const fakepg_t *f)
{
    return f->port;
}

int fakepg_wait(fakepg_t *f)
{
    if (!f->joined) {
        pthread_join(f->thread, NULL);
        f->joined = 1;
    }
    return f->failed ? -1 : 0;
}

const char *fakepg_error(const fakepg_t *f)
{
    return f->error;
}

uint32_t fakepg_startup_version(const fakepg_t *f)
{
    return f->startup_version;
}

const char *fakepg_startup_param(const fakepg_t *f, const char *name)
{
    size_t i = 0;
    while (f->startup && i < f->startup_len && f->startup[i]) {
        const char *k = f->startup + i;
        size_t klen = strlen(k);
        const char *v = k + klen + 1;
        if ((size_t)(v - f->startup) >= f->startup_len) return NULL;
        if (strcmp(k, name) == 0) return v;
        i = (size_t)(v - f->startup) + strlen(v) + 1;
    }
    return NULL;
}

const char *fakepg_received_types(const fakepg_t *f)
{
    return f->types;
}

size_t fakepg_steps_done(const fakepg_t *f)
{
    return f->done;
}

void fakepg_free(fakepg_t *f)
{
    if (!f) return;
    fakepg_wait(f);
    close(f->lfd);
    free(f->startup);
    for (size_t i = 0; i < f->nmsgs; i++)
        free(f->msgs[i].body);
    free(f);
}

const uint8_t *fakepg_startup_body(const fakepg_t *f, size_t *len)
{
    *len = f->startup_len;
    return (const uint8_t *)f->startup;
}

const uint8_t *fakepg_message(const fakepg_t *f, size_t i, uint8_t *type, size_t *len)
{
    if (i >= f->nmsgs) return NULL;
    if (type) *type = f->msgs[i].type;
    *len = f->msgs[i].len;
    return f->msgs[i].body;
}

/* ------------------------------------------------------- canned answers */

void fakepg_query_answer(pgw_buf_t *b, const int32_t *values, size_t nrows)
{
    static const char *const names[] = {"v"};
    static const uint32_t oids[] = {23};
    char tag[32];
    pgt_msg(b, '1', NULL, 0);
    pgt_msg(b, '2', NULL, 0);
    pgt_msg_row_desc(b, 1, names, oids, 1);
    for (size_t i = 0; i < nrows; i++)
        pgt_msg_data_row_int4(b, values[i]);
    snprintf(tag, sizeof(tag), "SELECT %zu", nrows);
    pgt_msg_command_complete(b, tag);
    pgt_msg_ready(b, 'I');
}
