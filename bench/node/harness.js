'use strict';
// The Node.js side of the scenario harness: what bench/driver.c does for the C
// libraries, for one (library, scenario) pair per process. It runs a warm-up
// and a timed loop of the scenario's operations and prints one JSON object in
// driver.c's format (see bench/runner.py), with the columns a garbage-collected
// runtime can measure:
//  - latency: process.hrtime around every operation;
//  - CPU: process.cpuUsage (user+system) over the timed loop;
//  - GC: the durations of the 'gc' entries a PerformanceObserver reports while
//    the timed loop runs (seed 000's GC column);
//  - network bytes: bytesRead/bytesWritten of every net.Socket the library
//    connects (pg-native does its I/O inside libpq, out of sight: null);
//  - peak RSS: VmHWM at the end;
//  - allocations: not counted (null: the report says "n/a (GC runtime)").
// Every operation verifies its answer; a wrong one throws and the run reports
// status "failed". BENCH_CORRUPT_EXPECT=1 makes every expected value wrong
// (off by one), so that bench/selftest.py can show a wrong answer fails.

process.env.TZ = 'UTC'; // timestamp without time zone decodes as UTC, as the C drivers do

const fs = require('fs');
const net = require('net');
const path = require('path');
const { PerformanceObserver } = require('perf_hooks');

const TABLE = JSON.parse(fs.readFileSync(path.join(__dirname, 'scenarios.json'), 'utf8'));
const CORRUPT = process.env.BENCH_CORRUPT_EXPECT === '1';

// ---- failures and expectations ---------------------------------------------
class BenchFailure extends Error {}
function fail(msg) {
  throw new BenchFailure(msg);
}
// An expected value as the driver checks it (wrong on purpose under BENCH_CORRUPT_EXPECT=1).
function want(v) {
  return CORRUPT ? v + 1 : v;
}
function expectEq(got, expected, what) {
  if (got !== want(expected)) fail(`${what}: got ${got}, expected ${want(expected)}`);
}
function expectRows(rows, n, what) {
  const got = rows ? rows.length : -1;
  if (got !== want(n)) fail(`${what}: ${got} rows, expected ${want(n)}`);
}

// ---- sizes -----------------------------------------------------------------
function sizes(scale) {
  const sz = Object.assign({}, TABLE.sizes);
  for (const [k, min] of Object.entries(TABLE.scaled_sizes)) {
    const v = Math.trunc(TABLE.sizes[k] * scale);
    sz[k] = v < min ? min : v;
  }
  return sz;
}

// ---- the checksums of bench.h, in 64-bit arithmetic on two 32-bit halves ----
// h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2), all modulo 2^64.
class Mix {
  constructor() {
    this.hi = 0;
    this.lo = 0;
  }
  // v: an integer Number in [-2^53, 2^53], taken as its 64-bit two's complement.
  add(v) {
    let vh = Math.floor(v / 4294967296);
    let vl = v - vh * 4294967296;
    vh >>>= 0;
    const hh = this.hi, hl = this.lo;
    let lo = vl + 0x7f4a7c15;
    let hi = vh + 0x9e3779b9 + (lo > 0xffffffff ? 1 : 0);
    lo >>>= 0;
    const shl = (hl << 6) >>> 0, shh = ((hh << 6) | (hl >>> 26)) >>> 0;
    lo += shl;
    hi += shh + (lo > 0xffffffff ? 1 : 0);
    lo >>>= 0;
    const srl = ((hl >>> 2) | (hh << 30)) >>> 0, srh = hh >>> 2;
    lo += srl;
    hi += srh + (lo > 0xffffffff ? 1 : 0);
    this.lo = (hl ^ lo) >>> 0;
    this.hi = (hh ^ hi) >>> 0;
  }
  hex() {
    return this.hi.toString(16).padStart(8, '0') + this.lo.toString(16).padStart(8, '0');
  }
}
// A running uint64 sum (the cursor and suite B checksums) as a hex string.
function sumHex(v) {
  const t = BigInt(v) & 0xffffffffffffffffn;
  return (t < 0n ? t + (1n << 64n) : t).toString(16).padStart(16, '0');
}
function foldF(d) {
  return Math.trunc(d * 1000.0);
}
const EPOCH_2000_MS = 946684800000;
function tsMicros(date) {
  return (date.getTime() - EPOCH_2000_MS) * 1000;
}

