/*
 * The replication stream against the real server, over replication
 * connections: the replication commands as simple queries
 * (IDENTIFY_SYSTEM, CREATE_REPLICATION_SLOT, DROP_REPLICATION_SLOT,
 * TIMELINE_HISTORY); a logical slot streamed with START_REPLICATION
 * (CopyBoth) and decoded with the pgoutput decoder, every change compared
 * with the source rows read back with a query, in text and in binary mode;
 * a large transaction streamed (streaming on) arriving whole; a confirmed
 * LSN that moves the slot's confirmed_flush_lsn exactly that far; a
 * walsender killed mid-stream and the stream resumed, losing nothing and
 * repeating exactly what followed the last confirmation; physical
 * START_REPLICATION's raw WAL, and hot standby feedback moving a physical
 * slot's xmin.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h, through pgclient.h */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pgclient.h"
#include "pgoutput_check.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/replication.h"

static pgw_client_t *db;

/*
 * A column of every built-in type of the type registry
 * (PGW_BUILTIN_TYPES) that a table can hold, several arrays (one of box,
 * whose delimiter is ';', one two-dimensional with bounds that are not 1),
 * one TOASTed text (c_big, the only column stored out of line: the others
 * stay small so that the unchanged-TOAST count below is exactly 1). Left
 * out, with test_every_type checking that nothing else is:
 *   unknown, record, cstring: pseudo-types, no column can have them;
 *   gtsvector: an index-internal type whose input function rejects every
 *     value, so no row can hold one;
 *   aclitem: no binary send function, so the binary read-back query
 *     (SELECT * in binary) could not be asked; pgoutput sends it as text
 *     even in binary mode.
 * PostgreSQL's other internal types (pg_node_tree, pg_ndistinct,
 * pg_dependencies, pg_mcv_list, pg_brin_*_summary) are not in the registry
 * and reject input too.
 */
static const char *const create_sql =
    "DROP PUBLICATION IF EXISTS rs_pub; DROP TABLE IF EXISTS rs_t, rs_r;"
    "CREATE TABLE rs_t (id int4 PRIMARY KEY, c_bool bool, c_int2 int2, c_int8 int8,"
    " c_float8 float8, c_numeric numeric, c_text text, c_bpchar char(4), c_bytea bytea,"
    " c_jsonb jsonb, c_uuid uuid, c_date date, c_ts timestamp, c_tstz timestamptz,"
    " c_interval interval, c_inet inet, c_int4arr int4[], c_textarr text[], c_range int4range,"
    " c_char \"char\", c_name name, c_int2vector int2vector, c_regproc regproc, c_oid oid,"
    " c_tid tid, c_xid xid, c_cid cid, c_oidvector oidvector, c_json json, c_xml xml,"
    " c_point point, c_lseg lseg, c_path path, c_box box, c_polygon polygon, c_line line,"
    " c_cidr cidr, c_float4 float4, c_circle circle, c_macaddr8 macaddr8, c_money money,"
    " c_macaddr macaddr, c_varchar varchar(10), c_time time, c_timetz timetz, c_bit bit(4),"
    " c_varbit varbit, c_refcursor refcursor, c_regprocedure regprocedure, c_regoper regoper,"
    " c_regoperator regoperator, c_regclass regclass, c_regtype regtype,"
    " c_txid_snapshot txid_snapshot, c_pg_lsn pg_lsn, c_tsvector tsvector, c_tsquery tsquery,"
    " c_regconfig regconfig, c_regdictionary regdictionary, c_jsonpath jsonpath,"
    " c_regnamespace regnamespace, c_regrole regrole, c_regcollation regcollation,"
    " c_numrange numrange, c_tsrange tsrange, c_tstzrange tstzrange, c_daterange daterange,"
    " c_int8range int8range, c_int4multirange int4multirange, c_nummultirange nummultirange,"
    " c_tsmultirange tsmultirange, c_tstzmultirange tstzmultirange,"
    " c_datemultirange datemultirange, c_int8multirange int8multirange,"
    " c_pg_snapshot pg_snapshot, c_xid8 xid8, c_float8arr float8[], c_numericarr numeric[],"
    " c_boolarr bool[], c_byteaarr bytea[], c_datearr date[], c_tstzarr timestamptz[],"
    " c_uuidarr uuid[], c_jsonbarr jsonb[], c_inetarr inet[], c_boxarr box[],"
    " c_int8rangearr int8range[], c_int4arr2d int4[], c_varchararr varchar[],"
    " c_timetzarr timetz[], c_big text);"
    "CREATE TABLE rs_r (id int4 PRIMARY KEY);"
    "CREATE PUBLICATION rs_pub FOR TABLE rs_t, rs_r";

/* Rows 1 and 2 with a value in every column (edge values in row 2), row 3
 * with NULL in every column but id: one transaction. */
