/*
 * Random bytes for the layers that need them, from one file, so that no
 * layer but auth/ and tls/ touches OpenSSL: secrets (SCRAM's client nonce,
 * a verifier's salt) from OpenSSL's CSPRNG; the statement cache's
 * per-session name nonce from the kernel where it can.
 */
#include "auth/auth.h"

#include <openssl/rand.h>
#if defined(PGW_HAVE_GETENTROPY)
#include <sys/random.h>
#endif

int pgw__random_bytes(uint8_t *out, size_t n)
{
    if (n > INT32_MAX) return PGW_EINVAL;
    return RAND_bytes(out, (int)n) == 1 ? 0 : PGW_ENOMEM;
}

int pgw__nonce_bytes(uint8_t *out, size_t n)
{
    if (n > 256) return PGW_EINVAL;
#if defined(PGW_HAVE_GETENTROPY)
    if (getentropy(out, n) == 0) return 0;
#endif
    return pgw__random_bytes(out, n);
}
