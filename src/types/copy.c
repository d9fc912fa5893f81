/*
 * COPY row encoders: the binary COPY format (PGCOPY header, int16 field
 * count per row, int32-length-prefixed fields, int16 -1 trailer) and the
 * text and CSV row formats. Also the length-prefixed binary field writer
 * shared with the array, range and composite encoders.
 */
#include "types/container_internal.h"
#include "types/float_fmt.h"
#include "types/types_internal.h"

int pgw__buf_put32(pgw_buf_t *b, uint32_t v)
{
    int rc = pgw__buf_room(b, 4);
    if (rc < 0) return rc;
    pgw__put32(b->data + b->len, v);
    b->len += 4;
    return 0;
}

int pgw__patch_len(pgw_buf_t *b, size_t at)
{
    size_t n = b->len - at - 4;
    if (n > INT32_MAX) return PGW_ETOOBIG;
    pgw__put32(b->data + at, (uint32_t)n);
    return 0;
}

/* Text-format bytes can be sent in a binary field only for an untyped
 * parameter (0) and the types whose binary form is their text (a version
 * byte first for jsonb and jsonpath). */
static int text_is_binary(uint32_t oid)
{
    int tl = pgw__text_like(oid);
    return oid == 0 || tl == PGW__TL_SAME || tl == PGW__TL_VERSIONED;
}

/* Append a field of n bytes at p (with an optional 1-byte prefix). */
static int put_bytes_field(pgw_buf_t *b, const void *prefix, size_t np, const void *p, size_t n)
{
    if (n > (size_t)INT32_MAX - np) return PGW_ETOOBIG;
    int rc = pgw__buf_room(b, 4 + np + n);
    if (rc < 0) return rc;
    pgw__put32(b->data + b->len, (uint32_t)(np + n));
    if (np) memcpy(b->data + b->len + 4, prefix, np);
    if (n) memcpy(b->data + b->len + 4 + np, p, n);
    b->len += 4 + np + n;
    return 0;
}

static int put_fixed_field(pgw_buf_t *b, uint64_t v, size_t width)
{
    int rc = pgw__buf_room(b, 4 + width);
    if (rc < 0) return rc;
    uint8_t *d = b->data + b->len;
    pgw__put32(d, (uint32_t)width);
    switch (width) {
    case 1:
        d[4] = (uint8_t)v;
        break;
    case 2:
        pgw__put16(d + 4, (uint16_t)v);
        break;
    case 4:
        pgw__put32(d + 4, (uint32_t)v);
        break;
    default:
        pgw__put64(d + 4, v);
        break;
    }
    b->len += 4 + width;
    return 0;
}

static int put_encoder_field(pgw_buf_t *b, const pgw_param_t *p)
{
    size_t at = b->len;
    if (!p->u.enc.fn) return PGW_EINVAL;
    int rc = pgw__buf_put32(b, 0);
    if (rc == 0) rc = p->u.enc.fn(p->u.enc.ctx, b);
    if (rc == 0) rc = pgw__patch_len(b, at);
    if (rc < 0) b->len = at;
    return rc;
}

static int put_bytes_param(pgw_buf_t *b, const pgw_param_t *p)
{
    static const uint8_t jsonb_version = 1;
    const void *data = p->u.bytes.p;
    if (!data) return pgw__buf_put32(b, UINT32_MAX);
    if (p->format == PGW_FORMAT_BINARY) {
        if (p->u.bytes.len < 0) return PGW_EINVAL;
        return put_bytes_field(b, NULL, 0, data, (size_t)p->u.bytes.len);
    }
    if (p->format != PGW_FORMAT_TEXT || !text_is_binary(p->oid)) return PGW_EINVAL;
    size_t n = p->u.bytes.len < 0 ? strlen(data) : (size_t)p->u.bytes.len;
    if (pgw__text_like(p->oid) == PGW__TL_VERSIONED)
        return put_bytes_field(b, &jsonb_version, 1, data, n);
    return put_bytes_field(b, NULL, 0, data, n);
}

