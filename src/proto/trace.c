/*
 * trace: protocol messages as libpq-style trace lines (see trace_internal.h).
 */
#include "proto/trace_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/internal.h"

/* A message being printed: its bytes, how far we are, whether a field ran
 * past the end, whether appending failed. */
typedef struct cur {
    pgw__trace_t *t;
    pgw_buf_t *out;
    const uint8_t *p;
    size_t len, pos;
    int short_msg;
    int err;
} cur_t;

static void put(cur_t *c, const void *p, size_t n)
{
    if (c->err || !n) return;
    int rc = pgw_buf_append(c->out, p, n);
    if (rc < 0) c->err = rc;
}

static void putf(cur_t *c, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    put(c, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void puts_(cur_t *c, const char *s)
{
    put(c, s, strlen(s));
}

static int extended(const cur_t *c)
{
    return (c->t->flags & PGW__TRACE_EXTENDED) != 0;
}

static int regress(const cur_t *c)
{
    return (c->t->flags & PGW__TRACE_REGRESS) != 0;
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
        putf(c, " %c", b);
    else
        putf(c, " \\x%02x", b);
    return b;
}

/* As libpq prints it: unsigned (a type size of -1 is 65535). */
static int int16(cur_t *c)
{
    if (!have(c, 2)) return -1;
    int v = c->p[c->pos] << 8 | c->p[c->pos + 1];
    c->pos += 2;
    putf(c, " %d", v);
    return v;
}

/* suppress: printed as NNNN (regress mode's OIDs, PIDs and keys). */
static int32_t int32(cur_t *c, int suppress)
{
    if (!have(c, 4)) return -1;
    int32_t v = (int32_t)pgw__get32(c->p + c->pos);
    c->pos += 4;
    if (suppress)
        puts_(c, " NNNN");
    else
        putf(c, " %d", (int)v);
    return v;
}

/* suppress: printed as "SSSS" (regress mode's source locations). */
static void string(cur_t *c, int suppress)
{
    if (c->short_msg) return;
    const uint8_t *end = memchr(c->p + c->pos, 0, c->len - c->pos);
    if (!end) {
        c->short_msg = 1;
        return;
    }
    size_t n = (size_t)(end - (c->p + c->pos));
    if (suppress) {
        puts_(c, " \"SSSS\"");
    } else {
        puts_(c, " \"");
        put(c, c->p + c->pos, n);
        puts_(c, "\"");
    }
    c->pos += n + 1;
}

/* n bytes in single quotes, unprintable ones as \xNN. */
static void nchar(cur_t *c, size_t n)
{
    if (!have(c, n)) return;
    const uint8_t *v = c->p + c->pos;
    puts_(c, " '");
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (printable(v[i])) continue;
        put(c, v + next, i - next);
        putf(c, "\\x%02x", v[i]);
        next = i + 1;
    }
    put(c, v + next, n - next);
    puts_(c, "'");
    c->pos += n;
}

/* A length-prefixed value (-1: NULL, printed as the length alone). */
static void value(cur_t *c)
{
    int32_t n = int32(c, 0);
    if (n >= 0) nchar(c, (size_t)n);
}

/* ErrorResponse / NoticeResponse fields up to the terminating zero byte;
 * regress mode hides the ones that move with the server's source. */
static void notice_fields(cur_t *c)
{
    for (;;) {
        int code = byte1(c);
        if (code <= 0) break;
        string(c, regress(c) && (code == 'F' || code == 'L' || code == 'R'));
    }
}

/*
 * The fields of a message, as a string of codes:
 *   b byte   h int16   i int32   o int32 OID/PID (NNNN in regress mode)
 *   s string   r the rest as bytes   v int32 length and that many bytes
 *   H int16 count, then int16s     O int16 count, then OIDs
 *   V int16 count, then v values   S int32 count, then strings
 *   T RowDescription fields        E Error/Notice fields up to the 0 byte
 *   L strings up to an empty one   K the rest: an OID if 4 bytes, else bytes
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
        int32(c, 0);
        break;
    case 'o':
        int32(c, regress(c));
        break;
    case 's':
        string(c, 0);
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
    case 'O':
        repeat(c, int16(c), "o");
        break;
    case 'V':
        repeat(c, int16(c), "v");
        break;
    case 'S':
        repeat(c, (int)int32(c, 0), "s");
        break;
    case 'T':
        repeat(c, int16(c), "sohohih");
        break;
    case 'E':
        notice_fields(c);
        break;
    case 'L':
        while (!c->short_msg && c->pos < c->len && c->p[c->pos] != 0)
            string(c, 0);
        string(c, 0); /* the empty name that ends the list */
        break;
    case 'K':
        field(c, c->len - c->pos == 4 ? 'o' : 'r'); /* protocol 3.2: a longer key */
        break;
    default: /* a code missing above: print nothing more of the message */
        c->pos = c->len;
        break;
    }
}

/* A message type: its name and fields; libpq_name/libpq_spec (NULL: the
 * same) are libpq's where it prints less than the extended form. */
typedef struct msg_kind {
    char dir, type;
    const char *name, *spec;
    const char *libpq_name, *libpq_spec;
} msg_kind_t;