// One bench_mixed row folded as drv_libpq.c's decode_mixed_* do. json/jsonb:
// the C drivers fold their text lengths; a library that hands back decoded
// objects folds their content instead (checksum domain "json-objects").
function mixRow(h, r) {
  h.add(r.c_int2);
  h.add(r.c_int4);
  h.add(foldF(r.c_float4));
  h.add(foldF(r.c_float8));
  const js = r.c_json, jb = r.c_jsonb;
  if (typeof js === 'string') {
    h.add(r.c_varchar.length + js.length * 1000 + jb.length * 1000000);
  } else {
    if (!js || !jb || js.id !== jb.id || js.tags.length !== 2) fail('mixed row: bad json/jsonb');
    h.add(r.c_varchar.length + js.id * 1000 + js.name.length * 100 + (jb.ok ? 1 : 0) * 10 + jb.name.length * 1000000000);
  }
  h.add(tsMicros(r.c_ts));
  h.add(tsMicros(r.c_tstz));
  const b = r.c_bytea;
  if (!b || b.length <= 0) fail('mixed row: empty bytea');
  h.add(b.length * 65536 + b[0] * 256 + b[b.length - 1]);
}
function mixedChecksum(rows, n) {
  expectRows(rows, n, 'mixed');
  const h = new Mix();
  for (let i = 0; i < rows.length; i++) mixRow(h, rows[i]);
  return h.hex();
}
function mixedDomain(rows) {
  return rows.length && typeof rows[0].c_json !== 'string' ? 'json-objects' : 'c';
}

// Large Blob Fetch: length, a sampled 16-byte pattern, first and last byte.
function blobChecksum(rows, sz) {
  expectRows(rows, sz.blob_rows, 'blob');
  const h = new Mix();
  for (let i = 0; i < rows.length; i++) {
    const b = rows[i].b;
    if (!b || b.length !== want(sz.blob_bytes)) fail(`blob row ${i}: ${b ? b.length : 'no'} bytes`);
    for (let k = 0; k < b.length; k += 4093) if (b[k] !== b[k % 16]) fail(`blob row ${i}: wrong byte at ${k}`);
    h.add(b.length + b[0] + b[b.length - 1] * 256);
  }
  return h.hex();
}

// Large Array Fetch: every element checked against setup.sql's formula.
function arrayChecksum(rows, sz) {
  expectRows(rows, sz.array_rows, 'array');
  const h = new Mix();
  for (let i = 0; i < rows.length; i++) {
    const id = rows[i].id, a = rows[i].a;
    if (!a || a.length !== sz.array_elems) fail(`array row ${id}: ${a ? a.length : 'no'} elements`);
    let acc = 0;
    for (let j = 0; j < a.length; j++) {
      const w = j % 2 === 0 ? 2147483647 - j - id : -2147483647 + j + id;
      if (a[j] !== want(w)) fail(`array row ${id} element ${j}: ${a[j]}, expected ${want(w)}`);
      acc += a[j];
    }
    h.add(acc + a.length);
  }
  return h.hex();
}

// Prepared Statement Reuse: one row per id.
function prepRow(h, rows, id) {
  expectRows(rows, 1, 'prepared');
  const r = rows[0];
  if (r.id !== want(id)) fail(`prepared: wrong row for id ${id}`);
  h.add(r.c_int4 + foldF(r.c_float8) + r.c_varchar.length);
}

// Per-Connection Ceiling: results[i] holds the rows of the execution with
// value i + 1; each must be one row whose column col is that value. The
// checksum is the C drivers' running sum of the values (CEILING_SUM(n)).
function ceilingChecksum(results, col) {
  let sum = 0;
  for (let i = 0; i < results.length; i++) {
    const rows = results[i];
    expectRows(rows, 1, `ceiling ${i}`);
    expectEq(rows[0][col], i + 1, `ceiling ${i}`);
    sum += rows[0][col];
  }
  return sumHex(sum);
}

// Cursor Streaming: a running sum over (int4, text, float8) rows.
class StreamSum {
  constructor() {
    this.sum = 0;
    this.rows = 0;
  }
  row(i, t, f) {
    this.sum += i + t.length + foldF(f);
    this.rows++;
  }
  check(sz) {
    if (this.rows !== want(sz.cursor_rows)) fail(`cursor: ${this.rows} rows, expected ${want(sz.cursor_rows)}`);
    return sumHex(this.sum);
  }
}
function cursorSql(sz) {
  // bench.h's SQL_CURSOR with column names, so that rows can be objects.
  return `select i::int4 as i, 'row ' || i as t, i * 0.5::float8 as f from generate_series(1, ${sz.cursor_rows}) i`;
}

// Suite B: every row of seed 001's table checked.
function bRows(rows, limit) {
  expectRows(rows, limit, 'suite B');
  let s = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.id !== i + 1 || r.int_value !== 1337 || r.string_value !== 'wat' || r.null_value !== null || r.bool_value !== false)
      fail(`suite B: wrong row ${i}`);
    s += r.id + r.int_value + r.string_value.length;
  }
  return s;
}

