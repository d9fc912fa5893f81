/*
 * The per-session table of prepared statements described through this
 * session: name -> parameter types, column descriptions and the result
 * formats to ask in Bind (binary where the types layer decodes the column's
 * type, text otherwise). A small array searched by hash then name: sessions
 * hold tens of statements, not thousands. Each entry is one allocation.
 */
#include "session_internal.h"

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static size_t find_index(pgw_session_t *s, const char *name, uint32_t h)
{
    for (size_t i = 0; i < s->nstmts; i++)
        if (s->stmts[i].hash == h && strcmp(s->stmts[i].name, name) == 0) return i;
    return SIZE_MAX;
}

pgw__stmt_t *pgw__stmt_find(pgw_session_t *s, const char *name)
{
    size_t i = find_index(s, name, name_hash(name));
    return i == SIZE_MAX ? NULL : &s->stmts[i];
}

static void remove_at(pgw_session_t *s, size_t i)
{
    pgw__free(s->alloc, s->stmts[i].block);
    s->stmts[i] = s->stmts[--s->nstmts];
}

void pgw__stmt_forget(pgw_session_t *s, const char *name)
{
    size_t i = find_index(s, name, name_hash(name));
    if (i != SIZE_MAX) remove_at(s, i);
}

void pgw__stmt_free_all(pgw_session_t *s)
{
    while (s->nstmts)
        remove_at(s, s->nstmts - 1);
    pgw__free(s->alloc, s->stmts);
    s->stmts = NULL;
    s->stmts_cap = 0;
}

/* One block: fields | param oids | formats | column names | statement name. */
int pgw__stmt_store(pgw_session_t *s, const char *name, const pgw_result_t *d)
{
    size_t names = 0;
    for (uint16_t i = 0; i < d->ncols; i++)
        names += d->fields[i].name.len + 1;
    size_t nlen = strlen(name) + 1;
    size_t size = sizeof(uint32_t) * d->nparams + sizeof(pgw_field_desc_t) * d->ncols +
                  sizeof(int16_t) * d->ncols + nlen + names;
    uint8_t *blk = pgw__malloc(s->alloc, size);
    if (!blk) return PGW_ENOMEM;
    pgw__stmt_t st;
    st.fields = (pgw_field_desc_t *)blk;
    st.param_oids = (uint32_t *)(blk + sizeof(pgw_field_desc_t) * d->ncols);
    st.formats = (int16_t *)((uint8_t *)st.param_oids + sizeof(uint32_t) * d->nparams);
    char *str = (char *)(st.formats + d->ncols);
    st.nparams = d->nparams;
    st.ncols = d->ncols;
    if (d->nparams) memcpy(st.param_oids, d->param_oids, sizeof(uint32_t) * d->nparams);
    for (uint16_t i = 0; i < d->ncols; i++) {
        st.fields[i] = d->fields[i];
        memcpy(str, d->fields[i].name.p, d->fields[i].name.len);
        str[d->fields[i].name.len] = '\0';
        st.fields[i].name.p = str;
        str += d->fields[i].name.len + 1;
        st.formats[i] =
            pgw_type_binary_ok(d->fields[i].type_oid) ? PGW_FORMAT_BINARY : PGW_FORMAT_TEXT;
        st.fields[i].format = st.formats[i];
    }
    memcpy(str, name, nlen);
    st.hash = name_hash(name);

    st.block = blk;
    st.name = str;
    size_t i = find_index(s, name, st.hash);
    if (i != SIZE_MAX) {
        remove_at(s, i);
    } else if (s->nstmts == s->stmts_cap) {
        size_t cap = s->stmts_cap ? s->stmts_cap * 2 : 8;
        pgw__stmt_t *a = pgw__realloc(s->alloc, s->stmts, cap * sizeof *a);
        if (!a) {
            pgw__free(s->alloc, blk);
            return PGW_ENOMEM;
        }
        s->stmts = a;
        s->stmts_cap = cap;
    }
    s->stmts[s->nstmts++] = st;
    return 0;
}
