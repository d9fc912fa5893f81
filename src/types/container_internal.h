/*
 * Internal helpers shared by the container types (array.c, range.c,
 * composite.c, copy.c). Not installed.
 */
#ifndef PGW_TYPES_CONTAINER_INTERNAL_H
#define PGW_TYPES_CONTAINER_INTERNAL_H

#include "pgwire/types_container.h"
#include "util/internal.h"

/*
 * Append p as a length-prefixed binary field: int32 length then the bytes,
 * or int32 -1 for NULL. Binary parameters of every kind are accepted;
 * text-format bytes only for text-like types, whose binary form is the
 * text. On error b is unchanged. Returns 0, PGW_EINVAL, PGW_ETOOBIG,
 * PGW_ENOMEM or an encoder's error. (copy.c)
 */
int pgw__enc_len_field(pgw_buf_t *b, const pgw_param_t *p);

/* Patch the int32 at b->data[at] with the length of what follows it.
 * Returns 0 or PGW_ETOOBIG (more than INT32_MAX bytes). (copy.c) */
int pgw__patch_len(pgw_buf_t *b, size_t at);

/* Append a big-endian int32 (reserve first). (copy.c) */
int pgw__buf_put32(pgw_buf_t *b, uint32_t v);

/* The quoting of record and range text (record_in, range_in): a quote
 * toggles quoting, "" inside quotes is one quote, a backslash takes the
 * next byte literally. The field [p, stop) must have been scanned already
 * (no backslash as its last byte). Writes at most stop - p bytes to dst and
 * returns how many. (composite.c) */
size_t pgw__unquote(const uint8_t *p, const uint8_t *stop, char *dst);

/* 1 when [p, stop)'s only quoting is one pair of quotes around all of it,
 * so the content is the bytes between them. (composite.c) */
int pgw__simply_quoted(const uint8_t *p, const uint8_t *stop);

/* Every type of the built-in catalog (pg_type.dat) has an oid below this
 * (FirstGenbkiObjectId): the registry is consulted only at or above it. */
#define PGW__FIRST_USER_OID 10000

/* The allocator reg was created with (NULL: default). (registry.c) */
const pgw_allocator_t *pgw__type_registry_alloc(const pgw_type_registry_t *reg);

/* The catalog facts loaded for oid in reg (NULL reg: none), or NULL.
 * (registry.c) */
const pgw_type_catalog_t *pgw__type_catalog(const pgw_type_registry_t *reg, uint32_t oid);

/* pgw_type_resolve_oid without the default: reg NULL resolves nothing.
 * (registry.c) */
uint32_t pgw__type_resolve(const pgw_type_registry_t *reg, uint32_t oid);

/* Give reg's entry for cat->oid the name and the catalog facts (copied),
 * keeping its callbacks. All or nothing. Returns 0, PGW_EINVAL or
 * PGW_ENOMEM. (registry.c) */
int pgw__type_store_catalog(pgw_type_registry_t *reg, const char *name,
                            const pgw_type_catalog_t *cat);

/* The element type of array type oid: built in, or loaded into reg (NULL:
 * none). 0 if unknown. (array.c) */
uint32_t pgw__array_elem(const pgw_type_registry_t *reg, uint32_t oid);

/* The subtype of range type oid (built in, or loaded into reg), resolved
 * for decoding; 0 if unknown. (range.c) */
uint32_t pgw__range_bound_oid(const pgw_type_registry_t *reg, uint32_t oid);
/* The range type of multirange type oid (built in, or loaded into reg), or
 * 0. (range.c) */
uint32_t pgw__multirange_range(const pgw_type_registry_t *reg, uint32_t oid);

/* 1 for ASCII whitespace as the server's array/range parsers see it. */
static inline int pgw__is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

#endif
