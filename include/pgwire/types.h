/*
 * libpgwire types: decoding PostgreSQL values from their text and binary
 * wire formats into C values, and encoding C values as binary parameters.
 *
 * No I/O (but for pgw_tz_load, which reads a zone file of the system's
 * tzdata), no event loop, no TLS. Decoders read a pgw_value_t (a view of the
 * wire bytes plus format and type OID) and write a C value; they never
 * allocate where the value can be read in place. A decoder that is handed a
 * type or format it cannot convert returns PGW_ETYPE; malformed bytes give
 * PGW_EFORMAT; a value that does not fit the target gives PGW_ERANGE or
 * PGW_ELOSS. None of them ever returns a silently wrong number.
 *
 * NULL handles: a function given a NULL value, struct or output pointer
 * never crashes. Functions returning an int status return PGW_EINVAL (a
 * NULL value pointer is PGW_EINVAL, distinct from an SQL NULL value, which
 * is PGW_ENULL); pgw_value_is_null(NULL) is 1; pgw_numeric_digit(NULL, i)
 * is 0; pgw_uuid_format with a NULL uuid writes "" and with a NULL out does
 * nothing; a parameter constructor given a NULL context returns a parameter
 * whose encoding fails with PGW_EINVAL. A buffer pointer may be NULL only
 * with a capacity of 0 (then the needed size is reported as documented).
 */
#ifndef PGWIRE_TYPES_H
#define PGWIRE_TYPES_H

#include "pgwire/common.h"
#include "pgwire/proto.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The built-in types the library knows, one row each, in OID order
 * (pg_type.dat). This table is the only place these facts are written: the
 * PGW_OID_* names below, pgw_type_binary_ok, pgw_type_name,
 * pgw_array_elem_oid / pgw_array_oid_for, the text-likeness the decoders,
 * encoders and COPY writer share, the element delimiter of arrays and the
 * decoder dispatch are all generated from it. It is public so that a
 * binding can generate its own tables from the same facts.
 *
 * X(NAME, "typname", oid, array_oid, width, KIND, TEXT, binary, delim):
 *   NAME       PGW_OID_<NAME> = oid and PGW_OID_<NAME>_ARRAY = array_oid
 *   typname    the server's pg_type.typname (the array's is "_" typname)
 *   width      the binary value's fixed size in bytes, -1 if variable
 *   KIND       how pgw_get_datum decodes it: a pgw_datum_kind without its
 *              PGW_DATUM_ prefix, NONE when no scalar decoder does (arrays,
 *              ranges, records have their own in types_container.h)
 *   TEXT       how its binary form relates to its text: NO (unrelated),
 *              SAME (the binary form is the text: text, varchar, json...),
 *              VERSIONED (a version byte 1, then the text: jsonb, jsonpath),
 *              BYTE (one byte, read as text: "char")
 *   binary     1 if values of it are decoded from the binary format
 *   delim      typdelim: the element separator of its arrays' text form
 * X_NOARRAY has the same columns for the types that have no array type
 * (array_oid 0).
 */
