/*
 * The pgoutput decoder (replication.h) on hand-built messages: every kind
 * of protocol versions 1 to 4, the relation cache, tuple values read with
 * the types layer's decoders, and every malformed case (each message cut
 * at every byte, trailing bytes, unknown bytes, counts and lengths past
 * the end), which must be a clear error that leaves the decoder as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "failalloc.h"
#include "pgmsg.h"
#include "pgwire/replication.h"
#include "pgwire/types_container.h"

#define REL_OID 16384u

/* ------------------------------------------------------------ building */

static void put_u32(pgw_buf_t *b, uint32_t v)
{
    pgt_msg_put_i32(b, (int32_t)v);
}

static void put_u64(pgw_buf_t *b, uint64_t v)
{
    put_u32(b, (uint32_t)(v >> 32));
    put_u32(b, (uint32_t)v);
}

/* A message of kind k; inside a stream, xid goes first (0: none). */
static void start(pgw_buf_t *b, uint8_t k, uint32_t xid)
{
    pgw_buf_reset(b);
    pgt_msg_put_u8(b, k);
    if (xid) put_u32(b, xid);
}

/* Relation REL_OID "public"."t" (replica identity d): id int4 (key),
 * name text, data bytea. */
static void build_relation(pgw_buf_t *b, uint32_t xid, uint32_t oid)
{
    start(b, 'R', xid);
    put_u32(b, oid);
    pgt_msg_put_cstr(b, "public");
    pgt_msg_put_cstr(b, "t");
    pgt_msg_put_u8(b, 'd');
    pgt_msg_put_i16(b, 3);
    pgt_msg_put_u8(b, 1), pgt_msg_put_cstr(b, "id"), put_u32(b, 23), put_u32(b, (uint32_t)-1);
    pgt_msg_put_u8(b, 0), pgt_msg_put_cstr(b, "name"), put_u32(b, 25), put_u32(b, (uint32_t)-1);
    pgt_msg_put_u8(b, 0), pgt_msg_put_cstr(b, "data"), put_u32(b, 17), put_u32(b, (uint32_t)-1);
}

static void put_text_col(pgw_buf_t *b, const char *s)
{
    pgt_msg_put_u8(b, 't');
    put_u32(b, (uint32_t)strlen(s));
    pgt_msg_raw(b, s, strlen(s));
}

/* The tuple (id, name, data): text id and name, data unchanged TOAST. */
static void put_tuple(pgw_buf_t *b, const char *id, const char *name)
{
    pgt_msg_put_i16(b, 3);
    put_text_col(b, id);
    if (name)
        put_text_col(b, name);
    else
        pgt_msg_put_u8(b, 'n');
    pgt_msg_put_u8(b, 'u');
}

/* Binary int4 id, text name, binary bytea data. */
static void put_binary_tuple(pgw_buf_t *b, int32_t id)
{
    pgt_msg_put_i16(b, 3);
    pgt_msg_put_u8(b, 'b'), put_u32(b, 4), put_u32(b, (uint32_t)id);
    put_text_col(b, "bin");
    pgt_msg_put_u8(b, 'b'), put_u32(b, 2), pgt_msg_raw(b, "\x01\xff", 2);
}

static void build_insert(pgw_buf_t *b, uint32_t xid, uint32_t oid)
{
    start(b, 'I', xid);
    put_u32(b, oid);
    pgt_msg_put_u8(b, 'N');
    put_tuple(b, "7", "seven");
}

static pgw_pgoutput_t *decoder(uint32_t version, const pgw_allocator_t *alloc)
{
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.proto_version = version;
    cfg.alloc = alloc;
    pgw_pgoutput_t *d;
    assert_int_equal(pgw_pgoutput_new(&cfg, &d), 0);
    return d;
}

static int decode(pgw_pgoutput_t *d, const pgw_buf_t *b, pgw_pgoutput_msg_t *m)
{
    return pgw_pgoutput_decode(d, b->data, b->len, m);
}

static void assert_str(pgw_str_t s, const char *want)
{
    assert_int_equal(s.len, strlen(want));
    assert_memory_equal(s.p, want, s.len);
}

/* ------------------------------------------------------- transactions */

