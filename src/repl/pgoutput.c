/*
 * The pgoutput decoder (replication.h): one message in, views out. Only a
 * Relation message allocates (its cache entry, and the per-column arrays
 * that tuples are decoded into, grown to the widest relation).
 */
#include "pgwire/replication.h"

#include "pgwire/types_container.h"
#include "util/internal.h"

#include <stdio.h>

/* MaxTupleAttributeNumber: no relation the server sends has more. */
#define MAX_COLS 1664

/* The smallest attribute entry of a Relation message: flags, an empty
 * name's NUL, type OID, typmod. Bounds natts before anything is sized by it. */
#define MIN_ATTR_BYTES (1 + 1 + 4 + 4)

/* A cached relation: the public description, then its arrays and strings
 * in the same allocation. */
typedef struct rel_entry {
    pgw_pgoutput_relation_t pub;
} rel_entry_t;

/* The tuple columns of one side (old or new) of a change. */
typedef struct tuple_slots {
    pgw_value_t *values;
    uint8_t *kinds;
} tuple_slots_t;

struct pgw_pgoutput {
    pgw_pgoutput_config_t cfg;
    rel_entry_t **slots; /* open addressing by OID; cap a power of two */
    size_t cap;
    size_t count;
    tuple_slots_t old_cols, new_cols;
    size_t cols_cap; /* entries of each tuple_slots array */
    bool in_stream;
    uint32_t stream_xid;
    char err[160];
};

/* A bounded reader over one message: a read past the end sets why and
 * returns zeroes, so that a decoder reads a whole message and checks once. */
typedef struct reader {
    const uint8_t *p, *end;
    const char *why; /* the first thing that went wrong, or NULL */
} reader_t;

static bool need(reader_t *r, size_t n)
{
    if (r->why) return false;
    if ((size_t)(r->end - r->p) < n) {
        r->why = "message truncated";
        return false;
    }
    return true;
}

/* n big-endian bytes (1 to 8) as an integer. */
static uint64_t rd_be(reader_t *r, size_t n)
{
    if (!need(r, n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | r->p[i];
    r->p += n;
    return v;
}

static uint8_t rd_u8(reader_t *r)
{
    return (uint8_t)rd_be(r, 1);
}

static uint16_t rd_u16(reader_t *r)
{
    return (uint16_t)rd_be(r, 2);
}

static uint32_t rd_u32(reader_t *r)
{
    return (uint32_t)rd_be(r, 4);
}

static uint64_t rd_u64(reader_t *r)
{
    return rd_be(r, 8);
}

static pgw_str_t rd_str(reader_t *r)
{
    pgw_str_t s = {"", 0};
    if (r->why) return s;
    const uint8_t *nul = memchr(r->p, 0, (size_t)(r->end - r->p));
    if (!nul) {
        r->why = "string without its terminating NUL";
        return s;
    }
    s.p = (const char *)r->p;
    s.len = (size_t)(nul - r->p);
    r->p = nul + 1;
    return s;
}

static void fail_if(reader_t *r, bool bad, const char *why)
{
    if (bad && !r->why) r->why = why;
}

static size_t remaining(const reader_t *r)
{
    return (size_t)(r->end - r->p);
}

static int fail(pgw_pgoutput_t *d, int code, const char *why)
{
    snprintf(d->err, sizeof d->err, "%s", why);
    return code;
}

/* ------------------------------------------------------- relation cache */

static size_t slot_of(const pgw_pgoutput_t *d, uint32_t oid)
{
    size_t i = (oid * 2654435761u) & (d->cap - 1);
    while (d->slots[i] && d->slots[i]->pub.oid != oid)
        i = (i + 1) & (d->cap - 1);
    return i;
}

static rel_entry_t *find_rel(const pgw_pgoutput_t *d, uint32_t oid)
{
    return d->cap ? d->slots[slot_of(d, oid)] : NULL;
}

/* Room for one more relation, keeping the load under a half. */
static int reserve_slot(pgw_pgoutput_t *d)
{
    if ((d->count + 1) * 2 <= d->cap) return 0;
    size_t ncap = d->cap ? d->cap * 2 : 16;
    rel_entry_t **old = d->slots;
    size_t ocap = d->cap;
    rel_entry_t **ns = pgw__calloc(d->cfg.alloc, ncap, sizeof *ns);
    if (!ns) return PGW_ENOMEM;
    d->slots = ns;
    d->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i]) d->slots[slot_of(d, old[i]->pub.oid)] = old[i];
    pgw__free(d->cfg.alloc, old);
    return 0;
}

