/*
 * libpgwire: what a connection's TLS layer negotiated.
 *
 * The counterpart of libpq's PQsslInUse / PQsslAttribute: one struct filled
 * by the connection (the function that fills it, pgw_conn_tls_info, is
 * declared in conn.h). Only types live here; nothing in this header does
 * I/O or needs OpenSSL's headers.
 *
 * Lifetimes: every string and view in a filled pgw_tls_info_t points into
 * the connection's TLS state and stays valid until the connection is closed
 * (or reconnects); copy what must outlive it.
 */
#ifndef PGWIRE_TLS_H
#define PGWIRE_TLS_H

#include "pgwire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the TLS layer negotiated, as pgw_conn_tls_info fills it. */
typedef struct pgw_tls_info {
    /* 1 if the connection is encrypted with TLS; when 0, every other field is
     * zero/NULL. (libpq: PQsslInUse.) */
    int in_use;
    /* "OpenSSL" (libpq's "library" attribute). */
    const char *library;
    /* Protocol version: "TLSv1.2", "TLSv1.3" (libpq's "protocol"). */
    const char *protocol;
    /* Cipher suite in OpenSSL's naming, e.g. "TLS_AES_256_GCM_SHA384"
     * (libpq's "cipher"). */
    const char *cipher;
    /* Symmetric key size in bits (libpq's "key_bits"). */
    int key_bits;
    /* Always "off": TLS compression is never enabled (libpq's
     * "compression"; sslcompression is accepted and ignored). */
    const char *compression;
    /* The ALPN protocol the server selected ("postgresql"), or NULL if the
     * server did not answer ALPN (libpq's "alpn"). */
    const char *alpn;
    /* The server certificate's subject, RFC 2253 form, NUL-terminated
     * (NULL if the server sent no certificate). */
    const char *peer_subject;
    /* The server certificate, DER-encoded (p NULL, len 0 if none). */
    pgw_view_t peer_cert_der;
} pgw_tls_info_t;

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_TLS_H */
