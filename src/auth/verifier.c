/*
 * The SCRAM-SHA-256 password verifier the server stores (RFC 5803 form, as
 * PostgreSQL's scram_build_secret writes it), computed on the client.
 */
#include "pgwire/auth.h"

#include "auth/auth.h"
#include "util/internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#define KEY_LEN SHA256_DIGEST_LENGTH

static int format(char *out, size_t outlen, int iterations, const uint8_t *salt, size_t salt_len,
                  const uint8_t stored_key[KEY_LEN], const uint8_t server_key[KEY_LEN])
{
    /* EVP_EncodeBlock: padded base64 without line breaks, NUL-terminated. */
    char salt64[(PGW_SCRAM_SALT_LEN_MAX + 2) / 3 * 4 + 1];
    char stored64[(KEY_LEN + 2) / 3 * 4 + 1], server64[sizeof stored64];
    EVP_EncodeBlock((unsigned char *)salt64, salt, (int)salt_len);
    EVP_EncodeBlock((unsigned char *)stored64, stored_key, KEY_LEN);
    EVP_EncodeBlock((unsigned char *)server64, server_key, KEY_LEN);
    int n =
        snprintf(out, outlen, "SCRAM-SHA-256$%d:%s$%s:%s", iterations, salt64, stored64, server64);
    if (n < 0 || (size_t)n >= outlen) {
        out[0] = '\0';
        return PGW_EINVAL;
    }
    return 0;
}

static bool valid_args(char *out, size_t outlen, const char *password, int iterations,
                       const uint8_t *salt, size_t salt_len)
{
    if (!out || outlen == 0 || !password || iterations < 0) return false;
    if (salt) return salt_len >= 1 && salt_len <= PGW_SCRAM_SALT_LEN_MAX;
    return salt_len == 0;
}

int pgw_scram_verifier(char *out, size_t outlen, const char *password, int iterations,
                       const uint8_t *salt, size_t salt_len, const pgw_allocator_t *alloc)
{
    if (out && outlen) out[0] = '\0';
    if (!valid_args(out, outlen, password, iterations, salt, salt_len)) return PGW_EINVAL;
    if (iterations == 0) iterations = PGW_SCRAM_ITERATIONS_DEFAULT;
    uint8_t random_salt[PGW_SCRAM_SALT_LEN_DEFAULT];
    if (!salt) {
        int rc = pgw__random_bytes(random_salt, sizeof random_salt);
        if (rc < 0) return rc;
        salt = random_salt;
        salt_len = sizeof random_salt;
    }
    char *prepared;
    int rc = pgw__scram_prepare_password(alloc, password, &prepared);
    if (rc != 0) return rc;
    pgw__scram_keys_t k;
    rc = pgw__scram_derive_keys(prepared, strlen(prepared), salt, salt_len, (uint32_t)iterations,
                                &k);
    OPENSSL_cleanse(prepared, strlen(prepared));
    pgw__free(alloc, prepared);
    if (rc == 0) rc = format(out, outlen, iterations, salt, salt_len, k.stored_key, k.server_key);
    OPENSSL_cleanse(&k, sizeof k);
    return rc;
}