/* Grow the tuple arrays to ncols entries. */
static int reserve_cols(pgw_pgoutput_t *d, size_t ncols)
{
    if (ncols <= d->cols_cap) return 0;
    tuple_slots_t *sides[2] = {&d->old_cols, &d->new_cols};
    for (int s = 0; s < 2; s++) {
        pgw_value_t *v = pgw__realloc(d->cfg.alloc, sides[s]->values, ncols * sizeof *v);
        if (!v) return PGW_ENOMEM;
        sides[s]->values = v;
        uint8_t *k = pgw__realloc(d->cfg.alloc, sides[s]->kinds, ncols);
        if (!k) return PGW_ENOMEM;
        sides[s]->kinds = k;
    }
    d->cols_cap = ncols;
    return 0;
}

static void free_cache(pgw_pgoutput_t *d)
{
    for (size_t i = 0; i < d->cap; i++) {
        pgw__free(d->cfg.alloc, d->slots[i]);
        d->slots[i] = NULL;
    }
    d->count = 0;
}

/* ------------------------------------------------------------- Relation */

/* The attribute list as parsed in place, before it is copied. */
typedef struct attr_view {
    uint8_t flags;
    pgw_str_t name;
    uint32_t type_oid;
    int32_t typmod;
} attr_view_t;

/* Byte size of an entry for ncols columns with names_len bytes of names
 * (each with its NUL) and the two relation names. */
static size_t entry_size(size_t ncols, size_t strings_len)
{
    return sizeof(rel_entry_t) + ncols * (sizeof(pgw_field_desc_t) + sizeof(uint32_t) + 1) +
           strings_len;
}

static char *copy_str(char **dst, pgw_str_t s)
{
    char *out = *dst;
    memcpy(out, s.p, s.len);
    out[s.len] = 0;
    *dst += s.len + 1;
    return out;
}

/* Build the cache entry for a parsed Relation: one allocation, every
 * string copied (they view the caller's message). */
static rel_entry_t *make_entry(const pgw_pgoutput_t *d, uint32_t oid, pgw_str_t nsp, pgw_str_t rel,
                               char replident, const attr_view_t *attrs, uint16_t ncols,
                               size_t names_len)
{
    size_t strings = nsp.len + 1 + rel.len + 1 + names_len;
    rel_entry_t *e = pgw__malloc(d->cfg.alloc, entry_size(ncols, strings));
    if (!e) return NULL;
    pgw_field_desc_t *fields = (pgw_field_desc_t *)(e + 1);
    uint32_t *value_oids = (uint32_t *)(fields + ncols);
    uint8_t *flags = (uint8_t *)(value_oids + ncols);
    char *str = (char *)(flags + ncols);
    e->pub.oid = oid;
    e->pub.nspname = copy_str(&str, nsp);
    e->pub.relname = copy_str(&str, rel);
    e->pub.replident = replident;
    e->pub.ncols = ncols;
    e->pub.columns = fields;
    e->pub.col_flags = flags;
    e->pub.value_oids = value_oids;
    for (uint16_t i = 0; i < ncols; i++) {
        const char *name = copy_str(&str, attrs[i].name);
        fields[i] = (pgw_field_desc_t){.name = {name, attrs[i].name.len},
                                       .table_oid = oid,
                                       .attnum = (int16_t)(i + 1),
                                       .type_oid = attrs[i].type_oid,
                                       .typlen = 0,
                                       .typmod = attrs[i].typmod,
                                       .format = 0};
        flags[i] = attrs[i].flags;
        value_oids[i] = pgw_type_resolve_oid(d->cfg.registry, attrs[i].type_oid);
    }
    return e;
}

/* Parse the attributes twice: once to check and measure (no storage
 * needed), once while copying. The first pass fills attrs when given. */
