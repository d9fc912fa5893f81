/*
 * What the TLS engine's files share: the context structure and message
 * helpers. Only src/tls includes this (and OpenSSL's headers).
 */
#ifndef PGW_TLS_INTERNAL_H
#define PGW_TLS_INTERNAL_H

#include "tls/tls.h"
#include "util/internal.h"

#include <openssl/ssl.h>
#include <stdatomic.h>

enum pgw__tls_setting {
    PGW__TLS_SET_SSLMODE,
    PGW__TLS_SET_ROOTCERT,
    PGW__TLS_SET_CRL,
    PGW__TLS_SET_CRLDIR,
    PGW__TLS_SET_CERT,
    PGW__TLS_SET_KEY,
    PGW__TLS_SET_PASSWORD,
    PGW__TLS_SET_CERTMODE,
    PGW__TLS_SET_MIN_PROTO,
    PGW__TLS_SET_MAX_PROTO,
    PGW__TLS_SET_KEYLOG,
    PGW__TLS_SET_COUNT
};

struct pgw__tls_ctx {
    const pgw_allocator_t *alloc;
    atomic_long refs;
    SSL_CTX *ssl_ctx;
    pgw__sslmode_t mode;
    char *settings[PGW__TLS_SET_COUNT]; /* copies; NULL for unset or "" */
    uint64_t files_stamp;               /* pgw__tls_ctx_fresh: the files as read */
};

/* sslkeylogfile (libpq 18): OpenSSL's key log callback, set on contexts
 * that have a key log file. Appends each line to the file (created with
 * mode 0600); a failure is recorded as the session's warning
 * (pgw__tls_warning). */
void pgw__tls_keylog(const SSL *ssl, const char *line);
/* Record a warning on the session of ssl (session.c). */
void pgw__tls_warn(const SSL *ssl, const char *fmt, const char *path, int err);

/* libpq's SSLerrmessage: the reason of OpenSSL error code e, "no SSL error
 * reported" for 0, else "SSL error code %lu". Writes into buf[0..n). */
const char *pgw__tls_ssl_errstr(unsigned long e, char *buf, size_t n);

/*
 * verify-full's host name check against the peer certificate, libpq's rules:
 * SAN dNSName and iPAddress entries first; the CN only when no SAN of the
 * host's kind (IP address or DNS name) exists. Returns 1 (match), 0 (no
 * match: the message names the certificate's first name) or -1 (malformed
 * certificate name); the message goes to err.
 */
int pgw__tls_check_host(X509 *peer, const char *host, char *err, size_t errlen);

/* 1 if host is an IP literal: IPv4 in any form inet_aton accepts, or IPv6. */
int pgw__tls_is_ip_literal(const char *host);

/* libpq's certificate-name match of one name (namelen bytes, maybe with an
 * embedded NUL) against host: case-insensitive equality, or a leading "*."
 * wildcard matching exactly one label. Returns 1, 0, or -1 for an embedded
 * NUL (message in err). */
int pgw__tls_name_matches(const char *name, size_t namelen, const char *host, char *err,
                          size_t errlen);

#endif
