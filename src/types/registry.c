/*
 * Type registry: which OIDs the library decodes from binary, and a table of
 * registered (extension and user-defined) types with names, decode
 * callbacks and what the server's catalog says about them (catalog.c loads
 * that). Anything unregistered stays raw bytes: its pgw_value_t is the value.
 */
#include "types/container_internal.h"
#include "types/types_internal.h"

typedef struct reg_entry {
    pgw_type_info_t info;
    pgw_type_catalog_t cat; /* kind 0: nothing loaded */
    char *name;             /* owned copy behind info.name */
    void *attrs;            /* owned block behind cat.attr_oids and cat.attr_names */
} reg_entry_t;

struct pgw_type_registry {
    const pgw_allocator_t *alloc;
    reg_entry_t *entries;
    size_t n, cap;
};

/* Static, so that its first use cannot race: nothing is created lazily. */
static pgw_type_registry_t default_registry;

int pgw_type_registry_new(pgw_type_registry_t **out, const pgw_allocator_t *alloc)
{
    if (!out) return PGW_EINVAL;
    pgw_type_registry_t *r = pgw__calloc(alloc, 1, sizeof *r);
    *out = r;
    if (!r) return PGW_ENOMEM;
    r->alloc = alloc;
    return 0;
}

void pgw_type_registry_free(pgw_type_registry_t *reg)
{
    if (!reg || reg == &default_registry) return;
    for (size_t i = 0; i < reg->n; i++) {
        pgw__free(reg->alloc, reg->entries[i].name);
        pgw__free(reg->alloc, reg->entries[i].attrs);
    }
    pgw__free(reg->alloc, reg->entries);
    pgw__free(reg->alloc, reg);
}

pgw_type_registry_t *pgw_type_registry_default(void)
{
    return &default_registry;
}

const pgw_allocator_t *pgw__type_registry_alloc(const pgw_type_registry_t *reg)
{
    return reg->alloc;
}

static reg_entry_t *find_oid(const pgw_type_registry_t *reg, uint32_t oid)
{
    for (size_t i = 0; i < reg->n; i++)
        if (reg->entries[i].info.oid == oid) return &reg->entries[i];
    return NULL;
}

const pgw_type_catalog_t *pgw__type_catalog(const pgw_type_registry_t *reg, uint32_t oid)
{
    const reg_entry_t *e = reg ? find_oid(reg, oid) : NULL;
    return e && e->cat.kind ? &e->cat : NULL;
}

static int set_name(pgw_type_registry_t *reg, reg_entry_t *e, const char *name)
{
    char *copy = NULL;
    if (name && !(copy = pgw__strdup(reg->alloc, name))) return PGW_ENOMEM;
    pgw__free(reg->alloc, e->name);
    e->name = copy;
    e->info.name = copy;
    return 0;
}

/* The entry for oid, added empty (text only, no callback) if missing. */
static int get_or_add(pgw_type_registry_t *reg, uint32_t oid, reg_entry_t **out)
{
    reg_entry_t *e = find_oid(reg, oid);
    if (!e) {
        if (reg->n == reg->cap) {
            size_t cap = reg->cap ? reg->cap * 2 : 8;
            if (cap > SIZE_MAX / sizeof *e) return PGW_ENOMEM;
            reg_entry_t *grown = pgw__realloc(reg->alloc, reg->entries, cap * sizeof *e);
            if (!grown) return PGW_ENOMEM;
            reg->entries = grown;
            reg->cap = cap;
        }
        e = &reg->entries[reg->n++];
        memset(e, 0, sizeof *e);
        e->info.oid = oid;
        e->info.formats = PGW_TYPE_TEXT;
    }
    *out = e;
    return 0;
}

/*
 * One block holding copies of n attribute oids and names: the oids, then
 * the name pointers, then the NUL-terminated names. *block is NULL for n 0.
 */
