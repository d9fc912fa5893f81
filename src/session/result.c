/*
 * Results: column descriptions, rows as views into reference-counted read
 * chunks, command tag, server error, parameter types and timing.
 *
 * A result owns an arena (a list of blocks; the first block is kept when the
 * result is recycled, see recycler.c) for the small things it copies: the
 * column descriptions with their names, the command tag, the error fields
 * (error.c).
 * Rows are an array of nrows * ncols values (views into the chunks, with
 * their column's format and type, so that a cell or a whole row is handed
 * out as it is stored) that grows geometrically and is reused with the
 * result: no allocation per row or per column.
 */
#include "session_internal.h"

/* Most results hold only a command tag and a few column descriptions; a
 * batch of 25,000 statements keeps 25,000 of them alive at once, so the
 * first block is small and later ones double, up to ARENA_MAX_BLOCK; a
 * larger request gets a block of its own, so the blocks after it do not
 * double from its size (the text of values, result_text.c, allocates a
 * table of one pointer per cell, then many small strings). */
#define ARENA_MIN_BLOCK 256u
#define ARENA_MAX_BLOCK PGW__RESULT_KEEP_ARENA

static size_t align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

void *pgw__result_alloc(pgw_result_t *r, size_t n)
{
    n = align8(n ? n : 1);
    size_t hdr = align8(sizeof(pgw__arena_block_t));
    pgw__arena_block_t *b = r->arena;
    /* Allocation happens in the newest block (the list head). */
    if (!b || b->size - b->used < n) {
        size_t size = b ? b->size * 2 : ARENA_MIN_BLOCK;
        if (size > ARENA_MAX_BLOCK) size = ARENA_MAX_BLOCK;
        if (size < n) size = n;
        if (size > SIZE_MAX - hdr) return NULL;
        pgw__arena_block_t *nb = pgw__malloc(&r->recycler->alloc, hdr + size);
        if (!nb) return NULL;
        nb->size = size;
        nb->used = 0;
        if (n > ARENA_MAX_BLOCK && b) { /* its own block, behind the head */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            r->arena = nb;
        }
        b = nb;
    }
    void *p = (uint8_t *)b + hdr + b->used;
    b->used += n;
    return p;
}

char *pgw__result_strdup(pgw_result_t *r, const char *p, size_t n)
{
    if (n == SIZE_MAX) return NULL;
    char *d = pgw__result_alloc(r, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

int pgw__result_set_desc(pgw_result_t *r, const pgw_field_desc_t *fields, uint16_t ncols,
                         const int16_t *formats, uint16_t nformats)
{
    pgw_field_desc_t *f = NULL;
    if (ncols) {
        f = pgw__result_alloc(r, sizeof *f * ncols);
        if (!f) return PGW_ENOMEM;
    }
    for (uint16_t i = 0; i < ncols; i++) {
        f[i] = fields[i];
        char *name = pgw__result_strdup(r, fields[i].name.p, fields[i].name.len);
        if (!name) return PGW_ENOMEM;
        f[i].name.p = name;
        if (nformats == 1)
            f[i].format = formats[0];
        else if (nformats == ncols)
            f[i].format = formats[i];
    }
    r->fields = f;
    r->ncols = ncols;
    r->have_desc = true;
    return 0;
}

int pgw__result_set_desc_msg(pgw_result_t *r, const pgw_msg_t *m)
{
    uint16_t n = m->type == PGW_B_ROW_DESC ? m->u.row_desc.nfields : 0;
    pgw_field_desc_t *f = NULL;
    if (n) {
        f = pgw__result_alloc(r, sizeof *f * n);
        if (!f) return PGW_ENOMEM;
    }
    pgw_rowdesc_iter_t it;
    if (n) pgw_rowdesc_iter_init(&it, m);
    for (uint16_t i = 0; i < n; i++) {
        if (pgw_rowdesc_iter_next(&it, &f[i]) != 1) return PGW_EPROTO;
        /* The wire name is NUL-terminated, but the chunk may be reused
         * before the result is freed: copy it. */
        char *name = pgw__result_strdup(r, f[i].name.p, f[i].name.len);
        if (!name) return PGW_ENOMEM;
        f[i].name.p = name;
    }
    r->fields = f;
    r->ncols = n;
    r->have_desc = true;
    return 0;
}

int pgw__result_set_params(pgw_result_t *r, const uint32_t *oids, uint16_t n)
{
    uint32_t *o = NULL;
    if (n) {
        o = pgw__result_alloc(r, sizeof *o * n);
        if (!o) return PGW_ENOMEM;
        memcpy(o, oids, sizeof *o * n);
    }
    r->param_oids = o;
    r->nparams = n;
    return 0;
}

int pgw__result_set_params_msg(pgw_result_t *r, const pgw_msg_t *m)
{
    uint16_t n = m->u.param_desc.nparams;
    uint32_t *o = NULL;
    if (n) {
        o = pgw__result_alloc(r, sizeof *o * n);
        if (!o) return PGW_ENOMEM;
    }
    for (uint16_t i = 0; i < n; i++)
        o[i] = pgw_param_desc_oid(m, i);
    r->param_oids = o;
    r->nparams = n;
    return 0;
}

static int reserve_cells(pgw_result_t *r, size_t need)
{
    if (need <= r->cells_cap) return 0;
    size_t cap = r->cells_cap ? r->cells_cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof(pgw_value_t)) return PGW_ENOMEM;
        cap *= 2;
    }
    pgw_value_t *c = pgw__realloc(&r->recycler->alloc, r->cells, cap * sizeof *c);
    if (!c) return PGW_ENOMEM;
    r->cells = c;
    r->cells_cap = cap;
    return 0;
}

