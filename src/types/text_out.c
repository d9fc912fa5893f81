/*
 * pgw_value_to_text: the server's text form of a value that came in binary,
 * byte for byte what its output function writes (libpq's PQgetvalue string
 * for the same column asked in text). This file dispatches on the type and
 * writes the scalars; text_out_time.c writes the date/time types and
 * text_out_container.c the containers. Each writer follows the server's
 * output function named beside it (PostgreSQL 15, default settings:
 * extra_float_digits 1, bytea_output hex, lc_monetary C).
 */
#include "types/text_out_internal.h"

#include "types/float_fmt.h"

/* ------------------------------------------------------------ appenders */

int pgw__text_put(pgw__text_out_t *t, const void *p, size_t n)
{
    return n ? pgw_buf_append(t->out, p, n) : 0;
}

int pgw__text_putc(pgw__text_out_t *t, char c)
{
    return pgw_buf_append(t->out, &c, 1);
}

int pgw__text_puts(pgw__text_out_t *t, const char *s)
{
    return pgw__text_put(t, s, strlen(s));
}

int pgw__text_put_u64(pgw__text_out_t *t, uint64_t v, int neg, int width)
{
    char buf[24];
    char *e = buf + sizeof buf, *q = e;
    do {
        *--q = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (e - q < width)
        *--q = '0';
    if (neg) *--q = '-';
    return pgw__text_put(t, q, (size_t)(e - q));
}

int pgw__text_put_i64(pgw__text_out_t *t, int64_t v)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return pgw__text_put_u64(t, u, v < 0, 1);
}

/* ---------------------------------------------------------- scalars */

static pgw_value_t binary_value(uint32_t oid, const uint8_t *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    return v;
}

/* boolout */
static int put_bool(pgw__text_out_t *t, const pgw_value_t *v)
{
    bool b;
    int rc = pgw_get_bool(v, &b);
    return rc < 0 ? rc : pgw__text_putc(t, b ? 't' : 'f');
}

/* int2out, int4out, int8out, oidout */
static int put_integer(pgw__text_out_t *t, const pgw_value_t *v)
{
    int64_t x;
    int rc = pgw_get_int8(v, &x);
    return rc < 0 ? rc : pgw__text_put_i64(t, x);
}

/* float4out, float8out (extra_float_digits > 0: shortest exact) */
static int put_float(pgw__text_out_t *t, const pgw_value_t *v)
{
    char buf[PGW__FLOAT8_TEXT_MAX];
    size_t n;
    if (v->oid == PGW_OID_FLOAT4) {
        float f;
        int rc = pgw_get_float4(v, &f);
        if (rc < 0) return rc;
        n = pgw__fmt_float4(buf, f);
    } else {
        double d;
        int rc = pgw_get_float8(v, &d);
        if (rc < 0) return rc;
        n = pgw__fmt_float8(buf, d);
    }
    return pgw__text_put(t, buf, n);
}

static const char hex_lower[] = "0123456789abcdef";

/* byteaout, bytea_output = hex */
static int put_bytea(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    size_t n = (size_t)len;
    int rc = pgw_buf_reserve(t->out, 2 + 2 * n);
    if (rc < 0) return rc;
    uint8_t *d = t->out->data + t->out->len;
    *d++ = '\\';
    *d++ = 'x';
    for (size_t i = 0; i < n; i++) {
        *d++ = (uint8_t)hex_lower[p[i] >> 4];
        *d++ = (uint8_t)hex_lower[p[i] & 15];
    }
    t->out->len += 2 + 2 * n;
    return 0;
}

/* charout: a high-bit byte as \ooo, the NUL byte as nothing */
static int put_char(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    if (len > 1) return PGW_EFORMAT;
    if (len == 0 || p[0] == 0) return 0;
    uint8_t c = p[0];
    if (!(c & 0x80)) return pgw__text_putc(t, (char)c);
    char oct[4] = {'\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)),
                   (char)('0' + (c & 7))};
    return pgw__text_put(t, oct, 4);
}

/* numeric_out */
static int put_numeric(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    pgw_numeric_t n;
    int rc = pgw__numeric_from_binary(p, (size_t)len, &n);
    if (rc < 0) return rc;
    size_t need;
    pgw_numeric_to_str(&n, NULL, 0, &need);
    rc = pgw_buf_reserve(t->out, need);
    if (rc < 0) return rc;
    rc = pgw_numeric_to_str(&n, (char *)t->out->data + t->out->len, need, &need);
    if (rc < 0) return rc;
    t->out->len += need - 1; /* not the NUL */
    return 0;
}

