# Debian's ruby-pg (built on libpq) through one session of what a Ruby
# program asks of it. ruby-pg drives libpq asynchronously by itself: its
# connect is PQconnectStart + PQconnectPoll, its exec a PQsend* with its own
# waits on PQsocket, PQconsumeInput and PQisBusy, its COPY non-blocking. On
# top of that: prepared statements and descriptions, binary parameters and
# results, single-row mode, pipeline mode with an error, COPY both ways,
# notifications, error fields, escaping, large objects, encodings, cancel, a
# reset and failed connects.
#
# Run by run-bindings.sh on libpq and on libpgwire-pq: everything printed
# must be identical. Nothing printed depends on time, process ids or the run.
require "pg"

$stdout.sync = true
def out(*a) = puts(a.map { |x| x.nil? ? "nil" : x.to_s }.join(" "))
def section(name) = puts("== #{name}")

def fails
  yield
  out("no error")
rescue PG::Error => e
  out(e.class, e.result&.error_field(PG::PG_DIAG_SQLSTATE), e.message.lines.first.strip)
end

c = PG.connect
section "info"
out(c.status == PG::CONNECTION_OK, c.transaction_status, c.protocol_version, c.server_version / 10000,
    c.db == ENV["PGDATABASE"], c.user == ENV["PGUSER"], c.ssl_in_use?, c.parameter_status("client_encoding"),
    c.parameter_status("nosuch").inspect, c.connection_needs_password, c.connection_used_password,
    c.backend_pid == c.exec("SELECT pg_backend_pid()").getvalue(0, 0).to_i)
out(PG::Connection.conninfo_parse("host=a port=5 dbname='x y'").select { |o| o[:val] }.map { |o| "#{o[:keyword]}=#{o[:val]}" }.join(","))
fails { PG::Connection.conninfo_parse("host=a bogus=1") }
out(PG::Connection.conndefaults.map { |o| o[:keyword] }.sort.join(","))
out(c.conninfo_hash.keys.sort.join(","))
out(c.encrypt_password("secret", "alice", "md5"))

section "exec"
r = c.exec("SELECT 1 AS a, 'x'::text AS b, NULL::int AS c, '\\x00ff'::bytea AS d UNION ALL SELECT 2, 'y', 3, '\\x01'")
out(r.ntuples, r.nfields, r.fields.join(","), (0...r.nfields).map { |i| [r.ftype(i), r.fmod(i), r.fformat(i), r.fsize(i)].join("/") }.join(" "))
out(r.values.inspect, r.getisnull(0, 2), r.getlength(0, 3), r.cmd_status, r.cmd_tuples, r.result_status, r.res_status(r.result_status))
c.exec("CREATE TEMP TABLE t (i int PRIMARY KEY, s text, b bytea, f float8, ts timestamptz)")
r = c.exec_params("INSERT INTO t VALUES ($1, $2, $3, $4, $5)",
                  [1, "h\u00e9llo 'q'", {value: "\x00\x01\xff".b, format: 1}, 1.5, "2021-03-04 05:06:07.890123+00"])
out(r.cmd_status, r.cmd_tuples, r.oid_value)
r = c.exec_params("SELECT i, s, b, f FROM t WHERE i = $1", [1], 1)
out(r.fformat(0), r.getvalue(0, 0).unpack1("N"), r.getvalue(0, 1).force_encoding("UTF-8"), r.getvalue(0, 2).unpack1("H*"), r.getvalue(0, 3).unpack1("G"))
c.exec("SET TIME ZONE 'UTC'")
out(c.exec("SELECT ts FROM t").getvalue(0, 0))
c.prepare("ins", "INSERT INTO t VALUES ($1, $2) RETURNING i * 10", [23, 25])
d = c.describe_prepared("ins")
out(d.nparams, (0...d.nparams).map { |i| d.paramtype(i) }.join(","), d.nfields, d.fname(0))
(2..6).each { |i| out(c.exec_prepared("ins", [i, "v#{i}"]).getvalue(0, 0)) }
c.transaction do |tx|
  tx.exec("DECLARE cur CURSOR FOR SELECT i FROM t ORDER BY i")
  p = tx.describe_portal("cur")
  out(p.nfields, p.fname(0), p.ftype(0))
  out(tx.exec("FETCH 2 FROM cur").values.inspect, tx.transaction_status)
end
out(c.transaction_status)

section "errors"
fails { c.exec("SELECT 1/0") }
begin
  c.exec("SELECT * FROM nosuch")
