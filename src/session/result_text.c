/*
 * A result's values as the server's text (libpq's PQgetvalue), whatever
 * format they came in: text values as they are, binary ones formatted by
 * the types layer (pgw_value_to_text) with the session's output settings
 * as they were when the result was created.
 *
 * Settings: each new result takes a reference to the recycler's capture of
 * the session's TimeZone, DateStyle and IntervalStyle; after a
 * ParameterStatus the session's values are looked up again and the capture
 * is replaced if they differ from it (otherwise a new result costs one
 * compare of a counter). The zone is loaded at the first
 * text call of any result sharing the capture. User types are resolved
 * through the session's registry.
 *
 * Cells: the text made for a cell is kept in the result's arena, one
 * pointer per cell (the table allocated at the first call), so asking
 * again returns the same bytes and costs no memory.
 */
#include "session_internal.h"

static const char *const text_param_names[PGW__TEXT_NPARAMS] = {"TimeZone", "DateStyle",
                                                                "IntervalStyle"};

/* ------------------------------------------------------------- settings */

/* The session's current values of the settings (NULL: not reported). */
static void session_values(pgw__recycler_t *rec, const char *v[PGW__TEXT_NPARAMS])
{
    for (int k = 0; k < PGW__TEXT_NPARAMS; k++) {
        const char *name = text_param_names[k];
        const pgw__param_entry_t *e = pgw__param_find(rec->session, name, strlen(name));
        v[k] = e ? e->value : NULL;
    }
}

