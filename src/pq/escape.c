/*
 * Quoting for SQL text, as libpq 15 (fe-exec.c, with the invalid-encoding
 * checks of 15.11): PQescapeStringConn, PQescapeString, PQescapeLiteral,
 * PQescapeIdentifier, PQescapeByteaConn, PQescapeBytea, PQunescapeBytea.
 * A connection's client encoding, standard_conforming_strings and server
 * version come from its public accessors; the functions without one use
 * the last values any connection reported (pq__note_parameter), as libpq.
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/encoding.h"
#include "pq/pq_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* libpq's static_client_encoding and static_std_strings. */
static int last_encoding = PQ_ENC_SQL_ASCII;
static bool last_std_strings = false;

void pq__note_parameter(const char *name, const char *value)
{
    if (strcmp(name, "client_encoding") == 0) {
        last_encoding = pq__encoding_id(value);
    } else if (strcmp(name, "standard_conforming_strings") == 0) {
        last_std_strings = strcmp(value, "on") == 0;
    }
}

/* Defined by the connection half; until it is, errors are not cleared. */
#pragma weak pq__conn_clear_error

static void clear_error(PGconn *conn)
{
    if (pq__conn_clear_error) pq__conn_clear_error(conn);
}

static bool std_strings_of(const PGconn *conn)
{
    const char *v = PQparameterStatus(conn, "standard_conforming_strings");
    return v && strcmp(v, "on") == 0;
}

static int encoding_of(const PGconn *conn)
{
    int enc = PQclientEncoding(conn);
    return enc < 0 ? PQ_ENC_SQL_ASCII : enc;
}

/* ---------------------------------------------------------------- strings */

/* libpq's "too few bytes left" for a character: GB18030 needs the second
 * byte to know the length. */
static int mblen_or_incomplete(int encoding, const char *s, size_t remaining)
{
    if (remaining < 1 || (encoding == 39 /* GB18030 */ && (s[0] & 0x80) && remaining < 2))
        return INT32_MAX;
    return pq__enc_mblen(encoding, s);
}

static size_t escape_string(PGconn *conn, char *to, const char *from, size_t length, int *error,
                            int encoding, bool std_strings)
{
    const char *src = from;
    char *dst = to;
    size_t remaining = strnlen(from, length);
    bool complained = false;
    if (error) *error = 0;
    while (remaining > 0) {
        char c = *src;
        if (!(c & 0x80)) {
            if (c == '\'' || (c == '\\' && !std_strings)) *dst++ = c;
            *dst++ = c;
            src++;
            remaining--;
            continue;
        }
        int charlen = mblen_or_incomplete(encoding, src, remaining);
        if ((size_t)charlen > remaining || pq__enc_verifychar(encoding, src, charlen) == -1) {
            if (error) *error = 1;
            if (conn && !complained) {
                pq__conn_append_error(conn, "%s\n",
                                      (size_t)charlen > remaining ? "incomplete multibyte character"
                                                                  : "invalid multibyte character");
                complained = true;
            }
            /* Two bytes the server rejects, then the input goes on after
             * the bad byte alone (what follows may matter to the caller). */
            pq__enc_set_invalid(encoding, dst);
            dst += 2;
            src++;
            remaining--;
            continue;
        }
        memcpy(dst, src, (size_t)charlen);
        dst += charlen;
        src += charlen;
        remaining -= (size_t)charlen;
    }
    *dst = '\0';
    return (size_t)(dst - to);
}

size_t PQescapeStringConn(PGconn *conn, char *to, const char *from, size_t length, int *error)
{
    if (!conn) {
        *to = '\0';
        if (error) *error = 1;
        return 0;
    }
    clear_error(conn);
    return escape_string(conn, to, from, length, error, encoding_of(conn), std_strings_of(conn));
}

size_t PQescapeString(char *to, const char *from, size_t length)
{
    return escape_string(NULL, to, from, length, NULL, last_encoding, last_std_strings);
}

/* PQescapeLiteral (as_ident false) and PQescapeIdentifier: malloc'd. */
static char *escape_quoted(PGconn *conn, const char *str, size_t len, bool as_ident)
{
    if (!conn) return NULL;
    clear_error(conn);
    int encoding = encoding_of(conn);
    char quote = as_ident ? '"' : '\'';
    size_t input_len = strnlen(str, len), quotes = 0, backslashes = 0;
    bool validated = false;
    const char *s = str;
    for (size_t remaining = input_len; remaining > 0; remaining--, s++) {
        if (*s == quote) {
            quotes++;
        } else if (*s == '\\') {
            backslashes++;
        } else if (*s & 0x80) {
            int charlen = mblen_or_incomplete(encoding, s, remaining);
            if ((size_t)charlen > remaining) {
                pq__conn_append_error(conn, "incomplete multibyte character\n");
                return NULL;
            }
            /* The rest of the string is checked once, at its first
             * non-ASCII byte. */
            if (!validated) {
                if ((size_t)pq__enc_verifystr(encoding, s, (int)remaining) != remaining) {
                    pq__conn_append_error(conn, "invalid multibyte character\n");
                    return NULL;
                }
                validated = true;
            }
            s += charlen - 1;
            remaining -= (size_t)charlen - 1;
        }
    }
    size_t size = input_len + quotes + 3; /* two quotes and a NUL */
    bool e_string = !as_ident && backslashes > 0;
    if (e_string) size += backslashes + 2;
    char *out = malloc(size), *o = out;
    if (!out) {
        pq__conn_append_error(conn, "out of memory\n");
        return NULL;
    }
    /* Backslashes: E'' reads the same whatever standard_conforming_strings
     * is; the space keeps it apart from an identifier just before. */
    if (e_string) {
        *o++ = ' ';
        *o++ = 'E';
    }
    *o++ = quote;
    for (size_t i = 0; i < input_len;) {
        if (str[i] & 0x80) {
            /* A whole character: its later bytes may look like quotes or
             * backslashes (SJIS, BIG5, GBK) and must stay as they are. */
            for (int k = pq__enc_mblen(encoding, str + i); k > 0; k--)
                *o++ = str[i++];
            continue;
        }
        if (str[i] == quote || (e_string && str[i] == '\\')) *o++ = str[i];
        *o++ = str[i++];
    }
    *o++ = quote;
    *o = '\0';
    return out;
}

