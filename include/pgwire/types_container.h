/*
 * libpgwire container types: arrays, ranges, multiranges, composites
 * (records), the type registry, COPY row encoders and SQL escaping helpers.
 *
 * Decoders here read a pgw_value_t (see pgwire/types.h) in place: the parsed
 * headers and iterators below hold pointers into the value's bytes, so they
 * live exactly as long as those bytes do (a DataRow in a read buffer, a
 * pgw_result_t...). Elements are handed out as pgw_value_t views that are
 * decoded with the scalar getters (pgw_get_int4, pgw_get_text, ...).
 *
 * User-defined types (domains, enums, composites, ranges and their arrays)
 * decode through their base types once loaded into a registry from the
 * server's catalog (pgw_type_load_sql, pgw_type_registry_load_row); the
 * decoders without a registry argument use the default registry, the
 * *_parse_reg variants take one. Enums: see pgw_get_text in types.h.
 *
 * NULL handles: as in types.h, a NULL value, struct, iterator, registry
 * or output pointer never crashes: int-returning functions give PGW_EINVAL
 * (except where a NULL registry is documented to mean the default one, or
 * none for pgw_type_registry_binary_ok), pgw_type_resolve_oid returns oid
 * unchanged for an empty registry, void functions are no-ops, an iterator
 * initialised with a NULL array or record fails its next call with
 * PGW_EINVAL (a NULL multirange iterates as empty), and the parameter
 * constructors given a NULL context return a parameter whose encoding
 * fails with PGW_EINVAL.
 *
 * Error codes used throughout: PGW_EFORMAT for malformed bytes, PGW_ETYPE
 * for a value of another type, PGW_ENULL for a NULL where none is accepted,
 * PGW_ERANGE for a caller buffer that is too small (the needed size is
 * reported), PGW_EINVAL for bad arguments, PGW_ENOMEM, PGW_ETOOBIG for
 * output that would pass INT32_MAX or the buffer's limit.
 *
 * Nothing here is thread-safe except where stated; parsed structs and
 * iterators are caller-owned, zero-initialisable and need no freeing.
 */
#ifndef PGWIRE_TYPES_CONTAINER_H
#define PGWIRE_TYPES_CONTAINER_H

#include "pgwire/common.h"
#include "pgwire/types.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pgw_type_registry_t, a set of registered types, is declared in types.h:
 * see "Type registry" below. */

/* ------------------------------------------------------------------------ */
/* Arrays                                                                   */
/* ------------------------------------------------------------------------ */

/* The server's limit on array dimensions (MAXDIM). */
#define PGW_ARRAY_MAXDIM 6

/*
 * The element type of array type array_oid, or 0 if array_oid is not a
 * built-in array type.
 */
PGW_EXTERN uint32_t pgw_array_elem_oid(uint32_t array_oid);
/* The array type whose elements are elem_oid, or 0 if not built in. */
PGW_EXTERN uint32_t pgw_array_oid_for(uint32_t elem_oid);

/*
 * A parsed array header. Fill it with pgw_array_parse; the fields are
 * read-only for the caller. Elements are stored row-major (the last
 * dimension varies fastest), as the server sends them.
 */
typedef struct pgw_array {
    int ndim;                          /* 0 for an empty array */
    int32_t dims[PGW_ARRAY_MAXDIM];    /* size of each dimension */
    int32_t lbounds[PGW_ARRAY_MAXDIM]; /* lower bound of each dimension */
    uint32_t elem_oid;                 /* element type as the server names it (binary: the header's;
                                        * text: from the array oid, built in or through the
                                        * registry; 0 if unknown) */
    size_t nelems;                     /* product of dims (0 when ndim is 0) */
    bool has_nulls;                    /* binary: the header's flag; text: an element is NULL */
    int16_t format;                    /* format of the value it was parsed from */
    uint8_t _delim;                    /* private: text element delimiter */
    uint32_t _value_oid;               /* private: elem_oid resolved (pgw_type_resolve_oid) */
    const uint8_t *_p;                 /* private: first element (binary) or outer '{' (text) */
    const uint8_t *_end;               /* private: end of the value */
} pgw_array_t;

/*
 * Parse and validate the header of an array value (text or binary) into out.
 * Binary: ndim in 0..6, flag 0 or 1, positive dims, lower bounds such that
 * lb + dim - 1 does not overflow, a product that fits in INT32 and the server's
 * MaxArraySize, at least 4 bytes per element left in the value, and when
 * v->oid is a built-in array type, an element oid equal to its element type.
 * Text: the whole value is checked (balanced braces, rectangular
 * sub-arrays, quoting, escapes, an optional '[lb:ub]...=' prefix that
 * matches); NULL elements are seen, so has_nulls is exact. Elements are
 * separated by their type's delimiter (typdelim): ';' for box, ',' for
 * every other built-in type, the loaded typdelim for a user type.
 * Element lengths of a binary array are checked as they are iterated.
 * Arrays of user-defined types (an array of a domain, of an enum...) are
 * understood through the default registry: load them first (see
 * pgw_type_registry_load_row); an unknown array oid is read without an
 * element type check, with ',' as delimiter and element oid as sent.
 * out views v's bytes: it is valid as long as they are.
 * Returns 0, PGW_ENULL (the value is SQL NULL), PGW_EFORMAT, PGW_ETYPE
 * (element oid does not match the array type) or PGW_EINVAL (v or out NULL,
 * unknown format).
 */