static int ref_chunk(pgw_result_t *r, pgw__chunk_t *c)
{
    if (r->nchunks && r->chunks[r->nchunks - 1] == c) return 0;
    if (r->nchunks == r->chunks_cap) {
        size_t cap = r->chunks_cap ? r->chunks_cap * 2 : 4;
        pgw__chunk_t **a = pgw__realloc(&r->recycler->alloc, r->chunks, cap * sizeof *a);
        if (!a) return PGW_ENOMEM;
        r->chunks = a;
        r->chunks_cap = cap;
    }
    r->chunks[r->nchunks++] = c;
    pgw__chunk_ref(c);
    return 0;
}

int pgw__row_values(const pgw_msg_t *m, const pgw_field_desc_t *fields, uint16_t n,
                    pgw_value_t *out)
{
    if (m->u.data_row.ncols != n) return PGW_EPROTO;
    const uint8_t *p = m->u.data_row.fields;
    const uint8_t *end = m->body + m->len;
    for (uint16_t i = 0; i < n; i++) {
        if (end - p < 4) return PGW_EPROTO;
        int32_t len = (int32_t)pgw__get32(p);
        p += 4;
        out[i].format = fields[i].format;
        out[i].oid = fields[i].type_oid;
        out[i].len = len;
        if (len < 0) {
            if (len != -1) return PGW_EPROTO;
            out[i].p = NULL;
            continue;
        }
        if (end - p < len) return PGW_EPROTO;
        out[i].p = p;
        p += len;
    }
    return p == end ? 0 : PGW_EPROTO;
}

int pgw__result_add_row(pgw_result_t *r, const pgw_msg_t *m, pgw__chunk_t *c)
{
    if (!r->have_desc || m->u.data_row.ncols != r->ncols) return PGW_EPROTO;
    size_t nc = r->ncols;
    if (nc) {
        if (r->nrows >= (SIZE_MAX / sizeof(pgw_value_t)) / nc - 1) return PGW_ENOMEM;
        int rc = reserve_cells(r, (r->nrows + 1) * nc);
        if (rc < 0) return rc;
        rc = pgw__row_values(m, r->fields, r->ncols, r->cells + r->nrows * nc);
        if (rc < 0) return rc;
        rc = ref_chunk(r, c);
        if (rc < 0) return rc;
    } else {
        if (pgw_datarow_fields(m, NULL, 0) < 0) return PGW_EPROTO;
    }
    r->nrows++;
    return 0;
}

int pgw__result_set_tag(pgw_result_t *r, const pgw_msg_t *m)
{
    pgw_str_t tag = m->u.command_complete.tag;
    char *t = pgw__result_strdup(r, tag.p, tag.len);
    if (!t) return PGW_ENOMEM;
    r->tag = t;
    r->rows_affected = m->u.command_complete.has_rows ? (int64_t)m->u.command_complete.rows : -1;
    r->complete = true;
    return 0;
}

