'use strict';
// pg (node-postgres), and pg-native (the same API over libpq), each scenario
// through its fastest convention as seeds 000 and 001 use it: client.query()
// with text results (pg-types' binary parsers are wrong or missing for these
// columns, seed 000), named statements for reuse, `pipeline: true` (pg 8.23,
// pg-native 3.9) for calls in flight together, pg-copy-streams for COPY,
// pg-cursor for cursors, pg.Pool for pooling.
const h = require('../harness');

module.exports = function (native) {
  const pg = require('pg');
  const api = native ? pg.native : pg;
  if (!api) throw new Error('pg-native is not installed');
  const io = native ? 'none' : undefined; // libpq's socket is not a net.Socket

  const config = (env, extra) =>
    Object.assign({ host: env.host, port: env.port, user: env.user, database: env.database }, extra);
  async function client(env, extra) {
    const c = new api.Client(config(env, extra));
    await c.connect();
    return { c, counter: 0 };
  }
  const end = (s) => s.c.end();
  const PIPE = { pipeline: true };

  function impl(setup, op, note, extra) {
    return Object.assign({ setup, op, teardown: end, note, io }, extra);
  }

  const ops = {};
  ops.connect = {
    setup: (env) => ({ env }),
    op: async (s) => {
      const c = new api.Client(config(s.env, { host: s.env.tcpHost }));
      await c.connect();
      await c.end();
      return null;
    },
    teardown: () => {},
    note: 'new Client over TCP, connect(), end()',
    io,
  };
  ops.simple_seq = impl(client, async (s) => {
    const r = await s.c.query(h.SQL.simpleSeq);
    h.expectRows(r.rows, 1, 'select 1');
    h.expectEq(r.rows[0]['?column?'], 1, 'select 1');
    return h.sumHex(1);
  }, "client.query(text) without values: a Simple Query message");
  ops.c_rtt = ops.simple_seq;
  ops.simple_conc = impl((env) => client(env, PIPE), async (s) => {
    const n = 100, first = s.counter + 1;
    const calls = [];
    for (let i = 0; i < n; i++) calls.push(s.c.query(`select ${++s.counter}`));
    const res = await Promise.all(calls);
    for (let i = 0; i < n; i++) h.expectEq(res[i].rows[0]['?column?'], first + i, 'simple concurrent');
    return null;
  }, '100 client.query(text) calls in Promise.all on a `pipeline: true` client (Query messages pipelined)');
  ops.simple_fetch = impl(client, async (s) => {
    const r = await s.c.query(h.SQL.simpleFetch);
    return h.mixedChecksum(r.rows, 1000);
  }, 'client.query(text): Simple Query, values decoded by pg-types', { domain: 'json-objects' });
  ops.ext_seq = impl(client, async (s) => {
    const v = ++s.counter;
    const r = await s.c.query(h.SQL.extSeq, [v]);
    h.expectRows(r.rows, 1, 'ext seq');
    h.expectEq(r.rows[0].int4, v, 'ext seq');
    return h.sumHex(0);
  }, 'client.query(text, [value]): unnamed statement, text format');
  ops.ext_conc = impl((env) => client(env, PIPE), async (s) => {
    const first = s.counter + 1, calls = [];
    for (let i = 0; i < 50; i++) calls.push(s.c.query(h.SQL.extSeq, [++s.counter]));
    const res = await Promise.all(calls);
    for (let i = 0; i < 50; i++) h.expectEq(res[i].rows[0].int4, first + i, 'ext concurrent');
    return null;
  }, '50 client.query(text, [value]) in Promise.all on a `pipeline: true` client');
  ops.mixed_text = impl(client, async (s) => {
    const r = await s.c.query(h.SQL.mixed, [1000]);
    return h.mixedChecksum(r.rows, 1000);
  }, 'client.query(text, [1000]), text format (pg-types)', { domain: 'json-objects' });
  ops.blob_fetch = impl(client, async (s) => {
    const r = await s.c.query(h.SQL.blob, [10]);
    return h.blobChecksum(r.rows, s.sz);
  }, 'client.query(text, [10]), text format: bytea as hex, decoded to a Buffer by pg-types');
  ops.array_fetch = impl(client, async (s) => {
    const r = await s.c.query(h.SQL.array, [10]);
    return h.arrayChecksum(r.rows, s.sz);
  }, "client.query(text, [10]), text format (pg-types' binary int4[] parser is wrong for negative values)");
  ops.prep_seq = impl(client, async (s) => {
    const m = new h.Mix();
    for (let id = 1; id <= 50; id++) {
      const r = await s.c.query({ name: 'bench_prep', text: h.SQL.prep, values: [id] });
      h.prepRow(m, r.rows, id);
    }
    return m.hex();
  }, 'named statement ({name, text, values}): parsed once, executed 50 times');
  ops.prep_conc = impl(async (env) => {
    const s = await client(env, PIPE);
    await s.c.query({ name: 'bench_prep', text: h.SQL.prep, values: [1] }); // prime (seed 001)
    return s;
  }, async (s) => {
    const ids = [], calls = [];
    for (let i = 0; i < 50; i++) {
      const id = (s.counter++ % 1000) + 1;
      ids.push(id);
      calls.push(s.c.query({ name: 'bench_prep', text: h.SQL.prep, values: [id] }));
    }
    const res = await Promise.all(calls);
    const m = new h.Mix();
    for (let i = 0; i < 50; i++) h.prepRow(m, res[i].rows, ids[i]);
    return null;
  }, '50 executions of a named statement in Promise.all on a `pipeline: true` client (statement primed once)');
  // Per-Connection Ceiling: no one-Sync batch call in its API; a `pipeline: true`
  // client writes every queued query at once, each with its own Sync. pg-native
  // 3.9's pipeline mode hangs here with 1,000 calls in flight (never answers), so
  // it runs the 10,000 as prep_conc does: 50 in flight at a time.
  const CEIL_ROUND = native ? 50 : Infinity;
  ops.ceiling = impl(async (env) => {
    const s = await client(env, PIPE);
    await s.c.query({ name: 'bench_ceil', text: h.SQL.extSeq, values: [1] }); // prepare it once
    return s;
  }, async (s) => {
    const n = s.sz.ceiling, rows = [];
    for (let base = 0; base < n; base += CEIL_ROUND) {
      const calls = [];
      for (let i = base; i < n && i < base + CEIL_ROUND; i++)
        calls.push(s.c.query({ name: 'bench_ceil', text: h.SQL.extSeq, values: [i + 1] }));
      for (const r of await Promise.all(calls)) rows.push(r.rows);
    }
    return h.ceilingChecksum(rows, 'int4');
  }, native
    ? '10,000 executions of a named statement on a `pipeline: true` client (libpq pipeline mode), 50 at a time in Promise.all as prep_conc: with 1,000 in flight its pipeline mode hangs here; each with its own Sync, statement prepared once'
    : '10,000 executions of a named statement in Promise.all on a `pipeline: true` client: all in flight, each with its own Sync (no one-Sync batch in its API); statement prepared once');
  ops.unit_of_work = impl(async (env) => {
    const s = await client(env, PIPE);
    const r = await s.c.query('select v from bench_uow where id between 1 and 5 order by id');
    s.expect = r.rows.map((x) => Number(x.v));
    return s;
  }, async (s) => {
    const calls = [];
    for (let k = 0; k < 20; k++) calls.push(s.c.query(h.uowSql(k), h.uowIsRead(k) ? [] : [1]));
    for (let i = 0; i < 5; i++) s.expect[i]++;
    const res = await Promise.all(calls);
    for (let k = 0; k < 20; k++) {
      if (h.uowIsRead(k)) h.expectEq(Number(res[k].rows[0].v), s.expect[k - 10], `uow read ${k}`);
      else h.expectEq(res[k].rowCount, 1, `uow write ${k}`);
    }
    return null;
  }, '20 client.query() calls in Promise.all on a `pipeline: true` client (a Sync after each: pg cannot share one)');
  if (!native) {
    const { from } = require('pg-copy-streams');
    ops.copy_text = impl(async (env, sz) => {
      const s = await client(env);
      s.rows = h.copyRows(sz.copy_rows);
      return s;
    }, async (s) => {
      await s.c.query('TRUNCATE bench_copy');
      const stream = s.c.query(from(h.SQL.copyCsv));
      await new Promise((resolve, reject) => {
        stream.on('error', reject);
        stream.on('finish', resolve);
        (async () => {
          for (const chunk of h.csvChunks(s.rows))
            if (!stream.write(chunk)) await new Promise((r) => stream.once('drain', r));
          stream.end();
        })().catch(reject);
      });
      h.expectEq(stream.rowCount, s.sz.copy_rows, 'copy rows');
      return null;
    }, 'TRUNCATE, then pg-copy-streams from(): CSV formatted in the timed call, written in ~256 KiB chunks');
    const Cursor = require('pg-cursor');
    ops.cursor = impl(client, async (s) => {
      const sum = new h.StreamSum();
      const cur = s.c.query(new Cursor(h.cursorSql(s.sz)));
      for (;;) {
        const rows = await cur.read(500);
        for (let i = 0; i < rows.length; i++) sum.row(rows[i].i, rows[i].t, rows[i].f);
        if (rows.length < 500) break;
      }
      await cur.close();
      return sum.check(s.sz);
    }, 'pg-cursor, read(500) until the portal is drained');
  }
  function pooled(sql, withParam) {
    return {
      setup: (env, sz) => ({ pool: new api.Pool(config(env, { max: sz.pool_size })), n: sz.pool_conc }),
      op: async (s) => {
        const calls = [];
        for (let i = 0; i < s.n; i++) calls.push(withParam ? s.pool.query(sql, [i]) : s.pool.query(sql));
        const res = await Promise.all(calls);
        for (let i = 0; i < s.n; i++) h.expectEq(res[i].rows[0].one, withParam ? i : 1, 'pooled');
        return null;
      },
      teardown: (s) => s.pool.end(),
      note: `${native ? 'pg.native' : 'pg'}.Pool({max: 10}), 1000 pool.query() in Promise.all`,
      io,
    };
  }
  ops.pool_simple = pooled(h.SQL.poolSimple, false);
  ops.pool_ext = pooled(h.SQL.poolExt, true);
  for (const n of [1, 100, 500]) {
    const q = { name: `bench_b_${n}`, text: h.SQL.b(n) };
    ops[`b_seq_${n}`] = impl(client, async (s) => {
      const r = await s.c.query(q);
      return h.sumHex(h.bRows(r.rows, n));
    }, 'named statement, one at a time');
    ops[`b_pipe_${n}`] = impl(async (env) => {
      const s = await client(env, PIPE);
      await s.c.query(q); // prime the statement (seed 001)
      return s;
    }, async (s) => {
      const calls = [];
      for (let i = 0; i < 10; i++) calls.push(s.c.query(q));
      const res = await Promise.all(calls);
      let t = 0;
      for (let i = 0; i < 10; i++) t += h.bRows(res[i].rows, n);
      return h.sumHex(t);
    }, '10 executions of a named statement in Promise.all on a `pipeline: true` client');
  }

  const REASONS = {
    mixed_binary: "Not Fully Supported: pg-types has no binary parsers for varchar/json/jsonb/bytea",
    copy_binary: 'No binary COPY encoding',
    copy_text: 'No COPY API: pg-copy-streams needs the JavaScript client',
    cursor: 'Not Supported: pg-cursor needs the JavaScript client',
    c_speed: 'suite C is run for the C libraries only',
  };
  return { lookup: (id) => h.lookup(ops, REASONS, id) };
};
