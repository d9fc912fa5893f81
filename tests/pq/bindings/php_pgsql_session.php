<?php
// Debian's PHP pgsql and PDO_PGSQL extensions (php8.2-pgsql, built on
// libpq) through one session of what a PHP program asks of them: queries
// with and without parameters, prepared statements, result metadata,
// errors and their fields, notices, LISTEN/NOTIFY, COPY both ways, the
// asynchronous API (pg_send_* with PQsetnonblocking, PQconsumeInput and
// PQisBusy), large objects, escaping, client encodings, cancel, a reset,
// PDO's prepared statements and failed connects.
//
// Run by run-bindings.sh on libpq and on libpgwire-pq: everything printed
// must be identical. Nothing printed depends on time, process ids or the run.

function out(...$a) { echo implode(" ", array_map(fn($x) => is_null($x) ? "null" : (is_bool($x) ? ($x ? "true" : "false") : (is_array($x) ? json_encode($x) : (string)$x)), $a)), "\n"; }
function section($n) { echo "== $n\n"; }
function flat($s) { return str_replace("\n", "|", (string)$s); }

$c = pg_connect("", PGSQL_CONNECT_FORCE_NEW);
section("info");
out(pg_connection_status($c) === PGSQL_CONNECTION_OK, pg_transaction_status($c), pg_dbname($c) === getenv("PGDATABASE"),
    pg_host($c) === getenv("PGHOST"), pg_port($c), pg_client_encoding($c), pg_parameter_status($c, "integer_datetimes"),
    pg_connection_busy($c));
$v = pg_version($c);
out($v["protocol"], intdiv((int)$v["server"], 1), isset($v["client"]));

section("queries");
$r = pg_query($c, "SELECT 1 AS a, 'x'::text AS b, NULL::int AS c, '\\x00ff'::bytea AS d UNION ALL SELECT 2, 'y', 3, '\\x01'");
out(pg_num_rows($r), pg_num_fields($r), pg_field_name($r, 1), pg_field_type($r, 3), pg_field_type_oid($r, 0),
    pg_field_size($r, 0), pg_field_is_null($r, 0, 2), pg_field_prtlen($r, 0, 1), pg_result_status($r), pg_result_status($r, PGSQL_STATUS_STRING));
out(pg_fetch_all($r));
out(pg_unescape_bytea(pg_fetch_result($r, 0, 3)) === "\x00\xff");
pg_query($c, "CREATE TEMP TABLE t (i int PRIMARY KEY, s text, n numeric, ts timestamptz)");
pg_query($c, "SET TIME ZONE 'UTC'");
$r = pg_query_params($c, "INSERT INTO t VALUES ($1, $2, $3, $4)", [1, "h\u{e9}llo 'q'", "12345678901234567890.123", "2021-03-04 05:06:07.890123+00"]);
out(pg_affected_rows($r), pg_result_status($r, PGSQL_STATUS_STRING), pg_last_oid($r));
out(pg_prepare($c, "ins", 'INSERT INTO t VALUES ($1, $2) RETURNING i * 10') !== false);
for ($i = 2; $i <= 5; $i++) out(pg_fetch_result(pg_execute($c, "ins", [$i, "v$i"]), 0, 0));
out(pg_fetch_all(pg_query($c, "SELECT * FROM t ORDER BY i")));
out(pg_field_table(pg_query($c, "SELECT s FROM t LIMIT 1"), 0));
out(pg_meta_data($c, "pg_catalog.pg_am"));
out(pg_fetch_all(pg_query($c, "SELECT 1 WHERE false")));

section("errors");
foreach (["SELECT 1/0", "SELECT * FROM nosuch", "SELEC 1", "INSERT INTO t VALUES (1)"] as $q) {
    pg_send_query($c, $q);
    $r = pg_get_result($c);
    out(pg_result_error_field($r, PGSQL_DIAG_SQLSTATE), pg_result_error_field($r, PGSQL_DIAG_SEVERITY),
        pg_result_error_field($r, PGSQL_DIAG_MESSAGE_PRIMARY), pg_result_error_field($r, PGSQL_DIAG_STATEMENT_POSITION),
        pg_result_error_field($r, PGSQL_DIAG_CONSTRAINT_NAME), flat(pg_result_error($r)));
    while (pg_get_result($c)) {}
}
$r = @pg_query($c, "SELECT 1/0");
out($r === false, flat(pg_last_error($c)));
pg_query($c, "BEGIN");
@pg_query($c, "SELECT 1/0");
out(pg_transaction_status($c), flat(pg_last_error($c)));
pg_query($c, "ROLLBACK");
out(pg_transaction_status($c));
pg_set_error_verbosity($c, PGSQL_ERRORS_VERBOSE);
@pg_query($c, "SELECT 'x'::int");
out(preg_replace('/\|LOCATION:.*$/', '', flat(pg_last_error($c))));
pg_set_error_verbosity($c, PGSQL_ERRORS_DEFAULT);

