'use strict';
// postgres (postgres.js), each scenario through its fastest convention as
// seeds 000 and 001 use it: sql.unsafe(text).simple() for Simple Query,
// sql.unsafe(text, args) for one-shot extended calls, the tagged template
// (auto-prepared) for reuse and Unit of Work, .writable() for COPY,
// .cursor(500) for cursors; the sql object is itself the pool. It always
// pipelines calls in flight on one connection; text results only (its Bind
// hard-codes text formats).
const postgres = require('postgres');
const h = require('../harness');

const config = (env, extra) =>
  Object.assign({ host: env.host, port: env.port, user: env.user, database: env.database, max: 1, ssl: false, onnotice: () => {} }, extra);
// A tagged template built once from literal parts, so a call takes the
// template path (auto-prepared, cached by text) without an eval.
function template(parts) {
  const strings = parts.slice();
  strings.raw = parts.slice();
  return Object.freeze(strings);
}

async function open(env, extra) {
  const sql = postgres(config(env, extra));
  await sql.unsafe('select 1').simple(); // connect outside the timed loop
  return { sql, counter: 0 };
}
const end = (s) => s.sql.end({ timeout: 5 });
function impl(setup, op, note, extra) {
  return Object.assign({ setup, op, teardown: end, note }, extra);
}

const ops = {};
ops.connect = {
  setup: (env) => ({ env }),
  op: async (s) => {
    const sql = postgres(config(s.env, { host: s.env.tcpHost }));
    const r = await sql.reserve(); // opens the connection: startup to ReadyForQuery
    r.release();
    await sql.end({ timeout: 5 });
    return null;
  },
  teardown: () => {},
  note: 'postgres() over TCP, sql.reserve() to open the connection, release(), sql.end()',
};
ops.simple_seq = impl(open, async (s) => {
  const r = await s.sql.unsafe(h.SQL.simpleSeq).simple();
  h.expectRows(r, 1, 'select 1');
  h.expectEq(r[0]['?column?'], 1, 'select 1');
  return h.sumHex(1);
}, 'sql.unsafe(text).simple(): a Simple Query message');
ops.c_rtt = ops.simple_seq;
ops.simple_conc = impl(open, async (s) => {
  const first = s.counter + 1, calls = [];
  for (let i = 0; i < 100; i++) calls.push(s.sql.unsafe(`select ${++s.counter}`).simple());
  const res = await Promise.all(calls);
  for (let i = 0; i < 100; i++) h.expectEq(res[i][0]['?column?'], first + i, 'simple concurrent');
  return null;
}, '100 sql.unsafe(text).simple() in Promise.all (pipelined)');
ops.simple_fetch = impl(open, async (s) => h.mixedChecksum(await s.sql.unsafe(h.SQL.simpleFetch).simple(), 1000),
  'sql.unsafe(text).simple(), values decoded by postgres.js', { domain: 'json-objects' });
ops.ext_seq = impl(open, async (s) => {
  const v = ++s.counter;
  const r = await s.sql.unsafe(h.SQL.extSeq, [v]);
  h.expectRows(r, 1, 'ext seq');
  h.expectEq(r[0].int4, v, 'ext seq');
  return h.sumHex(0);
}, 'sql.unsafe(text, [value]): unprepared (unnamed) statement');
ops.ext_conc = impl(open, async (s) => {
  const first = s.counter + 1, calls = [];
  for (let i = 0; i < 50; i++) calls.push(s.sql.unsafe(h.SQL.extSeq, [++s.counter]));
  const res = await Promise.all(calls);
  for (let i = 0; i < 50; i++) h.expectEq(res[i][0].int4, first + i, 'ext concurrent');
  return null;
}, '50 sql.unsafe(text, [value]) in Promise.all (pipelined)');
ops.mixed_text = impl(open, async (s) => h.mixedChecksum(await s.sql.unsafe(h.SQL.mixed, [1000]), 1000),
  'sql.unsafe(text, [1000]), text format (its only one)', { domain: 'json-objects' });
ops.blob_fetch = impl(open, async (s) => h.blobChecksum(await s.sql.unsafe(h.SQL.blob, [10]), s.sz),
  'sql.unsafe(text, [10]), text format: bytea as hex, decoded to a Buffer');
ops.array_fetch = impl(open, async (s) => h.arrayChecksum(await s.sql.unsafe(h.SQL.array, [10]), s.sz),
  'sql.unsafe(text, [10]), text format');