static void test_begin_commit_origin(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;

    start(&b, 'B', 0);
    put_u64(&b, 0x10002000ull), put_u64(&b, 777), put_u32(&b, 4242);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_BEGIN);
    assert_int_equal(m.u.begin.final_lsn, 0x10002000ull);
    assert_int_equal(m.u.begin.commit_time, 777);
    assert_int_equal(m.xid, 4242);

    start(&b, 'O', 0);
    put_u64(&b, 99), pgt_msg_put_cstr(&b, "pg_16399");
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.origin.commit_lsn, 99);
    assert_str(m.u.origin.name, "pg_16399");

    start(&b, 'C', 0);
    pgt_msg_put_u8(&b, 0), put_u64(&b, 1), put_u64(&b, 2), put_u64(&b, (uint64_t)-3);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_COMMIT);
    assert_int_equal(m.u.commit.commit_lsn, 1);
    assert_int_equal(m.u.commit.end_lsn, 2);
    assert_int_equal(m.u.commit.commit_time, -3);
    assert_string_equal(pgw_pgoutput_error(d), "");
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

static void test_type_message_truncate(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;

    start(&b, 'Y', 0);
    put_u32(&b, 16390), pgt_msg_put_cstr(&b, "public"), pgt_msg_put_cstr(&b, "mood");
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.type.oid, 16390);
    assert_str(m.u.type.nspname, "public");
    assert_str(m.u.type.name, "mood");

    start(&b, 'M', 0);
    pgt_msg_put_u8(&b, 1), put_u64(&b, 55), pgt_msg_put_cstr(&b, "pfx");
    put_u32(&b, 3), pgt_msg_raw(&b, "a\0b", 3);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.message.flags, 1);
    assert_int_equal(m.u.message.lsn, 55);
    assert_str(m.u.message.prefix, "pfx");
    assert_int_equal(m.u.message.content.len, 3);
    assert_memory_equal(m.u.message.content.p, "a\0b", 3);

    start(&b, 'T', 0);
    put_u32(&b, 2), pgt_msg_put_u8(&b, 3), put_u32(&b, 16384), put_u32(&b, 0xfffffff0u);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.truncate.nrelids, 2);
    assert_int_equal(m.u.truncate.options, 3);
    assert_int_equal(pgw_pgoutput_truncate_relid(&m, 0), 16384);
    assert_int_equal(pgw_pgoutput_truncate_relid(&m, 1), 0xfffffff0u);
    assert_int_equal(pgw_pgoutput_truncate_relid(&m, 2), 0);
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

/* ------------------------------------------------- relations and changes */

