/*
 * Type registry: which OIDs the library decodes from binary, and a table of
 * registered (extension) types with names and decode callbacks. Anything
 * unregistered stays raw bytes: its pgw_value_t is the value.
 */
#include "types/container_internal.h"
#include "types/types_internal.h"

typedef struct reg_entry {
    pgw_type_info_t info;
    char *name; /* owned copy behind info.name */
} reg_entry_t;

struct pgw_type_registry {
    const pgw_allocator_t *alloc;
    reg_entry_t *entries;
    size_t n, cap;
};

int pgw_type_registry_new(pgw_type_registry_t **out, const pgw_allocator_t *alloc)
{
    pgw_type_registry_t *r = pgw__calloc(alloc, 1, sizeof *r);
    *out = r;
    if (!r) return PGW_ENOMEM;
    r->alloc = alloc;
    return 0;
}

void pgw_type_registry_free(pgw_type_registry_t *reg)
{
    if (!reg) return;
    for (size_t i = 0; i < reg->n; i++)
        pgw__free(reg->alloc, reg->entries[i].name);
    pgw__free(reg->alloc, reg->entries);
    pgw__free(reg->alloc, reg);
}

pgw_type_registry_t *pgw_type_registry_default(void)
{
    static pgw_type_registry_t *def;
    if (!def && pgw_type_registry_new(&def, NULL) < 0) def = NULL;
    return def;
}

static reg_entry_t *find_oid(const pgw_type_registry_t *reg, uint32_t oid)
{
    for (size_t i = 0; i < reg->n; i++)
        if (reg->entries[i].info.oid == oid) return &reg->entries[i];
    return NULL;
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
    const reg_entry_t *e = reg ? find_oid(reg, oid) : NULL;
    *out = e ? &e->info : NULL;
    return e ? 0 : PGW_ENOTFOUND;
}

int pgw_type_lookup_name(const pgw_type_registry_t *reg, const char *name, uint32_t *oid)
{
    for (size_t i = 0; reg && name && i < reg->n; i++) {
        if (reg->entries[i].name && strcmp(reg->entries[i].name, name) == 0) {
            *oid = reg->entries[i].info.oid;
            return 0;
        }
    }
    return PGW_ENOTFOUND;
}

int pgw_type_decode(const pgw_type_registry_t *reg, const pgw_value_t *v, void *out)
{
    const pgw_type_info_t *info;
    if (pgw_type_lookup(reg, v->oid, &info) < 0 || !info->decode) return PGW_ENOTFOUND;
    unsigned need = v->format == PGW_FORMAT_BINARY ? PGW_TYPE_BINARY : PGW_TYPE_TEXT;
    if (!(info->formats & need)) return PGW_ETYPE;
    return info->decode(v, out, info->ud);
}

/* Built-in containers whose elements or bounds we decode in binary. */
static int builtin_binary_ok(uint32_t oid)
{
    if (pgw__scalar_binary_ok(oid)) return 1;
    if (pgw_range_elem_oid(oid) || pgw_multirange_range_oid(oid)) return 1;
    if (oid == PGW_OID_RECORD) return 1;
    return 0;
}

int pgw_type_registry_binary_ok(const pgw_type_registry_t *reg, uint32_t oid)
{
    if (builtin_binary_ok(oid)) return 1;
    uint32_t elem = pgw_array_elem_oid(oid);
    if (elem && builtin_binary_ok(elem)) return 1;
    const pgw_type_info_t *info;
    if (reg && pgw_type_lookup(reg, oid, &info) == 0) return (info->formats & PGW_TYPE_BINARY) != 0;
    return 0;
}

int pgw_type_binary_ok(uint32_t oid)
{
    return pgw_type_registry_binary_ok(pgw_type_registry_default(), oid);
}
