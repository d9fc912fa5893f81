/*
 * libpgwire: TLS. What a connection's TLS layer negotiated, and the same
 * TLS engine for a driver that owns its socket (SANS-IO TLS below).
 *
 * pgw_tls_info_t is the counterpart of libpq's PQsslInUse / PQsslAttribute,
 * filled by pgw_conn_tls_info (conn.h) or pgw_tls_get_info. Nothing in this
 * header does I/O or needs OpenSSL's headers.
 *
 * Lifetimes: every string and view in a filled pgw_tls_info_t points into
 * the connection's TLS state and stays valid until the connection is closed
 * (or reconnects); copy what must outlive it.
 */
#ifndef PGWIRE_TLS_H
#define PGWIRE_TLS_H

#include "pgwire/common.h"
#include "pgwire/conninfo.h"

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

/*
 * SANS-IO TLS. For a driver that owns its socket (the session of session.h
 * run from another event loop, a binding): the TLS engine libpgwire's
 * connections use, with libpq's sslmode rules, over bytes the caller
 * moves. Nothing here touches a socket, a timer or a thread; the engine is
 * OpenSSL over in-memory buffers.
 *
 * One attempt on one TCP socket to host i of a parsed connection string:
 *
 *   1. pgw_tls_new(&t, ci, i, ...) reads ci's TLS settings (sslmode,
 *      sslrootcert, sslcert, sslkey, sslpassword, sslcrl, sslcrldir,
 *      sslcertmode, ssl_min/max_protocol_version, sslnegotiation, sslsni,
 *      sslkeylogfile) and says how the attempt starts (pgw_tls_start):
 *        PGW_TLS_START_PLAIN    no TLS on this attempt: sslmode=disable,
 *                               a Unix-domain socket host, or
 *                               sslmode=allow's first try (libpq's order)
 *        PGW_TLS_START_REQUEST  send SSLRequest (pgw_enc_ssl_request,
 *                               proto.h), read the reply, give it to
 *                               pgw_tls_answer
 *        PGW_TLS_START_DIRECT   sslnegotiation=direct: the handshake at
 *                               once, no SSLRequest
 *   2. pgw_tls_answer(t, bytes, n) with every byte read after SSLRequest:
 *      PGW_TLS_HANDSHAKE ('S': go on), PGW_TLS_PLAINTEXT ('N' and sslmode
 *      allows plaintext: the startup goes on in plaintext on this socket),
 *      or libpq's refusal.
 *   3. The handshake: call pgw_tls_handshake; on PGW_EAGAIN send what
 *      pgw_tls_output holds, read from the socket into pgw_tls_feed (or
 *      pgw_tls_input_space / pgw_tls_input_commit), and call again, until
 *      0. The server's certificate is checked there as sslmode says.
 *   4. Established: the session's output (pgw_session_pending_output) goes
 *      through pgw_tls_write, then pgw_tls_output to the socket; the
 *      socket's bytes go through pgw_tls_feed, then pgw_tls_read into the
 *      session's input buffer. Every call may leave output (handshake
 *      messages, key updates, alerts): send pgw_tls_output after each.
 *      SCRAM-SHA-256-PLUS takes its channel binding from
 *      pgw_tls_channel_binding (session.h, cb.channel_binding).
 *   5. Once the session's startup succeeded, pgw_tls_check_certificate
 *      applies sslcertmode=require (libpq checks it after authentication).
 *
 * When an attempt fails, libpq tries the same server again on a new socket
 * with the next method its sslmode allows: pgw_tls_next_method says which
 * (sslmode=prefer: plaintext after a failed handshake; allow: TLS after a
 * failed plaintext login).
 *
 * Errors carry libpq's message (pgw_tls_errmsg). Files are read by
 * pgw_tls_new, once per object. A pgw_tls_t belongs to one thread.
 */
typedef struct pgw_tls pgw_tls_t;

/* How an attempt starts (pgw_tls_start, pgw_tls_next_method). */
typedef enum pgw_tls_method {
    PGW_TLS_START_NONE = 0, /* pgw_tls_next_method: no method left */
    PGW_TLS_START_PLAIN = 1,
    PGW_TLS_START_REQUEST = 2,
    PGW_TLS_START_DIRECT = 3
} pgw_tls_method_t;

/* What pgw_tls_answer found in the reply to SSLRequest. */
enum { PGW_TLS_HANDSHAKE = 1, PGW_TLS_PLAINTEXT = 2 };