#define PGW_BUILTIN_TYPES(X, X_NOARRAY)                                   \
    X(BOOL, "bool", 16, 1000, 1, BOOL, NO, 1, ',')                        \
    X(BYTEA, "bytea", 17, 1001, -1, BYTEA, NO, 1, ',')                    \
    X(CHAR, "char", 18, 1002, 1, CHAR, BYTE, 1, ',')                      \
    X(NAME, "name", 19, 1003, -1, TEXT, SAME, 1, ',')                     \
    X(INT8, "int8", 20, 1016, 8, INT, NO, 1, ',')                         \
    X(INT2, "int2", 21, 1005, 2, INT, NO, 1, ',')                         \
    X(INT2VECTOR, "int2vector", 22, 1006, -1, NONE, NO, 0, ',')           \
    X(INT4, "int4", 23, 1007, 4, INT, NO, 1, ',')                         \
    X(REGPROC, "regproc", 24, 1008, 4, NONE, NO, 0, ',')                  \
    X(TEXT, "text", 25, 1009, -1, TEXT, SAME, 1, ',')                     \
    X(OID, "oid", 26, 1028, 4, INT, NO, 1, ',')                           \
    X(TID, "tid", 27, 1010, 6, NONE, NO, 0, ',')                          \
    X(XID, "xid", 28, 1011, 4, NONE, NO, 0, ',')                          \
    X(CID, "cid", 29, 1012, 4, NONE, NO, 0, ',')                          \
    X(OIDVECTOR, "oidvector", 30, 1013, -1, NONE, NO, 0, ',')             \
    X(JSON, "json", 114, 199, -1, TEXT, SAME, 1, ',')                     \
    X(XML, "xml", 142, 143, -1, TEXT, SAME, 0, ',')                       \
    X(POINT, "point", 600, 1017, 16, NONE, NO, 0, ',')                    \
    X(LSEG, "lseg", 601, 1018, 32, NONE, NO, 0, ',')                      \
    X(PATH, "path", 602, 1019, -1, NONE, NO, 0, ',')                      \
    X(BOX, "box", 603, 1020, 32, NONE, NO, 0, ';')                        \
    X(POLYGON, "polygon", 604, 1027, -1, NONE, NO, 0, ',')                \
    X(LINE, "line", 628, 629, 24, NONE, NO, 0, ',')                       \
    X(CIDR, "cidr", 650, 651, -1, INET, NO, 1, ',')                       \
    X(FLOAT4, "float4", 700, 1021, 4, FLOAT4, NO, 1, ',')                 \
    X(FLOAT8, "float8", 701, 1022, 8, FLOAT8, NO, 1, ',')                 \
    X_NOARRAY(UNKNOWN, "unknown", 705, 0, -1, TEXT, SAME, 0, ',')         \
    X(CIRCLE, "circle", 718, 719, 24, NONE, NO, 0, ',')                   \
    X(MACADDR8, "macaddr8", 774, 775, 8, MACADDR8, NO, 1, ',')            \
    X(MONEY, "money", 790, 791, 8, MONEY, NO, 1, ',')                     \
    X(MACADDR, "macaddr", 829, 1040, 6, MACADDR, NO, 1, ',')              \
    X(INET, "inet", 869, 1041, -1, INET, NO, 1, ',')                      \
    X(ACLITEM, "aclitem", 1033, 1034, -1, NONE, NO, 0, ',')               \
    X(BPCHAR, "bpchar", 1042, 1014, -1, TEXT, SAME, 1, ',')               \
    X(VARCHAR, "varchar", 1043, 1015, -1, TEXT, SAME, 1, ',')             \
    X(DATE, "date", 1082, 1182, 4, DATE, NO, 1, ',')                      \
    X(TIME, "time", 1083, 1183, 8, TIME, NO, 1, ',')                      \
    X(TIMESTAMP, "timestamp", 1114, 1115, 8, TIMESTAMP, NO, 1, ',')       \
    X(TIMESTAMPTZ, "timestamptz", 1184, 1185, 8, TIMESTAMPTZ, NO, 1, ',') \
    X(INTERVAL, "interval", 1186, 1187, 16, INTERVAL, NO, 1, ',')         \
    X(TIMETZ, "timetz", 1266, 1270, 12, TIMETZ, NO, 1, ',')               \
    X(BIT, "bit", 1560, 1561, -1, NONE, NO, 0, ',')                       \
    X(VARBIT, "varbit", 1562, 1563, -1, NONE, NO, 0, ',')                 \
    X(NUMERIC, "numeric", 1700, 1231, -1, NUMERIC, NO, 1, ',')            \
    X(REFCURSOR, "refcursor", 1790, 2201, -1, NONE, NO, 0, ',')           \
    X(REGPROCEDURE, "regprocedure", 2202, 2207, 4, NONE, NO, 0, ',')      \
    X(REGOPER, "regoper", 2203, 2208, 4, NONE, NO, 0, ',')                \
    X(REGOPERATOR, "regoperator", 2204, 2209, 4, NONE, NO, 0, ',')        \
    X(REGCLASS, "regclass", 2205, 2210, 4, NONE, NO, 0, ',')              \
    X(REGTYPE, "regtype", 2206, 2211, 4, NONE, NO, 0, ',')                \
    X(RECORD, "record", 2249, 2287, -1, NONE, NO, 1, ',')                 \
    X(CSTRING, "cstring", 2275, 1263, -1, NONE, NO, 0, ',')               \
    X(UUID, "uuid", 2950, 2951, 16, UUID, NO, 1, ',')                     \
    X(TXID_SNAPSHOT, "txid_snapshot", 2970, 2949, -1, NONE, NO, 0, ',')   \
    X(PG_LSN, "pg_lsn", 3220, 3221, 8, NONE, NO, 0, ',')                  \
    X(TSVECTOR, "tsvector", 3614, 3643, -1, NONE, NO, 0, ',')             \
    X(TSQUERY, "tsquery", 3615, 3645, -1, NONE, NO, 0, ',')               \
    X(GTSVECTOR, "gtsvector", 3642, 3644, -1, NONE, NO, 0, ',')           \
    X(REGCONFIG, "regconfig", 3734, 3735, 4, NONE, NO, 0, ',')            \
    X(REGDICTIONARY, "regdictionary", 3769, 3770, 4, NONE, NO, 0, ',')    \
    X(JSONB, "jsonb", 3802, 3807, -1, TEXT, VERSIONED, 1, ',')            \
    X(INT4RANGE, "int4range", 3904, 3905, -1, NONE, NO, 1, ',')           \
    X(NUMRANGE, "numrange", 3906, 3907, -1, NONE, NO, 1, ',')             \
    X(TSRANGE, "tsrange", 3908, 3909, -1, NONE, NO, 1, ',')               \
    X(TSTZRANGE, "tstzrange", 3910, 3911, -1, NONE, NO, 1, ',')           \
    X(DATERANGE, "daterange", 3912, 3913, -1, NONE, NO, 1, ',')           \
    X(INT8RANGE, "int8range", 3926, 3927, -1, NONE, NO, 1, ',')           \
    X(JSONPATH, "jsonpath", 4072, 4073, -1, TEXT, VERSIONED, 1, ',')      \
    X(REGNAMESPACE, "regnamespace", 4089, 4090, 4, NONE, NO, 0, ',')      \
    X(REGROLE, "regrole", 4096, 4097, 4, NONE, NO, 0, ',')                \
    X(REGCOLLATION, "regcollation", 4191, 4192, 4, NONE, NO, 0, ',')      \
    X(INT4MULTIRANGE, "int4multirange", 4451, 6150, -1, NONE, NO, 1, ',') \
    X(NUMMULTIRANGE, "nummultirange", 4532, 6151, -1, NONE, NO, 1, ',')   \
    X(TSMULTIRANGE, "tsmultirange", 4533, 6152, -1, NONE, NO, 1, ',')     \
    X(TSTZMULTIRANGE, "tstzmultirange", 4534, 6153, -1, NONE, NO, 1, ',') \
    X(DATEMULTIRANGE, "datemultirange", 4535, 6155, -1, NONE, NO, 1, ',') \
    X(INT8MULTIRANGE, "int8multirange", 4536, 6157, -1, NONE, NO, 1, ',') \
    X(PG_SNAPSHOT, "pg_snapshot", 5038, 5039, -1, NONE, NO, 0, ',')       \
    X(XID8, "xid8", 5069, 271, 8, NONE, NO, 0, ',')

#define PGW__OID_ENUM(name, typname, oid, array_oid, ...) \
    PGW_OID_##name = oid, PGW_OID_##name##_ARRAY = array_oid,
#define PGW__OID_ENUM_NOARRAY(name, typname, oid, ...) PGW_OID_##name = oid,

/* Type OIDs of the built-in types, and of their array types. */
enum pgw_oid { PGW_BUILTIN_TYPES(PGW__OID_ENUM, PGW__OID_ENUM_NOARRAY) };

/* Wire formats. */
enum pgw_format { PGW_FORMAT_TEXT = 0, PGW_FORMAT_BINARY = 1 };

/*
 * One value as it came off the wire. p/len view the bytes (len -1: NULL);
 * format is PGW_FORMAT_TEXT or PGW_FORMAT_BINARY; oid is the column's type.
 * The bytes belong to whoever produced the value (a DataRow in a read
 * buffer, a pgw_result_t): see there for how long they live.
 */
typedef struct pgw_value {
    const uint8_t *p; /* the bytes (NULL for SQL NULL) */
    int32_t len;      /* byte count, -1 for SQL NULL */
    int16_t format;   /* PGW_FORMAT_TEXT or PGW_FORMAT_BINARY */
    uint32_t oid;     /* the column's type */
} pgw_value_t;

/* 1 if v is SQL NULL. A NULL v counts as NULL too (there is no value),
 * like libpq's PQgetisnull on a bad argument. */
