/*
 * The MD5 password response (AuthenticationMD5Password):
 * "md5" + hex(md5(hex(md5(password || user)) || salt)).
 */
#include "auth/auth.h"
#include "util/internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define MD5_LEN 16

static void to_hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 0x0F];
    }
}

/* md5(a || b) into out. Returns 0 or -1 on a crypto failure. */
static int md5_two(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[MD5_LEN])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int len = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_md5(), NULL) && EVP_DigestUpdate(ctx, a, alen) &&
             EVP_DigestUpdate(ctx, b, blen) && EVP_DigestFinal_ex(ctx, out, &len) && len == MD5_LEN;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

int pgw__md5_password(const char *user, const char *password, const uint8_t salt[4], char out[36])
{
    uint8_t digest[MD5_LEN];
    char inner_hex[2 * MD5_LEN];
    int rc = PGW_ENOMEM;
    if (md5_two(password, strlen(password), user, strlen(user), digest) != 0) goto done;
    to_hex(digest, MD5_LEN, inner_hex);
    if (md5_two(inner_hex, sizeof inner_hex, salt, 4, digest) != 0) goto done;
    memcpy(out, "md5", 3);
    to_hex(digest, MD5_LEN, out + 3);
    out[35] = '\0';
    rc = 0;
done:
    /* hex(md5(password || user)) is what the server stores: a password equivalent. */
    OPENSSL_cleanse(inner_hex, sizeof inner_hex);
    OPENSSL_cleanse(digest, sizeof digest);
    return rc;
}

int pgw__md5_verifier(const char *user, const char *password, char out[36])
{
    uint8_t digest[MD5_LEN];
    if (md5_two(password, strlen(password), user, strlen(user), digest) != 0) return PGW_ENOMEM;
    memcpy(out, "md5", 3);
    to_hex(digest, MD5_LEN, out + 3);
    out[35] = '\0';
    OPENSSL_cleanse(digest, sizeof digest);
    return 0;
}
