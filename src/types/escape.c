/*
 * Escaping identifiers and literals for SQL text. Only UTF-8 is supported:
 * the input is validated strictly first and nothing is returned for invalid
 * input, so a byte sequence that some other decoder would read as a quote
 * can never slip through (the CVE-2025-1094 class).
 */
#include "types/container_internal.h"

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is invalid:
 * no NUL, no overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_seq_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c == 0) return 0;
    if (c < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0; /* overlong */
        if (c == 0xED) hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90; /* overlong */
        if (c == 0xF4) hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

static int utf8_valid(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq_len(s + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

/* Shared by both helpers: quote is '\'' or '"'; backslashes only matter in
 * literals. */
static int escape(const pgw_allocator_t *alloc, const char *s, size_t len, char quote, char **out)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!s && len) return PGW_EINVAL;
    if (!utf8_valid((const uint8_t *)s, len)) return PGW_EENCODING;
    size_t quotes = 0, backslashes = 0;
    for (size_t i = 0; i < len; i++) {
        quotes += s[i] == quote;
        backslashes += quote == '\'' && s[i] == '\\';
    }
    size_t prefix = backslashes ? 2 : 0; /* " E" */
    if (len > (SIZE_MAX - 8) / 2) return PGW_ENOMEM;
    char *r = pgw__malloc(alloc, prefix + len + quotes + backslashes + 3);
    if (!r) return PGW_ENOMEM;
    char *d = r;
    if (prefix) *d++ = ' ', *d++ = 'E';
    *d++ = quote;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == quote || (quote == '\'' && s[i] == '\\')) *d++ = s[i];
        *d++ = s[i];
    }
    *d++ = quote;
    *d = '\0';
    *out = r;
    return 0;
}

int pgw_escape_identifier(const pgw_allocator_t *alloc, const char *s, size_t len, char **out)
{
    return escape(alloc, s, len, '"', out);
}

int pgw_escape_literal(const pgw_allocator_t *alloc, const char *s, size_t len, char **out)
{
    return escape(alloc, s, len, '\'', out);
}

void pgw_escape_free(const pgw_allocator_t *alloc, char *s)
{
    pgw__free(alloc, s);
}