PGW_INLINE int pgw_value_is_null(const pgw_value_t *v)
{
    return !v || v->len < 0;
}

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

/* What a pgw_param_t holds. */
enum pgw_param_kind {
    PGW_PARAM_NULL = 0, /* SQL NULL of type oid (0: let the server infer) */
    PGW_PARAM_BOOL,
    PGW_PARAM_INT2,
    PGW_PARAM_INT4,
    PGW_PARAM_INT8,
    PGW_PARAM_FLOAT4,
    PGW_PARAM_FLOAT8,
    PGW_PARAM_BYTES,  /* u.bytes sent as-is in the given format */
    PGW_PARAM_ENCODER /* u.enc.fn writes the binary value */
};

/* A value encoder: appends the binary form of the value at ctx to out
 * (the value bytes only, without a length). Returns 0 or a negative code. */
typedef int (*pgw_encode_fn)(const void *ctx, pgw_buf_t *out);

/*
 * A query parameter: a typed C value encoded straight into Bind. Build them
 * with the constructors below; a parameter holds pointers, not copies, so
 * what they point to must live until the query function returns (the value
 * is encoded into the output buffer during that call).
 */
typedef struct pgw_param {
    uint8_t kind;   /* enum pgw_param_kind */
    int16_t format; /* format the value is sent in */
    uint32_t oid;   /* declared type in Parse (0: the server infers it) */
    /* The value, by kind: b, i (INT2..INT8), f4, f8, bytes, enc. */
    union {
        bool b;
        int64_t i;
        float f4;
        double f8;
        struct {
            const void *p;
            int32_t len;
        } bytes;
        struct {
            pgw_encode_fn fn;
            const void *ctx;
        } enc;
    } u;
} pgw_param_t;

/* SQL NULL of type oid (0: the server infers it). */
PGW_INLINE pgw_param_t pgw_null(uint32_t oid)
{
    pgw_param_t p = {PGW_PARAM_NULL, PGW_FORMAT_BINARY, oid, {0}};
    return p;
}
/* bool, int2, int4, int8, float4, float8: v sent in binary. */
PGW_INLINE pgw_param_t pgw_bool(bool v)
{
    pgw_param_t p = {PGW_PARAM_BOOL, PGW_FORMAT_BINARY, PGW_OID_BOOL, {0}};
    p.u.b = v;
    return p;
}
PGW_INLINE pgw_param_t pgw_int2(int16_t v)
{
    pgw_param_t p = {PGW_PARAM_INT2, PGW_FORMAT_BINARY, PGW_OID_INT2, {0}};
    p.u.i = v;
    return p;
}
PGW_INLINE pgw_param_t pgw_int4(int32_t v)
{
    pgw_param_t p = {PGW_PARAM_INT4, PGW_FORMAT_BINARY, PGW_OID_INT4, {0}};
    p.u.i = v;
    return p;
}
PGW_INLINE pgw_param_t pgw_int8(int64_t v)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_INT8, {0}};
    p.u.i = v;
    return p;
}
PGW_INLINE pgw_param_t pgw_float4(float v)
{
    pgw_param_t p = {PGW_PARAM_FLOAT4, PGW_FORMAT_BINARY, PGW_OID_FLOAT4, {0}};
    p.u.f4 = v;
    return p;
}
PGW_INLINE pgw_param_t pgw_float8(double v)
{
    pgw_param_t p = {PGW_PARAM_FLOAT8, PGW_FORMAT_BINARY, PGW_OID_FLOAT8, {0}};
    p.u.f8 = v;
    return p;
}
/*
 * A string sent in text format with a declared type: oid is what Parse
 * declares (PGW_OID_TEXT forces text, so "$1 + 1" then fails as text +
 * integer, as in SQL; 0 leaves the type to the server, as pgw_text does).
 * len -1: s is NUL-terminated.
 */
PGW_INLINE pgw_param_t pgw_text_typed(const char *s, int32_t len, uint32_t oid)
{
    pgw_param_t p = {PGW_PARAM_BYTES, PGW_FORMAT_TEXT, oid, {0}};
    p.u.bytes.p = s;
    p.u.bytes.len = len;
    return p;
}
/*
 * A NUL-terminated string the server interprets, like a libpq parameter
 * with no type: it is sent in text format with type 0, so the server infers
 * the type from the statement ("SELECT $1 + 1" with pgw_text("41") gives 42;
 * "$1 = name" compares names). Where nothing constrains it, the server
 * takes it as text. To declare it text whatever the statement says, use
 * pgw_text_typed(s, -1, PGW_OID_TEXT).
 */
PGW_INLINE pgw_param_t pgw_text(const char *s)
{
    return pgw_text_typed(s, -1, 0);
}
/* bytea, sent in binary. */
PGW_INLINE pgw_param_t pgw_bytea(const void *data, int32_t len)
{
    pgw_param_t p = {PGW_PARAM_BYTES, PGW_FORMAT_BINARY, PGW_OID_BYTEA, {0}};
    p.u.bytes.p = data;
    p.u.bytes.len = len;
    return p;
}
/* A value already encoded in format fmt for type oid. */
PGW_INLINE pgw_param_t pgw_raw(uint32_t oid, int16_t fmt, const void *data, int32_t len)
{
    pgw_param_t p = {PGW_PARAM_BYTES, fmt, oid, {0}};
    p.u.bytes.p = data;
    p.u.bytes.len = len;
    return p;
}
/* A value written by an encoder function, in binary format. */
PGW_INLINE pgw_param_t pgw_encoded(uint32_t oid, pgw_encode_fn fn, const void *ctx)
{
    pgw_param_t p = {PGW_PARAM_ENCODER, PGW_FORMAT_BINARY, oid, {0}};
    p.u.enc.fn = fn;
    p.u.enc.ctx = ctx;
    return p;
}

/*
 * Append a Bind message for the given parameters to b, encoding each value
 * straight into the buffer. result_formats as in pgw_enc_bind. The size is
 * computed and checked before a byte is written or a parameter value is
 * read. On any error b is unchanged. Returns 0, PGW_ENOMEM, PGW_ETOOBIG
 * (message would pass max_msg or INT32_MAX), PGW_EINVAL (b, portal or stmt
 * NULL, params or result_formats NULL with a count above 0, nparams or
 * nresult_formats above PGW_MAX_PARAMS, or a bad parameter) or an encoder's
 * error.
 */
