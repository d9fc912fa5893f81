/*
 * A server error as one printable text, in libpq's format: the
 * pqBuildErrorMessage3 layout (severity, message, the position as a
 * "LINE n:" line with a caret, DETAIL, HINT, QUERY, CONTEXT, and the
 * verbose fields), and reportErrorPosition's placing of the caret: the line
 * holding the position, cut to 60 screen columns around it, tabs shown as
 * spaces, East Asian wide characters counted as two columns. See
 * pgw_error_format in pgwire/result.h.
 */
#include "pgwire/result.h"
#include "util/internal.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/wcwidth.h"

#define DISPLAY_SIZE  60 /* screen width limit, in columns (libpq) */
#define MIN_RIGHT_CUT 10 /* keep the caret this far from a cut end */

/* Where the text goes: buf up to len - 1 bytes; total counts everything. */
typedef struct sink {
    char *buf;
    size_t len;
    size_t total;
} sink_t;

static void put(sink_t *s, const char *p, size_t n)
{
    if (s->total < s->len) {
        size_t room = s->len - 1 - s->total;
        memcpy(s->buf + s->total, p, n < room ? n : room);
    }
    s->total += n;
}

static void puts_(sink_t *s, const char *p)
{
    put(s, p, strlen(p));
}

static void put_char(sink_t *s, char c)
{
    put(s, &c, 1);
}

/* "label%s\n" for a field that is present. */
static void line(sink_t *s, const char *label, const char *value)
{
    if (!value) return;
    puts_(s, label);
    puts_(s, value);
    put_char(s, '\n');
}

/* ---- UTF-8, as libpq's pg_utf_mblen and pg_utf_dsplen ---- */

/* Bytes of the character at p by its first byte, bounded by the string's
 * end (PQmblenBounded). */
static size_t char_len(const unsigned char *p)
{
    size_t n = (*p & 0x80) == 0      ? 1
               : (*p & 0xe0) == 0xc0 ? 2
               : (*p & 0xf0) == 0xe0 ? 3
               : (*p & 0xf8) == 0xf0 ? 4
                                     : 1;
    for (size_t i = 1; i < n; i++)
        if (!p[i]) return i;
    return n;
}

/* Screen columns of the character at p: 2 for wide ones, else 1 (libpq
 * counts zero-width and control characters as 1 here). */
