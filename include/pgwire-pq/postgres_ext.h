/*
 * libpgwire-pq: the server's externally visible types, as libpq's
 * postgres_ext.h declares them (Oid, pg_int64, the PG_DIAG_* error field
 * codes of PQresultErrorField). ABI-identical to libpq 15's.
 */
#ifndef POSTGRES_EXT_H
#define POSTGRES_EXT_H

/* A server object identifier: an unsigned 32-bit number. */
typedef unsigned int Oid;

#ifdef __cplusplus
#define InvalidOid (Oid(0))
#else
#define InvalidOid ((Oid)0)
#endif

/* The largest Oid (needs <limits.h>). */
#define OID_MAX UINT_MAX

/* An Oid from its decimal text (needs <stdlib.h>). */
#define atooid(x) ((Oid)strtoul((x), NULL, 10))

/* The signed 64-bit integer of the large-object API (lo_lseek64 ...):
 * libpq's pg_config_ext.h names it PG_INT64_TYPE. */
#ifndef PG_INT64_TYPE
#define PG_INT64_TYPE long int
#endif
typedef PG_INT64_TYPE pg_int64;

/* The fields of a server error or notice, by their wire code: the
 * fieldcode argument of PQresultErrorField. */
#define PG_DIAG_SEVERITY              'S'
#define PG_DIAG_SEVERITY_NONLOCALIZED 'V'
#define PG_DIAG_SQLSTATE              'C'
#define PG_DIAG_MESSAGE_PRIMARY       'M'
#define PG_DIAG_MESSAGE_DETAIL        'D'
#define PG_DIAG_MESSAGE_HINT          'H'
#define PG_DIAG_STATEMENT_POSITION    'P'
#define PG_DIAG_INTERNAL_POSITION     'p'
#define PG_DIAG_INTERNAL_QUERY        'q'
#define PG_DIAG_CONTEXT               'W'
#define PG_DIAG_SCHEMA_NAME           's'
#define PG_DIAG_TABLE_NAME            't'
#define PG_DIAG_COLUMN_NAME           'c'
#define PG_DIAG_DATATYPE_NAME         'd'
#define PG_DIAG_CONSTRAINT_NAME       'n'
#define PG_DIAG_SOURCE_FILE           'F'
#define PG_DIAG_SOURCE_LINE           'L'
#define PG_DIAG_SOURCE_FUNCTION       'R'

#endif
