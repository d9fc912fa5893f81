/*
 * The values the golden tests select from the real server, one list per
 * kind of type, written once and expanded by each test that needs them
 * (X-macros, so a test takes only the lists it uses):
 * test_types_golden_scalar.c and test_types_golden_container.c check that
 * the text and binary forms decode alike; test_types_text_out.c that the
 * binary form, formatted by pgw_value_to_text, is the server's text.
 */
#ifndef PGW_TEST_GOLDEN_VALUES_H
#define PGW_TEST_GOLDEN_VALUES_H

#include "pgwire/types_container.h"

#define GOLDEN_CHICAGO      "SET TimeZone = 'America/Chicago'"
#define GOLDEN_BYTEA_ESCAPE "SET bytea_output = 'escape'"

/* X(type, oid, literal, setup): the SQL type name, its oid, an expression
 * of that type ("(literal)::type" is selected) and an extra SET to run
 * first, or NULL. */
#define GOLDEN_SCALARS(X)                                                                          \
    X("bool", PGW_OID_BOOL, "true", NULL)                                                          \
    X("bool", PGW_OID_BOOL, "false", NULL)                                                         \
    X("int2", PGW_OID_INT2, "-32768", NULL)                                                        \
    X("int2", PGW_OID_INT2, "32767", NULL)                                                         \
    X("int4", PGW_OID_INT4, "-2147483648", NULL)                                                   \
    X("int4", PGW_OID_INT4, "2147483647", NULL)                                                    \
    X("int8", PGW_OID_INT8, "-9223372036854775808", NULL)                                          \
    X("int8", PGW_OID_INT8, "9223372036854775807", NULL)                                           \
    X("oid", PGW_OID_OID, "4294967295", NULL)                                                      \
    X("float4", PGW_OID_FLOAT4, "'NaN'", NULL)                                                     \
    X("float4", PGW_OID_FLOAT4, "'-Infinity'", NULL)                                               \
    X("float4", PGW_OID_FLOAT4, "'-0'", NULL)                                                      \
    X("float4", PGW_OID_FLOAT4, "'3.4028235e38'", NULL)                                            \
    X("float4", PGW_OID_FLOAT4, "'1.17549435e-38'", NULL)                                          \
    X("float4", PGW_OID_FLOAT4, "'0.1'", NULL)                                                     \
    X("float8", PGW_OID_FLOAT8, "'NaN'", NULL)                                                     \
    X("float8", PGW_OID_FLOAT8, "'Infinity'", NULL)                                                \
    X("float8", PGW_OID_FLOAT8, "'-Infinity'", NULL)                                               \
    X("float8", PGW_OID_FLOAT8, "'-0'", NULL)                                                      \
    X("float8", PGW_OID_FLOAT8, "'0.1'", NULL)                                                     \
    X("float8", PGW_OID_FLOAT8, "'1.7976931348623157e308'", NULL)                                  \
    X("float8", PGW_OID_FLOAT8, "'4.9e-324'", NULL)                                                \
    X("float8", PGW_OID_FLOAT8, "'2.2250738585072014e-308'", NULL)                                 \
    X("float8", PGW_OID_FLOAT8, "1/3.0::float8", NULL)                                             \
    X("numeric", PGW_OID_NUMERIC, "'NaN'", NULL)                                                   \
    X("numeric", PGW_OID_NUMERIC, "'Infinity'", NULL)                                              \
    X("numeric", PGW_OID_NUMERIC, "'-Infinity'", NULL)                                             \
    X("numeric", PGW_OID_NUMERIC, "0", NULL)                                                       \
    X("numeric", PGW_OID_NUMERIC, "'0.000'", NULL)                                                 \
    X("numeric", PGW_OID_NUMERIC, "'-0.000001'", NULL)                                             \
    X("numeric", PGW_OID_NUMERIC, "'123456789.123456789'", NULL)                                   \
    X("numeric", PGW_OID_NUMERIC, "'-99990000.00010000'", NULL)                                    \
    X("numeric", PGW_OID_NUMERIC, "'1e-16383'", NULL)                                              \
    X("numeric", PGW_OID_NUMERIC, "repeat('9', 1000)", NULL)                                       \
    X("numeric", PGW_OID_NUMERIC, "'0.' || repeat('0', 16382) || '1'", NULL)                       \
    X("numeric", PGW_OID_NUMERIC, "'1' || repeat('0', 131071)", NULL)                              \
    /* The largest values the server stores: 131072 digits before the                              \
     * point (32768 base-10000 digits, past int16), 16383 after, and both                          \
     * at once (36864 base-10000 digits). */                                                       \
    X("numeric", PGW_OID_NUMERIC, "repeat('9', 131072)", NULL)                                     \
    X("numeric", PGW_OID_NUMERIC, "'-' || repeat('9', 131072)", NULL)                              \
    X("numeric", PGW_OID_NUMERIC, "'0.' || repeat('9', 16383)", NULL)                              \
    X("numeric", PGW_OID_NUMERIC, "repeat('9', 131072) || '.' || repeat('9', 16383)", NULL)        \
    X("numeric", PGW_OID_NUMERIC, "'-' || repeat('9', 131072) || '.' || repeat('9', 16383)", NULL) \
    X("numeric", PGW_OID_NUMERIC,                                                                  \
      "'1' || repeat('0', 131071) || '.' || repeat('0', 16382) || '1'", NULL)                      \
    X("text", PGW_OID_TEXT, "'h\xc3\xa9llo'", NULL)                                                \
    X("text", PGW_OID_TEXT, "''", NULL)                                                            \
    X("varchar", PGW_OID_VARCHAR, "'abc'", NULL)                                                   \
    X("bpchar", PGW_OID_BPCHAR, "'ab'::char(4)", NULL)                                             \
    X("name", PGW_OID_NAME, "'pg_class'", NULL)                                                    \
    X("\"char\"", PGW_OID_CHAR, "'x'", NULL)                                                       \
    X("\"char\"", PGW_OID_CHAR, "chr(200)::\"char\"", NULL)                                        \
    X("bytea", PGW_OID_BYTEA, "'\\x00ff5c27'", NULL)                                               \
    X("bytea", PGW_OID_BYTEA, "'\\x00ff5c27'", GOLDEN_BYTEA_ESCAPE)                                \
    X("bytea", PGW_OID_BYTEA, "'\\x'", GOLDEN_BYTEA_ESCAPE)                                        \
    X("bytea", PGW_OID_BYTEA, "decode(repeat('00ff7f80', 300), 'hex')", GOLDEN_BYTEA_ESCAPE)       \
    X("json", PGW_OID_JSON, "'{\"big\": 123456789012345678901234567890}'", NULL)                   \
    X("jsonb", PGW_OID_JSONB, "'{\"big\": 123456789012345678901234567890, \"f\": 1.50}'", NULL)    \
    X("jsonpath", PGW_OID_JSONPATH, "'$.a[*] ? (@ > 1)'", NULL)                                    \
    X("uuid", PGW_OID_UUID, "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", NULL)                        \
    X("date", PGW_OID_DATE, "'infinity'", NULL)                                                    \
    X("date", PGW_OID_DATE, "'-infinity'", NULL)                                                   \
    X("date", PGW_OID_DATE, "'4714-11-24 BC'", NULL)                                               \
    X("date", PGW_OID_DATE, "'0001-01-01 BC'", NULL)                                               \
    X("date", PGW_OID_DATE, "'5874897-12-31'", NULL)                                               \
    X("date", PGW_OID_DATE, "'2024-02-29'", NULL)                                                  \
    X("time", PGW_OID_TIME, "'00:00:00'", NULL)                                                    \
    X("time", PGW_OID_TIME, "'23:59:59.999999'", NULL)                                             \
    X("time", PGW_OID_TIME, "'24:00:00'", NULL)                                                    \
    X("timetz", PGW_OID_TIMETZ, "'04:05:06.789-08'", NULL)                                         \
    X("timetz", PGW_OID_TIMETZ, "'04:05:06+05:45:30'", NULL)                                       \
    X("timestamp", PGW_OID_TIMESTAMP, "'infinity'", NULL)                                          \
    X("timestamp", PGW_OID_TIMESTAMP, "'-infinity'", NULL)                                         \
    X("timestamp", PGW_OID_TIMESTAMP, "'4713-11-24 00:00:00 BC'", NULL)                            \
    X("timestamp", PGW_OID_TIMESTAMP, "'294276-12-31 23:59:59.999999'", NULL)                      \
    X("timestamp", PGW_OID_TIMESTAMP, "'1969-12-31 23:59:59.999999'", NULL)                        \
    X("timestamp", PGW_OID_TIMESTAMP, "'1999-12-31 23:59:59.999999'", NULL)                        \
    X("timestamp", PGW_OID_TIMESTAMP, "'2024-03-10 02:30:00'", GOLDEN_CHICAGO)                     \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'infinity'", NULL)                                      \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'-infinity'", NULL)                                     \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'4713-11-24 00:00:00+00 BC'", NULL)                     \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'4713-11-24 00:00:00+00 BC'", GOLDEN_CHICAGO)           \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'294276-12-31 23:59:59.999999+00'", NULL)               \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'1969-12-31 23:59:59.999999+00'", NULL)                 \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'1999-12-31 23:59:59.999999+00'", NULL)                 \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-03-10 07:59:59.999999+00'", GOLDEN_CHICAGO)       \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-03-10 08:00:00+00'", GOLDEN_CHICAGO)              \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-11-03 06:30:00+00'", GOLDEN_CHICAGO)              \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-11-03 07:30:00+00'", GOLDEN_CHICAGO)              \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'1850-01-01 00:00:00+00'", GOLDEN_CHICAGO)              \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-01-01 00:00:00+00'",                              \
      "SET TimeZone = 'Asia/Kolkata'")                                                             \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'2024-01-01 00:00:00+00'",                              \
      "SET TimeZone = 'Asia/Kathmandu'")                                                           \
    X("timestamptz", PGW_OID_TIMESTAMPTZ, "'1900-01-01 00:00:00+00'",                              \
      "SET TimeZone = 'Asia/Kathmandu'")                                                           \
    X("interval", PGW_OID_INTERVAL, "'1 year 2 mons 3 days 04:05:06.789'", NULL)                   \
    X("interval", PGW_OID_INTERVAL, "'-1 days +02:03:00'", NULL)                                   \
    X("interval", PGW_OID_INTERVAL, "'-1 year -2 mons +3 days -04:05:06'", NULL)                   \
    X("interval", PGW_OID_INTERVAL, "'0'", NULL)                                                   \
    X("interval", PGW_OID_INTERVAL, "'-0.000001 seconds'", NULL)                                   \
    X("interval", PGW_OID_INTERVAL,                                                                \
      "'178956970 years 7 mons 2147483647 days 2562047788:00:54.775807'", NULL)                    \
    X("interval", PGW_OID_INTERVAL,                                                                \
      "'-178956970 years -8 mons -2147483648 days -2562047788:00:54.775807'", NULL)                \
    X("inet", PGW_OID_INET, "'192.168.1.5/24'", NULL)                                              \
    X("inet", PGW_OID_INET, "'10.0.0.1'", NULL)                                                    \
    X("inet", PGW_OID_INET, "'::ffff:1.2.3.4'", NULL)                                              \
    X("inet", PGW_OID_INET, "'2001:db8::1/64'", NULL)                                              \
    X("cidr", PGW_OID_CIDR, "'10.0.0.0/8'", NULL)                                                  \
    X("cidr", PGW_OID_CIDR, "'2001:db8::/32'", NULL)                                               \
    X("cidr", PGW_OID_CIDR, "'::/0'", NULL)                                                        \
    X("macaddr", PGW_OID_MACADDR, "'08:00:2b:01:02:03'", NULL)                                     \
    X("macaddr8", PGW_OID_MACADDR8, "'08:00:2b:01:02:03:04:05'", NULL)                             \
    X("money", PGW_OID_MONEY, "'1234.56'", NULL)                                                   \
    X("money", PGW_OID_MONEY, "'-1.00'", NULL)                                                     \
    X("money", PGW_OID_MONEY, "'-92233720368547758.08'", NULL)                                     \
    X("money", PGW_OID_MONEY, "'92233720368547758.07'", NULL)