static int char_width(const unsigned char *p)
{
    size_t n = char_len(p);
    if (n < 2) return 1;
    static const unsigned char lead_mask[] = {0, 0, 0x1f, 0x0f, 0x07};
    uint32_t cp = p[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    return pgw__unicode_wide(cp) ? 2 : 1;
}

/* ---- the caret (libpq's reportErrorPosition) ---- */

/* Per character of the line scanned: its byte offset and screen column. */
typedef struct scan {
    int *byte, *col;
    int ibeg, iend; /* the line holding the position: first, last + 1 char */
    int line;       /* 1-based */
    int nchars;
} scan_t;

/* Scan query up to the end of the line holding character loc (0-based). */
static void scan_query(const char *q, int loc, scan_t *sc)
{
    int off = 0, col = 0, cno;
    sc->line = 1;
    sc->ibeg = 0;
    sc->iend = -1;
    for (cno = 0; q[off] != '\0'; cno++) {
        char ch = q[off];
        sc->byte[cno] = off;
        sc->col[cno] = col;
        if (ch == '\r' || ch == '\n') {
            if (cno < loc) {
                /* \r\n counts as one line end */
                if (ch == '\r' || cno == 0 || q[sc->byte[cno - 1]] != '\r') sc->line++;
                sc->ibeg = cno + 1;
            } else {
                sc->iend = cno;
                break;
            }
        }
        col += char_width((const unsigned char *)q + off);
        off += (int)char_len((const unsigned char *)q + off);
    }
    if (sc->iend < 0) {
        sc->iend = cno;
        sc->byte[cno] = off;
        sc->col[cno] = col;
    }
    sc->nchars = cno;
}

/* Cut the line to DISPLAY_SIZE columns around loc, as libpq does. */
static void cut_line(scan_t *sc, int loc, bool *beg_cut, bool *end_cut)
{
    int *col = sc->col;
    *beg_cut = *end_cut = false;
    if (col[sc->iend] - col[sc->ibeg] <= DISPLAY_SIZE) return;
    if (col[sc->ibeg] + DISPLAY_SIZE >= col[loc] + MIN_RIGHT_CUT) {
        while (col[sc->iend] - col[sc->ibeg] > DISPLAY_SIZE)
            sc->iend--;
        *end_cut = true;
        return;
    }
    while (col[loc] + MIN_RIGHT_CUT < col[sc->iend]) {
        sc->iend--;
        *end_cut = true;
    }
    while (col[sc->iend] - col[sc->ibeg] > DISPLAY_SIZE) {
        sc->ibeg++;
        *beg_cut = true;
    }
}

/* "LINE n: text\n" and the caret line; nothing when loc (1-based) is
 * outside the query, or on allocation failure (libpq: silently). The
 * scratch arrays come from the default allocator: the call has no other. */
static void report_position(sink_t *s, const char *query, int loc)
{
    loc--;
    if (loc < 0) return;
    size_t slen = strlen(query) + 1;
    scan_t sc;
    sc.byte = pgw__calloc(NULL, slen, sizeof(int));
    sc.col = pgw__calloc(NULL, slen, sizeof(int));
    if (sc.byte && sc.col) {
        scan_query(query, loc, &sc);
        if (loc <= sc.nchars) {
            bool beg_cut, end_cut;
            cut_line(&sc, loc, &beg_cut, &end_cut);
            char prefix[32];
            int plen =
                snprintf(prefix, sizeof prefix, "LINE %d: %s", sc.line, beg_cut ? "..." : "");
            puts_(s, prefix);
            for (int i = sc.byte[sc.ibeg]; i < sc.byte[sc.iend]; i++)
                put_char(s, query[i] == '\t' ? ' ' : query[i]);
            if (end_cut) puts_(s, "...");
            put_char(s, '\n');
            for (int i = plen + sc.col[loc] - sc.col[sc.ibeg]; i > 0; i--)
                put_char(s, ' ');
            puts_(s, "^\n");
        }
    }
    pgw__free(NULL, sc.byte);
    pgw__free(NULL, sc.col);
}

/* ---- the message (libpq's pqBuildErrorMessage3) ---- */

/* An error, not a notice: libpq's default shows CONTEXT only for those. */
static bool is_error(const pgw_error_t *e)
{
    const char *sev = e->severity_nonlocal ? e->severity_nonlocal : e->severity;
    return sev &&
           (strcmp(sev, "ERROR") == 0 || strcmp(sev, "FATAL") == 0 || strcmp(sev, "PANIC") == 0);
}

/* The primary line; sets the query and position for the caret. */
static void primary(sink_t *s, const pgw_error_t *e, const char *query, bool terse,
                    const char **caret_query, int *caret_pos)
{
    puts_(s, e->message ? e->message : "");
    const char *pos = e->position, *text = query;
    if (!pos) {
        pos = e->internal_position;
        text = e->internal_query;
    }
    if (!pos) return;
    if (!terse && text) {
        *caret_query = text;
        *caret_pos = atoi(pos);
        return;
    }
    puts_(s, " at character ");
    puts_(s, pos);
}

static void verbose_fields(sink_t *s, const pgw_error_t *e)
{
    line(s, "SCHEMA NAME:  ", e->schema);
    line(s, "TABLE NAME:  ", e->table);
    line(s, "COLUMN NAME:  ", e->column);
    line(s, "DATATYPE NAME:  ", e->datatype);
    line(s, "CONSTRAINT NAME:  ", e->constraint);
    if (!e->routine && !e->file && !e->line) return;
    puts_(s, "LOCATION:  ");
    if (e->routine) {
        puts_(s, e->routine);
        puts_(s, ", ");
    }
    if (e->file && e->line) {
        puts_(s, e->file);
        put_char(s, ':');
        puts_(s, e->line);
    }
    put_char(s, '\n');
}

PGW_EXTERN int pgw_error_format(const pgw_error_t *e, const char *query,
                                pgw_error_verbosity_t verbosity, char *buf, size_t len)
{
    if (!e || (!buf && len)) return PGW_EINVAL;
    sink_t s = {buf, len, 0};
    if (e->severity) {
        puts_(&s, e->severity);
        puts_(&s, ":  ");
    }
    if (verbosity == PGW_ERRORS_SQLSTATE) {
        if (e->sqlstate) {
            line(&s, "", e->sqlstate);
            goto done;
        }
        verbosity = PGW_ERRORS_TERSE; /* libpq's fallback without one */
    }
    bool terse = verbosity == PGW_ERRORS_TERSE, verbose = verbosity == PGW_ERRORS_VERBOSE;
    if (verbose && e->sqlstate) {
        puts_(&s, e->sqlstate);
        puts_(&s, ": ");
    }
    const char *caret_query = NULL;
    int caret_pos = 0;
    primary(&s, e, query, terse, &caret_query, &caret_pos);
    put_char(&s, '\n');
    if (!terse) {
        if (caret_query && caret_pos > 0) report_position(&s, caret_query, caret_pos);
        line(&s, "DETAIL:  ", e->detail);
        line(&s, "HINT:  ", e->hint);
        line(&s, "QUERY:  ", e->internal_query);
    }
    if (!terse && is_error(e)) line(&s, "CONTEXT:  ", e->where);
    if (verbose) verbose_fields(&s, e);
done:
    if (len) buf[s.total < len ? s.total : len - 1] = '\0';
    return s.total > INT32_MAX ? INT32_MAX : (int)s.total;
}