static int put_uuid(pgw__text_out_t *t, const pgw_value_t *v)
{
    uint8_t u[16];
    char s[37];
    int rc = pgw_get_uuid(v, u);
    if (rc < 0) return rc;
    pgw_uuid_format(u, s);
    return pgw__text_put(t, s, 36);
}

/* macaddr_out, macaddr8_out: lower-case pairs joined by ':' */
static int put_mac(pgw__text_out_t *t, const uint8_t *p, int32_t len, int32_t want)
{
    if (len != want) return PGW_EFORMAT;
    char s[24];
    size_t n = 0;
    for (int32_t i = 0; i < len; i++) {
        if (i) s[n++] = ':';
        s[n++] = hex_lower[p[i] >> 4];
        s[n++] = hex_lower[p[i] & 15];
    }
    return pgw__text_put(t, s, n);
}

/* cash_out in the C locale: "$", two fraction digits, "," every three
 * digits, a leading "-" */
static int put_money(pgw__text_out_t *t, const pgw_value_t *v)
{
    int64_t cents;
    int rc = pgw_get_money(v, &cents);
    if (rc < 0) return rc;
    uint64_t u = cents < 0 ? 0 - (uint64_t)cents : (uint64_t)cents;
    char buf[40];
    char *e = buf + sizeof buf, *q = e;
    int pos = 2; /* digits right of the point still to write */
    do {
        if (pos == 0)
            *--q = '.';
        else if (pos < 0 && pos % 3 == 0)
            *--q = ',';
        *--q = (char)('0' + u % 10);
        u /= 10;
        pos--;
    } while (u || pos >= 0);
    *--q = '$';
    if (cents < 0) *--q = '-';
    return pgw__text_put(t, q, (size_t)(e - q));
}

/* ---------------------------------------------------------- network */

static int put_ipv4(pgw__text_out_t *t, const uint8_t *a)
{
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (i) rc = pgw__text_putc(t, '.');
        if (rc == 0) rc = pgw__text_put_u64(t, a[i], 0, 1);
    }
    return rc;
}

/* The longest run of two or more zero words, as inet_net_ntop_ipv6 finds
 * it (the first of equal runs): *base -1 when there is none. */
static void zero_run(const uint16_t w[8], int *base, int *len)
{
    int cur = -1, cur_len = 0;
    *base = -1, *len = 0;
    for (int i = 0; i <= 8; i++) {
        if (i < 8 && w[i] == 0) {
            if (cur < 0) cur = i, cur_len = 0;
            cur_len++;
        } else if (cur >= 0) {
            if (*base < 0 || cur_len > *len) *base = cur, *len = cur_len;
            cur = -1;
        }
    }
    if (*len < 2) *base = -1;
}

/* The server's inet_net_ntop_ipv6: "::" for the longest zero run, an
 * embedded IPv4 tail for ::a.b.c.d and ::ffff:a.b.c.d. */
static int put_ipv6(pgw__text_out_t *t, const uint8_t *a)
{
    uint16_t w[8];
    for (int i = 0; i < 8; i++)
        w[i] = (uint16_t)(a[2 * i] << 8 | a[2 * i + 1]);
    int base, len, rc = 0;
    zero_run(w, &base, &len);
    for (int i = 0; i < 8 && rc == 0; i++) {
        if (base >= 0 && i >= base && i < base + len) {
            if (i == base) rc = pgw__text_putc(t, ':');
            continue;
        }
        if (i) rc = pgw__text_putc(t, ':');
        if (rc == 0 && i == 6 && base == 0 &&
            (len == 6 || (len == 7 && w[7] != 1) || (len == 5 && w[5] == 0xffff)))
            return put_ipv4(t, a + 12);
        char hx[4];
        int n = 0;
        for (int s = 12; s >= 0; s -= 4)
            if ((w[i] >> s) || s == 0 || n) hx[n++] = hex_lower[(w[i] >> s) & 15];
        if (rc == 0) rc = pgw__text_put(t, hx, (size_t)n);
    }
    if (rc == 0 && base >= 0 && base + len == 8) rc = pgw__text_putc(t, ':');
    return rc;
}

