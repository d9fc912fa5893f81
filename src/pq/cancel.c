/*
 * Cancel: PGcancel holds the connection's cancel token
 * (pgw_cancel_token_t), sent on a private loop by pgw_cancel_token_send,
 * from any thread.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pg_cancel {
    pgw_cancel_token_t *tok;
};

PGcancel *PQgetCancel(PGconn *conn)
{
    if (!conn || conn->status != CONNECTION_OK || !conn->conn) return NULL;
    PGcancel *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (pgw_conn_cancel_token(conn->conn, &c->tok) < 0) {
        free(c);
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
    int ok = send_token(c->tok, buf, sizeof buf);
    if (!ok) pq__conn_set_error(conn, "%s", buf);
    PQfreeCancel(c);
    return ok;
}

/* ------------------------------------------------ libpq 17: PGcancelConn */

/* libpq 17's cancel connection (PQcancelCreate ...), over the same token.
 * libpq-fe.h (libpq 15's API) does not declare these: programs built
 * against libpq 17's header find them here. The send itself blocks
 * (pgw_cancel_token_send): PQcancelStart finishes it, PQcancelPoll then
 * reports the outcome and PQcancelSocket is -1. */
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

/* libpq 17's CONNECTION_ALLOCATED, next after CONNECTION_CHECK_STANDBY. */
#define PQ_CONNECTION_ALLOCATED ((ConnStatusType)(CONNECTION_CHECK_STANDBY + 1))

struct pg_cancel_conn {
    pgw_cancel_token_t *tok; /* NULL: the connection could not give one */
    ConnStatusType status;
    char errmsg[256];
};

PGcancelConn *PQcancelCreate(PGconn *conn)
{
    PGcancelConn *cc = calloc(1, sizeof *cc);
    if (!cc) return NULL;
    cc->status = PQ_CONNECTION_ALLOCATED;
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
    if (cancelConn->status != PQ_CONNECTION_ALLOCATED) {
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
    cancelConn->status = PQ_CONNECTION_ALLOCATED;
    cancelConn->errmsg[0] = 0;
}

void PQcancelFinish(PGcancelConn *cancelConn)
{
    if (!cancelConn) return;
    pgw_cancel_token_free(cancelConn->tok);
    free(cancelConn);
}
