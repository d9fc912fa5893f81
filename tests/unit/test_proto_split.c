/*
 * A real backend exchange fed to pgw_decoder_next split at every byte
 * offset, in two pieces and one byte at a time, as a connection's reads
 * would deliver it: every split must give the same message sequence as the
 * whole stream parsed at once.
 *
 * The exchange, as a PostgreSQL 16 server sends it:
 *   startup:        R(ok), S x7, K, Z(I)
 *   simple query:   'select 1' -> T, D, C "SELECT 1", Z(I)
 *   extended query: 1, 2, T, D, D, D, C "SELECT 3", Z(I)
 *   failed query:   E (42P01), Z(I)
 *   then a notice:  N
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgmsg.h"
#include "pgwire/proto.h"

#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

static void build_exchange(pgw_buf_t *w)
{
    pgw_buf_init(w, NULL);
    pgt_msg(w, 'R', LIT("\0\0\0\0"));
    pgt_msg(w, 'S', LIT("application_name\0\0"));
    pgt_msg(w, 'S', LIT("client_encoding\0UTF8\0"));
    pgt_msg(w, 'S', LIT("DateStyle\0ISO, MDY\0"));
    pgt_msg(w, 'S', LIT("integer_datetimes\0on\0"));
    pgt_msg(w, 'S',
            LIT("server_version\0"
                "16.4 (Debian 16.4-1)\0"));
    pgt_msg(w, 'S', LIT("standard_conforming_strings\0on\0"));
    pgt_msg(w, 'S', LIT("TimeZone\0Etc/UTC\0"));
    pgt_msg(w, 'K', LIT("\0\0\x10\x92\x5e\x1f\x3a\x07"));
    pgt_msg(w, 'Z', LIT("I"));

    pgt_msg(w, 'T', LIT("\0\1?column?\0\0\0\0\0\0\0\0\0\0\027\0\4\xff\xff\xff\xff\0\0"));
    pgt_msg(w, 'D', LIT("\0\1\0\0\0\0011"));
    pgt_msg(w, 'C', LIT("SELECT 1\0"));
    pgt_msg(w, 'Z', LIT("I"));

    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg(w, 'T',
            LIT("\0\2"
                "id\0\0\0\100\0\0\1\0\0\0\027\0\4\xff\xff\xff\xff\0\1"
                "name\0\0\0\100\0\0\2\0\0\0\031\xff\xff\xff\xff\xff\xff\0\0"));
    pgt_msg(w, 'D', LIT("\0\2\0\0\0\4\0\0\0\1\0\0\0\5alice"));
    pgt_msg(w, 'D', LIT("\0\2\0\0\0\4\0\0\0\2\xff\xff\xff\xff"));
    pgt_msg(w, 'D', LIT("\0\2\0\0\0\4\0\0\0\3\0\0\0\0"));
    pgt_msg(w, 'C', LIT("SELECT 3\0"));
    pgt_msg(w, 'Z', LIT("I"));

    pgt_msg(w, 'E',
            LIT("SERROR\0VERROR\0C42P01\0Mrelation \"nope\" does not exist\0P15\0"
                "Fparse_relation.c\0L1449\0RparserOpenTable\0\0"));
    pgt_msg(w, 'Z', LIT("I"));

    pgt_msg(w, 'N',
            LIT("SNOTICE\0VNOTICE\0C00000\0Mtable \"t\" does not exist, skipping\0"
                "Ftablecmds.c\0L1300\0RDropErrorMsgNonExistent\0\0"));
}

static const char expected_types[] = "RSSSSSSSKZTDCZ12TDDDCZEZN";

/* One line per message: its type, its body bytes in hex, and what the
 * parser and walkers made of it, so two runs compare as strings. */