/* Array shapes: GOLDEN_DIMS(...) of each dimension. */
#define GOLDEN_DIMS(...) \
    {                    \
        __VA_ARGS__      \
    }

/* X(sql, ndim, dims, lower bounds, element count): a query of one array. */
#define GOLDEN_ARRAYS(X)                                                                           \
    X("SELECT '{-1,-2,NULL}'::int[]", 1, GOLDEN_DIMS(3), GOLDEN_DIMS(1), 3)                        \
    X("SELECT '{\"NULL\",NULL,\"\",a\\,b}'::text[]", 1, GOLDEN_DIMS(4), GOLDEN_DIMS(1), 4)         \
    X("SELECT '[0:2]={1,2,3}'::int[]", 1, GOLDEN_DIMS(3), GOLDEN_DIMS(0), 3)                       \
    X("SELECT '{{1,2},{3,4}}'::int[]", 2, GOLDEN_DIMS(2, 2), GOLDEN_DIMS(1, 1), 4)                 \
    X("SELECT '{}'::int[]", 0, GOLDEN_DIMS(0), GOLDEN_DIMS(0), 0)                                  \
    X("SELECT ARRAY['q\"uote', 'back\\slash', '{brace}', 'com,ma', ' lead', "                      \
      "'trail ', 'tab\tnl\n', 'null']::text[]",                                                    \
      1, GOLDEN_DIMS(8), GOLDEN_DIMS(1), 8)                                                        \
    X("SELECT ARRAY[1.5, -0.0, 'NaN', '-Infinity', 1e-300]::float8[]", 1, GOLDEN_DIMS(5),          \
      GOLDEN_DIMS(1), 5)                                                                           \
    X("SELECT ARRAY[1.50, -123456789012345678901234.5678, 'NaN', 0]::numeric[]", 1,                \
      GOLDEN_DIMS(4), GOLDEN_DIMS(1), 4)                                                           \
    X("SELECT ARRAY['2020-02-29 12:34:56.789', 'infinity', NULL]::timestamp[]", 1, GOLDEN_DIMS(3), \
      GOLDEN_DIMS(1), 3)                                                                           \
    X("SELECT ARRAY['2020-02-29 12:34:56+02', '-infinity']::timestamptz[]", 1, GOLDEN_DIMS(2),     \
      GOLDEN_DIMS(1), 2)                                                                           \
    X("SELECT ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL]::uuid[]", 1, GOLDEN_DIMS(2),     \
      GOLDEN_DIMS(1), 2)                                                                           \
    X("SELECT '{t,f,NULL}'::bool[]", 1, GOLDEN_DIMS(3), GOLDEN_DIMS(1), 3)                         \
    X("SELECT ARRAY['\\x00ff'::bytea, 'a\\\\b\"c'::bytea, ''::bytea]", 1, GOLDEN_DIMS(3),          \
      GOLDEN_DIMS(1), 3)                                                                           \
    X("SELECT '[-1:0][5:5][1:2]={{{1,2}},{{3,NULL}}}'::int8[]", 3, GOLDEN_DIMS(2, 1, 2),           \
      GOLDEN_DIMS(-1, 5, 1), 4)                                                                    \
    X("SELECT '{-32768,32767}'::int2[]", 1, GOLDEN_DIMS(2), GOLDEN_DIMS(1), 2)                     \
    X("SELECT '{1.5,-2}'::float4[]", 1, GOLDEN_DIMS(2), GOLDEN_DIMS(1), 2)                         \
    X("SELECT '{2020-01-01,infinity}'::date[]", 1, GOLDEN_DIMS(2), GOLDEN_DIMS(1), 2)              \
    X("SELECT '{{{{{{7}}}}}}'::int[]", 6, GOLDEN_DIMS(1, 1, 1, 1, 1, 1),                           \
      GOLDEN_DIMS(1, 1, 1, 1, 1, 1), 1)                                                            \
    X("SELECT ARRAY['x','y']::varchar[]", 1, GOLDEN_DIMS(2), GOLDEN_DIMS(1), 2)