PGW_EXTERN int pgw_array_parse(const pgw_value_t *v, pgw_array_t *out);
/* pgw_array_parse with the element type and delimiter looked up in reg
 * (NULL: the default registry). */
PGW_EXTERN int pgw_array_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v,
                                   pgw_array_t *out);

/*
 * An element iterator over a parsed array. No allocation: binary elements
 * are views into the value, and so are text elements that need no
 * unescaping. A text element that contains backslash escapes is unescaped
 * into the caller's scratch buffer, appended after the previous ones, so
 * every view handed out stays valid together; a scratch of the value's
 * length (v->len bytes) is always enough for all elements.
 */
typedef struct pgw_array_iter {
    const pgw_array_t *arr; /* the array iterated */
    size_t index;           /* elements returned so far */
    const uint8_t *pos;     /* private */
    char *scratch;          /* private */
    size_t scratch_cap;     /* private */
    size_t scratch_used;    /* private */
    size_t need;            /* after PGW_ERANGE: scratch bytes needed for the element */
    int err;                /* private: sticky error */
} pgw_array_iter_t;

/* Start iterating arr (which must stay alive). scratch may be NULL (cap 0):
 * text elements with escapes then fail with PGW_ERANGE. */
PGW_EXTERN void pgw_array_iter_init(pgw_array_iter_t *it, const pgw_array_t *arr, char *scratch,
                                    size_t scratch_cap);
/* Give the iterator a new scratch buffer (e.g. a larger one after
 * PGW_ERANGE); views already handed out from the old one stay in it. */
PGW_EXTERN void pgw_array_iter_set_scratch(pgw_array_iter_t *it, char *scratch, size_t cap);
/*
 * Produce the next element in out: p/len view its bytes (len -1: NULL),
 * format is the array's, oid the element type resolved for decoding
 * (pgw_type_resolve_oid: a domain's base type, PGW_OID_TEXT for an enum), so
 * the scalar getters read it. Returns 1 with an element,
 * 0 at the end, PGW_EFORMAT (malformed element or trailing bytes; the
 * iterator then stays at that error), or PGW_ERANGE when a text element
 * needs it->need scratch bytes that are not free (the iterator did not move:
 * call pgw_array_iter_set_scratch and retry), PGW_EINVAL (it or out NULL,
 * or the iterator was initialised with a NULL array).
 */
PGW_EXTERN int pgw_array_next(pgw_array_iter_t *it, pgw_value_t *out);

/*
 * Typed bulk getters: decode every element of a one- or multi-dimensional
 * array v into out[0..*n) in storage order. The binary form of the exact
 * element type is read straight from the wire; other element types and
 * the text form go through the scalar getters (pgw_get_int4 ...), so they
 * accept what those accept. nulls, if not NULL, receives a flag per
 * element (and out[i] is 0 for NULL); with nulls NULL a NULL element fails
 * with PGW_ENULL. If cap is smaller than the element count, *n is set to the
 * count and PGW_ERANGE is returned with nothing written.
 * Element types are resolved through the default registry, so an array of
 * a loaded domain over int4 reads as int4[].
 * Returns 0, PGW_ENULL, PGW_ERANGE, PGW_EFORMAT, PGW_ETYPE, PGW_ELOSS, or
 * PGW_EINVAL (v or n NULL, or out NULL with cap not 0).
 */
PGW_EXTERN int pgw_array_get_bool(const pgw_value_t *v, bool *out, size_t cap, size_t *n,
                                  bool *nulls);
PGW_EXTERN int pgw_array_get_int2(const pgw_value_t *v, int16_t *out, size_t cap, size_t *n,
                                  bool *nulls);
PGW_EXTERN int pgw_array_get_int4(const pgw_value_t *v, int32_t *out, size_t cap, size_t *n,
                                  bool *nulls);
PGW_EXTERN int pgw_array_get_int8(const pgw_value_t *v, int64_t *out, size_t cap, size_t *n,
                                  bool *nulls);
PGW_EXTERN int pgw_array_get_float4(const pgw_value_t *v, float *out, size_t cap, size_t *n,
                                    bool *nulls);
PGW_EXTERN int pgw_array_get_float8(const pgw_value_t *v, double *out, size_t cap, size_t *n,
                                    bool *nulls);