// ---- shared inputs (bench/common.c) ------------------------------------------
const SQL = {
  simpleSeq: 'select 1',
  extSeq: 'select $1::int4',
  mixed: 'select c_int2, c_int4, c_float4, c_float8, c_varchar, c_json, c_jsonb, c_ts, c_tstz, c_bytea from bench_mixed order by id limit $1',
  simpleFetch: 'select c_int2, c_int4, c_float4, c_float8, c_varchar, c_json, c_jsonb, c_ts, c_tstz, c_bytea from bench_mixed order by id limit 1000',
  blob: 'select id, b from bench_blob order by id limit $1',
  array: 'select id, a from bench_array order by id limit $1',
  prep: 'select id, c_int4, c_float8, c_varchar from bench_mixed where id = $1',
  b: (n) => `SELECT * FROM benchmark_rows ORDER BY id LIMIT ${n}`,
  poolSimple: 'select 1 as one',
  poolExt: 'select $1::int4 as one',
  copyCsv: 'COPY bench_copy FROM STDIN (FORMAT csv)',
};

// Unit of Work (common.c's bench_uow_sql): k = 0..19; the writes bind $1 = 1.
// As a template: [text before $1, text after $1] for writes, [text] for reads.
function uowParts(k) {
  if (k < 10) return ['update bench_uow set v = v + ', `::int4 where id = ${k + 1}`];
  if (k < 15) return [`select v from bench_uow where id = ${k - 9}`];
  return ["update bench_uow set note = 'n' || ", `::int4 where id = ${k - 4}`];
}
function uowSql(k) {
  return uowParts(k).join('$1');
}
function uowIsRead(k) {
  return k >= 10 && k < 15;
}

// Bulk Load rows: common.c's bench_copy_rows (xorshift64), materialised once.
function copyRows(n) {
  const M = (1n << 64n) - 1n;
  let x = 88172645463325252n;
  const rows = new Array(n);
  for (let i = 0; i < n; i++) {
    x ^= (x << 13n) & M;
    x ^= x >> 7n;
    x ^= (x << 17n) & M;
    let i4 = 1000000000 + Number(x % 1147483647n);
    if (i & 1) i4 = -i4;
    const i8 = 1000000000000000000n + (x % 8000000000000000000n);
    const f8 = Number(x >> 11n) / 9007199254740993.0 * 1.0e15 + 0.1234567890123;
    let vc = '';
    for (let c = 0; c < 40; c++) vc += String.fromCharCode(97 + Number((x >> BigInt(c % 60)) % 26n));
    rows[i] = { i4, i8, f8, vc };
  }
  return rows;
}
// CSV of rows in chunks of about 256 KiB, formatted here (inside the timed call).
function* csvChunks(rows) {
  let parts = [];
  let len = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const line = r.i4 + ',' + r.i8 + ',' + r.f8 + ',' + r.vc + '\n';
    parts.push(line);
    len += line.length;
    if (len > 256 * 1024 - 256) {
      yield parts.join('');
      parts = [];
      len = 0;
    }
  }
  if (parts.length) yield parts.join('');
}

// ---- measurement ---------------------------------------------------------------
const sockets = new Set();
const origConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  sockets.add(this);
  return origConnect.apply(this, args);
};
function socketBytes() {
  let rd = 0, wr = 0;
  for (const s of sockets) {
    rd += s.bytesRead || 0;
    wr += s.bytesWritten || 0;
  }
  return [rd, wr];
}
function peakRssKb() {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch (e) {
    /* fall through */
  }
  return Math.round(process.resourceUsage().maxRSS);
}