const PREP = template(['select id, c_int4, c_float8, c_varchar from bench_mixed where id = ', '']);
ops.prep_seq = impl(open, async (s) => {
  const m = new h.Mix();
  for (let id = 1; id <= 50; id++) h.prepRow(m, await s.sql(PREP, id), id);
  return m.hex();
}, 'tagged template, auto-prepared once and reused, 50 calls one at a time');
ops.prep_conc = impl(open, async (s) => {
  const ids = [], calls = [];
  for (let i = 0; i < 50; i++) {
    const id = (s.counter++ % 1000) + 1;
    ids.push(id);
    calls.push(s.sql(PREP, id));
  }
  const res = await Promise.all(calls);
  const m = new h.Mix();
  for (let i = 0; i < 50; i++) h.prepRow(m, res[i], ids[i]);
  return null;
}, '50 calls of one auto-prepared tagged template in Promise.all (pipelined)');
// Per-Connection Ceiling: all 10,000 in flight takes max_pipeline (default 100)
// raised to the batch; every call still carries its own Sync.
const CEIL = template(['select ', '::int4']);
ops.ceiling = impl(async (env, sz) => {
  const s = await open(env, { max_pipeline: sz.ceiling });
  await s.sql(CEIL, 1); // prepare it once
  return s;
}, async (s) => {
  const n = s.sz.ceiling, calls = new Array(n);
  for (let i = 0; i < n; i++) calls[i] = s.sql(CEIL, i + 1);
  return h.ceilingChecksum(await Promise.all(calls), 'int4');
}, '10,000 calls of one auto-prepared tagged template in Promise.all, max_pipeline raised to 10,000 (default 100): all in flight, each with its own Sync (no one-Sync batch in its API)');
const UOW = [];
for (let k = 0; k < 20; k++) UOW.push(template(h.uowParts(k)));
ops.unit_of_work = impl(async (env) => {
  const s = await open(env);
  const r = await s.sql.unsafe('select v from bench_uow where id between 1 and 5 order by id');
  s.expect = r.map((x) => Number(x.v));
  return s;
}, async (s) => {
  const calls = [];
  for (let k = 0; k < 20; k++) calls.push(h.uowIsRead(k) ? s.sql(UOW[k]) : s.sql(UOW[k], 1));
  for (let i = 0; i < 5; i++) s.expect[i]++;
  const res = await Promise.all(calls);
  for (let k = 0; k < 20; k++) {
    if (h.uowIsRead(k)) h.expectEq(Number(res[k][0].v), s.expect[k - 10], `uow read ${k}`);
    else h.expectEq(res[k].count, 1, `uow write ${k}`);
  }
  return null;
}, '20 tagged templates in Promise.all (pipelined; Execute and Sync are one constant, so a Sync each)');
ops.copy_text = impl(async (env, sz) => {
  const s = await open(env);
  s.rows = h.copyRows(sz.copy_rows);
  return s;
}, async (s) => {
  await s.sql.unsafe('TRUNCATE bench_copy');
  const w = await s.sql.unsafe(h.SQL.copyCsv).writable();
  await new Promise((resolve, reject) => {
    w.on('error', reject);
    w.on('finish', resolve);
    (async () => {
      for (const chunk of h.csvChunks(s.rows)) if (!w.write(chunk)) await new Promise((r) => w.once('drain', r));
      w.end();
    })().catch(reject);
  });
  // .writable() does not hand back COPY's row count: count the table.
  const c = await s.sql.unsafe('select count(*)::int4 as n from bench_copy');
  h.expectEq(c[0].n, s.sz.copy_rows, 'copy rows');
  return null;
}, 'TRUNCATE, then sql.unsafe(COPY).writable(): CSV formatted in the timed call, ~256 KiB chunks; row count checked with a count(*) (the stream does not report it)');
ops.cursor = impl(open, async (s) => {
  const sum = new h.StreamSum();
  for await (const rows of s.sql.unsafe(h.cursorSql(s.sz)).cursor(500))
    for (let i = 0; i < rows.length; i++) sum.row(rows[i].i, rows[i].t, rows[i].f);
  return sum.check(s.sz);
}, 'sql.unsafe(text).cursor(500): a portal drained 500 rows per Execute');
function pooled(sql, withParam) {
  return impl(async (env, sz) => {
    const s = await open(env, { max: sz.pool_size });
    s.n = sz.pool_conc;
    return s;
  }, async (s) => {
    const calls = [];
    for (let i = 0; i < s.n; i++) calls.push(withParam ? s.sql.unsafe(sql, [i]) : s.sql.unsafe(sql).simple());
    const res = await Promise.all(calls);
    for (let i = 0; i < s.n; i++) h.expectEq(res[i][0].one, withParam ? i : 1, 'pooled');
    return null;
  }, `postgres({max: 10}), 1000 ${withParam ? 'sql.unsafe(text, [value]) (unprepared, as seed 000)' : 'sql.unsafe(text).simple()'} in Promise.all`);
}
ops.pool_simple = pooled(h.SQL.poolSimple, false);
ops.pool_ext = pooled(h.SQL.poolExt, true);
for (const n of [1, 100, 500]) {
  const text = h.SQL.b(n);
  ops[`b_seq_${n}`] = impl(open, async (s) => h.sumHex(h.bRows(await s.sql.unsafe(text, [], { prepare: true }), n)),
    "sql.unsafe(text, [], {prepare: true}): prepared once, one at a time");
  ops[`b_pipe_${n}`] = impl(async (env) => {
    const s = await open(env);
    await s.sql.unsafe(text, [], { prepare: true }); // prime (seed 001)
    return s;
  }, async (s) => {
    const calls = [];
    for (let i = 0; i < 10; i++) calls.push(s.sql.unsafe(text, [], { prepare: true }));
    const res = await Promise.all(calls);
    let t = 0;
    for (let i = 0; i < 10; i++) t += h.bRows(res[i], n);
    return h.sumHex(t);
  }, '10 calls of a prepared statement in Promise.all on one connection (max: 1, pipelined)');
}

const REASONS = {
  mixed_binary: 'Not Supported: no binary result format (its Bind hard-codes text)',
  copy_binary: 'No binary COPY encoding',
  c_speed: 'suite C is run for the C libraries only',
};
module.exports = { lookup: (id) => h.lookup(ops, REASONS, id) };
