/* The result checks and checksum folds of both libpgwire drivers. */
#include "pgwire_checks.h"

#include "bench.h"

#include <pgwire/types.h>
#include <pgwire/types_container.h>
#include <stdlib.h>
#include <string.h>

int bench_pgw_check_int4(const char *who, pgw_result_t *r, int64_t want)
{
    int32_t v = 0;
    if (pgw_result_nrows(r) != 1 || pgw_result_int4(r, 0, 0, &v) != 0 || v != want)
        return bench_fail("%s: got %d, expected %lld", who, v, (long long)want);
    return 0;
}

int bench_pgw_fold_mixed_row(const char *who, const pgw_value_t *v, size_t i, uint64_t *h)
{
    int16_t i2;
    int32_t i4;
    float f4;
    double f8;
    pgw_str_t vc, js, jb;
    int64_t ts, tz;
    uint8_t hexbuf[64];
    int bad = pgw_get_int2(&v[0], &i2) | pgw_get_int4(&v[1], &i4) | pgw_get_float4(&v[2], &f4) |
              pgw_get_float8(&v[3], &f8) | pgw_get_text(&v[4], &vc) | pgw_get_json(&v[5], &js) |
              pgw_get_json(&v[6], &jb) | pgw_get_timestamp(&v[7], &ts) |
              pgw_get_timestamptz(&v[8], &tz);
    const uint8_t *b;
    size_t bl;
    pgw_view_t view;
    if (pgw_get_bytea_view(&v[9], &view) == 0) { /* binary: a view into the row */
        b = view.p;
        bl = (size_t)view.len;
    } else { /* text: un-hexed into a buffer */
        bad |= pgw_get_bytea(&v[9], hexbuf, sizeof hexbuf, &bl);
        b = hexbuf;
    }
    if (bad || bl == 0 || js.p[0] != '{' || jb.p[0] != '{')
        return bench_fail("%s: mixed row %zu did not decode", who, i);
    *h = bench_mix(*h, (uint64_t)(int64_t)i2);
    *h = bench_mix(*h, (uint64_t)(int64_t)i4);
    *h = bench_mix(*h, bench_fold_f(f4));
    *h = bench_mix(*h, bench_fold_f(f8));
    *h = bench_mix(*h, vc.len + js.len * 1000 + jb.len * 1000000);
    *h = bench_mix(*h, (uint64_t)ts);
    *h = bench_mix(*h, (uint64_t)tz);
    *h = bench_mix(*h, (uint64_t)bl * 65536 + b[0] * 256u + b[bl - 1]);
    return 0;
}

int bench_pgw_mixed_row(const pgw_row_t *row, void *ud)
{
    bench_pgw_mixed_t *m = ud;
    if (row->ncols != 10) return bench_fail("%s: %u columns", m->who, (unsigned)row->ncols);
    if (bench_pgw_fold_mixed_row(m->who, row->values, m->rows, &m->h) != 0) return -1;
    m->rows++;
    return 0;
}

int bench_pgw_fold_mixed(const char *who, pgw_result_t *r, size_t want, uint64_t *out)
{
    if (pgw_result_nrows(r) != want) return bench_fail("%s: %zu rows", who, pgw_result_nrows(r));
    if (pgw_result_ncols(r) != 10) return bench_fail("%s: %zu columns", who, pgw_result_ncols(r));
    uint64_t h = 0;
    for (size_t i = 0; i < want; i++) {
        pgw_value_t v[10];
        for (size_t c = 0; c < 10; c++)
            if (pgw_result_value(r, i, c, &v[c]) != 0)
                return bench_fail("%s: mixed row %zu has no column %zu", who, i, c);
        if (bench_pgw_fold_mixed_row(who, v, i, &h) != 0) return -1;
    }
    *out = h;
    return 0;
}

