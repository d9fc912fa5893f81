/*
 * The client side of SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (RFC 5802, RFC
 * 7677) as PostgreSQL speaks it: the user name in the SCRAM messages is empty
 * (the server takes it from the StartupMessage), the only channel binding
 * type is tls-server-end-point, and server messages carry no extensions, so
 * they are parsed strictly (as libpq does).
 */
#include "auth/auth.h"
#include "util/internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <limits.h>
#include <stdbool.h>

#define SCRAM_KEY_LEN        32 /* SHA-256 */
#define SCRAM_NONCE_RAW_LEN  18
#define SCRAM_MAX_NONCE_LEN  64
#define SCRAM_MAX_ITERATIONS 10000000 /* a hostile server must not make us spin */
#define SCRAM_MAX_SALT_LEN   1024
#define SCRAM_MAX_MSG_LEN    4096 /* server-first: nonce + salt + count, far below */

enum scram_state { SCRAM_INIT, SCRAM_FIRST_SENT, SCRAM_FINAL_SENT, SCRAM_DONE, SCRAM_FAILED };

struct pgw__scram {
    const pgw_allocator_t *alloc;
    enum scram_state state;
    char *password; /* SASLprep'ed, or raw when SASLprep refused it */
    size_t password_len;
    bool plus;
    bool client_supports_cb;
    uint8_t *cb_data;
    size_t cb_len;
    char nonce[SCRAM_MAX_NONCE_LEN + 1]; /* ours, printable, no ',' */
    char *user;                          /* saslname for n=; NULL: empty (PostgreSQL) */
    char *client_first_bare;
    size_t client_first_bare_len;
    uint8_t server_signature[SCRAM_KEY_LEN]; /* expected in server-final */
};

/* ---- base64 (RFC 4648, padded, no line breaks, strict decoding) ---- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

/* Encode n bytes into out (b64_encoded_len(n) bytes, no NUL). */
static void encode_base64(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64_alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
    }
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decode in[0..n) into out (capacity n / 4 * 3). Returns the decoded length,
 * or -1 if the text is not canonical padded base64. */
static long b64_decode(const char *in, size_t n, uint8_t *out)
{
    if (n == 0 || n % 4 != 0) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int pad = 0;
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            char c = in[i + (size_t)k];
            int d;
            if (c == '=' && i + 4 == n && k >= 2) {
                pad++;
                d = 0;
            } else {
                if (pad) return -1; /* data after padding */
                d = b64_value(c);
                if (d < 0) return -1;
            }
            v = v << 6 | (uint32_t)d;
        }
        /* Canonical: the bits the padding leaves unused must be zero. */
        if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF))) return -1;
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2) out[o++] = (uint8_t)(v >> 8);
        if (pad < 1) out[o++] = (uint8_t)v;
    }
    return (long)o;
}

/* ---- crypto helpers ---- */

static int hmac_sha256(const uint8_t *key, size_t key_len, const void *msg, size_t len,
                       uint8_t out[SCRAM_KEY_LEN])
{
    unsigned int out_len = 0;
    if (!HMAC(EVP_sha256(), key, (int)key_len, msg, len, out, &out_len)) return -1;
    return out_len == SCRAM_KEY_LEN ? 0 : -1;
}

/* ---- construction ---- */

int pgw__scram_prepare_password(const pgw_allocator_t *alloc, const char *password, char **out)
{
    char *prepared;
    int rc = pgw__saslprep(alloc, password, &prepared);
    if (rc == PGW_ENOMEM) return rc;
    /* As libpq does: a password SASLprep refuses (invalid UTF-8, prohibited
     * characters) is used as it is; the server did the same when it stored it. */
    if (rc != 0) prepared = pgw__strdup(alloc, password);
    if (!prepared) return PGW_ENOMEM;
    *out = prepared;
    return 0;
}

static int set_password(pgw__scram_t *s, const char *password)
{
    int rc = pgw__scram_prepare_password(s->alloc, password, &s->password);
    if (rc == 0) s->password_len = strlen(s->password);
    return rc;
}

static int make_nonce(char *out)
{
    uint8_t raw[SCRAM_NONCE_RAW_LEN];
    int rc = pgw__random_bytes(raw, sizeof raw);
    if (rc < 0) return rc;
    encode_base64(raw, sizeof raw, out);
    out[b64_encoded_len(sizeof raw)] = '\0';
    return 0;
}

