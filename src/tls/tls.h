/*
 * The TLS engine: OpenSSL over an in-memory BIO pair, with libpq's sslmode
 * semantics. Internal; the conn layer drives it, nothing here does I/O.
 *
 * Two objects:
 *   - pgw__tls_ctx_t, the reference-counted client context built from the
 *     settings that are the same for every connection of a configuration
 *     (sslmode, root certificate, CRL, client certificate and key, protocol
 *     range). Building one reads files and parses certificates, which costs
 *     far more than a handshake's first step, so a connection, a pool or a
 *     client keeps one and reuses it for every connection whose settings
 *     pgw__tls_ctx_matches. Files are read once, when the context is built:
 *     to pick up a rotated certificate, build a new context.
 *   - pgw__tls_t, one TLS session for one connection: the SSL object, its
 *     host name (for SNI and verify-full), and the two byte streams.
 *
 * Byte flow (no copy beyond decryption/encryption):
 *   socket -> pgw__tls_input_space / pgw__tls_input_commit   (ciphertext in:
 *             the socket reads straight into the engine's ring buffer)
 *   engine -> pgw__tls_read into the caller's buffer        (plaintext out:
 *             decrypted straight into the session's read chunk)
 *   caller -> pgw__tls_write                               (plaintext in)
 *   engine -> pgw__tls_output / pgw__tls_output_consumed  (ciphertext out:
 *             a view of the ring buffer, stable until consumed, so it can be
 *             handed to one write(2) or uv_write per loop turn)
 *
 * Every step may produce output (handshake messages, TLS 1.3 key updates,
 * alerts): after each call, the caller flushes pgw__tls_output if it is not
 * empty.
 *
 * Memory: the engine's own structures come from the pgw allocator given at
 * creation. OpenSSL's internal allocations (SSL_CTX, SSL, the BIO ring
 * buffers, certificates) go through OpenSSL's process-wide allocator
 * (CRYPTO_set_mem_functions), which a library cannot redirect per object.
 *
 * Threads: a pgw__tls_t belongs to its connection's thread. A context may be
 * shared by connections on different threads: its reference count is atomic
 * and OpenSSL's SSL_CTX is safe to use concurrently once configured.
 */
#ifndef PGW_TLS_TLS_H
#define PGW_TLS_TLS_H

#include "pgwire/common.h"
#include "pgwire/tls.h"

#include <stdbool.h>

/* libpq's sslmode values that run TLS ("disable" never builds an engine). */
typedef enum pgw__sslmode {
    PGW__SSLMODE_DISABLE,
    PGW__SSLMODE_ALLOW,
    PGW__SSLMODE_PREFER,
    PGW__SSLMODE_REQUIRE,
    PGW__SSLMODE_VERIFY_CA,
    PGW__SSLMODE_VERIFY_FULL
} pgw__sslmode_t;

/* Parse an sslmode keyword. Returns 0 and sets *out, or PGW_EINVAL for an
 * unknown value (NULL or "" mean libpq's default, "prefer"). */
int pgw__sslmode_parse(const char *s, pgw__sslmode_t *out);

/* Room for every message the engine writes (paths included). */
#define PGW__TLS_ERRLEN 1024

/*
 * Context settings, each a libpq connection option as the conninfo parser
 * left it (NULL or "" mean unset, with libpq's meaning of unset):
 *   sslmode        allow, prefer, require, verify-ca, verify-full; unset:
 *                  prefer, or verify-full with sslrootcert=system (libpq 16)
 *   sslrootcert    a PEM file, or "system" for OpenSSL's default store
 *                  (then sslmode must be verify-full); unset:
 *                  $HOME/.postgresql/root.crt if it exists. When a root is
 *                  loaded, the chain is verified in every mode (libpq's rule:
 *                  require with a root certificate verifies the chain); with
 *                  none, verify-ca and verify-full fail.
 *   sslcrl         a PEM CRL file; sslcrldir a directory of hashed CRLs.
 *                  Both unset: $HOME/.postgresql/root.crl. A CRL that cannot
 *                  be loaded is ignored, as libpq does.
 *   sslcert        client certificate chain (PEM); unset:
 *                  $HOME/.postgresql/postgresql.crt if it exists.
 *   sslkey         its private key (PEM or DER), read only when a
 *                  certificate was loaded; unset:
 *                  $HOME/.postgresql/postgresql.key. The key file must be a
 *                  regular file with mode 0600 or less, or 0640 or less if
 *                  owned by root (libpq's rule).
 *   sslpassword    decrypts an encrypted key; unset: an empty password (the
 *                  library never prompts).
 *   sslcertmode    disable (never send a certificate), allow, require.
 *   ssl_min_protocol_version / ssl_max_protocol_version
 *                  TLSv1, TLSv1.1, TLSv1.2, TLSv1.3; min unset: TLSv1.2
 *                  (libpq's default), "" for no bound; max unset: no bound.
 *   sslkeylogfile  (libpq 18) a file the secrets of every handshake are
 *                  appended to, in NSS key log format (Wireshark), opened
 *                  for each line with O_APPEND and created with mode 0600,
 *                  libpq's rules; a failure is the session's warning
 *                  (pgw__tls_warning), never an error.
 * The strings are only read during pgw__tls_ctx_new; the context keeps its
 * own copies for pgw__tls_ctx_matches.
 */
