/*
 * The built-in type table (PGW_BUILTIN_TYPES in types.h) as data: one row
 * per type, and the lookups by type oid and by array oid as switches
 * generated from the same table, so a lookup is one jump, not a scan, and
 * a duplicated oid fails to compile.
 */
#include "types/container_internal.h"
#include "types/types_internal.h"

/* Row indexes. */
#define ROW_INDEX(name, ...) ROW_##name,
enum { PGW_BUILTIN_TYPES(ROW_INDEX, ROW_INDEX) ROW_COUNT };
#undef ROW_INDEX

#define ROW(name, typname, oid, array_oid, width, kind, text, binary, delim) \
    {oid, array_oid, typname, "_" typname, width, PGW_DATUM_##kind, PGW__TL_##text, binary, delim},
#define ROW_NOARRAY(name, typname, oid, array_oid, width, kind, text, binary, delim) \
    {oid, 0, typname, NULL, width, PGW_DATUM_##kind, PGW__TL_##text, binary, delim},
static const pgw__builtin_t rows[ROW_COUNT] = {PGW_BUILTIN_TYPES(ROW, ROW_NOARRAY)};
#undef ROW
#undef ROW_NOARRAY

const pgw__builtin_t *pgw__builtin(uint32_t oid)
{
#define CASE(name, typname, oid, ...) \
    case oid:                         \
        return &rows[ROW_##name];
    switch (oid) {
        PGW_BUILTIN_TYPES(CASE, CASE)
    default:
        return NULL;
    }
#undef CASE
}

const pgw__builtin_t *pgw__builtin_of_array(uint32_t array_oid)
{
#define CASE(name, typname, oid, array_oid, ...) \
    case array_oid:                              \
        return &rows[ROW_##name];
#define NO_CASE(...)
    switch (array_oid) {
        PGW_BUILTIN_TYPES(CASE, NO_CASE)
    default:
        return NULL;
    }
#undef CASE
#undef NO_CASE
}

int pgw__scalar_binary_ok(uint32_t oid)
{
    const pgw__builtin_t *t = pgw__builtin(oid);
    return t && t->binary && t->kind != PGW_DATUM_NONE;
}

uint32_t pgw_array_elem_oid(uint32_t array_oid)
{
    const pgw__builtin_t *t = pgw__builtin_of_array(array_oid);
    return t ? t->oid : 0;
}

uint32_t pgw_array_oid_for(uint32_t elem_oid)
{
    const pgw__builtin_t *t = pgw__builtin(elem_oid);
    return t ? t->array_oid : 0;
}

const char *pgw_type_name(uint32_t oid)
{
    const pgw__builtin_t *t = pgw__builtin(oid);
    if (t) return t->name;
    t = pgw__builtin_of_array(oid);
    return t ? t->array_name : NULL;
}
