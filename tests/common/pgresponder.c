/* A tiny in-memory server for sans-IO tests (pgresponder.h). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "pgresponder.h"

#include "pgmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

void pgt_responder_init(pgt_responder_t *r)
{
    memset(r, 0, sizeof *r);
    r->txn = 'I';
}

void pgt_responder_free(pgt_responder_t *r)
{
    pgw_buf_free(&r->out);
}

void pgt_responder_startup(pgw_buf_t *b)
{
    pgt_msg_auth(b, 0, NULL, 0);
    pgt_msg_param_status(b, "client_encoding", "UTF8");
    pgt_msg_param_status(b, "server_version", "15.4");
    pgt_msg_param_status(b, "integer_datetimes", "on");
    pgt_msg_param_status(b, "DateStyle", "ISO, MDY");
    pgt_msg_param_status(b, "IntervalStyle", "postgres");
    pgt_msg_param_status(b, "standard_conforming_strings", "on");
    pgt_msg_backend_key(b, 42, (const uint8_t *)"\1\2\3\4", 4);
    pgt_msg_ready(b, 'I');
}

/* ------------------------------------------------------------- the SQL */

static int is_copy_in(const char *sql)
{
    return strstr(sql, "COPY") && strstr(sql, "FROM STDIN");
}

static int is_copy_out(const char *sql)
{
    return strstr(sql, "COPY") && strstr(sql, "TO STDOUT");
}

/* The rows a statement returns: 1..N for generate_series(1, N), else one. */
static int64_t rows_of(const char *sql)
{
    const char *g = strstr(sql, "generate_series(1, ");
    return g ? strtoll(g + 19, NULL, 10) : 1;
}

static int nparams_of(const char *sql)
{
    int n = 0;
    for (const char *p = strchr(sql, '$'); p; p = strchr(p + 1, '$'))
        if (p[1] >= '1' && p[1] <= '9' && p[1] - '0' > n) n = p[1] - '0';
    return n;
}

static uint32_t param_oid(const char *sql, int i)
{
    char tag[8];
    snprintf(tag, sizeof tag, "$%d::", i);
    const char *p = strstr(sql, tag);
    if (!p) return 20;
    p += strlen(tag);
    if (!strncmp(p, "int4", 4)) return 23;
    if (!strncmp(p, "text", 4)) return 25;
    return 20;
}

/* ------------------------------------------------------------ replies */

static void error(pgt_responder_t *r, const char *code, const char *message)
{
    pgt_msg_error(&r->out, "ERROR", code, message);
    r->skipping = 1;
    if (r->txn == 'T') r->txn = 'E';
}

static void row_desc(pgt_responder_t *r, int binary)
{
    static const char *const names[] = {"v"};
    static const uint32_t oids[] = {20};
    size_t at = pgt_msg_begin(&r->out, 'T');
    pgt_msg_put_i16(&r->out, 1);
    pgt_msg_put_cstr(&r->out, names[0]);
    pgt_msg_put_i32(&r->out, 0);
    pgt_msg_put_i16(&r->out, 0);
    pgt_msg_put_i32(&r->out, (int32_t)oids[0]);
    pgt_msg_put_i16(&r->out, 8);
    pgt_msg_put_i32(&r->out, -1);
    pgt_msg_put_i16(&r->out, (int16_t)binary);
    pgt_msg_end(&r->out, at);
}