/*
 * Array parameter encoder context. Fill it (or use pgw_array_enc_init), then
 * pass pgw_array_param(&ctx) as a parameter or COPY field. The context and
 * everything it points to must stay alive and unchanged until the value has
 * been encoded, i.e. until the query or COPY call that takes the parameter
 * returns; the library keeps no pointer after that.
 *
 * elems is a C array of nelems values whose C type follows elem_oid:
 *   BOOL: bool; INT2: int16_t; INT4, DATE: int32_t; OID: uint32_t;
 *   INT8, TIMESTAMP, TIMESTAMPTZ, TIME: int64_t (days since / microseconds
 *   since 2000-01-01, microseconds of day); FLOAT4: float; FLOAT8: double;
 *   UUID: uint8_t[16] each (16 * nelems bytes);
 *   TEXT, VARCHAR, BPCHAR, NAME, JSON, XML, UNKNOWN (the types whose binary
 *   form is their text): const char * each (NUL-terminated, or with lens[i]
 *   bytes when lens is not NULL; a NULL pointer is SQL NULL);
 *   JSONB, JSONPATH: const char * each, sent with the version-1 prefix byte;
 *   any other oid: pgw_view_t each, already in that type's binary form
 *   (len -1: NULL).
 * nulls (optional) marks NULL elements. ndim 0 with nelems > 0 means one
 * dimension of nelems elements with lower bound 1; otherwise dims/lbounds
 * give the shape and their product must equal nelems (nelems 0 with ndim 0
 * is the empty array). array_oid 0 means pgw_array_oid_for(elem_oid).
 */
typedef struct pgw_array_enc {
    uint32_t elem_oid;                 /* the elements' type */
    uint32_t array_oid;                /* the array type (0: from elem_oid) */
    const void *elems;                 /* nelems values, as above */
    const int32_t *lens;               /* text lengths (optional) */
    const bool *nulls;                 /* NULL elements (optional) */
    size_t nelems;                     /* element count */
    int ndim;                          /* dimensions (0: one of nelems) */
    int32_t dims[PGW_ARRAY_MAXDIM];    /* length of each dimension */
    int32_t lbounds[PGW_ARRAY_MAXDIM]; /* lower bound of each dimension */
} pgw_array_enc_t;

/* Set ctx to a one-dimensional array of n elements of elem_oid (lower bound
 * 1), without lens, with the given nulls (may be NULL). */
PGW_EXTERN void pgw_array_enc_init(pgw_array_enc_t *ctx, uint32_t elem_oid, const void *elems,
                                   size_t n, const bool *nulls);
/* The encoder function behind pgw_array_param (pgw_encode_fn). Appends the
 * binary array to out. Returns 0, PGW_EINVAL (bad shape, more than 6 dims,
 * missing elems), PGW_ETOOBIG or PGW_ENOMEM. */
PGW_EXTERN int pgw_encode_array(const void *ctx, pgw_buf_t *out);
/* A binary parameter of the array's type that encodes ctx (kept by pointer). */
PGW_EXTERN pgw_param_t pgw_array_param(const pgw_array_enc_t *ctx);

/* ------------------------------------------------------------------------ */
/* Ranges and multiranges                                                   */
/* ------------------------------------------------------------------------ */

/* Range flags, the server's own bit values (binary format's flags byte). */
#define PGW_RANGE_EMPTY  0x01 /* the empty range: no bounds */
#define PGW_RANGE_LB_INC 0x02 /* lower bound inclusive '[' */
#define PGW_RANGE_UB_INC 0x04 /* upper bound inclusive ']' */
#define PGW_RANGE_LB_INF 0x08 /* no lower bound (-infinity) */
#define PGW_RANGE_UB_INF 0x10 /* no upper bound (+infinity) */

/* The element type of a built-in range type, or 0. */
PGW_EXTERN uint32_t pgw_range_elem_oid(uint32_t range_oid);
/* The range type of a built-in multirange type, or 0. */
PGW_EXTERN uint32_t pgw_multirange_range_oid(uint32_t multirange_oid);

/*
 * A decoded range. lower/upper view the bound values (in the range's format,
 * oid the subtype resolved for decoding as by pgw_type_resolve_oid, from the
 * built-in ranges or a loaded range type; 0 if unknown); a missing bound (empty range or
 * infinite side) has len -1. Views point into the value or, for text bounds
 * with escapes, into the caller's scratch.
 */
typedef struct pgw_range {
    uint8_t flags;     /* PGW_RANGE_* */
    pgw_value_t lower; /* the lower bound (len -1: none) */
    pgw_value_t upper; /* the upper bound (len -1: none) */
} pgw_range_t;

/*
 * Decode a range value (text or binary) into out. Text bounds that contain
 * backslash escapes or doubled quotes are unescaped into scratch (may be
 * NULL if none are expected; v->len bytes are always enough). User range
 * types are looked up in the default registry.
 * Returns 0, PGW_ENULL (the value is SQL NULL), PGW_EFORMAT, PGW_EINVAL (v
 * or out NULL, unknown format) or PGW_ERANGE (scratch too small).
 */
PGW_EXTERN int pgw_range_parse(const pgw_value_t *v, pgw_range_t *out, char *scratch,
                               size_t scratch_cap);
/* pgw_range_parse with the range type looked up in reg (NULL: default). */
PGW_EXTERN int pgw_range_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v,
                                   pgw_range_t *out, char *scratch, size_t scratch_cap);

/* A multirange parsed by pgw_multirange_parse: the number of ranges. */
typedef struct pgw_multirange {
    size_t count;        /* ranges in the multirange */
    int16_t format;      /* the value's format */
    uint32_t range_oid;  /* range type (0 if unknown) */
    uint32_t _bound_oid; /* private: the bounds' oid, resolved */
    const uint8_t *_p;   /* private */
    const uint8_t *_end;
} pgw_multirange_t;

