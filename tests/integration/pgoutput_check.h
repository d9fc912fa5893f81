/*
 * Checking decoded pgoutput changes against the source rows read back
 * with a query (test_pgoutput_live.c through the SQL interface,
 * test_repl_stream.c through START_REPLICATION): each tuple column sent
 * must be byte-equal to the query's cell in its format and read the same
 * through the typed decoders. Include after cmocka.h.
 */
#ifndef PGW_TESTS_PGOUTPUT_CHECK_H
#define PGW_TESTS_PGOUTPUT_CHECK_H

#include <stdbool.h>
#include <string.h>

#include "pgwire/replication.h"
#include "pgwire/result.h"
#include "pgwire/types.h"

/* The table as it is, in text and in binary (every column). */
typedef struct snap {
    pgw_result_t *text, *bin;
} snap_t;

/* The row of r (ordered by id) whose id is id, or -1. */
static long find_row(const pgw_result_t *r, int32_t id)
{
    size_t lo = 0, hi = pgw_result_nrows(r);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t v;
        assert_int_equal(pgw_result_int4(r, mid, 0, &v), 0);
        if (v == id) return (long)mid;
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* What one read of the slot decoded. */
typedef struct seen {
    int inserts, updates, deletes, truncates;
    int old_key, old_full; /* old tuples by kind */
    int unchanged;         /* 'u' columns */
    int binary_values;     /* values that came in binary */
    int stream_starts, stream_commits;
    int messages; /* pg_logical_emit_message's, prefix pgo */
} seen_t;

/* Beyond the bytes: the types layer reads the decoded value as the result
 * accessor reads the query's cell (a domain as its base type, an enum as
 * text, through the same registry): same status, same kind, same text. */
static void check_typed(const pgw_value_t *got, const pgw_result_t *r, size_t row, size_t col)
{
    pgw_datum_t a, b;
    pgw_value_t want;
    assert_int_equal(pgw_result_value(r, row, col, &want), 0);
    int rc = pgw_result_datum(r, row, col, &a);
    int got_rc = pgw_get_datum(got, &b);
    if (got_rc != rc)
        fail_msg("column %s: pgw_get_datum %d, pgw_result_datum %d", pgw_result_fname(r, col),
                 got_rc, rc);
    if (rc == 0) assert_int_equal(a.kind, b.kind);
    if (rc == 0 && a.kind == PGW_DATUM_TEXT) {
        assert_int_equal(a.u.str.len, b.u.str.len);
        assert_memory_equal(a.u.str.p, b.u.str.p, a.u.str.len);
    }
    char x[256], y[256];
    size_t nx = 0, ny = 0;
    if (want.len >= 0 && pgw_result_ftype(r, col) == PGW_OID_NUMERIC) {
        assert_int_equal(pgw_get_numeric_str(&want, x, sizeof x, &nx), 0);
        assert_int_equal(pgw_get_numeric_str(got, y, sizeof y, &ny), 0);
        assert_string_equal(x, y);
    }
}

/* Tuple t against the row of s with the same id: every column that came
 * is byte-equal to the query's cell in its format. A 'K' tuple carries
 * only the key (id), the rest NULL. */
static void check_tuple(const pgw_type_registry_t *reg, const pgw_pgoutput_tuple_t *t,
                        const snap_t *s, bool key_only, seen_t *seen)
{
    int32_t id;
    assert_int_equal(pgw_get_int4(&t->row.values[0], &id), 0);
    long row = find_row(s->text, id);
    if (row < 0) fail_msg("decoded id %d is not in the table", id);
    assert_int_equal(t->row.ncols, pgw_result_ncols(s->text));
    for (size_t c = 0; c < t->row.ncols; c++) {
        const pgw_value_t *v = &t->row.values[c];
        /* the relation names a domain, RowDescription its base type */
        assert_int_equal(pgw_type_resolve_oid(reg, t->row.fields[c].type_oid),
                         pgw_type_resolve_oid(reg, pgw_result_ftype(s->text, c)));
        assert_memory_equal(t->row.fields[c].name.p, pgw_result_fname(s->text, c),
                            t->row.fields[c].name.len);
        if (t->kinds[c] == PGW_PGOUTPUT_COL_UNCHANGED) {
            seen->unchanged++;
            assert_int_equal(pgw_result_isnull(s->text, (size_t)row, c), 0);
            continue;
        }
        if (key_only && c > 0) {
            assert_int_equal(t->kinds[c], PGW_PGOUTPUT_COL_NULL);
            continue;
        }
        const pgw_result_t *r = v->format == PGW_FORMAT_BINARY ? s->bin : s->text;
        seen->binary_values += v->format == PGW_FORMAT_BINARY;
        pgw_value_t want;
        assert_int_equal(pgw_result_value(r, (size_t)row, c, &want), 0);
        assert_int_equal(t->kinds[c] == PGW_PGOUTPUT_COL_NULL, want.len < 0);
        if (want.len != v->len || (v->len > 0 && memcmp(want.p, v->p, (size_t)v->len) != 0))
            fail_msg("id %d column %s: decoded %d bytes '%.*s', query %d bytes '%.*s'", id,
                     pgw_result_fname(r, c), v->len, v->len > 0 ? v->len : 0, v->p, want.len,
                     want.len > 0 ? want.len : 0, want.p);
        check_typed(v, r, (size_t)row, c);
    }
}

static void check_change(const pgw_type_registry_t *reg, const pgw_pgoutput_msg_t *m,
                         const snap_t *before, const snap_t *after, seen_t *seen)
{
    if (m->kind == PGW_PGOUTPUT_INSERT) {
        seen->inserts++;
        check_tuple(reg, &m->u.change.new_tuple, after, false, seen);
        return;
    }
    if (m->u.change.old_kind) {
        seen->old_key += m->u.change.old_kind == 'K';
        seen->old_full += m->u.change.old_kind == 'O';
        check_tuple(reg, &m->u.change.old_tuple, before, m->u.change.old_kind == 'K', seen);
    }
    if (m->kind == PGW_PGOUTPUT_UPDATE) {
        seen->updates++;
        check_tuple(reg, &m->u.change.new_tuple, after, false, seen);
    } else {
        seen->deletes++;
    }
}

#endif
