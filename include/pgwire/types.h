/*
 * libpgwire types: decoding PostgreSQL values from their text and binary
 * wire formats into C values, and encoding C values as binary parameters.
 *
 * No I/O, no event loop, no TLS. Decoders read a pgw_value_t (a view of the
 * wire bytes plus format and type OID) and write a C value; they never
 * allocate where the value can be read in place. A decoder that is handed a
 * type or format it cannot convert returns PGW_ETYPE; malformed bytes give
 * PGW_EFORMAT; a value that does not fit the target gives PGW_ERANGE or
 * PGW_ELOSS. None of them ever returns a silently wrong number.
 */
#ifndef PGWIRE_TYPES_H
#define PGWIRE_TYPES_H

#include "pgwire/common.h"
#include "pgwire/proto.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Type OIDs of the built-in types (pg_type.dat). */
enum pgw_oid {
    PGW_OID_BOOL = 16,
    PGW_OID_BYTEA = 17,
    PGW_OID_CHAR = 18,
    PGW_OID_NAME = 19,
    PGW_OID_INT8 = 20,
    PGW_OID_INT2 = 21,
    PGW_OID_INT4 = 23,
    PGW_OID_TEXT = 25,
    PGW_OID_OID = 26,
    PGW_OID_JSON = 114,
    PGW_OID_XML = 142,
    PGW_OID_POINT = 600,
    PGW_OID_CIDR = 650,
    PGW_OID_FLOAT4 = 700,
    PGW_OID_FLOAT8 = 701,
    PGW_OID_UNKNOWN = 705,
    PGW_OID_MACADDR8 = 774,
    PGW_OID_MONEY = 790,
    PGW_OID_MACADDR = 829,
    PGW_OID_INET = 869,
    PGW_OID_BPCHAR = 1042,
    PGW_OID_VARCHAR = 1043,
    PGW_OID_DATE = 1082,
    PGW_OID_TIME = 1083,
    PGW_OID_TIMESTAMP = 1114,
    PGW_OID_TIMESTAMPTZ = 1184,
    PGW_OID_INTERVAL = 1186,
    PGW_OID_TIMETZ = 1266,
    PGW_OID_NUMERIC = 1700,
    PGW_OID_RECORD = 2249,
    PGW_OID_UUID = 2950,
    PGW_OID_JSONB = 3802,
    PGW_OID_JSONPATH = 4072,
    PGW_OID_INT4RANGE = 3904,
    PGW_OID_NUMRANGE = 3906,
    PGW_OID_TSRANGE = 3908,
    PGW_OID_TSTZRANGE = 3910,
    PGW_OID_DATERANGE = 3912,
    PGW_OID_INT8RANGE = 3926,
    PGW_OID_INT4MULTIRANGE = 4451,
    PGW_OID_NUMMULTIRANGE = 4532,
    PGW_OID_TSMULTIRANGE = 4533,
    PGW_OID_TSTZMULTIRANGE = 4534,
    PGW_OID_DATEMULTIRANGE = 4535,
    PGW_OID_INT8MULTIRANGE = 4536,
    /* array types */
    PGW_OID_BOOL_ARRAY = 1000,
    PGW_OID_BYTEA_ARRAY = 1001,
    PGW_OID_CHAR_ARRAY = 1002,
    PGW_OID_NAME_ARRAY = 1003,
    PGW_OID_INT2_ARRAY = 1005,
    PGW_OID_INT4_ARRAY = 1007,
    PGW_OID_TEXT_ARRAY = 1009,
    PGW_OID_BPCHAR_ARRAY = 1014,
    PGW_OID_VARCHAR_ARRAY = 1015,
    PGW_OID_INT8_ARRAY = 1016,
    PGW_OID_FLOAT4_ARRAY = 1021,
    PGW_OID_FLOAT8_ARRAY = 1022,
    PGW_OID_OID_ARRAY = 1028,
    PGW_OID_TIMESTAMP_ARRAY = 1115,
    PGW_OID_DATE_ARRAY = 1182,
    PGW_OID_TIME_ARRAY = 1183,
    PGW_OID_TIMESTAMPTZ_ARRAY = 1185,
    PGW_OID_INTERVAL_ARRAY = 1187,
    PGW_OID_NUMERIC_ARRAY = 1231,
    PGW_OID_TIMETZ_ARRAY = 1270,
    PGW_OID_UUID_ARRAY = 2951,
    PGW_OID_JSON_ARRAY = 199,
    PGW_OID_JSONB_ARRAY = 3807,
    PGW_OID_INET_ARRAY = 1041,
    PGW_OID_CIDR_ARRAY = 651,
    PGW_OID_MACADDR_ARRAY = 1040,
    PGW_OID_MACADDR8_ARRAY = 775,
    PGW_OID_MONEY_ARRAY = 791
};

/* Wire formats. */
enum pgw_format { PGW_FORMAT_TEXT = 0, PGW_FORMAT_BINARY = 1 };

/*
 * One value as it came off the wire. p/len view the bytes (len -1: NULL);
 * format is PGW_FORMAT_TEXT or PGW_FORMAT_BINARY; oid is the column's type.
 * The bytes belong to whoever produced the value (a DataRow in a read
 * buffer, a pgw_result_t): see there for how long they live.
 */
