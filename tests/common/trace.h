/*
 * trace: protocol messages as text lines in libpq's PQtrace format, the
 * extended form of src/proto/trace_internal.h (which says what a line
 * holds), collected into one text for golden trace files and for comparing
 * a session's trace with libpq's.
 *
 * Test infrastructure: an allocation failure aborts the process.
 */
#ifndef PGW_TESTS_TRACE_H
#define PGW_TESTS_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/common.h"
#include "proto/trace_internal.h"

typedef struct pgt_trace {
    pgw_buf_t text;      /* the lines so far, NUL-terminated (see pgt_trace_text) */
    pgw__trace_t format; /* what the formatter remembers (the last auth code) */
    size_t nlines;       /* lines appended */
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
