/*
 * inet and cidr: the binary form (family, bits, is_cidr, nb, address) and
 * the text form the server writes ("10.1.2.3/8", "2001:db8::/32",
 * "::ffff:1.2.3.4"), parsed by hand.
 */
#include "types/types_internal.h"

static int dec_octet(const char *s, size_t len, size_t *i, uint8_t *out)
{
    unsigned v = 0;
    size_t start = *i;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9' && *i - start < 3)
        v = v * 10 + (unsigned)(s[(*i)++] - '0');
    if (*i == start || v > 255) return PGW_EFORMAT;
    *out = (uint8_t)v;
    return 0;
}

static int parse_v4(const char *s, size_t len, uint8_t out[4])
{
    size_t i = 0;
    for (int k = 0; k < 4; k++) {
        if (k && (i >= len || s[i++] != '.')) return PGW_EFORMAT;
        if (dec_octet(s, len, &i, &out[k]) < 0) return PGW_EFORMAT;
    }
    return i == len ? 0 : PGW_EFORMAT;
}

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* RFC 4291 text: hex groups, at most one "::", an optional dotted IPv4 tail. */
static int parse_v6(const char *s, size_t len, uint8_t out[16])
{
    uint8_t words[16];
    int n = 0, gap = -1;
    size_t i = 0;
    if (len >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    } else if (len && s[0] == ':') {
        return PGW_EFORMAT;
    }
    while (i < len) {
        size_t start = i;
        unsigned v = 0;
        int h;
        while (i < len && (h = hex_digit((unsigned char)s[i])) >= 0 && i - start < 4) {
            v = v * 16 + (unsigned)h;
            i++;
        }
        if (i < len && s[i] == '.') { /* IPv4 tail */
            if (n > 12 || parse_v4(s + start, len - start, words + n) < 0) return PGW_EFORMAT;
            n += 4;
            i = len;
            break;
        }
        if (i == start || n >= 16) return PGW_EFORMAT;
        words[n++] = (uint8_t)(v >> 8);
        words[n++] = (uint8_t)v;
        if (i == len) break;
        if (s[i] != ':') return PGW_EFORMAT;
        i++;
        if (i < len && s[i] == ':') {
            if (gap >= 0) return PGW_EFORMAT;
            gap = n;
            i++;
        } else if (i == len) {
            return PGW_EFORMAT;
        }
    }
    if (gap < 0 && n != 16) return PGW_EFORMAT;
    if (gap >= 0 && n > 14) return PGW_EFORMAT;
    memset(out, 0, 16);
    if (gap < 0) gap = n;
    memcpy(out, words, (size_t)gap);
    memcpy(out + 16 - (n - gap), words + gap, (size_t)(n - gap));
    return 0;
}

int pgw_inet_parse(const char *s, size_t len, int is_cidr, pgw_inet_t *out)
{
    if ((!s && len) || !out) return PGW_EINVAL;
    size_t alen = len;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '/') {
            alen = i;
            break;
        }
    pgw_inet_t a;
    memset(&a, 0, sizeof a);
    int v6 = memchr(s, ':', alen) != NULL;
    a.family = v6 ? PGW_INET_AF_INET6 : PGW_INET_AF_INET;
    a.nb = v6 ? 16 : 4;
    int rc = v6 ? parse_v6(s, alen, a.addr) : parse_v4(s, alen, a.addr);
    if (rc < 0) return rc;
    unsigned bits = (unsigned)a.nb * 8;
    if (alen < len) {
        size_t i = alen + 1;
        if (i == len || len - i > 3) return PGW_EFORMAT;
        bits = 0;
        for (; i < len; i++) {
            if (s[i] < '0' || s[i] > '9') return PGW_EFORMAT;
            bits = bits * 10 + (unsigned)(s[i] - '0');
        }
        if (bits > (unsigned)a.nb * 8) return PGW_EFORMAT;
    }
    a.bits = (uint8_t)bits;
    a.is_cidr = is_cidr ? 1 : 0;
    *out = a;
    return 0;
}

static int inet_from_binary(const uint8_t *p, int32_t len, pgw_inet_t *out)
{
    if (len < 4) return PGW_EFORMAT;
    pgw_inet_t a;
    memset(&a, 0, sizeof a);
    a.family = p[0], a.bits = p[1], a.is_cidr = p[2], a.nb = p[3];
    unsigned want = a.family == PGW_INET_AF_INET ? 4 : a.family == PGW_INET_AF_INET6 ? 16 : 0;
    if (!want || a.nb != want || a.bits > want * 8 || a.is_cidr > 1 || len != 4 + (int32_t)want)
        return PGW_EFORMAT;
    memcpy(a.addr, p + 4, want);
    *out = a;
    return 0;
}

int pgw_get_inet(const pgw_value_t *v, pgw_inet_t *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_INET && v->oid != PGW_OID_CIDR) return PGW_ETYPE;
    if (v->format == PGW_FORMAT_BINARY) return inet_from_binary(v->p, v->len, out);
    return pgw_inet_parse((const char *)v->p, (size_t)v->len, v->oid == PGW_OID_CIDR, out);
}

int pgw_encode_inet(const void *ctx, pgw_buf_t *out)
{
    const pgw_inet_t *a = ctx;
    if (!a || !out) return PGW_EINVAL;
    unsigned want = a->family == PGW_INET_AF_INET ? 4 : a->family == PGW_INET_AF_INET6 ? 16 : 0;
    if (!want || a->nb != want || a->bits > want * 8 || a->is_cidr > 1) return PGW_EINVAL;
    int rc = pgw_buf_reserve(out, 4 + want);
    if (rc < 0) return rc;
    uint8_t *p = out->data + out->len;
    p[0] = a->family, p[1] = a->bits, p[2] = a->is_cidr, p[3] = a->nb;
    memcpy(p + 4, a->addr, want);
    out->len += 4 + want;
    return 0;
}