static const msg_kind_t kinds[] = {
    {'B', '1', "ParseComplete", "", NULL, NULL},
    {'B', '2', "BindComplete", "", NULL, NULL},
    {'B', '3', "CloseComplete", "", NULL, NULL},
    {'B', 'A', "NotificationResponse", "oss", NULL, NULL},
    {'B', 'c', "CopyDone", "", NULL, NULL},
    {'B', 'C', "CommandComplete", "s", NULL, NULL},
    {'B', 'd', "CopyData", "r", "", ""}, /* libpq drops COPY data */
    {'B', 'D', "DataRow", "V", NULL, NULL},
    {'B', 'E', "ErrorResponse", "E", NULL, NULL},
    {'B', 'G', "CopyInResponse", "bH", NULL, NULL},
    {'B', 'H', "CopyOutResponse", "bH", NULL, NULL},
    {'B', 'W', "CopyBothResponse", "bH", NULL, NULL},
    {'B', 'I', "EmptyQueryResponse", "", NULL, NULL},
    {'B', 'K', "BackendKeyData", "oK", NULL, NULL},
    {'B', 'n', "NoData", "", NULL, NULL},
    {'B', 'N', "NoticeResponse", "E", NULL, NULL},
    {'B', 's', "PortalSuspended", "", NULL, NULL},
    {'B', 'S', "ParameterStatus", "ss", NULL, NULL},
    {'B', 't', "ParameterDescription", "O", NULL, NULL},
    {'B', 'T', "RowDescription", "T", NULL, NULL},
    {'B', 'v', "NegotiateProtocolVersion", "iS", NULL, "ii"},
    {'B', 'V', "FunctionCallResponse", "v", NULL, NULL},
    {'B', 'Z', "ReadyForQuery", "b", NULL, NULL},
    {'F', 'B', "Bind", "ssHVH", NULL, NULL},
    {'F', 'c', "CopyDone", "", NULL, NULL},
    {'F', 'C', "Close", "bs", NULL, NULL},
    {'F', 'D', "Describe", "bs", NULL, NULL},
    {'F', 'd', "CopyData", "r", "", ""},
    {'F', 'E', "Execute", "si", NULL, NULL},
    {'F', 'f', "CopyFail", "s", NULL, NULL},
    {'F', 'F', "FunctionCall", "oHVh", NULL, NULL},
    {'F', 'H', "Flush", "", NULL, NULL},
    {'F', 'P', "Parse", "ssO", NULL, NULL},
    {'F', 'Q', "Query", "s", NULL, NULL},
    {'F', 'S', "Sync", "", NULL, NULL},
    {'F', 'X', "Terminate", "", NULL, NULL},
};

static void named(cur_t *c, const char *name, const char *spec)
{
    puts_(c, name);
    if (*spec) puts_(c, "\t");
    fields(c, spec);
}

/* Authentication: the code, then (extended) the mechanism list (SASL) or
 * the data (MD5 salt, SASL continue and final). */
static void authentication(cur_t *c)
{
    named(c, "Authentication", "i");
    if (c->short_msg || !extended(c)) return;
    c->t->auth = (int32_t)pgw__get32(c->p + 5);
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
    if (dir == 'F' && type == 'p' && extended(c)) {
        password_family(c);
        return;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const msg_kind_t *k = &kinds[i];
        if (k->dir != dir || k->type != type) continue;
        int libpq = !extended(c);
        named(c, libpq && k->libpq_name ? k->libpq_name : k->name,
              libpq && k->libpq_spec ? k->libpq_spec : k->spec);
        return;
    }
    putf(c, "Unknown message: %02x", (uint8_t)type);
    if (extended(c)) c->pos = c->len;
}

/* The StartupMessage family as the extended form prints it: length,
 * protocol code, body. */
static void untyped_extended(cur_t *c)
{
    int32_t code = c->len >= 8 ? (int32_t)pgw__get32(c->p + 4) : -1;
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

/* libpq names the untyped messages by their length alone. */
static void untyped_libpq(cur_t *c, int32_t declared)
{
    c->pos = 4;
    if (declared == 16)
        named(c, "CancelRequest", "iii");
    else
        putf(c, "Unknown message: length is %d", (int)declared);
    c->pos = c->len; /* libpq checks no length here */
}

/* What follows the fields: the extended form's markers, or libpq's check
 * that its fields covered the message. */
static void line_end(cur_t *c, int typed, int32_t declared)
{
    if (extended(c)) {
        if (c->short_msg)
            puts_(c, " <truncated>");
        else if (c->pos < c->len)
            putf(c, " <%zu more bytes>", c->len - c->pos);
        puts_(c, "\n");
        return;
    }
    puts_(c, "\n");
    /* The type byte is not in the length; the cursor counts it. */
    long consumed = (long)c->pos - (typed ? 1 : 0);
    if (consumed != declared)
        putf(c, "mismatched message length: consumed %ld, expected %d\n", consumed, (int)declared);
}

void pgw__trace_init(pgw__trace_t *t, unsigned flags)
{
    t->flags = flags;
    t->auth = -1;
}

int pgw__trace_format(pgw__trace_t *t, pgw_buf_t *out, char direction, const uint8_t *msg,
                      size_t len)
{
    cur_t c = {t, out, msg, len, 0, 0, 0};
    size_t start = out->len;
    int typed = !(direction == 'F' && len >= 8 && msg[0] == 0);
    size_t at = typed ? 1 : 0;
    int32_t declared = len >= at + 4 ? (int32_t)pgw__get32(msg + at) : -1;
    if (regress(&c) && direction == 'B' && len && (msg[0] == 'E' || msg[0] == 'N'))
        putf(&c, "%c\tNN\t", direction); /* their length moves with F, L, R */
    else
        putf(&c, "%c\t%d\t", direction, (int)declared);
    if (len < at + 4) {
        puts_(&c, "<truncated>\n");
    } else {
        if (!typed && extended(&c))
            untyped_extended(&c);
        else if (!typed)
            untyped_libpq(&c, declared);
        else {
            c.pos = 5;
            body(&c, direction, (char)msg[0]);
        }
        line_end(&c, typed, declared);
    }
    if (c.err) out->len = start;
    return c.err;
}