rescue PG::Error => e
  res = e.result
  fields = %w[SEVERITY SEVERITY_NONLOCALIZED SQLSTATE MESSAGE_PRIMARY MESSAGE_DETAIL MESSAGE_HINT STATEMENT_POSITION CONTEXT SOURCE_FILE SCHEMA_NAME TABLE_NAME]
  out(fields.map { |f| v = res.error_field(PG.const_get("PG_DIAG_#{f}")); f == "SOURCE_FILE" ? !v.nil? : v.inspect }.join(" | "))
  out(res.error_message.inspect)
  out(res.verbose_error_message(PG::PQERRORS_TERSE, PG::PQSHOW_CONTEXT_NEVER).inspect)
end
fails { c.exec_params("INSERT INTO t VALUES ($1)", [1]) }
c.set_error_verbosity(PG::PQERRORS_VERBOSE)
begin
  c.exec("SELECT 'x'::int")
rescue PG::Error => e
  out(e.message.lines.map(&:strip).reject { |l| l.start_with?("LOCATION") }.join(" | "))
end
c.set_error_verbosity(PG::PQERRORS_DEFAULT)
c.exec("BEGIN")
fails { c.exec("SELECT 1/0") }
fails { c.exec("SELECT 1") }
out(c.transaction_status)
c.exec("ROLLBACK")

section "notices"
notes = []
c.set_notice_receiver { |res| notes << [res.result_status, res.error_field(PG::PG_DIAG_SEVERITY), res.error_field(PG::PG_DIAG_MESSAGE_PRIMARY)].join("/") }
c.exec("DO $$ BEGIN RAISE NOTICE 'n1 %', 1; RAISE WARNING 'w2'; END $$")
out(notes.join(" "))
np = PG.connect
np.set_notice_processor { |msg| notes << msg.strip }
np.exec("DO $$ BEGIN RAISE NOTICE 'n3'; END $$")
np.close
out(notes.last)

section "single row"
c.send_query_params("SELECT g, repeat('r', g % 7) FROM generate_series(1, 2000) g", [])
c.set_single_row_mode
n = 0
last = nil
while (res = c.get_result)
  res.check
  n += res.ntuples
  last = [res.result_status, res.ntuples] unless res.ntuples.zero? && res.result_status == PG::PGRES_TUPLES_OK && last.nil?
  last = [res.result_status, res.ntuples, res.cmd_status] if res.result_status == PG::PGRES_TUPLES_OK
end
out(n, last.inspect)
rows = 0
c.send_query("SELECT g FROM generate_series(1, 300) g")
c.set_single_row_mode
c.get_last_result.then { |res| out(res.ntuples, res.result_status) } rescue out("get_last_result failed")
c.send_query("SELECT g FROM generate_series(1, 300) g")
c.set_single_row_mode
c.get_result.stream_each { |row| rows += row["g"].to_i }
out(rows)

section "pipeline"
# stream_each took the last result but not the NULL: libpq is not idle
# until a call parses the end of the command
fails { c.enter_pipeline_mode }
out(c.transaction_status, c.is_busy, c.transaction_status)
# (libpq 15 would carry the single-row mode of the last query into the
# pipeline's first; a query outside pipeline mode resets it)
c.exec("SELECT 1")
c.enter_pipeline_mode
out(c.pipeline_status)
c.send_query_params("SELECT $1::int + 1", [1])
c.send_query_params("SELECT 1/0", [])
c.send_query_params("SELECT 2", [])
c.pipeline_sync
c.send_query_params("SELECT $1::text", ["after"])
c.send_flush_request
c.pipeline_sync
seq = []
5.times do
  while (res = c.get_result)
    seq << [res.res_status(res.result_status), res.ntuples.positive? ? res.getvalue(0, 0) : res.error_field(PG::PG_DIAG_SQLSTATE)].compact.join(":")
  end
  seq << "NULL"
  res = c.get_result
  seq << res.res_status(res.result_status) if res
end
out(seq.join(" "))
c.exit_pipeline_mode
out(c.pipeline_status)

section "copy"
c.exec("CREATE TEMP TABLE cp (a int, b text)")
enc = PG::TextEncoder::CopyRow.new
c.copy_data("COPY cp FROM STDIN", enc) do
  c.put_copy_data([1, "one"])
  c.put_copy_data([2, nil])
  c.put_copy_data([3, "th\u00e9 \t x"])
  (4..20000).each { |i| c.put_copy_data([i, "x" * (i % 50)]) }
