'use strict';
// node bench/node/driver.js --lib pg|pg-native|postgres|postgrejs --scenario ID [--scale S]
// Runs one (library, scenario) pair and prints one JSON object (see harness.js).
// Exit status: 0 ok or unsupported, 1 a failed verification or error, 2 usage.
const harness = require('./harness');

const LIBS = {
  pg: () => require('./lib/pg')(false),
  'pg-native': () => require('./lib/pg')(true),
  postgres: () => require('./lib/postgres'),
  postgrejs: () => require('./lib/postgrejs'),
};

function usage() {
  process.stderr.write('usage: node driver.js --lib ' + Object.keys(LIBS).join('|') + ' --scenario ID [--scale S]\n');
  process.exit(2);
}

async function main() {
  let lib = null, scenario = null, scale = 1;
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--lib' && i + 1 < a.length) lib = a[++i];
    else if (a[i] === '--scenario' && i + 1 < a.length) scenario = a[++i];
    else if (a[i] === '--scale' && i + 1 < a.length) scale = Number(a[++i]);
    else usage();
  }
  if (!lib || !scenario || !(scale > 0) || !LIBS[lib]) usage();
  for (const k of ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE'])
    if (!process.env[k]) {
      process.stderr.write('driver.js: PGHOST, PGPORT, PGUSER and PGDATABASE must be set\n');
      process.exit(2);
    }
  let mod;
  try {
    mod = LIBS[lib]();
  } catch (e) {
    // A library that could not be installed on this machine (pg-native needs a compiler).
    process.stdout.write(JSON.stringify({ lib, scenario, status: 'unsupported', reason: `not installed here (${String(e.message).split('\n')[0]})` }) + '\n');
    return 0;
  }
  const found = mod.lookup(scenario);
  return harness.runScenario(lib, scenario, scale, found.impl, found.reason);
}

// process.exit() does not wait for stdout to drain: a result larger than the
// pipe's buffer (10,000 samples make about 64 KiB) could be cut off. Exit once
// everything written before has been flushed (a write's callback runs after
// the earlier writes').
function exitFlushed(rc) {
  process.stdout.write('', () => process.exit(rc));
}

main().then(
  (rc) => exitFlushed(rc),
  (e) => {
    process.stdout.write(JSON.stringify({ status: 'failed', reason: String(e && e.stack ? e.stack : e) }) + '\n');
    exitFlushed(1);
  },
);