static void data_row(pgt_responder_t *r, int64_t v, int binary)
{
    if (binary) {
        pgt_msg_data_row_int8(&r->out, v);
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    const char *values[] = {text};
    pgt_msg_data_row(&r->out, 1, values);
}

static int find_stmt(pgt_responder_t *r, const char *name)
{
    for (int i = 0; i < PGT_RESPONDER_STMTS; i++)
        if (r->stmts[i].name[0] && strcmp(r->stmts[i].name, name) == 0) return i;
    return -1;
}

/* The SQL of a statement ("" the unnamed one), NULL when unknown. */
static const char *stmt_sql(pgt_responder_t *r, const char *name)
{
    if (!name[0]) return r->unnamed_sql;
    int i = find_stmt(r, name);
    return i < 0 ? NULL : r->stmts[i].sql;
}

static void on_parse(pgt_responder_t *r, const uint8_t *b)
{
    const char *name = (const char *)b;
    const char *sql = name + strlen(name) + 1;
    if (!name[0]) {
        snprintf(r->unnamed_sql, sizeof r->unnamed_sql, "%s", sql);
    } else {
        if (find_stmt(r, name) >= 0) {
            error(r, "42P05", "prepared statement already exists");
            return;
        }
        for (int i = 0; i < PGT_RESPONDER_STMTS; i++)
            if (!r->stmts[i].name[0]) {
                snprintf(r->stmts[i].name, sizeof r->stmts[i].name, "%s", name);
                snprintf(r->stmts[i].sql, sizeof r->stmts[i].sql, "%s", sql);
                r->parsed_in_group[i] = 1;
                break;
            }
    }
    pgt_msg(&r->out, '1', NULL, 0);
}

static int portal_slot(const char *name)
{
    return name[0] ? 1 : 0;
}

static void on_bind(pgt_responder_t *r, const uint8_t *b)
{
    const char *portal = (const char *)b;
    const char *stmt = portal + strlen(portal) + 1;
    const uint8_t *p = (const uint8_t *)stmt + strlen(stmt) + 1;
    const char *sql = stmt_sql(r, stmt);
    if (!sql) {
        error(r, "26000", "prepared statement does not exist");
        return;
    }
    if (stmt[0] && r->fail_bind[0] && !r->parsed_in_group[find_stmt(r, stmt)]) {
        char code[6];
        memcpy(code, r->fail_bind, sizeof code);
        r->fail_bind[0] = '\0';
        error(r, code, "cached plan must not change result type");
        return;
    }
    uint16_t nfmt = rd16(p);
    int pfmt = nfmt ? rd16(p + 2) : 0;
    p += 2 + 2 * nfmt;
    uint16_t nparams = rd16(p);
    p += 2;
    int64_t value = 1;
    int has = 0;
    for (uint16_t i = 0; i < nparams; i++) {
        int32_t len = (int32_t)rd32(p);
        p += 4;
        if (i == 0 && len >= 0) {
            has = 1;
            if (pfmt == 1 && len == 8)
                value = (int64_t)((uint64_t)rd32(p) << 32 | rd32(p + 4));
            else if (pfmt == 1 && len == 4)
                value = (int32_t)rd32(p);
            else {
                char text[32] = {0};
                memcpy(text, p, len < 31 ? (size_t)len : 31);
                value = strtoll(text, NULL, 10);
            }
        }
        if (len > 0) p += len;
    }
    uint16_t nres = rd16(p);
    int binary = nres ? rd16(p + 2) == 1 : 0;
    int k = portal_slot(portal);
    snprintf(r->portals[k].name, sizeof r->portals[k].name, "%s", portal);
    snprintf(r->portals[k].sql, sizeof r->portals[k].sql, "%s", sql);
    r->portals[k].param = value;
    r->portals[k].has_param = has;
    r->portals[k].binary = binary;
    r->portals[k].open = 1;
    r->portals[k].next = 1;
    r->portals[k].last = rows_of(sql);
    pgt_msg(&r->out, '2', NULL, 0);
}

static void on_describe(pgt_responder_t *r, const uint8_t *b)
{
    const char *name = (const char *)b + 1;
    if (b[0] == 'S') {
        const char *sql = stmt_sql(r, name);
        if (!sql) {
            error(r, "26000", "prepared statement does not exist");
            return;
        }
        int n = nparams_of(sql);
        uint32_t oids[9];
        for (int i = 0; i < n; i++)
            oids[i] = param_oid(sql, i + 1);
        pgt_msg_param_desc(&r->out, (size_t)n, oids);
        if (is_copy_in(sql) || is_copy_out(sql))
            pgt_msg(&r->out, 'n', NULL, 0);
        else
            row_desc(r, 0);
        return;
    }
    int k = portal_slot(name);
    if (!r->portals[k].open) {
        error(r, "34000", "portal does not exist");
        return;
    }
    if (is_copy_in(r->portals[k].sql) || is_copy_out(r->portals[k].sql))
        pgt_msg(&r->out, 'n', NULL, 0);
    else
        row_desc(r, r->portals[k].binary);
}

static void on_execute(pgt_responder_t *r, const uint8_t *b)
{
    const char *name = (const char *)b;
    uint32_t max = rd32((const uint8_t *)name + strlen(name) + 1);
    int k = portal_slot(name);
    if (!r->portals[k].open) {
        error(r, "34000", "portal does not exist");
        return;
    }
    const char *sql = r->portals[k].sql;
    if (is_copy_in(sql)) {
        pgt_msg(&r->out, 'G', "\0\0\1\0\0", 5);
        r->copy_in = 1;
        r->copy_lines = 0;
        return;
    }
    if (is_copy_out(sql)) {
        pgt_msg(&r->out, 'H', "\0\0\1\0\0", 5);
        for (int i = 0; i < PGT_COPY_OUT_ROWS; i++) {
            char line[32];
            int n = snprintf(line, sizeof line, "%d\n", i);
            pgt_msg(&r->out, 'd', line, (size_t)n);
        }
        pgt_msg(&r->out, 'c', NULL, 0);
        char tag[32];
        snprintf(tag, sizeof tag, "COPY %d", PGT_COPY_OUT_ROWS);
        pgt_msg_command_complete(&r->out, tag);
        return;
    }
    int64_t sent = 0;
    while (r->portals[k].next <= r->portals[k].last && (max == 0 || (uint32_t)sent < max)) {
        int64_t v = r->portals[k].has_param && r->portals[k].last == 1 ? r->portals[k].param
                                                                       : r->portals[k].next;
        data_row(r, v, r->portals[k].binary);
        r->portals[k].next++;
        sent++;
    }
    if (r->portals[k].next <= r->portals[k].last) {
        pgt_msg(&r->out, 's', NULL, 0);
        return;
    }
    char tag[32];
    snprintf(tag, sizeof tag, "SELECT %lld", (long long)sent);
    pgt_msg_command_complete(&r->out, tag);
}

static void on_close(pgt_responder_t *r, const uint8_t *b)
{
    const char *name = (const char *)b + 1;
    if (b[0] == 'S') {
        int i = find_stmt(r, name);
        if (i >= 0) r->stmts[i].name[0] = '\0';
    } else {
        r->portals[portal_slot(name)].open = 0;
    }
    pgt_msg(&r->out, '3', NULL, 0);
}

/* One statement of a simple query. */
static void simple_statement(pgt_responder_t *r, const char *sql)
{
    while (*sql == ' ')
        sql++;
    if (!*sql) return;
    if (!strncmp(sql, "BEGIN", 5)) {
        r->txn = 'T';
        pgt_msg_command_complete(&r->out, "BEGIN");
    } else if (!strncmp(sql, "COMMIT", 6) || !strncmp(sql, "ROLLBACK", 8)) {
        pgt_msg_command_complete(&r->out, r->txn == 'E' || sql[0] == 'R' ? "ROLLBACK" : "COMMIT");
        r->txn = 'I';
    } else if (!strncmp(sql, "DISCARD ALL", 11)) {
        memset(r->stmts, 0, sizeof r->stmts);
        pgt_msg_command_complete(&r->out, "DISCARD ALL");
    } else {
        int64_t n = rows_of(sql);
        row_desc(r, 0);
        for (int64_t i = 1; i <= n; i++)
            data_row(r, i, 0);
        char tag[32];
        snprintf(tag, sizeof tag, "SELECT %lld", (long long)n);
        pgt_msg_command_complete(&r->out, tag);
    }
}

static void on_query(pgt_responder_t *r, const char *sql, size_t len)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), sql);
    for (char *save = NULL, *s = strtok_r(buf, ";", &save); s; s = strtok_r(NULL, ";", &save))
        simple_statement(r, s);
    pgt_msg_ready(&r->out, r->txn);
}