/* Iterator over a multirange's ranges; scratch as for pgw_array_iter_t. */
typedef struct pgw_multirange_iter {
    const pgw_multirange_t *mr; /* the multirange iterated */
    size_t index;               /* ranges returned so far */
    const uint8_t *pos;         /* private */
    char *scratch;              /* private */
    size_t scratch_cap;         /* private */
    size_t scratch_used;        /* bytes of scratch used so far */
} pgw_multirange_iter_t;

/* Validate the multirange v (every range in it) and count its ranges; user
 * multirange types are looked up in the default registry. Returns 0,
 * PGW_ENULL (SQL NULL), PGW_EFORMAT or PGW_EINVAL (v or out NULL, unknown
 * format). out views v's bytes. */
PGW_EXTERN int pgw_multirange_parse(const pgw_value_t *v, pgw_multirange_t *out);
/* pgw_multirange_parse with the type looked up in reg (NULL: default). */
PGW_EXTERN int pgw_multirange_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v,
                                        pgw_multirange_t *out);
/* Start at the first range of mr (parsed, and alive while iterating);
 * scratch (scratch_cap bytes, may be NULL) receives unescaped text bounds. */
PGW_EXTERN void pgw_multirange_iter_init(pgw_multirange_iter_t *it, const pgw_multirange_t *mr,
                                         char *scratch, size_t scratch_cap);
/* Next range into out. Returns 1, 0 at the end, PGW_EFORMAT, PGW_EINVAL
 * (it or out NULL) or PGW_ERANGE
 * (scratch too small for escaped text bounds). */
PGW_EXTERN int pgw_multirange_next(pgw_multirange_iter_t *it, pgw_range_t *out);

/*
 * Range parameter encoder context: flags as above; lower/upper are binary
 * parameters of the element type (pgw_int4(1), pgw_int8(..), pgw_raw(...) of
 * a numeric's binary form...), ignored for an empty or infinite side.
 * range_oid is the parameter's declared type (0: the server infers it).
 * Lifetime as for pgw_array_enc_t.
 */
typedef struct pgw_range_enc {
    uint32_t range_oid; /* the declared type (0: the server infers it) */
    uint8_t flags;      /* PGW_RANGE_* */
    pgw_param_t lower;  /* the lower bound, a binary parameter */
    pgw_param_t upper;  /* the upper bound, a binary parameter */
} pgw_range_enc_t;

/* pgw_encode_fn for a pgw_range_enc_t. Returns 0, PGW_EINVAL (a bound that
 * is not binary), PGW_ETOOBIG or PGW_ENOMEM. */
PGW_EXTERN int pgw_encode_range(const void *ctx, pgw_buf_t *out);
PGW_EXTERN pgw_param_t pgw_range_param(const pgw_range_enc_t *ctx);

/* Multirange encoder context: n ranges (same lifetime rule). */
typedef struct pgw_multirange_enc {
    uint32_t multirange_oid;       /* the declared type (0: the server infers it) */
    const pgw_range_enc_t *ranges; /* n ranges */
    size_t n;                      /* range count */
} pgw_multirange_enc_t;

/* pgw_encode_fn for a pgw_multirange_enc_t, and the parameter that sends
 * one (ctx kept alive); the codes of pgw_encode_range. */
PGW_EXTERN int pgw_encode_multirange(const void *ctx, pgw_buf_t *out);
PGW_EXTERN pgw_param_t pgw_multirange_param(const pgw_multirange_enc_t *ctx);

/* ------------------------------------------------------------------------ */
/* Composite types (records)                                                */
/* ------------------------------------------------------------------------ */

/* A parsed record: its field count. Views v's bytes. */
typedef struct pgw_record {
    size_t nfields;    /* fields in the record */
    int16_t format;    /* the value's format */
    const uint8_t *_p; /* private */
    const uint8_t *_end;
    const pgw_type_registry_t *_reg; /* private: resolves field types */
    const uint32_t *_attr_oids;      /* private: text field types, or NULL */
} pgw_record_t;

/* Iterator over a record's fields; scratch as for pgw_array_iter_t. */
typedef struct pgw_record_iter {
    const pgw_record_t *rec; /* the record iterated */
    size_t index;            /* fields returned so far */
    const uint8_t *pos;      /* private */
    char *scratch;           /* private */
    size_t scratch_cap;      /* private */
    size_t scratch_used;     /* bytes of scratch used so far */
    size_t need;             /* after PGW_ERANGE: scratch bytes needed */
    int err;                 /* private: sticky error */
} pgw_record_iter_t;

/*
 * Validate a record value and count its fields. Binary: int32 nfields, then
 * per field a type oid, an int32 length (-1: NULL) and the bytes. Text:
 * '(f1,f2,...)', where an empty unquoted field is NULL, "" is the empty
 * string, and quotes/backslashes escape as in record_out; whitespace is part
 * of the field. "()" is read as one NULL field (the text form cannot tell it
 * from a zero-field record). Field types come from the default registry
 * (see pgw_record_next). out views v's bytes and, for a loaded composite,
 * the registry's entry: it is valid while both are unchanged.
 * Returns 0, PGW_ENULL (the value is SQL NULL), PGW_EFORMAT, PGW_EINVAL (v
 * or out NULL, unknown format).
 */
