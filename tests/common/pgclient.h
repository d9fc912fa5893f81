/*
 * Client helpers for integration tests: a blocking client on the test
 * server and SQL that must succeed, and a pgw_conn_t on a loop of its own.
 * Failures fail the current cmocka test with the server's message.
 */
#ifndef PGW_TESTS_PGCLIENT_H
#define PGW_TESTS_PGCLIENT_H

#include <stdint.h>
#include <uv.h> /* its includer defines _POSIX_C_SOURCE 200809L first */

#include "pgwire/client.h"
#include "pgwire/conn.h"

/* A client on the test server (pgt_conninfo without extra options). */
pgw_client_t *pgt_client_open(void);
/* Run sql as a simple query; fail the test unless it succeeds. */
void pgt_client_exec_ok(pgw_client_t *c, const char *sql);
/* The int8 in row 0, column 0 of an extended query of sql. */
int64_t pgt_client_int8(pgw_client_t *c, const char *sql);

/* Run loop (a uv_loop_t) until *flag >= want or timeout_ms passed; returns
 * 1 if the flag got there. */
int pgt_loop_run_until(void *loop, const int *flag, int want, unsigned timeout_ms);

/* A pgw_conn_t on a loop of its own, connected to the test server. */
typedef struct pgt_conn {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected, connect_status, closed;
    int syncs_sent; /* Sync messages written (the fixture's on_trace) */
    int drains;     /* on_drain calls (the fixture's on_drain) */
} pgt_conn_t;

/* Connect f with cfg (NULL: defaults; copied, its ud replaced by f, and
 * on_trace / on_drain, when NULL, by hooks counting into f); fails the test
 * unless the connect succeeds. */
void pgt_conn_open(pgt_conn_t *f, const pgw_conn_config_t *cfg);
/* Run f's loop until *flag >= want; fails the test after 60 s. */
void pgt_conn_run(pgt_conn_t *f, const int *flag, int want);
/* Submit r on f (its on_result and ud replaced; the submit must succeed)
 * and run f's loop until it completes: its status, its result in *res (the
 * caller frees it), or freed when res is NULL. */
int pgt_conn_request(pgt_conn_t *f, pgw_request_t r, pgw_result_t **res);
/* Start closing f's connection (pgw_conn_close's return); f->closed counts
 * when it is done. For a close from inside a callback. */
int pgt_conn_start_close(pgt_conn_t *f);
/* Close f's connection (unless closed already), run the loop dry and close
 * it; fails the test if a handle is left. */
void pgt_conn_close(pgt_conn_t *f);

#endif