static void describe(const pgw_msg_t *m, char *out, size_t cap)
{
    size_t n = 0;
#define OUT(...) n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__)
    OUT("%c %u:", m->type, m->len);
    for (uint32_t i = 0; i < m->len; i++)
        OUT("%02x", m->body[i]);
    switch (m->type) {
    case 'D': {
        pgw_view_t v[4];
        int k = pgw_datarow_fields(m, v, 4);
        assert_true(k >= 0);
        for (int i = 0; i < k; i++)
            OUT(" [%d:%.*s]", v[i].len, v[i].len > 0 ? v[i].len : 0,
                v[i].p ? (const char *)v[i].p : "");
        break;
    }
    case 'T': {
        pgw_rowdesc_iter_t it;
        pgw_field_desc_t fd;
        pgw_rowdesc_iter_init(&it, m);
        while (pgw_rowdesc_iter_next(&it, &fd) == 1)
            OUT(" %.*s/%u/%d", (int)fd.name.len, fd.name.p, fd.type_oid, fd.format);
        break;
    }
    case 'C':
        OUT(" %.*s rows=%llu/%d", (int)m->u.command_complete.tag.len, m->u.command_complete.tag.p,
            (unsigned long long)m->u.command_complete.rows, m->u.command_complete.has_rows);
        break;
    case 'Z':
        OUT(" status=%c", m->u.ready.status);
        break;
    case 'E':
    case 'N': {
        pgw_error_fields_t e;
        assert_int_equal(pgw_error_fields_parse(m, &e), 0);
        OUT(" %.*s %.*s", e.sqlstate.len, (const char *)e.sqlstate.p, e.message.len,
            (const char *)e.message.p);
        break;
    }
    case 'S':
        OUT(" %.*s=%.*s", (int)m->u.param_status.name.len, m->u.param_status.name.p,
            (int)m->u.param_status.value.len, m->u.param_status.value.p);
        break;
    case 'K':
        OUT(" pid=%d keylen=%u", m->u.backend_key.pid, m->u.backend_key.key_len);
        break;
    default:
        break;
    }
#undef OUT
    assert_true(n < cap);
}

#define MAX_MSGS 32
#define LINE     1024

typedef struct trace {
    char lines[MAX_MSGS][LINE];
    size_t count;
} trace_t;

/* A connection's read path: append what arrived, then take every complete
 * message off the front of the reassembly buffer. */
static void feed(pgw_decoder_t *d, pgw_buf_t *in, const uint8_t *p, size_t n, trace_t *t)
{
    assert_int_equal(pgw_buf_append(in, p, n), 0);
    for (;;) {
        pgw_msg_t m;
        size_t need = 0;
        int64_t rc = pgw_decoder_next(d, in->data, in->len, &m, &need);
        if (rc == PGW_EAGAIN) {
            /* The need is more than what is buffered, and 5 until the
             * header is complete. */
            assert_true(need > in->len);
            if (in->len < 5) assert_int_equal(need, 5);
            return;
        }
        assert_true(rc > 0);
        assert_true(t->count < MAX_MSGS);
        describe(&m, t->lines[t->count++], LINE);
        pgw_buf_consume(in, (size_t)rc);
    }
}

static void check_same(const trace_t *got, const trace_t *want)
{
    assert_int_equal(got->count, want->count);
    for (size_t i = 0; i < want->count; i++)
        assert_string_equal(got->lines[i], want->lines[i]);
}

static trace_t reference, got;

static void test_whole_stream(void **state)
{
    (void)state;
    pgw_buf_t w;
    build_exchange(&w);
    pgw_decoder_t d;
    pgw_decoder_init(&d, 0);
    pgw_buf_t in;
    pgw_buf_init(&in, NULL);
    memset(&reference, 0, sizeof reference);
    feed(&d, &in, w.data, w.len, &reference);
    assert_int_equal(in.len, 0);
    assert_int_equal(d.offset, w.len);
    assert_int_equal(reference.count, strlen(expected_types));
    for (size_t i = 0; i < reference.count; i++)
        assert_int_equal(reference.lines[i][0], expected_types[i]);
    /* Spot checks that the parse is what the server meant. */
    assert_non_null(strstr(reference.lines[11], "[1:1]"));
    assert_non_null(strstr(reference.lines[12], "SELECT 1 rows=1/1"));
    assert_non_null(strstr(reference.lines[16], "id/23/1 name/25/0"));
    assert_non_null(strstr(reference.lines[18], "[-1:]"));
    assert_non_null(strstr(reference.lines[19], "[0:]"));
    assert_non_null(strstr(reference.lines[20], "SELECT 3 rows=3/1"));
    assert_non_null(strstr(reference.lines[22], "42P01 relation \"nope\" does not exist"));
    assert_non_null(strstr(reference.lines[24], "00000 table"));
    pgw_buf_free(&in);
    pgw_buf_free(&w);
}