static bool same_value(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool settings_match(const pgw__text_settings_t *t, const char *const v[PGW__TEXT_NPARAMS])
{
    return same_value(t->timezone, v[0]) && same_value(t->datestyle, v[1]) &&
           same_value(t->intervalstyle, v[2]);
}

/* A capture of v, with one reference, the strings copied behind it. */
static pgw__text_settings_t *settings_new(pgw__recycler_t *rec,
                                          const char *const v[PGW__TEXT_NPARAMS])
{
    size_t len[PGW__TEXT_NPARAMS], total = sizeof(pgw__text_settings_t);
    for (int k = 0; k < PGW__TEXT_NPARAMS; k++) {
        len[k] = v[k] ? strlen(v[k]) + 1 : 0;
        total += len[k];
    }
    pgw__text_settings_t *t = pgw__malloc(&rec->alloc, total);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->refs = 1;
    char *p = (char *)(t + 1);
    const char **dst[PGW__TEXT_NPARAMS] = {&t->timezone, &t->datestyle, &t->intervalstyle};
    for (int k = 0; k < PGW__TEXT_NPARAMS; k++) {
        if (!v[k]) continue;
        memcpy(p, v[k], len[k]);
        *dst[k] = p;
        p += len[k];
    }
    return t;
}

pgw__text_settings_t *pgw__text_settings_capture(pgw__recycler_t *rec)
{
    if (!rec->session) return NULL;
    uint64_t changes = rec->session->server.params_changes;
    pgw__text_settings_t *cur = rec->text_settings;
    if (!cur || rec->text_settings_at != changes) {
        const char *v[PGW__TEXT_NPARAMS];
        session_values(rec, v);
        if (!cur || !settings_match(cur, v)) {
            pgw__text_settings_t *t = settings_new(rec, v);
            if (!t) return NULL; /* the result then reports its zone unknown */
            pgw__text_settings_unref(rec, cur);
            rec->text_settings = cur = t;
        }
        rec->text_settings_at = changes;
    }
    cur->refs++;
    return cur;
}

void pgw__text_settings_unref(pgw__recycler_t *rec, pgw__text_settings_t *t)
{
    if (!t || --t->refs > 0) return;
    pgw_tz_free(t->tz);
    pgw__free(&rec->alloc, t);
}

/* The formatter's context for r: its captured zone (loaded now if it was
 * not yet) and styles. Returns 0 or PGW_ENOMEM. */
static int text_ctx(pgw_result_t *r, pgw_text_ctx_t *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->reg = r->recycler->registry;
    pgw__text_settings_t *t = r->text_settings;
    int tz_state = -1;
    if (t && t->timezone) {
        /* loaded once, by whichever result of these settings asks first
         * (results of another thread too: results_any_thread) */
        int rc = 0;
        pgw__recycler_lock(r->recycler);
        if (t->tz_state == 0) {
            rc = pgw_tz_load(&t->tz, t->timezone, NULL, &r->recycler->alloc);
            if (rc != PGW_ENOMEM) t->tz_state = rc == 0 ? 1 : -1;
        }
        tz_state = t->tz_state;
        pgw__recycler_unlock(r->recycler);
        if (rc == PGW_ENOMEM) return rc;
    }
    if (tz_state < 0)
        ctx->flags |= PGW_TEXT_TZ_UNKNOWN;
    else
        ctx->tz = t->tz;
    if (t && ((t->datestyle && strncmp(t->datestyle, "ISO", 3) != 0) ||
              (t->intervalstyle && strcmp(t->intervalstyle, "postgres") != 0)))
        ctx->flags |= PGW_TEXT_OTHER_STYLE;
    return 0;
}

/* ----------------------------------------------------------------- cells */

typedef struct pgw__cell_text {
    size_t len;
    char text[]; /* len bytes and a NUL */
} pgw__cell_text_t;

/* The cache slot of cell i, the table made at the first call. */
static int cell_slot(pgw_result_t *r, size_t i, pgw__cell_text_t ***slot)
{
    if (!r->cell_texts) {
        size_t n = r->nrows * r->ncols; /* fits: the cells array holds as many values */
        pgw__cell_text_t **table = pgw__result_alloc(r, n * sizeof *table);
        if (!table) return PGW_ENOMEM;
        memset(table, 0, n * sizeof *table);
        r->cell_texts = table;
    }
    *slot = &r->cell_texts[i];
    return 0;
}

/* Keep text[0..len) as the cell's, NUL-terminated, in the arena. */
static int keep_text(pgw_result_t *r, pgw__cell_text_t **slot, const void *text, size_t len)
{
    if (len > SIZE_MAX - sizeof(pgw__cell_text_t) - 1) return PGW_ENOMEM;
    pgw__cell_text_t *c = pgw__result_alloc(r, sizeof *c + len + 1);
    if (!c) return PGW_ENOMEM;
    c->len = len;
    if (len) memcpy(c->text, text, len);
    c->text[len] = '\0';
    *slot = c;
    return 0;
}

/* Format binary value v into the cell's slot. */
static int format_cell(pgw_result_t *r, const pgw_value_t *v, pgw__cell_text_t **slot)
{
    pgw_text_ctx_t ctx;
    int rc = text_ctx(r, &ctx);
    if (rc < 0) return rc;
    pgw_buf_t b;
    pgw_buf_init(&b, &r->recycler->alloc);
    rc = pgw_value_to_text(v, &ctx, &b);
    if (rc == 0) rc = keep_text(r, slot, b.data, b.len);
    pgw_buf_free(&b);
    return rc;
}

/* The text of cell (row, col): a text value viewed in place unless cstr
 * asks for a NUL-terminated copy; anything else from the cache. */
static int cell_text(const pgw_result_t *cr, size_t row, size_t col, bool cstr, pgw_str_t *out)
{
    if (!cr || !out) return PGW_EINVAL;
    if (row >= cr->nrows || col >= cr->ncols) return PGW_EINDEX;
    /* The cache is the result's own memory: writing it does not change
     * what the result holds. */
    pgw_result_t *r = (pgw_result_t *)cr;
    size_t i = row * r->ncols + col;
    const pgw_value_t *v = &r->cells[i];
    if (v->len < 0) return PGW_ENULL;
    if (v->format == PGW_FORMAT_TEXT && !cstr) {
        out->p = (const char *)v->p;
        out->len = (size_t)v->len;
        return 0;
    }
    pgw__cell_text_t **slot;
    int rc = cell_slot(r, i, &slot);
    if (rc == 0 && !*slot)
        rc = v->format == PGW_FORMAT_TEXT ? keep_text(r, slot, v->p, (size_t)v->len)
                                          : format_cell(r, v, slot);
    if (rc < 0) return rc;
    out->p = (*slot)->text;
    out->len = (*slot)->len;
    return 0;
}

/* ------------------------------------------------------------- accessors */

PGW_EXTERN int pgw_result_value_text(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out)
{
    return cell_text(r, row, col, false, out);
}

PGW_EXTERN int pgw_result_value_cstr(const pgw_result_t *r, size_t row, size_t col,
                                     const char **out, size_t *len)
{
    if (!out) return PGW_EINVAL;
    pgw_str_t s;
    int rc = cell_text(r, row, col, true, &s);
    if (rc < 0) return rc;
    *out = s.p;
    if (len) *len = s.len;
    return 0;
}

PGW_EXTERN int pgw_result_numeric_str(const pgw_result_t *r, size_t row, size_t col, pgw_str_t *out)
{
    if (!r || !out) return PGW_EINVAL;
    if (row >= r->nrows || col >= r->ncols) return PGW_EINDEX;
    if (r->cells[row * r->ncols + col].oid != PGW_OID_NUMERIC) return PGW_ETYPE;
    return cell_text(r, row, col, true, out);
}

PGW_EXTERN int pgw_result_timestamp_unix(const pgw_result_t *r, size_t row, size_t col,
                                         int64_t *out)
{
    if (!out) return PGW_EINVAL;
    pgw_value_t v;
    int rc = pgw_result_value(r, row, col, &v);
    return rc < 0 ? rc : pgw_get_timestamp_unix(&v, out);
}