static void test_relation_insert(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;

    build_relation(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    const pgw_pgoutput_relation_t *rel = m.u.relation;
    assert_ptr_equal(rel, pgw_pgoutput_relation(d, REL_OID));
    assert_string_equal(rel->nspname, "public");
    assert_string_equal(rel->relname, "t");
    assert_int_equal(rel->replident, 'd');
    assert_int_equal(rel->ncols, 3);
    assert_str(rel->columns[1].name, "name");
    assert_int_equal(rel->columns[1].name.p[4], 0);
    assert_int_equal(rel->columns[2].type_oid, 17);
    assert_int_equal(rel->columns[0].typmod, -1);
    assert_int_equal(rel->columns[0].table_oid, REL_OID);
    assert_int_equal(rel->col_flags[0], PGW_PGOUTPUT_COL_KEY);
    assert_int_equal(rel->col_flags[1], 0);
    memset(b.data, 0, b.len); /* the cache holds copies */
    assert_string_equal(rel->relname, "t");

    build_insert(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_INSERT);
    assert_ptr_equal(m.u.change.relation, rel);
    assert_int_equal(m.u.change.old_kind, 0);
    const pgw_pgoutput_tuple_t *t = &m.u.change.new_tuple;
    assert_int_equal(t->row.ncols, 3);
    assert_ptr_equal(t->row.fields, rel->columns);
    int32_t id;
    assert_int_equal(pgw_get_int4(&t->row.values[0], &id), 0);
    assert_int_equal(id, 7);
    pgw_str_t s;
    assert_int_equal(pgw_get_text(&t->row.values[1], &s), 0);
    assert_str(s, "seven");
    /* views into the caller's bytes, not copies */
    assert_true(s.p > (const char *)b.data && s.p < (const char *)b.data + b.len);
    assert_int_equal(t->kinds[2], PGW_PGOUTPUT_COL_UNCHANGED);
    assert_int_equal(t->row.values[2].len, -1);

    /* binary mode: the same accessors read binary values */
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), put_binary_tuple(&b, -5);
    assert_int_equal(decode(d, &b, &m), 0);
    t = &m.u.change.new_tuple;
    assert_int_equal(t->kinds[0], PGW_PGOUTPUT_COL_BINARY);
    assert_int_equal(t->row.values[0].format, PGW_FORMAT_BINARY);
    assert_int_equal(pgw_get_int4(&t->row.values[0], &id), 0);
    assert_int_equal(id, -5);
    pgw_view_t v;
    assert_int_equal(pgw_get_bytea_view(&t->row.values[2], &v), 0);
    assert_int_equal(v.len, 2);
    assert_int_equal(v.p[1], 0xff);
    pgw_datum_t dt;
    assert_int_equal(pgw_get_datum(&t->row.values[1], &dt), 0);
    assert_int_equal(dt.kind, PGW_DATUM_TEXT);
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

static void test_update_delete(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    build_relation(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);

    /* no old tuple */
    start(&b, 'U', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), put_tuple(&b, "1", "a");
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_UPDATE);
    assert_int_equal(m.u.change.old_kind, 0);
    assert_int_equal(m.u.change.new_tuple.kinds[1], PGW_PGOUTPUT_COL_TEXT);

    /* old key, then old row */
    for (int k = 0; k < 2; k++) {
        uint8_t marker = k ? 'O' : 'K';
        start(&b, 'U', 0);
        put_u32(&b, REL_OID), pgt_msg_put_u8(&b, marker), put_tuple(&b, "1", NULL);
        pgt_msg_put_u8(&b, 'N'), put_tuple(&b, "2", "b");
        assert_int_equal(decode(d, &b, &m), 0);
        assert_int_equal(m.u.change.old_kind, marker);
        const pgw_pgoutput_tuple_t *o = &m.u.change.old_tuple, *n = &m.u.change.new_tuple;
        assert_int_equal(o->kinds[1], PGW_PGOUTPUT_COL_NULL);
        assert_true(pgw_value_is_null(&o->row.values[1]));
        assert_ptr_not_equal(o->row.values, n->row.values);
        int32_t a, z;
        assert_int_equal(pgw_get_int4(&o->row.values[0], &a), 0);
        assert_int_equal(pgw_get_int4(&n->row.values[0], &z), 0);
        assert_int_equal(a * 10 + z, 12);

        start(&b, 'D', 0);
        put_u32(&b, REL_OID), pgt_msg_put_u8(&b, marker), put_tuple(&b, "3", "c");
        assert_int_equal(decode(d, &b, &m), 0);
        assert_int_equal(m.kind, PGW_PGOUTPUT_DELETE);
        assert_int_equal(m.u.change.old_kind, marker);
        assert_int_equal(pgw_get_int4(&m.u.change.old_tuple.row.values[0], &a), 0);
        assert_int_equal(a, 3);
    }
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

/* A new Relation for the same OID replaces the cached one; others stay. */
static void test_relation_replaced(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    for (uint32_t oid = 1; oid <= 40; oid++) { /* grows the table */
        build_relation(&b, 0, oid);
        assert_int_equal(decode(d, &b, &m), 0);
    }
    build_relation(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);

    start(&b, 'R', 0);
    put_u32(&b, REL_OID), pgt_msg_put_cstr(&b, ""), pgt_msg_put_cstr(&b, "t2");
    pgt_msg_put_u8(&b, 'f'), pgt_msg_put_i16(&b, 1);
    pgt_msg_put_u8(&b, 0), pgt_msg_put_cstr(&b, "only"), put_u32(&b, 20), put_u32(&b, 0);
    assert_int_equal(decode(d, &b, &m), 0);
    const pgw_pgoutput_relation_t *rel = pgw_pgoutput_relation(d, REL_OID);
    assert_ptr_equal(rel, m.u.relation);
    assert_string_equal(rel->relname, "t2");
    assert_string_equal(rel->nspname, "");
    assert_int_equal(rel->ncols, 1);
    for (uint32_t oid = 1; oid <= 40; oid++)
        assert_int_equal(pgw_pgoutput_relation(d, oid)->ncols, 3);

    /* the old shape no longer fits */
    build_insert(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
    assert_non_null(strstr(pgw_pgoutput_error(d), "column count"));
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 1);
    put_text_col(&b, "9000000000");
    assert_int_equal(decode(d, &b, &m), 0);
    int64_t v;
    assert_int_equal(pgw_get_int8(&m.u.change.new_tuple.row.values[0], &v), 0);
    assert_int_equal(v, 9000000000);

    pgw_pgoutput_reset(d);
    assert_null(pgw_pgoutput_relation(d, REL_OID));
    assert_null(pgw_pgoutput_relation(d, 1));
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

static void test_unknown_relation(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(1, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    static const uint8_t kinds[] = {'I', 'U', 'D'};
    for (size_t i = 0; i < 3; i++) {
        start(&b, kinds[i], 0);
        put_u32(&b, 4711), pgt_msg_put_u8(&b, kinds[i] == 'D' ? 'K' : 'N');
        put_tuple(&b, "1", "x");
        assert_int_equal(decode(d, &b, &m), PGW_ENOTFOUND);
        assert_non_null(strstr(pgw_pgoutput_error(d), "4711"));
    }
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

/* A domain column reads as its base type through the decoder's registry. */
static void test_registry_resolves(void **state)
{
    (void)state;
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    static const char *const row[] = {"16392", "d", "d", ",", "23", "0", "16391", NULL, NULL};
    pgw_view_t f[PGW_TYPE_LOAD_NFIELDS];
    for (int i = 0; i < PGW_TYPE_LOAD_NFIELDS; i++)
        f[i] = (pgw_view_t){(const uint8_t *)row[i], row[i] ? (int32_t)strlen(row[i]) : -1};
    assert_int_equal(pgw_type_registry_load_row(reg, f, PGW_TYPE_LOAD_NFIELDS), 0);
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.registry = reg;
    pgw_pgoutput_t *d;
    assert_int_equal(pgw_pgoutput_new(&cfg, &d), 0);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    start(&b, 'R', 0);
    put_u32(&b, REL_OID), pgt_msg_put_cstr(&b, "s"), pgt_msg_put_cstr(&b, "dt");
    pgt_msg_put_u8(&b, 'd'), pgt_msg_put_i16(&b, 1);
    pgt_msg_put_u8(&b, 1), pgt_msg_put_cstr(&b, "v"), put_u32(&b, 16392), put_u32(&b, 0);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.relation->columns[0].type_oid, 16392);
    assert_int_equal(m.u.relation->value_oids[0], PGW_OID_INT4);
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 1);
    put_text_col(&b, "41");
    assert_int_equal(decode(d, &b, &m), 0);
    int32_t v;
    assert_int_equal(pgw_get_int4(&m.u.change.new_tuple.row.values[0], &v), 0);
    assert_int_equal(v, 41);
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
    pgw_type_registry_free(reg);
}

/* ------------------------------------------------------------ streaming */

static void test_stream(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(2, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;

    start(&b, 'S', 0);
    put_u32(&b, 900), pgt_msg_put_u8(&b, 1);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 900);
    assert_int_equal(m.u.stream_start.first_segment, 1);
    assert_true(pgw_pgoutput_in_stream(d));
    /* a second start inside the block is out of place */
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);

    build_relation(&b, 900, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 900);
    build_insert(&b, 901, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 901);
    assert_int_equal(m.u.change.new_tuple.row.ncols, 3);
    start(&b, 'T', 900);
    put_u32(&b, 1), pgt_msg_put_u8(&b, 0), put_u32(&b, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 900);
    start(&b, 'M', 900);
    pgt_msg_put_u8(&b, 1), put_u64(&b, 5), pgt_msg_put_cstr(&b, "p"), put_u32(&b, 0);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 900);
    assert_int_equal(m.u.message.content.len, 0);
    start(&b, 'Y', 900);
    put_u32(&b, 1), pgt_msg_put_cstr(&b, "a"), pgt_msg_put_cstr(&b, "b");
    assert_int_equal(decode(d, &b, &m), 0);

    start(&b, 'E', 0);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.xid, 900);
    assert_false(pgw_pgoutput_in_stream(d));
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO); /* stop outside a stream */

    start(&b, 'c', 0);
    put_u32(&b, 900), pgt_msg_put_u8(&b, 0), put_u64(&b, 10), put_u64(&b, 11), put_u64(&b, 12);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_STREAM_COMMIT);
    assert_int_equal(m.xid, 900);
    assert_int_equal(m.u.commit.end_lsn, 11);

    start(&b, 'A', 0);
    put_u32(&b, 900), put_u32(&b, 905);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.stream_abort.subxid, 905);
    assert_false(m.u.stream_abort.has_abort_info);
    /* v4's abort LSN and time are not v2's */
    put_u64(&b, 70), put_u64(&b, 71);
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
    pgw_pgoutput_free(d);

    d = decoder(4, NULL);
    assert_int_equal(decode(d, &b, &m), 0);
    assert_true(m.u.stream_abort.has_abort_info);
    assert_int_equal(m.u.stream_abort.abort_lsn, 70);
    assert_int_equal(m.u.stream_abort.abort_time, 71);
    b.len -= 1;
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
    pgw_pgoutput_free(d);

    /* no stream messages on version 1 */
    d = decoder(1, NULL);
    start(&b, 'S', 0);
    put_u32(&b, 900), pgt_msg_put_u8(&b, 1);
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
    assert_non_null(strstr(pgw_pgoutput_error(d), "later protocol version"));
    assert_false(pgw_pgoutput_in_stream(d));
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