static const char *const insert_sql =
    "INSERT INTO rs_t VALUES (1, true, -32768, 9000000000, -2.25e-300, '-12345.678900',"
    " 'h\xc3\xa9llo', 'ab', '\\xdeadbeef', '{\"b\": [1, null]}',"
    " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-02-29', '2024-02-29 13:45:30.5',"
    " '2024-02-29 13:45:30.5+00', '1 year 2 mons 3 days 04:05:06', '192.168.1.7/24',"
    " '{1,NULL,3}', '{\"a b\",NULL,\"\"}', '[1,10)',"
    " 'x', 'a_name', '1 2 -3', 'now', 4294967295, '(4294967295,65535)', '4294967295', '7',"
    " '1 4294967295', '{\"a\": [1, 2.50, \"x\"]}', '<a b=\"1\">t&amp;x</a>', '(1.5,-2)',"
    " '[(0,0),(1,1)]', '[(0,0),(1,1),(2,0)]', '(1,1),(0,0)', '((0,0),(1,1),(1,0))',"
    " '{1,-1,0}', '10.0.0.0/8', 3.25, '<(1,2),3>', '08:00:2b:01:02:03:04:05', 12.34,"
    " '08:00:2b:01:02:03', 'v', '13:45:30.123456', '13:45:30.5+05:30', B'1010', B'110',"
    " 'cur', 'sum(int4)', '=(int4,int4)'::regoperator::regoper, '+(int4,int4)', 'pg_class',"
    " 'int4', '10:20:10,14,15', '16/B374D848', 'a fat cat:2A sat', 'fat & (rat | cat)',"
    " 'english', 'simple', '$.a[*] ? (@ > 1)', 'pg_catalog', 'pg_monitor', '\"C\"',"
    " '[1.5,2.5]', '[2024-01-01 00:00,2024-01-02 00:00)', '[2024-01-01 00:00+00,infinity)',"
    " '[2024-01-01,2024-02-01)', '[1,9000000000)', '{[1,3),[5,7)}', '{[1.5,2.5]}',"
    " '{[2024-01-01,2024-01-02)}', '{[2024-01-01 00:00+00,2024-01-02 00:00+00)}',"
    " '{[2024-01-01,2024-01-05),[2024-02-01,)}', '{[1,2)}', '10:20:10,14,15',"
    " '18446744073709551615', '{1.5,NaN,-Infinity}', '{1.10,NULL,-3}', '{t,f,NULL}',"
    " '{\"\\\\x00ff\",NULL}', '{2024-02-29,infinity}', '{\"2024-02-29 13:45:30+00\"}',"
    " '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', ARRAY['{\"a\": 1}'::jsonb, NULL],"
    " '{10.0.0.1,::1/128}', '{(1,1),(0,0);(2,2),(1,1)}', '{\"[1,2)\",empty}',"
    " '[0:1][1:2]={{1,2},{3,4}}', '{a,\"b,c\"}', '{13:45:30+02}',"
    " (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i)),"
    " (2, false, 7, -1, 'Infinity', 'NaN', '', '', '\\x', '[]',"
    " '00000000-0000-0000-0000-000000000000', '-infinity', 'infinity',"
    " '1999-12-31 23:59:59.999999-08', '-1 mons', '::1', '{}', '{}', 'empty',"
    " 'A', '', '', '-', 0, '(0,1)', '0', '0', '', 'null', '', '(0,0)', '[(0,0),(0,0)]',"
    " '((0,0),(1,1))', '(0,0),(0,0)', '((0,0))', '{0,1,0}', '2001:db8::/32', 'NaN',"
    " '<(0,0),0>', '00:00:00:00:00:00:00:00', -0.01, '00:00:00:00:00:00', '', '24:00:00',"
    " '00:00:00-12', B'0000', B'', '', 'now()', '=(int4,int4)'::regoperator::regoper,"
    " '-(int8,int8)', 'pg_type', 'text[]', '1:1:', '0/0', '', 'sat', 'simple', 'english_stem',"
    " '$', 'public', 'pg_read_all_data', '\"POSIX\"', '(,)', 'empty', 'empty',"
    " '(,2024-01-01]', 'empty', '{}', '{}', '{}', '{}', '{}', '{}', '1:1:', '0', '{}', '{}',"
    " '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', 'short');"
    "INSERT INTO rs_t (id) VALUES (3)";

/* The registry's types test_every_type does not want a column of (why:
 * create_sql's comment). */
static const char *const types_left_out[] = {"unknown", "aclitem", "record", "cstring",
                                             "gtsvector"};

/* ------------------------------------------------------------- helpers */