int pgw__scram_new(pgw__scram_t **out, const pgw_allocator_t *alloc, const char *password,
                   const char *mechanism, const uint8_t *cb_data, size_t cb_len,
                   int client_supports_cb)
{
    *out = NULL;
    if (!password || !mechanism) return PGW_EINVAL;
    bool plus;
    if (strcmp(mechanism, "SCRAM-SHA-256") == 0)
        plus = false;
    else if (strcmp(mechanism, "SCRAM-SHA-256-PLUS") == 0)
        plus = true;
    else
        return PGW_EINVAL;
    if (plus && (!cb_data || cb_len == 0 || cb_len > 1024)) return PGW_EINVAL;

    pgw__scram_t *s = pgw__calloc(alloc, 1, sizeof *s);
    if (!s) return PGW_ENOMEM;
    s->alloc = alloc;
    s->plus = plus;
    s->client_supports_cb = client_supports_cb != 0;
    int rc = set_password(s, password);
    if (rc == 0 && plus) {
        s->cb_data = pgw__malloc(alloc, cb_len);
        if (!s->cb_data)
            rc = PGW_ENOMEM;
        else
            memcpy(s->cb_data, cb_data, cb_len);
        s->cb_len = cb_len;
    }
    if (rc == 0) rc = make_nonce(s->nonce);
    if (rc != 0) {
        pgw__scram_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int pgw__scram_set_nonce(pgw__scram_t *s, const char *nonce)
{
    size_t n = strlen(nonce);
    if (s->state != SCRAM_INIT || n == 0 || n > SCRAM_MAX_NONCE_LEN) return PGW_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (nonce[i] < 0x21 || nonce[i] > 0x7E || nonce[i] == ',') return PGW_EINVAL;
    memcpy(s->nonce, nonce, n + 1);
    return 0;
}

int pgw__scram_set_user(pgw__scram_t *s, const char *user)
{
    if (s->state != SCRAM_INIT || strlen(user) > 256) return PGW_EINVAL;
    /* saslname: ',' is written "=2C" and '=' is written "=3D". */
    char *name = pgw__malloc(s->alloc, strlen(user) * 3 + 1), *w = name;
    if (!name) return PGW_ENOMEM;
    for (const char *p = user; *p; p++) {
        if (*p == ',' || *p == '=') {
            memcpy(w, *p == ',' ? "=2C" : "=3D", 3);
            w += 3;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    pgw__free(s->alloc, s->user);
    s->user = name;
    return 0;
}

/* ---- client-first-message ---- */

static const char *gs2_header(const pgw__scram_t *s)
{
    if (s->plus) return "p=tls-server-end-point,,";
    return s->client_supports_cb ? "y,," : "n,,";
}

int pgw__scram_client_first(pgw__scram_t *s, pgw_buf_t *out)
{
    if (s->state != SCRAM_INIT) return PGW_EINVAL;
    size_t nlen = strlen(s->nonce), ulen = s->user ? strlen(s->user) : 0;
    size_t bare_len = 2 + ulen + 3 + nlen; /* "n=" user ",r=" nonce */
    char *bare = pgw__malloc(s->alloc, bare_len + 1);
    if (!bare) return PGW_ENOMEM;
    memcpy(bare, "n=", 2);
    if (ulen) memcpy(bare + 2, s->user, ulen);
    memcpy(bare + 2 + ulen, ",r=", 3);
    memcpy(bare + 5 + ulen, s->nonce, nlen + 1);
    const char *gs2 = gs2_header(s);
    size_t old_len = out->len;
    int rc = pgw_buf_append(out, gs2, strlen(gs2));
    if (rc == 0) rc = pgw_buf_append(out, bare, bare_len);
    if (rc != 0) {
        out->len = old_len;
        pgw__free(s->alloc, bare);
        return rc == PGW_ETOOBIG ? PGW_ENOMEM : rc;
    }
    s->client_first_bare = bare;
    s->client_first_bare_len = bare_len;
    s->state = SCRAM_FIRST_SENT;
    return 0;
}

/* ---- server-first-message ---- */

typedef struct server_first {
    const char *nonce;
    size_t nonce_len;
    uint8_t salt[SCRAM_MAX_SALT_LEN];
    size_t salt_len;
    uint32_t iterations;
} server_first_t;

/* Read "<name>=<value>" at *p (up to end), ending at ',' or end. */
static bool read_attr(const char **p, const char *end, char name, const char **val, size_t *len)
{
    const char *q = *p;
    if (end - q < 2 || q[0] != name || q[1] != '=') return false;
    q += 2;
    const char *v = q;
    while (q < end && *q != ',')
        q++;
    *val = v;
    *len = (size_t)(q - v);
    if (q < end) q++; /* the ',' */
    *p = q;
    return true;
}

static bool parse_iterations(const char *v, size_t len, uint32_t *out)
{
    if (len == 0 || len > 9) return false; /* 9 digits is past the bound already */
    uint32_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        n = n * 10 + (uint32_t)(v[i] - '0');
    }
    if (n < 1 || n > SCRAM_MAX_ITERATIONS) return false;
    *out = n;
    return true;
}

static bool printable_nonce(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (v[i] < 0x21 || v[i] > 0x7E || v[i] == ',') return false;
    return true;
}

static bool parse_server_first(const pgw__scram_t *s, const char *msg, size_t len,
                               server_first_t *sf)
{
    const char *p = msg, *end = msg + len;
    const char *v;
    size_t vlen;
    /* A leading "m=" (mandatory extension) is not understood, so it fails. */
    if (!read_attr(&p, end, 'r', &sf->nonce, &sf->nonce_len)) return false;
    size_t ours = strlen(s->nonce);
    if (sf->nonce_len <= ours || memcmp(sf->nonce, s->nonce, ours) != 0) return false;
    if (!printable_nonce(sf->nonce, sf->nonce_len)) return false;
    if (p[-1] != ',' || !read_attr(&p, end, 's', &v, &vlen)) return false;
    if (vlen == 0 || vlen / 4 * 3 > sizeof sf->salt) return false;
    long salt_len = b64_decode(v, vlen, sf->salt);
    if (salt_len <= 0) return false;
    sf->salt_len = (size_t)salt_len;
    if (p[-1] != ',' || !read_attr(&p, end, 'i', &v, &vlen)) return false;
    if (!parse_iterations(v, vlen, &sf->iterations)) return false;
    return p == end && p[-1] != ','; /* PostgreSQL sends no extensions */
}

/* ---- client-final-message ---- */

/* "c=" base64(gs2 header || cb data) ",r=" nonce: the client-final-message
 * without proof, which is also the tail of AuthMessage. */
static char *final_without_proof(pgw__scram_t *s, const server_first_t *sf, size_t *out_len)
{
    const char *gs2 = gs2_header(s);
    size_t gs2_len = strlen(gs2);
    size_t cb_in_len = gs2_len + s->cb_len;
    size_t len = 2 + b64_encoded_len(cb_in_len) + 3 + sf->nonce_len;
    uint8_t *cb_in = pgw__malloc(s->alloc, cb_in_len);
    char *m = pgw__malloc(s->alloc, len + 1);
    if (!cb_in || !m) {
        pgw__free(s->alloc, cb_in);
        pgw__free(s->alloc, m);
        return NULL;
    }
    memcpy(cb_in, gs2, gs2_len);
    if (s->cb_len) memcpy(cb_in + gs2_len, s->cb_data, s->cb_len);
    char *w = m;
    memcpy(w, "c=", 2), w += 2;
    encode_base64(cb_in, cb_in_len, w), w += b64_encoded_len(cb_in_len);
    memcpy(w, ",r=", 3), w += 3;
    memcpy(w, sf->nonce, sf->nonce_len), w += sf->nonce_len;
    *w = '\0';
    pgw__free(s->alloc, cb_in);
    *out_len = len;
    return m;
}

/* The keys and signatures of RFC 5802 section 3. */
int pgw__scram_derive_keys(const char *password, size_t password_len, const uint8_t *salt,
                           size_t salt_len, uint32_t iterations, pgw__scram_keys_t *k)
{
    uint8_t salted[SCRAM_KEY_LEN];
    int rc = -1;
    if (password_len <= INT_MAX && salt_len <= INT_MAX && iterations <= INT_MAX &&
        PKCS5_PBKDF2_HMAC(password, (int)password_len, salt, (int)salt_len, (int)iterations,
                          EVP_sha256(), SCRAM_KEY_LEN, salted) == 1 &&
        hmac_sha256(salted, SCRAM_KEY_LEN, "Client Key", 10, k->client_key) == 0 &&
        hmac_sha256(salted, SCRAM_KEY_LEN, "Server Key", 10, k->server_key) == 0 &&
        SHA256(k->client_key, SCRAM_KEY_LEN, k->stored_key))
        rc = 0;
    OPENSSL_cleanse(salted, sizeof salted);
    return rc == 0 ? 0 : PGW_ENOMEM;
}

typedef struct scram_keys {
    pgw__scram_keys_t base;
    uint8_t client_signature[SCRAM_KEY_LEN];
    uint8_t proof[SCRAM_KEY_LEN];
} scram_keys_t;

static int compute_keys(pgw__scram_t *s, const server_first_t *sf, const char *auth_msg,
                        size_t auth_len, scram_keys_t *k)
{
    if (pgw__scram_derive_keys(s->password, s->password_len, sf->salt, sf->salt_len, sf->iterations,
                               &k->base) != 0)
        return -1;
    if (hmac_sha256(k->base.stored_key, SCRAM_KEY_LEN, auth_msg, auth_len, k->client_signature) !=
            0 ||
        hmac_sha256(k->base.server_key, SCRAM_KEY_LEN, auth_msg, auth_len, s->server_signature) !=
            0)
        return -1;
    for (size_t i = 0; i < SCRAM_KEY_LEN; i++)
        k->proof[i] = k->base.client_key[i] ^ k->client_signature[i];
    return 0;
}

/* AuthMessage = client-first-bare "," server-first "," client-final-without-proof */
static char *auth_message(const pgw__scram_t *s, const char *server_first, size_t sf_len,
                          const char *final, size_t final_len, size_t *out_len)
{
    size_t len = s->client_first_bare_len + 1 + sf_len + 1 + final_len;
    char *m = pgw__malloc(s->alloc, len);
    if (!m) return NULL;
    char *w = m;
    memcpy(w, s->client_first_bare, s->client_first_bare_len), w += s->client_first_bare_len;
    *w++ = ',';
    memcpy(w, server_first, sf_len), w += sf_len;
    *w++ = ',';
    memcpy(w, final, final_len);
    *out_len = len;
    return m;
}

static int append_final(pgw_buf_t *out, const char *final, size_t final_len,
                        const uint8_t proof[SCRAM_KEY_LEN])
{
    char proof64[(SCRAM_KEY_LEN + 2) / 3 * 4];
    encode_base64(proof, SCRAM_KEY_LEN, proof64);
    size_t old_len = out->len;
    int rc = pgw_buf_append(out, final, final_len);
    if (rc == 0) rc = pgw_buf_append(out, ",p=", 3);
    if (rc == 0) rc = pgw_buf_append(out, proof64, sizeof proof64);
    if (rc != 0) out->len = old_len;
    return rc == PGW_ETOOBIG ? PGW_ENOMEM : rc;
}

static void wipe_password(pgw__scram_t *s)
{
    if (!s->password) return;
    OPENSSL_cleanse(s->password, s->password_len);
    pgw__free(s->alloc, s->password);
    s->password = NULL;
    s->password_len = 0;
}

int pgw__scram_client_final(pgw__scram_t *s, const uint8_t *server_first, size_t len,
                            pgw_buf_t *out)
{
    if (s->state != SCRAM_FIRST_SENT) return PGW_EINVAL;
    const char *msg = (const char *)server_first;
    server_first_t sf;
    if (len > SCRAM_MAX_MSG_LEN || memchr(msg, '\0', len) ||
        !parse_server_first(s, msg, len, &sf)) {
        s->state = SCRAM_FAILED;
        return PGW_EAUTH;
    }
    size_t final_len, auth_len;
    char *final = final_without_proof(s, &sf, &final_len);
    char *auth = final ? auth_message(s, msg, len, final, final_len, &auth_len) : NULL;
    int rc = PGW_ENOMEM;
    scram_keys_t keys;
    if (auth) {
        rc = compute_keys(s, &sf, auth, auth_len, &keys) == 0 ? 0 : PGW_ENOMEM;
        if (rc == 0) rc = append_final(out, final, final_len, keys.proof);
        OPENSSL_cleanse(&keys, sizeof keys);
    }
    pgw__free(s->alloc, final);
    pgw__free(s->alloc, auth);
    wipe_password(s);
    s->state = rc == 0 ? SCRAM_FINAL_SENT : SCRAM_FAILED;
    return rc;
}

/* ---- server-final-message ---- */

int pgw__scram_verify_final(pgw__scram_t *s, const uint8_t *server_final, size_t len)
{
    if (s->state != SCRAM_FINAL_SENT) return PGW_EAUTH;
    s->state = SCRAM_FAILED;
    const char *msg = (const char *)server_final;
    /* "e=<error>" and anything but exactly "v=<base64 signature>" fail. */
    size_t want = 2 + b64_encoded_len(SCRAM_KEY_LEN);
    if (len != want || msg[0] != 'v' || msg[1] != '=') return PGW_EAUTH;
    uint8_t sig[(SCRAM_KEY_LEN + 2) / 3 * 3];
    if (b64_decode(msg + 2, len - 2, sig) != SCRAM_KEY_LEN) return PGW_EAUTH;
    if (CRYPTO_memcmp(sig, s->server_signature, SCRAM_KEY_LEN) != 0) return PGW_EAUTH;
    s->state = SCRAM_DONE;
    return 0;
}

void pgw__scram_free(pgw__scram_t *s)
{
    if (!s) return;
    const pgw_allocator_t *alloc = s->alloc;
    wipe_password(s);
    if (s->cb_data) pgw__free(alloc, s->cb_data);
    pgw__free(alloc, s->client_first_bare);
    pgw__free(alloc, s->user);
    OPENSSL_cleanse(s, sizeof *s);
    pgw__free(alloc, s);
}