static void put_prepare_tail(pgw_buf_t *b, uint32_t xid, const char *gid)
{
    put_u64(b, 100), put_u64(b, 200), put_u64(b, 300), put_u32(b, xid);
    pgt_msg_put_cstr(b, gid);
}

static void test_two_phase(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = decoder(3, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;

    start(&b, 'b', 0);
    put_prepare_tail(&b, 33, "g1");
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.kind, PGW_PGOUTPUT_BEGIN_PREPARE);
    assert_int_equal(m.xid, 33);
    assert_int_equal(m.u.prepare.lsn, 100);
    assert_int_equal(m.u.prepare.end_lsn, 200);
    assert_int_equal(m.u.prepare.time, 300);
    assert_str(m.u.prepare.gid, "g1");

    static const uint8_t flagged[] = {'P', 'K', 'p'};
    for (size_t i = 0; i < 3; i++) {
        start(&b, flagged[i], 0);
        pgt_msg_put_u8(&b, 0), put_prepare_tail(&b, 34, "gid-two");
        assert_int_equal(decode(d, &b, &m), 0);
        assert_int_equal(m.kind, flagged[i]);
        assert_int_equal(m.xid, 34);
        assert_int_equal(m.u.prepare.time, 300);
        assert_str(m.u.prepare.gid, "gid-two");
    }

    start(&b, 'r', 0);
    pgt_msg_put_u8(&b, 0), put_u64(&b, 1), put_u64(&b, 2), put_u64(&b, 3), put_u64(&b, 4);
    put_u32(&b, 35), pgt_msg_put_cstr(&b, "g3");
    assert_int_equal(decode(d, &b, &m), 0);
    assert_int_equal(m.u.rollback_prepared.prepare_end_lsn, 1);
    assert_int_equal(m.u.rollback_prepared.rollback_end_lsn, 2);
    assert_int_equal(m.u.rollback_prepared.prepare_time, 3);
    assert_int_equal(m.u.rollback_prepared.rollback_time, 4);
    assert_int_equal(m.xid, 35);
    assert_str(m.u.rollback_prepared.gid, "g3");
    pgw_pgoutput_free(d);

    d = decoder(2, NULL);
    assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

/* ------------------------------------------------------------ malformed */

/* Every message of a v4 stream, built into one buffer each, with the
 * decoder state each needs (a relation cached; in a stream or not). */
typedef struct sample {
    pgw_buf_t b;
    bool in_stream;
    size_t also_whole; /* a shorter length that is a whole message too (0: none) */
} sample_t;

#define NSAMPLES 24

static size_t build_samples(sample_t *s)
{
    size_t n = 0;
    pgw_buf_t *b;
#define NEXT(stream) (s[n].in_stream = (stream), b = &s[n++].b)
    NEXT(false), start(b, 'B', 0), put_u64(b, 1), put_u64(b, 2), put_u32(b, 3);
    NEXT(false), start(b, 'C', 0), pgt_msg_put_u8(b, 0), put_u64(b, 1), put_u64(b, 2),
        put_u64(b, 3);
    NEXT(false), start(b, 'O', 0), put_u64(b, 1), pgt_msg_put_cstr(b, "o");
    NEXT(false), build_relation(b, 0, REL_OID);
    NEXT(true), build_relation(b, 77, REL_OID);
    NEXT(false), start(b, 'Y', 0), put_u32(b, 1), pgt_msg_put_cstr(b, "n"),
        pgt_msg_put_cstr(b, "t");
    NEXT(false), build_insert(b, 0, REL_OID);
    NEXT(true), build_insert(b, 77, REL_OID);
    NEXT(false), start(b, 'I', 0), put_u32(b, REL_OID), pgt_msg_put_u8(b, 'N'),
        put_binary_tuple(b, 1);
    NEXT(false), start(b, 'U', 0), put_u32(b, REL_OID), pgt_msg_put_u8(b, 'O'),
        put_tuple(b, "1", "x"), pgt_msg_put_u8(b, 'N'), put_tuple(b, "2", NULL);
    NEXT(false), start(b, 'U', 0), put_u32(b, REL_OID), pgt_msg_put_u8(b, 'N'),
        put_tuple(b, "2", NULL);
    NEXT(false), start(b, 'D', 0), put_u32(b, REL_OID), pgt_msg_put_u8(b, 'K'),
        put_tuple(b, "1", NULL);
    NEXT(false), start(b, 'T', 0), put_u32(b, 2), pgt_msg_put_u8(b, 0), put_u32(b, 1),
        put_u32(b, 2);
    NEXT(false), start(b, 'M', 0), pgt_msg_put_u8(b, 0), put_u64(b, 1), pgt_msg_put_cstr(b, "p"),
        put_u32(b, 2), pgt_msg_raw(b, "xy", 2);
    NEXT(false), start(b, 'S', 0), put_u32(b, 77), pgt_msg_put_u8(b, 0);
    NEXT(true), start(b, 'E', 0);
    NEXT(false), start(b, 'c', 0), put_u32(b, 77), pgt_msg_put_u8(b, 0), put_u64(b, 1),
        put_u64(b, 2), put_u64(b, 3);
    NEXT(false), start(b, 'A', 0), put_u32(b, 77), put_u32(b, 78);
    NEXT(false), start(b, 'A', 0), put_u32(b, 77), put_u32(b, 78), put_u64(b, 1), put_u64(b, 2);
    s[n - 1].also_whole = 9; /* v4's abort fields are optional */
    NEXT(false), start(b, 'b', 0), put_prepare_tail(b, 1, "g");
    NEXT(false), start(b, 'P', 0), pgt_msg_put_u8(b, 0), put_prepare_tail(b, 1, "g");
    NEXT(false), start(b, 'K', 0), pgt_msg_put_u8(b, 0), put_prepare_tail(b, 1, "g");
    NEXT(false), start(b, 'p', 0), pgt_msg_put_u8(b, 0), put_prepare_tail(b, 1, "g");
    NEXT(false), start(b, 'r', 0), pgt_msg_put_u8(b, 0), put_u64(b, 1), put_u64(b, 2),
        put_u64(b, 3), put_u64(b, 4), put_u32(b, 1), pgt_msg_put_cstr(b, "g");
#undef NEXT
    assert_int_equal(n, NSAMPLES);
    return n;
}

/* A v4 decoder with the relation cached and, if asked, inside a stream. */
static pgw_pgoutput_t *primed(bool in_stream)
{
    pgw_pgoutput_t *d = decoder(4, NULL);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    build_relation(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    if (in_stream) {
        start(&b, 'S', 0);
        put_u32(&b, 77), pgt_msg_put_u8(&b, 1);
        assert_int_equal(decode(d, &b, &m), 0);
    }
    pgw_buf_free(&b);
    return d;
}

/* Each sample decodes whole; cut at any byte, or with a byte more, it is
 * PGW_EPROTO and the decoder keeps its relation and stream state. */
static void test_truncated_and_trailing(void **state)
{
    (void)state;
    sample_t s[NSAMPLES] = {0};
    size_t n = build_samples(s);
    for (size_t i = 0; i < n; i++) {
        pgw_pgoutput_t *d = primed(s[i].in_stream);
        const pgw_pgoutput_relation_t *rel = pgw_pgoutput_relation(d, REL_OID);
        pgw_pgoutput_msg_t m;
        for (size_t len = 0; len < s[i].b.len; len++) {
            if (len && len == s[i].also_whole) continue;
            /* a copy of exactly len bytes, so ASan sees any over-read */
            uint8_t *cut = malloc(len ? len : 1);
            memcpy(cut, s[i].b.data, len);
            int rc = pgw_pgoutput_decode(d, cut, len, &m);
            free(cut);
            if (rc != PGW_EPROTO) fail_msg("sample %zu cut at %zu: %d", i, len, rc);
            assert_true(pgw_is_fatal(rc));
            assert_string_not_equal(pgw_pgoutput_error(d), "");
            assert_ptr_equal(pgw_pgoutput_relation(d, REL_OID), rel);
            assert_int_equal(pgw_pgoutput_in_stream(d), s[i].in_stream);
        }
        pgt_msg_put_u8(&s[i].b, 0);
        int rc = decode(d, &s[i].b, &m);
        if (rc != PGW_EPROTO) fail_msg("sample %zu with a trailing byte: %d", i, rc);
        assert_ptr_equal(pgw_pgoutput_relation(d, REL_OID), rel);
        s[i].b.len--;
        if (decode(d, &s[i].b, &m) != 0) fail_msg("sample %zu: %s", i, pgw_pgoutput_error(d));
        pgw_buf_free(&s[i].b);
        pgw_pgoutput_free(d);
    }
}

/* A one-message check: rc and a word of the error text. */
static void expect(pgw_pgoutput_t *d, const pgw_buf_t *b, int rc, const char *why)
{
    pgw_pgoutput_msg_t m;
    assert_int_equal(decode(d, b, &m), rc);
    if (!strstr(pgw_pgoutput_error(d), why))
        fail_msg("error \"%s\" does not say \"%s\"", pgw_pgoutput_error(d), why);
}

static void test_malformed(void **state)
{
    (void)state;
    pgw_pgoutput_t *d = primed(false);
    pgw_buf_t b = {0};

    for (int k = 0; k < 256; k++) { /* every byte that is no kind */
        if (strchr("BCORYIUDTMSEcAbPKrp", k) && k) continue;
        start(&b, (uint8_t)k, 0);
        put_u64(&b, 0);
        expect(d, &b, PGW_EPROTO, "unknown message kind");
    }
    pgw_pgoutput_msg_t m;
    assert_int_equal(pgw_pgoutput_decode(d, (const uint8_t *)"", 0, &m), PGW_EPROTO);

    /* tuple column count differs from the relation's */
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 4);
    expect(d, &b, PGW_EPROTO, "column count");
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 2);
    put_text_col(&b, "1"), put_text_col(&b, "2");
    expect(d, &b, PGW_EPROTO, "column count");
    /* a column length past the end, and one past INT32_MAX */
    static const uint32_t lens[] = {5, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    for (size_t i = 0; i < 4; i++) {
        start(&b, 'I', 0);
        put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 3);
        pgt_msg_put_u8(&b, 'b'), put_u32(&b, lens[i]), put_u32(&b, 1);
        expect(d, &b, PGW_EPROTO, "length past the end");
    }
    /* an unknown column kind */
    start(&b, 'I', 0);
    put_u32(&b, REL_OID), pgt_msg_put_u8(&b, 'N'), pgt_msg_put_i16(&b, 3);
    pgt_msg_put_u8(&b, 'x'), pgt_msg_put_u8(&b, 'n'), pgt_msg_put_u8(&b, 'n');
    expect(d, &b, PGW_EPROTO, "column kind");
    /* tuple markers out of place */
    static const char *const bad_markers[] = {"IK", "IO", "IX", "UX", "UKK", "DN", "DX"};
    for (size_t i = 0; i < 7; i++) {
        const char *mk = bad_markers[i];
        start(&b, (uint8_t)mk[0], 0);
        put_u32(&b, REL_OID), pgt_msg_put_u8(&b, (uint8_t)mk[1]), put_tuple(&b, "1", "a");
        if (mk[2]) pgt_msg_put_u8(&b, (uint8_t)mk[2]), put_tuple(&b, "1", "a");
        pgw_pgoutput_msg_t mm;
        assert_int_equal(decode(d, &b, &mm), PGW_EPROTO);
    }
    /* a relation claiming more columns than its bytes hold, or than a
     * table can have */
    static const uint16_t counts[] = {4, 1665, 0xffff};
    for (size_t i = 0; i < 3; i++) {
        build_relation(&b, 0, 99);
        b.data[1 + 4 + 7 + 2 + 1] = (uint8_t)(counts[i] >> 8);
        b.data[1 + 4 + 7 + 2 + 2] = (uint8_t)counts[i];
        assert_int_equal(decode(d, &b, &m), PGW_EPROTO);
        assert_null(pgw_pgoutput_relation(d, 99));
    }
    /* a name without its NUL */
    start(&b, 'Y', 0);
    put_u32(&b, 1), pgt_msg_put_cstr(&b, "n"), pgt_msg_raw(&b, "abc", 3);
    expect(d, &b, PGW_EPROTO, "NUL");
    /* truncate count past the end */
    start(&b, 'T', 0);
    put_u32(&b, 0x40000000u), pgt_msg_put_u8(&b, 0), put_u32(&b, 1);
    expect(d, &b, PGW_EPROTO, "past the end");
    /* message content past the end */
    start(&b, 'M', 0);
    pgt_msg_put_u8(&b, 0), put_u64(&b, 1), pgt_msg_put_cstr(&b, "p"), put_u32(&b, 0xfffffff0u);
    expect(d, &b, PGW_EPROTO, "past the end");

    /* the cached relation survived all of it */
    build_insert(&b, 0, REL_OID);
    expect(d, &b, 0, "");
    pgw_buf_free(&b);
    pgw_pgoutput_free(d);
}

