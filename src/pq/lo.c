/*
 * Large objects, as libpq's fe-lobj.c: the lo_* functions call the
 * server's functions of the same names (pg_catalog.lo_open ...) with
 * PQexecParams, binary parameters and results, where libpq uses the
 * fast-path interface; errors land in PQerrorMessage with libpq's texts
 * (psql's \lo_import and \lo_export print them).
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/pq_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LO_BUFSIZE 8192
#define INV_WRITE  0x00020000
#define INV_READ   0x00040000

#define INT4OID  23
#define INT8OID  20
#define OIDOID   26
#define BYTEAOID 17

#pragma weak pq__conn_clear_error

static void clear_error(PGconn *conn)
{
    if (pq__conn_clear_error) pq__conn_clear_error(conn);
}

/* One parameter in binary: a 4- or 8-byte big-endian integer or bytes. */
typedef struct param {
    Oid type;
    const char *value;
    int length;
    char buf[8];
} param_t;

static param_t int4_param(Oid type, uint32_t v)
{
    param_t p = {type, NULL, 4, {0}};
    uint32_t be = htonl(v);
    memcpy(p.buf, &be, 4);
    return p;
}

static param_t int8_param(int64_t v)
{
    param_t p = {INT8OID, NULL, 8, {0}};
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--, u >>= 8)
        p.buf[i] = (char)(u & 0xff);
    return p;
}

/* Runs sql with params; the one-value result, or NULL (the error is in
 * PQerrorMessage). */
static PGresult *call(PGconn *conn, const char *sql, param_t *params, int n)
{
    Oid types[3];
    const char *values[3];
    int lengths[3], formats[3];
    for (int i = 0; i < n; i++) {
        types[i] = params[i].type;
        values[i] = params[i].value ? params[i].value : params[i].buf;
        lengths[i] = params[i].length;
        formats[i] = 1;
    }
    PGresult *res = PQexecParams(conn, sql, n, types, values, lengths, formats, 1);
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && PQnfields(res) == 1 &&
        !PQgetisnull(res, 0, 0))
        return res;
    PQclear(res);
    return NULL;
}

/* The big-endian integer of len bytes a call returned (0 when malformed). */
static int64_t result_int(PGresult *res)
{
    int len = PQgetlength(res, 0, 0);
    const unsigned char *p = (const unsigned char *)PQgetvalue(res, 0, 0);
    if (len != 4 && len != 8) return 0;
    uint64_t v = 0;
    for (int i = 0; i < len; i++)
        v = v << 8 | p[i];
    return len == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

/* sql's integer result, or failed when the call failed. */
static int64_t call_int(PGconn *conn, const char *sql, param_t *params, int n, int64_t failed)
{
    if (!conn) return failed;
    PGresult *res = call(conn, sql, params, n);
    if (!res) return failed;
    int64_t v = result_int(res);
    PQclear(res);
    return v;
}

static int out_of_range(PGconn *conn, const char *fn)
{
    clear_error(conn);
    pq__conn_append_error(conn, "argument of %s exceeds integer range\n", fn);
    return -1;
}

int lo_open(PGconn *conn, Oid lobjId, int mode)
{
    param_t p[] = {int4_param(OIDOID, lobjId), int4_param(INT4OID, (uint32_t)mode)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_open($1, $2)", p, 2, -1);
}

int lo_close(PGconn *conn, int fd)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_close($1)", p, 1, -1);
}

int lo_truncate(PGconn *conn, int fd, size_t len)
{
    if (!conn) return -1;
    if (len > (size_t)INT_MAX) return out_of_range(conn, "lo_truncate");
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), int4_param(INT4OID, (uint32_t)len)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_truncate($1, $2)", p, 2, -1);
}

int lo_truncate64(PGconn *conn, int fd, pg_int64 len)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), int8_param(len)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_truncate64($1, $2)", p, 2, -1);
}

int lo_read(PGconn *conn, int fd, char *buf, size_t len)
{
    if (!conn) return -1;
    if (len > (size_t)INT_MAX) return out_of_range(conn, "lo_read");
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), int4_param(INT4OID, (uint32_t)len)};
    PGresult *res = call(conn, "SELECT pg_catalog.loread($1, $2)", p, 2);
    if (!res) return -1;
    int n = PQgetlength(res, 0, 0);
    if ((size_t)n > len) n = (int)len; /* the server sends at most len */
    memcpy(buf, PQgetvalue(res, 0, 0), (size_t)n);
    PQclear(res);
    return n;
}

int lo_write(PGconn *conn, int fd, const char *buf, size_t len)
{
    if (!conn) return -1;
    if (len > (size_t)INT_MAX) return out_of_range(conn, "lo_write");
    if (len == 0) return 0;
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), {BYTEAOID, buf, (int)len, {0}}};
    return (int)call_int(conn, "SELECT pg_catalog.lowrite($1, $2)", p, 2, -1);
}