/* X(sql, flags): a query of one range and the flags its binary form has. */
#define GOLDEN_RANGES(X)                                                                 \
    X("SELECT '[1,10)'::int4range", PGW_RANGE_LB_INC)                                    \
    X("SELECT 'empty'::int4range", PGW_RANGE_EMPTY)                                      \
    X("SELECT '(,5]'::int4range", PGW_RANGE_LB_INF) /* canonical: (,6) */                \
    X("SELECT '[3,)'::int8range", PGW_RANGE_LB_INC | PGW_RANGE_UB_INF)                   \
    X("SELECT '(,)'::int8range", PGW_RANGE_LB_INF | PGW_RANGE_UB_INF)                    \
    X("SELECT '[1.5,2.25]'::numrange", PGW_RANGE_LB_INC | PGW_RANGE_UB_INC)              \
    X("SELECT '(-1e30,)'::numrange", PGW_RANGE_UB_INF)                                   \
    X("SELECT '[2020-01-01,2020-02-01)'::daterange", PGW_RANGE_LB_INC)                   \
    /* not canonicalised: */                                                             \
    X("SELECT '[-infinity,infinity]'::daterange", PGW_RANGE_LB_INC | PGW_RANGE_UB_INC)   \
    X("SELECT '[2020-01-01 10:00,2020-01-02 11:30:00.5]'::tsrange",                      \
      PGW_RANGE_LB_INC | PGW_RANGE_UB_INC)                                               \
    X("SELECT '(,2020-01-01)'::tsrange", PGW_RANGE_LB_INF)                               \
    X("SELECT '[2020-01-01 10:00+02,)'::tstzrange", PGW_RANGE_LB_INC | PGW_RANGE_UB_INF) \
    X("SELECT 'empty'::tstzrange", PGW_RANGE_EMPTY)

