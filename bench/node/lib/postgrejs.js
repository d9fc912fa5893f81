'use strict';
// PostgreJS (npm "postgrejs"), each scenario through its fastest convention as
// seed 000 describes it: Connection.execute() for Simple Query, query() for
// extended calls (binary results by default; text forced for the text
// scenario), prepare()/execute() for reuse, query({cursor: true}) for cursors,
// Pool for pooling, `objectRows: true` everywhere so rows are objects as the
// other libraries return them. The version npm serves here (2.x) queues the
// statements of one connection (one in flight at a time) and has neither
// pipeline() nor a COPY API, which seed 000's 3.x has.
const { Connection, Pool, DataFormat, DataTypeOIDs } = require('postgrejs');
const h = require('../harness');

const config = (env, extra) =>
  Object.assign({ host: env.host, port: env.port, user: env.user, database: env.database }, extra);
// fetchCount: rows per Execute; its default (100) would cut every larger
// result short, so every call asks for all rows in one Execute.
const ALL = 2147483647;
const OBJ = { objectRows: true, fetchCount: ALL };
const withParams = (params, extra) => Object.assign({ params, objectRows: true, fetchCount: ALL }, extra);

async function open(env) {
  const c = new Connection(config(env));
  await c.connect();
  return { c, counter: 0 };
}
const end = (s) => s.c.close();
function impl(setup, op, note, extra) {
  return Object.assign({ setup, op, teardown: end, note }, extra);
}
const rowsOf = (r) => (r && r.rows) || [];
const execRows = (r) => rowsOf(r.results[0]);

const ops = {};
ops.simple_seq = impl(open, async (s) => {
  const rows = execRows(await s.c.execute(h.SQL.simpleSeq, OBJ));
  h.expectRows(rows, 1, 'select 1');
  h.expectEq(rows[0]['?column?'], 1, 'select 1');
  return h.sumHex(1);
}, 'Connection.execute(sql): a Simple Query message');
ops.c_rtt = ops.simple_seq;
ops.simple_conc = impl(open, async (s) => {
  const first = s.counter + 1, calls = [];
  for (let i = 0; i < 100; i++) calls.push(s.c.execute(`select ${++s.counter}`, OBJ));
  const res = await Promise.all(calls);
  for (let i = 0; i < 100; i++) h.expectEq(execRows(res[i])[0]['?column?'], first + i, 'simple concurrent');
  return null;
}, '100 execute() calls in Promise.all (queued by the connection: one statement in flight)');
ops.simple_fetch = impl(open, async (s) => h.mixedChecksum(execRows(await s.c.execute(h.SQL.simpleFetch, OBJ)), 1000),
  'Connection.execute(sql), values decoded by PostgreJS', { domain: 'json-objects' });
ops.ext_seq = impl(open, async (s) => {
  const v = ++s.counter;
  const rows = rowsOf(await s.c.query(h.SQL.extSeq, withParams([v])));
  h.expectRows(rows, 1, 'ext seq');
  h.expectEq(rows[0].int4, v, 'ext seq');
  return h.sumHex(0);
}, 'Connection.query(sql, {params}), binary results (its default)');
ops.ext_conc = impl(open, async (s) => {
  const first = s.counter + 1, calls = [];
  for (let i = 0; i < 50; i++) calls.push(s.c.query(h.SQL.extSeq, withParams([++s.counter])));
  const res = await Promise.all(calls);
  for (let i = 0; i < 50; i++) h.expectEq(rowsOf(res[i])[0].int4, first + i, 'ext concurrent');
  return null;
}, '50 query() calls in Promise.all (queued by the connection: one statement in flight)');
const mixed = (format) => async (s) =>
  h.mixedChecksum(rowsOf(await s.c.query(h.SQL.mixed, withParams([1000], { columnFormat: format }))), 1000);
ops.mixed_text = impl(open, mixed(DataFormat.text), 'query(sql, {params, columnFormat: text}): text forced, as seed 000 does', { domain: 'json-objects' });
ops.mixed_binary = impl(open, mixed(DataFormat.binary), 'query(sql, {params}): binary results (its default)', { domain: 'json-objects' });
ops.blob_fetch = impl(open, async (s) => h.blobChecksum(rowsOf(await s.c.query(h.SQL.blob, withParams([10]))), s.sz),
  'query(sql, {params}), binary bytea (its default)');
ops.array_fetch = impl(open, async (s) => h.arrayChecksum(rowsOf(await s.c.query(h.SQL.array, withParams([10]))), s.sz),
  'query(sql, {params}), binary int4[] (its default)');
