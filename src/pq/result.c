/*
 * PGresult: storage, PQmakeEmptyPGresult, PQcopyResult, PQsetResultAttrs,
 * PQsetvalue, PQresultAlloc, PQclear, and every accessor, with libpq's
 * semantics (fe-exec.c): NULL-tolerant, out-of-range numbers reported as a
 * notice through the result's notice receiver.
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/result_internal.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libpq's block size for storage beyond the first allocation, and the size
 * from which an object gets a block of its own. */
#define BLOCK_SIZE     2048
#define OWN_BLOCK_FROM (BLOCK_SIZE / 2)
#define ALIGN          8
#define ALIGN_UP(n)    (((n) + (ALIGN - 1)) & ~(size_t)(ALIGN - 1))
#define HEADER_SIZE    ALIGN_UP(sizeof(PGresult))
#define BLOCK_HEADER   ALIGN_UP(sizeof(pq_block_t))

/* ---------------------------------------------------------------- storage */

PGresult *pq__result_new(const PGconn *conn, ExecStatusType status, size_t extra)
{
    extra = ALIGN_UP(extra);
    if (extra > SIZE_MAX - HEADER_SIZE) return NULL;
    PGresult *res = malloc(HEADER_SIZE + extra);
    if (!res) return NULL;
    memset(res, 0, offsetof(PGresult, err));
    res->status = status;
    res->cur = (char *)res + HEADER_SIZE;
    res->left = extra;
    res->memorySize = HEADER_SIZE + extra;
    if (conn) {
        res->hooks = *pq__conn_notice_hooks(conn);
        res->client_encoding = PQclientEncoding(conn);
        if (res->client_encoding < 0) res->client_encoding = 0;
        /* libpq makes a notice's result without its connection */
        if (status != PGRES_NONFATAL_ERROR && pq__result_inherit_events(res, conn) < 0) {
            free(res);
            return NULL;
        }
    }
    return res;
}

void pq__result_fields(PGresult *res)
{
    res->has_fields = 1;
    memset(&res->err, 0, sizeof res->err);
}

void *pq__result_alloc(PGresult *res, size_t size)
{
    if (!res) return NULL;
    if (size == 0) return res->null_field;
    size_t want = ALIGN_UP(size);
    if (want < size) return NULL;
    if (want <= res->left) {
        void *p = res->cur;
        res->cur += want;
        res->left -= want;
        return p;
    }
    size_t block_size = want >= OWN_BLOCK_FROM ? BLOCK_HEADER + want : BLOCK_SIZE;
    if (block_size < want) return NULL;
    pq_block_t *b = malloc(block_size);
    if (!b) return NULL;
    b->next = res->blocks;
    res->blocks = b;
    res->memorySize += block_size;
    char *p = (char *)b + BLOCK_HEADER;
    if (want < OWN_BLOCK_FROM) {
        /* The rest of the new block serves the next allocations. */
        res->cur = p + want;
        res->left = BLOCK_SIZE - BLOCK_HEADER - want;
    }
    return p;
}

