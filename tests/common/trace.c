/*
 * trace: libpq-style protocol trace lines collected into one text (see
 * trace.h); the lines are src/proto/trace.c's.
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

static void put(pgt_trace_t *t, const void *p, size_t n)
{
    /* Keep one byte of room for the terminator pgt_trace_text relies on. */
    if (pgw_buf_reserve(&t->text, n + 1) < 0) abort();
    memcpy(t->text.data + t->text.len, p, n);
    t->text.len += n;
    t->text.data[t->text.len] = '\0';
}

void pgt_trace_init(pgt_trace_t *t)
{
    memset(t, 0, sizeof *t);
    pgw_buf_init(&t->text, NULL);
    pgw__trace_init(&t->format, PGW__TRACE_EXTENDED);
}

void pgt_trace_free(pgt_trace_t *t)
{
    pgw_buf_free(&t->text);
    t->nlines = 0;
    pgw__trace_init(&t->format, PGW__TRACE_EXTENDED);
}

void pgt_trace_msg(pgt_trace_t *t, char direction, const uint8_t *msg, size_t len)
{
    if (pgw__trace_format(&t->format, &t->text, direction, msg, len) < 0) abort();
    put(t, "", 0); /* the terminator */
    t->nlines++;
}

void pgt_trace_note(pgt_trace_t *t, const char *line)
{
    put(t, line, strlen(line));
    put(t, "\n", 1);
    t->nlines++;
}

const char *pgt_trace_text(const pgt_trace_t *t)
{
    return t->text.len ? (const char *)t->text.data : "";
}
