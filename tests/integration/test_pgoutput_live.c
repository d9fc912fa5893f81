/*
 * The pgoutput decoder against the real server, without a replication
 * connection: a publication and a temporary logical slot with pgoutput on
 * a table with a column of many built-in types; inserts, updates (default
 * replica identity and FULL, an unchanged TOASTed value, a key change),
 * deletes and a truncate are read back as the server's pgoutput bytes with
 * pg_logical_slot_peek_binary_changes, in text and in binary mode, and
 * every decoded tuple must equal the source row read back with a query
 * (byte for byte in its format, and through the same typed decoders). A
 * large transaction is read streamed (proto_version 2, streaming on).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h, through pgclient.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pgclient.h"
#include "pgoutput_check.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/replication.h"

static pgw_client_t *db;
/* The client's registry, with the table's domain and enum loaded: the
 * decoder resolves through it as the result accessors do. */
static pgw_type_registry_t *reg;
static char slot[64];

static const char *const create_sql =
    "DROP TABLE IF EXISTS pgo_t; DROP PUBLICATION IF EXISTS pgo_pub;"
    "DROP DOMAIN IF EXISTS pgo_dom; DROP TYPE IF EXISTS pgo_mood;"
    "CREATE DOMAIN pgo_dom AS int4 CHECK (VALUE > 0);"
    "CREATE TYPE pgo_mood AS ENUM ('sad', 'happy');"
    "CREATE TABLE pgo_t (id int4 PRIMARY KEY, c_bool bool, c_int2 int2, c_int8 int8,"
    " c_oid oid, c_float4 float4, c_float8 float8, c_numeric numeric, c_text text,"
    " c_varchar varchar(20), c_bpchar char(5), c_name name, c_char \"char\", c_bytea bytea,"
    " c_json json, c_jsonb jsonb, c_uuid uuid, c_date date, c_time time, c_timetz timetz,"
    " c_ts timestamp, c_tstz timestamptz, c_interval interval, c_inet inet, c_cidr cidr,"
    " c_macaddr macaddr, c_macaddr8 macaddr8, c_money money, c_int4arr int4[],"
    " c_textarr text[], c_range int4range, c_point point, c_xml xml, c_big text,"
    " c_dom pgo_dom, c_mood pgo_mood);"
    "CREATE PUBLICATION pgo_pub FOR TABLE pgo_t";

/* Three rows: every column set (twice, differently) and all NULL. */
static const char *const insert_sql =
    "INSERT INTO pgo_t VALUES (1, true, -32768, 9000000000, 4000000000, 1.5, -2.25e-300,"
    " '-12345.678900', 'h\xc3\xa9llo', 'var', 'ab', 'nm', 'x', '\\xdeadbeef', '{\"a\": [1, 2]}',"
    " '{\"b\": null}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-02-29', '13:45:30.25',"
    " '13:45:30+02', '2024-02-29 13:45:30.5', '2024-02-29 13:45:30.5+00',"
    " '1 year 2 mons 3 days 04:05:06', '192.168.1.7/24', '10.0.0.0/8', '08:00:2b:01:02:03',"
    " '08:00:2b:01:02:03:04:05', 12.34, '{1,NULL,3}', '{\"a b\",NULL,\"\"}', '[1,10)',"
    " '(1.5,-2)', '<a>x</a>',"
    " (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i), 42, 'happy'),"
    " (2, false, 7, -1, 0, 'NaN', 'Infinity', 'NaN', '', '', '', '', ' ', '\\x', '[]', '[]',"
    " '00000000-0000-0000-0000-000000000000', '-infinity', '00:00', '00:00+00', 'infinity',"
    " '1999-12-31 23:59:59.999999-08', '-1 mons', '::1', '::/0', '00:00:00:00:00:00',"
    " '00:00:00:00:00:00:00:00', -0.01, '{}', '{}', 'empty', '(0,0)', '', 'short', 1, 'sad'),"
    " (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL)";

/* ------------------------------------------------------------- helpers */