/*
 * A TLS engine for host i of ci (pgw_conninfo_host's numbering; the host
 * name is what verify-full checks and SNI sends, also with hostaddr).
 * alloc (NULL: default) allocates the engine and must outlive it; ci is
 * only read during the call (t keeps a copy of its TLS settings, the
 * sslpassword zeroed when t is freed). The TLS files are read at the first
 * TLS attempt, when the server accepted SSLRequest (or at once for
 * sslnegotiation=direct), as libpq reads them. On failure *out is NULL and
 * err[0..errlen) (when err is not NULL) holds libpq's message.
 * Returns 0, or:
 *   PGW_EINVAL   out or ci NULL
 *   PGW_EINDEX   i >= pgw_conninfo_nhosts(ci)
 *   PGW_ENOMEM
 *   and for sslnegotiation=direct the errors of building the context
 *   (pgw_tls_answer's PGW_ECONNINFO and PGW_ETLS).
 * With sslmode=disable or a Unix-domain socket host, every attempt is
 * plaintext and no file is read.
 */
PGW_EXTERN int pgw_tls_new(pgw_tls_t **out, const pgw_conninfo_t *ci, size_t i,
                           const pgw_allocator_t *alloc, char *err, size_t errlen);
/* Free t (no close_notify is queued: pgw_tls_shutdown first for an orderly
 * close). NULL is a no-op. */
PGW_EXTERN void pgw_tls_free(pgw_tls_t *t);

/* How the first attempt starts (above); PGW_TLS_START_NONE for NULL. */
PGW_EXTERN pgw_tls_method_t pgw_tls_start(const pgw_tls_t *t);

/*
 * The attempt that used method failed (the server refused the login, the
 * handshake failed, the socket broke): the method the next attempt on a new
 * socket to the same server uses, libpq's order for the sslmode, or
 * PGW_TLS_START_NONE when none is left (go on to the next host). Each
 * method is tried once per server: the engine remembers those that failed
 * until pgw_tls_reset. A method of PGW_TLS_START_REQUEST or _DIRECT also
 * resets the handshake state, so t can run the next TLS attempt.
 */
PGW_EXTERN pgw_tls_method_t pgw_tls_next_method(pgw_tls_t *t, pgw_tls_method_t failed);
/* Forget the failed methods and any handshake: the next connect to the
 * same server starts again from pgw_tls_start. (Another server of the list
 * has an engine of its own: the host name is checked and sent per host.) */
PGW_EXTERN void pgw_tls_reset(pgw_tls_t *t);

/*
 * The server's reply to SSLRequest: bytes[0..n) is everything read from the
 * socket after sending it (n >= 1; read with a buffer larger than one
 * byte, so that bytes stuffed behind the answer are seen and refused).
 * Returns PGW_TLS_HANDSHAKE, PGW_TLS_PLAINTEXT (sslmode allow or prefer),
 * or, with libpq's message in pgw_tls_errmsg:
 *   PGW_ETLS    'N' with sslmode require or stricter ("server does not
 *               support SSL, but SSL was required"), 'E' ("server sent an
 *               error response during SSL exchange"), or a TLS file that
 *               cannot be used (no root certificate for verify-ca /
 *               verify-full, an unreadable certificate, a key with group
 *               or world access, a wrong sslpassword)
 *   PGW_ECONNINFO  an invalid combination of TLS settings (protocol
 *               versions, sslrootcert=system below verify-full)
 *   PGW_EPROTO  bytes after the answer, or an answer that is neither
 *   PGW_ENOMEM
 *   PGW_EINVAL  t or bytes NULL, n 0
 *   PGW_EBUSY   t is not waiting for an answer (no SSLRequest attempt)
 * A refusal here ends the connect, as in libpq: no other method and no
 * other host is tried (pgw_tls_next_method says PGW_TLS_START_NONE); for
 * 'E' the server's unauthenticated error is neither read nor shown, and
 * there is no plaintext fallback (CVE-2024-10977).
 */
PGW_EXTERN int pgw_tls_answer(pgw_tls_t *t, const uint8_t *bytes, size_t n);

/*
 * One handshake step. Returns 0 (complete, every check sslmode asks for
 * passed), PGW_EAGAIN (send pgw_tls_output, feed what the socket reads,
 * call again), PGW_ETLS (the handshake or a check failed: libpq's message in
 * pgw_tls_errmsg), PGW_ECONNLOST (pgw_tls_input_eof came first), PGW_EBUSY
 * (no handshake to run: before pgw_tls_answer said PGW_TLS_HANDSHAKE on a
 * PGW_TLS_START_REQUEST attempt), PGW_EINVAL (NULL).
 */
