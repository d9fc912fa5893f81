/*
 * The plaintext transport: socket bytes are session bytes. Reads land
 * directly in the session's input buffer and the session's output buffer is
 * written as is. src/tls will provide a second pgw__transport_t that keeps
 * ciphertext buffers and runs OpenSSL between the socket and the session.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

static int plain_read_buffer(pgw_conn_t *c, uint8_t **p, size_t *len)
{
    return pgw_session_input_buffer(c->s, p, len);
}

static int plain_read_commit(pgw_conn_t *c, size_t n)
{
    return pgw_session_input_commit(c->s, n);
}

static void plain_take_output(pgw_conn_t *c, pgw_buf_t *out)
{
    pgw_session_take_output(c->s, out);
}

static size_t plain_pending_output(pgw_conn_t *c)
{
    size_t len = 0;
    pgw_session_pending_output(c->s, &len);
    return len;
}

const pgw__transport_t pgw__transport_plain = {
    "plain", plain_read_buffer, plain_read_commit, plain_take_output, plain_pending_output,
};