int bench_pgw_fold_mixed_rows(const char *who, pgw_result_t *r, size_t want, uint64_t *out)
{
    if (pgw_result_nrows(r) != want) return bench_fail("%s: %zu rows", who, pgw_result_nrows(r));
    if (pgw_result_ncols(r) != 10) return bench_fail("%s: %zu columns", who, pgw_result_ncols(r));
    uint64_t h = 0;
    for (size_t i = 0; i < want; i++) {
        pgw_row_t row;
        if (pgw_result_row(r, i, &row) != 0) return bench_fail("%s: no mixed row %zu", who, i);
        if (bench_pgw_fold_mixed_row(who, row.values, i, &h) != 0) return -1;
    }
    *out = h;
    return 0;
}

int bench_pgw_fold_blob(const char *who, pgw_result_t *r, uint64_t *out)
{
    uint64_t h = 0;
    if (pgw_result_nrows(r) != (size_t)bench_sz.blob_rows)
        return bench_fail("%s blob: %zu rows", who, pgw_result_nrows(r));
    for (size_t i = 0; i < pgw_result_nrows(r); i++) {
        pgw_value_t v;
        pgw_view_t b;
        if (pgw_result_value(r, i, 1, &v) || pgw_get_bytea_view(&v, &b) ||
            b.len != bench_sz.blob_bytes)
            return bench_fail("%s blob row %zu", who, i);
        for (int j = 0; j < b.len; j += 4093)
            if (b.p[j] != b.p[j % 16])
                return bench_fail("%s blob row %zu: wrong byte at %d", who, i, j);
        h = bench_mix(h, (uint64_t)b.len + b.p[0] + b.p[b.len - 1] * 256u);
    }
    *out = h;
    return 0;
}

int bench_pgw_fold_array(const char *who, pgw_result_t *r, int32_t *arr, uint64_t *out)
{
    uint64_t h = 0;
    if (pgw_result_nrows(r) != (size_t)bench_sz.array_rows)
        return bench_fail("%s array: %zu rows", who, pgw_result_nrows(r));
    for (size_t i = 0; i < pgw_result_nrows(r); i++) {
        int32_t id;
        pgw_value_t v;
        size_t n = 0;
        if (pgw_result_int4(r, i, 0, &id) || pgw_result_value(r, i, 1, &v) ||
            pgw_array_get_int4(&v, arr, (size_t)bench_sz.array_elems, &n, NULL) ||
            n != (size_t)bench_sz.array_elems)
            return bench_fail("%s array row %zu did not decode", who, i);
        int64_t acc = 0;
        for (size_t j = 0; j < n; j++) {
            int32_t want =
                j % 2 == 0 ? 2147483647 - (int32_t)j - id : -2147483647 + (int32_t)j + id;
            if (arr[j] != want) return bench_fail("%s array row %d element %zu", who, id, j);
            acc += arr[j];
        }
        h = bench_mix(h, (uint64_t)acc + (uint64_t)n);
    }
    *out = h;
    return 0;
}

int bench_pgw_fold_prep(const char *who, pgw_result_t *r, int64_t want, uint64_t *h)
{
    int32_t id, i4;
    double f8;
    pgw_str_t vc;
    if (pgw_result_nrows(r) != 1 || pgw_result_int4(r, 0, 0, &id) || id != want ||
        pgw_result_int4(r, 0, 1, &i4) || pgw_result_float8(r, 0, 2, &f8) ||
        pgw_result_text(r, 0, 3, &vc))
        return bench_fail("%s prepared: wrong row for id %lld", who, (long long)want);
    *h = bench_mix(*h, (uint64_t)(int64_t)i4 + bench_fold_f(f8) + vc.len);
    return 0;
}

int bench_pgw_check_uow(const char *who, pgw_result_t *r, int64_t want)
{
    if (want >= 0) {
        int64_t v = -1;
        if (pgw_result_nrows(r) != 1 || pgw_result_int8(r, 0, 0, &v) != 0 || v != want)
            return bench_fail("%s uow read: %lld, expected %lld", who, (long long)v,
                              (long long)want);
        return 0;
    }
    if (pgw_result_rows_affected(r) != 1)
        return bench_fail("%s uow write: %lld rows", who, (long long)pgw_result_rows_affected(r));
    return 0;
}