PGW_EXTERN int pgw_record_parse(const pgw_value_t *v, pgw_record_t *out);
/* pgw_record_parse with field types from reg (NULL: the default registry). */
PGW_EXTERN int pgw_record_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v,
                                    pgw_record_t *out);
/* Start at the first field of rec (parsed, and alive while iterating);
 * scratch (scratch_cap bytes, may be NULL) receives unescaped text fields. */
PGW_EXTERN void pgw_record_iter_init(pgw_record_iter_t *it, const pgw_record_t *rec, char *scratch,
                                     size_t scratch_cap);
/* Next field into out: oid is the field's type resolved for decoding
 * (pgw_type_resolve_oid: a domain field reads as its base type, an enum as
 * text). Binary records carry each field's type; the text form does not, so
 * there it is the loaded composite's attribute type, or 0 for an anonymous
 * record or a type not loaded. Returns 1, 0 at the end, PGW_EFORMAT,
 * PGW_EINVAL (it or out NULL, or initialised with a NULL record), or PGW_ERANGE
 * when a text field with escapes needs it->need scratch bytes that are not
 * free (the iterator did not move: give it more with
 * pgw_record_iter_set_scratch and retry). */
PGW_EXTERN int pgw_record_next(pgw_record_iter_t *it, pgw_value_t *out);
/* Give the iterator a new scratch of cap bytes (after PGW_ERANGE); views
 * already handed out stay in the old one. */
PGW_EXTERN void pgw_record_iter_set_scratch(pgw_record_iter_t *it, char *scratch, size_t cap);

/* Composite parameter encoder: nfields binary parameters, each sent with its
 * oid (which must be the column's type: the server checks; an untyped text
 * field such as pgw_text's is sent as text). type_oid is the composite
 * type's oid (anonymous records cannot be sent). */
typedef struct pgw_record_enc {
    uint32_t type_oid;         /* the composite type */
    const pgw_param_t *fields; /* nfields binary parameters */
    size_t nfields;            /* field count */
} pgw_record_enc_t;

/* pgw_encode_fn for a pgw_record_enc_t, and the parameter that sends one
 * (ctx kept alive). The encoder returns 0, PGW_EINVAL (ctx NULL, or fields
 * NULL with nfields > 0) or a field's encoding error (PGW_ENOMEM, ...). */
PGW_EXTERN int pgw_encode_record(const void *ctx, pgw_buf_t *out);
PGW_EXTERN pgw_param_t pgw_record_param(const pgw_record_enc_t *ctx);

/* ------------------------------------------------------------------------ */
/* Type registry                                                            */
/* ------------------------------------------------------------------------ */

/* Decode callback of a registered type: convert v into *out (its C type is a
 * contract between the registrant and its callers). Returns 0 or a negative
 * PGW_E* code. */
typedef int (*pgw_type_decode_fn)(const pgw_value_t *v, void *out, void *ud);

/* Format support flags. */
#define PGW_TYPE_TEXT   0x1
#define PGW_TYPE_BINARY 0x2 /* the decode callback understands the binary form */

/* Kinds of type (pg_type.typtype), in pgw_type_info_t.kind. */
#define PGW_TYPE_KIND_BASE       'b' /* base type; an array type is a base type with elem_oid */
#define PGW_TYPE_KIND_COMPOSITE  'c'
#define PGW_TYPE_KIND_DOMAIN     'd'
#define PGW_TYPE_KIND_ENUM       'e'
#define PGW_TYPE_KIND_MULTIRANGE 'm'
#define PGW_TYPE_KIND_PSEUDO     'p'
#define PGW_TYPE_KIND_RANGE      'r'

/* A user type's decoder, as pgw_type_register adds it to a registry. */
typedef struct pgw_type_info {
    uint32_t oid;              /* the type */
    const char *name;          /* copied; may be NULL */
    unsigned formats;          /* PGW_TYPE_TEXT | PGW_TYPE_BINARY */
    pgw_type_decode_fn decode; /* may be NULL: values stay raw bytes */
    void *ud;                  /* passed to decode */
} pgw_type_info_t;

/*
 * What the server's catalog says about a type, as pgw_type_registry_load_row
 * loads it. The decoders use it: a domain decodes as its base type, an enum
 * as text, an array or range of a user type through its element type or
 * subtype, a composite's text fields get their attribute types.
 */
typedef struct pgw_type_catalog {
    uint32_t oid;                  /* the type */
    char kind;                     /* PGW_TYPE_KIND_* */
    char delim;                    /* array element delimiter (typdelim) */
    uint32_t base_oid;             /* domain: its final, non-domain base type */
    uint32_t elem_oid;             /* array: element type; range: subtype;
                                    * multirange: its range type; else 0 */
    uint32_t array_oid;            /* the type's array type, 0 if none */
    size_t nattrs;                 /* composite: attributes in order (dropped
                                    * ones left out, as the server sends rows) */
    const uint32_t *attr_oids;     /* nattrs attribute types */
    const char *const *attr_names; /* nattrs NUL-terminated names */
} pgw_type_catalog_t;

