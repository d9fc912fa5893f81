/*
 * trace: libpq-style protocol trace lines (see trace.h).
 */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message being printed: its bytes, how far we are, whether a field ran
 * past the end. */
typedef struct cur {
    pgt_trace_t *t;
    const uint8_t *p;
    size_t len, pos;
    int short_msg;
} cur_t;

static void put(pgt_trace_t *t, const void *p, size_t n)
{
    /* Keep one byte of room for the terminator pgt_trace_text relies on. */
    if (pgw_buf_reserve(&t->text, n + 1) < 0) abort();
    memcpy(t->text.data + t->text.len, p, n);
    t->text.len += n;
    t->text.data[t->text.len] = '\0';
}

static void putf(pgt_trace_t *t, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    put(t, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void puts_(pgt_trace_t *t, const char *s)
{
    put(t, s, strlen(s));
}

/* True if n more bytes are there; otherwise marks the message short. */
static int have(cur_t *c, size_t n)
{
    if (c->short_msg || c->len - c->pos < n) {
        c->short_msg = 1;
        return 0;
    }
    return 1;
}

static int printable(uint8_t b)
{
    return b >= 0x20 && b < 0x7f; /* isprint in the C locale */
}

static int byte1(cur_t *c)
{
    if (!have(c, 1)) return -1;
    uint8_t b = c->p[c->pos++];
    if (printable(b))
        putf(c->t, " %c", b);
    else
        putf(c->t, " \\x%02x", b);
    return b;
}

static int32_t get_i32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* As libpq prints it: unsigned (a type size of -1 is 65535). */
static int int16(cur_t *c)
{
    if (!have(c, 2)) return -1;
    int v = c->p[c->pos] << 8 | c->p[c->pos + 1];
    c->pos += 2;
    putf(c->t, " %d", v);
    return v;
}

static int32_t int32(cur_t *c)
{
    if (!have(c, 4)) return -1;
    int32_t v = get_i32(c->p + c->pos);
    c->pos += 4;
    putf(c->t, " %d", (int)v);
    return v;
}

static void string(cur_t *c)
{
    if (c->short_msg) return;
    const uint8_t *end = memchr(c->p + c->pos, 0, c->len - c->pos);
    if (!end) {
        c->short_msg = 1;
        return;
    }
    size_t n = (size_t)(end - (c->p + c->pos));
    puts_(c->t, " \"");
    put(c->t, c->p + c->pos, n);
    puts_(c->t, "\"");
    c->pos += n + 1;
}

/* n bytes in single quotes, unprintable ones as \xNN. */
static void nchar(cur_t *c, size_t n)
{
    if (!have(c, n)) return;
    const uint8_t *v = c->p + c->pos;
    puts_(c->t, " '");
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (printable(v[i])) continue;
        put(c->t, v + next, i - next);
        putf(c->t, "\\x%02x", v[i]);
        next = i + 1;
    }
    put(c->t, v + next, n - next);
    puts_(c->t, "'");
    c->pos += n;
}

/* A length-prefixed value (-1: NULL, printed as the length alone). */
static void value(cur_t *c)
{
    int32_t n = int32(c);
    if (n >= 0) nchar(c, (size_t)n);
}

/*
 * The fields of a message, as a string of codes:
 *   b byte   h int16   i int32   s string   r the rest as bytes
 *   v int32 length and that many bytes (-1: none)
 *   H int16 count, then int16s     I int16 count, then int32s
 *   V int16 count, then v values   S int32 count, then strings
 *   T RowDescription fields        E Error/Notice fields up to the 0 byte
 *   L strings up to an empty one   K the rest: int32 if 4 bytes, else bytes
 */
static void field(cur_t *c, char code);

static void fields(cur_t *c, const char *spec)
{
    for (; *spec && !c->short_msg; spec++)
        field(c, *spec);
}

static void repeat(cur_t *c, int n, const char *spec)
{
    for (int i = 0; i < n && !c->short_msg; i++)
        fields(c, spec);
}

static void field(cur_t *c, char code)
{
    switch (code) {
    case 'b':
        byte1(c);
        break;
    case 'h':
        int16(c);
        break;
    case 'i':
        int32(c);
        break;
    case 's':
        string(c);
        break;
    case 'r':
        nchar(c, c->len - c->pos);
        break;
    case 'v':
        value(c);
        break;
    case 'H':
        repeat(c, int16(c), "h");
        break;
    case 'I':
        repeat(c, int16(c), "i");
        break;
    case 'V':
        repeat(c, int16(c), "v");
        break;
    case 'S':
        repeat(c, (int)int32(c), "s");
        break;
    case 'T':
        repeat(c, int16(c), "sihihih");
        break;
    case 'E':
        while (!c->short_msg && byte1(c) > 0)
            string(c);
        break;
    case 'L':
        while (!c->short_msg && c->pos < c->len && c->p[c->pos] != 0)
            string(c);
        string(c); /* the empty name that ends the list */
        break;
    case 'K':
        field(c, c->len - c->pos == 4 ? 'i' : 'r'); /* protocol 3.2: a longer key */
        break;
    default:
        abort();
    }
}

typedef struct msg_kind {
    char dir, type;
    const char *name, *spec;
} msg_kind_t;

static const msg_kind_t kinds[] = {
    {'B', '1', "ParseComplete", ""},
    {'B', '2', "BindComplete", ""},
    {'B', '3', "CloseComplete", ""},
    {'B', 'A', "NotificationResponse", "iss"},
    {'B', 'c', "CopyDone", ""},
    {'B', 'C', "CommandComplete", "s"},
    {'B', 'd', "CopyData", "r"},
    {'B', 'D', "DataRow", "V"},
    {'B', 'E', "ErrorResponse", "E"},
    {'B', 'G', "CopyInResponse", "bH"},
    {'B', 'H', "CopyOutResponse", "bH"},
    {'B', 'W', "CopyBothResponse", "bH"},
    {'B', 'I', "EmptyQueryResponse", ""},
    {'B', 'K', "BackendKeyData", "iK"},
    {'B', 'n', "NoData", ""},
    {'B', 'N', "NoticeResponse", "E"},
    {'B', 's', "PortalSuspended", ""},
    {'B', 'S', "ParameterStatus", "ss"},
    {'B', 't', "ParameterDescription", "I"},
    {'B', 'T', "RowDescription", "T"},
    {'B', 'v', "NegotiateProtocolVersion", "iS"},
    {'B', 'V', "FunctionCallResponse", "v"},
    {'B', 'Z', "ReadyForQuery", "b"},
    {'F', 'B', "Bind", "ssHVH"},
    {'F', 'c', "CopyDone", ""},
    {'F', 'C', "Close", "bs"},
    {'F', 'D', "Describe", "bs"},
    {'F', 'd', "CopyData", "r"},
    {'F', 'E', "Execute", "si"},
    {'F', 'f', "CopyFail", "s"},
    {'F', 'F', "FunctionCall", "iHVh"},
    {'F', 'H', "Flush", ""},
    {'F', 'P', "Parse", "ssI"},
    {'F', 'Q', "Query", "s"},
    {'F', 'S', "Sync", ""},
    {'F', 'X', "Terminate", ""},
};

static void named(cur_t *c, const char *name, const char *spec)
{
    puts_(c->t, name);
    if (*spec) puts_(c->t, "\t");
    fields(c, spec);
}

/* Authentication: the code, then the mechanism list (SASL) or the data
 * (MD5 salt, SASL continue and final). */
static void authentication(cur_t *c)
{
    named(c, "Authentication", "i");
    if (c->short_msg) return;
    c->t->auth = get_i32(c->p + 5);
    if (c->t->auth == 10)
        field(c, 'L');
    else if (c->pos < c->len)
        field(c, 'r');
}

/* A frontend 'p' is named after the authentication request it answers. */
static void password_family(cur_t *c)
{
    if (c->t->auth == 10)
        named(c, "SASLInitialResponse", "sv");
    else if (c->t->auth == 11)
        named(c, "SASLResponse", "r");
    else
        named(c, "PasswordMessage", "s");
}

static void body(cur_t *c, char dir, char type)
{
    if (dir == 'B' && type == 'R') {
        authentication(c);
        return;
    }
    if (dir == 'F' && type == 'p') {
        password_family(c);
        return;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (kinds[i].dir == dir && kinds[i].type == type) {
            named(c, kinds[i].name, kinds[i].spec);
            return;
        }
    }
    putf(c->t, "Unknown message: %02x", (uint8_t)type);
    c->pos = c->len;
}

/* The StartupMessage family: length, protocol code, body. */
static void untyped(cur_t *c)
{
    int32_t code = c->len >= 8 ? get_i32(c->p + 4) : -1;
    c->pos = 4;
    if (code == 80877103) {
        c->pos = 8;
        named(c, "SSLRequest", "");
    } else if (code == 80877104) {
        c->pos = 8;
        named(c, "GSSENCRequest", "");
    } else if (code == 80877102) {
        named(c, "CancelRequest", "iir");
    } else {
        named(c, "StartupMessage", "hh");
        while (!c->short_msg && c->pos < c->len && c->p[c->pos] != 0)
            fields(c, "ss");
        if (have(c, 1)) c->pos++; /* the terminator */
    }
}

void pgt_trace_init(pgt_trace_t *t)
{
    memset(t, 0, sizeof *t);
    pgw_buf_init(&t->text, NULL);
    t->auth = -1;
}

void pgt_trace_free(pgt_trace_t *t)
{
    pgw_buf_free(&t->text);
    t->nlines = 0;
    t->auth = -1;
}

void pgt_trace_msg(pgt_trace_t *t, char direction, const uint8_t *msg, size_t len)
{
    cur_t c = {t, msg, len, 0, 0};
    int typed = !(direction == 'F' && len >= 8 && msg[0] == 0);
    size_t at = typed ? 1 : 0;
    int32_t declared = len >= at + 4 ? get_i32(msg + at) : -1;
    putf(t, "%c\t%d\t", direction, (int)declared);
    if (len < at + 4) {
        puts_(t, "<truncated>");
    } else if (!typed) {
        untyped(&c);
    } else {
        c.pos = 5;
        body(&c, direction, (char)msg[0]);
    }
    if (c.short_msg)
        puts_(t, " <truncated>");
    else if (c.pos < len)
        putf(t, " <%zu more bytes>", len - c.pos);
    puts_(t, "\n");
    t->nlines++;
}

void pgt_trace_note(pgt_trace_t *t, const char *line)
{
    puts_(t, line);
    puts_(t, "\n");
    t->nlines++;
}

const char *pgt_trace_text(const pgt_trace_t *t)
{
    return t->text.len ? (const char *)t->text.data : "";
}
