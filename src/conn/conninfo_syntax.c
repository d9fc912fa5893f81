/*
 * Connection strings as libpq reads them: keyword/value strings and
 * postgresql:// URIs.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- keyword/value strings ---- */

/* Read one value at *pp into out (room for strlen(*pp) + 1): quoted with
 * '...' or bare up to whitespace; backslash escapes the next character. */
static int read_value(const char **pp, char *out, err_out_t *e)
{
    const char *p = *pp;
    if (*p == '\'') {
        p++;
        for (;;) {
            if (*p == '\0') return FAIL(e, "unterminated quoted string in connection info string");
            if (*p == '\\' && p[1] != '\0') {
                p++;
            } else if (*p == '\'') {
                p++;
                break;
            }
            *out++ = *p++;
        }
    } else {
        /* a trailing backslash escapes nothing and is dropped, as in libpq */
        while (*p && !pgw__ci_is_blank(*p)) {
            if (*p == '\\' && *++p == '\0') break;
            *out++ = *p++;
        }
    }
    *out = '\0';
    *pp = p;
    return 0;
}

int pgw__ci_parse_keyword_value(pgw_conninfo_t *ci, const char *s, err_out_t *e)
{
    size_t n = strlen(s);
    char *kw = pgw__malloc(ci->alloc, n + 1), *val = pgw__malloc(ci->alloc, n + 1);
    int rc = kw && val ? 0 : PGW_ENOMEM;
    const char *p = s;
    while (rc == 0) {
        while (pgw__ci_is_blank(*p))
            p++;
        if (*p == '\0') break;
        const char *start = p;
        while (*p && !pgw__ci_is_blank(*p) && *p != '=')
            p++;
        memcpy(kw, start, (size_t)(p - start));
        kw[p - start] = '\0';
        while (pgw__ci_is_blank(*p))
            p++;
        if (*p != '=') {
            rc = FAIL(e, "missing \"=\" after \"%s\" in connection info string", kw);
            break;
        }
        p++;
        while (pgw__ci_is_blank(*p))
            p++;
        rc = read_value(&p, val, e);
        if (rc == 0) rc = pgw__ci_store_keyword(ci, kw, val, e);
    }
    pgw__free(ci->alloc, kw);
    pgw__free(ci->alloc, val);
    return rc;
}

/* ---- URIs ---- */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decode s in place. The errors quote s as it was given: it is
 * checked whole before the first byte is rewritten. */
static int uri_decode(char *s, err_out_t *e)
{
    for (const char *r = s; *r; r++) {
        if (*r != '%') continue;
        int hi = r[1] ? hex_value(r[1]) : -1, lo = hi >= 0 && r[2] ? hex_value(r[2]) : -1;
        if (hi < 0 || lo < 0) return FAIL(e, "invalid percent-encoded token: \"%s\"", s);
        if (hi == 0 && lo == 0)
            return FAIL(e, "forbidden value %%00 in percent-encoded value: \"%s\"", s);
        r += 2;
    }
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == '%') {
            *w++ = (char)(hex_value(r[1]) << 4 | hex_value(r[2]));
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return 0;
}

static int store_decoded(pgw_conninfo_t *ci, const char *kw, char *value, err_out_t *e)
{
    int rc = uri_decode(value, e);
    return rc ? rc : pgw__ci_store_keyword(ci, kw, value, e);
}

/* "?key=value&...": libpq's names, plus ssl=true meaning sslmode=require. */
static int parse_uri_params(pgw_conninfo_t *ci, char *p, err_out_t *e)
{
    while (*p) {
        char *key = p, *eq = NULL;
        while (*p && *p != '&') {
            if (*p == '=') {
                if (eq) {
                    *eq = '\0'; /* libpq names the key alone */
                    return FAIL(e, "extra key/value separator \"=\" in URI query parameter: \"%s\"",
                                key);
                }
                eq = p;
            }
            p++;
        }
        if (*p == '&') *p++ = '\0';
        if (!eq)
            return FAIL(e, "missing key/value separator \"=\" in URI query parameter: \"%s\"", key);
        *eq = '\0';
        char *value = eq + 1;
        int rc = uri_decode(key, e);
        if (rc == 0) rc = uri_decode(value, e);
        if (rc != 0) return rc;
        if (strcmp(key, "ssl") == 0 && strcmp(value, "true") == 0) {
            key = "sslmode";
            value = "require";
        }
        rc = pgw__ci_store_param(ci, key, value);
        if (rc == 1) return FAIL(e, "invalid URI query parameter: \"%s\"", key);
        if (rc != 0) return rc;
    }
    return 0;
}