/* ------------------------------------------------------- memory, handles */

/* After the Relation, changes allocate nothing; a failed allocation while
 * caching leaves the cache as it was and leaks nothing. */
static void test_allocations(void **state)
{
    (void)state;
    pgt_alloc_t fa;
    pgt_alloc_init(&fa);
    pgw_pgoutput_t *d = decoder(2, &fa.base);
    pgw_buf_t b = {0};
    pgw_pgoutput_msg_t m;
    build_relation(&b, 0, REL_OID);
    assert_int_equal(decode(d, &b, &m), 0);
    pgw_buf_t ins = {0}, upd = {0};
    build_insert(&ins, 0, REL_OID);
    start(&upd, 'U', 0);
    put_u32(&upd, REL_OID), pgt_msg_put_u8(&upd, 'O'), put_tuple(&upd, "1", "x");
    pgt_msg_put_u8(&upd, 'N'), put_binary_tuple(&upd, 2);
    pgt_alloc_reset(&fa);
    for (int i = 0; i < 10000; i++) {
        assert_int_equal(decode(d, &ins, &m), 0);
        assert_int_equal(decode(d, &upd, &m), 0);
    }
    assert_int_equal(fa.calls, 0);

    /* caching a wider relation under every failure point */
    start(&b, 'R', 0);
    put_u32(&b, 5), pgt_msg_put_cstr(&b, "s"), pgt_msg_put_cstr(&b, "wide");
    pgt_msg_put_u8(&b, 'd'), pgt_msg_put_i16(&b, 100);
    for (int c = 0; c < 100; c++)
        pgt_msg_put_u8(&b, 0), pgt_msg_put_cstr(&b, "c"), put_u32(&b, 23), put_u32(&b, 0);
    for (long n = 1;; n++) {
        pgt_alloc_reset(&fa);
        fa.fail_at = n;
        int rc = decode(d, &b, &m);
        if (rc == 0) break;
        assert_int_equal(rc, PGW_ENOMEM);
        assert_null(pgw_pgoutput_relation(d, 5));
        assert_non_null(pgw_pgoutput_relation(d, REL_OID));
        assert_int_equal(decode(d, &ins, &m), 0);
    }
    assert_int_equal(pgw_pgoutput_relation(d, 5)->ncols, 100);
    pgw_pgoutput_free(d);
    assert_int_equal(fa.blocks, 0);
    pgw_buf_free(&b);
    pgw_buf_free(&ins);
    pgw_buf_free(&upd);
}