/*
 * A set of registered types (typically one per connection, filled at connect
 * time for extension and user-defined types). Not thread-safe: changing a
 * registry while another thread reads it is a data race; reading one from
 * several threads at once is safe. (Declared at the top of this header.)
 */

/* Create an empty registry using alloc (NULL: default). Returns 0,
 * PGW_EINVAL (out NULL) or PGW_ENOMEM (*out is then NULL). Free with
 * pgw_type_registry_free. */
PGW_EXTERN int pgw_type_registry_new(pgw_type_registry_t **out, const pgw_allocator_t *alloc);
/* Free reg and everything it copied. NULL and the default registry are
 * no-ops. */
PGW_EXTERN void pgw_type_registry_free(pgw_type_registry_t *reg);
/* The process-wide default registry: a static object, so this never fails,
 * never returns NULL and is safe to call from any number of threads at
 * once. It is never freed. Registering in it is not thread-safe: do it
 * before other threads use it (decoding consults it). */
PGW_EXTERN pgw_type_registry_t *pgw_type_registry_default(void);

/* Register or replace type info->oid: its name (copied; NULL keeps the
 * current one), formats, decode and ud; catalog facts loaded for the oid are
 * kept. Returns 0, PGW_EINVAL (reg or info NULL, oid 0) or PGW_ENOMEM (the
 * entry is then unchanged). */
PGW_EXTERN int pgw_type_register(pgw_type_registry_t *reg, const pgw_type_info_t *info);
/* Bind name to oid (adding a name-only entry with text support if oid is not
 * registered yet). Returns 0, PGW_EINVAL or PGW_ENOMEM. */
PGW_EXTERN int pgw_type_register_name(pgw_type_registry_t *reg, const char *name, uint32_t oid);
/* Lookup: *out views the registry's entry, valid until it is changed or
 * freed. Returns 0, PGW_ENOTFOUND (*out NULL) or PGW_EINVAL (reg or out
 * NULL). */
PGW_EXTERN int pgw_type_lookup(const pgw_type_registry_t *reg, uint32_t oid,
                               const pgw_type_info_t **out);
/* The catalog facts loaded for oid: *out views the registry's copy, valid
 * until the entry is changed or the registry freed. Returns 0,
 * PGW_ENOTFOUND (nothing loaded for oid; *out NULL) or PGW_EINVAL (reg or
 * out NULL). */
PGW_EXTERN int pgw_type_lookup_catalog(const pgw_type_registry_t *reg, uint32_t oid,
                                       const pgw_type_catalog_t **out);
/* The oid registered under name. Returns 0, PGW_ENOTFOUND or PGW_EINVAL
 * (reg, name or oid NULL). */
PGW_EXTERN int pgw_type_lookup_name(const pgw_type_registry_t *reg, const char *name,
                                    uint32_t *oid);
/* Decode v with the callback registered for v->oid. Returns the callback's
 * result, PGW_ENOTFOUND (unregistered or no callback: use v's raw bytes),
 * PGW_ETYPE (format not supported by the registration) or PGW_EINVAL (reg
 * or v NULL). */
PGW_EXTERN int pgw_type_decode(const pgw_type_registry_t *reg, const pgw_value_t *v, void *out);
/*
 * 1 if oid is decoded in binary: a built-in type, or a type registered in
 * reg (may be NULL: built-ins only) with PGW_TYPE_BINARY, or a loaded type
 * whose binary form the library reads: an enum, a domain, array or range of
 * such a type, a composite whose attributes all are. pgw_type_binary_ok
 * consults the default registry.
 */
PGW_EXTERN int pgw_type_registry_binary_ok(const pgw_type_registry_t *reg, uint32_t oid);

/*
 * The type whose decoders read values of type oid, through reg (NULL: the
 * default registry): a domain's final base type, PGW_OID_TEXT for an enum
 * (its text and binary forms are its label), otherwise oid itself. The
 * container decoders hand out elements, fields and bounds with their oid
 * already resolved this way; a top-level column of a domain type needs
 * nothing, the server reports it as its base type.
 */
PGW_EXTERN uint32_t pgw_type_resolve_oid(const pgw_type_registry_t *reg, uint32_t oid);

/*
 * Loading user-defined types from the server (domains, enums, composites,
 * ranges, multiranges, and their array types) in one round trip:
 *
 *   pgw_array_enc_t ctx;
 *   pgw_param_t p = pgw_type_load_param(&ctx, names, n);
 *   run pgw_type_load_sql() with the one parameter p (extended protocol,
 *   any result format: every column is text);
 *   for each row: pgw_type_registry_load_row(reg, fields, nfields);
 *
 * names are resolved as 'name'::regtype does (schema-qualified or through
 * the search_path; "integer[]", "public.mood"); names the server does not
 * know give no row (check with pgw_type_lookup_name). The answer holds a
 * row for each named type and, recursively, for what decoding it needs:
 * its array type, a domain's base types, an array's element type, a
 * range's subtype and multirange, a composite's attribute types (only
 * types outside the built-in catalog are followed). Rows may come in any
 * order; each is complete in itself.
 */
