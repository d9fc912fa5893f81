/*
 * trace: protocol messages as text lines in libpq's PQtrace format (the
 * PQTRACE_SUPPRESS_TIMESTAMPS form, without timestamps), for golden trace
 * files and for comparing a session's trace with libpq's:
 *
 *   F\t27\tParse\t "" "SELECT $1" 1 23
 *   B\t5\tReadyForQuery\t I
 *
 * Each line is the direction ('F' to the server, 'B' from it), the length
 * field of the message, the message name and its fields: integers in
 * decimal (int16 fields unsigned, as libpq prints them: a type size of -1
 * is 65535), strings in double quotes, byte strings (DataRow values, Bind
 * parameters) in single quotes with every byte that is not printable in
 * the C locale written as \xNN, single bytes as a character or \xNN.
 *
 * Where libpq 15 prints nothing useful, the output is extended (libpq 15
 * does not trace the startup packet, the authentication exchange or the
 * fields after an Authentication code):
 *   F\t41\tStartupMessage\t 3 0 "user" "alice" "database" "db"
 *   B\t23\tAuthentication\t 10 "SCRAM-SHA-256" ""      (mechanism list)
 *   B\t92\tAuthentication\t 11 'r=...'                 (SASL data)
 *   F\t55\tSASLInitialResponse\t "SCRAM-SHA-256" 32 'n,,n=,r=...'
 *   F\t108\tSASLResponse\t 'c=biws,r=...'
 *   F\t12\tPasswordMessage\t "md5..."
 *   B\t12\tCopyData\t '...'  and  F\t12\tCopyData\t '...'
 * A frontend 'p' message is named after the last Authentication request
 * seen (SASL: SASLInitialResponse, SASL continue: SASLResponse, else
 * PasswordMessage), so the F and B messages of one connection must go
 * through one pgt_trace_t in the order they were exchanged.
 *
 * A message that is shorter than its fields is printed as far as it goes,
 * followed by " <truncated>"; bytes left after the last field are printed
 * as " <N more bytes>". The formatter never reads past len.
 *
 * Test infrastructure: an allocation failure aborts the process.
 */
#ifndef PGW_TESTS_TRACE_H
#define PGW_TESTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/common.h"

typedef struct pgt_trace {
    pgw_buf_t text; /* the lines so far, NUL-terminated (see pgt_trace_text) */
    int32_t auth;   /* the last Authentication code from the server, -1: none */
    size_t nlines;  /* lines appended */
} pgt_trace_t;

/* Start an empty trace. */
void pgt_trace_init(pgt_trace_t *t);
/* Release the text; t is left empty and reusable after pgt_trace_init. */
void pgt_trace_free(pgt_trace_t *t);

/*
 * Append the line for one whole message: msg[0..len) as the session's
 * on_trace hook gives it (type byte, length, body; the StartupMessage
 * family, direction 'F' without a type byte, is recognised by its
 * protocol code). direction is 'F' or 'B'.
 */
void pgt_trace_msg(pgt_trace_t *t, char direction, const uint8_t *msg, size_t len);

/* Append a line of free text (a newline is added). */
void pgt_trace_note(pgt_trace_t *t, const char *line);

/* The text so far ("" when empty). Valid until the next call on t. */
const char *pgt_trace_text(const pgt_trace_t *t);

#endif /* PGW_TESTS_TRACE_H */
