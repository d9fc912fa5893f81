/*
 * Blocking-client helpers for integration tests: connect to the test
 * server and run SQL that must succeed. Failures fail the current cmocka
 * test with the server's message.
 */
#ifndef PGW_TESTS_PGCLIENT_H
#define PGW_TESTS_PGCLIENT_H

#include <stdint.h>

#include "pgwire/client.h"

/* A client on the test server (pgt_conninfo without extra options). */
pgw_client_t *pgt_client_open(void);
/* Run sql as a simple query; fail the test unless it succeeds. */
void pgt_client_exec_ok(pgw_client_t *c, const char *sql);
/* The int8 in row 0, column 0 of an extended query of sql. */
int64_t pgt_client_int8(pgw_client_t *c, const char *sql);

/* Run loop (a uv_loop_t) until *flag >= want or timeout_ms passed; returns
 * 1 if the flag got there. */
int pgt_loop_run_until(void *loop, const int *flag, int want, unsigned timeout_ms);

#endif
