/*
 * OAUTHBEARER messages (oauth.h): the initial response, a small JSON
 * reader for the server's error result, and .well-known URIs.
 */
#define _POSIX_C_SOURCE 200809L
#include "auth/oauth.h"

#include "auth/auth.h"
#include "util/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define KVSEP "\x01"

/* RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
 * "+" / "/" ) *"=" */
static bool is_b64token(const char *t)
{
    size_t i = 0;
    for (; t[i]; i++) {
        unsigned char c = (unsigned char)t[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  strchr("-._~+/", c) != NULL;
        if (!ok) break;
    }
    if (i == 0) return false;
    while (t[i] == '=')
        i++;
    return t[i] == '\0';
}

int pgw__oauth_initial_response(pgw_buf_t *out, const char *token)
{
    if (token && !is_b64token(token)) return PGW_EAUTH;
    static const char head[] = "n,," KVSEP "auth=";
    static const char bearer[] = "Bearer ";
    static const char tail[] = KVSEP KVSEP;
    int rc = pgw_buf_append(out, head, sizeof head - 1);
    if (rc == 0 && token) rc = pgw_buf_append(out, bearer, sizeof bearer - 1);
    if (rc == 0 && token) rc = pgw_buf_append(out, token, strlen(token));
    if (rc == 0) rc = pgw_buf_append(out, tail, sizeof tail - 1);
    return rc < 0 ? PGW_ENOMEM : 0;
}

/* ------------------------------------------------------------------ JSON */

/* The server's error result is one object; of its members only the
 * top-level strings status, scope and openid-configuration matter. The
 * reader checks the whole text is JSON (RFC 8259) and collects those. */
#define MAX_NESTING 8

typedef struct json {
    const pgw_allocator_t *a;
    const char *p, *end;
    int depth;
    pgw__oauth_error_t *e;
    char *err;
    size_t errlen;
    int rc;
} json_t;

static int json_fail(json_t *j, const char *detail)
{
    if (j->rc) return j->rc;
    j->rc = pgw__fail_msg(j->err, j->errlen, PGW_EAUTH,
                          "failed to parse server's error response: %s", detail);
    return j->rc;
}

/* libpq's messages about a field the client reads. */
static int field_fail(json_t *j, const char *what, const char *field)
{
    char detail[96];
    snprintf(detail, sizeof detail, "field \"%s\" %s", field, what);
    return json_fail(j, detail);
}

static void skip_ws(json_t *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hex4(const char *p, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* One \u escape (with its low surrogate when it is a high one). */
static int json_unicode(json_t *j, uint32_t *cp)
{
    if (j->end - j->p < 5 || hex4(j->p + 1, cp) < 0)
        return json_fail(j, "invalid \\u escape in a string");
    j->p += 5;
    if (*cp >= 0xDC00 && *cp <= 0xDFFF)
        return json_fail(j, "Unicode low surrogate must follow a high surrogate");
    if (*cp < 0xD800 || *cp > 0xDBFF) return 0;
    uint32_t lo;
    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || hex4(j->p + 2, &lo) < 0 ||
        lo < 0xDC00 || lo > 0xDFFF)
        return json_fail(j, "Unicode high surrogate must not follow a high surrogate");
    j->p += 6;
    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    return 0;
}

/* A string at j->p (the opening quote); into *out (NULL: skipped). */
static int json_string(json_t *j, pgw_buf_t *out)
{
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p;
        if ((unsigned char)c < 0x20) return json_fail(j, "control character in a string");
        if (c != '\\') {
            if (out && pgw_buf_append(out, &c, 1) < 0) return j->rc = PGW_ENOMEM;
            j->p++;
            continue;
        }
        if (j->end - j->p < 2) break;
        char esc = j->p[1], ch;
        uint32_t cp = 0; /* json_unicode sets it unless it fails */
        char enc[4];
        size_t n = 1;
        switch (esc) {
        case '"':
        case '\\':
        case '/':
            ch = esc;
            break;
        case 'b':
            ch = '\b';
            break;
        case 'f':
            ch = '\f';
            break;
        case 'n':
            ch = '\n';
            break;
        case 'r':
            ch = '\r';
            break;
        case 't':
            ch = '\t';
            break;
        case 'u':
            j->p++;
            if (json_unicode(j, &cp) < 0) return j->rc;
            if (cp == 0) return json_fail(j, "\\u0000 cannot be converted to text");
            n = pgw__utf8_encode(cp, enc);
            if (out && pgw_buf_append(out, enc, n) < 0) return j->rc = PGW_ENOMEM;
            continue;
        default:
            return json_fail(j, "invalid escape sequence in a string");
        }
        if (out && pgw_buf_append(out, &ch, n) < 0) return j->rc = PGW_ENOMEM;
        j->p += 2;
    }
    if (j->p >= j->end) return json_fail(j, "the input ended inside a string");
    j->p++;
    return 0;
}

static int json_value(json_t *j, const char *field, char **target);

static int json_literal(json_t *j)
{
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < PGW__ARRAY_LEN(words); i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[i], n) == 0) {
            j->p += n;
            return 0;
        }
    }
    /* a number: -? int frac? exp? */
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-') j->p++;
    const char *digits = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    if (j->p == digits || (*digits == '0' && j->p - digits > 1)) {
        j->p = s;
        return json_fail(j, "invalid token");
    }
    if (j->p < j->end && *j->p == '.') {
        const char *f = ++j->p;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
        if (j->p == f) return json_fail(j, "invalid number");
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        const char *x = j->p;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
        if (j->p == x) return json_fail(j, "invalid number");
    }
    return 0;
}