section("notices");
pg_query($c, "DO $$ BEGIN RAISE NOTICE 'n1 %', 1; RAISE WARNING 'w2'; END $$");
out(flat(pg_last_notice($c)), pg_last_notice($c, PGSQL_NOTICE_ALL));

section("notify");
pg_query($c, "LISTEN ch");
$c2 = pg_connect("", PGSQL_CONNECT_FORCE_NEW);
pg_query($c2, "NOTIFY ch, 'p1'; NOTIFY ch, 'p2'");
$got = [];
$sock = pg_socket($c);
while (count($got) < 2) {
    $rd = [$sock]; $wr = $ex = null;
    stream_select($rd, $wr, $ex, 1);
    pg_consume_input($c);
    while ($n = pg_get_notify($c, PGSQL_ASSOC)) $got[] = $n["message"] . ":" . ($n["pid"] == pg_get_pid($c2) ? "pid" : "other") . ":" . $n["payload"];
}
out($got);
pg_close($c2);

section("copy");
pg_query($c, "CREATE TEMP TABLE cp (a int, b text)");
out(pg_copy_from($c, "cp", ["1\tone\n", "2\t\\N\n", "3\tth\u{e9}\n"]));
$rows = [];
for ($i = 4; $i <= 20000; $i++) $rows[] = "$i\t" . str_repeat("x", $i % 50) . "\n";
out(pg_copy_from($c, "cp", $rows));
$back = pg_copy_to($c, "cp");
out(count($back), strlen(implode("", $back)), $back[0], $back[2]);
pg_query($c, "COPY cp FROM STDIN");
pg_put_line($c, "1\tok\n");
pg_put_line($c, "\\.\n");
out(pg_end_copy($c));
out(@pg_copy_from($c, "cp", ["bad\trow\n"]), flat(pg_last_error($c)));
out(pg_fetch_result(pg_query($c, "SELECT count(*) FROM cp"), 0, 0));

section("async");
out(pg_connection_busy($c), pg_send_query($c, "SELECT pg_sleep(0.2), 'async'"));
$sock = pg_socket($c);
while (pg_connection_busy($c)) { $rd = [$sock]; $wr = $ex = null; stream_select($rd, $wr, $ex, 1); pg_consume_input($c); }
out(pg_fetch_row(pg_get_result($c)), pg_get_result($c));
pg_set_client_encoding($c, "UTF8");
out(pg_send_query_params($c, 'SELECT $1::int + 1, repeat($2, 100000)', [41, "z"]));
$r = pg_get_result($c);
$row = pg_fetch_row($r);
out($row[0], strlen($row[1]), pg_get_result($c));
out(pg_send_prepare($c, "sp", 'SELECT $1::text || $1'), pg_result_status(pg_get_result($c)), pg_get_result($c));
out(pg_send_execute($c, "sp", ["ab"]), pg_fetch_result(pg_get_result($c), 0, 0), pg_get_result($c));
pg_send_query($c, "SELECT 1; SELECT 2, 3; SELECT 1/0; SELECT 4");
while ($r = pg_get_result($c)) out(pg_result_status($r), pg_num_fields($r) ? pg_fetch_row($r) : null, pg_result_error_field($r, PGSQL_DIAG_SQLSTATE));