PGW_EXTERN int pgw_enc_bind_params(pgw_buf_t *b, const char *portal, const char *stmt,
                                   const pgw_param_t *params, size_t nparams,
                                   const int16_t *result_formats, size_t nresult_formats,
                                   uint32_t max_msg);

/* Fill oids[0..n) with each parameter's declared type (for Parse). A no-op
 * when params or oids is NULL. */
PGW_EXTERN void pgw_params_oids(const pgw_param_t *params, size_t n, uint32_t *oids);

/*
 * 1 if the types layer decodes values of type oid from the binary format
 * (the built-in types above, their arrays, and anything registered with
 * pgw_type_register).
 */
PGW_EXTERN int pgw_type_binary_ok(uint32_t oid);

/*
 * 1 if the server can send values of type oid in binary, 0 for the built-in
 * types it cannot (aclitem and gtsvector, which have no send function, and
 * their arrays). Other types, user-defined ones included, are taken to
 * have a send function (an extension type without one makes a binary
 * result fail with SQLSTATE 42883). The session asks binary results for
 * every column but these (session.h, "Result formats"), whether or not
 * pgw_type_binary_ok: the format of a column depends only on its type.
 */
PGW_EXTERN int pgw_type_binary_output(uint32_t oid);

/* The server's name (pg_type.typname) of built-in type oid: "int4", "text",
 * "_int4" for int4's array type; NULL for an oid not in PGW_BUILTIN_TYPES.
 * The string is static. */
PGW_EXTERN const char *pgw_type_name(uint32_t oid);

/* ------------------------------------------------------------------------ */
/* Scalar decoders                                                          */
/* ------------------------------------------------------------------------ */
/* Each returns 0, PGW_ENULL (value is NULL), PGW_ETYPE, PGW_EFORMAT,
 * PGW_ERANGE or PGW_ELOSS. Integer getters accept any integer type whose
 * value fits; float getters accept float4/float8 (and integers exactly
 * representable). */
PGW_EXTERN int pgw_get_bool(const pgw_value_t *v, bool *out);
PGW_EXTERN int pgw_get_int2(const pgw_value_t *v, int16_t *out);
PGW_EXTERN int pgw_get_int4(const pgw_value_t *v, int32_t *out);
PGW_EXTERN int pgw_get_int8(const pgw_value_t *v, int64_t *out);
PGW_EXTERN int pgw_get_float4(const pgw_value_t *v, float *out);
PGW_EXTERN int pgw_get_float8(const pgw_value_t *v, double *out);
/*
 * Text-like values (text, varchar, bpchar, name, "char", json, jsonb
 * without its version byte, xml, enums, and the text form of anything):
 * out views the value's bytes in place (no copy, not NUL-terminated).
 * Enums: the text form always; the binary form (what one-shot queries
 * receive, since they ask binary for every column) is the label's bytes
 * and is accepted for enum OIDs loaded into the default registry (see
 * pgw_type_registry_load_row). The binary form of any other OID that is not
 * text-like gives PGW_ETYPE: a user type's binary form need not be text (a
 * composite, hstore...), so it is never passed off as text; load the type,
 * read the raw bytes, or ask text results (PGW_Q_TEXT).
 */
PGW_EXTERN int pgw_get_text(const pgw_value_t *v, pgw_str_t *out);

/* 1 if v is the OID (uint32) it holds: accepts oid and any integer type
 * whose value is in 0..UINT32_MAX. */
PGW_EXTERN int pgw_get_oid(const pgw_value_t *v, uint32_t *out);
/* "char" (a single byte; the text form's \ooo escape is decoded). */
PGW_EXTERN int pgw_get_char(const pgw_value_t *v, char *out);

/*
 * json, jsonb, jsonpath: out views the JSON text in place (for binary
 * jsonb/jsonpath, after the version byte, which must be 1: any other version
 * gives PGW_EFORMAT). Numbers are kept as the server wrote them, so large
 * integers lose nothing. Also accepts text-like types in text format.
 */
PGW_EXTERN int pgw_get_json(const pgw_value_t *v, pgw_str_t *out);

/* bytea, binary format only: out views the bytes in place (zero-copy).
 * PGW_ETYPE for the text format (use pgw_get_bytea). */
PGW_EXTERN int pgw_get_bytea_view(const pgw_value_t *v, pgw_view_t *out);
/*
 * bytea in either format, copied into buf[0..cap): the text format's hex
 * (\x...) and escape (\ooo, \\) forms are decoded. *len is set to the
 * decoded length even when it does not fit (then PGW_ERANGE and buf holds
 * nothing useful), so a caller can size its buffer with buf NULL, cap 0.
 * The decoded length never exceeds v->len.
 */
PGW_EXTERN int pgw_get_bytea(const pgw_value_t *v, uint8_t *buf, size_t cap, size_t *len);

/* uuid: the 16 bytes. */
PGW_EXTERN int pgw_get_uuid(const pgw_value_t *v, uint8_t out[16]);
/* Parse a uuid's text (canonical 8-4-4-4-12, 32 hex digits, optionally in
 * braces, as the server accepts). Returns 0 or PGW_EFORMAT. */
PGW_EXTERN int pgw_uuid_parse(const char *s, size_t len, uint8_t out[16]);
/* Format the canonical lower-case form: 36 characters and a NUL. */
PGW_EXTERN void pgw_uuid_format(const uint8_t uuid[16], char out[37]);

/* macaddr (6 bytes) and macaddr8 (8 bytes). Text: hex pairs separated by
 * ':' or '-' or nothing, as the server writes them. */
PGW_EXTERN int pgw_get_macaddr(const pgw_value_t *v, uint8_t out[6]);
PGW_EXTERN int pgw_get_macaddr8(const pgw_value_t *v, uint8_t out[8]);

/* money as an int64 count of the currency's smallest unit (cents). Binary:
 * always exact. Text depends on the server's lc_monetary: only the C
 * locale's form ("$1,234.56", "-$1.00", two fraction digits) is decoded;
 * anything else gives PGW_EFORMAT, so ask for binary (the default). */
PGW_EXTERN int pgw_get_money(const pgw_value_t *v, int64_t *cents);

/* ------------------------------------------------------------------------ */
/* numeric                                                                  */
/* ------------------------------------------------------------------------ */

/* numeric sign word, as in the server's binary format. */
enum pgw_numeric_sign {
    PGW_NUMERIC_POS = 0x0000,
    PGW_NUMERIC_NEG = 0x4000,
    PGW_NUMERIC_NAN = 0xC000,
    PGW_NUMERIC_PINF = 0xD000,
    PGW_NUMERIC_NINF = 0xF000
};

