'use strict';
// postgres.js's logical replication subscription (sql.subscribe) counting
// the inserts of one published table, for bench/repl.py (suite R).
//
//   node bench/node/repl.js NCHANGES PUBLICATION TABLE
//
// postgres.js makes its own temporary pgoutput slot when it subscribes and
// starts the stream at that slot's consistent point. To decode WAL written
// before the timed span, as the other consumers do, START_REPLICATION is held
// back: once the slot exists this prints {"ready": true} and waits for a line
// on stdin (the runner writes the changes meanwhile, then says go). The timed
// span runs from that line to the NCHANGES-th insert handed to the callback:
// wall time and process.cpuUsage() (user+sys of this process). The last line
// printed is the JSON result; the connection info comes from PG* variables.
const postgres = require('postgres');

const [nArg, publication, table] = process.argv.slice(2);
const want = Number(nArg);
const sql = postgres({ max: 1, publications: publication, onnotice: () => {} });
const repl = sql.subscribe.sql; // the replication connection subscribe() uses

let go;
const started = new Promise((resolve) => (go = resolve));
const unsafe = repl.unsafe.bind(repl);
repl.unsafe = (text, ...rest) => {
  if (!/^START_REPLICATION/.test(text)) return unsafe(text, ...rest);
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  return { writable: async () => { await started; return unsafe(text, ...rest).writable(); } };
};

let changes = 0, idSum = 0, t0, cpu0;
const done = new Promise((resolve, reject) => {
  sql.subscribe('insert:public.' + table, (row) => {
    idSum += Number(row.id);
    if (++changes === want) resolve();
  }, () => {}, reject).catch(reject);
});

process.stdin.once('data', () => {
  t0 = process.hrtime.bigint();
  cpu0 = process.cpuUsage();
  go();
});

done.then(() => {
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const ok = idSum === want * (want + 1) / 2;
  const res = {
    status: ok ? 'ok' : 'failed', lib: 'postgres', changes, seconds: secs,
    changes_per_s: changes / secs, cpu_ns_per_change: (cpu.user + cpu.system) * 1000 / changes,
    vmhwm_kb: Math.round(process.resourceUsage().maxRSS),
  };
  if (!ok) res.reason = 'id sum ' + idSum + ', want ' + want * (want + 1) / 2;
  process.stdout.write(JSON.stringify(res) + '\n');
  process.exit(0);
}, (e) => {
  process.stdout.write(JSON.stringify({ status: 'failed', lib: 'postgres', reason: String(e) }) + '\n');
  process.exit(1);
});