/* An object's or array's members (j->p at its opening bracket). */
static int json_container(json_t *j, bool object)
{
    if (++j->depth > MAX_NESTING) return json_fail(j, "JSON is too deeply nested");
    char close = object ? '}' : ']';
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    for (;;) {
        const char *field = NULL;
        char **target = NULL;
        skip_ws(j);
        if (object) {
            if (j->p >= j->end || *j->p != '"') return json_fail(j, "expected a string");
            pgw_buf_t name;
            pgw_buf_init(&name, j->a);
            int rc = json_string(j, &name);
            if (rc == 0 && pgw_buf_append(&name, "", 1) < 0) rc = j->rc = PGW_ENOMEM;
            if (rc == 0 && j->depth == 1) {
                const char *n = (const char *)name.data;
                if (strcmp(n, "status") == 0) field = "status", target = &j->e->status;
                if (strcmp(n, "scope") == 0) field = "scope", target = &j->e->scope;
                if (strcmp(n, "openid-configuration") == 0)
                    field = "openid-configuration", target = &j->e->discovery_uri;
            }
            pgw_buf_free(&name);
            if (rc < 0) return rc;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') return json_fail(j, "expected \":\"");
            j->p++;
        }
        if (json_value(j, field, target) < 0) return j->rc;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            j->depth--;
            return 0;
        }
        return json_fail(j, object ? "expected \",\" or \"}\"" : "expected \",\" or \"]\"");
    }
}

/* A value; field/target: a member the client reads, which must be a
 * string and appear once. */
static int json_value(json_t *j, const char *field, char **target)
{
    skip_ws(j);
    if (j->p >= j->end) return json_fail(j, "the input ended too soon");
    char c = *j->p;
    if (target && c != '"') return field_fail(j, "must be a string", field);
    if (c == '{' || c == '[') return json_container(j, c == '{');
    if (c != '"') return json_literal(j);
    if (!target) return json_string(j, NULL);
    if (*target) return field_fail(j, "is duplicated", field);
    pgw_buf_t v;
    pgw_buf_init(&v, j->a);
    int rc = json_string(j, &v);
    if (rc == 0 && pgw_buf_append(&v, "", 1) < 0) rc = j->rc = PGW_ENOMEM;
    if (rc == 0) *target = pgw__strndup(j->a, (const char *)v.data, v.len - 1);
    if (rc == 0 && !*target) rc = j->rc = PGW_ENOMEM;
    pgw_buf_free(&v);
    return rc;
}

static bool valid_utf8(const char *s)
{
    while (*s) {
        uint32_t cp;
        size_t n = pgw__utf8_decode((const unsigned char *)s, &cp);
        if (!n) return false;
        s += n;
    }
    return true;
}

