/*
 * pgresponder: a tiny in-memory server that answers what a sans-IO session
 * writes, message by message, as PostgreSQL would, so that unit tests can
 * drive any sequence of requests (pipelines, batches, prepared and cached
 * statements, portals, COPY in both directions) without scripting each
 * reply by hand (tests/common/pgmsg.h builds replies one by one).
 *
 * What it knows of SQL is only what the tests need:
 *   - every statement returns one int8 column: $1 (the first parameter,
 *     int8 or int4, binary or text) when the SQL has one, else 1; SQL
 *     containing "generate_series(1, N)" returns N rows 1..N instead;
 *   - "COPY ... FROM STDIN" answers CopyInResponse, absorbs the data and
 *     ends with "COPY n" (n the lines received), or 57014 after CopyFail;
 *     "COPY ... TO STDOUT" sends COPY_OUT_ROWS lines of CopyData;
 *   - simple queries: each ';'-separated statement as above, BEGIN /
 *     COMMIT / ROLLBACK setting the transaction status;
 *   - named statements are remembered; a Bind of an unknown one fails with
 *     26000; fail_bind (a SQLSTATE) makes the next request's Bind of a
 *     named statement prepared earlier fail with it, as after DISCARD ALL
 *     (26000) or ALTER TABLE (0A000);
 *   - after an error, everything up to the Sync is skipped.
 * The replies are appended to r->out (take them, feed them to the session,
 * reset it). Test infrastructure: allocates with malloc, aborts on failure.
 */
#ifndef PGW_TESTS_PGRESPONDER_H
#define PGW_TESTS_PGRESPONDER_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/common.h"

#define PGT_RESPONDER_STMTS 32
#define PGT_COPY_OUT_ROWS   50

typedef struct pgt_responder {
    pgw_buf_t out; /* backend bytes to feed to the session */
    struct {
        char name[64];
        char sql[256];
    } stmts[PGT_RESPONDER_STMTS];
    char unnamed_sql[256];
    /* the unnamed portal and one named one: their SQL, parameter, format,
     * rows left */
    struct {
        char name[64];
        char sql[256];
        int64_t param;
        int has_param, binary, open;
        int64_t next, last;
    } portals[2];
    int skipping; /* after an error, until Sync */
    char txn;     /* 'I', 'T' or 'E' */
    int copy_in;  /* absorbing COPY data */
    uint64_t copy_lines;
    /* A SQLSTATE for the next Bind of a named statement prepared before the
     * current sync group (one already there: a cache hit); cleared by the
     * next Sync either way. */
    char fail_bind[6];
    int parsed_in_group[PGT_RESPONDER_STMTS];
    uint64_t messages; /* frontend messages answered */
} pgt_responder_t;

void pgt_responder_init(pgt_responder_t *r);
void pgt_responder_free(pgt_responder_t *r);

/* Answer the complete frontend messages of in[0..n) (a session's output,
 * after its startup); returns the bytes they took (a partial message at
 * the end is left for the next call). */
size_t pgt_responder_answer(pgt_responder_t *r, const uint8_t *in, size_t n);

/* The backend bytes of a trust startup (AuthenticationOk, a few
 * ParameterStatus, BackendKeyData, ReadyForQuery), appended to b. */
void pgt_responder_startup(pgw_buf_t *b);

#endif /* PGW_TESTS_PGRESPONDER_H */