static pgw_result_t *query(pgw_client_t *c, const char *sql, unsigned flags, bool binary)
{
    static const int16_t bin = PGW_FORMAT_BINARY;
    pgw_result_t *res = NULL;
    pgw_request_t req = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    req.flags = flags;
    req.result_formats = binary ? &bin : NULL;
    req.nresult_formats = binary ? 1 : 0;
    int rc = pgw_client_run(c, &req, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    return res;
}

/* A simple query (a replication command) that must succeed. */
static pgw_result_t *simple(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    return res;
}

/* A replication connection (mode: database or true) with the server
 * options given (NULL: none). */
static pgw_client_t *repl_open_with(const char *mode, const char *options)
{
    char ci[1024], extra[256];
    snprintf(extra, sizeof extra, "replication=%s%s%s%s", mode, options ? " options='" : "",
             options ? options : "", options ? "'" : "");
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, extra), NULL);
    if (rc != 0) fail_msg("replication connection: %s", pgw_strerror(rc));
    return c;
}

static pgw_client_t *repl_open(const char *mode)
{
    return repl_open_with(mode, NULL);
}

static uint64_t parse_lsn(const char *s)
{
    unsigned hi = 0, lo = 0;
    if (sscanf(s, "%X/%X", &hi, &lo) != 2) fail_msg("not an LSN: %s", s);
    return (uint64_t)hi << 32 | lo;
}

static void text_cell(const pgw_result_t *r, size_t row, size_t col, char *out, size_t n)
{
    pgw_str_t s;
    assert_int_equal(pgw_result_text(r, row, col, &s), 0);
    assert_true(s.len < n);
    memcpy(out, s.p, s.len);
    out[s.len] = '\0';
}

static void create_slot(pgw_client_t *rc, const char *name)
{
    char sql[256];
    /* a slot left by an earlier failed run */
    snprintf(sql, sizeof sql,
             "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots"
             " WHERE slot_name = '%s'",
             name);
    pgt_client_int8(db, sql);
    snprintf(sql, sizeof sql, "CREATE_REPLICATION_SLOT %s LOGICAL pgoutput (SNAPSHOT 'nothing')",
             name);
    pgw_result_free(simple(rc, sql));
}

static void drop_slot(pgw_client_t *rc, const char *name)
{
    char sql[256];
    snprintf(sql, sizeof sql, "DROP_REPLICATION_SLOT %s WAIT", name);
    pgw_result_free(simple(rc, sql));
}

static void slot_name(char *out, size_t n, const char *what)
{
    snprintf(out, n, "rs_%s_%ld", what, (long)getpid());
}

/* The slot's confirmed_flush_lsn as an integer (0 when NULL). */
static uint64_t confirmed_flush(const char *slot)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT coalesce((confirmed_flush_lsn - '0/0')::int8, 0) FROM pg_replication_slots"
             " WHERE slot_name = '%s'",
             slot);
    return (uint64_t)pgt_client_int8(db, sql);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Wait (up to a minute) until the slot's confirmed_flush_lsn is lsn. */
static void wait_confirmed(const char *slot, uint64_t lsn)
{
    for (int i = 0; i < 600 && confirmed_flush(slot) != lsn; i++)
        sleep_ms(100);
    assert_int_equal(confirmed_flush(slot), lsn);
}

/* ------------------------------------------------------ a stream reader */

typedef struct reader {
    pgw_client_repl_t *r;
    pgw_pgoutput_t *d;
    pgw_pgoutput_msg_t m;
} reader_t;

static void reader_start(reader_t *rd, pgw_client_t *rc, const char *sql, uint32_t version)
{
    assert_int_equal(pgw_client_repl_start(rc, sql, 100, &rd->r), 0);
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.proto_version = version;
    assert_int_equal(pgw_pgoutput_new(&cfg, &rd->d), 0);
}

/* The next pgoutput message into rd->m (views valid until the next call);
 * fails the test if none comes within a minute. */
