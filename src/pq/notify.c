/*
 * Notifications: each NotificationResponse becomes one PGnotify allocation
 * holding its strings (freed with PQfreemem, as libpq's), queued for
 * PQnotifies.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdlib.h>
#include <string.h>

void pq__on_notification(pgw_conn_t *c, int32_t pid, pgw_str_t channel, pgw_str_t payload, void *ud)
{
    (void)c;
    PGconn *conn = ud;
    PGnotify *n = malloc(sizeof *n + channel.len + 1 + payload.len + 1);
    if (!n) return;
    char *rel = (char *)(n + 1);
    memcpy(rel, channel.p, channel.len);
    rel[channel.len] = 0;
    char *extra = rel + channel.len + 1;
    memcpy(extra, payload.p, payload.len);
    extra[payload.len] = 0;
    n->relname = rel;
    n->extra = extra;
    n->be_pid = pid;
    n->next = NULL;
    if (conn->notify_tail)
        conn->notify_tail->next = n;
    else
        conn->notify_head = n;
    conn->notify_tail = n;
}

PGnotify *PQnotifies(PGconn *conn)
{
    if (!conn) return NULL;
    pq__input_parsed(conn); /* libpq's PQnotifies parses its input first */
    PGnotify *n = conn->notify_head;
    if (!n) return NULL;
    conn->notify_head = n->next;
    if (!conn->notify_head) conn->notify_tail = NULL;
    n->next = NULL;
    return n;
}

void pq__notifies_free(PGconn *conn)
{
    while (conn->notify_head) {
        PGnotify *n = conn->notify_head;
        conn->notify_head = n->next;
        free(n);
    }
    conn->notify_tail = NULL;
}