/* inet_out, cidr_out: "/bits" unless an inet's mask is the whole address */
static int put_inet(pgw__text_out_t *t, const pgw_value_t *v)
{
    pgw_inet_t a;
    int rc = pgw_get_inet(v, &a);
    if (rc < 0) return rc;
    rc = a.family == PGW_INET_AF_INET ? put_ipv4(t, a.addr) : put_ipv6(t, a.addr);
    if (rc == 0 && (v->oid == PGW_OID_CIDR || a.bits != a.nb * 8)) {
        rc = pgw__text_putc(t, '/');
        if (rc == 0) rc = pgw__text_put_u64(t, a.bits, 0, 1);
    }
    return rc;
}

/* -------------------------------------------- system and bit types */

/* xidout, cidout (uint32), xid8out (uint64) */
static int put_unsigned(pgw__text_out_t *t, const uint8_t *p, int32_t len, int32_t width)
{
    if (len != width) return PGW_EFORMAT;
    return pgw__text_put_u64(t, width == 4 ? pgw__get32(p) : pgw__get64(p), 0, 1);
}

/* tidout: "(block,offset)" */
static int put_tid(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    if (len != 6) return PGW_EFORMAT;
    int rc = pgw__text_putc(t, '(');
    if (rc == 0) rc = pgw__text_put_u64(t, pgw__get32(p), 0, 1);
    if (rc == 0) rc = pgw__text_putc(t, ',');
    if (rc == 0) rc = pgw__text_put_u64(t, pgw__get16(p + 4), 0, 1);
    return rc == 0 ? pgw__text_putc(t, ')') : rc;
}

static int put_hex32(pgw__text_out_t *t, uint32_t v)
{
    static const char hex_upper[] = "0123456789ABCDEF";
    char s[8];
    int n = 0;
    for (int sh = 28; sh >= 0; sh -= 4)
        if ((v >> sh) || sh == 0 || n) s[n++] = hex_upper[(v >> sh) & 15];
    return pgw__text_put(t, s, (size_t)n);
}

/* pg_lsn_out: "%X/%X" */
static int put_lsn(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    if (len != 8) return PGW_EFORMAT;
    int rc = put_hex32(t, pgw__get32(p));
    if (rc == 0) rc = pgw__text_putc(t, '/');
    return rc == 0 ? put_hex32(t, pgw__get32(p + 4)) : rc;
}

/* bit_out, varbit_out: one '0' or '1' per bit */
static int put_bits(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    if (len < 4) return PGW_EFORMAT;
    int32_t nbits = (int32_t)pgw__get32(p);
    if (nbits < 0 || (int64_t)len - 4 != ((int64_t)nbits + 7) / 8) return PGW_EFORMAT;
    int rc = pgw_buf_reserve(t->out, (size_t)nbits);
    if (rc < 0) return rc;
    uint8_t *d = t->out->data + t->out->len;
    for (int32_t i = 0; i < nbits; i++)
        d[i] = (p[4 + i / 8] >> (7 - i % 8)) & 1 ? '1' : '0';
    t->out->len += (size_t)nbits;
    return 0;
}

/* pg_snapshot_out, txid_snapshot_out: "xmin:xmax:xip,xip" */
static int put_snapshot(pgw__text_out_t *t, const uint8_t *p, int32_t len)
{
    if (len < 20) return PGW_EFORMAT;
    int32_t nxip = (int32_t)pgw__get32(p);
    if (nxip < 0 || (len - 20) / 8 != nxip || (len - 20) % 8) return PGW_EFORMAT;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        rc = pgw__text_put_u64(t, pgw__get64(p + 4 + 8 * i), 0, 1);
        if (rc == 0) rc = pgw__text_putc(t, ':');
    }
    for (int32_t i = 0; i < nxip && rc == 0; i++) {
        if (i) rc = pgw__text_putc(t, ',');
        if (rc == 0) rc = pgw__text_put_u64(t, pgw__get64(p + 20 + 8 * (size_t)i), 0, 1);
    }
    return rc;
}

/* int2vectorout, oidvectorout: the elements of a one-dimensional array of
 * elem, separated by spaces */
static int put_vector(pgw__text_out_t *t, uint32_t oid, uint32_t elem, const uint8_t *p,
                      int32_t len)
{
    pgw_value_t v = binary_value(oid, p, len);
    pgw_array_t a;
    int rc = pgw_array_parse_reg(t->reg, &v, &a);
    if (rc < 0) return rc;
    if (a.ndim > 1 || (a.nelems && a.elem_oid != elem) || a.has_nulls) return PGW_EFORMAT;
    pgw_array_iter_t it;
    pgw_array_iter_init(&it, &a, NULL, 0);
    pgw_value_t e;
    for (size_t i = 0; (rc = pgw_array_next(&it, &e)) == 1; i++) {
        if (e.len < 0) return PGW_EFORMAT;
        if (i && (rc = pgw__text_putc(t, ' ')) < 0) return rc;
        if ((rc = pgw__text_binary(t, elem, e.p, e.len)) < 0) return rc;
    }
    return rc;
}