static pgw_result_t *query(const char *sql, unsigned flags, const int16_t *formats)
{
    pgw_result_t *res = NULL;
    pgw_request_t req = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    req.flags = flags;
    req.result_formats = formats;
    req.nresult_formats = formats ? 1 : 0;
    int rc = pgw_client_run(db, &req, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    return res;
}

static void exec_ok(const char *sql)
{
    pgw_result_free(query(sql, 0, NULL));
}

static void snapshot(snap_t *s)
{
    static const int16_t binary = PGW_FORMAT_BINARY;
    s->text = query("SELECT * FROM pgo_t ORDER BY id", PGW_Q_TEXT, NULL);
    s->bin = query("SELECT * FROM pgo_t ORDER BY id", 0, &binary);
}

static void snap_free(snap_t *s)
{
    pgw_result_free(s->text);
    pgw_result_free(s->bin);
}

/* The slot's changes since the last consume, as the SQL interface gives
 * them (one pgoutput message per row), decoded and checked. */
static void read_slot(const char *fn, int version, bool binary, bool streaming,
                      const snap_t *before, const snap_t *after, seen_t *seen)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT data FROM pg_logical_slot_%s_binary_changes('%s', NULL, NULL,"
             " 'proto_version', '%d', 'publication_names', 'pgo_pub', 'binary', '%s',"
             " 'messages', 'true'%s)",
             fn, slot, version, binary ? "true" : "false", streaming ? ", 'streaming', 'on'" : "");
    pgw_result_t *res = query(sql, 0, NULL);
    pgw_pgoutput_config_t cfg;
    pgw_pgoutput_config_init(&cfg);
    cfg.proto_version = (uint32_t)version;
    cfg.registry = reg;
    pgw_pgoutput_t *d;
    assert_int_equal(pgw_pgoutput_new(&cfg, &d), 0);
    memset(seen, 0, sizeof *seen);
    uint32_t table = (uint32_t)pgt_client_int8(db, "SELECT 'pgo_t'::regclass::oid::int8");
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        pgw_view_t data;
        assert_int_equal(pgw_result_bytea(res, i, 0, &data), 0);
        pgw_pgoutput_msg_t m;
        int rc = pgw_pgoutput_decode(d, data.p, (size_t)data.len, &m);
        if (rc != 0) fail_msg("message %zu: %s: %s", i, pgw_strerror(rc), pgw_pgoutput_error(d));
        switch (m.kind) {
        case PGW_PGOUTPUT_INSERT:
        case PGW_PGOUTPUT_UPDATE:
        case PGW_PGOUTPUT_DELETE:
            assert_int_equal(m.u.change.relation->oid, table);
            assert_string_equal(m.u.change.relation->relname, "pgo_t");
            if (streaming) assert_int_not_equal(m.xid, 0);
            check_change(reg, &m, before, after, seen);
            break;
        case PGW_PGOUTPUT_TRUNCATE:
            seen->truncates++;
            assert_int_equal(m.u.truncate.nrelids, 1);
            assert_int_equal(pgw_pgoutput_truncate_relid(&m, 0), table);
            break;
        case PGW_PGOUTPUT_MESSAGE:
            if (m.u.message.prefix.len != 3 || memcmp(m.u.message.prefix.p, "pgo", 3) != 0) break;
            seen->messages++;
            assert_int_equal(m.u.message.flags, 1); /* transactional */
            assert_int_equal(m.u.message.content.len, 9);
            assert_memory_equal(m.u.message.content.p, "pay\0load!", 9);
            break;
        case PGW_PGOUTPUT_STREAM_START:
            seen->stream_starts++;
            break;
        case PGW_PGOUTPUT_STREAM_COMMIT:
            seen->stream_commits++;
            break;
        default:
            break;
        }
    }
    pgw_pgoutput_free(d);
    pgw_result_free(res);
}

/* Read the step's changes in text and in binary mode, checking both
 * against the table before and after, then consume them. */
static void step(const snap_t *before, const snap_t *after, seen_t *text, seen_t *bin)
{
    read_slot("peek", 1, false, false, before, after, text);
    read_slot("peek", 1, true, false, before, after, bin);
    if (bin->inserts + bin->updates + bin->deletes > 0) assert_true(bin->binary_values > 0);
    assert_int_equal(text->binary_values, 0);
    seen_t ignored;
    read_slot("get", 1, false, false, before, after, &ignored);
}

/* DML run between a snapshot before and one after, then read. */
static void run_step(const char *dml, seen_t *text, seen_t *bin)
{
    snap_t before, after;
    snapshot(&before);
    exec_ok(dml);
    snapshot(&after);
    step(&before, &after, text, bin);
    snap_free(&before);
    snap_free(&after);
}

/* --------------------------------------------------------------- tests */

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.registry = reg;
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), &cfg), 0);
    pgw_result_t *res = NULL;
    if (pgw_client_exec(db, create_sql, &res) != 0) fail_msg("%s", pgw_result_error(res)->message);
    pgw_result_free(res);
    static const char *const user_types[] = {"pgo_dom", "pgo_mood"};
    assert_int_equal(pgw_client_load_types(db, user_types, 2, NULL), 0);
    /* logical decoding reads only flushed WAL: each commit flushed before
     * it returns, so the slot has it when the next statement reads */
    exec_ok("SET synchronous_commit = on");
    snprintf(slot, sizeof slot, "pgo_slot_%ld", (long)getpid());
    char sql[256];
    /* temporary: dropped with this session, whatever happens */
    snprintf(sql, sizeof sql, "SELECT pg_create_logical_replication_slot('%s', 'pgoutput', true)",
             slot);
    exec_ok(sql);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_result_t *res = NULL;
    pgw_client_exec(db,
                    "DROP PUBLICATION IF EXISTS pgo_pub; DROP TABLE IF EXISTS pgo_t;"
                    " DROP DOMAIN IF EXISTS pgo_dom; DROP TYPE IF EXISTS pgo_mood",
                    &res);
    pgw_result_free(res);
    pgw_client_close(db);
    pgw_type_registry_free(reg);
    return 0;
}

