/*
 * Random bytes for the layers that need them (SCRAM's client nonce, a
 * verifier's salt, the statement cache's per-session name nonce): one
 * source, OpenSSL's CSPRNG, so that no layer but auth/ and tls/ touches
 * OpenSSL.
 */
#include "auth/auth.h"

#include <openssl/rand.h>

int pgw__random_bytes(uint8_t *out, size_t n)
{
    if (n > INT32_MAX) return PGW_EINVAL;
    return RAND_bytes(out, (int)n) == 1 ? 0 : PGW_ENOMEM;
}
