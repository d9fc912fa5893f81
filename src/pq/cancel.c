/*
 * Cancel: PGcancel holds the connection's cancel token
 * (pgw_cancel_token_t) and, taken from it when the PGcancel is made, the
 * CancelRequest and the address to send it to. PQcancel is what psql calls
 * from its SIGINT handler, so, as libpq's, it is async-signal-safe: a
 * plain socket, connect, send, wait for the server's close, nothing
 * allocated, errno kept. A connection over TLS or GSS encryption cancels
 * inside that negotiation (the key is never sent in plaintext: libpq 15
 * sends it in plaintext), through pgw_cancel_token_send on a private loop,
 * which allocates: not safe in a signal handler.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pg_cancel {
    /* First, libpq 15's own members in its order and layout (libpq-int.h:
     * SockAddr raddr, be_pid, be_key): a binding that reads them from a
     * PGcancel (ruby-pg's cancel sends the key itself) finds them where
     * libpq keeps them. be_key is 0 for a key longer than 4 bytes. */
    struct {
        struct sockaddr_storage addr;
        socklen_t salen;
    } raddr;
    int be_pid;
    int be_key;
    pgw_cancel_token_t *tok;
    int encrypted; /* the token says TLS or GSS: sent by the library */
    uint8_t request[PGW_CANCEL_REQUEST_MAX];
    size_t request_len;
};

