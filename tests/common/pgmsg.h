/*
 * pgmsg: build backend (server-to-client) protocol messages into a
 * pgw_buf_t, for tests that feed a session from memory or script the fake
 * server (tests/fault/fakepg.h).
 *
 * Every function appends one complete message (type byte, int32 length,
 * body) to b, except the pgt_msg_put_* primitives, which append raw body
 * fields between pgt_msg_begin and pgt_msg_end, for messages (valid or
 * hostile) that have no helper of their own:
 *
 *   size_t at = pgt_msg_begin(&b, 'D');
 *   pgt_msg_put_i16(&b, 1);
 *   pgt_msg_put_i32(&b, 8);     a length that lies: no 8 bytes follow
 *   pgt_msg_end(&b, at);
 *
 * b may start zeroed ({0}: the default allocator) and is released with
 * pgw_buf_free. Test infrastructure: an allocation failure aborts the
 * process. Strings are NUL-terminated C strings and go out with their
 * terminator; integers are written in network byte order.
 */
#ifndef PGW_TESTS_PGMSG_H
#define PGW_TESTS_PGMSG_H

#include <stddef.h>
#include <stdint.h>

#include "pgwire/common.h"

/* ---- primitives ---- */

/* Append n raw bytes (no framing; n may be 0). */
void pgt_msg_raw(pgw_buf_t *b, const void *p, size_t n);
void pgt_msg_put_u8(pgw_buf_t *b, uint8_t v);
void pgt_msg_put_i16(pgw_buf_t *b, int16_t v);
void pgt_msg_put_i32(pgw_buf_t *b, int32_t v);
/* s with its NUL terminator. */
void pgt_msg_put_cstr(pgw_buf_t *b, const char *s);

/* Start a message of type type; returns the offset of its length field,
 * which pgt_msg_end fills in once the body is appended. */
size_t pgt_msg_begin(pgw_buf_t *b, uint8_t type);
void pgt_msg_end(pgw_buf_t *b, size_t at);

/* A message of any type with body[0..len) (len 0: an empty message such as
 * ParseComplete '1', BindComplete '2', NoData 'n'). */
void pgt_msg(pgw_buf_t *b, uint8_t type, const void *body, size_t len);

/* ---- startup ---- */

/* Authentication request: code (0 ok, 3 cleartext, 5 MD5, 10 SASL, 11 SASL
 * continue, 12 SASL final) followed by data[0..n). */
void pgt_msg_auth(pgw_buf_t *b, int32_t code, const void *data, size_t n);
void pgt_msg_param_status(pgw_buf_t *b, const char *name, const char *value);
/* BackendKeyData: pid and a key of key_len bytes (4 in protocol 3.0). */
void pgt_msg_backend_key(pgw_buf_t *b, int32_t pid, const uint8_t *key, size_t key_len);
/* NegotiateProtocolVersion: newest minor supported, then n unsupported
 * option names. */
void pgt_msg_negotiate(pgw_buf_t *b, uint32_t minor, const char *const *opts, size_t n);
/* ReadyForQuery with transaction status 'I', 'T' or 'E'. */
void pgt_msg_ready(pgw_buf_t *b, char status);
/* AuthenticationOk, ParameterStatus server_version (version),
 * client_encoding UTF8 and integer_datetimes on, BackendKeyData (pid,
 * 4-byte key) and ReadyForQuery 'I': a typical trust startup answer. */
void pgt_msg_startup_ok(pgw_buf_t *b, const char *version, int32_t pid, uint32_t key);

/* ---- results ---- */

/* RowDescription of ncols columns: names[i] of type oids[i], all in
 * format (0 text, 1 binary); table OID 0, typmod -1, and the type size of
 * the common fixed-size types (bool 1, int2 2, int4 4, int8 8, float4 4,
 * float8 8; else -1). */
void pgt_msg_row_desc(pgw_buf_t *b, size_t ncols, const char *const *names, const uint32_t *oids,
                      int16_t format);
/* ParameterDescription of n type OIDs. */
void pgt_msg_param_desc(pgw_buf_t *b, size_t n, const uint32_t *oids);
/* DataRow of ncols text values (a NULL pointer is SQL NULL). */
void pgt_msg_data_row(pgw_buf_t *b, size_t ncols, const char *const *values);
/* DataRow of one binary int4, or one binary int8. */
void pgt_msg_data_row_int4(pgw_buf_t *b, int32_t v);
void pgt_msg_data_row_int8(pgw_buf_t *b, int64_t v);
void pgt_msg_command_complete(pgw_buf_t *b, const char *tag);

/* ---- errors and asynchronous messages ---- */

/* ErrorResponse with fields S and V (severity), C (code) and M (message). */
void pgt_msg_error(pgw_buf_t *b, const char *severity, const char *code, const char *message);
/* NoticeResponse: severity NOTICE, code 00000, message. */
void pgt_msg_notice(pgw_buf_t *b, const char *message);
void pgt_msg_notification(pgw_buf_t *b, int32_t pid, const char *channel, const char *payload);

#endif /* PGW_TESTS_PGMSG_H */