typedef struct pgw__tls_config {
    const char *sslmode;
    const char *sslrootcert;
    const char *sslcrl;
    const char *sslcrldir;
    const char *sslcert;
    const char *sslkey;
    const char *sslpassword;
    const char *sslcertmode;
    const char *min_protocol;
    const char *max_protocol;
    const char *keylogfile;
} pgw__tls_config_t;

typedef struct pgw__tls_ctx pgw__tls_ctx_t;

/*
 * Build a context with one reference. alloc (NULL: default) allocates the
 * context's own structure and must outlive it. On failure *out is NULL and,
 * if err is not NULL, err[0..errlen) holds libpq's message.
 * Returns 0 or:
 *   PGW_EINVAL  cfg is NULL, a value is invalid (unknown sslmode or protocol
 *               version, min above max, sslrootcert=system with a weaker mode
 *               than verify-full, sslmode disable)
 *   PGW_ETLS    a file cannot be used (missing root certificate for
 *               verify-*, unreadable certificate, key with group/world
 *               access, wrong sslpassword, key not matching the certificate)
 *   PGW_ENOMEM  out of memory (ours or OpenSSL's)
 */
int pgw__tls_ctx_new(pgw__tls_ctx_t **out, const pgw__tls_config_t *cfg,
                     const pgw_allocator_t *alloc, char *err, size_t errlen);
/* Take one more reference (for another connection). Returns ctx. */
pgw__tls_ctx_t *pgw__tls_ctx_ref(pgw__tls_ctx_t *ctx);
/* Drop a reference; the last one frees the context. NULL is a no-op. */
void pgw__tls_ctx_unref(pgw__tls_ctx_t *ctx);
/* 1 if a context built from cfg would be configured exactly like ctx (every
 * setting string equal, NULL and "" alike), so ctx can be reused; else 0
 * (also when either is NULL). */
int pgw__tls_ctx_matches(const pgw__tls_ctx_t *ctx, const pgw__tls_config_t *cfg);
/* 1 if the files ctx read (root certificate, CRL file and directory,
 * client certificate and key, at the paths its settings and $HOME give
 * now) are unchanged since it was built: same existence, inode, size and
 * modification time. 0 otherwise (rebuild to pick them up), or for NULL.
 * Costs a few stat() calls. */
int pgw__tls_ctx_fresh(const pgw__tls_ctx_t *ctx);
/* The context's sslmode (PGW__SSLMODE_DISABLE for NULL). */
pgw__sslmode_t pgw__tls_ctx_sslmode(const pgw__tls_ctx_t *ctx);

/*
 * Per-connection settings:
 *   host    the host name verify-full checks and SNI sends: libpq's `host`,
 *           also when `hostaddr` gives the address to connect to. NULL or ""
 *           is allowed except under verify-full (the handshake then fails).
 *   sni     1 (libpq's default): send host as SNI unless it looks like an
 *           IP address (libpq's test: only digits and dots, or a ':').
 *   direct  1 for sslnegotiation=direct: the server must then answer the
 *           ALPN "postgresql" the engine always offers (as libpq 17 does).
 *   ring_size  bytes of each ciphertext ring buffer (input and output);
 *           0: 64 KiB. At least one TLS record (16 KiB + 256) is sensible.
 */
typedef struct pgw__tls_conn_config {
    const char *host;
    int sni;
    int direct;
    size_t ring_size;
} pgw__tls_conn_config_t;

typedef struct pgw__tls pgw__tls_t;

/*
 * Start a session on ctx (which it references until pgw__tls_free). host is
 * copied. Nothing is produced yet: the first pgw__tls_handshake writes the
 * ClientHello.
 * Returns 0, PGW_EINVAL (NULL ctx or cfg), PGW_ETLS (OpenSSL refused the SNI
 * name or ALPN; message in err if not NULL) or PGW_ENOMEM.
 */