int pgw__oauth_parse_error(const pgw_allocator_t *a, const uint8_t *p, size_t n,
                           pgw__oauth_error_t *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (memchr(p, 0, n))
        return pgw__fail_msg(err, errlen, PGW_EAUTH,
                             "server's error message contained an embedded NULL, and was "
                             "discarded");
    char *text = pgw__strndup(a, (const char *)p, n);
    if (!text) return PGW_ENOMEM;
    int rc = 0;
    if (!valid_utf8(text)) {
        rc = pgw__fail_msg(err, errlen, PGW_EAUTH, "server's error response is not valid UTF-8");
    } else {
        json_t j = {a, text, text + n, 0, e, err, errlen, 0};
        skip_ws(&j);
        if (j.p >= j.end || *j.p != '{')
            rc = json_fail(&j, "top-level element must be an object");
        else if (json_container(&j, true) == 0) {
            skip_ws(&j);
            if (j.p != j.end) json_fail(&j, "the input has text after the object");
        }
        rc = j.rc;
    }
    pgw__free(a, text);
    if (rc == PGW_ENOMEM) pgw__fail_msg(err, errlen, rc, "out of memory");
    return rc;
}

void pgw__oauth_error_free(const pgw_allocator_t *a, pgw__oauth_error_t *e)
{
    pgw__free(a, e->status);
    pgw__free(a, e->scope);
    pgw__free(a, e->discovery_uri);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------ well-known URIs */

#define WK_PREFIX        "/.well-known/"
#define OPENID_WK_SUFFIX "openid-configuration"
#define OAUTH_WK_SUFFIX  "oauth-authorization-server"

int pgw__oauth_is_discovery_uri(const char *s)
{
    return s && strstr(s, WK_PREFIX) != NULL;
}

/* RFC 8414's rule, with libpq's checks (issuer_from_well_known_uri). */
int pgw__oauth_issuer_from_uri(const pgw_allocator_t *a, const char *uri, char **issuer, char *err,
                               size_t errlen)
{
    *issuer = NULL;
    if (strncasecmp(uri, "https://", 8) != 0)
        return pgw__fail_msg(err, errlen, PGW_EAUTH, "OAuth discovery URI \"%s\" must use HTTPS",
                             uri);
    const char *authority = uri + 8;
    if (strpbrk(authority, "?#"))
        return pgw__fail_msg(err, errlen, PGW_EAUTH,
                             "OAuth discovery URI \"%s\" must not contain query or fragment "
                             "components",
                             uri);
    const char *wk_start = strstr(authority, WK_PREFIX);
    if (!wk_start)
        return pgw__fail_msg(err, errlen, PGW_EAUTH,
                             "OAuth discovery URI \"%s\" is not a .well-known URI", uri);
    const char *wk_end = wk_start + strlen(WK_PREFIX);
    if (strncmp(wk_end, OPENID_WK_SUFFIX, strlen(OPENID_WK_SUFFIX)) == 0)
        wk_end += strlen(OPENID_WK_SUFFIX);
    else if (strncmp(wk_end, OAUTH_WK_SUFFIX, strlen(OAUTH_WK_SUFFIX)) == 0)
        wk_end += strlen(OAUTH_WK_SUFFIX);
    else
        wk_end = NULL;
    if (!wk_end || (*wk_end != '/' && *wk_end != '\0'))
        return pgw__fail_msg(err, errlen, PGW_EAUTH,
                             "OAuth discovery URI \"%s\" uses an unsupported .well-known suffix",
                             uri);
    /* Not at the end of the path: then at its start (IETF style). */
    if (*wk_end != '\0' && wk_start != strchr(authority, '/'))
        return pgw__fail_msg(err, errlen, PGW_EAUTH,
                             "OAuth discovery URI \"%s\" uses an invalid format", uri);
    size_t before = (size_t)(wk_start - uri), after = strlen(wk_end);
    char *out = pgw__malloc(a, before + after + 1);
    if (!out) return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    memcpy(out, uri, before);
    memcpy(out + before, wk_end, after + 1);
    *issuer = out;
    return 0;
}