int pgw__enc_len_field(pgw_buf_t *b, const pgw_param_t *p)
{
    uint64_t bits;
    switch (p->kind) {
    case PGW_PARAM_NULL:
        return pgw__buf_put32(b, UINT32_MAX);
    case PGW_PARAM_BOOL:
        return put_fixed_field(b, p->u.b ? 1 : 0, 1);
    case PGW_PARAM_INT2:
        return put_fixed_field(b, (uint64_t)p->u.i, 2);
    case PGW_PARAM_INT4:
        return put_fixed_field(b, (uint64_t)p->u.i, 4);
    case PGW_PARAM_INT8:
        return put_fixed_field(b, (uint64_t)p->u.i, 8);
    case PGW_PARAM_FLOAT4: {
        uint32_t u;
        memcpy(&u, &p->u.f4, 4);
        return put_fixed_field(b, u, 4);
    }
    case PGW_PARAM_FLOAT8:
        memcpy(&bits, &p->u.f8, 8);
        return put_fixed_field(b, bits, 8);
    case PGW_PARAM_BYTES:
        return put_bytes_param(b, p);
    case PGW_PARAM_ENCODER:
        return put_encoder_field(b, p);
    default:
        return PGW_EINVAL;
    }
}

/* ------------------------------------------------------------------------ */
/* Binary COPY                                                              */
/* ------------------------------------------------------------------------ */

int pgw_copy_bin_begin(pgw_buf_t *b)
{
    static const uint8_t header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n',
                                       0,   0,   0,   0,   0,   0,   0,    0,    0};
    return pgw_buf_append(b, header, sizeof header);
}

int pgw_copy_bin_row_begin(pgw_buf_t *b, size_t nfields)
{
    if (nfields > INT16_MAX) return PGW_EINVAL;
    int rc = pgw__buf_room(b, 2);
    if (rc < 0) return rc;
    pgw__put16(b->data + b->len, (uint16_t)nfields);
    b->len += 2;
    return 0;
}

int pgw_copy_bin_field(pgw_buf_t *b, const pgw_param_t *p)
{
    return pgw__enc_len_field(b, p);
}

int pgw_copy_bin_null(pgw_buf_t *b)
{
    return pgw__buf_put32(b, UINT32_MAX);
}

int pgw_copy_bin_int2(pgw_buf_t *b, int16_t v)
{
    return put_fixed_field(b, (uint64_t)(uint16_t)v, 2);
}

int pgw_copy_bin_int4(pgw_buf_t *b, int32_t v)
{
    return put_fixed_field(b, (uint64_t)(uint32_t)v, 4);
}

int pgw_copy_bin_int8(pgw_buf_t *b, int64_t v)
{
    return put_fixed_field(b, (uint64_t)v, 8);
}

int pgw_copy_bin_float8(pgw_buf_t *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return put_fixed_field(b, bits, 8);
}

int pgw_copy_bin_bool(pgw_buf_t *b, bool v)
{
    return put_fixed_field(b, v ? 1 : 0, 1);
}

int pgw_copy_bin_text(pgw_buf_t *b, const char *s, size_t len)
{
    return put_bytes_field(b, NULL, 0, s, len);
}

int pgw_copy_bin_end(pgw_buf_t *b)
{
    static const uint8_t trailer[2] = {0xff, 0xff};
    return pgw_buf_append(b, trailer, 2);
}

/* ------------------------------------------------------------------------ */
/* Text and CSV COPY                                                        */
/* ------------------------------------------------------------------------ */

/* The escape letter for c in the text format, or 0 if c is written as is. */
static char text_escape_of(uint8_t c)
{
    switch (c) {
    case '\\':
        return '\\';
    case '\t':
        return 't';
    case '\n':
        return 'n';
    case '\r':
        return 'r';
    case '\b':
        return 'b';
    case '\f':
        return 'f';
    case '\v':
        return 'v';
    default:
        return 0;
    }
}

int pgw_copy_text_field(pgw_buf_t *b, const char *s, size_t len)
{
    size_t extra = 0;
    for (size_t i = 0; i < len; i++)
        if (text_escape_of((uint8_t)s[i])) extra++;
    if (len > SIZE_MAX / 2) return PGW_ETOOBIG;
    int rc = pgw__buf_room(b, len + extra + 1);
    if (rc < 0) return rc;
    uint8_t *d = b->data + b->len;
    for (size_t i = 0; i < len; i++) {
        char e = text_escape_of((uint8_t)s[i]);
        if (e) {
            *d++ = '\\';
            *d++ = (uint8_t)e;
        } else {
            *d++ = (uint8_t)s[i];
        }
    }
    *d++ = '\t';
    b->len = (size_t)(d - b->data);
    return 0;
}