async function prepOpen(env) {
  const s = await open(env);
  s.stmt = await s.c.prepare(h.SQL.prep, { paramTypes: [DataTypeOIDs.int4] });
  return s;
}
const prepEnd = async (s) => {
  await s.stmt.close();
  await s.c.close();
};
ops.prep_seq = impl(prepOpen, async (s) => {
  const m = new h.Mix();
  for (let id = 1; id <= 50; id++) h.prepRow(m, rowsOf(await s.stmt.execute(withParams([id]))), id);
  return m.hex();
}, 'prepare() once, PreparedStatement.execute() 50 times', { teardown: prepEnd });
ops.prep_conc = impl(prepOpen, async (s) => {
  const ids = [], calls = [];
  for (let i = 0; i < 50; i++) {
    const id = (s.counter++ % 1000) + 1;
    ids.push(id);
    calls.push(s.stmt.execute(withParams([id])));
  }
  const res = await Promise.all(calls);
  const m = new h.Mix();
  for (let i = 0; i < 50; i++) h.prepRow(m, rowsOf(res[i]), ids[i]);
  return null;
}, '50 PreparedStatement.execute() in Promise.all (queued: one in flight)', { teardown: prepEnd });
// Per-Connection Ceiling: as prep_conc, the connection queues the calls, so
// the 10,000 run one round trip at a time.
ops.ceiling = impl(async (env) => {
  const s = await open(env);
  s.stmt = await s.c.prepare(h.SQL.extSeq, { paramTypes: [DataTypeOIDs.int4] });
  return s;
}, async (s) => {
  const n = s.sz.ceiling, calls = new Array(n);
  for (let i = 0; i < n; i++) calls[i] = s.stmt.execute(withParams([i + 1]));
  return h.ceilingChecksum((await Promise.all(calls)).map(rowsOf), 'int4');
}, '10,000 PreparedStatement.execute() in Promise.all, queued by the connection: one in flight, a round trip each (this version has no pipelining)', { teardown: prepEnd });
ops.unit_of_work = impl(async (env) => {
  const s = await open(env);
  s.expect = execRows(await s.c.execute('select v from bench_uow where id between 1 and 5 order by id', OBJ)).map((x) => Number(x.v));
  return s;
}, async (s) => {
  const calls = [];
  for (let k = 0; k < 20; k++)
    calls.push(s.c.query(h.uowSql(k), h.uowIsRead(k) ? OBJ : withParams([1])));
  for (let i = 0; i < 5; i++) s.expect[i]++;
  const res = await Promise.all(calls);
  for (let k = 0; k < 20; k++) {
    if (h.uowIsRead(k)) h.expectEq(Number(rowsOf(res[k])[0].v), s.expect[k - 10], `uow read ${k}`);
    else h.expectEq(res[k].rowsAffected, 1, `uow write ${k}`);
  }
  return null;
}, '20 query() calls in Promise.all (queued: one in flight, a Sync each; this version has no pipeline())');
ops.cursor = impl(open, async (s) => {
  const sum = new h.StreamSum();
  const r = await s.c.query(h.cursorSql(s.sz), { cursor: true, fetchCount: 500, objectRows: true });
  const cur = r.cursor;
  for (;;) {
    const rows = await cur.fetch(500);
    for (let i = 0; i < rows.length; i++) sum.row(rows[i].i, rows[i].t, rows[i].f);
    if (rows.length < 500) break;
  }
  await cur.close();
  return sum.check(s.sz);
}, 'query(sql, {cursor: true, fetchCount: 500}), Cursor.fetch(500) until drained');
function pooled(sql, withParam) {
  return {
    setup: (env, sz) => ({ pool: new Pool(config(env, { max: sz.pool_size })), n: sz.pool_conc }),
    op: async (s) => {
      const calls = [];
      for (let i = 0; i < s.n; i++)
        calls.push(withParam ? s.pool.query(sql, withParams([i])) : s.pool.execute(sql, OBJ));
      const res = await Promise.all(calls);
      for (let i = 0; i < s.n; i++) {
        const rows = withParam ? rowsOf(res[i]) : execRows(res[i]);
        h.expectEq(rows[0].one, withParam ? i : 1, 'pooled');
      }
      return null;
    },
    teardown: (s) => s.pool.close(),
    note: `Pool({max: 10}), 1000 pool.${withParam ? 'query(sql, {params})' : 'execute(sql)'} in Promise.all`,
  };
}
ops.pool_simple = pooled(h.SQL.poolSimple, false);
ops.pool_ext = pooled(h.SQL.poolExt, true);
for (const n of [1, 100, 500]) {
  const text = h.SQL.b(n);
  const bOpen = async (env) => {
    const s = await open(env);
    s.stmt = await s.c.prepare(text);
    return s;
  };
  ops[`b_seq_${n}`] = impl(bOpen, async (s) => h.sumHex(h.bRows(rowsOf(await s.stmt.execute(OBJ)), n)),
    'prepare() once, execute() one at a time', { teardown: prepEnd });
  ops[`b_pipe_${n}`] = impl(bOpen, async (s) => {
    const calls = [];
    for (let i = 0; i < 10; i++) calls.push(s.stmt.execute(OBJ));
    const res = await Promise.all(calls);
    let t = 0;
    for (let i = 0; i < 10; i++) t += h.bRows(rowsOf(res[i]), n);
    return h.sumHex(t);
  }, '10 execute() in Promise.all (queued: one in flight)', { teardown: prepEnd });
}

const REASONS = {
  connect:
    'Not like-for-like: it always sends SSLRequest over TCP and has no way to turn TLS off, so against this TLS-enabled server it would time a TLS handshake the other rows do not',
  copy_text: 'No COPY API (in the version npm serves)',
  copy_binary: 'No COPY API (in the version npm serves)',
  c_speed: 'suite C is run for the C libraries only',
};
module.exports = { lookup: (id) => h.lookup(ops, REASONS, id) };
