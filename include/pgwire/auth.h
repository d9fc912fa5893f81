/*
 * libpgwire: password verifiers for ALTER ROLE ... PASSWORD.
 *
 * The counterpart of libpq's PQencryptPasswordConn for scram-sha-256: the
 * client computes the verifier, so the clear-text password never reaches
 * the server or its logs. Nothing here does I/O.
 *
 * Conventions: functions return 0 or a negative PGW_E* code (common.h); a
 * NULL argument where a value is required is PGW_EINVAL, never a crash.
 */
#ifndef PGWIRE_AUTH_H
#define PGWIRE_AUTH_H

#include "pgwire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PostgreSQL's default scram_iterations. */
#define PGW_SCRAM_ITERATIONS_DEFAULT 4096
/* Salt drawn when none is given, in bytes (PostgreSQL's SCRAM_DEFAULT_SALT_LEN). */
#define PGW_SCRAM_SALT_LEN_DEFAULT 16
/* Longest salt accepted, in bytes. */
#define PGW_SCRAM_SALT_LEN_MAX 64
/* Room for any verifier this library writes, NUL included. */
#define PGW_SCRAM_VERIFIER_MAX 256

/*
 * Write the SCRAM-SHA-256 verifier of password into out[0..outlen), NUL-
 * terminated, in the form the server stores in pg_authid.rolpassword:
 *   SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>
 * Quote it as a literal (pgw_escape_literal) in
 *   ALTER ROLE name PASSWORD '<verifier>'
 * and the server stores it unchanged.
 *
 * password   UTF-8; SASLprep'ed first, as the server does. A password that
 *            SASLprep refuses (invalid UTF-8, prohibited characters) is used
 *            as its raw bytes, as the server does too, so the verifier
 *            always matches what the server would compute from it.
 * iterations 0 for PGW_SCRAM_ITERATIONS_DEFAULT, else 1..INT_MAX.
 * salt       salt_len bytes (1..PGW_SCRAM_SALT_LEN_MAX); NULL (with
 *            salt_len 0) draws PGW_SCRAM_SALT_LEN_DEFAULT random bytes
 *            from OpenSSL's CSPRNG. A fixed salt is for tests: reusing a
 *            salt across passwords or roles weakens the verifier.
 * alloc      for the temporary SASLprep copy (NULL: the default); every
 *            temporary holding password material is wiped before it is
 *            freed.
 *
 * Returns 0 or one of:
 *   PGW_EINVAL  out or password NULL, iterations negative, salt_len out of
 *               range (or non-zero with a NULL salt), or outlen too small
 *               (PGW_SCRAM_VERIFIER_MAX always suffices); out is then ""
 *               when outlen > 0
 *   PGW_ENOMEM  out of memory, or the crypto library failed (including the
 *               random generator)
 */
PGW_EXTERN int pgw_scram_verifier(char *out, size_t outlen, const char *password, int iterations,
                                  const uint8_t *salt, size_t salt_len,
                                  const pgw_allocator_t *alloc);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_AUTH_H */