static size_t parse_attrs(reader_t *r, uint16_t ncols, attr_view_t *attrs)
{
    size_t names_len = 0;
    for (uint16_t i = 0; i < ncols && !r->why; i++) {
        attr_view_t a;
        a.flags = rd_u8(r);
        a.name = rd_str(r);
        a.type_oid = rd_u32(r);
        a.typmod = (int32_t)rd_u32(r);
        names_len += a.name.len + 1;
        if (attrs) attrs[i] = a;
    }
    return names_len;
}

static int decode_relation(pgw_pgoutput_t *d, reader_t *r, pgw_pgoutput_msg_t *out)
{
    uint32_t oid = rd_u32(r);
    pgw_str_t nsp = rd_str(r);
    pgw_str_t rel = rd_str(r);
    char replident = (char)rd_u8(r);
    uint16_t ncols = rd_u16(r);
    fail_if(r, ncols > MAX_COLS, "relation with more columns than a table can have");
    fail_if(r, (size_t)ncols * MIN_ATTR_BYTES > remaining(r), "column count past the end");
    reader_t probe = *r;
    size_t names_len = parse_attrs(&probe, ncols, NULL);
    fail_if(&probe, probe.p != probe.end, "trailing bytes after the message");
    if (r->why || probe.why) return fail(d, PGW_EPROTO, r->why ? r->why : probe.why);

    attr_view_t stack[64];
    attr_view_t *attrs = ncols <= 64 ? stack : pgw__malloc(d->cfg.alloc, ncols * sizeof *attrs);
    if (!attrs) return fail(d, PGW_ENOMEM, "out of memory caching a relation");
    parse_attrs(r, ncols, attrs);
    int rc = reserve_cols(d, ncols);
    if (rc == 0 && !find_rel(d, oid)) rc = reserve_slot(d);
    rel_entry_t *e =
        rc == 0 ? make_entry(d, oid, nsp, rel, replident, attrs, ncols, names_len) : NULL;
    if (attrs != stack) pgw__free(d->cfg.alloc, attrs);
    if (!e) return fail(d, PGW_ENOMEM, "out of memory caching a relation");

    size_t i = slot_of(d, oid);
    if (d->slots[i])
        pgw__free(d->cfg.alloc, d->slots[i]);
    else
        d->count++;
    d->slots[i] = e;
    out->u.relation = &e->pub;
    return 0;
}

/* ---------------------------------------------------------------- tuples */

static void read_column(reader_t *r, uint8_t kind, uint32_t oid, pgw_value_t *v)
{
    *v = (pgw_value_t){.p = NULL, .len = -1, .format = PGW_FORMAT_TEXT, .oid = oid};
    if (kind == PGW_PGOUTPUT_COL_NULL || kind == PGW_PGOUTPUT_COL_UNCHANGED) return;
    if (kind != PGW_PGOUTPUT_COL_TEXT && kind != PGW_PGOUTPUT_COL_BINARY) {
        fail_if(r, true, "unknown tuple column kind");
        return;
    }
    uint32_t len = rd_u32(r);
    fail_if(r, len > INT32_MAX || len > remaining(r), "column length past the end");
    if (r->why) return;
    v->p = r->p;
    v->len = (int32_t)len;
    v->format = kind == PGW_PGOUTPUT_COL_BINARY ? PGW_FORMAT_BINARY : PGW_FORMAT_TEXT;
    r->p += len;
}

static void read_tuple(reader_t *r, const pgw_pgoutput_relation_t *rel, tuple_slots_t *slots,
                       pgw_pgoutput_tuple_t *out)
{
    uint16_t ncols = rd_u16(r);
    fail_if(r, ncols != rel->ncols, "tuple column count differs from its relation's");
    for (uint16_t i = 0; i < ncols && !r->why; i++) {
        slots->kinds[i] = rd_u8(r);
        read_column(r, slots->kinds[i], rel->value_oids[i], &slots->values[i]);
    }
    out->row = (pgw_row_t){
        .ncols = rel->ncols, .values = slots->values, .fields = rel->columns, .index = 0};
    out->kinds = slots->kinds;
}

