/*
 * The client side of GSS-API (RFC 2743) through the system's library (MIT
 * Kerberos' libgssapi_krb5, found at configure time): a security context
 * towards the service krbsrvname@host, used for GSSAPI authentication
 * (AuthenticationGSS) and for GSS encryption (wrap and unwrap of the
 * length-prefixed packets of fe-secure-gssapi.c). Internal.
 *
 * No I/O of its own. The library may contact the KDC inside
 * pgw__gss_step (a TGS request for a service ticket that is not cached
 * yet) and blocks meanwhile, as libpq does; it reads its configuration
 * and credentials from KRB5_CONFIG, KRB5CCNAME and friends.
 *
 * Built without GSS-API (PGW_HAVE_GSSAPI undefined), pgw__gss_available
 * is 0 and every other function fails with PGW_ENOTSUP: the connection
 * then refuses gssencmode=require and GSS authentication as libpq built
 * without GSSAPI does.
 *
 * Memory: this object comes from the allocator given; the GSS library
 * allocates its own (tokens, names, contexts) with malloc, which a
 * library cannot redirect.
 */
#ifndef PGW_AUTH_GSS_H
#define PGW_AUTH_GSS_H

#include "pgwire/common.h"

/* The GSS encryption protocol's largest packet, its 4-byte length
 * included, in either direction (PQ_GSS_SEND_BUFFER_SIZE and
 * PQ_GSS_RECV_BUFFER_SIZE of libpq: part of the protocol). */
#define PGW__GSS_MAX_PACKET 16384u

/* 1 when the library was built with GSS-API, else 0. */
int pgw__gss_available(void);

/* Credentials for initiating a context (the ticket cache's). */
typedef struct pgw__gss_cred pgw__gss_cred_t;

/* libpq's pg_GSS_have_cred_cache: the credentials when they can be
 * acquired (a ticket cache with a usable ticket), else NULL (also without
 * GSS-API). Free with pgw__gss_cred_free, or give them to pgw__gss_new, as
 * libpq uses the credentials it checked for its context. */
pgw__gss_cred_t *pgw__gss_cred_acquire(void);
void pgw__gss_cred_free(pgw__gss_cred_t *cred);

typedef struct pgw__gss pgw__gss_t;

typedef struct pgw__gss_config {
    const char *service;   /* krbsrvname ("postgres") */
    const char *host;      /* the server's host name as given (libpq's PQhost) */
    int delegate;          /* gssdelegation=1: ask to forward the credentials */
    int encrypt;           /* for GSS encryption: confidentiality, integrity,
                              replay and sequence protection are required */
    pgw__gss_cred_t *cred; /* taken over (freed on failure too); NULL: the
                              default credentials */
} pgw__gss_config_t;

/* A context to establish with pgw__gss_step: imports "service@host" as a
 * host-based service name. Returns 0, PGW_ENOTSUP (no GSS-API), PGW_EAUTH
 * (no host: "host name must be specified", or the name was refused:
 * "GSSAPI name import error: ...") or PGW_ENOMEM; libpq's message in
 * err[0..errlen). */
int pgw__gss_new(pgw__gss_t **out, const pgw__gss_config_t *cfg, const pgw_allocator_t *alloc,
                 char *err, size_t errlen);

/*
 * One step of gss_init_sec_context: in[0..inlen) is the server's token
 * (NULL and 0 for the first step). The token to send, if any, is appended
 * to out. Returns 1 while the exchange goes on (send what was appended,
 * then wait for the server's next token), 0 once the context is
 * established (out may have received a last token), PGW_EAUTH (libpq's
 * message: errprefix, then the library's major and minor status texts:
 * "GSSAPI continuation error: Unspecified GSS failure.  Minor code may
 * provide more information: Server not found in Kerberos database"),
 * PGW_ENOMEM or PGW_ENOTSUP.
 */
int pgw__gss_step(pgw__gss_t *g, const uint8_t *in, size_t inlen, pgw_buf_t *out,
                  const char *errprefix, char *err, size_t errlen);

/* 1 once pgw__gss_step returned 0. */
int pgw__gss_established(const pgw__gss_t *g);

/* GSS encryption, once established: the largest plaintext whose wrapped
 * token fits in a packet (libpq's gss_wrap_size_limit for
 * PGW__GSS_MAX_PACKET - 4). Returns 0 or PGW_EAUTH ("GSSAPI size check
 * error: ..."). */
int pgw__gss_wrap_limit(pgw__gss_t *g, size_t *max_plain, char *err, size_t errlen);

/* Encrypt p[0..n) (n at most the wrap limit) and append the packet (the
 * token's length as 4 bytes in network order, then the token) to out.
 * Returns 0, PGW_ENOMEM, or PGW_EPROTO with libpq's message ("GSSAPI wrap
 * error: ...", "outgoing GSSAPI message would not use confidentiality",
 * "client tried to send oversize GSSAPI packet (...)"). */
int pgw__gss_wrap(pgw__gss_t *g, const uint8_t *p, size_t n, pgw_buf_t *out, char *err,
                  size_t errlen);

/* Decrypt one packet's token p[0..n). On success *plain and *plain_len
 * view the plaintext, which stays valid until the next pgw__gss_unwrap or
 * pgw__gss_free. Returns 0 or PGW_EPROTO with libpq's message ("GSSAPI
 * unwrap error: ...", "incoming GSSAPI message did not use
 * confidentiality"). */
int pgw__gss_unwrap(pgw__gss_t *g, const uint8_t *p, size_t n, const uint8_t **plain,
                    size_t *plain_len, char *err, size_t errlen);

/* The client's principal name (e.g. "alice@EXAMPLE.COM") of an
 * established context into buf, or "" when unknown. */
void pgw__gss_principal(pgw__gss_t *g, char *buf, size_t len);

/* Delete the context and free. NULL is a no-op. */
void pgw__gss_free(pgw__gss_t *g);

#endif