static void test_two_pieces(void **state)
{
    (void)state;
    pgw_buf_t w;
    build_exchange(&w);
    for (size_t k = 0; k <= w.len; k++) {
        pgw_decoder_t d;
        pgw_decoder_init(&d, 0);
        pgw_buf_t in;
        pgw_buf_init(&in, NULL);
        memset(&got, 0, sizeof got);
        feed(&d, &in, w.data, k, &got);
        feed(&d, &in, w.data + k, w.len - k, &got);
        assert_int_equal(in.len, 0);
        assert_int_equal(d.offset, w.len);
        check_same(&got, &reference);
        pgw_buf_free(&in);
    }
    pgw_buf_free(&w);
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    pgw_buf_t w;
    build_exchange(&w);
    pgw_decoder_t d;
    pgw_decoder_init(&d, 0);
    pgw_buf_t in;
    pgw_buf_init(&in, NULL);
    memset(&got, 0, sizeof got);
    for (size_t i = 0; i < w.len; i++)
        feed(&d, &in, w.data + i, 1, &got);
    assert_int_equal(in.len, 0);
    check_same(&got, &reference);
    pgw_buf_free(&in);
    pgw_buf_free(&w);
}

/* The same exchange with a hostile message spliced in after the simple
 * query: every split reports the error at the same stream offset, after the
 * same 14 messages. */
static void test_split_error_offset(void **state)
{
    (void)state;
    pgw_buf_t w;
    build_exchange(&w);
    /* Cut just past message 13 (the 'Z' ending the simple query) and append
     * an ErrorResponse without its final terminator, then a valid 'Z'. */
    size_t cut = 0;
    pgw_frame_t f;
    for (int i = 0; i < 14; i++) {
        assert_int_equal(pgw_frame_parse(w.data + cut, w.len - cut, 0, &f), 0);
        cut += f.size;
    }
    pgw_decoder_t d;
    pgw_buf_t in;
    pgw_buf_t bad;
    pgw_buf_init(&bad, NULL);
    assert_int_equal(pgw_buf_append(&bad, w.data, cut), 0);
    pgt_msg(&bad, 'E', LIT("SERROR\0Mmissing terminator\0"));
    pgt_msg(&bad, 'Z', LIT("I"));
    size_t err_at = cut;

    for (size_t k = 0; k <= bad.len; k++) {
        pgw_decoder_init(&d, 0);
        pgw_buf_init(&in, NULL);
        memset(&got, 0, sizeof got);
        assert_int_equal(pgw_buf_append(&in, bad.data, k), 0);
        size_t fed = k;
        int64_t rc = 0;
        for (int round = 0; round < 2; round++) {
            for (;;) {
                pgw_msg_t m;
                rc = pgw_decoder_next(&d, in.data, in.len, &m, NULL);
                if (rc <= 0) break;
                got.count++;
                pgw_buf_consume(&in, (size_t)rc);
            }
            if (rc != PGW_EAGAIN) break;
            assert_int_equal(pgw_buf_append(&in, bad.data + fed, bad.len - fed), 0);
            fed = bad.len;
        }
        assert_int_equal(rc, PGW_EPROTO);
        assert_int_equal(got.count, 14);
        assert_int_equal(d.err_offset, err_at);
        pgw_buf_free(&in);
    }
    pgw_buf_free(&bad);
    pgw_buf_free(&w);
}

int main(void)
{
    /* The reference run comes first: the others compare against it. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_stream),
        cmocka_unit_test(test_two_pieces),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_split_error_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
