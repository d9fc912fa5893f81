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