/* X(sql, count): a query of one multirange of count ranges. */
#define GOLDEN_MULTIRANGES(X)                                                        \
    X("SELECT '{[1,3), [5,7)}'::int4multirange", 2)                                  \
    X("SELECT '{}'::int4multirange", 0)                                              \
    X("SELECT '{(,3), [5,)}'::int8multirange", 2)                                    \
    X("SELECT '{[1.5,2), [3,4.25]}'::nummultirange", 2)                              \
    X("SELECT '{[2020-01-01,2020-01-05), [2021-01-01,)}'::datemultirange", 2)        \
    X("SELECT '{[2020-01-01 00:00,2020-01-01 01:00)}'::tsmultirange", 1)             \
    X("SELECT '{(,2020-01-01 00:00+05], [2021-01-01 00:00+00,2022-01-01 00:00+00)}'" \
      "::tstzmultirange",                                                            \
      2)

/* X(sql, nfields): a query of one anonymous record. */
#define GOLDEN_RECORDS(X)                                                         \
    X("SELECT ROW(1, 'a'::text, NULL::text)", 3)                                  \
    X("SELECT ROW(1, 'a b'::text, ''::text, 'q\"u\\o,te()'::text, 2.5::numeric, " \
      "'{1,2}'::int[], true)",                                                    \
      7)

#endif