static int copy_attrs(const pgw_allocator_t *alloc, size_t n, const uint32_t *oids,
                      const char *const *names, void **block)
{
    *block = NULL;
    if (n == 0) return 0;
    if (!oids || n > SIZE_MAX / 64) return PGW_EINVAL;
    size_t text = 0;
    for (size_t i = 0; names && i < n; i++) {
        size_t len = names[i] ? strlen(names[i]) : 0;
        if (len > SIZE_MAX / 2 - text) return PGW_ENOMEM;
        text += len + 1;
    }
    size_t ptrs_at = n * sizeof(uint32_t);
    ptrs_at = (ptrs_at + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
    size_t text_at = ptrs_at + (names ? n * sizeof(char *) : 0);
    uint8_t *b = pgw__malloc(alloc, text_at + text);
    if (!b) return PGW_ENOMEM;
    memcpy(b, oids, n * sizeof(uint32_t));
    if (names) {
        const char **ptrs = (const char **)(void *)(b + ptrs_at);
        char *t = (char *)b + text_at;
        for (size_t i = 0; i < n; i++) {
            size_t len = names[i] ? strlen(names[i]) : 0;
            if (len) memcpy(t, names[i], len);
            t[len] = '\0';
            ptrs[i] = t;
            t += len + 1;
        }
    }
    *block = b;
    return 0;
}

static const uint32_t *block_oids(void *block)
{
    return block;
}

static const char *const *block_names(void *block, size_t n)
{
    size_t at = n * sizeof(uint32_t);
    at = (at + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
    return (const char *const *)(void *)((uint8_t *)block + at);
}

/*
 * Give the entry for oid the name and the catalog facts (attributes
 * copied), keeping its callbacks. All copies are made first, so a failure
 * leaves the registry as it was. Returns 0, PGW_EINVAL or PGW_ENOMEM.
 */
int pgw__type_store_catalog(pgw_type_registry_t *reg, const char *name,
                            const pgw_type_catalog_t *cat)
{
    if (!reg || !name || !cat || cat->oid == 0 || !cat->kind) return PGW_EINVAL;
    void *attrs = NULL;
    char *copy = NULL;
    int rc = copy_attrs(reg->alloc, cat->nattrs, cat->attr_oids, cat->attr_names, &attrs);
    if (rc == 0 && !(copy = pgw__strdup(reg->alloc, name))) rc = PGW_ENOMEM;
    reg_entry_t *e = NULL;
    if (rc == 0) rc = get_or_add(reg, cat->oid, &e);
    if (rc < 0) {
        pgw__free(reg->alloc, attrs);
        pgw__free(reg->alloc, copy);
        return rc;
    }
    pgw__free(reg->alloc, e->name);
    e->name = copy;
    e->info.name = copy;
    pgw__free(reg->alloc, e->attrs);
    e->attrs = attrs;
    e->cat = *cat;
    e->cat.nattrs = attrs ? cat->nattrs : 0;
    e->cat.attr_oids = attrs ? block_oids(attrs) : NULL;
    e->cat.attr_names = attrs && cat->attr_names ? block_names(attrs, cat->nattrs) : NULL;
    return 0;
}

int pgw_type_register(pgw_type_registry_t *reg, const pgw_type_info_t *info)
{
    if (!reg || !info || info->oid == 0) return PGW_EINVAL;
    reg_entry_t *e;
    int rc = get_or_add(reg, info->oid, &e);
    if (rc < 0) return rc;
    const char *keep = e->info.name;
    rc = info->name ? set_name(reg, e, info->name) : 0;
    if (rc < 0) return rc;
    e->info = *info;
    e->info.name = info->name ? e->name : keep;
    return 0;
}

int pgw_type_register_name(pgw_type_registry_t *reg, const char *name, uint32_t oid)
{
    if (!reg || !name || oid == 0) return PGW_EINVAL;
    reg_entry_t *e;
    int rc = get_or_add(reg, oid, &e);
    if (rc < 0) return rc;
    return set_name(reg, e, name);
}

int pgw_type_lookup(const pgw_type_registry_t *reg, uint32_t oid, const pgw_type_info_t **out)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!reg) return PGW_EINVAL;
    const reg_entry_t *e = find_oid(reg, oid);
    *out = e ? &e->info : NULL;
    return e ? 0 : PGW_ENOTFOUND;
}

int pgw_type_lookup_catalog(const pgw_type_registry_t *reg, uint32_t oid,
                            const pgw_type_catalog_t **out)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!reg) return PGW_EINVAL;
    *out = pgw__type_catalog(reg, oid);
    return *out ? 0 : PGW_ENOTFOUND;
}

int pgw_type_lookup_name(const pgw_type_registry_t *reg, const char *name, uint32_t *oid)
{
    if (!reg || !name || !oid) return PGW_EINVAL;
    for (size_t i = 0; i < reg->n; i++) {
        if (reg->entries[i].name && strcmp(reg->entries[i].name, name) == 0) {
            *oid = reg->entries[i].info.oid;
            return 0;
        }
    }
    return PGW_ENOTFOUND;
}

