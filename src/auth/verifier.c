/*
 * The SCRAM-SHA-256 password verifier the server stores (RFC 5803 form, as
 * PostgreSQL's scram_build_secret writes it), computed on the client.
 */
#include "pgwire/auth.h"

#include "auth/auth.h"
#include "util/internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#define KEY_LEN SHA256_DIGEST_LENGTH

/* The password as the server hashes it: SASLprep'ed, or raw when SASLprep
 * refuses it. *prepared is the allocation to wipe and free (NULL if raw). */
static int server_password(const pgw_allocator_t *alloc, const char *password, char **prepared)
{
    int rc = pgw__saslprep(alloc, password, prepared);
    if (rc == PGW_ENOMEM) return rc;
    if (rc != 0) *prepared = NULL;
    return 0;
}

/* StoredKey = H(HMAC(SaltedPassword, "Client Key")),
 * ServerKey = HMAC(SaltedPassword, "Server Key") (RFC 5802 section 3). */
static int derive(const char *pw, const uint8_t *salt, size_t salt_len, int iterations,
                  uint8_t stored_key[KEY_LEN], uint8_t server_key[KEY_LEN])
{
    uint8_t salted[KEY_LEN], client_key[KEY_LEN];
    unsigned int n1 = 0, n2 = 0;
    int ok =
        PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, (int)salt_len, iterations, EVP_sha256(),
                          KEY_LEN, salted) == 1 &&
        HMAC(EVP_sha256(), salted, KEY_LEN, (const uint8_t *)"Client Key", 10, client_key, &n1) &&
        HMAC(EVP_sha256(), salted, KEY_LEN, (const uint8_t *)"Server Key", 10, server_key, &n2) &&
        SHA256(client_key, KEY_LEN, stored_key);
    OPENSSL_cleanse(salted, sizeof salted);
    OPENSSL_cleanse(client_key, sizeof client_key);
    return ok && n1 == KEY_LEN && n2 == KEY_LEN ? 0 : PGW_ENOMEM;
}

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
        if (RAND_bytes(random_salt, sizeof random_salt) != 1) return PGW_ENOMEM;
        salt = random_salt;
        salt_len = sizeof random_salt;
    }
    char *prepared;
    int rc = server_password(alloc, password, &prepared);
    if (rc != 0) return rc;
    uint8_t stored_key[KEY_LEN], server_key[KEY_LEN];
    rc = derive(prepared ? prepared : password, salt, salt_len, iterations, stored_key, server_key);
    if (prepared) {
        OPENSSL_cleanse(prepared, strlen(prepared));
        pgw__free(alloc, prepared);
    }
    if (rc == 0) rc = format(out, outlen, iterations, salt, salt_len, stored_key, server_key);
    OPENSSL_cleanse(server_key, sizeof server_key);
    return rc;
}