char *pq__result_strndup(PGresult *res, const char *s, size_t n)
{
    if (n == SIZE_MAX) return NULL;
    char *p = pq__result_alloc(res, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void pq__result_internal_notice(const pq_notice_hooks_t *hooks, const char *fmt, ...)
{
    if (!hooks->receiver) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = strlen(msg);
    PGresult *res = pq__result_new(NULL, PGRES_NONFATAL_ERROR, 2 * (n + 1) + 32);
    if (!res) return;
    res->hooks = *hooks;
    pq__result_fields(res);
    res->err.message = pq__result_strndup(res, msg, n);
    res->err.severity = "NOTICE";
    res->err.severity_nonlocal = "NOTICE";
    res->errMsg = pq__result_alloc(res, n + 2);
    if (res->errMsg)
        snprintf(res->errMsg, n + 2, "%s\n", msg);
    else
        res->errMsg = "out of memory\n";
    res->hooks.receiver(res->hooks.receiver_arg, res);
    PQclear(res);
}

const pq_notice_hooks_t *pq__result_notice_hooks(const PGresult *res)
{
    return res ? &res->hooks : pq__conn_notice_hooks(NULL);
}

/* ------------------------------------------------- making and freeing */

PGresult *PQmakeEmptyPGresult(PGconn *conn, ExecStatusType status)
{
    const char *m = NULL;
    switch (status) {
    case PGRES_EMPTY_QUERY:
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_COPY_OUT:
    case PGRES_COPY_IN:
    case PGRES_COPY_BOTH:
    case PGRES_SINGLE_TUPLE:
        break;
    default:
        /* An error status takes the connection's message, as libpq's (in
         * the result's first allocation). */
        if (conn) m = PQerrorMessage(conn);
        if (conn && !m) m = "";
    }
    size_t n = m ? strlen(m) : 0;
    PGresult *res = pq__result_new(conn, status, m ? n + 1 : 0);
    if (!res || !m) return res;
    res->errMsg = pq__result_strndup(res, m, n);
    if (!res->errMsg) res->errMsg = "out of memory\n";
    return res;
}

void PQclear(PGresult *res)
{
    if (!res) return;
    if (res->nevents) pq__result_events_free(res);
    pq_block_t *b = res->blocks;
    while (b) {
        pq_block_t *next = b->next;
        free(b);
        b = next;
    }
    if (res->cells_owned) free(res->cells);
    free(res);
}

void PQfreemem(void *ptr)
{
    free(ptr);
}

/* libpq exports it for programs built before PQfreemem (the header maps
 * the name to PQfreemem). */
#undef PQfreeNotify
void PQfreeNotify(PGnotify *notify);
void PQfreeNotify(PGnotify *notify)
{
    free(notify);
}

void *PQresultAlloc(PGresult *res, size_t nBytes)
{
    return pq__result_alloc(res, nBytes);
}

size_t PQresultMemorySize(const PGresult *res)
{
    return res ? res->memorySize : 0;
}

int PQsetResultAttrs(PGresult *res, int numAttributes, PGresAttDesc *attDescs)
{
    if (!res || res->nfields > 0) return 0;
    if (numAttributes <= 0 || !attDescs) return 1;
    PGresAttDesc *d = pq__result_alloc(res, (size_t)numAttributes * sizeof *d);
    if (!d) return 0;
    memcpy(d, attDescs, (size_t)numAttributes * sizeof *d);
    res->attDescs = d;
    res->nfields = numAttributes;
    res->binary = 1;
    for (int i = 0; i < numAttributes; i++) {
        d[i].name =
            d[i].name ? pq__result_strndup(res, d[i].name, strlen(d[i].name)) : res->null_field;
        if (!d[i].name) return 0;
        if (d[i].format == 0) res->binary = 0;
    }
    return 1;
}

PGresult *pq__result_copy_start(PGconn *conn, ExecStatusType status, int ncols,
                                const int16_t *formats, int format)
{
    PGresult *res = PQmakeEmptyPGresult(conn, status);
    if (!res || ncols <= 0) return res;
    /* Not PQsetResultAttrs: it turns a NULL name into "", and libpq's
     * CopyInResponse / CopyOutResponse columns keep a NULL one. */
    PGresAttDesc *d = pq__result_alloc(res, (size_t)ncols * sizeof *d);
    if (!d) {
        PQclear(res);
        return NULL;
    }
    memset(d, 0, (size_t)ncols * sizeof *d);
    res->binary = 1;
    for (int i = 0; i < ncols; i++) {
        d[i].format = formats ? formats[i] : format;
        if (d[i].format == 0) res->binary = 0;
    }
    res->attDescs = d;
    res->nfields = ncols;
    return res;
}

static int check_field(const PGresult *res, int field_num)
{
    if (!res) return 0;
    if (field_num < 0 || field_num >= res->nfields) {
        pq__result_internal_notice(&res->hooks, "column number %d is out of range 0..%d", field_num,
                                   res->nfields - 1);
        return 0;
    }
    return 1;
}

static int check_cell(const PGresult *res, int tup_num, int field_num)
{
    if (!res) return 0;
    if (tup_num < 0 || tup_num >= res->ntups) {
        pq__result_internal_notice(&res->hooks, "row number %d is out of range 0..%d", tup_num,
                                   res->ntups - 1);
        return 0;
    }
    return check_field(res, field_num);
}

/* Room for one more row of cells (NULLs), as libpq's pqAddTuple. */
static const char *add_row(PGresult *res)
{
    if (res->ntups == INT_MAX) return "PGresult cannot support more than INT_MAX tuples";
    if (res->ntups >= res->cell_rows) {
        int rows =
            res->cell_rows <= INT_MAX / 2 ? (res->cell_rows ? res->cell_rows * 2 : 128) : INT_MAX;
        size_t per_row = (size_t)res->nfields * sizeof(pq_cell_t);
        if (per_row && (size_t)rows > SIZE_MAX / per_row) return "size_t overflow";
        pq_cell_t *cells = malloc(per_row * (size_t)rows + 1);
        if (!cells) return NULL;
        if (res->ntups) memcpy(cells, res->cells, per_row * (size_t)res->ntups);
        if (res->cells_owned) free(res->cells);
        res->memorySize += per_row * (size_t)(rows - res->cell_rows);
        res->cells = cells;
        res->cells_owned = 1;
        res->cell_rows = rows;
    }
    pq_cell_t *row = res->cells + (size_t)res->ntups * (size_t)res->nfields;
    for (int i = 0; i < res->nfields; i++) {
        row[i].len = PQ_NULL_LEN;
        row[i].value = res->null_field;
    }
    res->ntups++;
    return "";
}

int pq__result_add_row(PGresult *res, const pgw_value_t *values)
{
    const char *err = add_row(res);
    if (!err || *err) return 0;
    pq_cell_t *row = res->cells + (size_t)(res->ntups - 1) * (size_t)res->nfields;
    for (int c = 0; c < res->nfields; c++) {
        const pgw_value_t *v = &values[c];
        if (!v->p || v->len < 0) continue; /* NULL, as add_row left it */
        row[c].len = v->len;
        if (v->len == 0) continue; /* the result's "" */
        row[c].value = pq__result_strndup(res, (const char *)v->p, (size_t)v->len);
        if (!row[c].value) {
            res->ntups--;
            return 0;
        }
    }
    return 1;
}

int PQsetvalue(PGresult *res, int tup_num, int field_num, char *value, int len)
{
    if (!res || !check_field(res, field_num)) return 0;
    if (tup_num < 0 || tup_num > res->ntups) {
        pq__result_internal_notice(&res->hooks, "row number %d is out of range 0..%d", tup_num,
                                   res->ntups);
        return 0;
    }
    const char *err = NULL;
    if (tup_num == res->ntups) {
        err = add_row(res);
        if (!err || *err) goto fail;
        err = NULL;
    }
    pq_cell_t *c = &res->cells[(size_t)tup_num * (size_t)res->nfields + (size_t)field_num];
    if (len == PQ_NULL_LEN || !value) {
        c->len = PQ_NULL_LEN;
        c->value = res->null_field;
    } else if (len <= 0) {
        c->len = 0;
        c->value = res->null_field;
    } else {
        char *v = pq__result_strndup(res, value, (size_t)len);
        if (!v) goto fail;
        c->len = len;
        c->value = v;
    }
    return 1;
fail:
    pq__result_internal_notice(&res->hooks, "%s", err ? err : "out of memory");
    return 0;
}

PGresult *PQcopyResult(const PGresult *src, int flags)
{
    if (!src) return NULL;
    PGresult *dest = pq__result_new(NULL, PGRES_TUPLES_OK, 0);
    if (!dest) return NULL;
    dest->client_encoding = src->client_encoding;
    memcpy(dest->cmdStatus, src->cmdStatus, sizeof dest->cmdStatus);
    if ((flags & (PG_COPYRES_ATTRS | PG_COPYRES_TUPLES)) &&
        !PQsetResultAttrs(dest, src->nfields, src->attDescs))
        goto fail;
    if (flags & PG_COPYRES_TUPLES)
        for (int t = 0; t < src->ntups; t++)
            for (int f = 0; f < src->nfields; f++) {
                const pq_cell_t *c = &src->cells[(size_t)t * (size_t)src->nfields + (size_t)f];
                if (!PQsetvalue(dest, t, f, c->value, c->len)) goto fail;
            }
    if (flags & PG_COPYRES_NOTICEHOOKS) dest->hooks = src->hooks;
    if ((flags & PG_COPYRES_EVENTS) && pq__result_copy_events(dest, src) < 0) goto fail;
    return dest;
fail:
    PQclear(dest);
    return NULL;
}

/* -------------------------------------------------------------- accessors */

/* libpq exports this table (in ExecStatusType's order) as data: libpq
 * 15's twelve entries, the size programs linked against it copied.
 * PQresStatus names the later PGRES_TUPLES_CHUNK itself. */
char *const pgresStatus[] = {
    "PGRES_EMPTY_QUERY", "PGRES_COMMAND_OK",   "PGRES_TUPLES_OK",      "PGRES_COPY_OUT",
    "PGRES_COPY_IN",     "PGRES_BAD_RESPONSE", "PGRES_NONFATAL_ERROR", "PGRES_FATAL_ERROR",
    "PGRES_COPY_BOTH",   "PGRES_SINGLE_TUPLE", "PGRES_PIPELINE_SYNC",  "PGRES_PIPELINE_ABORTED"};

ExecStatusType PQresultStatus(const PGresult *res)
{
    return res ? res->status : PGRES_FATAL_ERROR;
}

char *PQresStatus(ExecStatusType status)
{
    if (status == PGRES_TUPLES_CHUNK) return "PGRES_TUPLES_CHUNK";
    if ((unsigned)status >= sizeof pgresStatus / sizeof pgresStatus[0])
        return "invalid ExecStatusType code";
    return pgresStatus[status];
}

char *PQresultErrorMessage(const PGresult *res)
{
    return res && res->errMsg ? res->errMsg : "";
}

int PQntuples(const PGresult *res)
{
    return res ? res->ntups : 0;
}

int PQnfields(const PGresult *res)
{
    return res ? res->nfields : 0;
}

int PQbinaryTuples(const PGresult *res)
{
    return res ? res->binary : 0;
}

char *PQfname(const PGresult *res, int field_num)
{
    if (!check_field(res, field_num)) return NULL;
    return res->attDescs ? res->attDescs[field_num].name : NULL;
}

/* field_name as SQL reads an identifier: folded to lower case outside
 * double quotes, "" inside them one quote (libpq does not reject a name
 * quoted only in part: a"B"c is aBc). */
static void fold_identifier(char *s)
{
    char *out = s;
    int quoted = 0;
    for (const char *in = s; *in; in++) {
        char c = *in;
        if (quoted) {
            if (c != '"')
                *out++ = c;
            else if (in[1] == '"')
                *out++ = *++in;
            else
                quoted = 0;
        } else if (c == '"') {
            quoted = 1;
        } else {
            *out++ = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
        }
    }
    *out = '\0';
}

static int find_name(const PGresult *res, const char *name)
{
    for (int i = 0; i < res->nfields; i++)
        if (res->attDescs[i].name && strcmp(name, res->attDescs[i].name) == 0) return i;
    return -1;
}

int PQfnumber(const PGresult *res, const char *field_name)
{
    if (!res || !field_name || !field_name[0] || !res->attDescs) return -1;
    /* A name needing no folding is looked up as it is. */
    if (strpbrk(field_name, "\"ABCDEFGHIJKLMNOPQRSTUVWXYZ") == NULL)
        return find_name(res, field_name);
    char *folded = strdup(field_name);
    if (!folded) return -1;
    fold_identifier(folded);
    int i = find_name(res, folded);
    free(folded);
    return i;
}

Oid PQftable(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].tableid : 0;
}

int PQftablecol(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].columnid : 0;
}