int pgw_type_decode(const pgw_type_registry_t *reg, const pgw_value_t *v, void *out)
{
    if (!reg || !v) return PGW_EINVAL;
    const reg_entry_t *e = find_oid(reg, v->oid);
    const pgw_type_info_t *info = e ? &e->info : NULL;
    if (!info || !info->decode) return PGW_ENOTFOUND;
    unsigned need = v->format == PGW_FORMAT_BINARY ? PGW_TYPE_BINARY : PGW_TYPE_TEXT;
    if (!(info->formats & need)) return PGW_ETYPE;
    return info->decode(v, out, info->ud);
}

/* Deep enough for any real chain (domain of domain of range...); bounds
 * what a registry with a cycle in it can cost. */
#define RESOLVE_DEPTH 8

uint32_t pgw__type_resolve(const pgw_type_registry_t *reg, uint32_t oid)
{
    for (int depth = 0; depth < RESOLVE_DEPTH && oid >= PGW__FIRST_USER_OID; depth++) {
        const pgw_type_catalog_t *t = pgw__type_catalog(reg, oid);
        if (!t) break;
        if (t->kind == PGW_TYPE_KIND_ENUM) return PGW_OID_TEXT;
        if (t->kind != PGW_TYPE_KIND_DOMAIN || !t->base_oid) break;
        oid = t->base_oid;
    }
    return oid;
}

uint32_t pgw_type_resolve_oid(const pgw_type_registry_t *reg, uint32_t oid)
{
    return pgw__type_resolve(reg ? reg : &default_registry, oid);
}

/* Built-in types decoded from binary: the scalars, the built-in ranges and
 * multiranges, record (the type table's binary column). */
static int builtin_binary_ok(uint32_t oid)
{
    const pgw__builtin_t *t = pgw__builtin(oid);
    return t && t->binary;
}

static int binary_ok(const pgw_type_registry_t *reg, uint32_t oid, int depth);

/* A loaded type's binary form is readable when what it is made of is. */
static int catalog_binary_ok(const pgw_type_registry_t *reg, const pgw_type_catalog_t *t, int depth)
{
    switch (t->kind) {
    case PGW_TYPE_KIND_ENUM:
        return 1;
    case PGW_TYPE_KIND_DOMAIN:
        return binary_ok(reg, t->base_oid, depth + 1);
    case PGW_TYPE_KIND_RANGE:
    case PGW_TYPE_KIND_MULTIRANGE:
        return binary_ok(reg, t->elem_oid, depth + 1);
    case PGW_TYPE_KIND_COMPOSITE:
        for (size_t i = 0; i < t->nattrs; i++)
            if (!binary_ok(reg, t->attr_oids[i], depth + 1)) return 0;
        return 1;
    case PGW_TYPE_KIND_BASE: /* an array when it has an element type */
        return t->elem_oid && binary_ok(reg, t->elem_oid, depth + 1);
    default:
        return 0;
    }
}

static int binary_ok(const pgw_type_registry_t *reg, uint32_t oid, int depth)
{
    if (builtin_binary_ok(oid)) return 1;
    uint32_t elem = pgw_array_elem_oid(oid);
    if (elem && builtin_binary_ok(elem)) return 1;
    const reg_entry_t *e = reg ? find_oid(reg, oid) : NULL;
    if (!e || depth >= RESOLVE_DEPTH) return 0;
    return (e->info.formats & PGW_TYPE_BINARY) != 0 ||
           (e->cat.kind && catalog_binary_ok(reg, &e->cat, depth));
}

int pgw_type_registry_binary_ok(const pgw_type_registry_t *reg, uint32_t oid)
{
    return binary_ok(reg, oid, 0);
}

int pgw_type_binary_ok(uint32_t oid)
{
    return pgw_type_registry_binary_ok(&default_registry, oid);
}

int pgw_type_binary_output(uint32_t oid)
{
    switch (oid) {
    case PGW_OID_ACLITEM:
    case PGW_OID_ACLITEM_ARRAY:
    case PGW_OID_GTSVECTOR:
    case PGW_OID_GTSVECTOR_ARRAY:
        return 0;
    default:
        return 1;
    }
}