static void reader_next(reader_t *rd)
{
    pgw_repl_xlog_t x;
    int rc = pgw_client_repl_next(rd->r, 60000, &x);
    if (rc != 0) {
        const pgw_result_t *res = pgw_client_repl_result(rd->r);
        fail_msg("stream: %s %s", pgw_strerror(rc),
                 res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
    }
    rc = pgw_pgoutput_decode(rd->d, x.data, x.len, &rd->m);
    if (rc != 0) fail_msg("decode: %s: %s", pgw_strerror(rc), pgw_pgoutput_error(rd->d));
}

static void reader_stop(reader_t *rd)
{
    assert_int_equal(pgw_client_repl_stop(rd->r), 0);
    /* PostgreSQL 15's logical walsender ends with "COPY 0", then the
     * command's own tag */
    const pgw_result_t *res = pgw_client_repl_result(rd->r);
    while (pgw_result_next(res))
        res = pgw_result_next(res);
    assert_string_equal(pgw_result_command_tag(res), "START_REPLICATION");
    pgw_client_repl_free(rd->r);
    pgw_pgoutput_free(rd->d);
}

/* ------------------------------------------------ checking the changes */

static void snapshot(snap_t *s)
{
    s->text = query(db, "SELECT * FROM rs_t ORDER BY id", PGW_Q_TEXT, false);
    s->bin = query(db, "SELECT * FROM rs_t ORDER BY id", 0, true);
}

static void snap_free(snap_t *s)
{
    pgw_result_free(s->text);
    pgw_result_free(s->bin);
}

/* The next transaction with changes, checked against the table before and
 * after it; its Commit's end_lsn in *end. */
static void read_txn(reader_t *rd, const snap_t *before, const snap_t *after, seen_t *seen,
                     uint64_t *end)
{
    memset(seen, 0, sizeof *seen);
    for (;;) {
        reader_next(rd);
        const pgw_pgoutput_msg_t *m = &rd->m;
        switch (m->kind) {
        case PGW_PGOUTPUT_INSERT:
        case PGW_PGOUTPUT_UPDATE:
        case PGW_PGOUTPUT_DELETE:
            assert_string_equal(m->u.change.relation->relname, "rs_t");
            check_change(NULL, m, before, after, seen);
            break;
        case PGW_PGOUTPUT_TRUNCATE:
            seen->truncates++;
            break;
        case PGW_PGOUTPUT_COMMIT:
            *end = m->u.commit.end_lsn;
            if (seen->inserts + seen->updates + seen->deletes + seen->truncates) return;
            break;
        default:
            break;
        }
    }
}

/* ---------------------------------------------------------------- tests */

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    db = pgt_client_open();
    pgt_client_exec_ok(db, create_sql);
    pgt_client_exec_ok(db, "SET synchronous_commit = on");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_result_t *res = NULL;
    pgw_client_exec(db, "DROP PUBLICATION IF EXISTS rs_pub; DROP TABLE IF EXISTS rs_t, rs_r", &res);
    pgw_result_free(res);
    pgw_client_close(db);
    return 0;
}

/* The replication commands run as simple queries on a replication
 * connection and answer with ordinary results or errors. */
static void test_commands(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open("database");
    pgw_result_t *res = simple(rc, "IDENTIFY_SYSTEM");
    assert_int_equal(pgw_result_nrows(res), 1);
    assert_int_equal(pgw_result_ncols(res), 4);
    assert_string_equal(pgw_result_fname(res, 0), "systemid");
    assert_string_equal(pgw_result_fname(res, 2), "xlogpos");
    char cell[128];
    text_cell(res, 0, 2, cell, sizeof cell);
    assert_true(parse_lsn(cell) > 0);
    text_cell(res, 0, 3, cell, sizeof cell);
    assert_string_equal(cell, pgt_env_required("PGDATABASE"));
    pgw_result_free(res);

    char slot[64], sql[256];
    slot_name(slot, sizeof slot, "cmd");
    snprintf(sql, sizeof sql, "CREATE_REPLICATION_SLOT %s TEMPORARY LOGICAL pgoutput", slot);
    res = simple(rc, sql);
    assert_int_equal(pgw_result_nrows(res), 1);
    text_cell(res, 0, 0, cell, sizeof cell);
    assert_string_equal(cell, slot);
    assert_string_equal(pgw_result_fname(res, 1), "consistent_point");
    text_cell(res, 0, 3, cell, sizeof cell);
    assert_string_equal(cell, "pgoutput");
    pgw_result_free(res);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' AND temporary",
             slot);
    assert_int_equal(pgt_client_int8(db, sql), 1);

    /* timeline 1 has no history file: the server's error, the connection
     * stays usable */
    res = NULL;
    assert_int_equal(pgw_client_exec(rc, "TIMELINE_HISTORY 1", &res), PGW_ESERVER);
    assert_non_null(pgw_result_error(res));
    assert_string_equal(pgw_result_error(res)->sqlstate, "58P01");
    pgw_result_free(res);

    slot_name(slot, sizeof slot, "cmdp");
    create_slot(rc, slot);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s'",
             slot);
    assert_int_equal(pgt_client_int8(db, sql), 1);
    drop_slot(rc, slot);
    assert_int_equal(pgt_client_int8(db, sql), 0);
    pgw_client_close(rc);
}

/* The steps of test_changes: each one transaction. */
typedef struct step {
    const char *sql;
    snap_t before, after;
} step_t;

static void stream_steps(pgw_client_t *rc, const char *slot, step_t *steps, size_t n, bool binary,
                         seen_t *seen)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '1',"
             " publication_names 'rs_pub', binary '%s')",
             slot, binary ? "true" : "false");
    reader_t rd;
    reader_start(&rd, rc, sql, 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t end;
        read_txn(&rd, &steps[i].before, &steps[i].after, &seen[i], &end);
        assert_true(end > 0);
    }
    reader_stop(&rd);
}

/* rs_t has a column of every registry type but types_left_out, and
 * insert_sql's rows 1 and 2 have a value in every column (a VALUES list
 * too short would leave the last columns NULL without a word). */
