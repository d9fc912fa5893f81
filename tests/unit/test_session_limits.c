/*
 * Limits of what one request may carry: parameter counts up to the
 * protocol's 65,535 (refused above it before anything is encoded, never
 * narrowed), oversized values refused before a byte of them is read or
 * copied, and the output buffer giving back the memory of one large request.
 * NULL handles given to the accessors.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "test_session_util.h"

#include <sys/mman.h>

/* ------------------------------------------------- a measuring allocator */

/* Counts the bytes live, their peak and the biggest request. */
static pgt_alloc_t g_use;

static pgw_session_t *measured_session(rec_t *rec)
{
    sess_opts_t o = {.alloc = pgt_alloc_init(&g_use)};
    return ready_session(rec, &o);
}

/* The int16 at p (big-endian). */
static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* ------------------------------------------------------ parameter counts */

static void test_param_count_limits(void **state)
{
    (void)state;
    rec_t rec;
    pgw_session_t *s = ready_session(&rec, NULL);
    size_t n = 70000;
    pgw_param_t *p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = pgw_int4((int32_t)i);

    /* 70,000 would be 4,464 once narrowed to 16 bits: refused whole. */
    size_t len;
    assert_int_equal(pgw_session_query(s, "SELECT 1", p, n, 0, rec_cb, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_execute(s, "st", p, n, 0, rec_cb, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_prepare(s, "st", "SELECT 1", NULL, n, rec_cb, NULL), PGW_EINVAL);
    assert_null(pgw_session_pending_output(s, &len));
    assert_int_equal(len, 0);
    assert_int_equal(pgw_session_pending(s), 0);

    /* 65,535 (above INT16_MAX) is what the protocol allows. */
    assert_int_equal(pgw_session_query(s, "SELECT $65535", p, 65535, 0, rec_cb, NULL), 0);
    const uint8_t *out = pgw_session_pending_output(s, &len);
    assert_true(len > 0 && out[0] == 'P');
    size_t at = 1 + pgw__get32(out + 1);
    const uint8_t *parse = out + 5 + strlen("") + 1 + strlen("SELECT $65535") + 1;
    assert_int_equal(be16(parse), 65535);
    assert_int_equal(out[at], 'B');
    const uint8_t *bind = out + at + 5 + 2;  /* portal and statement names "" */
    assert_int_equal(be16(bind), 1);         /* one format code: all binary */
    assert_int_equal(be16(bind + 4), 65535); /* parameter count */
    pgw_session_free(s);

    /* The encoder itself takes 65,535 too. */
    pgw_buf_t b = {0};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", p, 65535, NULL, 0, 0), 0);
    assert_int_equal(be16(b.data + 5 + 2 + 4), 65535);
    assert_int_equal(pgw_enc_parse(&b, "", "x", 1, NULL, 70000, 0), PGW_EINVAL);
    /* 70,000 is refused, never narrowed (to 4,464) on its way in. */
    size_t before = b.len;
    pgw_param_t *many = calloc(70000, sizeof *many);
    assert_non_null(many);
    for (size_t i = 0; i < 70000; i++)
        many[i] = pgw_int4(1);
    assert_int_equal(pgw_enc_bind_params(&b, "", "", many, 70000, NULL, 0, 0), PGW_EINVAL);
    int16_t fmt = PGW_FORMAT_BINARY;
    assert_int_equal(pgw_enc_bind_params(&b, "", "", NULL, 0, &fmt, 70000, 0), PGW_EINVAL);
    assert_int_equal(b.len, before);
    free(many);
    pgw_buf_free(&b);
    free(p);
}

/* ------------------------------------------------------- oversized values */

/* A 1.1 GiB parameter on pages that fault if read: refused with
 * PGW_ETOOBIG before a byte is read or any room is made for it. */
static void test_oversized_value_not_read(void **state)
{
    (void)state;
    size_t big = (size_t)1100 * 1024 * 1024;
    void *pages = mmap(NULL, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(pages != MAP_FAILED);
    rec_t rec;
    pgw_session_t *s = measured_session(&rec);
    size_t before = g_use.peak;
    pgw_param_t p[] = {pgw_int4(1), pgw_bytea(pages, (int32_t)big)};
    assert_int_equal(pgw_session_query(s, "SELECT $2", p, 2, 0, rec_cb, NULL), PGW_ETOOBIG);
    assert_int_equal(pgw_session_execute(s, "st", p, 2, 0, rec_cb, NULL), PGW_ETOOBIG);
    size_t len;
    assert_null(pgw_session_pending_output(s, &len));
    assert_int_equal(pgw_session_pending(s), 0);
    assert_true(g_use.peak - before < 64 * 1024);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);

    /* The encoder alone: nothing written. */
    pgw_buf_t b = {0};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", p, 2, NULL, 0, PGW_DEFAULT_MAX_MESSAGE),
                     PGW_ETOOBIG);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    pgw_buf_free(&b);
    pgw_session_free(s);
    munmap(pages, big);
}

/* After one 20 MiB parameter has been written out, the session does not
 * keep a 20 MiB output buffer. */
static void test_output_buffer_released(void **state)
{
    (void)state;
    rec_t rec;
    pgw_session_t *s = measured_session(&rec);
    size_t big = (size_t)20 * 1024 * 1024;
    char *v = malloc(big);
    memset(v, 'x', big);
    pgw_param_t p = pgw_bytea(v, (int32_t)big);
    assert_int_equal(pgw_session_query(s, "SELECT $1", &p, 1, 0, rec_cb, NULL), 0);
    assert_true(g_use.bytes > big);
    size_t len;
    pgw_session_pending_output(s, &len);
    assert_true(len > big);
    pgw_session_consumed_output(s, len);
    assert_true(g_use.bytes < 1024 * 1024);

    /* The same through a buffer swap: the driver's drained big buffer comes
     * back and is not kept. */
    assert_int_equal(pgw_session_query(s, "SELECT $1", &p, 1, 0, rec_cb, NULL), 0);
    pgw_buf_t mine = {0};
    pgw_session_take_output(s, &mine);
    assert_true(mine.len > big);
    mine.len = 0; /* written */
    pgw_buf_t back = mine;
    pgw_buf_t empty = {0};
    pgw_session_take_output(s, &back); /* s has nothing: back is taken as its buffer */
    assert_int_equal(back.len, 0);
    assert_true(g_use.bytes < 1024 * 1024);
    pgw_buf_free(&back);
    pgw_buf_free(&empty);
    free(v);
    pgw_session_free(s);
}

/* ------------------------------------------------------- NULL handles */

static void test_null_handles(void **state)
{
    (void)state;
    pgw_result_t *r = NULL;
    pgw_value_t v;
    int32_t i4;
    assert_int_equal(pgw_result_nrows(r), 0);
    assert_int_equal(pgw_result_ncols(r), 0);
    assert_null(pgw_result_fname(r, 0));
    assert_int_equal(pgw_result_ftype(r, 0), 0);
    assert_int_equal(pgw_result_fformat(r, 0), -1);
    assert_null(pgw_result_field(r, 0));
    assert_int_equal(pgw_result_column(r, "a"), PGW_EINVAL);
    assert_int_equal(pgw_result_value(r, 0, 0, &v), PGW_EINVAL);
    pgw_row_t row;
    assert_int_equal(pgw_result_row(r, 0, &row), PGW_EINVAL);
    assert_int_equal(pgw_result_isnull(r, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_result_int4(r, 0, 0, &i4), PGW_EINVAL);
    assert_null(pgw_result_command_tag(r));
    assert_int_equal(pgw_result_rows_affected(r), -1);
    assert_null(pgw_result_error(r));
    assert_int_equal(pgw_result_nparams(r), 0);
    assert_int_equal(pgw_result_param_type(r, 0), 0);
    assert_null(pgw_result_next(r));
    uint64_t q = 1, f = 1, d = 1;
    pgw_result_timing(r, &q, &f, &d);
    assert_true(q == 0 && f == 0 && d == 0);
    pgw_result_free(r);

    pgw_session_t *s = NULL;
    assert_int_equal(pgw_session_state(s), PGW_SESSION_BROKEN);
    assert_int_equal(pgw_session_txn_status(s), 0);
    assert_null(pgw_session_parameter(s, "server_version"));
    assert_int_equal(pgw_session_protocol(s), 0);
    assert_int_equal(pgw_session_backend_key(s, NULL, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_pending(s), 0);
    assert_int_equal(pgw_session_error(s), PGW_EINVAL);
    assert_null(pgw_session_auth_method(s));
    assert_null(pgw_session_userdata(s));
    size_t len = 7;
    assert_null(pgw_session_pending_output(s, &len));
    assert_int_equal(len, 0);
    pgw_session_consumed_output(s, 1);
    pgw_buf_t b = {0};
    pgw_session_take_output(s, &b);
    pgw_session_fail(s, PGW_ECONNLOST);
    uint8_t *p;
    assert_int_equal(pgw_session_input_buffer(s, &p, &len), PGW_EINVAL);
    assert_int_equal(pgw_session_input_commit(s, 0), PGW_EINVAL);
    assert_int_equal(pgw_session_recv(s, (const uint8_t *)"x", 1), PGW_EINVAL);
    assert_int_equal(pgw_session_start(s), PGW_EINVAL);
    assert_int_equal(pgw_session_simple_query(s, "SELECT 1", NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_query(s, "SELECT 1", NULL, 0, 0, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_prepare(s, "a", "SELECT 1", NULL, 0, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_execute(s, "a", NULL, 0, 0, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_describe(s, "a", NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_close_statement(s, "a", NULL, NULL), PGW_EINVAL);
    pgw_request_t one = PGW_SYNC(NULL, NULL);
    assert_int_equal(pgw_session_submit(s, &one), PGW_EINVAL);
    assert_int_equal(pgw_session_submit_batch(s, &one, 1, 0, NULL, NULL), PGW_EINVAL);
    assert_string_equal(pgw_session_refusal(s), "");
    assert_int_equal(pgw_session_sync(s, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_session_terminate(s), PGW_EINVAL);
    pgw_session_free(s);

    /* proto.h */
    pgw_msg_t m;
    pgw_frame_t fr;
    pgw_decoder_init(NULL, 0);
    assert_int_equal(pgw_decoder_next(NULL, (const uint8_t *)"x", 1, &m, NULL), PGW_EINVAL);
    assert_int_equal(pgw_frame_parse(NULL, 5, 0, &fr), PGW_EINVAL);
    assert_int_equal(pgw_msg_parse(NULL, &m), PGW_EINVAL);
    assert_int_equal(pgw_datarow_fields(NULL, NULL, 0), PGW_EINVAL);
    pgw_row_iter_t it;
    pgw_row_iter_init(&it, NULL);
    pgw_view_t view;
    assert_int_equal(pgw_row_iter_next(&it, &view), PGW_EPROTO);
    assert_int_equal(pgw_row_iter_next(NULL, &view), PGW_EINVAL);
    pgw_rowdesc_iter_t rit;
    pgw_rowdesc_iter_init(&rit, NULL);
    pgw_field_desc_t fd;
    assert_int_equal(pgw_rowdesc_iter_next(NULL, &fd), PGW_EINVAL);
    assert_int_equal(pgw_param_desc_oid(NULL, 0), 0);
    assert_int_equal(pgw_copy_format(NULL, 0), -1);
    pgw_error_fields_t ef;
    assert_int_equal(pgw_error_fields_parse(NULL, &ef), PGW_EINVAL);
    size_t pos = 0;
    pgw_str_t str;
    assert_int_equal(pgw_sasl_mech_next(NULL, &pos, &str), PGW_EINVAL);
    assert_int_equal(pgw_negotiate_option_next(NULL, &pos, &str), PGW_EINVAL);
    assert_int_equal(pgw_enc_sync(NULL), PGW_EINVAL);
    assert_int_equal(pgw_enc_query(NULL, "x", 1, 0), PGW_EINVAL);
    pgw_msgw_t w;
    pgw_msgw_begin(NULL, 'Q', &w);
    pgw_msgw_cstr(&w, "x");
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_count_limits),
        cmocka_unit_test(test_oversized_value_not_read),
        cmocka_unit_test(test_output_buffer_released),
        cmocka_unit_test(test_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