/* Columns of a row of pgw_type_load_sql's answer. */
#define PGW_TYPE_LOAD_NFIELDS 9
/* The catalog query, a constant string with one parameter, $1 text[]. */
PGW_EXTERN const char *pgw_type_load_sql(void);
/* Fill ctx with names[0..n) (NUL-terminated, kept by pointer: they and ctx
 * must live until the query is sent) and return the text[] parameter that
 * encodes it. With ctx NULL the parameter fails to encode with PGW_EINVAL. */
PGW_EXTERN pgw_param_t pgw_type_load_param(pgw_array_enc_t *ctx, const char *const *names,
                                           size_t n);
/*
 * Register one row of pgw_type_load_sql's answer into reg: fields[0..nfields)
 * are the row's values as text views (len -1 for NULL), e.g. a DataRow's
 * fields, read in place and not kept. The entry for the row's oid gets the
 * row's name (the name as asked for, or the server's name for it) and its
 * catalog facts (pgw_type_lookup_catalog); a decode callback, ud and
 * formats already registered for the oid are kept. Returns 0, PGW_EINVAL (reg or fields NULL,
 * nfields not PGW_TYPE_LOAD_NFIELDS), PGW_EFORMAT (a field that is not what the query writes; reg
 * unchanged) or PGW_ENOMEM (reg unchanged).
 */
PGW_EXTERN int pgw_type_registry_load_row(pgw_type_registry_t *reg, const pgw_view_t *fields,
                                          size_t nfields);

/* ------------------------------------------------------------------------ */
/* COPY row encoders                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Binary COPY FROM STDIN: append to b, then send b's bytes as CopyData.
 * Every function appends and returns 0, PGW_ENOMEM or PGW_ETOOBIG; on error
 * b is unchanged.
 */
/* The 19-byte header: signature, flags 0, header extension length 0. */
PGW_EXTERN int pgw_copy_bin_begin(pgw_buf_t *b);
/* Start a row of nfields fields (int16). PGW_EINVAL if nfields > 32767. */
PGW_EXTERN int pgw_copy_bin_row_begin(pgw_buf_t *b, size_t nfields);
/* One field encoded as a binary parameter would be (int32 length, bytes;
 * -1 for NULL). Text-format parameters are accepted for untyped ones (0)
 * and the types whose binary form is the text (text, varchar, bpchar, name,
 * json, xml, unknown), and for jsonb and jsonpath, whose version byte is
 * added. Also PGW_EINVAL (other text params), or an encoder's error. */
PGW_EXTERN int pgw_copy_bin_field(pgw_buf_t *b, const pgw_param_t *p);
PGW_EXTERN int pgw_copy_bin_null(pgw_buf_t *b);
PGW_EXTERN int pgw_copy_bin_int2(pgw_buf_t *b, int16_t v);
PGW_EXTERN int pgw_copy_bin_int4(pgw_buf_t *b, int32_t v);
PGW_EXTERN int pgw_copy_bin_int8(pgw_buf_t *b, int64_t v);
PGW_EXTERN int pgw_copy_bin_float8(pgw_buf_t *b, double v);
PGW_EXTERN int pgw_copy_bin_bool(pgw_buf_t *b, bool v);
/* Text-like field (text/varchar/...): the bytes as given (len bytes). */
PGW_EXTERN int pgw_copy_bin_text(pgw_buf_t *b, const char *s, size_t len);
/* The trailer: int16 -1. */
PGW_EXTERN int pgw_copy_bin_end(pgw_buf_t *b);

/*
 * Binary COPY decoder: reads the rows of COPY ... TO STDOUT (FORMAT binary)
 * back as typed values, picohttpparser style: the caller keeps the bytes
 * (the CopyData payloads, concatenated when a row spans them) and calls
 * pgw_copy_bin_next on what it has; each call decodes the header (first)
 * and one row, whose fields are views into the caller's bytes, readable
 * with the pgw_get_* decoders (types.h). Zero-initialise the decoder (or
 * PGW_COPY_BIN_DECODER_INIT) before the first call; oids (optional) gives
 * the column types put into the values (0 past noids).
 */
typedef struct pgw_copy_bin_decoder {
    const uint32_t *oids; /* column types for the values (NULL: 0) */
    size_t noids;         /* entries in oids */
    /* private: zero before the first call */
    int state_;
    int err_;
    uint32_t skip_;  /* header extension bytes still to skip */
    uint64_t pos_;   /* bytes consumed so far */
    uint64_t nrows_; /* rows returned so far */
} pgw_copy_bin_decoder_t;
#define PGW_COPY_BIN_DECODER_INIT \
    {                             \
        NULL, 0, 0, 0, 0, 0, 0    \
    }

/*
 * Decode the next row of p[0..len). *consumed (always set) says how many
 * bytes to drop before the next call, whatever the return:
 *   1             a row: values[0..*nfields) view its fields (len -1 for
 *                 NULL, format binary), valid as long as p's bytes;
 *   0             the trailer: the data is over (later calls return 0 with
 *                 nothing consumed for empty input; bytes after the
 *                 trailer are PGW_EFORMAT);
 *   PGW_EAGAIN    no complete row in p: append more bytes and call again
 *                 (*consumed may count the header);
 *   PGW_ERANGE    the row has more fields than cap: *nfields is its field
 *                 count, nothing consumed (call again with more room);
 *   PGW_EFORMAT   malformed: a bad signature, header flags this decoder
 *                 does not know (such as OIDs), a negative length other
 *                 than -1, a field count below -1; sticky (every later
 *                 call returns it); pgw_copy_bin_error_pos tells where;
 *   PGW_EINVAL    d, consumed or nfields NULL, or values NULL with cap > 0.
 */