static void test_every_type(void **state)
{
    (void)state;
#define RS_TYPE(name, typname, oid, ...) {typname, oid},
    static const struct {
        const char *typname;
        unsigned oid;
    } registry[] = {PGW_BUILTIN_TYPES(RS_TYPE, RS_TYPE)};
#undef RS_TYPE
    char sql[256];
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        bool left_out = false;
        for (size_t j = 0; j < sizeof types_left_out / sizeof types_left_out[0]; j++)
            left_out |= strcmp(types_left_out[j], registry[i].typname) == 0;
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM pg_attribute WHERE attrelid = 'rs_t'::regclass"
                 " AND atttypid = %u",
                 registry[i].oid);
        if ((pgt_client_int8(db, sql) > 0) == left_out)
            fail_msg("type %s: %s", registry[i].typname,
                     left_out ? "left out but has a column" : "no column of it in rs_t");
    }
    pgt_client_exec_ok(db, "BEGIN");
    pgt_client_exec_ok(db, insert_sql);
    assert_int_equal(pgt_client_int8(db, "SELECT count(*) FROM rs_t"), 3);
    assert_int_equal(pgt_client_int8(db, "SELECT count(*) FROM rs_t t WHERE t IS NOT NULL"), 2);
    pgt_client_exec_ok(db, "ROLLBACK");
}

/* Inserts, updates (default replica identity and FULL), deletes and a
 * truncate streamed, in text and binary mode. */
static void test_changes(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open("database");
    char slot[64];
    slot_name(slot, sizeof slot, "chg");
    create_slot(rc, slot);
    step_t steps[] = {
        {insert_sql, {0}, {0}},
        /* default identity: no old tuple; c_big untouched: unchanged */
        {"UPDATE rs_t SET c_text = c_text || '!', c_int8 = c_int8 + 1 WHERE id = 1", {0}, {0}},
        {"UPDATE rs_t SET id = 20 WHERE id = 2", {0}, {0}}, /* the old key */
        {"DELETE FROM rs_t WHERE id = 3", {0}, {0}},
        {"ALTER TABLE rs_t REPLICA IDENTITY FULL", {0}, {0}},
        {"UPDATE rs_t SET c_int2 = 8, c_float8 = -0.5 WHERE id IN (1, 20)", {0}, {0}},
        {"DELETE FROM rs_t WHERE id = 20", {0}, {0}},
        {"TRUNCATE rs_t", {0}, {0}},
    };
    enum { NSTEPS = sizeof steps / sizeof steps[0] };
    step_t txns[NSTEPS];
    size_t n = 0;
    for (size_t i = 0; i < NSTEPS; i++) {
        snapshot(&steps[i].before);
        pgt_client_exec_ok(db, steps[i].sql);
        snapshot(&steps[i].after);
        if (strncmp(steps[i].sql, "ALTER", 5) != 0) txns[n++] = steps[i]; /* no changes */
    }
    seen_t t[NSTEPS], b[NSTEPS];
    stream_steps(rc, slot, txns, n, false, t);
    /* nothing confirmed: all again, on a new connection (a walsender ends
     * a second logical START_REPLICATION at once: replication.h) */
    pgw_client_t *rc2 = repl_open("database");
    stream_steps(rc2, slot, txns, n, true, b);
    pgw_client_close(rc2);
    for (int mode = 0; mode < 2; mode++) {
        seen_t *s = mode ? b : t;
        assert_int_equal(s[0].inserts, 3);
        assert_int_equal(s[1].updates, 1);
        assert_int_equal(s[1].old_key + s[1].old_full, 0);
        assert_int_equal(s[1].unchanged, 1);
        assert_int_equal(s[2].old_key, 1);
        assert_int_equal(s[3].deletes, 1);
        assert_int_equal(s[3].old_key, 1);
        assert_int_equal(s[4].updates, 2);
        assert_int_equal(s[4].old_full, 2);
        assert_int_equal(s[5].deletes, 1);
        assert_int_equal(s[5].old_full, 1);
        assert_int_equal(s[6].truncates, 1);
    }
    assert_int_equal(t[0].binary_values, 0);
    assert_true(b[0].binary_values > 0);
    for (size_t i = 0; i < NSTEPS; i++) {
        snap_free(&steps[i].before);
        snap_free(&steps[i].after);
    }
    pgt_client_exec_ok(db, "ALTER TABLE rs_t REPLICA IDENTITY DEFAULT");
    drop_slot(rc, slot);
    pgw_client_close(rc);
}

/* A transaction larger than logical_decoding_work_mem streamed in blocks
 * (proto_version 2, streaming on) arrives whole. */