/* Insert, Update, Delete: relation OID, then the markers and tuples. */
static int decode_change(pgw_pgoutput_t *d, reader_t *r, pgw_pgoutput_msg_t *out)
{
    uint32_t oid = rd_u32(r);
    if (r->why) return fail(d, PGW_EPROTO, r->why);
    const rel_entry_t *e = find_rel(d, oid);
    if (!e) {
        snprintf(d->err, sizeof d->err,
                 "change of relation %u, which no Relation message described", oid);
        return PGW_ENOTFOUND;
    }
    out->u.change.relation = &e->pub;
    out->u.change.old_kind = 0;
    uint8_t marker = rd_u8(r);
    if (out->kind != PGW_PGOUTPUT_INSERT && (marker == 'K' || marker == 'O')) {
        out->u.change.old_kind = marker;
        read_tuple(r, &e->pub, &d->old_cols, &out->u.change.old_tuple);
        if (out->kind == PGW_PGOUTPUT_DELETE) return 0;
        marker = rd_u8(r);
    }
    fail_if(r, out->kind == PGW_PGOUTPUT_DELETE, "delete without its old tuple");
    fail_if(r, marker != 'N', "expected the new tuple marker 'N'");
    read_tuple(r, &e->pub, &d->new_cols, &out->u.change.new_tuple);
    return 0;
}

/* ---------------------------------------------------------- the others */

static void decode_commit(reader_t *r, pgw_pgoutput_msg_t *out)
{
    out->u.commit.flags = rd_u8(r);
    out->u.commit.commit_lsn = rd_u64(r);
    out->u.commit.end_lsn = rd_u64(r);
    out->u.commit.commit_time = (int64_t)rd_u64(r);
}

static void decode_truncate(reader_t *r, pgw_pgoutput_msg_t *out)
{
    uint32_t n = rd_u32(r);
    out->u.truncate.nrelids = n;
    out->u.truncate.options = rd_u8(r);
    fail_if(r, n > remaining(r) / 4, "relation count past the end");
    out->u.truncate._relids = r->p;
    if (!r->why) r->p += (size_t)n * 4;
}

static void decode_message(reader_t *r, pgw_pgoutput_msg_t *out)
{
    out->u.message.flags = rd_u8(r);
    out->u.message.lsn = rd_u64(r);
    out->u.message.prefix = rd_str(r);
    uint32_t len = rd_u32(r);
    fail_if(r, len > INT32_MAX || len > remaining(r), "message content past the end");
    if (r->why) return;
    out->u.message.content = (pgw_view_t){r->p, (int32_t)len};
    r->p += len;
}

static void decode_stream_abort(const pgw_pgoutput_t *d, reader_t *r, pgw_pgoutput_msg_t *out)
{
    out->xid = rd_u32(r);
    out->u.stream_abort.subxid = rd_u32(r);
    out->u.stream_abort.has_abort_info = false;
    /* v4 sends the abort's LSN and time only with streaming parallel: the
     * message says which by its length. */
    if (!r->why && remaining(r) > 0 && d->cfg.proto_version >= 4) {
        out->u.stream_abort.has_abort_info = true;
        out->u.stream_abort.abort_lsn = rd_u64(r);
        out->u.stream_abort.abort_time = (int64_t)rd_u64(r);
    }
}

/* Begin Prepare has no flags; the other prepare messages start with them
 * and carry the xid after the times. */
static void decode_prepare(reader_t *r, bool has_flags, pgw_pgoutput_msg_t *out)
{
    out->u.prepare.flags = has_flags ? rd_u8(r) : 0;
    out->u.prepare.lsn = rd_u64(r);
    out->u.prepare.end_lsn = rd_u64(r);
    out->u.prepare.time = (int64_t)rd_u64(r);
    out->xid = rd_u32(r);
    out->u.prepare.gid = rd_str(r);
}

static void decode_rollback_prepared(reader_t *r, pgw_pgoutput_msg_t *out)
{
    out->u.rollback_prepared.flags = rd_u8(r);
    out->u.rollback_prepared.prepare_end_lsn = rd_u64(r);
    out->u.rollback_prepared.rollback_end_lsn = rd_u64(r);
    out->u.rollback_prepared.prepare_time = (int64_t)rd_u64(r);
    out->u.rollback_prepared.rollback_time = (int64_t)rd_u64(r);
    out->xid = rd_u32(r);
    out->u.rollback_prepared.gid = rd_str(r);
}