PGW_EXTERN int pgw_tls_handshake(pgw_tls_t *t);

/*
 * Ciphertext in. pgw_tls_feed copies p[0..n) into the engine (what fits:
 * *used), pgw_tls_input_space / pgw_tls_input_commit let the socket read
 * straight into it (a view of *len writable bytes, then n <= *len of them
 * made visible). A byte that arrives before the handshake began was
 * stuffed in (CVE-2021-23222): PGW_EPROTO. Return 0, PGW_EPROTO, PGW_EBUSY
 * (no handshake begun or running), PGW_EINVAL. input_space returns NULL
 * when the buffer is full (pgw_tls_read first) or after input_eof.
 */
PGW_EXTERN int pgw_tls_feed(pgw_tls_t *t, const uint8_t *p, size_t n, size_t *used);
PGW_EXTERN uint8_t *pgw_tls_input_space(pgw_tls_t *t, size_t *len);
PGW_EXTERN int pgw_tls_input_commit(pgw_tls_t *t, size_t n);
/* The socket reached EOF: a step that needs more input returns
 * PGW_ECONNLOST. NULL: no-op. */
PGW_EXTERN void pgw_tls_input_eof(pgw_tls_t *t);

/* Ciphertext out: a view of the bytes to send (NULL, *len 0 when none),
 * unchanged until pgw_tls_output_consumed or pgw_tls_free; it may be only
 * the first part of what is pending, so call again after consuming. */
PGW_EXTERN const uint8_t *pgw_tls_output(pgw_tls_t *t, size_t *len);
/* n bytes of the last view were sent. */
PGW_EXTERN void pgw_tls_output_consumed(pgw_tls_t *t, size_t n);

/*
 * Plaintext out: decrypt into buf[0..cap) as many complete records as fit,
 * *n bytes. Returns 0 (*n > 0), PGW_EAGAIN (no complete record: feed more),
 * PGW_ECONNLOST (the server closed the stream), PGW_ETLS, PGW_EBUSY (the
 * handshake is not complete), PGW_EINVAL.
 */
PGW_EXTERN int pgw_tls_read(pgw_tls_t *t, uint8_t *buf, size_t cap, size_t *n);
/*
 * Plaintext in: encrypt p[0..len) as far as the output buffer allows,
 * *written bytes (send pgw_tls_output, then call again with the rest, the
 * same bytes unchanged though they may have moved). Returns 0, PGW_ETLS,
 * PGW_ECONNLOST, PGW_EBUSY (handshake not complete), PGW_EINVAL.
 */
PGW_EXTERN int pgw_tls_write(pgw_tls_t *t, const uint8_t *p, size_t len, size_t *written);
/* Queue close_notify (send pgw_tls_output before closing the socket).
 * Returns 0, PGW_EBUSY (handshake not complete) or PGW_EINVAL. */
PGW_EXTERN int pgw_tls_shutdown(pgw_tls_t *t);

/* tls-server-end-point channel binding data for SCRAM-SHA-256-PLUS: a
 * view of *len bytes inside t, valid until pgw_tls_free or the next
 * handshake. Returns 0, PGW_EBUSY (handshake not complete), PGW_ENOTSUP (the
 * certificate's signature has no single hash, e.g. Ed25519), PGW_EINVAL. */
PGW_EXTERN int pgw_tls_channel_binding(pgw_tls_t *t, const uint8_t **data, size_t *len);
/* sslcertmode=require, checked once the login succeeded (as libpq does):
 * 0, or PGW_ETLS ("server did not request an SSL certificate", "server
 * accepted connection without a valid SSL certificate"; pgw_tls_errmsg).
 * 0 for the other modes. PGW_EINVAL for NULL. */
PGW_EXTERN int pgw_tls_check_certificate(pgw_tls_t *t);
/* What the handshake negotiated (in_use 0 before it completed); strings
 * point into t, valid until pgw_tls_free or the next handshake. Returns 0
 * or PGW_EINVAL. */
PGW_EXTERN int pgw_tls_get_info(pgw_tls_t *t, pgw_tls_info_t *out);
/* The last error's message, libpq's words; "" when none, never NULL (also
 * for NULL t). Valid until the next call on t. */
PGW_EXTERN const char *pgw_tls_errmsg(const pgw_tls_t *t);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_TLS_H */