int PQfformat(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].format : 0;
}

Oid PQftype(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].typid : 0;
}

int PQfsize(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].typlen : 0;
}

int PQfmod(const PGresult *res, int field_num)
{
    return check_field(res, field_num) && res->attDescs ? res->attDescs[field_num].atttypmod : 0;
}

char *PQcmdStatus(PGresult *res)
{
    return res ? res->cmdStatus : NULL;
}

char *PQoidStatus(const PGresult *res)
{
    /* libpq hands out a static buffer here (not thread-safe, as libpq's). */
    static char buf[24];
    if (!res || strncmp(res->cmdStatus, "INSERT ", 7) != 0) return "";
    size_t n = strspn(res->cmdStatus + 7, "0123456789");
    if (n > sizeof buf - 1) n = sizeof buf - 1;
    memcpy(buf, res->cmdStatus + 7, n);
    buf[n] = '\0';
    return buf;
}

Oid PQoidValue(const PGresult *res)
{
    if (!res || strncmp(res->cmdStatus, "INSERT ", 7) != 0 || res->cmdStatus[7] < '0' ||
        res->cmdStatus[7] > '9')
        return 0;
    char *end = NULL;
    unsigned long v = strtoul(res->cmdStatus + 7, &end, 10);
    return end && (*end == ' ' || *end == '\0') ? (Oid)v : 0;
}