/* ---------------------------------------------------------- geometric */

/* float8out_internal of the big-endian double at p */
static int put_f8(pgw__text_out_t *t, const uint8_t *p)
{
    uint64_t u = pgw__get64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    char buf[PGW__FLOAT8_TEXT_MAX];
    return pgw__text_put(t, buf, pgw__fmt_float8(buf, d));
}

/* As the server's pair_encode, in parentheses: "(x,y)" */
static int put_point(pgw__text_out_t *t, const uint8_t *p)
{
    int rc = pgw__text_putc(t, '(');
    if (rc == 0) rc = put_f8(t, p);
    if (rc == 0) rc = pgw__text_putc(t, ',');
    if (rc == 0) rc = put_f8(t, p + 8);
    return rc == 0 ? pgw__text_putc(t, ')') : rc;
}

/* As the server's path_encode: n points, between open and close (0: none) */
static int put_points(pgw__text_out_t *t, const uint8_t *p, size_t n, char open, char close)
{
    int rc = open ? pgw__text_putc(t, open) : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i) rc = pgw__text_putc(t, ',');
        if (rc == 0) rc = put_point(t, p + 16 * i);
    }
    return rc == 0 && close ? pgw__text_putc(t, close) : rc;
}

/* The point count of a path or polygon whose points start at p[at]. */
static int point_count(const uint8_t *p, int32_t len, int32_t at, size_t *n)
{
    if (len < at) return PGW_EFORMAT;
    int32_t npts = (int32_t)pgw__get32(p + at - 4);
    if (npts < 1 || (len - at) % 16 || (len - at) / 16 != npts) return PGW_EFORMAT;
    *n = (size_t)npts;
    return 0;
}

/* point_out, lseg_out, box_out, line_out, circle_out, path_out,
 * polygon_out: every coordinate with float8out_internal */
static int put_geometric(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    size_t n;
    int rc;
    switch (oid) {
    case PGW_OID_POINT:
        return len == 16 ? put_point(t, p) : PGW_EFORMAT;
    case PGW_OID_LSEG:
        return len == 32 ? put_points(t, p, 2, '[', ']') : PGW_EFORMAT;
    case PGW_OID_BOX: /* high corner, then low */
        return len == 32 ? put_points(t, p, 2, 0, 0) : PGW_EFORMAT;
    case PGW_OID_LINE:
    case PGW_OID_CIRCLE:
        if (len != 24) return PGW_EFORMAT;
        if (oid == PGW_OID_CIRCLE) {
            rc = pgw__text_putc(t, '<');
            if (rc == 0) rc = put_point(t, p);
            if (rc == 0) rc = pgw__text_putc(t, ',');
            if (rc == 0) rc = put_f8(t, p + 16);
            return rc == 0 ? pgw__text_putc(t, '>') : rc;
        }
        rc = pgw__text_putc(t, '{');
        for (int i = 0; i < 3 && rc == 0; i++) {
            if (i) rc = pgw__text_putc(t, ',');
            if (rc == 0) rc = put_f8(t, p + 8 * i);
        }
        return rc == 0 ? pgw__text_putc(t, '}') : rc;
    case PGW_OID_PATH: /* closed byte, count, points */
        if ((rc = point_count(p, len, 5, &n)) < 0) return rc;
        return p[0] ? put_points(t, p + 5, n, '(', ')') : put_points(t, p + 5, n, '[', ']');
    default: /* polygon: count, points */
        if ((rc = point_count(p, len, 4, &n)) < 0) return rc;
        return put_points(t, p + 4, n, '(', ')');
    }
}

/* ---------------------------------------------------------- dispatch */

#define NOT_MINE 1