let gcMs = 0, gcCounting = false;
const gcObserver = new PerformanceObserver((list) => {
  if (!gcCounting) return;
  for (const e of list.getEntries()) gcMs += e.duration;
});

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// Runs one scenario of one library. impl: { setup(env, sz) -> state,
// op(state) -> checksum string or null, teardown(state), note, io: 'none' when
// the library's sockets are not net.Sockets, domain: the checksum's domain }
// or null with reason (unsupported).
async function runScenario(libName, scenarioId, scale, impl, reason) {
  const row = TABLE.scenarios[scenarioId];
  const head = { lib: libName, scenario: scenarioId };
  if (!row) {
    emit(Object.assign(head, { status: 'failed', reason: 'unknown scenario' }));
    return 1;
  }
  if (!impl) {
    emit(Object.assign(head, { status: 'unsupported', reason }));
    return 0;
  }
  const [baseIters, payload, stable] = row;
  const sz = sizes(scale);
  let iters = Math.ceil(baseIters * scale);
  if (iters < 3) iters = 3;
  let warm = Math.trunc(iters / 10);
  if (warm < 1) warm = 1;
  if (warm > 300) warm = 300;
  let capS = 4.0 * (scale < 1 ? (scale < 0.25 ? 0.25 : scale) : scale);
  if (process.env.BENCH_TIME_CAP) capS = Number(process.env.BENCH_TIME_CAP);
  const env = {
    host: process.env.PGHOST,
    port: Number(process.env.PGPORT),
    user: process.env.PGUSER,
    database: process.env.PGDATABASE,
    tcpHost: process.env.PGW_TEST_TCP_HOST || '127.0.0.1',
  };
  let st = null;
  try {
    st = await impl.setup(env, sz);
    let ref = null;
    for (let i = 0; i < warm; i++) {
      const sum = await impl.op(st);
      if (i === 0) ref = sum;
      else if (stable && sum !== ref) fail('checksum changed between calls');
    }
    const samples = new Float64Array(iters);
    let done = 0;
    const capNs = capS * 1e9;
    const io = impl.io === 'none' ? () => [NaN, NaN] : socketBytes;
    const [in0, out0] = io();
    gcObserver.observe({ entryTypes: ['gc'] });
    gcMs = 0;
    gcCounting = true;
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (; done < iters; done++) {
      const t0 = process.hrtime.bigint();
      const sum = await impl.op(st);
      const t1 = process.hrtime.bigint();
      if (stable && sum !== ref) fail('checksum changed between calls');
      samples[done] = Number(t1 - t0);
      if (Number(t1 - start) > capNs && done + 1 >= 5) {
        done++;
        break;
      }
    }
    const wall = Number(process.hrtime.bigint() - start);
    const cpu = process.cpuUsage(cpu0);
    const [in1, out1] = io();
    await new Promise((r) => setImmediate(r)); // let the observer deliver the last entries
    gcCounting = false;
    gcObserver.disconnect();
    const note = typeof impl.note === 'function' ? impl.note(st) : impl.note;
    await impl.teardown(st);
    st = null;
    const list = Array.from(samples.subarray(0, done));
    const sorted = list.slice().sort((a, b) => a - b);
    const out = Object.assign(head, {
      status: 'ok',
      ops: done,
      planned_ops: iters,
      warmup: warm,
      wall_ns: wall,
      cpu_ns_per_op: ((cpu.user + cpu.system) * 1000) / done,
      allocs_per_op: null,
      alloc_bytes_per_op: null,
      gc_ns_per_op: (gcMs * 1e6) / done,
      net_in_per_op: Number.isNaN(in0) ? null : (in1 - in0) / done,
      net_out_per_op: Number.isNaN(in0) ? null : (out1 - out0) / done,
      payload: !!payload,
      peak_rss_kb: peakRssKb(),
    });
    if (stable) out.checksum = ref;
    if (impl.domain) out.checksum_domain = impl.domain;
    out.note = note || '';
    out.sizes = { copy_rows: sz.copy_rows, cursor_rows: sz.cursor_rows };
    out.runtime = 'Node.js ' + process.version;
    out.samples_ns = list;
    out.p50_ns = sorted[Math.trunc(done / 2)];
    emit(out);
    return 0;
  } catch (e) {
    const msg = e instanceof BenchFailure ? e.message : `${e && e.message ? e.message : e}`;
    emit(Object.assign(head, { status: 'failed', reason: msg }));
    if (st) {
      try {
        await Promise.race([impl.teardown(st), new Promise((r) => setTimeout(r, 2000))]);
      } catch (e2) {
        /* the run has failed already */
      }
    }
    return 1;
  }
}

// A library module's lookup: its scenario table (setup(env, sz) may ignore the
// sizes; the state carries them as .sz) or the reason it has no such scenario.
function lookup(ops, reasons, id) {
  const o = ops[id];
  if (!o) return { impl: null, reason: reasons[id] || TABLE.peer_reasons[id] || 'not in this harness' };
  return { impl: Object.assign({}, o, { setup: async (env, sz) => Object.assign(await o.setup(env, sz), { sz }) }) };
}

module.exports = {
  lookup, fail, want, expectEq, expectRows, Mix, sumHex, foldF, mixedChecksum, mixedDomain,
  blobChecksum, arrayChecksum, prepRow, ceilingChecksum, StreamSum, cursorSql, bRows, SQL,
  uowParts, uowSql, uowIsRead, copyRows, csvChunks, runScenario, CORRUPT,
};
