/*
 * Parameter conversion against a statement's known parameter types (the
 * ParameterDescription of a prepared or described statement), so a
 * pgw_int8 can fill an int4 parameter when the value fits, and a value that
 * cannot be sent is a clear error before anything is written, not a server
 * error about binary data. Used by the session's execute path. Not
 * installed.
 */
#ifndef PGW_TYPES_PARAM_CONVERT_H
#define PGW_TYPES_PARAM_CONVERT_H

#include "pgwire/types.h"

/*
 * The value to send for parameter *in where the statement expects type
 * target_oid, in *out. A domain target is taken as its base type when it is
 * loaded into the default registry. Rules, in order:
 *   - in is NULL (PGW_PARAM_NULL): *out is it with target_oid as its type;
 *   - same type, target 0, a type the table does not know (user types,
 *     arrays: the server judges them), or a text-format parameter (the
 *     server parses text): *out = *in;
 *   - int2 / int4 / int8 / oid among each other when the value fits;
 *   - float4 to float8; float8 to float4 when the value is exactly a float
 *     (NaN and the infinities are);
 *   - an integer to float4 / float8 when exactly representable;
 *   - an integer to numeric (sent as binary numeric by an encoder that
 *     reads in: *out points into *in, which must live as long as *out);
 *   - between the types whose binary form is their text (text, varchar,
 *     bpchar, name, json, xml: the table's TEXT column) unchanged but for
 *     the type; such a text to jsonb or jsonpath with the version byte added
 *     (an encoder that reads *in, as above);
 *   - nothing else: bool only to bool, dates, times, uuid, bytea... only to
 *     themselves.
 * Returns 0, PGW_ERANGE (the value does not fit target_oid, or not
 * exactly), PGW_ETYPE (in's binary form cannot be sent as target_oid at
 * all) or PGW_EINVAL (in or out NULL).
 */
int pgw__param_convert(const pgw_param_t *in, uint32_t target_oid, pgw_param_t *out);

/* Why parameter *p cannot be encoded at all ("a NULL pointer with length
 * 4", ...), or NULL when it can (bind.c: the one place that decides). */
const char *pgw__param_invalid(const pgw_param_t *p);

/* pgw_enc_bind_params, and on a failure while a parameter was encoded (its
 * encoder's own error, or the size limit) that parameter's index in
 * *failed (SIZE_MAX otherwise). */
int pgw__enc_bind_params(pgw_buf_t *b, const char *portal, const char *stmt,
                         const pgw_param_t *params, size_t nparams, const int16_t *result_formats,
                         size_t nresult_formats, uint32_t max_msg, size_t *failed);

/*
 * Format the message for pgw__param_convert's rc on parameter index
 * (0-based; the message says $index+1) into buf[0..n), NUL-terminated when
 * n > 0, e.g. "parameter $2: int8 value 5000000000 does not fit the
 * statement's int4", "parameter $1: int4 cannot be sent as uuid". Returns
 * the message's length (snprintf's: it may exceed n - 1, then the message
 * is cut).
 */
size_t pgw__param_convert_message(char *buf, size_t n, size_t index, const pgw_param_t *p,
                                  uint32_t target_oid, int rc);

#endif