int pgw__tls_new(pgw__tls_t **out, pgw__tls_ctx_t *ctx, const pgw__tls_conn_config_t *cfg,
                 const pgw_allocator_t *alloc, char *err, size_t errlen);
/* Free the session (and its context reference). No close_notify is queued:
 * call pgw__tls_shutdown first for an orderly close. NULL is a no-op. */
void pgw__tls_free(pgw__tls_t *t);

/*
 * One handshake step. Returns:
 *   0           the handshake is complete and every check passed: chain
 *               (when a root is loaded), host name (verify-full), ALPN
 *               (direct), certificate requested (sslcertmode=require is
 *               checked later by the caller, see pgw__tls_cert_requested)
 *   PGW_EAGAIN  flush pgw__tls_output, then feed input and call again
 *   PGW_ETLS    fatal: the message (libpq's words) is pgw__tls_errmsg
 *   PGW_ECONNLOST  pgw__tls_input_eof was signalled mid-handshake
 *   PGW_EINVAL  t is NULL
 * After 0, further calls return 0. After an error, the same error.
 */
int pgw__tls_handshake(pgw__tls_t *t);
/* 1 once pgw__tls_handshake has returned 0, else 0 (also for NULL). */
int pgw__tls_established(const pgw__tls_t *t);

/*
 * Ciphertext in. pgw__tls_input_space returns a writable view of the
 * engine's input ring buffer (*len 0 when it is full: call pgw__tls_read or
 * pgw__tls_handshake first) for the socket to read into; then
 * pgw__tls_input_commit(t, n) makes the first n bytes of it (n <= *len)
 * visible to the engine. pgw__tls_feed copies p[0..n) in (what fits) for
 * callers that have the bytes elsewhere, setting *used.
 *
 * pgw__tls_input_space returns NULL (and *len 0) for a NULL t or after
 * pgw__tls_input_eof.
 *
 * Security: a TLS server says nothing before the ClientHello, so any byte
 * committed or fed before the first pgw__tls_handshake call was stuffed into
 * the stream (CVE-2021-23222): commit/feed then fail with PGW_EPROTO
 * ("received unencrypted data after SSL response"), which is sticky. The
 * conn layer must also refuse bytes that arrived together with the server's
 * 'S' (pgw__tls_ssl_response does).
 *
 * Returns 0, PGW_EINVAL (NULL t, or for feed NULL p with n > 0 or NULL
 * used; for commit n larger than the space), PGW_EPROTO (before the
 * handshake started; message in pgw__tls_errmsg). feed may use fewer than n
 * bytes when the ring is full: decrypt (read/handshake) and feed the rest.
 */
uint8_t *pgw__tls_input_space(pgw__tls_t *t, size_t *len);
int pgw__tls_input_commit(pgw__tls_t *t, size_t n);
int pgw__tls_feed(pgw__tls_t *t, const uint8_t *p, size_t n, size_t *used);
/* The socket reached EOF: no more ciphertext will come. A later read or
 * handshake step that needs more input returns PGW_ECONNLOST. NULL: no-op. */
void pgw__tls_input_eof(pgw__tls_t *t);

/*
 * Ciphertext out: a view of the pending bytes (NULL and *len 0 if none or t
 * is NULL). The view stays valid and unchanged until pgw__tls_output_consumed
 * or pgw__tls_free, whatever else is called meanwhile (new output is appended
 * behind it); it may be only the first part of what is pending when the ring
 * wraps, so call again after consuming.
 */
const uint8_t *pgw__tls_output(pgw__tls_t *t, size_t *len);
/* n bytes of the view were written to the socket (n <= *len of the last
 * pgw__tls_output). NULL: no-op. */
void pgw__tls_output_consumed(pgw__tls_t *t, size_t n);

/*
 * Plaintext out: decrypt into buf[0..cap) (e.g. the session's read chunk),
 * as many records as are complete, setting *n.
 * Returns 0 (*n > 0), PGW_EAGAIN (*n == 0: no complete record; feed input,
 * and flush output, which a read may produce), PGW_ECONNLOST (the server
 * closed the TLS stream or the socket hit EOF; any bytes before it were
 * returned by earlier calls), PGW_ETLS (fatal; pgw__tls_errmsg), PGW_EBUSY
 * (handshake not complete), PGW_EINVAL (NULL argument or cap 0).
 */
