/*
 * LISTEN and UNLISTEN: the channel quoted as an identifier by the one
 * escaping helper (pgw_escape_identifier), submitted as a Simple Query
 * descriptor like any other request.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"
#include "pgwire/listen.h"
#include "pgwire/types_container.h"

#include <stdio.h>
#include <string.h>

int pgw_listen_sql(const pgw_allocator_t *alloc, const char *channel, int unlisten, char **sql)
{
    if (!sql) return PGW_EINVAL;
    *sql = NULL;
    alloc = pgw__alloc_or_default(alloc);
    if (!channel) {
        if (!unlisten) return PGW_EINVAL;
        *sql = pgw__strdup(alloc, "UNLISTEN *");
        return *sql ? 0 : PGW_ENOMEM;
    }
    if (!*channel) return PGW_EINVAL; /* a zero-length identifier */
    char *quoted;
    int rc = pgw_escape_identifier(alloc, channel, strlen(channel), &quoted);
    if (rc < 0) return rc;
    const char *verb = unlisten ? "UNLISTEN " : "LISTEN ";
    size_t n = strlen(verb) + strlen(quoted) + 1;
    char *s = pgw__malloc(alloc, n);
    if (s) snprintf(s, n, "%s%s", verb, quoted);
    pgw_escape_free(alloc, quoted);
    *sql = s;
    return s ? 0 : PGW_ENOMEM;
}

static int conn_listen_sql(pgw_conn_t *conn, const char *channel, int unlisten, pgw_result_cb cb,
                           void *ud)
{
    if (!conn) return PGW_EINVAL;
    char *sql;
    int rc = pgw_listen_sql(conn->alloc, channel, unlisten, &sql);
    if (rc < 0) return rc;
    pgw_request_t r = PGW_SIMPLE(sql, cb, ud);
    rc = pgw_conn_submit(conn, &r); /* the descriptor is read during the call only */
    pgw_escape_free(conn->alloc, sql);
    return rc;
}

int pgw_conn_listen(pgw_conn_t *conn, const char *channel, pgw_result_cb cb, void *ud)
{
    return conn_listen_sql(conn, channel, 0, cb, ud);
}

int pgw_conn_unlisten(pgw_conn_t *conn, const char *channel, pgw_result_cb cb, void *ud)
{
    return conn_listen_sql(conn, channel, 1, cb, ud);
}