/*
 * An exact numeric: value = sum(digit[i] * 10000^(weight - i)), with dscale
 * decimal digits shown after the point. digits views ndigits base-10000
 * digits, each stored as 2 bytes big-endian (the wire layout): read them
 * with pgw_numeric_digit. For NaN and the infinities ndigits is 0.
 * Every value the server stores fits: up to 131072 decimal digits before
 * the point and 16383 after, i.e. weight up to 32767 and up to 36864
 * base-10000 digits (ndigits is unsigned, as on the wire).
 */
typedef struct pgw_numeric {
    uint16_t sign;         /* enum pgw_numeric_sign */
    int16_t weight;        /* power of 10000 of the first digit */
    uint16_t dscale;       /* decimal digits shown after the point */
    uint16_t ndigits;      /* count of base-10000 digits */
    const uint8_t *digits; /* ndigits 2-byte big-endian digits, a view */
} pgw_numeric_t;

/* The i-th base-10000 digit (i < n->ndigits). A NULL n gives 0. */
PGW_INLINE uint16_t pgw_numeric_digit(const pgw_numeric_t *n, size_t i)
{
    if (!n) return 0;
    return (uint16_t)((uint16_t)n->digits[2 * i] << 8 | n->digits[2 * i + 1]);
}

/* Storage that is always enough for pgw_get_numeric on a text value of len
 * bytes (and for pgw_numeric_parse of len characters without exponent). */
#define PGW_NUMERIC_STORAGE(len) ((size_t)(len) + 8)

/*
 * numeric in either format. Binary: out->digits views v's bytes in place
 * (storage is not used and may be NULL). Text: the digits are written to
 * storage[0..cap) (PGW_NUMERIC_STORAGE(v->len) bytes are always enough;
 * PGW_ERANGE if cap is too small). out lives as long as v's bytes and
 * storage.
 */
PGW_EXTERN int pgw_get_numeric(const pgw_value_t *v, pgw_numeric_t *out, uint8_t *storage,
                               size_t cap);
/*
 * Parse a decimal string ("-12.50", "1e-5", "NaN", "Infinity", "-inf",
 * case-insensitive words, as the server accepts) into out, digits written
 * to storage[0..cap). Returns 0, PGW_EFORMAT, or PGW_ERANGE (storage too
 * small, or the value is beyond numeric's range: weight, or dscale above
 * 16383).
 */
PGW_EXTERN int pgw_numeric_parse(const char *s, size_t len, pgw_numeric_t *out, uint8_t *storage,
                                 size_t cap);
/*
 * Format n as the server does ("-12.50", "NaN", "Infinity") into
 * buf[0..cap), NUL-terminated. *needed is set to the length including the
 * NUL; PGW_ERANGE if cap is smaller (buf then holds nothing useful).
 */
PGW_EXTERN int pgw_numeric_to_str(const pgw_numeric_t *n, char *buf, size_t cap, size_t *needed);
/* The numeric value of v as a decimal string (text: copied as is; binary:
 * formatted). Same buffer contract as pgw_numeric_to_str. */
PGW_EXTERN int pgw_get_numeric_str(const pgw_value_t *v, char *buf, size_t cap, size_t *needed);
/* Correctly rounded double. NaN and the infinities map to their doubles.
 * PGW_ERANGE if the magnitude is beyond DBL_MAX; PGW_ELOSS if a non-zero
 * value underflows to 0. */
PGW_EXTERN int pgw_numeric_to_double(const pgw_numeric_t *n, double *out);
/* Exact int64. PGW_ELOSS if there is a non-zero fraction, PGW_ERANGE if out
 * of range or NaN/infinite. */
PGW_EXTERN int pgw_numeric_to_int64(const pgw_numeric_t *n, int64_t *out);
/* Convenience: pgw_get_numeric + conversion, with no storage needed. */
PGW_EXTERN int pgw_get_numeric_double(const pgw_value_t *v, double *out);
PGW_EXTERN int pgw_get_numeric_int64(const pgw_value_t *v, int64_t *out);

/* ------------------------------------------------------------------------ */
/* Date and time                                                            */
/* ------------------------------------------------------------------------ */
/*
 * The server's representation is used as is: date is int32 days since
 * 2000-01-01, time is int64 microseconds since midnight, timestamp and
 * timestamptz are int64 microseconds since 2000-01-01 00:00:00 (UTC for
 * timestamptz; for timestamp, the wall-clock reading, never shifted by any
 * time zone). Infinite values are the extremes below. Text is parsed in the
 * ISO DateStyle, intervals in the postgres IntervalStyle (the library's
 * sessions see to both unless the application chose other styles: see
 * "Date styles" in session.h); other styles are PGW_EFORMAT. No libc time
 * or locale function is involved. Calendars are proleptic Gregorian; years in
 * pgw_tm_t are astronomical: 0 is 1 BC, -4713 is 4714 BC.
 */
#define PGW_DATE_NEG_INFINITY INT32_MIN
#define PGW_DATE_INFINITY     INT32_MAX
#define PGW_TS_NEG_INFINITY   INT64_MIN
#define PGW_TS_INFINITY       INT64_MAX
/* Microseconds between 1970-01-01 and 2000-01-01. */
#define PGW_EPOCH_DIFF_USEC INT64_C(946684800000000)
/* Days between 1970-01-01 and 2000-01-01. */
#define PGW_EPOCH_DIFF_DAYS 10957

/* Broken-down time. gmtoff: seconds east of UTC of the value (for
 * timestamptz from text, the offset the server wrote; otherwise 0). */
typedef struct pgw_tm {
    int32_t year;           /* astronomical: 1 BC is 0 */
    int32_t month;          /* 1..12 */
    int32_t day;            /* 1..31 */
    int32_t hour, min, sec; /* 0..23, 0..59, 0..59 */
    int32_t usec;           /* 0..999999 */
    int32_t gmtoff;         /* seconds east of UTC (above) */
} pgw_tm_t;

/* time with time zone: gmtoff is seconds east of UTC (ISO sign: -06 is
 * -21600; the binary format stores the opposite sign, converted here). */
typedef struct pgw_timetz {
    int64_t usec;   /* usec since midnight, local time */
    int32_t gmtoff; /* seconds east of UTC */
} pgw_timetz_t;