/* The protocol version that introduced kind, or 0 if kind is unknown. */
static uint32_t kind_version(uint8_t kind)
{
    switch (kind) {
    case PGW_PGOUTPUT_BEGIN:
    case PGW_PGOUTPUT_COMMIT:
    case PGW_PGOUTPUT_ORIGIN:
    case PGW_PGOUTPUT_RELATION:
    case PGW_PGOUTPUT_TYPE:
    case PGW_PGOUTPUT_INSERT:
    case PGW_PGOUTPUT_UPDATE:
    case PGW_PGOUTPUT_DELETE:
    case PGW_PGOUTPUT_TRUNCATE:
    case PGW_PGOUTPUT_MESSAGE:
        return 1;
    case PGW_PGOUTPUT_STREAM_START:
    case PGW_PGOUTPUT_STREAM_STOP:
    case PGW_PGOUTPUT_STREAM_COMMIT:
    case PGW_PGOUTPUT_STREAM_ABORT:
        return 2;
    case PGW_PGOUTPUT_BEGIN_PREPARE:
    case PGW_PGOUTPUT_PREPARE:
    case PGW_PGOUTPUT_COMMIT_PREPARED:
    case PGW_PGOUTPUT_ROLLBACK_PREPARED:
    case PGW_PGOUTPUT_STREAM_PREPARE:
        return 3;
    default:
        return 0;
    }
}

/* Messages that carry their transaction's xid first inside a stream. */
static bool carries_stream_xid(uint8_t kind)
{
    return kind == PGW_PGOUTPUT_RELATION || kind == PGW_PGOUTPUT_TYPE ||
           kind == PGW_PGOUTPUT_INSERT || kind == PGW_PGOUTPUT_UPDATE ||
           kind == PGW_PGOUTPUT_DELETE || kind == PGW_PGOUTPUT_TRUNCATE ||
           kind == PGW_PGOUTPUT_MESSAGE;
}

/* The body of one message after its kind (and streamed xid). Returns 0 or
 * a code already described in d->err; reader errors are left in r. */
static int decode_body(pgw_pgoutput_t *d, reader_t *r, pgw_pgoutput_msg_t *out)
{
    switch (out->kind) {
    case PGW_PGOUTPUT_BEGIN:
        out->u.begin.final_lsn = rd_u64(r);
        out->u.begin.commit_time = (int64_t)rd_u64(r);
        out->xid = rd_u32(r);
        return 0;
    case PGW_PGOUTPUT_COMMIT:
        decode_commit(r, out);
        return 0;
    case PGW_PGOUTPUT_ORIGIN:
        out->u.origin.commit_lsn = rd_u64(r);
        out->u.origin.name = rd_str(r);
        return 0;
    case PGW_PGOUTPUT_RELATION:
        return decode_relation(d, r, out);
    case PGW_PGOUTPUT_TYPE:
        out->u.type.oid = rd_u32(r);
        out->u.type.nspname = rd_str(r);
        out->u.type.name = rd_str(r);
        return 0;
    case PGW_PGOUTPUT_INSERT:
    case PGW_PGOUTPUT_UPDATE:
    case PGW_PGOUTPUT_DELETE:
        return decode_change(d, r, out);
    case PGW_PGOUTPUT_TRUNCATE:
        decode_truncate(r, out);
        return 0;
    case PGW_PGOUTPUT_MESSAGE:
        decode_message(r, out);
        return 0;
    case PGW_PGOUTPUT_STREAM_START:
        fail_if(r, d->in_stream, "stream start inside a stream");
        out->xid = rd_u32(r);
        out->u.stream_start.first_segment = rd_u8(r);
        return 0;
    case PGW_PGOUTPUT_STREAM_STOP:
        fail_if(r, !d->in_stream, "stream stop outside a stream");
        out->xid = d->stream_xid;
        return 0;
    case PGW_PGOUTPUT_STREAM_COMMIT:
        out->xid = rd_u32(r);
        decode_commit(r, out);
        return 0;
    case PGW_PGOUTPUT_STREAM_ABORT:
        decode_stream_abort(d, r, out);
        return 0;
    case PGW_PGOUTPUT_BEGIN_PREPARE:
        decode_prepare(r, false, out);
        return 0;
    case PGW_PGOUTPUT_PREPARE:
    case PGW_PGOUTPUT_COMMIT_PREPARED:
    case PGW_PGOUTPUT_STREAM_PREPARE:
        decode_prepare(r, true, out);
        return 0;
    case PGW_PGOUTPUT_ROLLBACK_PREPARED:
        decode_rollback_prepared(r, out);
        return 0;
    default:
        return fail(d, PGW_EPROTO, "unknown message kind");
    }
}

