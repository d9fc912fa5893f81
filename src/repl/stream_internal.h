/*
 * Internals of the replication stream shared with its drivers
 * (src/conn/replconn.c, src/client/repl.c). Not installed.
 */
#ifndef PGW_REPL_STREAM_INTERNAL_H
#define PGW_REPL_STREAM_INTERNAL_H

#include "pgwire/replication.h"

/* A driver's hook: stop(arg) is called once when the stream's request
 * completes (before on_end) or the stream is freed; NULL stop: none. */
void pgw__repl_stream_set_driver(pgw_repl_stream_t *st, void (*stop)(void *arg), void *arg);
/* The request filled by pgw_repl_stream_request was not submitted after
 * all: the stream is not running, its driver is stopped. */
void pgw__repl_stream_abandon(pgw_repl_stream_t *st);
/* The stream's configuration as given. */
const pgw_repl_stream_config_t *pgw__repl_stream_config(const pgw_repl_stream_t *st);

#endif