/* interval: the three independent fields the server keeps. */
typedef struct pgw_interval {
    int64_t usec;   /* microseconds */
    int32_t days;   /* days */
    int32_t months; /* months */
} pgw_interval_t;

/* date as days since 2000-01-01, time as usec since midnight, timetz;
 * either format. Return the scalar decoders' codes (above). */
PGW_EXTERN int pgw_get_date(const pgw_value_t *v, int32_t *days);
PGW_EXTERN int pgw_get_time(const pgw_value_t *v, int64_t *usec);
PGW_EXTERN int pgw_get_timetz(const pgw_value_t *v, pgw_timetz_t *out);
/* timestamp only (PGW_ETYPE for timestamptz: they mean different things). */
PGW_EXTERN int pgw_get_timestamp(const pgw_value_t *v, int64_t *usec);
/* timestamptz only: UTC microseconds since 2000-01-01. */
PGW_EXTERN int pgw_get_timestamptz(const pgw_value_t *v, int64_t *usec);
/* timestamp or timestamptz as microseconds since the Unix epoch (timestamp:
 * its wall-clock reading taken as UTC). PGW_ERANGE for the infinities. */
PGW_EXTERN int pgw_get_timestamp_unix(const pgw_value_t *v, int64_t *unix_usec);
/* date, timestamp or timestamptz broken down. For timestamptz from text the
 * fields and gmtoff are those the server wrote (its TimeZone); from binary
 * they are UTC. PGW_ERANGE for the infinities and for binary timestamps
 * outside the server's range (see pgw_timestamp_to_tm). */
PGW_EXTERN int pgw_get_tm(const pgw_value_t *v, pgw_tm_t *out);
PGW_EXTERN int pgw_get_interval(const pgw_value_t *v, pgw_interval_t *out);

/* Conversions (pure arithmetic). Each returns 0 or PGW_ERANGE (infinite
 * input, or a result that does not fit). */
PGW_EXTERN int pgw_timestamp_to_unix(int64_t pg_usec, int64_t *unix_usec);
PGW_EXTERN int pgw_timestamp_from_unix(int64_t unix_usec, int64_t *pg_usec);
/* Breaks down a timestamp (gmtoff set to 0). Only the server's range
 * (4714-11-24 BC 00:00 to 294276-12-31 23:59:59.999999) converts: beyond it
 * PGW_ERANGE, so every result also converts back with pgw_tm_to_timestamp. */
PGW_EXTERN int pgw_timestamp_to_tm(int64_t pg_usec, pgw_tm_t *out);
/* Builds a timestamp from fields; gmtoff is subtracted (UTC result). Fields
 * must be in their normal ranges (PGW_ERANGE otherwise). */
PGW_EXTERN int pgw_tm_to_timestamp(const pgw_tm_t *tm, int64_t *pg_usec);
/* A date (days since 2000-01-01) broken down, time fields 0; and the date
 * of year, month, day. Return 0, PGW_ERANGE (an infinite date, a date out
 * of range) or PGW_EINVAL (out or days NULL). */
PGW_EXTERN int pgw_date_to_tm(int32_t days, pgw_tm_t *out);
PGW_EXTERN int pgw_date_from_ymd(int32_t year, int32_t month, int32_t day, int32_t *days);

/* ------------------------------------------------------------------------ */
/* Time zones                                                               */
/* ------------------------------------------------------------------------ */
/*
 * A time zone as the server applies it to timestamptz output: the UTC offset
 * at any instant, from the zone's TZif file (the system's tzdata, which the
 * server reads too when built with it, as Debian's is) or from a POSIX TZ
 * string, with the server's rules before the first and after the last
 * transition of the file. No process-wide state (TZ, localtime) is read or
 * changed. Immutable once made: a zone may be read from several threads at
 * once.
 */
typedef struct pgw_tz pgw_tz_t;

/*
 * Load zone name (as the server reports TimeZone: "America/Chicago",
 * "UTC", or a POSIX string such as "<+05:30>-05:30") from dir (NULL:
 * /usr/share/zoneinfo): the file dir/name when name is a plain relative
 * path (no "." or ".." components), else name read as a POSIX TZ string,
 * as the server does. *out is freed with pgw_tz_free. Returns 0,
 * PGW_ENOTFOUND (neither a readable zone file nor a POSIX string),
 * PGW_EFORMAT (a malformed file), PGW_ENOTSUP (a leap-second zone, or a
 * POSIX string with DST but no rules: the server would take the rules from
 * its "posixrules" file), PGW_EINVAL (out or name NULL) or PGW_ENOMEM.
 */
PGW_EXTERN int pgw_tz_load(pgw_tz_t **out, const char *name, const char *dir,
                           const pgw_allocator_t *alloc);
/* The zone of a TZif file's bytes (versions 1 to 4), or of a POSIX TZ
 * string of len bytes. Same codes as pgw_tz_load (PGW_EFORMAT for bytes
 * that are not such a zone). */
PGW_EXTERN int pgw_tz_from_tzif(pgw_tz_t **out, const uint8_t *data, size_t len,
                                const pgw_allocator_t *alloc);
PGW_EXTERN int pgw_tz_from_posix(pgw_tz_t **out, const char *spec, size_t len,
                                 const pgw_allocator_t *alloc);
/* Seconds east of UTC in zone tz at unix_sec (seconds since 1970 UTC).
 * Returns 0 or PGW_EINVAL (tz or gmtoff NULL). */
PGW_EXTERN int pgw_tz_gmtoff(const pgw_tz_t *tz, int64_t unix_sec, int32_t *gmtoff);
/* Free a zone. NULL is a no-op. */
PGW_EXTERN void pgw_tz_free(pgw_tz_t *tz);

/* ------------------------------------------------------------------------ */
/* Network addresses                                                        */
/* ------------------------------------------------------------------------ */

#define PGW_INET_AF_INET  2 /* the server's PGSQL_AF_INET */
#define PGW_INET_AF_INET6 3 /* the server's PGSQL_AF_INET6 */

/* inet / cidr: nb address bytes (4 or 16) in addr, bits of netmask. */
typedef struct pgw_inet {
    uint8_t family;   /* PGW_INET_AF_INET or PGW_INET_AF_INET6 */
    uint8_t bits;     /* netmask bits */
    uint8_t is_cidr;  /* 1 for cidr, 0 for inet */
    uint8_t nb;       /* address bytes in addr: 4 or 16 */
    uint8_t addr[16]; /* the address, network byte order */
} pgw_inet_t;