/* Where the row count starts in tag, "" for a command without one, NULL
 * when the tag is malformed. */
static char *count_of(char *tag)
{
    static const struct {
        const char *prefix;
        size_t len;
    } counted[] = {{"SELECT ", 7}, {"DELETE ", 7}, {"UPDATE ", 7}, {"FETCH ", 6},
                   {"MERGE ", 6},  {"MOVE ", 5},   {"COPY ", 5}};
    char *p = NULL;
    if (strncmp(tag, "INSERT ", 7) == 0) {
        p = strchr(tag + 7, ' '); /* after the OID */
        if (!p) return NULL;
        p++;
    }
    for (size_t i = 0; !p && i < sizeof counted / sizeof counted[0]; i++)
        if (strncmp(tag, counted[i].prefix, counted[i].len) == 0) p = tag + counted[i].len;
    if (!p) return "";
    if (!*p) return NULL;
    for (const char *c = p; *c; c++)
        if (!isdigit((unsigned char)*c)) return NULL;
    return p;
}

char *PQcmdTuples(PGresult *res)
{
    if (!res) return "";
    char *p = count_of(res->cmdStatus);
    if (p) return p;
    pq__result_internal_notice(&res->hooks, "could not interpret result from server: %s",
                               res->cmdStatus);
    return "";
}

