/*
 * The blocking client's notification queue (notify.c), attached to a
 * client by client.c.
 */
#ifndef PGW_CLIENT_NOTIFY_H
#define PGW_CLIENT_NOTIFY_H

#include "pgwire/client.h"

typedef struct pgw__notify_queue pgw__notify_queue_t;

/* A queue for conn's notifications: installs itself as conn's
 * notification callback, forwarding each notification to cfg's
 * on_notification (with cfg->ud; cfg may be NULL) before queueing it.
 * Returns 0 or PGW_ENOMEM. */
int pgw__notify_queue_new(pgw__notify_queue_t **out, const pgw_allocator_t *alloc, pgw_conn_t *conn,
                          const pgw_conn_config_t *cfg);
/* Free the queue and everything in it (after the connection is closed).
 * NULL is a no-op. */
void pgw__notify_queue_free(pgw__notify_queue_t *q);

/* client.c: the client's queue. */
pgw__notify_queue_t *pgw__client_notify_queue(const pgw_client_t *c);

#endif