/* inet or cidr, either format. Text: "a.b.c.d[/n]", IPv6 with "::" and an
 * embedded IPv4 tail, as the server writes them. */
PGW_EXTERN int pgw_get_inet(const pgw_value_t *v, pgw_inet_t *out);
/* Parse text; is_cidr is stored as given (a missing /n means all bits).
 * Returns 0 or PGW_EFORMAT. */
PGW_EXTERN int pgw_inet_parse(const char *s, size_t len, int is_cidr, pgw_inet_t *out);

/* ------------------------------------------------------------------------ */
/* Any scalar as a tagged value                                             */
/* ------------------------------------------------------------------------ */

/* What a pgw_datum_t holds, and in which member of u. */
enum pgw_datum_kind {
    PGW_DATUM_NULL = 0,
    PGW_DATUM_BOOL,         /* u.b */
    PGW_DATUM_INT,          /* u.i: int2, int4, int8, oid */
    PGW_DATUM_FLOAT4,       /* u.f4 */
    PGW_DATUM_FLOAT8,       /* u.f8 */
    PGW_DATUM_TEXT,         /* u.str: text-like (not "char"), json/jsonb */
    PGW_DATUM_BYTEA,        /* u.bytes: binary bytea, in place */
    PGW_DATUM_BYTEA_TEXT,   /* u.str: bytea in its escaped text form */
    PGW_DATUM_NUMERIC,      /* u.num: binary numeric, digits in place */
    PGW_DATUM_NUMERIC_TEXT, /* u.str: numeric as its decimal text */
    PGW_DATUM_DATE,         /* u.i: days since 2000-01-01 */
    PGW_DATUM_TIME,         /* u.i: usec since midnight */
    PGW_DATUM_TIMETZ,       /* u.timetz */
    PGW_DATUM_TIMESTAMP,    /* u.i: usec since 2000-01-01 (timestamp) */
    PGW_DATUM_TIMESTAMPTZ,  /* u.i: UTC usec since 2000-01-01 */
    PGW_DATUM_INTERVAL,     /* u.interval */
    PGW_DATUM_UUID,         /* u.uuid */
    PGW_DATUM_INET,         /* u.inet: inet and cidr */
    PGW_DATUM_MACADDR,      /* u.mac[0..6) */
    PGW_DATUM_MACADDR8,     /* u.mac[0..8) */
    PGW_DATUM_MONEY,        /* u.i: cents */
    PGW_DATUM_CHAR          /* u.i: the "char" byte, 0..255 */
};

/* A decoded scalar. Views in it (str, bytes, num.digits) point into the
 * value's bytes and live as long as they do. */
typedef struct pgw_datum {
    uint32_t oid; /* the value's type */
    uint8_t kind; /* enum pgw_datum_kind */
    /* The value: the member its kind names. */
    union {
        bool b;
        int64_t i;
        float f4;
        double f8;
        pgw_str_t str;
        pgw_view_t bytes;
        pgw_numeric_t num;
        pgw_timetz_t timetz;
        pgw_interval_t interval;
        uint8_t uuid[16];
        pgw_inet_t inet;
        uint8_t mac[8];
    } u;
} pgw_datum_t;

/* Decode v (a built-in scalar type, either format) into out with no
 * allocation; a domain or enum loaded into the default registry decodes as
 * its base type or as text (out->oid stays v's). SQL NULL gives kind
 * PGW_DATUM_NULL and returns 0. PGW_ETYPE for any other OID, PGW_EINVAL for
 * a NULL v or out. */
PGW_EXTERN int pgw_get_datum(const pgw_value_t *v, pgw_datum_t *out);

/* ------------------------------------------------------------------------ */
/* Any value as the server's text                                          */
/* ------------------------------------------------------------------------ */

/* The type registry (types_container.h): user types' catalog facts. */
typedef struct pgw_type_registry pgw_type_registry_t;

/* What pgw_value_to_text needs beyond the value. A zeroed struct (or a NULL
 * pointer) means: timestamptz in UTC, the default registry, ISO DateStyle
 * and postgres IntervalStyle. */
typedef struct pgw_text_ctx {
    /* The session's TimeZone, for timestamptz (NULL: UTC, unless
     * PGW_TEXT_TZ_UNKNOWN). Not owned. */
    const pgw_tz_t *tz;
    /* Where user types (enums, domains, composites, ranges, arrays of them)
     * are looked up (NULL: the default registry). Not owned. */
    const pgw_type_registry_t *reg;
    unsigned flags; /* PGW_TEXT_* */
} pgw_text_ctx_t;

/* The session's TimeZone is not known or could not be loaded: a binary
 * timestamptz (anywhere in the value) gives PGW_ENOTFOUND rather than an
 * offset that could be wrong. */
#define PGW_TEXT_TZ_UNKNOWN 0x1u
/* The session's DateStyle is not ISO or its IntervalStyle not postgres:
 * the server prints date and time values in a form this formatter does not
 * write, so a binary date, time, timetz, timestamp, timestamptz or interval
 * gives PGW_ENOTSUP. */
#define PGW_TEXT_OTHER_STYLE 0x2u

/*
 * Append to out the text the server's output function would have written
 * for v, whatever format v came in (libpq's PQgetvalue string). A text
 * value is appended as it is. A binary value is formatted as the server
 * formats it with its default output settings, byte for byte:
 *   bool, int2, int4, int8, oid, xid, cid, xid8; float4 and float8 in the
 *   shortest form that reads back (extra_float_digits >= 1, the default
 *   since PostgreSQL 12); numeric exactly (NaN, Infinity, every dscale
 *   digit); text, varchar, bpchar, name, "char", json, jsonb, jsonpath,
 *   xml, refcursor, unknown; bytea in hex (bytea_output = hex); uuid;
 *   date, time, timetz, timestamp, timestamptz (in ctx->tz, with the
 *   offset as the server writes it: "+05:30", "-05:50:36"), interval (ISO
 *   DateStyle, postgres IntervalStyle, BC years, infinity); inet, cidr,
 *   macaddr, macaddr8; money as in lc_monetary C ("-$1,234.56"); bit,
 *   varbit; tid, pg_lsn; point, lseg, box, line, circle, path, polygon;
 *   int2vector, oidvector; pg_snapshot, txid_snapshot;
 *   arrays (dimension decoration, NULL, quoting and backslashes as
 *   array_out writes them, ';' between box elements), ranges, multiranges
 *   and records (record_out's quoting) of all of these, and enums, domains,
 *   composites, ranges and arrays of user types loaded into the registry.
 * Other binary values (reg* types, which print names the server looks up;
 * aclitem, tsvector, tsquery; extension types; user types not loaded)
 * give PGW_ETYPE: never guessed text. Nothing is NUL-terminated.
 * On error out is left as it was. Returns 0, PGW_ENULL (v is SQL NULL),
 * PGW_ETYPE, PGW_EFORMAT (malformed binary bytes), PGW_ERANGE (a date/time
 * outside the server's range), PGW_ENOTFOUND / PGW_ENOTSUP (see the flags
 * above), PGW_EINVAL (v or out NULL, unknown format), PGW_ENOMEM or
 * PGW_ETOOBIG (out's limit).
 */