PGW_EXTERN int pgw_copy_bin_next(pgw_copy_bin_decoder_t *d, const uint8_t *p, size_t len,
                                 size_t *consumed, pgw_value_t *values, size_t cap,
                                 size_t *nfields);
/* Offset in the whole stream of the byte that made the decoder fail, or of
 * the next byte to decode. 0 for NULL. */
PGW_EXTERN uint64_t pgw_copy_bin_error_pos(const pgw_copy_bin_decoder_t *d);
/* Rows decoded so far (0 for NULL). */
PGW_EXTERN uint64_t pgw_copy_bin_rows(const pgw_copy_bin_decoder_t *d);

/*
 * Text COPY (FORMAT text, the default) and CSV (FORMAT csv, delimiter ',',
 * quote '"', NULL as an unquoted empty field). Each field function appends
 * the field followed by a delimiter; the row end function turns the last
 * delimiter into the newline. Text format escapes backslash, tab, newline,
 * carriage return, and writes NULL as \N. CSV quotes a field that is empty
 * or contains ',', '"', '\r', '\n' or '\\', doubling quotes.
 * s is UTF-8 in the connection's client_encoding; these functions do not
 * validate it. Return 0, PGW_ENOMEM or PGW_ETOOBIG.
 */
PGW_EXTERN int pgw_copy_text_field(pgw_buf_t *b, const char *s, size_t len);
PGW_EXTERN int pgw_copy_text_null(pgw_buf_t *b);
PGW_EXTERN int pgw_copy_text_int4(pgw_buf_t *b, int32_t v);
PGW_EXTERN int pgw_copy_text_int8(pgw_buf_t *b, int64_t v);
/* The shortest text that reads back to the same double, as the server's
 * float8out writes it (PostgreSQL 12 and later): "0.1", "1e+15", "-0";
 * Infinity, -Infinity, NaN. No locale is involved. */
PGW_EXTERN int pgw_copy_text_float8(pgw_buf_t *b, double v);
/* The end of a text row; a CSV field (both as described above). */
PGW_EXTERN int pgw_copy_text_row_end(pgw_buf_t *b);
PGW_EXTERN int pgw_copy_csv_field(pgw_buf_t *b, const char *s, size_t len);
/* Numbers in CSV need no quoting: as their text forms, then ','. */
PGW_EXTERN int pgw_copy_csv_int4(pgw_buf_t *b, int32_t v);
PGW_EXTERN int pgw_copy_csv_int8(pgw_buf_t *b, int64_t v);
PGW_EXTERN int pgw_copy_csv_float8(pgw_buf_t *b, double v);
/* A CSV NULL (an unquoted empty field); the end of a CSV row. */
PGW_EXTERN int pgw_copy_csv_null(pgw_buf_t *b);
PGW_EXTERN int pgw_copy_csv_row_end(pgw_buf_t *b);

/* ------------------------------------------------------------------------ */
/* Escaping for SQL text                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Quote s[0..len) as an SQL identifier: wrapped in double quotes, inner
 * double quotes doubled. Only UTF-8 input is supported (client_encoding
 * UTF8): s must be valid UTF-8 without NUL bytes, overlong forms, surrogates
 * or code points past U+10FFFF, else PGW_EENCODING is returned and *out is
 * set to NULL; no string is ever returned for invalid input. On success *out
 * is a NUL-terminated string allocated with alloc (NULL: default), freed
 * with pgw_escape_free. Returns 0, PGW_EENCODING, PGW_EINVAL or PGW_ENOMEM.
 */
PGW_EXTERN int pgw_escape_identifier(const pgw_allocator_t *alloc, const char *s, size_t len,
                                     char **out);
/*
 * Quote s[0..len) as an SQL string literal, as libpq's PQescapeLiteral does
 * with standard_conforming_strings on: single quotes doubled, wrapped in
 * '...'; if s contains a backslash, backslashes are doubled and the result
 * is " E'...'" (with a leading space, so it cannot fuse with a preceding
 * identifier). Same encoding rules, ownership and codes as above.
 */
PGW_EXTERN int pgw_escape_literal(const pgw_allocator_t *alloc, const char *s, size_t len,
                                  char **out);
/* Free a string returned by the escaping helpers (same allocator). */
PGW_EXTERN void pgw_escape_free(const pgw_allocator_t *alloc, char *s);

/* The names these encoders had in 0.1.0, kept so code written against it
 * still builds; the functions are the pgw_encode_* ones. */
#define pgw_array_encode      pgw_encode_array
#define pgw_range_encode      pgw_encode_range
#define pgw_multirange_encode pgw_encode_multirange
#define pgw_record_encode     pgw_encode_record

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_TYPES_CONTAINER_H */
