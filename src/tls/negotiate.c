/*
 * The plaintext side of TLS negotiation: sslmode keywords and the server's
 * one-byte answer to SSLRequest, judged as libpq judges them. Pure
 * functions, so the conn layer's rules can be tested without a socket.
 */
#include "tls/tls.h"

#include <stdio.h>
#include <string.h>

int pgw__sslmode_parse(const char *s, pgw__sslmode_t *out)
{
    static const struct {
        const char *name;
        pgw__sslmode_t mode;
    } modes[] = {
        {"disable", PGW__SSLMODE_DISABLE},     {"allow", PGW__SSLMODE_ALLOW},
        {"prefer", PGW__SSLMODE_PREFER},       {"require", PGW__SSLMODE_REQUIRE},
        {"verify-ca", PGW__SSLMODE_VERIFY_CA}, {"verify-full", PGW__SSLMODE_VERIFY_FULL},
    };
    if (!out) return PGW_EINVAL;
    if (!s || !*s) {
        *out = PGW__SSLMODE_PREFER;
        return 0;
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(s, modes[i].name) == 0) {
            *out = modes[i].mode;
            return 0;
        }
    }
    return PGW_EINVAL;
}

static int fail(char *err, size_t errlen, int code, const char *msg, int c)
{
    if (err && errlen) snprintf(err, errlen, msg, c);
    return code;
}

int pgw__tls_ssl_response(pgw__sslmode_t mode, const uint8_t *bytes, size_t len, char *err,
                          size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!bytes || len == 0) return PGW_EINVAL;
    uint8_t c = bytes[0];
    if (c == 'E') /* unauthenticated: the text that follows is not read */
        return fail(err, errlen, PGW_ETLS, "server sent an error response during SSL exchange", 0);
    if (c != 'S' && c != 'N')
        return fail(err, errlen, PGW_EPROTO, "received invalid response to SSL negotiation: %c",
                    c >= 0x20 && c < 0x7F ? c : '?');
    /* The server waits for our ClientHello (or startup message) after its
     * answer: anything behind the byte was injected (CVE-2021-23222). */
    if (len > 1)
        return fail(err, errlen, PGW_EPROTO, "received unencrypted data after SSL response", 0);
    if (c == 'S') return PGW__TLS_START;
    if (mode >= PGW__SSLMODE_REQUIRE)
        return fail(err, errlen, PGW_ETLS, "server does not support SSL, but SSL was required", 0);
    return PGW__TLS_PLAINTEXT;
}