static void test_streamed(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open_with("database", "-c logical_decoding_work_mem=64kB");
    char slot[64], sql[512];
    slot_name(slot, sizeof slot, "big");
    create_slot(rc, slot);
    enum { N = 5000 };
    pgt_client_exec_ok(db, "INSERT INTO rs_r SELECT i FROM generate_series(1, 5000) i");
    snprintf(sql, sizeof sql,
             "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '2',"
             " publication_names 'rs_pub', streaming 'on')",
             slot);
    reader_t rd;
    reader_start(&rd, rc, sql, 2);
    static bool got[N + 1];
    memset(got, 0, sizeof got);
    int starts = 0, inserts = 0;
    for (bool done = false; !done;) {
        reader_next(&rd);
        switch (rd.m.kind) {
        case PGW_PGOUTPUT_STREAM_START:
            starts++;
            break;
        case PGW_PGOUTPUT_INSERT: {
            int32_t id;
            assert_int_not_equal(rd.m.xid, 0);
            assert_int_equal(pgw_get_int4(&rd.m.u.change.new_tuple.row.values[0], &id), 0);
            assert_true(id >= 1 && id <= N);
            assert_false(got[id]);
            got[id] = true;
            inserts++;
            break;
        }
        case PGW_PGOUTPUT_STREAM_COMMIT:
            done = true;
            break;
        case PGW_PGOUTPUT_COMMIT:
            fail_msg("the transaction was not streamed");
        default:
            break;
        }
    }
    assert_true(starts >= 2);
    assert_int_equal(inserts, N);
    reader_stop(&rd);
    pgt_client_exec_ok(db, "TRUNCATE rs_r");
    drop_slot(rc, slot);
    pgw_client_close(rc);
}

static const char *const resume_start =
    "START_REPLICATION SLOT %s LOGICAL %X/%X (proto_version '1', publication_names 'rs_pub')";

enum { NRES = 15 };

/* What one run of test_confirm_resume received: each transaction (a
 * single insert into rs_r) by id, with its commit end LSN. */
typedef struct run {
    pgw_client_repl_t *r;
    pgw_pgoutput_t *d;
    int id; /* the open transaction's */
    int n;
    int ids[2 * NRES];
    uint64_t ends[2 * NRES];
} run_t;

/* Read until the transaction of id last committed (0: until nothing came
 * for timeout_ms). Returns 0, or the stream's error. */
static int run_read(run_t *u, int last, int timeout_ms)
{
    for (;;) {
        pgw_repl_xlog_t x;
        int rc = pgw_client_repl_next(u->r, timeout_ms, &x);
        if (rc != 0) return rc == PGW_ETIMEDOUT && last == 0 ? 0 : rc;
        pgw_pgoutput_msg_t m;
        assert_int_equal(pgw_pgoutput_decode(u->d, x.data, x.len, &m), 0);
        if (m.kind == PGW_PGOUTPUT_INSERT)
            assert_int_equal(pgw_get_int4(&m.u.change.new_tuple.row.values[0], &u->id), 0);
        if (m.kind != PGW_PGOUTPUT_COMMIT) continue;
        assert_true(u->n < 2 * NRES);
        u->ids[u->n] = u->id;
        u->ends[u->n++] = m.u.commit.end_lsn;
        if (u->id == last) return 0;
    }
}

static void insert_ids(int from, int to)
{
    char sql[128];
    for (int i = from; i <= to; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO rs_r VALUES (%d)", i);
        pgt_client_exec_ok(db, sql);
    }
}

static void run_start(run_t *u, pgw_client_t *rc, const char *slot, uint64_t lsn)
{
    char sql[512];
    memset(u, 0, sizeof *u);
    snprintf(sql, sizeof sql, resume_start, slot, (unsigned)(lsn >> 32), (unsigned)lsn);
    assert_int_equal(pgw_pgoutput_new(NULL, &u->d), 0);
    assert_int_equal(pgw_client_repl_start(rc, sql, 50, &u->r), 0);
}

static void run_free(run_t *u)
{
    pgw_client_repl_free(u->r);
    pgw_pgoutput_free(u->d);
}

/* Confirm an LSN: confirmed_flush_lsn moves exactly there, not further
 * while later transactions arrive unconfirmed; a walsender killed
 * mid-stream; a resume from the confirmed LSN loses nothing and repeats
 * exactly the transactions after it. */