static const pq_cell_t *cell(const PGresult *res, int tup_num, int field_num)
{
    return &res->cells[(size_t)tup_num * (size_t)res->nfields + (size_t)field_num];
}

char *PQgetvalue(const PGresult *res, int tup_num, int field_num)
{
    return check_cell(res, tup_num, field_num) ? cell(res, tup_num, field_num)->value : NULL;
}

int PQgetlength(const PGresult *res, int tup_num, int field_num)
{
    if (!check_cell(res, tup_num, field_num)) return 0;
    int len = cell(res, tup_num, field_num)->len;
    return len == PQ_NULL_LEN ? 0 : len;
}

int PQgetisnull(const PGresult *res, int tup_num, int field_num)
{
    if (!check_cell(res, tup_num, field_num)) return 1; /* libpq: pretend it is NULL */
    return cell(res, tup_num, field_num)->len == PQ_NULL_LEN;
}

int PQnparams(const PGresult *res)
{
    return res ? res->nparams : 0;
}

Oid PQparamtype(const PGresult *res, int param_num)
{
    if (!res) return 0;
    if (param_num < 0 || param_num >= res->nparams) {
        pq__result_internal_notice(&res->hooks, "parameter number %d is out of range 0..%d",
                                   param_num, res->nparams - 1);
        return 0;
    }
    return res->paramTypes ? res->paramTypes[param_num] : 0;
}