int lo_lseek(PGconn *conn, int fd, int offset, int whence)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), int4_param(INT4OID, (uint32_t)offset),
                   int4_param(INT4OID, (uint32_t)whence)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_lseek($1, $2, $3)", p, 3, -1);
}

pg_int64 lo_lseek64(PGconn *conn, int fd, pg_int64 offset, int whence)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd), int8_param(offset),
                   int4_param(INT4OID, (uint32_t)whence)};
    return call_int(conn, "SELECT pg_catalog.lo_lseek64($1, $2, $3)", p, 3, -1);
}

Oid lo_creat(PGconn *conn, int mode)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)mode)};
    return (Oid)call_int(conn, "SELECT pg_catalog.lo_creat($1)", p, 1, InvalidOid);
}

Oid lo_create(PGconn *conn, Oid lobjId)
{
    param_t p[] = {int4_param(OIDOID, lobjId)};
    return (Oid)call_int(conn, "SELECT pg_catalog.lo_create($1)", p, 1, InvalidOid);
}

int lo_tell(PGconn *conn, int fd)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_tell($1)", p, 1, -1);
}

pg_int64 lo_tell64(PGconn *conn, int fd)
{
    param_t p[] = {int4_param(INT4OID, (uint32_t)fd)};
    return call_int(conn, "SELECT pg_catalog.lo_tell64($1)", p, 1, -1);
}

int lo_unlink(PGconn *conn, Oid lobjId)
{
    param_t p[] = {int4_param(OIDOID, lobjId)};
    return (int)call_int(conn, "SELECT pg_catalog.lo_unlink($1)", p, 1, -1);
}

/* ------------------------------------------------------------ files */

/* A file error replacing whatever the cleanup calls left, as libpq. */
static void file_error(PGconn *conn, const char *what, const char *filename, int err)
{
    clear_error(conn);
    pq__conn_append_error(conn, "could not %s file \"%s\": %s\n", what, filename, strerror(err));
}

static Oid import_file(PGconn *conn, const char *filename, Oid oid)
{
    if (!conn) return InvalidOid;
    clear_error(conn);
    int fd = open(filename, O_RDONLY, 0);
    if (fd < 0) {
        pq__conn_append_error(conn, "could not open file \"%s\": %s\n", filename, strerror(errno));
        return InvalidOid;
    }
    Oid lobj_oid = oid == InvalidOid ? lo_creat(conn, INV_READ | INV_WRITE) : lo_create(conn, oid);
    int lobj = lobj_oid == InvalidOid ? -1 : lo_open(conn, lobj_oid, INV_WRITE);
    if (lobj == -1) {
        close(fd);
        return InvalidOid;
    }
    char buf[LO_BUFSIZE];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        if (lo_write(conn, lobj, buf, (size_t)n) != n) {
            /* The transaction failed: lo_close would only hide the error. */
            close(fd);
            return InvalidOid;
        }
    if (n < 0) {
        int err = errno;
        (void)lo_close(conn, lobj);
        close(fd);
        file_error(conn, "read from", filename, err);
        return InvalidOid;
    }
    close(fd);
    return lo_close(conn, lobj) != 0 ? InvalidOid : lobj_oid;
}

Oid lo_import(PGconn *conn, const char *filename)
{
    return import_file(conn, filename, InvalidOid);
}

Oid lo_import_with_oid(PGconn *conn, const char *filename, Oid lobjId)
{
    return import_file(conn, filename, lobjId);
}

int lo_export(PGconn *conn, Oid lobjId, const char *filename)
{
    int lobj = lo_open(conn, lobjId, INV_READ);
    if (lobj == -1) return -1;
    int fd = open(filename, O_CREAT | O_WRONLY | O_TRUNC, S_IRUSR | S_IWUSR);
    if (fd < 0) {
        int err = errno;
        (void)lo_close(conn, lobj);
        file_error(conn, "open", filename, err);
        return -1;
    }
    char buf[LO_BUFSIZE];
    int n;
    while ((n = lo_read(conn, lobj, buf, sizeof buf)) > 0)
        if (write(fd, buf, (size_t)n) != n) {
            int err = errno;
            (void)lo_close(conn, lobj);
            close(fd);
            file_error(conn, "write to", filename, err);
            return -1;
        }
    /* After a failed lo_read the transaction is aborted: no lo_close. */
    int result = n < 0 || lo_close(conn, lobj) != 0 ? -1 : 1;
    if (close(fd) != 0 && result >= 0) {
        file_error(conn, "write to", filename, errno);
        result = -1;
    }
    return result;
}