static void answer(pgt_responder_t *r, uint8_t type, const uint8_t *b, size_t len)
{
    r->messages++;
    if (type == 'S') { /* Sync */
        r->skipping = 0;
        r->fail_bind[0] = '\0';
        memset(r->parsed_in_group, 0, sizeof r->parsed_in_group);
        pgt_msg_ready(&r->out, r->txn);
        return;
    }
    if (r->copy_in) {
        if (type == 'd') {
            for (size_t i = 0; i < len; i++)
                r->copy_lines += b[i] == '\n';
        } else if (type == 'c') {
            char tag[32];
            snprintf(tag, sizeof tag, "COPY %llu", (unsigned long long)r->copy_lines);
            pgt_msg_command_complete(&r->out, tag);
            r->copy_in = 0;
        } else if (type == 'f') {
            r->copy_in = 0;
            error(r, "57014", "COPY from stdin failed");
        }
        return;
    }
    if (r->skipping) return;
    switch (type) {
    case 'P':
        on_parse(r, b);
        break;
    case 'B':
        on_bind(r, b);
        break;
    case 'D':
        on_describe(r, b);
        break;
    case 'E':
        on_execute(r, b);
        break;
    case 'C':
        on_close(r, b);
        break;
    case 'Q':
        on_query(r, (const char *)b, len ? len - 1 : 0);
        break;
    default:
        break; /* Flush, Terminate, stray COPY messages */
    }
}

size_t pgt_responder_answer(pgt_responder_t *r, const uint8_t *in, size_t n)
{
    size_t off = 0;
    while (n - off >= 5) {
        uint32_t len = rd32(in + off + 1);
        if (len < 4 || n - off - 1 < len) break;
        answer(r, in[off], in + off + 5, len - 4);
        off += 1 + len;
    }
    return off;
}