/* ---------------------------------------------------------------- accessors */

PGW_EXTERN size_t pgw_result_nrows(const pgw_result_t *r)
{
    return r ? r->nrows : 0;
}

PGW_EXTERN void pgw_result_free(pgw_result_t *r)
{
    while (r) {
        pgw_result_t *next = r->next;
        pgw__result_recycle(r);
        r = next;
    }
}

PGW_EXTERN uint64_t pgw_result_nstreamed(const pgw_result_t *r)
{
    return r ? r->nstreamed : 0;
}

PGW_EXTERN size_t pgw_result_ncols(const pgw_result_t *r)
{
    return r ? r->ncols : 0;
}

PGW_EXTERN const char *pgw_result_fname(const pgw_result_t *r, size_t col)
{
    return r && col < r->ncols ? r->fields[col].name.p : NULL;
}

PGW_EXTERN uint32_t pgw_result_ftype(const pgw_result_t *r, size_t col)
{
    return r && col < r->ncols ? r->fields[col].type_oid : 0;
}

PGW_EXTERN int pgw_result_fformat(const pgw_result_t *r, size_t col)
{
    return r && col < r->ncols ? r->fields[col].format : -1;
}

PGW_EXTERN const pgw_field_desc_t *pgw_result_field(const pgw_result_t *r, size_t col)
{
    return r && col < r->ncols ? &r->fields[col] : NULL;
}

PGW_EXTERN int pgw_result_column(const pgw_result_t *r, const char *name)
{
    if (!r) return PGW_EINVAL;
    if (!name) return PGW_ENOTFOUND;
    size_t n = strlen(name);
    for (size_t i = 0; i < r->ncols; i++)
        if (r->fields[i].name.len == n && memcmp(r->fields[i].name.p, name, n) == 0) return (int)i;
    return PGW_ENOTFOUND;
}

PGW_EXTERN int pgw_result_value(const pgw_result_t *r, size_t row, size_t col, pgw_value_t *out)
{
    if (!r || !out) return PGW_EINVAL;
    if (row >= r->nrows || col >= r->ncols) return PGW_EINDEX;
    *out = r->cells[row * r->ncols + col];
    return 0;
}

PGW_EXTERN int pgw_result_row(const pgw_result_t *r, size_t row, pgw_row_t *out)
{
    if (!r || !out) return PGW_EINVAL;
    if (row >= r->nrows) return PGW_EINDEX;
    out->ncols = r->ncols;
    out->values = r->ncols ? r->cells + row * r->ncols : NULL;
    out->fields = r->ncols ? r->fields : NULL;
    out->index = row;
    return 0;
}

PGW_EXTERN int pgw_result_isnull(const pgw_result_t *r, size_t row, size_t col)
{
    if (!r) return PGW_EINVAL;
    if (row >= r->nrows || col >= r->ncols) return PGW_EINDEX;
    return r->cells[row * r->ncols + col].len < 0;
}

PGW_EXTERN const char *pgw_result_command_tag(const pgw_result_t *r)
{
    if (!r) return NULL;
    return r->tag ? r->tag : "";
}

PGW_EXTERN int64_t pgw_result_rows_affected(const pgw_result_t *r)
{
    return r ? r->rows_affected : -1;
}

PGW_EXTERN const pgw_error_t *pgw_result_error(const pgw_result_t *r)
{
    return r && r->has_error ? &r->error : NULL;
}

PGW_EXTERN size_t pgw_result_nparams(const pgw_result_t *r)
{
    return r ? r->nparams : 0;
}

PGW_EXTERN uint32_t pgw_result_param_type(const pgw_result_t *r, size_t i)
{
    return r && i < r->nparams ? r->param_oids[i] : 0;
}

PGW_EXTERN pgw_result_t *pgw_result_next(const pgw_result_t *r)
{
    return r ? r->next : NULL;
}

PGW_EXTERN void pgw_result_timing(const pgw_result_t *r, uint64_t *queued, uint64_t *first,
                                  uint64_t *done)
{
    if (queued) *queued = r ? r->t_queued : 0;
    if (first) *first = r ? r->t_first : 0;
    if (done) *done = r ? r->t_done : 0;
}