end
out(c.exec("SELECT count(*), sum(length(b)) FROM cp").values.inspect)
lines = []
c.copy_data("COPY (SELECT * FROM cp ORDER BY a LIMIT 3) TO STDOUT") do
  while (l = c.get_copy_data)
    lines << l.force_encoding("UTF-8").inspect
  end
end
out(lines.join(" "))
bytes = 0
c.copy_data("COPY cp TO STDOUT") { while (l = c.get_copy_data) do bytes += l.bytesize end }
out(bytes)
begin
  c.copy_data("COPY cp FROM STDIN") { c.put_copy_data("1\tok\nbad\trow\n") }
rescue PG::Error => e
  out(e.class, e.message.lines.first.strip)
end
out(c.transaction_status, c.exec("SELECT 1").getvalue(0, 0))
begin
  c.copy_data("COPY cp FROM STDIN") do
    c.put_copy_data("1\tx\n")
    raise "the caller's own error"
  end
rescue RuntimeError, PG::Error => e
  out(e.class, e.message.lines.first.strip)
end
out(c.exec("SELECT count(*) FROM cp").getvalue(0, 0))

section "nonblocking"
c.setnonblocking(true)
out(c.isnonblocking)
c.send_query("SELECT repeat('z', 300000)")
loop { break if c.flush }
until (c.consume_input; !c.is_busy)
  c.socket_io.wait_readable(5)
end
out(c.get_result.getvalue(0, 0).size, c.get_result.inspect)
c.setnonblocking(false)

section "notify"
c.exec("LISTEN ch")
c2 = PG.connect
c2.exec("NOTIFY ch, 'p1'; NOTIFY ch, 'p2'")
got = []
got << c.wait_for_notify(10) { |ch, pid, payload| got << [ch, pid == c2.backend_pid, payload].join(":") } while got.size < 4
out(got.join(" "))
while (n = c.notifies)
  out("left", n.inspect)
end
c2.close

section "escaping"
out(c.escape_string("it's \\ x"), c.escape_literal("it's \\ x"), c.escape_identifier('we"ird'), c.quote_ident("t"))
out(c.escape_bytea("\x00\x01'\\".b).inspect, PG::Connection.unescape_bytea("\\x00ff27").unpack1("H*"))
fails { c.escape_literal("\xff\xfe".b.force_encoding("UTF-8")) }
c.set_client_encoding("LATIN1")
out(c.get_client_encoding, c.internal_encoding, c.exec_params("SELECT $1::text", ["caf\u00e9".encode("ISO-8859-1")]).getvalue(0, 0).encoding)
c.set_client_encoding("UTF8")

section "large objects"
c.transaction do
  oid = c.lo_creat
  fd = c.lo_open(oid, PG::INV_WRITE)
  out(c.lo_write(fd, "large " * 1000))
  c.lo_close(fd)
  fd = c.lo_open(oid, PG::INV_READ)
  out(c.lo_read(fd, 12), c.lo_lseek(fd, 6, PG::SEEK_SET), c.lo_tell(fd), c.lo_read(fd, 6))
  c.lo_close(fd)
  c.lo_unlink(oid)
end

section "cancel"
probe = PG.connect
t = Thread.new do
  sleep 0.02 until probe.exec_params("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep(30)%'", [c.backend_pid]).getvalue(0, 0) == "1"
  c.cancel
end
fails { c.exec("SELECT pg_sleep(30)") }
t.join
probe.close
out(c.exec("SELECT 42").getvalue(0, 0))
c.exec("SET statement_timeout = '100ms'")
fails { c.exec("SELECT pg_sleep(5)") }
c.exec("RESET statement_timeout")

section "reset"
v = PG.connect
c.exec_params("SELECT pg_terminate_backend($1, 60000)", [v.backend_pid]).then { |res| out(res.getvalue(0, 0)) }
# (which call finds the connection gone depends on when the server's
# FATAL and its closing are read: only that one does is compared)
begin
  v.exec("SELECT 1")
  out("alive")
rescue PG::Error => e
  out(e.is_a?(PG::ConnectionBad) || e.is_a?(PG::UnableToSend), v.status == PG::CONNECTION_BAD)
end
v.reset
out(v.status == PG::CONNECTION_OK, v.exec("SELECT 7").getvalue(0, 0))
v.close
out(v.finished?)

section "bad connect"
["host=/nonexistent port=1", "host=127.0.0.1 port=1", "dbname=nosuch_db_here", "bogus=1"].each do |dsn|
  PG.connect(dsn)
  out("connected")
rescue PG::Error => e
  out(e.class, e.message.strip.inspect)
end
c.close
out("done")
