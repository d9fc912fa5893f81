/*
 * libpgwire: a pipelining PostgreSQL client library.
 *
 * The umbrella header. Layers, from the bottom:
 *   pgwire/common.h          error codes, allocator, views, buffers
 *   pgwire/proto.h           the sans-IO protocol codec
 *   pgwire/types.h           scalar value decoders and parameter encoders
 *   pgwire/types_container.h arrays, ranges, records, COPY rows, escaping
 *   pgwire/result.h          results: rows, columns, command tag, server errors
 *   pgwire/session.h         the sans-IO protocol state machine
 *   pgwire/conninfo.h        connection strings, environment, service and password files
 *   pgwire/conn.h            a connection on a libuv loop
 *   pgwire/client.h          blocking calls for programs without an event loop
 *   pgwire/listen.h          LISTEN/NOTIFY, and a listener that survives reconnects
 *   pgwire/pool.h            many connections behind one handle, on a loop or blocking
 * and beside them:
 *   pgwire/tls.h             what a connection's TLS layer negotiated
 *   pgwire/auth.h            password verifiers for ALTER ROLE ... PASSWORD
 */
#ifndef PGWIRE_H
#define PGWIRE_H

#include "pgwire/common.h"
#include "pgwire/proto.h"
#include "pgwire/types.h"
#include "pgwire/types_container.h"
#include "pgwire/result.h"
#include "pgwire/session.h"
#include "pgwire/conninfo.h"
#include "pgwire/conn.h"
#include "pgwire/client.h"
#include "pgwire/listen.h"
#include "pgwire/pool.h"
#include "pgwire/tls.h"
#include "pgwire/hostplan.h"
#include "pgwire/auth.h"
#include "pgwire/ffi.h"

#endif