int pgw_copy_text_null(pgw_buf_t *b)
{
    return pgw_buf_append(b, "\\N\t", 3);
}

/* Decimal digits of v followed by delim, written straight into the
 * buffer two digits at a time; no locale involved. */
static int put_int64_delim(pgw_buf_t *b, int64_t v, char delim)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    int rc = pgw__buf_room(b, 21);
    if (rc < 0) return rc;
    char tmp[24];
    char *e = tmp + sizeof tmp, *p = e;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    *--p = delim;
    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = pairs[i + 1];
        *--p = pairs[i];
    }
    if (u >= 10) {
        *--p = pairs[u * 2 + 1];
        *--p = pairs[u * 2];
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0) *--p = '-';
    size_t n = (size_t)(e - p);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int pgw_copy_text_int4(pgw_buf_t *b, int32_t v)
{
    return put_int64_delim(b, v, '\t');
}

int pgw_copy_text_int8(pgw_buf_t *b, int64_t v)
{
    return put_int64_delim(b, v, '\t');
}

/* The shortest text that reads back to v, as the server's float8out writes
 * it (float_fmt.c), straight into the buffer; no locale involved. */
static int put_float8_delim(pgw_buf_t *b, double v, char delim)
{
    int rc = pgw__buf_room(b, PGW__FLOAT8_TEXT_MAX + 1);
    if (rc < 0) return rc;
    char *d = (char *)b->data + b->len;
    size_t n = pgw__fmt_float8(d, v);
    d[n++] = delim;
    b->len += n;
    return 0;
}

int pgw_copy_text_float8(pgw_buf_t *b, double v)
{
    return put_float8_delim(b, v, '\t');
}

/* Turn the trailing delimiter of the row into '\n' (or add one). */
static int row_end(pgw_buf_t *b, uint8_t delim)
{
    if (b->len && b->data[b->len - 1] == delim) {
        b->data[b->len - 1] = '\n';
        return 0;
    }
    return pgw_buf_append(b, "\n", 1);
}

int pgw_copy_text_row_end(pgw_buf_t *b)
{
    return row_end(b, '\t');
}

static int csv_needs_quotes(const char *s, size_t len)
{
    if (len == 0) return 1; /* an unquoted empty field is NULL */
    for (size_t i = 0; i < len; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n' || s[i] == '\\') return 1;
    return 0;
}

int pgw_copy_csv_field(pgw_buf_t *b, const char *s, size_t len)
{
    if (!csv_needs_quotes(s, len)) {
        int rc = pgw__buf_room(b, len + 1);
        if (rc < 0) return rc;
        memcpy(b->data + b->len, s, len);
        b->len += len;
        b->data[b->len++] = ',';
        return 0;
    }
    size_t quotes = 0;
    for (size_t i = 0; i < len; i++)
        quotes += s[i] == '"';
    if (len > SIZE_MAX / 2 - 3) return PGW_ETOOBIG;
    int rc = pgw__buf_room(b, len + quotes + 3);
    if (rc < 0) return rc;
    uint8_t *d = b->data + b->len;
    *d++ = '"';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"') *d++ = '"';
        *d++ = (uint8_t)s[i];
    }
    *d++ = '"';
    *d++ = ',';
    b->len = (size_t)(d - b->data);
    return 0;
}

int pgw_copy_csv_int4(pgw_buf_t *b, int32_t v)
{
    return put_int64_delim(b, v, ',');
}

int pgw_copy_csv_int8(pgw_buf_t *b, int64_t v)
{
    return put_int64_delim(b, v, ',');
}

int pgw_copy_csv_float8(pgw_buf_t *b, double v)
{
    return put_float8_delim(b, v, ',');
}

int pgw_copy_csv_null(pgw_buf_t *b)
{
    return pgw_buf_append(b, ",", 1);
}

int pgw_copy_csv_row_end(pgw_buf_t *b)
{
    return row_end(b, ',');
}
