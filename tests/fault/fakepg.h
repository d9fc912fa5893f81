/*
 * fakepg: a scripted fake PostgreSQL server for fault tests.
 *
 * A thread in the test process listens on 127.0.0.1 (ephemeral port),
 * accepts one connection (more with FAKEPG_ACCEPT) and plays a script:
 * expect the startup packet or a
 * frontend message of a given type, send canned (or hostile) bytes, send a
 * prefix and cut (or reset) the socket, sleep, wait for EOF, close. Everything it reads
 * is recorded for the test to inspect after fakepg_wait.
 *
 * Steps hold pointers, not copies: the bytes must live until fakepg_wait
 * returns. Every blocking wait of the thread gives up after 10 s, so a test
 * whose client misbehaves fails instead of hanging.
 *
 * The bytes to send are built with tests/common/pgmsg.h (pgt_msg_* append
 * backend messages to a pgw_buf_t; pgt_msg_raw any bytes at all, for
 * lengths that lie).
 */
#ifndef PGW_TESTS_FAKEPG_H
#define PGW_TESTS_FAKEPG_H

#include "pgmsg.h"
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
    FAKEPG_SEND_RESET,     /* write data[0..len), then reset the connection
                              (SO_LINGER 0: an RST right behind the bytes) */
    FAKEPG_SLEEP,          /* sleep len milliseconds */
    FAKEPG_EXPECT_EOF,     /* read (and record) until the client closes */
    FAKEPG_CLOSE,          /* close the connection */
    FAKEPG_ACCEPT,         /* accept the client's next connection; the current
                              one (if open) is kept aside for FAKEPG_RESUME */
    FAKEPG_RESUME          /* close the current connection and go back to the
                              one FAKEPG_ACCEPT kept aside */
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
/* The last startup packet's body after its version code (the parameters;
 * a CancelRequest's pid and key), its length in *len. */
const uint8_t *fakepg_startup_body(const fakepg_t *f, size_t *len);
/* The body of the i-th message read by FAKEPG_EXPECT / _UNTIL steps (its
 * type in *type), or NULL past the last one (at most 64 are kept). */
const uint8_t *fakepg_message(const fakepg_t *f, size_t i, uint8_t *type, size_t *len);
/* The types of the frontend messages read, in order, NUL-terminated. */
const char *fakepg_received_types(const fakepg_t *f);
/* Number of steps completed. */
size_t fakepg_steps_done(const fakepg_t *f);
/* Join (if needed) and free. */
void fakepg_free(fakepg_t *f);

/* The answer to one extended query (Parse, Bind, Describe portal,
 * Execute, Sync) returning one binary int4 column "v" with nrows rows:
 * ParseComplete, BindComplete, RowDescription, DataRows, CommandComplete,
 * ReadyForQuery('I'). */
void fakepg_query_answer(pgw_buf_t *b, const int32_t *values, size_t nrows);

#endif