PGW_EXTERN int pgw_value_to_text(const pgw_value_t *v, const pgw_text_ctx_t *ctx, pgw_buf_t *out);

/* ------------------------------------------------------------------------ */
/* Binary encoders and parameter constructors                               */
/* ------------------------------------------------------------------------ */
/*
 * The encoders below have the pgw_encode_fn shape: they append the binary
 * value at ctx to out and return 0, PGW_ENOMEM, PGW_ETOOBIG (out->max), or
 * PGW_EFORMAT / PGW_ERANGE / PGW_EINVAL for a value that cannot be sent.
 *
 * NOTE (lifetime): the constructors that take a pointer store the pointer,
 * not a copy: what it points to must stay alive and unchanged until the
 * parameter has been encoded (the query call returns).
 */
/* ctx: a NUL-terminated decimal string (see pgw_numeric_parse). */
PGW_EXTERN int pgw_encode_numeric_str(const void *ctx, pgw_buf_t *out);
/* ctx: a pgw_numeric_t. */
PGW_EXTERN int pgw_encode_numeric(const void *ctx, pgw_buf_t *out);
/* ctx: NUL-terminated JSON text; writes the version byte 1 and the text. */
PGW_EXTERN int pgw_encode_jsonb(const void *ctx, pgw_buf_t *out);
/* ctx: a pgw_interval_t / pgw_timetz_t / pgw_inet_t. */
PGW_EXTERN int pgw_encode_interval(const void *ctx, pgw_buf_t *out);
PGW_EXTERN int pgw_encode_timetz(const void *ctx, pgw_buf_t *out);
PGW_EXTERN int pgw_encode_inet(const void *ctx, pgw_buf_t *out);

/* An oid. */
PGW_INLINE pgw_param_t pgw_oid_param(uint32_t v)
{
    pgw_param_t p = {PGW_PARAM_INT4, PGW_FORMAT_BINARY, PGW_OID_OID, {0}};
    p.u.i = (int64_t)v;
    return p;
}
/* A numeric from a decimal string, encoded in binary (s kept alive). */
PGW_INLINE pgw_param_t pgw_numeric_str(const char *s)
{
    return pgw_encoded(PGW_OID_NUMERIC, pgw_encode_numeric_str, s);
}
/* A numeric from its base-10000 form (n and its digits kept alive). */
PGW_INLINE pgw_param_t pgw_numeric(const pgw_numeric_t *n)
{
    return pgw_encoded(PGW_OID_NUMERIC, pgw_encode_numeric, n);
}
/* days since 2000-01-01 */
PGW_INLINE pgw_param_t pgw_date(int32_t days)
{
    pgw_param_t p = {PGW_PARAM_INT4, PGW_FORMAT_BINARY, PGW_OID_DATE, {0}};
    p.u.i = days;
    return p;
}
/* usec since midnight */
PGW_INLINE pgw_param_t pgw_time(int64_t usec)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_TIME, {0}};
    p.u.i = usec;
    return p;
}
/* time with time zone (t kept alive) */
PGW_INLINE pgw_param_t pgw_timetz(const pgw_timetz_t *t)
{
    return pgw_encoded(PGW_OID_TIMETZ, pgw_encode_timetz, t);
}
/* usec since 2000-01-01 (pgw_timestamp_from_unix converts) */
PGW_INLINE pgw_param_t pgw_timestamp(int64_t usec)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_TIMESTAMP, {0}};
    p.u.i = usec;
    return p;
}
/* UTC usec since 2000-01-01 */
PGW_INLINE pgw_param_t pgw_timestamptz(int64_t usec)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_TIMESTAMPTZ, {0}};
    p.u.i = usec;
    return p;
}
/* interval (iv kept alive) */
PGW_INLINE pgw_param_t pgw_interval(const pgw_interval_t *iv)
{
    return pgw_encoded(PGW_OID_INTERVAL, pgw_encode_interval, iv);
}
/* the 16 bytes of a uuid (kept alive) */
PGW_INLINE pgw_param_t pgw_uuid(const uint8_t uuid[16])
{
    return pgw_raw(PGW_OID_UUID, PGW_FORMAT_BINARY, uuid, 16);
}
/* inet or cidr according to a->is_cidr. */
PGW_INLINE pgw_param_t pgw_inet(const pgw_inet_t *a)
{
    return pgw_encoded(a && a->is_cidr ? PGW_OID_CIDR : PGW_OID_INET, pgw_encode_inet, a);
}
/* macaddr: 6 bytes (kept alive) */
PGW_INLINE pgw_param_t pgw_macaddr(const uint8_t mac[6])
{
    return pgw_raw(PGW_OID_MACADDR, PGW_FORMAT_BINARY, mac, 6);
}
/* macaddr8: 8 bytes (kept alive) */
PGW_INLINE pgw_param_t pgw_macaddr8(const uint8_t mac[8])
{
    return pgw_raw(PGW_OID_MACADDR8, PGW_FORMAT_BINARY, mac, 8);
}
/* money as a count of the currency's smallest unit (cents) */
PGW_INLINE pgw_param_t pgw_money(int64_t cents)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_MONEY, {0}};
    p.u.i = cents;
    return p;
}
/* json: the text, sent as is (binary json is its text). NUL-terminated. */
PGW_INLINE pgw_param_t pgw_json(const char *json)
{
    return pgw_raw(PGW_OID_JSON, PGW_FORMAT_BINARY, json, -1);
}
/* jsonb from NUL-terminated JSON text (kept alive), sent in binary with
 * its version byte; the server checks the text. */
PGW_INLINE pgw_param_t pgw_jsonb(const char *json)
{
    return pgw_encoded(PGW_OID_JSONB, pgw_encode_jsonb, json);
}

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_TYPES_H */