static void test_null_handles(void **state)
{
    (void)state;
    pgw_pgoutput_msg_t m;
    pgw_pgoutput_t *d = NULL;
    assert_int_equal(pgw_pgoutput_new(NULL, NULL), PGW_EINVAL);
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.proto_version = 5;
    assert_int_equal(pgw_pgoutput_new(&cfg, &d), PGW_EINVAL);
    cfg.proto_version = 0;
    assert_int_equal(pgw_pgoutput_new(&cfg, &d), PGW_EINVAL);
    assert_null(d);
    assert_int_equal(pgw_pgoutput_decode(NULL, (const uint8_t *)"E", 1, &m), PGW_EINVAL);
    assert_int_equal(pgw_pgoutput_new(NULL, &d), 0);
    assert_int_equal(pgw_pgoutput_decode(d, NULL, 1, &m), PGW_EINVAL);
    assert_int_equal(pgw_pgoutput_decode(d, (const uint8_t *)"E", 1, NULL), PGW_EINVAL);
    assert_string_equal(pgw_pgoutput_error(NULL), "");
    assert_null(pgw_pgoutput_relation(NULL, 1));
    assert_null(pgw_pgoutput_relation(d, 1));
    assert_int_equal(pgw_pgoutput_in_stream(NULL), 0);
    assert_int_equal(pgw_pgoutput_truncate_relid(NULL, 0), 0);
    pgw_pgoutput_config_init(NULL);
    pgw_pgoutput_reset(NULL);
    pgw_pgoutput_free(NULL);
    pgw_pgoutput_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_commit_origin), cmocka_unit_test(test_type_message_truncate),
        cmocka_unit_test(test_relation_insert),     cmocka_unit_test(test_update_delete),
        cmocka_unit_test(test_relation_replaced),   cmocka_unit_test(test_unknown_relation),
        cmocka_unit_test(test_registry_resolves),   cmocka_unit_test(test_stream),
        cmocka_unit_test(test_two_phase),           cmocka_unit_test(test_truncated_and_trailing),
        cmocka_unit_test(test_malformed),           cmocka_unit_test(test_allocations),
        cmocka_unit_test(test_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
