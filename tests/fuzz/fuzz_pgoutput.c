/*
 * libFuzzer target: the pgoutput decoder (replication.h) over a stream of
 * messages, with its relation cache and stream state carried from one
 * message to the next as on a replication connection.
 *
 * Input: one byte choosing the protocol version (1 + byte % 4), then
 * messages, each a 2-byte big-endian length and that many bytes (a length
 * past the end takes the rest). Each message is decoded from a copy of
 * exactly its size, so that the sanitizers see any read past it. Checked:
 * an error is one of the documented codes, has a reason and leaves the
 * stream state as it was; a decoded message's views lie inside it; a
 * tuple has its relation's column count and every value it carries is
 * read through the types layer (pgw_get_datum, and as the server's text).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/replication.h"

/* A broken invariant: a crash libFuzzer reports with its input. */
#define CHECK(cond)           \
    do {                      \
        if (!(cond)) abort(); \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const void *p, size_t n, const uint8_t *msg, size_t len)
{
    const uint8_t *q = p;
    return n == 0 || (q >= msg && q <= msg + len && n <= (size_t)(msg + len - q));
}

static void walk_tuple(const pgw_pgoutput_tuple_t *t, const pgw_pgoutput_relation_t *rel,
                       const uint8_t *msg, size_t len, pgw_buf_t *text)
{
    CHECK(t->row.ncols == rel->ncols && t->row.fields == rel->columns);
    for (size_t c = 0; c < t->row.ncols; c++) {
        const pgw_value_t *v = &t->row.values[c];
        uint8_t k = t->kinds[c];
        CHECK(k == 'n' || k == 'u' || k == 't' || k == 'b');
        CHECK((v->len < 0) == (k == 'n' || k == 'u'));
        CHECK(v->oid == rel->value_oids[c]);
        if (v->len < 0) continue;
        CHECK(inside(v->p, (size_t)v->len, msg, len));
        pgw_datum_t dt;
        (void)pgw_get_datum(v, &dt);
        pgw_buf_reset(text);
        (void)pgw_value_to_text(v, NULL, text);
    }
}

static void walk(const pgw_pgoutput_t *d, const pgw_pgoutput_msg_t *m, const uint8_t *msg,
                 size_t len, pgw_buf_t *text)
{
    switch (m->kind) {
    case PGW_PGOUTPUT_RELATION:
        CHECK(pgw_pgoutput_relation(d, m->u.relation->oid) == m->u.relation);
        for (size_t c = 0; c < m->u.relation->ncols; c++)
            CHECK(strlen(m->u.relation->columns[c].name.p) == m->u.relation->columns[c].name.len);
        break;
    case PGW_PGOUTPUT_INSERT:
    case PGW_PGOUTPUT_UPDATE:
    case PGW_PGOUTPUT_DELETE: {
        const pgw_pgoutput_relation_t *rel = m->u.change.relation;
        CHECK(pgw_pgoutput_relation(d, rel->oid) == rel);
        if (m->u.change.old_kind) walk_tuple(&m->u.change.old_tuple, rel, msg, len, text);
        if (m->kind != PGW_PGOUTPUT_DELETE) walk_tuple(&m->u.change.new_tuple, rel, msg, len, text);
        break;
    }
    case PGW_PGOUTPUT_TRUNCATE:
        for (uint32_t i = 0; i < m->u.truncate.nrelids; i++)
            (void)pgw_pgoutput_truncate_relid(m, i);
        break;
    case PGW_PGOUTPUT_MESSAGE:
        CHECK(inside(m->u.message.content.p, (size_t)m->u.message.content.len, msg, len));
        CHECK(inside(m->u.message.prefix.p, m->u.message.prefix.len, msg, len));
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.proto_version = 1u + data[0] % 4u;
    pgw_pgoutput_t *d;
    CHECK(pgw_pgoutput_new(&cfg, &d) == 0);
    pgw_buf_t text = {0};
    size_t off = 1;
    while (off < size) {
        size_t len = size - off < 2 ? 0 : (size_t)data[off] << 8 | data[off + 1];
        off += size - off < 2 ? size - off : 2;
        if (len > size - off) len = size - off;
        uint8_t *msg = malloc(len ? len : 1);
        CHECK(msg != NULL);
        if (len) memcpy(msg, data + off, len);
        off += len;
        int was_in_stream = pgw_pgoutput_in_stream(d);
        pgw_pgoutput_msg_t m;
        int rc = pgw_pgoutput_decode(d, msg, len, &m);
        if (rc == 0) {
            CHECK(pgw_pgoutput_error(d)[0] == 0);
            walk(d, &m, msg, len, &text);
        } else {
            CHECK(rc == PGW_EPROTO || rc == PGW_ENOTFOUND || rc == PGW_ENOMEM);
            CHECK(pgw_pgoutput_error(d)[0] != 0);
            CHECK(pgw_pgoutput_in_stream(d) == was_in_stream);
        }
        free(msg);
    }
    pgw_buf_free(&text);
    pgw_pgoutput_free(d);
    return 0;
}