/* Inserts, updates, deletes and a truncate, in text and binary mode. */
static void test_changes(void **state)
{
    (void)state;
    seen_t t, b;
    run_step(insert_sql, &t, &b);
    assert_int_equal(t.inserts, 3);
    assert_int_equal(b.inserts, 3);

    /* default replica identity: no old tuple; c_big was not touched and
     * is TOASTed: unchanged */
    run_step("UPDATE pgo_t SET c_text = c_text || '!', c_int8 = c_int8 + 1 WHERE id = 1", &t, &b);
    assert_int_equal(t.updates, 1);
    assert_int_equal(t.old_key + t.old_full, 0);
    assert_int_equal(t.unchanged, 1);
    assert_int_equal(b.unchanged, 1);

    /* a key change sends the old key */
    run_step("UPDATE pgo_t SET id = 10 WHERE id = 2", &t, &b);
    assert_int_equal(t.updates, 1);
    assert_int_equal(t.old_key, 1);
    assert_int_equal(b.old_key, 1);
    run_step("DELETE FROM pgo_t WHERE id = 3", &t, &b);
    assert_int_equal(t.deletes, 1);
    assert_int_equal(t.old_key, 1);

    /* REPLICA IDENTITY FULL: the whole old row */
    exec_ok("ALTER TABLE pgo_t REPLICA IDENTITY FULL");
    run_step("UPDATE pgo_t SET c_int2 = 8, c_float4 = -0.5 WHERE id IN (1, 10)", &t, &b);
    assert_int_equal(t.updates, 2);
    assert_int_equal(t.old_full, 2);
    assert_int_equal(b.old_full, 2);
    run_step("DELETE FROM pgo_t WHERE id = 10", &t, &b);
    assert_int_equal(t.deletes, 1);
    assert_int_equal(b.old_full, 1);
    exec_ok("ALTER TABLE pgo_t REPLICA IDENTITY DEFAULT");

    /* option messages: a transactional message, bytes as emitted */
    run_step("SELECT pg_logical_emit_message(true, 'pgo', '\\x706179006c6f616421'::bytea)", &t, &b);
    assert_int_equal(t.messages, 1);
    assert_int_equal(b.messages, 1);

    run_step("TRUNCATE pgo_t", &t, &b);
    assert_int_equal(t.truncates, 1);
    assert_int_equal(b.truncates, 1);
}

/* A transaction larger than logical_decoding_work_mem, read streamed
 * (proto_version 2, streaming on): it arrives whole, inside stream
 * blocks, ended by a Stream Commit. */
static void test_streamed(void **state)
{
    (void)state;
    exec_ok("TRUNCATE pgo_t");
    seen_t ignored;
    snap_t empty;
    snapshot(&empty);
    read_slot("get", 1, false, false, &empty, &empty, &ignored);
    snap_free(&empty);

    exec_ok("SET logical_decoding_work_mem = '64kB'");
    exec_ok("INSERT INTO pgo_t (id, c_text, c_int8, c_numeric) SELECT i, repeat('x', i % 50), "
            "i::int8 * 1000000007, i / 7.0 FROM generate_series(1, 5000) i");
    snap_t after;
    snapshot(&after);
    assert_int_equal(pgw_result_nrows(after.text), 5000);
    seen_t t, b, plain;
    read_slot("peek", 2, false, true, &after, &after, &t);
    read_slot("peek", 2, true, true, &after, &after, &b);
    read_slot("peek", 1, false, false, &after, &after, &plain);
    assert_int_equal(t.inserts, 5000);
    assert_int_equal(b.inserts, 5000);
    assert_true(t.stream_starts >= 2);
    assert_int_equal(t.stream_commits, 1);
    assert_int_equal(b.stream_commits, 1);
    assert_int_equal(plain.inserts, 5000);
    assert_int_equal(plain.stream_starts, 0);
    read_slot("get", 1, false, false, &after, &after, &ignored);
    snap_free(&after);
    exec_ok("RESET logical_decoding_work_mem");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes),
        cmocka_unit_test(test_streamed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
