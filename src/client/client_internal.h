/*
 * Internals shared by the blocking client's files (client.c, cursor.c).
 * Not installed.
 */
#ifndef PGW_CLIENT_INTERNAL_H
#define PGW_CLIENT_INTERNAL_H

#include "pgwire/client.h"

/* The allocator the client was made with. */
const pgw_allocator_t *pgw__client_alloc(const pgw_client_t *c);

#endif