section("cancel");
pg_send_query($c, "SELECT pg_sleep(30)");
$probe = pg_connect("", PGSQL_CONNECT_FORCE_NEW);
while (pg_fetch_result(pg_query_params($probe, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep(30)%'", [pg_get_pid($c)]), 0, 0) !== "1") usleep(20000);
pg_close($probe);
// (pg_cancel_query takes the canceled query's results itself)
out(pg_cancel_query($c), pg_get_result($c), flat(pg_last_error($c)));
out(pg_fetch_result(pg_query($c, "SELECT 42"), 0, 0));
pg_query($c, "SET statement_timeout = '100ms'");
@pg_query($c, "SELECT pg_sleep(5)");
out(flat(pg_last_error($c)));
pg_query($c, "RESET statement_timeout");

section("large objects");
pg_query($c, "BEGIN");
$oid = pg_lo_create($c);
$lo = pg_lo_open($c, $oid, "w");
out(pg_lo_write($lo, str_repeat("large ", 1000)));
pg_lo_close($lo);
$lo = pg_lo_open($c, $oid, "r");
out(pg_lo_read($lo, 12), pg_lo_seek($lo, 6), pg_lo_tell($lo), pg_lo_read($lo, 6));
pg_lo_close($lo);
out(pg_lo_unlink($c, $oid));
pg_query($c, "COMMIT");

section("escaping");
out(pg_escape_string($c, "it's \\ x"), pg_escape_literal($c, "it's \\ x"), pg_escape_identifier($c, 'we"ird'),
    pg_escape_bytea($c, "\x00\x01'\\"), bin2hex(pg_unescape_bytea("\\x00ff27")));
out(@pg_escape_literal($c, "\xff\xfe"), flat(pg_last_error($c)));
out(pg_set_client_encoding($c, "LATIN1"), pg_client_encoding($c));
out(bin2hex(pg_fetch_result(pg_query_params($c, 'SELECT $1::text', ["caf\xe9"]), 0, 0)));
pg_set_client_encoding($c, "UTF8");
out(pg_convert($c, "pg_catalog.pg_am", ["oid" => "7", "amname" => "x"]));

section("reset");
$vv = pg_connect("", PGSQL_CONNECT_FORCE_NEW);
out(pg_fetch_result(pg_query_params($c, 'SELECT pg_terminate_backend($1, 60000)', [pg_get_pid($vv)]), 0, 0));
out(@pg_query($vv, "SELECT 1") === false, pg_connection_status($vv) === PGSQL_CONNECTION_BAD);
out(pg_connection_reset($vv), pg_connection_status($vv) === PGSQL_CONNECTION_OK, pg_fetch_result(pg_query($vv, "SELECT 7"), 0, 0));
pg_close($vv);

section("pdo");
$pdo = new PDO("pgsql:", null, null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$st = $pdo->prepare("SELECT :a::int + 1 AS x, :b::text AS y");
$st->execute([":a" => 1, ":b" => "two"]);
out($st->fetchAll(PDO::FETCH_ASSOC), $st->columnCount(), $st->getColumnMeta(0)["native_type"]);
try { $pdo->query("SELECT 1/0"); } catch (PDOException $e) { out($e->getCode(), flat($e->getMessage())); }
$pdo->beginTransaction();
$pdo->exec("CREATE TEMP TABLE pt (a int)");
out($pdo->exec("INSERT INTO pt SELECT generate_series(1, 5)"));
$pdo->rollBack();
out($pdo->quote("it's"), $pdo->getAttribute(PDO::ATTR_SERVER_VERSION) >= "15");
$pdo = null;

section("bad connect");
foreach (["host=/nonexistent port=1", "host=127.0.0.1 port=1", "dbname=nosuch_db_here", "bogus=1"] as $dsn) {
    $x = @pg_connect($dsn, PGSQL_CONNECT_FORCE_NEW);
    out($x === false, flat(error_get_last()["message"] ?? ""));
    error_clear_last();
    // Asynchronously: PQconnectStart fails only when no connect could
    // start; a TCP port that refuses fails at the first poll.
    $x = @pg_connect($dsn, PGSQL_CONNECT_FORCE_NEW | PGSQL_CONNECT_ASYNC);
    if ($x === false) {
        out("async: no connection", flat(error_get_last()["message"] ?? ""));
        error_clear_last();
        continue;
    }
    for ($i = 0; $i < 1000; $i++) {
        $p = pg_connect_poll($x);
        if ($p == PGSQL_POLLING_FAILED || $p == PGSQL_POLLING_OK) break;
        usleep(10000);
    }
    out("async: polled", $p, pg_connection_status($x), flat(pg_last_error($x)));
}
pg_close($c);
out("done");