PGW_EXTERN int pgw_pgoutput_decode(pgw_pgoutput_t *d, const uint8_t *data, size_t len,
                                   pgw_pgoutput_msg_t *out)
{
    if (!d || !out || (!data && len)) return PGW_EINVAL;
    d->err[0] = 0;
    if (len == 0) return fail(d, PGW_EPROTO, "empty message");
    memset(out, 0, sizeof *out);
    reader_t r = {data + 1, data + len, NULL};
    out->kind = data[0];
    uint32_t since = kind_version(out->kind);
    if (since == 0) return fail(d, PGW_EPROTO, "unknown message kind");
    if (since > d->cfg.proto_version)
        return fail(d, PGW_EPROTO, "message kind of a later protocol version");
    if (d->in_stream && carries_stream_xid(out->kind)) out->xid = rd_u32(&r);

    int rc = decode_body(d, &r, out);
    if (rc != 0) return rc;
    fail_if(&r, r.p != r.end, "trailing bytes after the message");
    if (r.why) return fail(d, PGW_EPROTO, r.why);
    if (out->kind == PGW_PGOUTPUT_STREAM_START) {
        d->in_stream = true;
        d->stream_xid = out->xid;
    } else if (out->kind == PGW_PGOUTPUT_STREAM_STOP) {
        d->in_stream = false;
    }
    return 0;
}

/* --------------------------------------------------------------- lifecycle */

PGW_EXTERN void pgw_pgoutput_config_init(pgw_pgoutput_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->proto_version = PGW_PGOUTPUT_VERSION_MAX;
}

PGW_EXTERN int pgw_pgoutput_new(const pgw_pgoutput_config_t *cfg, pgw_pgoutput_t **out)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    pgw_pgoutput_config_t c;
    pgw_pgoutput_config_init(&c);
    if (cfg) pgw__copy_sized(&c, sizeof c, cfg);
    if (c.proto_version < PGW_PGOUTPUT_VERSION_MIN || c.proto_version > PGW_PGOUTPUT_VERSION_MAX)
        return PGW_EINVAL;
    pgw_pgoutput_t *d = pgw__calloc(c.alloc, 1, sizeof *d);
    if (!d) return PGW_ENOMEM;
    d->cfg = c;
    *out = d;
    return 0;
}

PGW_EXTERN void pgw_pgoutput_reset(pgw_pgoutput_t *d)
{
    if (!d) return;
    free_cache(d);
    d->in_stream = false;
    d->stream_xid = 0;
    d->err[0] = 0;
}

PGW_EXTERN void pgw_pgoutput_free(pgw_pgoutput_t *d)
{
    if (!d) return;
    const pgw_allocator_t *a = d->cfg.alloc;
    free_cache(d);
    pgw__free(a, d->slots);
    pgw__free(a, d->old_cols.values);
    pgw__free(a, d->old_cols.kinds);
    pgw__free(a, d->new_cols.values);
    pgw__free(a, d->new_cols.kinds);
    pgw__free(a, d);
}

PGW_EXTERN const char *pgw_pgoutput_error(const pgw_pgoutput_t *d)
{
    return d ? d->err : "";
}

PGW_EXTERN const pgw_pgoutput_relation_t *pgw_pgoutput_relation(const pgw_pgoutput_t *d,
                                                                uint32_t oid)
{
    const rel_entry_t *e = d ? find_rel(d, oid) : NULL;
    return e ? &e->pub : NULL;
}

PGW_EXTERN int pgw_pgoutput_in_stream(const pgw_pgoutput_t *d)
{
    return d && d->in_stream;
}

PGW_EXTERN uint32_t pgw_pgoutput_truncate_relid(const pgw_pgoutput_msg_t *m, uint32_t i)
{
    if (!m || m->kind != PGW_PGOUTPUT_TRUNCATE || i >= m->u.truncate.nrelids) return 0;
    return pgw__get32(m->u.truncate._relids + (size_t)i * 4);
}
