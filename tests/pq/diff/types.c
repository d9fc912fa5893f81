/*
 * Every result accessor on every built-in type, in text and in binary
 * (binary values hex-dumped): PQgetvalue, PQgetlength, PQgetisnull, PQftype,
 * PQfmod, PQfsize, PQfformat, PQfname, PQfnumber; PQcmdStatus, PQcmdTuples,
 * PQoidValue of the commands; PQnparams/PQparamtype after PQdescribePrepared,
 * PQdescribePortal; text and binary parameters.
 */
#include "pqdiff.h"

static const char *const values[][2] = {
    {"bool", "true"},
    {"bytea", "'\\x00ff5c27'"},
    {"\"char\"", "'q'"},
    {"name", "'a_name'"},
    {"int8", "-9223372036854775808"},
    {"int2", "-32768"},
    {"int2vector", "'1 2 3'"},
    {"int4", "2147483647"},
    {"regproc", "'int4in'"},
    {"text", "'t\\ext é'"},
    {"oid", "4294967295"},
    {"tid", "'(1,2)'"},
    {"xid", "'42'"},
    {"cid", "'7'"},
    {"oidvector", "'1 2'"},
    {"json", "'{\"a\": [1, 2.5, null]}'"},
    {"xml", "'<a b=\"c\">d</a>'"},
    {"point", "'(1.5,-2)'"},
    {"lseg", "'[(0,0),(1,1)]'"},
    {"path", "'[(0,0),(1,1),(2,0)]'"},
    {"box", "'(1,1),(0,0)'"},
    {"polygon", "'((0,0),(1,1),(1,0))'"},
    {"line", "'{1,-1,0}'"},
    {"float4", "'-1.5e-3'"},
    {"float8", "'1.0000000000000002'"},
    {"float8", "'NaN'"},
    {"float8", "'-Infinity'"},
    {"circle", "'<(0,0),2>'"},
    {"money", "'12.34'"},
    {"macaddr", "'08:00:2b:01:02:03'"},
    {"inet", "'192.168.1.5/24'"},
    {"cidr", "'10.1.0.0/16'"},
    {"inet", "'::ffff:1.2.3.4'"},
    {"macaddr8", "'08:00:2b:01:02:03:04:05'"},
    {"aclitem", "'pgwire=r/pgwire'"},
    {"bpchar", "'ab'"},
    {"char(5)", "'ab'"},
    {"varchar", "'vc'"},
    {"varchar(10)", "'vc'"},
    {"date", "'2024-02-29'"},
    {"date", "'infinity'"},
    {"time", "'13:14:15.123456'"},
    {"time(3)", "'13:14:15.123456'"},
    {"timestamp", "'2024-02-29 13:14:15.5'"},
    {"timestamptz", "'2024-02-29 13:14:15.5+02'"},
    {"interval", "'1 year 2 mons 3 days 04:05:06.7'"},
    {"interval day to second(2)", "'3 days 04:05:06.789'"},
    {"timetz", "'13:14:15+05:30'"},
    {"bit(3)", "B'101'"},
    {"varbit", "B'1101011'"},
    {"numeric", "'-12345678901234567890.000123'"},
    {"numeric(10,2)", "'3.14159'"},
    {"numeric", "'NaN'"},
    {"regprocedure", "'int4in(cstring)'"},
    {"regoper", "'||/'"},
    {"regoperator", "'+(int4,int4)'"},
    {"regclass", "'pg_class'"},
    {"regtype", "'int4'"},
    {"regconfig", "'english'"},
    {"regdictionary", "'simple'"},
    {"regnamespace", "'pg_catalog'"},
    {"regrole", "'pgwire'"},
    {"regcollation", "'\"C\"'"},
    {"uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"},
    {"pg_lsn", "'16/B374D848'"},
    {"tsvector", "'a fat cat:3'"},
    {"tsquery", "'fat & (rat | cat)'"},
    {"txid_snapshot", "'10:20:10,14,15'"},
    {"pg_snapshot", "'10:20:10,14,15'"},
    {"jsonb", "'{\"b\": 1, \"a\": [true]}'"},
    {"jsonpath", "'$.a[*] ? (@ > 1)'"},
    {"int4range", "'[1,10)'"},
    {"numrange", "'(1.5,2.5]'"},
    {"tsrange", "'[2024-01-01,2024-02-01)'"},
    {"tstzrange", "'[2024-01-01 00:00+00,)'"},
    {"daterange", "'empty'"},
    {"int8range", "'[,5]'"},
    {"int4multirange", "'{[1,3), [5,7)}'"},
    {"nummultirange", "'{}'"},
    {"datemultirange", "'{[2024-01-01,2024-01-05)}'"},
    {"int4[]", "'{1,NULL,3}'"},
    {"text[]", "'{\"a b\",\"c\\\\\\\"d\",NULL}'"},
    {"int4[][]", "'{{1,2},{3,4}}'"},
    {"float8[]", "'[0:1]={1.5,2.5}'"},
    {"bool[]", "'{}'"},
    {"record", "ROW(1, 'a', NULL)"},
    {"void", "NULL"},
    {"unknown", "'lit'"},
};

static void one_type(PGconn *conn, const char *type, const char *literal, int format)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s::%s AS \"Val\", NULL::%s AS n, 1 AS \"1\"", literal, type,
             type);
    printf("== %s %s\n", format ? "binary" : "text", sql);
    pqd_show("  ->", PQexecParams(conn, sql, 0, NULL, NULL, NULL, NULL, format));
}

