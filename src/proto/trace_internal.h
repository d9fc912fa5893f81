/*
 * Protocol messages as text lines in libpq's PQtrace format, without the
 * timestamp PQtrace puts in front unless PQTRACE_SUPPRESS_TIMESTAMPS:
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
 * Two forms:
 *
 * - libpq's (flags without PGW__TRACE_EXTENDED): what libpq 15's
 *   fe-trace.c prints for the same bytes, for PQtrace. CopyData shows its
 *   length alone; a message libpq has no layout for (a frontend 'p', an
 *   unknown type) is "Unknown message: %02x"; the StartupMessage family is
 *   "Unknown message: length is N" except CancelRequest; and where the
 *   fields printed do not cover the message, libpq's second line follows:
 *   "mismatched message length: consumed N, expected M".
 *   PGW__TRACE_REGRESS is libpq's PQTRACE_REGRESS_MODE: OIDs and backend
 *   PIDs/keys print as NNNN, the F, L and R fields of ErrorResponse and
 *   NoticeResponse as "SSSS" and those messages' length as NN.
 *
 * - Extended (PGW__TRACE_EXTENDED), for tests that trace whole sessions:
 *   where libpq 15 prints nothing useful, the fields are printed too:
 *     F\t41\tStartupMessage\t 3 0 "user" "alice" "database" "db"
 *     B\t23\tAuthentication\t 10 "SCRAM-SHA-256" ""      (mechanism list)
 *     B\t92\tAuthentication\t 11 'r=...'                 (SASL data)
 *     F\t55\tSASLInitialResponse\t "SCRAM-SHA-256" 32 'n,,n=,r=...'
 *     F\t108\tSASLResponse\t 'c=biws,r=...'
 *     F\t12\tPasswordMessage\t "md5..."
 *     B\t12\tCopyData\t '...'  and  F\t12\tCopyData\t '...'
 *   A frontend 'p' message is named after the last Authentication request
 *   seen (SASL: SASLInitialResponse, SASL continue: SASLResponse, else
 *   PasswordMessage), so the F and B messages of one connection go through
 *   one pgw__trace_t in the order they were exchanged. A message shorter
 *   than its fields is printed as far as it goes, followed by
 *   " <truncated>"; bytes left after the last field as " <N more bytes>".
 *
 * The formatter never reads past len, whatever the bytes say.
 */
#ifndef PGW_PROTO_TRACE_INTERNAL_H
#define PGW_PROTO_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/common.h"

enum {
    PGW__TRACE_EXTENDED = 1 << 0, /* startup, authentication, CopyData bytes */
    PGW__TRACE_REGRESS = 1 << 1   /* libpq's PQTRACE_REGRESS_MODE */
};

/* One connection's trace: what the formatter remembers between messages. */
typedef struct pgw__trace {
    unsigned flags; /* PGW__TRACE_* */
    int32_t auth;   /* the last Authentication code from the server, -1: none */
} pgw__trace_t;

/* A fresh trace with flags. */
void pgw__trace_init(pgw__trace_t *t, unsigned flags);

/*
 * Append the line(s) for one whole message, msg[0..len) as the session's
 * on_trace hook gives it (type byte, length, body; the StartupMessage
 * family, direction 'F' without a type byte, recognised by its leading
 * zero byte), each ending in a newline, to out. direction is 'F' or 'B'.
 * Returns 0, or PGW_ENOMEM / PGW_ETOOBIG with out as it was.
 */
int pgw__trace_format(pgw__trace_t *t, pgw_buf_t *out, char direction, const uint8_t *msg,
                      size_t len);

#endif /* PGW_PROTO_TRACE_INTERNAL_H */