typedef struct pgw_value {
    const uint8_t *p;
    int32_t len;
    int16_t format;
    uint32_t oid;
} pgw_value_t;

/* 1 if v is SQL NULL. */
static inline int pgw_value_is_null(const pgw_value_t *v)
{
    return v->len < 0;
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

static inline pgw_param_t pgw_null(uint32_t oid)
{
    pgw_param_t p = {PGW_PARAM_NULL, PGW_FORMAT_BINARY, oid, {0}};
    return p;
}
static inline pgw_param_t pgw_bool(bool v)
{
    pgw_param_t p = {PGW_PARAM_BOOL, PGW_FORMAT_BINARY, PGW_OID_BOOL, {0}};
    p.u.b = v;
    return p;
}
static inline pgw_param_t pgw_int2(int16_t v)
{
    pgw_param_t p = {PGW_PARAM_INT2, PGW_FORMAT_BINARY, PGW_OID_INT2, {0}};
    p.u.i = v;
    return p;
}
static inline pgw_param_t pgw_int4(int32_t v)
{
    pgw_param_t p = {PGW_PARAM_INT4, PGW_FORMAT_BINARY, PGW_OID_INT4, {0}};
    p.u.i = v;
    return p;
}
static inline pgw_param_t pgw_int8(int64_t v)
{
    pgw_param_t p = {PGW_PARAM_INT8, PGW_FORMAT_BINARY, PGW_OID_INT8, {0}};
    p.u.i = v;
    return p;
}
static inline pgw_param_t pgw_float4(float v)
{
    pgw_param_t p = {PGW_PARAM_FLOAT4, PGW_FORMAT_BINARY, PGW_OID_FLOAT4, {0}};
    p.u.f4 = v;
    return p;
}
static inline pgw_param_t pgw_float8(double v)
{
    pgw_param_t p = {PGW_PARAM_FLOAT8, PGW_FORMAT_BINARY, PGW_OID_FLOAT8, {0}};
    p.u.f8 = v;
    return p;
}
/* Text (sent in text format, type oid, 0 to let the server infer). len -1:
 * s is NUL-terminated. */
static inline pgw_param_t pgw_text_typed(const char *s, int32_t len, uint32_t oid)
{
    pgw_param_t p = {PGW_PARAM_BYTES, PGW_FORMAT_TEXT, oid, {0}};
    p.u.bytes.p = s;
    p.u.bytes.len = len;
    return p;
}
static inline pgw_param_t pgw_text(const char *s)
{
    return pgw_text_typed(s, -1, PGW_OID_TEXT);
}
/* bytea, sent in binary. */
static inline pgw_param_t pgw_bytea(const void *data, int32_t len)
{
    pgw_param_t p = {PGW_PARAM_BYTES, PGW_FORMAT_BINARY, PGW_OID_BYTEA, {0}};
    p.u.bytes.p = data;
    p.u.bytes.len = len;
    return p;
}
/* A value already encoded in format fmt for type oid. */
static inline pgw_param_t pgw_raw(uint32_t oid, int16_t fmt, const void *data, int32_t len)
{
    pgw_param_t p = {PGW_PARAM_BYTES, fmt, oid, {0}};
    p.u.bytes.p = data;
    p.u.bytes.len = len;
    return p;
}
/* A value written by an encoder function, in binary format. */
static inline pgw_param_t pgw_encoded(uint32_t oid, pgw_encode_fn fn, const void *ctx)
{
    pgw_param_t p = {PGW_PARAM_ENCODER, PGW_FORMAT_BINARY, oid, {0}};
    p.u.enc.fn = fn;
    p.u.enc.ctx = ctx;
    return p;
}

/*
 * Append a Bind message for the given parameters to b, encoding each value
 * straight into the buffer. result_formats as in pgw_enc_bind. On any error b
 * is unchanged. Returns 0, PGW_ENOMEM, PGW_ETOOBIG (message would pass
 * max_msg or INT32_MAX), PGW_EINVAL (bad parameter) or an encoder's error.
 */
PGW_EXTERN int pgw_enc_bind_params(pgw_buf_t *b, const char *portal, const char *stmt,
                                   const pgw_param_t *params, uint16_t nparams,
                                   const int16_t *result_formats, uint16_t nresult_formats,
                                   uint32_t max_msg);

/* Fill oids[0..n) with each parameter's declared type (for Parse). */
PGW_EXTERN void pgw_params_oids(const pgw_param_t *params, uint16_t n, uint32_t *oids);

/*
 * 1 if the types layer decodes values of type oid from the binary format
 * (the built-in types above, their arrays, and anything registered with
 * pgw_type_register). The connection core asks binary results for those
 * columns and text for the rest.
 */
PGW_EXTERN int pgw_type_binary_ok(uint32_t oid);

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
/* Text-like values (text, varchar, bpchar, name, "char", json, jsonb
 * without its version byte, enums, xml, and the text form of anything):
 * out views the value's bytes in place (no copy, not NUL-terminated). */
PGW_EXTERN int pgw_get_text(const pgw_value_t *v, pgw_str_t *out);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_TYPES_H */