/* Built-in types other than the table's decoder kinds. */
static int put_other_builtin(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    switch (oid) {
    case PGW_OID_XID:
    case PGW_OID_CID:
        return put_unsigned(t, p, len, 4);
    case PGW_OID_XID8:
        return put_unsigned(t, p, len, 8);
    case PGW_OID_TID:
        return put_tid(t, p, len);
    case PGW_OID_PG_LSN:
        return put_lsn(t, p, len);
    case PGW_OID_BIT:
    case PGW_OID_VARBIT:
        return put_bits(t, p, len);
    case PGW_OID_REFCURSOR: /* textsend */
        return pgw__text_put(t, p, (size_t)len);
    case PGW_OID_INT2VECTOR:
        return put_vector(t, oid, PGW_OID_INT2, p, len);
    case PGW_OID_OIDVECTOR:
        return put_vector(t, oid, PGW_OID_OID, p, len);
    case PGW_OID_TXID_SNAPSHOT:
    case PGW_OID_PG_SNAPSHOT:
        return put_snapshot(t, p, len);
    case PGW_OID_POINT:
    case PGW_OID_LSEG:
    case PGW_OID_PATH:
    case PGW_OID_BOX:
    case PGW_OID_POLYGON:
    case PGW_OID_LINE:
    case PGW_OID_CIRCLE:
        return put_geometric(t, oid, p, len);
    default:
        return NOT_MINE;
    }
}

static int put_builtin(pgw__text_out_t *t, const pgw__builtin_t *b, const uint8_t *p, int32_t len)
{
    pgw_value_t v = binary_value(b->oid, p, len);
    switch (b->text) {
    case PGW__TL_SAME:
        return pgw__text_put(t, p, (size_t)len);
    case PGW__TL_VERSIONED: {
        pgw_str_t s;
        int rc = pgw_get_text(&v, &s);
        return rc < 0 ? rc : pgw__text_put(t, s.p, s.len);
    }
    case PGW__TL_BYTE:
        return put_char(t, p, len);
    default:
        break;
    }
    switch (b->kind) {
    case PGW_DATUM_BOOL:
        return put_bool(t, &v);
    case PGW_DATUM_INT:
        return put_integer(t, &v);
    case PGW_DATUM_FLOAT4:
    case PGW_DATUM_FLOAT8:
        return put_float(t, &v);
    case PGW_DATUM_BYTEA:
        return put_bytea(t, p, len);
    case PGW_DATUM_NUMERIC:
        return put_numeric(t, p, len);
    case PGW_DATUM_DATE:
    case PGW_DATUM_TIME:
    case PGW_DATUM_TIMETZ:
    case PGW_DATUM_TIMESTAMP:
    case PGW_DATUM_TIMESTAMPTZ:
    case PGW_DATUM_INTERVAL:
        return pgw__text_datetime(t, b->oid, p, len);
    case PGW_DATUM_UUID:
        return put_uuid(t, &v);
    case PGW_DATUM_INET:
        return put_inet(t, &v);
    case PGW_DATUM_MACADDR:
        return put_mac(t, p, len, 6);
    case PGW_DATUM_MACADDR8:
        return put_mac(t, p, len, 8);
    case PGW_DATUM_MONEY:
        return put_money(t, &v);
    default:
        return put_other_builtin(t, b->oid, p, len);
    }
}

static int dispatch(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    const pgw__builtin_t *b = pgw__builtin(oid);
    int rc = b ? put_builtin(t, b, p, len) : NOT_MINE;
    if (rc != NOT_MINE) return rc;
    rc = pgw__text_container(t, oid, p, len);
    if (rc != 0) return rc < 0 ? rc : 0;
    /* A loaded domain prints as its base type, an enum as its label. */
    uint32_t base = oid >= PGW__FIRST_USER_OID ? pgw__type_resolve(t->reg, oid) : oid;
    return base != oid ? dispatch(t, base, p, len) : PGW_ETYPE;
}

int pgw__text_binary(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    if (len < 0) return PGW_ENULL;
    if (t->depth >= PGW__TEXT_MAX_DEPTH) return PGW_EFORMAT;
    t->depth++;
    int rc = dispatch(t, oid, p, len);
    t->depth--;
    return rc;
}

int pgw_value_to_text(const pgw_value_t *v, const pgw_text_ctx_t *ctx, pgw_buf_t *out)
{
    static const pgw_text_ctx_t defaults;
    if (!v || !out) return PGW_EINVAL;
    if (v->len < 0) return PGW_ENULL;
    if (!ctx) ctx = &defaults;
    pgw__text_out_t t = {ctx, ctx->reg ? ctx->reg : pgw_type_registry_default(), out, 0};
    if (v->format == PGW_FORMAT_TEXT) return pgw__text_put(&t, v->p, (size_t)v->len);
    if (v->format != PGW_FORMAT_BINARY) return PGW_EINVAL;
    size_t mark = out->len;
    int rc = pgw__text_binary(&t, v->oid, v->p, v->len);
    if (rc < 0) out->len = mark;
    return rc;
}