static void test_confirm_resume(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open("database");
    char slot[64], sql[512];
    slot_name(slot, sizeof slot, "res");
    create_slot(rc, slot);
    uint64_t start = confirmed_flush(slot);
    insert_ids(1, 5);
    run_t one, two;
    run_start(&one, rc, slot, 0);
    assert_int_equal(run_read(&one, 5, 60000), 0);
    assert_int_equal(one.n, 5);
    for (int i = 0; i < one.n; i++)
        assert_int_equal(one.ids[i], i + 1);
    /* the status timer (50 ms) reports what arrived as written, nothing
     * as flushed before a confirmation */
    snprintf(sql, sizeof sql,
             "SELECT coalesce((s.write_lsn - '0/0')::int8, 0) * 2"
             " + (coalesce(s.flush_lsn, '0/0') <> '0/0')::int::int8 FROM pg_stat_replication s"
             " JOIN pg_replication_slots r ON r.active_pid = s.pid WHERE r.slot_name = '%s'",
             slot);
    for (int i = 0; i < 1200 && pgt_client_int8(db, sql) == 0; i++)
        assert_int_equal(run_read(&one, 0, 50), 0);
    int64_t reported = pgt_client_int8(db, sql);
    assert_true(reported > 0);
    assert_int_equal(reported % 2, 0); /* no flush LSN */
    /* only the confirmed LSN is reported flushed, however much arrived */
    uint64_t confirmed = one.ends[2];
    assert_true(confirmed > start);
    assert_int_equal(pgw_client_repl_confirm(one.r, confirmed), 0);
    assert_int_equal(pgw_client_repl_confirmed(one.r), confirmed);
    wait_confirmed(slot, confirmed);
    /* more transactions arrive, status updates go out every 50 ms: the
     * slot stays where it was confirmed */
    insert_ids(6, 10);
    assert_int_equal(run_read(&one, 10, 60000), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(run_read(&one, 0, 50), 0);
    assert_int_equal(one.n, 10);
    assert_int_equal(confirmed_flush(slot), confirmed);
    snprintf(sql, sizeof sql,
             "SELECT (s.flush_lsn - '0/0')::int8 FROM pg_stat_replication s"
             " JOIN pg_replication_slots r ON r.active_pid = s.pid WHERE r.slot_name = '%s'",
             slot);
    assert_int_equal((uint64_t)pgt_client_int8(db, sql), confirmed);

    /* the walsender dies mid-stream: the stream ends with its error */
    snprintf(sql, sizeof sql,
             "SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots"
             " WHERE slot_name = '%s'",
             slot);
    assert_int_equal(pgt_client_int8(db, sql), 1);
    int err = run_read(&one, NRES + 1, 60000);
    assert_true(err == PGW_ESERVER || err == PGW_ECONNLOST);
    run_free(&one);
    pgw_client_close(rc);
    insert_ids(11, NRES); /* written while nobody streams */

    /* resume from the last confirmed LSN once the slot is free */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s' AND active", slot);
    for (int i = 0; i < 600 && pgt_client_int8(db, sql) != 0; i++)
        sleep_ms(100);
    assert_int_equal(pgt_client_int8(db, sql), 0);
    rc = repl_open("database");
    run_start(&two, rc, slot, confirmed);
    assert_int_equal(run_read(&two, NRES, 60000), 0);
    /* nothing lost, and the duplicates are exactly those after the
     * confirmed LSN: the second run is 4..NRES, each once, and what the
     * first run received after the confirmed LSN comes again, same LSNs */
    assert_int_equal(two.n, NRES - 3);
    for (int i = 0; i < two.n; i++) {
        assert_int_equal(two.ids[i], i + 4);
        assert_true(two.ends[i] > confirmed);
    }
    for (int i = 3; i < one.n; i++)
        assert_int_equal(one.ends[i], two.ends[one.ids[i] - 4]);
    assert_int_equal(pgw_client_repl_stop(two.r), 0);
    run_free(&two);
    pgt_client_exec_ok(db, "TRUNCATE rs_r");
    drop_slot(rc, slot);
    pgw_client_close(rc);
}

/* With no status timer, the walsender's reply-requested keepalives (every
 * wal_sender_timeout / 2) keep the stream alive: each is answered at once.
 * Unanswered, the walsender would end the stream after 1 s. */
static void test_keepalive_replies(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open_with("database", "-c wal_sender_timeout=1s");
    char slot[64], sql[512];
    slot_name(slot, sizeof slot, "ka");
    create_slot(rc, slot);
    snprintf(sql, sizeof sql, resume_start, slot, 0u, 0u);
    pgw_client_repl_t *r;
    assert_int_equal(pgw_client_repl_start(rc, sql, 0, &r), 0);
    pgw_repl_xlog_t x;
    for (int i = 0; i < 40; i++) /* 4 s at least: several timeouts' worth */
        assert_int_equal(pgw_client_repl_next(r, 100, &x), PGW_ETIMEDOUT);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_replication s JOIN pg_replication_slots r"
             " ON r.active_pid = s.pid WHERE r.slot_name = '%s' AND s.reply_time IS NOT NULL",
             slot);
    assert_int_equal(pgt_client_int8(db, sql), 1);
    assert_int_equal(pgw_client_repl_stop(r), 0);
    pgw_client_repl_free(r);
    drop_slot(rc, slot);
    pgw_client_close(rc);
}

/* Physical START_REPLICATION: raw WAL from the position IDENTIFY_SYSTEM
 * gave. */
