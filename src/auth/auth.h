/*
 * Authentication computations: MD5 password hashing and the client side of
 * SCRAM-SHA-256 / SCRAM-SHA-256-PLUS (RFC 5802, RFC 7677), with SASLprep of
 * the password (RFC 4013). OpenSSL crypto only; no I/O. Internal.
 */
#ifndef PGW_AUTH_H
#define PGW_AUTH_H

#include "pgwire/common.h"

/* "md5" + md5hex(md5hex(password || user) || salt), NUL-terminated, in out[36].
 * Returns 0 or PGW_ENOMEM (crypto failure). */
int pgw__md5_password(const char *user, const char *password, const uint8_t salt[4], char out[36]);

/* "md5" + md5hex(password || user), NUL-terminated, in out[36]: the MD5
 * verifier the server stores (libpq's PQencryptPassword). Returns 0 or
 * PGW_ENOMEM (crypto failure). */
int pgw__md5_verifier(const char *user, const char *password, char out[36]);

/* n cryptographically strong random bytes into out (OpenSSL's RAND_bytes).
 * Returns 0, PGW_ENOMEM (the generator failed) or PGW_EINVAL (n too big). */
int pgw__random_bytes(uint8_t *out, size_t n);

/* n unpredictable bytes into out for what must differ between sessions but
 * is no secret (the statement cache's name nonce): the kernel's generator
 * (getentropy) where there is one, since the first use of OpenSSL's in a
 * process costs milliseconds (loading its configuration, seeding its
 * DRBG); else, or when it fails, pgw__random_bytes. Returns 0, PGW_ENOMEM
 * (no generator gave them) or PGW_EINVAL (n above 256). */
int pgw__nonce_bytes(uint8_t *out, size_t n);

typedef struct pgw__scram pgw__scram_t;

/* Start a SCRAM exchange. mechanism is "SCRAM-SHA-256" or
 * "SCRAM-SHA-256-PLUS"; for -PLUS, cb_data/cb_len are the tls-server-end-point
 * channel binding data (copied). For plain SCRAM with a TLS transport that
 * could bind but the server did not offer -PLUS, set client_supports_cb to 1
 * so the GS2 header says "y" (downgrade detection). The password is
 * SASLprep'ed (used raw if it is not valid UTF-8 or prohibited, as libpq does).
 * Returns 0, PGW_ENOMEM or PGW_EINVAL. */
int pgw__scram_new(pgw__scram_t **out, const pgw_allocator_t *alloc, const char *password,
                   const char *mechanism, const uint8_t *cb_data, size_t cb_len,
                   int client_supports_cb);
/* Test hook: use nonce (printable ASCII without ',', at most 64 characters)
 * instead of the 18 random bytes (base64) drawn by pgw__scram_new. Only
 * before pgw__scram_client_first. Returns 0 or PGW_EINVAL. */
int pgw__scram_set_nonce(pgw__scram_t *s, const char *nonce);
/* Test hook: put user (escaped as a saslname) in client-first-message instead
 * of the empty name PostgreSQL expects, to check against RFC test vectors.
 * Only before pgw__scram_client_first. Returns 0, PGW_EINVAL or PGW_ENOMEM. */
int pgw__scram_set_user(pgw__scram_t *s, const char *user);
/* client-first-message, appended to out. Returns 0, PGW_ENOMEM, or
 * PGW_EINVAL if called twice. */
int pgw__scram_client_first(pgw__scram_t *s, pgw_buf_t *out);
/* Process server-first-message and append client-final-message to out.
 * Returns 0, PGW_EAUTH (malformed message, nonce mismatch, iteration count
 * out of range), PGW_ENOMEM, or PGW_EINVAL if not right after
 * pgw__scram_client_first. The password is wiped once this has run. */
int pgw__scram_client_final(pgw__scram_t *s, const uint8_t *server_first, size_t len,
                            pgw_buf_t *out);
/* Verify server-final-message. Returns 0 only if the server signature is
 * present and correct; PGW_EAUTH otherwise (including an "e=" error). */
int pgw__scram_verify_final(pgw__scram_t *s, const uint8_t *server_final, size_t len);
/* Wipe secrets and free. NULL is a no-op. */
void pgw__scram_free(pgw__scram_t *s);

/* The password as the server hashes it: SASLprep'ed, or as it is when
 * SASLprep refuses it (invalid UTF-8, prohibited output), as libpq and the
 * server do. *out is a new NUL-terminated string the caller wipes and frees.
 * Returns 0 or PGW_ENOMEM. */
int pgw__scram_prepare_password(const pgw_allocator_t *alloc, const char *password, char **out);

/* The keys of RFC 5802 section 3 for SCRAM-SHA-256:
 * SaltedPassword = Hi(password, salt, iterations), ClientKey =
 * HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey), ServerKey =
 * HMAC(SaltedPassword, "Server Key"). The caller wipes them after use. */
typedef struct pgw__scram_keys {
    uint8_t client_key[32];
    uint8_t stored_key[32];
    uint8_t server_key[32];
} pgw__scram_keys_t;
/* Returns 0, or PGW_ENOMEM (a crypto failure, or a length beyond INT_MAX). */
int pgw__scram_derive_keys(const char *password, size_t password_len, const uint8_t *salt,
                           size_t salt_len, uint32_t iterations, pgw__scram_keys_t *k);

/* Decode one UTF-8 sequence at s (NUL-terminated). Returns its length, or 0
 * if it is invalid (overlong, surrogate, above U+10FFFF, truncated). */
size_t pgw__utf8_decode(const unsigned char *s, uint32_t *cp);
/* Encode cp (at most U+10FFFF) into out[0..4); returns its length. */
size_t pgw__utf8_encode(uint32_t cp, char *out);

/* SASLprep (RFC 4013, stringprep profile) of a UTF-8 string into a newly
 * allocated NUL-terminated string, as PostgreSQL's pg_saslprep does it (the
 * prohibited and bidi checks over the mapped input, before NFKC). Returns 0,
 * PGW_EENCODING (invalid UTF-8), PGW_EINVAL (a prohibited character, a bidi
 * violation, a non-ASCII input that maps to nothing) or PGW_ENOMEM. */
int pgw__saslprep(const pgw_allocator_t *alloc, const char *in, char **out);

#endif
