/*
 * fakepg: a scripted fake PostgreSQL server for fault tests.
 *
 * A thread in the test process listens on 127.0.0.1 (ephemeral port),
 * accepts one connection and plays a script: expect the startup packet or a
 * frontend message of a given type, send canned (or hostile) bytes, send a
 * prefix and cut the socket, sleep, wait for EOF, close. Everything it reads
 * is recorded for the test to inspect after fakepg_wait.
 *
 * Steps hold pointers, not copies: the bytes must live until fakepg_wait
 * returns. Every blocking wait of the thread gives up after 10 s, so a test
 * whose client misbehaves fails instead of hanging.
 *
 * Message builders append backend messages to a pgw_buf_t; fakepg_msg
 * writes any type with any body, and fakepg_raw any bytes at all (for
 * lengths that lie).
 */
#ifndef PGW_TESTS_FAKEPG_H
#define PGW_TESTS_FAKEPG_H

#include "pgwire/common.h"

#include <stddef.h>
#include <stdint.h>

typedef enum fakepg_op {
    FAKEPG_EXPECT_STARTUP, /* read a StartupMessage (or SSLRequest/CancelRequest:
                              see fakepg_startup_version) */
    FAKEPG_EXPECT,         /* read one message; its type must be .type (0: any) */
    FAKEPG_EXPECT_UNTIL,   /* read messages until the len-th one of type .type */
    FAKEPG_SEND,           /* write data[0..len) */
    FAKEPG_SEND_CUT,       /* write data[0..len), then close at once */
    FAKEPG_SLEEP,          /* sleep len milliseconds */
    FAKEPG_EXPECT_EOF,     /* read (and record) until the client closes */
    FAKEPG_CLOSE           /* close the connection */
} fakepg_op_t;

typedef struct fakepg_step {
    fakepg_op_t op;
    uint8_t type;
    const void *data;
    size_t len;
} fakepg_step_t;

typedef struct fakepg fakepg_t;

/* Listen and start the thread playing steps[0..n). Returns 0 or -1. */
int fakepg_start(fakepg_t **out, const fakepg_step_t *steps, size_t n);
/* The port it listens on. */
uint16_t fakepg_port(const fakepg_t *f);
/* Wait for the script to end. Returns 0 if every step ran as written, -1
 * otherwise (fakepg_error says why). */
int fakepg_wait(fakepg_t *f);
/* What went wrong ("" if nothing). Valid until fakepg_free. */
const char *fakepg_error(const fakepg_t *f);
/* Protocol version code of the startup packet (e.g. 196610 for 3.2, or
 * 80877103 for SSLRequest, 80877102 for CancelRequest). 0 if none yet. */
uint32_t fakepg_startup_version(const fakepg_t *f);
/* A startup parameter's value, or NULL. */
const char *fakepg_startup_param(const fakepg_t *f, const char *name);
/* The types of the frontend messages read, in order, NUL-terminated. */
const char *fakepg_received_types(const fakepg_t *f);
/* Number of steps completed. */
size_t fakepg_steps_done(const fakepg_t *f);
/* Join (if needed) and free. */
void fakepg_free(fakepg_t *f);

/* Builders (abort the test process on OOM: they are test helpers). */
void fakepg_raw(pgw_buf_t *b, const void *p, size_t n);
void fakepg_msg(pgw_buf_t *b, uint8_t type, const void *body, size_t len);
void fakepg_auth_ok(pgw_buf_t *b);
void fakepg_param_status(pgw_buf_t *b, const char *name, const char *value);
void fakepg_backend_key(pgw_buf_t *b, int32_t pid, const uint8_t *key, size_t key_len);
void fakepg_ready(pgw_buf_t *b, char status);
/* NegotiateProtocolVersion: newest minor supported and unsupported options. */
void fakepg_negotiate(pgw_buf_t *b, uint32_t minor, const char *const *opts, size_t n);
/* RowDescription: columns of type oids[i] in format (0 text, 1 binary). */
void fakepg_row_desc(pgw_buf_t *b, size_t ncols, const char *const *names, const uint32_t *oids,
                     int16_t format);
/* DataRow of text values (NULL: SQL NULL). */
void fakepg_data_row(pgw_buf_t *b, size_t ncols, const char *const *values);
/* DataRow of one binary int4. */
void fakepg_data_row_int4(pgw_buf_t *b, int32_t v);
void fakepg_command_complete(pgw_buf_t *b, const char *tag);
void fakepg_error_response(pgw_buf_t *b, const char *severity, const char *code,
                           const char *message);
/* AuthenticationOk, server_version, client_encoding, BackendKeyData(pid,
 * 4-byte key) and ReadyForQuery('I'): a typical 3.0 startup answer. */
void fakepg_startup_ok(pgw_buf_t *b, int32_t pid, uint32_t key);
/* The answer to one extended query (Parse, Bind, Describe portal,
 * Execute, Sync) returning one binary int4 column "v" with nrows rows:
 * ParseComplete, BindComplete, RowDescription, DataRows, CommandComplete,
 * ReadyForQuery('I'). */
void fakepg_query_answer(pgw_buf_t *b, const int32_t *values, size_t nrows);

#endif