/* A CancelRequest's int32 at off (network order), as libpq reads one. */
static int request_int(const PGcancel *c, size_t off)
{
    const uint8_t *p = c->request + off;
    return (int)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* The plain send's parts, taken now: PQcancel may run in a signal
 * handler. Returns 0 or a libpgwire error. */
static int prepare(PGcancel *c)
{
    pgw_cancel_token_info_t info;
    int rc = pgw_cancel_token_info(c->tok, &info);
    if (rc < 0) return rc;
    c->encrypted = info.tls || info.gss;
    size_t alen = sizeof c->raddr.addr;
    rc = pgw_cancel_token_address(c->tok, &c->raddr.addr, &alen);
    c->raddr.salen = (socklen_t)alen;
    if (rc == 0)
        rc = pgw_cancel_token_request(c->tok, c->request, sizeof c->request, &c->request_len);
    /* length, code, process ID, key */
    if (rc == 0 && c->request_len >= 16) c->be_pid = request_int(c, 8);
    if (rc == 0 && c->request_len == 16) c->be_key = request_int(c, 12);
    return rc;
}

PGcancel *PQgetCancel(PGconn *conn)
{
    if (!conn || conn->status != CONNECTION_OK || !conn->conn) return NULL;
    PGcancel *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (pgw_conn_cancel_token(conn->conn, &c->tok) < 0 || prepare(c) < 0) {
        PQfreeCancel(c);
        return NULL;
    }
    return c;
}

void PQfreeCancel(PGcancel *cancel)
{
    if (!cancel) return;
    pgw_cancel_token_free(cancel->tok);
    free(cancel);
}

/* errbuf <- "PQcancel() -- <what> failed: <strerror(err)>\n", with
 * async-signal-safe calls only (libpq's words and behaviour). */
static void plain_error(char *errbuf, int errbufsize, const char *what, int err)
{
    if (!errbuf || errbufsize <= 0) return;
    char why[128];
    const char *parts[] = {"PQcancel() -- ", what, " failed: ", strerror_r(err, why, sizeof why),
                           "\n"};
    size_t at = 0, room = (size_t)errbufsize - 1;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        for (const char *p = parts[k]; *p && at < room; p++)
            errbuf[at++] = *p;
    errbuf[at] = '\0';
}

/* The CancelRequest over a plain socket, as libpq's PQcancel sends it. */
static int send_plain(const PGcancel *c, char *errbuf, int errbufsize)
{
    int saved_errno = errno, ok = 0;
    const char *what = "socket()";
    int fd = socket(c->raddr.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        what = "connect()";
        int rc;
        do
            rc = connect(fd, (const struct sockaddr *)&c->raddr.addr, c->raddr.salen);
        while (rc < 0 && errno == EINTR);
        size_t sent = 0;
        if (rc == 0) what = "send()";
        while (rc == 0 && sent < c->request_len) {
            ssize_t n = send(fd, c->request + sent, c->request_len - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (errno != EINTR)
                rc = -1;
        }
        if (rc == 0) {
            /* the server closes the connection once it has acted on it */
            char ch;
            while (recv(fd, &ch, 1, 0) < 0 && errno == EINTR)
                ;
            ok = 1;
        }
    }
    if (!ok) plain_error(errbuf, errbufsize, what, errno);
    if (fd >= 0) close(fd);
    errno = saved_errno;
    return ok;
}

/* libpq's words: "PQcancel() -- connect() failed: <why>\n". */
static int send_token(const pgw_cancel_token_t *tok, char *errbuf, int errbufsize)
{
    int rc = pgw_cancel_token_send(tok, 0);
    if (rc == 0) return 1;
    if (errbuf && errbufsize > 0) {
        const char *why = pgw_is_system_error(rc) ? strerror(-rc) : pgw_strerror(rc);
        const char *what = rc == PGW_ETIMEDOUT || rc == PGW_ECONNECT || pgw_is_system_error(rc)
                               ? "connect()"
                               : "send()";
        snprintf(errbuf, (size_t)errbufsize, "PQcancel() -- %s failed: %s\n", what, why);
    }
    return 0;
}

int PQcancel(PGcancel *cancel, char *errbuf, int errbufsize)
{
    if (!cancel) {
        if (errbuf && errbufsize > 0)
            snprintf(errbuf, (size_t)errbufsize, "PQcancel() -- no cancel object supplied");
        return 0;
    }
    if (!cancel->encrypted) return send_plain(cancel, errbuf, errbufsize);
    return send_token(cancel->tok, errbuf, errbufsize);
}

int PQrequestCancel(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->status != CONNECTION_OK || !conn->conn) {
        pq__conn_set_error(conn, "PQrequestCancel() -- connection is not open\n");
        return 0;
    }
    PGcancel *c = PQgetCancel(conn);
    if (!c) {
        pq__conn_set_error(conn, "PQrequestCancel() -- connection is not open\n");
        return 0;
    }
    char buf[256];
    int ok = PQcancel(c, buf, sizeof buf);
    if (!ok) pq__conn_set_error(conn, "%s", buf);
    PQfreeCancel(c);
    return ok;
}

/* ------------------------------------------------ libpq 17: PGcancelConn */

/* libpq 17's cancel connection (PQcancelCreate ...), over the same token
 * (libpq-fe.h declares them among the later additions). The send itself
 * blocks (pgw_cancel_token_send): PQcancelStart finishes it, PQcancelPoll
 * then reports the outcome and PQcancelSocket is -1. */
typedef struct pg_cancel_conn PGcancelConn;

PGcancelConn *PQcancelCreate(PGconn *conn);
int PQcancelStart(PGcancelConn *cancelConn);
int PQcancelBlocking(PGcancelConn *cancelConn);
PostgresPollingStatusType PQcancelPoll(PGcancelConn *cancelConn);
ConnStatusType PQcancelStatus(const PGcancelConn *cancelConn);
int PQcancelSocket(const PGcancelConn *cancelConn);
char *PQcancelErrorMessage(const PGcancelConn *cancelConn);
void PQcancelReset(PGcancelConn *cancelConn);
void PQcancelFinish(PGcancelConn *cancelConn);

struct pg_cancel_conn {
    pgw_cancel_token_t *tok; /* NULL: the connection could not give one */
    ConnStatusType status;
    char errmsg[256];
};

PGcancelConn *PQcancelCreate(PGconn *conn)
{
    PGcancelConn *cc = calloc(1, sizeof *cc);
    if (!cc) return NULL;
    cc->status = CONNECTION_ALLOCATED;
    if (!conn || conn->status != CONNECTION_OK || !conn->conn ||
        pgw_conn_cancel_token(conn->conn, &cc->tok) < 0) {
        cc->status = CONNECTION_BAD;
        snprintf(cc->errmsg, sizeof cc->errmsg, "connection is not open\n");
    }
    return cc;
}

int PQcancelStart(PGcancelConn *cancelConn)
{
    if (!cancelConn || cancelConn->status == CONNECTION_BAD) return 0;
    if (cancelConn->status != CONNECTION_ALLOCATED) {
        snprintf(cancelConn->errmsg, sizeof cancelConn->errmsg,
                 "cancel request is already being sent on this connection\n");
        cancelConn->status = CONNECTION_BAD;
        return 0;
    }
    int ok = send_token(cancelConn->tok, cancelConn->errmsg, sizeof cancelConn->errmsg);
    cancelConn->status = ok ? CONNECTION_OK : CONNECTION_BAD;
    return ok;
}

int PQcancelBlocking(PGcancelConn *cancelConn)
{
    return PQcancelStart(cancelConn);
}

PostgresPollingStatusType PQcancelPoll(PGcancelConn *cancelConn)
{
    if (!cancelConn) return PGRES_POLLING_FAILED;
    return cancelConn->status == CONNECTION_OK ? PGRES_POLLING_OK : PGRES_POLLING_FAILED;
}

ConnStatusType PQcancelStatus(const PGcancelConn *cancelConn)
{
    return cancelConn ? cancelConn->status : CONNECTION_BAD;
}

int PQcancelSocket(const PGcancelConn *cancelConn)
{
    (void)cancelConn;
    return -1;
}

char *PQcancelErrorMessage(const PGcancelConn *cancelConn)
{
    return cancelConn ? (char *)cancelConn->errmsg : "connection pointer is NULL\n";
}

void PQcancelReset(PGcancelConn *cancelConn)
{
    if (!cancelConn || !cancelConn->tok) return;
    cancelConn->status = CONNECTION_ALLOCATED;
    cancelConn->errmsg[0] = 0;
}

void PQcancelFinish(PGcancelConn *cancelConn)
{
    if (!cancelConn) return;
    pgw_cancel_token_free(cancelConn->tok);
    free(cancelConn);
}