int bench_pgw_read_uow_base(const char *who, pgw_result_t *r, int64_t out[5])
{
    if (pgw_result_nrows(r) != 5)
        return bench_fail("%s uow setup: %zu rows", who, pgw_result_nrows(r));
    for (size_t i = 0; i < 5; i++)
        if (pgw_result_int8(r, i, 0, &out[i]) != 0)
            return bench_fail("%s uow setup: bad value", who);
    return 0;
}

int bench_pgw_fold_b(const char *who, pgw_result_t *r, int limit, uint64_t *h)
{
    if (pgw_result_nrows(r) != (size_t)limit || pgw_result_ncols(r) != 5)
        return bench_fail("%s suite B: %zu rows", who, pgw_result_nrows(r));
    for (int i = 0; i < limit; i++) {
        int32_t id, iv;
        pgw_str_t sv;
        bool bv = true;
        if (pgw_result_int4(r, (size_t)i, 0, &id) || pgw_result_int4(r, (size_t)i, 1, &iv) ||
            pgw_result_text(r, (size_t)i, 2, &sv) || !pgw_result_isnull(r, (size_t)i, 3) ||
            pgw_result_bool(r, (size_t)i, 4, &bv) || id != i + 1 || iv != 1337 || sv.len != 3 || bv)
            return bench_fail("%s suite B: wrong row %d", who, i);
        *h += (uint64_t)(id + iv + (int)sv.len);
    }
    return 0;
}

int bench_pgw_cursor_row(const pgw_row_t *row, void *ud)
{
    bench_pgw_cursor_t *c = ud;
    int32_t i;
    pgw_str_t t;
    double f;
    int64_t want = c->rows + 1;
    size_t tlen = 5; /* "row " and the digits of want */
    for (int64_t d = want; d >= 10; d /= 10)
        tlen++;
    if (row->ncols != 3 || pgw_get_int4(&row->values[0], &i) || pgw_get_text(&row->values[1], &t) ||
        pgw_get_float8(&row->values[2], &f) || i != want || f != (double)i * 0.5 || t.len != tlen ||
        memcmp(t.p, "row ", 4) != 0)
        return bench_fail("%s cursor: row %lld is not the next one", c->who, (long long)want);
    c->h += (uint64_t)(int64_t)i + (uint64_t)t.len + bench_fold_f(f);
    c->rows++;
    return 0;
}

int bench_pgw_fold_cursor(pgw_result_t *r, bench_pgw_cursor_t *c)
{
    size_t n = pgw_result_nrows(r);
    for (size_t k = 0; k < n; k++) {
        pgw_row_t row;
        if (pgw_result_row(r, k, &row) != 0)
            return bench_fail("%s cursor: no row %zu in a batch", c->who, k);
        if (bench_pgw_cursor_row(&row, c) != 0) return -1;
    }
    return 0;
}

int bench_pgw_check_c(const char *who, pgw_result_t *r, int64_t want)
{
    if (want >= 0 && pgw_result_nrows(r) != (size_t)want)
        return bench_fail("%s suite C: %zu rows, expected %lld", who, pgw_result_nrows(r),
                          (long long)want);
    return 0;
}

/* ---- Bulk Load ----------------------------------------------------------------- */
void bench_pgw_copy_init(bench_pgw_copy_t *c, int binary)
{
    *c = (bench_pgw_copy_t){bench_copy_rows(bench_sz.copy_rows), bench_sz.copy_rows, binary, 0};
}

void bench_pgw_copy_reset(bench_pgw_copy_t *c)
{
    c->next = c->binary ? -1 : 0;
}

