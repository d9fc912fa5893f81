/*
 * pgmsg: backend message builders for tests (see pgmsg.h).
 */
#include "pgmsg.h"

#include <stdlib.h>
#include <string.h>

void pgt_msg_raw(pgw_buf_t *b, const void *p, size_t n)
{
    if (n && pgw_buf_append(b, p, n) < 0) abort();
}

void pgt_msg_put_u8(pgw_buf_t *b, uint8_t v)
{
    pgt_msg_raw(b, &v, 1);
}

void pgt_msg_put_i16(pgw_buf_t *b, int16_t v)
{
    uint16_t u = (uint16_t)v;
    uint8_t x[2] = {(uint8_t)(u >> 8), (uint8_t)u};
    pgt_msg_raw(b, x, 2);
}

void pgt_msg_put_i32(pgw_buf_t *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t x[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    pgt_msg_raw(b, x, 4);
}

void pgt_msg_put_cstr(pgw_buf_t *b, const char *s)
{
    pgt_msg_raw(b, s, strlen(s) + 1);
}

size_t pgt_msg_begin(pgw_buf_t *b, uint8_t type)
{
    pgt_msg_put_u8(b, type);
    size_t at = b->len;
    pgt_msg_put_i32(b, 0);
    return at;
}

void pgt_msg_end(pgw_buf_t *b, size_t at)
{
    uint32_t len = (uint32_t)(b->len - at);
    b->data[at] = (uint8_t)(len >> 24);
    b->data[at + 1] = (uint8_t)(len >> 16);
    b->data[at + 2] = (uint8_t)(len >> 8);
    b->data[at + 3] = (uint8_t)len;
}

void pgt_msg(pgw_buf_t *b, uint8_t type, const void *body, size_t len)
{
    size_t at = pgt_msg_begin(b, type);
    pgt_msg_raw(b, body, len);
    pgt_msg_end(b, at);
}

void pgt_msg_auth(pgw_buf_t *b, int32_t code, const void *data, size_t n)
{
    size_t at = pgt_msg_begin(b, 'R');
    pgt_msg_put_i32(b, code);
    pgt_msg_raw(b, data, n);
    pgt_msg_end(b, at);
}

void pgt_msg_param_status(pgw_buf_t *b, const char *name, const char *value)
{
    size_t at = pgt_msg_begin(b, 'S');
    pgt_msg_put_cstr(b, name);
    pgt_msg_put_cstr(b, value);
    pgt_msg_end(b, at);
}

void pgt_msg_backend_key(pgw_buf_t *b, int32_t pid, const uint8_t *key, size_t key_len)
{
    size_t at = pgt_msg_begin(b, 'K');
    pgt_msg_put_i32(b, pid);
    pgt_msg_raw(b, key, key_len);
    pgt_msg_end(b, at);
}

void pgt_msg_negotiate(pgw_buf_t *b, uint32_t minor, const char *const *opts, size_t n)
{
    size_t at = pgt_msg_begin(b, 'v');
    pgt_msg_put_i32(b, (int32_t)minor);
    pgt_msg_put_i32(b, (int32_t)n);
    for (size_t i = 0; i < n; i++)
        pgt_msg_put_cstr(b, opts[i]);
    pgt_msg_end(b, at);
}

void pgt_msg_ready(pgw_buf_t *b, char status)
{
    pgt_msg(b, 'Z', &status, 1);
}

void pgt_msg_startup_ok(pgw_buf_t *b, const char *version, int32_t pid, uint32_t key)
{
    uint8_t k[4] = {(uint8_t)(key >> 24), (uint8_t)(key >> 16), (uint8_t)(key >> 8), (uint8_t)key};
    pgt_msg_auth(b, 0, NULL, 0);
    pgt_msg_param_status(b, "server_version", version);
    pgt_msg_param_status(b, "client_encoding", "UTF8");
    pgt_msg_param_status(b, "integer_datetimes", "on");
    pgt_msg_backend_key(b, pid, k, 4);
    pgt_msg_ready(b, 'I');
}

/* The type size PostgreSQL reports for the fixed-size types tests use. */
static int16_t type_size(uint32_t oid)
{
    switch (oid) {
    case 16: /* bool */
        return 1;
    case 21: /* int2 */
        return 2;
    case 23:  /* int4 */
    case 700: /* float4 */
        return 4;
    case 20:  /* int8 */
    case 701: /* float8 */
        return 8;
    default:
        return -1;
    }
}

void pgt_msg_row_desc(pgw_buf_t *b, size_t ncols, const char *const *names, const uint32_t *oids,
                      int16_t format)
{
    size_t at = pgt_msg_begin(b, 'T');
    pgt_msg_put_i16(b, (int16_t)ncols);
    for (size_t i = 0; i < ncols; i++) {
        pgt_msg_put_cstr(b, names[i]);
        pgt_msg_put_i32(b, 0); /* table OID */
        pgt_msg_put_i16(b, 0); /* attribute number */
        pgt_msg_put_i32(b, (int32_t)oids[i]);
        pgt_msg_put_i16(b, type_size(oids[i]));
        pgt_msg_put_i32(b, -1); /* typmod */
        pgt_msg_put_i16(b, format);
    }
    pgt_msg_end(b, at);
}

void pgt_msg_param_desc(pgw_buf_t *b, size_t n, const uint32_t *oids)
{
    size_t at = pgt_msg_begin(b, 't');
    pgt_msg_put_i16(b, (int16_t)n);
    for (size_t i = 0; i < n; i++)
        pgt_msg_put_i32(b, (int32_t)oids[i]);
    pgt_msg_end(b, at);
}

void pgt_msg_data_row(pgw_buf_t *b, size_t ncols, const char *const *values)
{
    size_t at = pgt_msg_begin(b, 'D');
    pgt_msg_put_i16(b, (int16_t)ncols);
    for (size_t i = 0; i < ncols; i++) {
        if (!values[i]) {
            pgt_msg_put_i32(b, -1);
            continue;
        }
        size_t n = strlen(values[i]);
        pgt_msg_put_i32(b, (int32_t)n);
        pgt_msg_raw(b, values[i], n);
    }
    pgt_msg_end(b, at);
}

void pgt_msg_data_row_int4(pgw_buf_t *b, int32_t v)
{
    size_t at = pgt_msg_begin(b, 'D');
    pgt_msg_put_i16(b, 1);
    pgt_msg_put_i32(b, 4);
    pgt_msg_put_i32(b, v);
    pgt_msg_end(b, at);
}

void pgt_msg_data_row_int8(pgw_buf_t *b, int64_t v)
{
    size_t at = pgt_msg_begin(b, 'D');
    pgt_msg_put_i16(b, 1);
    pgt_msg_put_i32(b, 8);
    pgt_msg_put_i32(b, (int32_t)(uint32_t)((uint64_t)v >> 32));
    pgt_msg_put_i32(b, (int32_t)(uint32_t)v);
    pgt_msg_end(b, at);
}

void pgt_msg_command_complete(pgw_buf_t *b, const char *tag)
{
    size_t at = pgt_msg_begin(b, 'C');
    pgt_msg_put_cstr(b, tag);
    pgt_msg_end(b, at);
}

/* The fields of an ErrorResponse or NoticeResponse, with the terminator. */
static void put_fields(pgw_buf_t *b, const char *severity, const char *code, const char *message)
{
    pgt_msg_put_u8(b, 'S');
    pgt_msg_put_cstr(b, severity);
    pgt_msg_put_u8(b, 'V');
    pgt_msg_put_cstr(b, severity);
    pgt_msg_put_u8(b, 'C');
    pgt_msg_put_cstr(b, code);
    pgt_msg_put_u8(b, 'M');
    pgt_msg_put_cstr(b, message);
    pgt_msg_put_u8(b, 0);
}

void pgt_msg_error(pgw_buf_t *b, const char *severity, const char *code, const char *message)
{
    size_t at = pgt_msg_begin(b, 'E');
    put_fields(b, severity, code, message);
    pgt_msg_end(b, at);
}

void pgt_msg_notice(pgw_buf_t *b, const char *message)
{
    size_t at = pgt_msg_begin(b, 'N');
    put_fields(b, "NOTICE", "00000", message);
    pgt_msg_end(b, at);
}

void pgt_msg_notification(pgw_buf_t *b, int32_t pid, const char *channel, const char *payload)
{
    size_t at = pgt_msg_begin(b, 'A');
    pgt_msg_put_i32(b, pid);
    pgt_msg_put_cstr(b, channel);
    pgt_msg_put_cstr(b, payload);
    pgt_msg_end(b, at);
}