static void params(PGconn *conn)
{
    /* Text and binary parameters, typed and untyped. */
    const Oid types[] = {23, 0, 17, 25};
    const char bin_int[] = {0, 0, 1, 0};
    const char bytes[] = {'a', 0, 'b'};
    const char *vals[] = {bin_int, "untyped", bytes, NULL};
    const int lens[] = {4, 0, 3, 0};
    const int fmts[] = {1, 0, 1, 0};
    for (int format = 0; format < 2; format++) {
        printf("== params, result format %d\n", format);
        pqd_show("  ->", PQexecParams(conn,
                                      "SELECT $1 AS i, $2 AS u, $3 AS b, $4 AS n,"
                                      " pg_typeof($2)::text AS ut",
                                      4, types, vals, lens, fmts, format));
    }
    printf("== bad binary parameter\n");
    const int badlen[] = {2, 0, 3, 0};
    pqd_show("  ->",
             PQexecParams(conn, "SELECT $1 AS i, $2, $3, $4", 4, types, vals, badlen, fmts, 0));
}

static void described(PGconn *conn)
{
    pqd_show("prepare", PQprepare(conn, "st", "SELECT $1::int AS a, $2 || 'x' AS b, $3", 3,
                                  (const Oid[]){0, 25, 1700}));
    pqd_show("describePrepared", PQdescribePrepared(conn, "st"));
    pqd_show("describePrepared missing", PQdescribePrepared(conn, "nope"));
    pqd_show("prepare dml", PQprepare(conn, "ins", "INSERT INTO ty VALUES ($1, $2)", 0, NULL));
    pqd_show("describe dml", PQdescribePrepared(conn, "ins"));
    const char *v[] = {"5", "five"};
    pqd_show("execPrepared", PQexecPrepared(conn, "ins", 2, v, NULL, NULL, 0));
    /* A described statement's results in the format each execution asks */
    pqd_show("execPrepared text",
             PQexecPrepared(conn, "st", 3, (const char *[]){"1", "y", "2.5"}, NULL, NULL, 0));
    pqd_show("execPrepared binary",
             PQexecPrepared(conn, "st", 3, (const char *[]){"1", "y", "2.5"}, NULL, NULL, 1));
    pqd_show("execPrepared text again",
             PQexecPrepared(conn, "st", 3, (const char *[]){"3", "z", "-1"}, NULL, NULL, 0));
    pqd_show("execPrepared wrong count", PQexecPrepared(conn, "st", 1, v, NULL, NULL, 0));
    pqd_exec(conn, "BEGIN");
    pqd_exec(conn, "DECLARE cur CURSOR FOR SELECT a, b FROM ty ORDER BY a");
    pqd_show("describePortal", PQdescribePortal(conn, "cur"));
    pqd_show("describePortal missing", PQdescribePortal(conn, "nocur"));
    pqd_exec(conn, "FETCH 2 FROM cur");
    pqd_exec(conn, "MOVE ALL IN cur");
    pqd_exec(conn, "CLOSE cur");
    pqd_exec(conn, "COMMIT");
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    pqd_exec(conn, "SET TimeZone = 'UTC'");
    pqd_exec(conn, "SET extra_float_digits = 1");
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        for (int format = 0; format < 2; format++)
            one_type(conn, values[i][0], values[i][1], format);
    /* Commands: their status, tuple counts and OIDs. */
    pqd_exec(conn, "CREATE TEMP TABLE ty (a int, b text)");
    pqd_exec(conn, "INSERT INTO ty VALUES (1, 'one'), (2, 'two'), (3, NULL)");
    pqd_exec(conn, "INSERT INTO ty VALUES (4, 'four') RETURNING a, b, ctid");
    pqd_exec(conn, "UPDATE ty SET b = upper(b) WHERE a < 3");
    pqd_exec(conn, "DELETE FROM ty WHERE a = 4");
    pqd_exec(conn, "SELECT * FROM ty ORDER BY a");
    pqd_exec(conn, "SELECT a AS \"A\", a AS a, b AS \"Mixed Case\" FROM ty WHERE false");
    pqd_exec(conn, "CREATE TEMP TABLE ty2 AS SELECT * FROM ty");
    pqd_exec(conn, "SELECT * INTO TEMP ty3 FROM ty");
    pqd_exec(conn, "MERGE INTO ty t USING ty2 s ON t.a = s.a WHEN MATCHED THEN UPDATE SET b = 'm'");
    pqd_exec(conn, "TABLE ty2 LIMIT 1");
    pqd_exec(conn, "VALUES (1, 'x'), (2, 'y')");
    pqd_exec(conn, "SHOW TimeZone");
    pqd_exec(conn, "SET search_path = public");
    params(conn);
    described(conn);
    /* Column lookup rules of PQfnumber. */
    PGresult *r = PQexec(conn, "SELECT 1 AS \"A\", 2 AS a, 3 AS \"b c\", 4 AS \"\"\"q\"");
    const char *names[] = {"A",   "a",   "\"A\"",     "\"a\"", "b c", "\"b c\"",
                           "B C", "\"q", "\"\"\"q\"", "",      "\"",  "\"A"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        printf("fnumber(%s)=%d\n", names[i], PQfnumber(r, names[i]));
    PQclear(r);
    PQfinish(conn);
    return 0;
}
