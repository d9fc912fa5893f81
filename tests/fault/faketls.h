/*
 * faketls: a TLS-speaking stand-in for a PostgreSQL server, for tests of
 * what a real server cannot be made to do (answer SSLRequest with stuffed
 * bytes, an ErrorResponse or garbage instead of a handshake, direct TLS
 * with or without ALPN) and for serving the real server behind a chosen
 * certificate (wrong host, self-signed, expired).
 *
 * A thread listens on 127.0.0.1 (ephemeral port) and serves every
 * connection in a thread of its own (at most FAKETLS_MAX_CONNS):
 *   - SSLRequest: send `answer` (e.g. "S", "N", "S" + junk, "E" + an
 *     ErrorResponse); after an 'S', send `garbage` instead of a handshake
 *     if set, else handshake with cert/key (and ALPN, see alpn);
 *   - a TLS ClientHello first (sslnegotiation=direct): handshake at once;
 *   - a plaintext startup packet (a retry without TLS, or sslmode=allow):
 *     relayed to `backend` (or backend_port) if set (else the connection is
 *     closed), unless
 *     reject_plain;
 * and after a completed handshake, the decrypted stream is relayed to
 * `backend` (the real server's unix socket path), unless reject_tls (the
 * startup is answered with a FATAL ErrorResponse, as pg_hba.conf's
 * hostnossl would) or backend is NULL (closed).
 *
 * The first 8 bytes each connection sent are recorded. Every blocking wait
 * gives up after 10 s. Strings in the script must outlive faketls_stop.
 */
#ifndef PGW_TESTS_FAKETLS_H
#define PGW_TESTS_FAKETLS_H

#include <stddef.h>
#include <stdint.h>

#define FAKETLS_MAX_CONNS 128

typedef struct faketls_script {
    const void *answer; /* sent after SSLRequest; NULL: "S" */
    size_t answer_len;
    const void *garbage; /* sent after 'S' instead of a handshake */
    size_t garbage_len;
    const char *cert, *key; /* PEM files of the server certificate */
    /* Served to every connection after the first instead (NULL: cert,
     * key): a cancel connection meets another certificate than its
     * session's. */
    const char *later_cert, *later_key;
    const char *alpn;      /* ALPN protocol to select; NULL: none */
    const char *backend;   /* unix socket path to relay to; NULL: none */
    uint16_t backend_port; /* or a port on 127.0.0.1 (e.g. a fakepg) */
    int reject_tls;        /* answer a startup over TLS with FATAL */
    int reject_plain;      /* answer a plaintext startup with FATAL */
} faketls_script_t;

typedef struct faketls faketls_t;

/* Listen and start serving. Returns NULL on failure. */
faketls_t *faketls_start(const faketls_script_t *s);
uint16_t faketls_port(const faketls_t *f);
/* Connections accepted so far. */
int faketls_accepts(faketls_t *f);
/* Connections whose TLS handshake completed. */
int faketls_handshakes(faketls_t *f);
/* The first (up to) 8 bytes connection i sent; returns how many. */
size_t faketls_first_bytes(faketls_t *f, int i, uint8_t out[8]);
/* Write a fresh self-signed certificate (CN and DNS SAN localhost, IP SAN
 * 127.0.0.1, P-256) and its key as dir/name.crt and dir/name.key, for
 * fault tests that have no cluster. Returns 0 or -1. */
int faketls_make_cert(const char *dir, const char *name);
/* Stop listening, cut every connection, join the threads, free. */
void faketls_stop(faketls_t *f);

#endif