int pgw__tls_read(pgw__tls_t *t, uint8_t *buf, size_t cap, size_t *n);
/* 1 if decrypted bytes are buffered inside OpenSSL (a record was larger
 * than the last buf), so pgw__tls_read would return data without input. */
int pgw__tls_read_pending(const pgw__tls_t *t);

/*
 * Plaintext in: encrypt p[0..len) into the output ring, as much as fits,
 * setting *written (possibly < len: flush pgw__tls_output, then call again
 * with the rest). The next call must start with the bytes not yet written,
 * unchanged (OpenSSL may hold a record of them half-flushed), though they
 * may have moved in memory. Returns 0 (*written may be 0 when the ring is
 * full), PGW_ETLS (fatal), PGW_ECONNLOST (the stream was closed), PGW_EBUSY
 * (handshake not complete), PGW_EINVAL (NULL argument).
 */
int pgw__tls_write(pgw__tls_t *t, const uint8_t *p, size_t len, size_t *written);

/* Queue a close_notify alert (flush it before closing the socket). Returns
 * 0, PGW_EBUSY (handshake not complete) or PGW_EINVAL. */
int pgw__tls_shutdown(pgw__tls_t *t);

/* The last error's message, libpq's words ("" if none; never NULL, even for
 * a NULL t). Valid until the next call on t. */
const char *pgw__tls_errmsg(const pgw__tls_t *t);
/* A problem that did not stop the session (the key log file could not be
 * written: libpq's message), "" if none; never NULL. */
const char *pgw__tls_warning(const pgw__tls_t *t);

/*
 * What the connection negotiated, for pgw_conn_tls_info. Fills *out (zeroed
 * first; in_use 0 before the handshake completes or for a NULL t). Strings
 * and views point into t: valid until pgw__tls_free. Returns 0 or
 * PGW_EINVAL (out NULL).
 */
int pgw__tls_info(pgw__tls_t *t, pgw_tls_info_t *out);

/* Largest tls-server-end-point value (EVP_MAX_MD_SIZE). */
#define PGW__TLS_CB_MAX 64
/*
 * SCRAM-SHA-256-PLUS channel binding data, tls-server-end-point (RFC 5929
 * section 4.1): the server certificate hashed with its signature's hash,
 * SHA-256 when that is MD5 or SHA-1. Writes *len bytes into out.
 * Returns 0, PGW_EBUSY (handshake not complete), PGW_ENOTSUP (the signature
 * has no single hash, e.g. Ed25519: SCRAM-PLUS is then impossible, as with
 * libpq), PGW_EINVAL (NULL argument).
 */
int pgw__tls_channel_binding(pgw__tls_t *t, uint8_t out[PGW__TLS_CB_MAX], size_t *len);
/* 1 if the server asked for a client certificate during the handshake
 * (libpq's check for sslcertmode=require, made after authentication). */
int pgw__tls_cert_requested(const pgw__tls_t *t);
/* 1 if, when the server asked, a client certificate was loaded to send
 * (libpq's ssl_cert_sent): a server that asked and then accepted the
 * connection without one fails sslcertmode=require. */
int pgw__tls_cert_sent(const pgw__tls_t *t);

/*
 * The server's answer to SSLRequest, for the conn layer. bytes[0..len) is
 * everything read from the socket after sending SSLRequest (len >= 1).
 * Returns:
 *   PGW__TLS_START      'S' alone: start the handshake
 *   PGW__TLS_PLAINTEXT  'N' alone and mode allow or prefer: go on without TLS
 *   PGW_ETLS            'N' with require or above ("server does not
 *                       support SSL, but SSL was required"), or 'E' in any
 *                       mode ("server sent an error response during SSL
 *                       exchange"): the server failed before negotiating and,
 *                       being unauthenticated, its ErrorResponse is neither
 *                       read nor shown, and there is no plaintext fallback
 *                       (CVE-2024-10977)
 *   PGW_EPROTO          'S' or 'N' followed by more bytes ("received
 *                       unencrypted data after SSL response",
 *                       CVE-2021-23222), or any other byte ("received
 *                       invalid response to SSL negotiation: %c")
 *   PGW_EINVAL          len 0 or NULL bytes
 * The message for the negative codes is written to err[0..errlen).
 */
enum { PGW__TLS_START = 1, PGW__TLS_PLAINTEXT = 2 };
int pgw__tls_ssl_response(pgw__sslmode_t mode, const uint8_t *bytes, size_t len, char *err,
                          size_t errlen);

#endif