static int copy_csv_row(pgw_buf_t *out, const bench_copy_row_t *r)
{
    int rc = pgw_copy_csv_int4(out, r->i4);
    if (rc == 0) rc = pgw_copy_csv_int8(out, r->i8);
    if (rc == 0) rc = pgw_copy_csv_float8(out, r->f8);
    if (rc == 0) rc = pgw_copy_csv_field(out, r->vc, 40);
    if (rc == 0) rc = pgw_copy_csv_row_end(out);
    return rc;
}

static int copy_bin_row(pgw_buf_t *out, const bench_copy_row_t *r)
{
    int rc = pgw_copy_bin_row_begin(out, 4);
    if (rc == 0) rc = pgw_copy_bin_int4(out, r->i4);
    if (rc == 0) rc = pgw_copy_bin_int8(out, r->i8);
    if (rc == 0) rc = pgw_copy_bin_float8(out, r->f8);
    if (rc == 0) rc = pgw_copy_bin_text(out, r->vc, 40);
    return rc;
}

int bench_pgw_copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    bench_pgw_copy_t *c = ud;
    size_t limit = out->len + room;
    int rc = 0;
    if (c->next < 0) {
        rc = pgw_copy_bin_begin(out);
        c->next = 0;
    }
    while (rc == 0 && c->next < c->n && out->len < limit)
        rc = c->binary ? copy_bin_row(out, &c->rows[c->next++])
                       : copy_csv_row(out, &c->rows[c->next++]);
    if (rc != 0) return rc;
    if (c->next < c->n) return PGW_COPY_MORE;
    if (c->binary && (rc = pgw_copy_bin_end(out)) != 0) return rc;
    return PGW_COPY_END;
}

int bench_pgw_check_copy(const char *who, pgw_result_t *r)
{
    int64_t n = pgw_result_rows_affected(r);
    if (n != bench_sz.copy_rows)
        return bench_fail("%s copy: %lld rows loaded, expected %d", who, (long long)n,
                          bench_sz.copy_rows);
    return 0;
}

/* ---- Per-Connection Ceiling ---------------------------------------------------- */
static int ceiling_row(const pgw_row_t *row, void *ud)
{
    bench_pgw_ceiling_t *f = ud;
    int32_t v;
    if (row->ncols != 1 || pgw_get_int4(&row->values[0], &v) != 0 || v != f->next)
        return bench_fail("%s ceiling: wrong row, expected %d", f->who, (int)f->next);
    f->next++;
    f->sum += (uint64_t)v;
    return 0;
}

void bench_pgw_ceiling_init(bench_pgw_ceiling_t *f, const char *who)
{
    size_t n = (size_t)bench_sz.ceiling;
    f->who = who;
    f->reqs = bench_xmalloc(n * sizeof *f->reqs);
    f->params = bench_xmalloc(n * sizeof *f->params);
    for (size_t i = 0; i < n; i++) {
        f->params[i] = pgw_int4((int32_t)i + 1);
        f->reqs[i] = PGW_EXECUTE(CEILING_STMT, &f->params[i], 1, NULL, f);
        f->reqs[i].on_row = ceiling_row;
        f->reqs[i].flags |= PGW_Q_NO_RESULT;
    }
}

void bench_pgw_ceiling_free(bench_pgw_ceiling_t *f)
{
    free(f->reqs);
    free(f->params);
}

void bench_pgw_ceiling_start(bench_pgw_ceiling_t *f)
{
    f->next = 1;
    f->sum = 0;
}

int bench_pgw_ceiling_check(const bench_pgw_ceiling_t *fold, int status, uint64_t *sum)
{
    if (status != 0) return bench_fail("%s ceiling: %s", fold->who, pgw_strerror(status));
    if (fold->next != bench_sz.ceiling + 1)
        return bench_fail("%s ceiling: %d rows of %d", fold->who, (int)fold->next - 1,
                          bench_sz.ceiling);
    *sum = fold->sum;
    return 0;
}