/* "user[:password]@" if an '@' comes before the first '/'. */
static int parse_uri_credentials(pgw_conninfo_t *ci, char **pp, err_out_t *e)
{
    char *start = *pp, *p = start;
    while (*p && *p != '@' && *p != '/')
        p++;
    if (*p != '@') return 0;
    *p = '\0';
    *pp = p + 1;
    char *colon = strchr(start, ':');
    if (colon) *colon = '\0';
    int rc = 0;
    if (*start) rc = store_decoded(ci, "user", start, e);
    if (rc == 0 && colon && colon[1]) rc = store_decoded(ci, "password", colon + 1, e);
    return rc;
}

static int buf_add(pgw_buf_t *b, const char *s, size_t n)
{
    return pgw_buf_append(b, s, n) == 0 ? 0 : PGW_ENOMEM;
}

/* host[:port] entries separated by ',', IPv6 literals in brackets. Leaves
 * *pp at the character that ended the list ('\0', '/' or '?'), which it
 * returns in *end. *pp points into copy, the working copy of uri: an error
 * gives the position in the whole URI, as libpq does. */
static int parse_uri_hosts(char **pp, pgw_buf_t *hosts, pgw_buf_t *ports, char *end,
                           const char *copy, const char *uri, err_out_t *e)
{
    char *p = *pp, stop = '\0';
    do {
        if (stop == ',') p++; /* past the separator, now a NUL */
        char *host = p;
        if (*p == '[') {
            host = ++p;
            while (*p && *p != ']')
                p++;
            if (*p == '\0')
                return FAIL(e,
                            "end of string reached when looking for matching \"]\" in IPv6 host "
                            "address in URI: \"%s\"",
                            uri);
            if (p == host) return FAIL(e, "IPv6 host address may not be empty in URI: \"%s\"", uri);
            *p++ = '\0';
            if (*p && *p != ':' && *p != '/' && *p != '?' && *p != ',')
                return FAIL(e,
                            "unexpected character \"%c\" at position %d in URI (expected \":\" "
                            "or \"/\"): \"%s\"",
                            *p, (int)(p - copy) + 1, uri);
        } else {
            while (*p && *p != ':' && *p != '/' && *p != '?' && *p != ',')
                p++;
        }
        stop = *p;
        *p = '\0';
        if (buf_add(hosts, host, strlen(host)) || buf_add(hosts, ",", 1)) return PGW_ENOMEM;
        if (stop == ':') {
            char *port = ++p;
            while (*p && *p != '/' && *p != '?' && *p != ',')
                p++;
            stop = *p;
            *p = '\0';
            if (buf_add(ports, port, strlen(port))) return PGW_ENOMEM;
        }
        if (buf_add(ports, ",", 1)) return PGW_ENOMEM;
    } while (stop == ',');
    *pp = p;
    *end = stop;
    return 0;
}

/* Store a comma list built by parse_uri_hosts (trailing ',' dropped) unless
 * it is empty. */
static int store_list(pgw_conninfo_t *ci, const char *kw, pgw_buf_t *b, err_out_t *e)
{
    if (buf_add(b, "", 1)) return PGW_ENOMEM;
    char *s = (char *)b->data;
    size_t n = strlen(s);
    if (n && s[n - 1] == ',') s[n - 1] = '\0';
    return s[0] ? store_decoded(ci, kw, s, e) : 0;
}

size_t pgw__ci_uri_prefix_len(const char *s)
{
    if (strncmp(s, "postgresql://", 13) == 0) return 13;
    if (strncmp(s, "postgres://", 11) == 0) return 11;
    return 0;
}

int pgw__ci_parse_uri(pgw_conninfo_t *ci, const char *uri, size_t prefix, err_out_t *e)
{
    char *copy = pgw__strdup(ci->alloc, uri);
    if (!copy) return PGW_ENOMEM;
    pgw_buf_t hosts, ports;
    pgw_buf_init(&hosts, ci->alloc);
    pgw_buf_init(&ports, ci->alloc);
    char *p = copy + prefix, stop = '\0';
    int rc = parse_uri_credentials(ci, &p, e);
    if (rc == 0) rc = parse_uri_hosts(&p, &hosts, &ports, &stop, copy, uri, e);
    if (rc == 0) rc = store_list(ci, "host", &hosts, e);
    if (rc == 0) rc = store_list(ci, "port", &ports, e);
    if (rc == 0 && stop == '/') {
        char *db = ++p;
        while (*p && *p != '?')
            p++;
        stop = *p;
        *p = '\0';
        if (*db) rc = store_decoded(ci, "dbname", db, e);
    }
    if (rc == 0 && stop == '?') rc = parse_uri_params(ci, p + 1, e);
    pgw_buf_free(&hosts);
    pgw_buf_free(&ports);
    pgw__free(ci->alloc, copy);
    return rc;
}
