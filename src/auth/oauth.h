/*
 * The messages of SASL OAUTHBEARER (RFC 7628) as PostgreSQL 18 uses them:
 * the client's initial response, the server's error result (a JSON
 * object), and the issuer identifier of a .well-known discovery URI (RFC
 * 8414), with libpq's rules and messages (fe-auth-oauth.c). Pure
 * computations, no I/O. Internal.
 */
#ifndef PGW_AUTH_OAUTH_H
#define PGW_AUTH_OAUTH_H

#include "pgwire/common.h"

/* Append the client initial response to out: "n,,\x01auth=Bearer
 * <token>\x01\x01", or for token NULL the empty discovery request
 * "n,,\x01auth=\x01\x01" (RFC 7628 4.3). Returns 0, PGW_ENOMEM, or
 * PGW_EAUTH when the token is not an RFC 6750 b64token (it would break
 * the message's framing). */
int pgw__oauth_initial_response(pgw_buf_t *out, const char *token);

/* The fields of the server's error result that the client uses, each a
 * NUL-terminated copy or NULL when absent. */
typedef struct pgw__oauth_error {
    char *status;
    char *scope;
    char *discovery_uri; /* "openid-configuration" */
} pgw__oauth_error_t;

/* Parse the server's error result p[0..n) (a JSON object; only top-level
 * string members are read; RFC 7628 3.2.2). Returns 0, PGW_ENOMEM, or
 * PGW_EAUTH with libpq's message in err: an embedded NUL, invalid UTF-8,
 * or "failed to parse server's error response: ..." (not an object, a
 * field that is not a string, a duplicated field, nesting deeper than 8,
 * invalid JSON). Free *e with pgw__oauth_error_free (also on failure). */
int pgw__oauth_parse_error(const pgw_allocator_t *a, const uint8_t *p, size_t n,
                           pgw__oauth_error_t *e, char *err, size_t errlen);
void pgw__oauth_error_free(const pgw_allocator_t *a, pgw__oauth_error_t *e);

/* The issuer identifier of a discovery URI (an https:// URI whose path
 * holds /.well-known/openid-configuration or
 * /.well-known/oauth-authorization-server, as a prefix or a suffix of its
 * path), into a new string *issuer. Returns 0, PGW_ENOMEM, or PGW_EAUTH
 * with libpq's message ('OAuth discovery URI "..." must use HTTPS', "...
 * is not a .well-known URI", ...). */
int pgw__oauth_issuer_from_uri(const pgw_allocator_t *a, const char *uri, char **issuer, char *err,
                               size_t errlen);

/* 1 when s names a discovery document (contains "/.well-known/"). */
int pgw__oauth_is_discovery_uri(const char *s);

#endif