char *PQescapeLiteral(PGconn *conn, const char *str, size_t len)
{
    return escape_quoted(conn, str, len, false);
}

char *PQescapeIdentifier(PGconn *conn, const char *str, size_t len)
{
    return escape_quoted(conn, str, len, true);
}

/* ------------------------------------------------------------------ bytea */

static const char hex_digits[] = "0123456789abcdef";

static unsigned char *escape_bytea(PGconn *conn, const unsigned char *from, size_t from_length,
                                   size_t *to_length, bool std_strings, bool use_hex)
{
    size_t bslash = std_strings ? 1 : 2, len = 1;
    if (use_hex) {
        len += bslash + 1 + 2 * from_length;
    } else {
        for (size_t i = 0; i < from_length; i++) {
            unsigned char c = from[i];
            len += c < 0x20 || c > 0x7e ? bslash + 3 : c == '\'' ? 2 : c == '\\' ? 2 * bslash : 1;
        }
    }
    *to_length = len;
    unsigned char *out = malloc(len), *o = out;
    if (!out) {
        if (conn) pq__conn_append_error(conn, "out of memory\n");
        return NULL;
    }
    if (use_hex) {
        if (!std_strings) *o++ = '\\';
        *o++ = '\\';
        *o++ = 'x';
    }
    for (size_t i = 0; i < from_length; i++) {
        unsigned char c = from[i];
        if (use_hex) {
            *o++ = (unsigned char)hex_digits[c >> 4];
            *o++ = (unsigned char)hex_digits[c & 0xf];
        } else if (c < 0x20 || c > 0x7e) {
            if (!std_strings) *o++ = '\\';
            *o++ = '\\';
            *o++ = (unsigned char)('0' + (c >> 6));
            *o++ = (unsigned char)('0' + ((c >> 3) & 7));
            *o++ = (unsigned char)('0' + (c & 7));
        } else if (c == '\'') {
            *o++ = '\'';
            *o++ = '\'';
        } else if (c == '\\') {
            for (size_t k = 0; k < 2 * bslash; k++)
                *o++ = '\\';
        } else {
            *o++ = c;
        }
    }
    *o = '\0';
    return out;
}

unsigned char *PQescapeByteaConn(PGconn *conn, const unsigned char *from, size_t from_length,
                                 size_t *to_length)
{
    if (!conn) return NULL;
    clear_error(conn);
    return escape_bytea(conn, from, from_length, to_length, std_strings_of(conn),
                        PQserverVersion(conn) >= 90000);
}

unsigned char *PQescapeBytea(const unsigned char *from, size_t from_length, size_t *to_length)
{
    /* Without a connection the server version is unknown: the escape
     * format, which every server reads. */
    return escape_bytea(NULL, from, from_length, to_length, last_std_strings, false);
}

static int hex_value(unsigned char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static bool is_octal(unsigned char c, char max)
{
    return c >= '0' && c <= max;
}

unsigned char *PQunescapeBytea(const unsigned char *strtext, size_t *retbuflen)
{
    if (!strtext) return NULL;
    size_t textlen = strlen((const char *)strtext), n = 0;
    /* The output is never longer than the input; +1 avoids malloc(0). */
    unsigned char *buf = malloc(textlen + 1);
    if (!buf) return NULL;
    if (strtext[0] == '\\' && strtext[1] == 'x') {
        /* Hex: what is not a pair of hex digits is skipped, as libpq. */
        const unsigned char *s = strtext + 2;
        while (*s) {
            int hi = hex_value(*s++);
            if (!*s || hi < 0) continue;
            int lo = hex_value(*s++);
            if (lo >= 0) buf[n++] = (unsigned char)(hi << 4 | lo);
        }
    } else {
        for (size_t i = 0; i < textlen;) {
            if (strtext[i] != '\\') {
                buf[n++] = strtext[i++];
                continue;
            }
            i++;
            if (strtext[i] == '\\') {
                buf[n++] = strtext[i++];
            } else if (is_octal(strtext[i], '3') && is_octal(strtext[i + 1], '7') &&
                       is_octal(strtext[i + 2], '7')) {
                buf[n++] = (unsigned char)((strtext[i] - '0') << 6 | (strtext[i + 1] - '0') << 3 |
                                           (strtext[i + 2] - '0'));
                i += 3;
            }
            /* Any other character after a backslash is copied on the next
             * turn; a backslash at the end is dropped. */
        }
    }
    unsigned char *shrunk = realloc(buf, n + 1);
    if (!shrunk) {
        free(buf);
        return NULL;
    }
    *retbuflen = n;
    return shrunk;
}