static void test_physical(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open("true");
    pgw_result_t *res = simple(rc, "IDENTIFY_SYSTEM");
    char pos[64], sql[128];
    text_cell(res, 0, 2, pos, sizeof pos);
    pgw_result_free(res);
    uint64_t from = parse_lsn(pos);
    snprintf(sql, sizeof sql, "START_REPLICATION PHYSICAL %s", pos);
    pgw_client_repl_t *r;
    assert_int_equal(pgw_client_repl_start(rc, sql, 100, &r), 0);
    pgt_client_exec_ok(db, "INSERT INTO rs_r VALUES (100000); DELETE FROM rs_r");
    pgw_repl_xlog_t x;
    size_t bytes = 0;
    while (bytes == 0) {
        int rcode = pgw_client_repl_next(r, 60000, &x);
        assert_int_equal(rcode, 0);
        assert_true(x.wal_start >= from);
        assert_true(x.wal_end >= x.wal_start);
        bytes += x.len;
    }
    assert_int_equal(pgw_client_repl_stop(r), 0);
    pgw_client_repl_free(r);
    /* the connection is usable after the stream */
    pgw_result_free(simple(rc, "IDENTIFY_SYSTEM"));
    pgw_client_close(rc);
}

/* The slot's xmin and catalog_xmin as "xmin/catalog_xmin" (NULL as -). */
static void slot_xmins(const char *slot, char *out, size_t n)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT coalesce(xmin::text, '-') || '/' || coalesce(catalog_xmin::text, '-')"
             " FROM pg_replication_slots WHERE slot_name = '%s'",
             slot);
    pgw_result_t *res = simple(db, sql);
    assert_int_equal(pgw_result_nrows(res), 1);
    text_cell(res, 0, 0, out, n);
    pgw_result_free(res);
}

/* Wait (up to a minute) until the slot's xmins read want. */
static void wait_xmins(const char *slot, const char *want)
{
    char got[64];
    slot_xmins(slot, got, sizeof got);
    for (int i = 0; i < 600 && strcmp(got, want) != 0; i++) {
        sleep_ms(100);
        slot_xmins(slot, got, sizeof got);
    }
    assert_string_equal(got, want);
}

/* Hot standby feedback on a physical slot: the slot holds back exactly
 * the transaction ids the stream reported (the 32-bit xid of each full
 * id), and a feedback of 0, 0 releases them. */
static void test_hs_feedback(void **state)
{
    (void)state;
    pgw_client_t *rc = repl_open("true");
    char slot[64], sql[256], pos[64], want[64];
    slot_name(slot, sizeof slot, "hs");
    snprintf(sql, sizeof sql,
             "SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots"
             " WHERE slot_name = '%s'",
             slot);
    pgt_client_int8(db, sql);
    snprintf(sql, sizeof sql, "CREATE_REPLICATION_SLOT %s PHYSICAL RESERVE_WAL", slot);
    pgw_result_free(simple(rc, sql));
    pgw_result_t *res = simple(rc, "IDENTIFY_SYSTEM");
    text_cell(res, 0, 2, pos, sizeof pos);
    pgw_result_free(res);
    snprintf(sql, sizeof sql, "START_REPLICATION SLOT %s PHYSICAL %s", slot, pos);
    pgw_client_repl_t *r;
    assert_int_equal(pgw_client_repl_start(rc, sql, 0, &r), 0);
    wait_xmins(slot, "-/-");

    /* two ids the server assigned: the newer as xmin, the older as
     * catalog_xmin, so each field is seen to land where it belongs */
    uint64_t older = (uint64_t)pgt_client_int8(db, "SELECT pg_current_xact_id()::text::int8");
    uint64_t newer = (uint64_t)pgt_client_int8(db, "SELECT pg_current_xact_id()::text::int8");
    assert_true(newer > older);
    assert_int_equal(pgw_client_repl_feedback(r, newer, older), 0);
    snprintf(want, sizeof want, "%u/%u", (unsigned)(uint32_t)newer, (unsigned)(uint32_t)older);
    wait_xmins(slot, want);

    assert_int_equal(pgw_client_repl_feedback(r, 0, 0), 0);
    wait_xmins(slot, "-/-");

    assert_int_equal(pgw_client_repl_stop(r), 0);
    assert_int_equal(pgw_client_repl_feedback(r, newer, older), PGW_EBUSY);
    pgw_client_repl_free(r);
    assert_int_equal(pgw_client_repl_feedback(NULL, 1, 1), PGW_EINVAL);
    snprintf(sql, sizeof sql, "DROP_REPLICATION_SLOT %s WAIT", slot);
    pgw_result_free(simple(rc, sql));
    pgw_client_close(rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),       cmocka_unit_test(test_every_type),
        cmocka_unit_test(test_changes),        cmocka_unit_test(test_streamed),
        cmocka_unit_test(test_confirm_resume), cmocka_unit_test(test_keepalive_replies),
        cmocka_unit_test(test_physical),       cmocka_unit_test(test_hs_feedback),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
