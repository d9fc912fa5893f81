#!/usr/bin/env python3
"""The bench runner: spawns pgw-bench-driver once per (library, scenario, run),
one at a time, collects each run's JSON, and writes bench/RESULTS.md,
bench/results/*.json and bench/results/ratios.svg.

Python 3 standard library only. Called by bench/run.sh, which provides the
server (PG* variables) and the driver; it can also be run by hand:

    python3 bench/runner.py --driver build-bench/bench/pgw-bench-driver
    python3 bench/runner.py --render-only      # rebuild RESULTS.md from results/

Exit status: 0 when every scenario that a library claims to run ran and
verified its answers, 1 otherwise (the report is written either way).
"""
import argparse
import datetime
import itertools
import json
import math
import os
import platform
import re
import subprocess
import sys

import repl  # suite R (bench/repl.py)
import replicas  # suite P (bench/replicas.py)
import suited  # suites D and T (bench/suited.py)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

C_LIBS = ["libpgwire", "libpgwire-blocking", "libpq", "floor"]
# The seeds' own libraries and the fastest client a Python user would pick, in
# their own processes (bench/node/driver.js, bench/python/driver.py), as rows
# after libpq; the floor stays last. BENCH_PEERS=0 leaves them out.
NODE_PEERS = ["pg", "pg-native", "postgres", "postgrejs"]
PY_PEERS = ["asyncpg", "asyncpg-uvloop"]
PEERS = NODE_PEERS + PY_PEERS
# libpgwire's own Python package (examples/python, its asyncio path) run by
# bench/python/driver.py beside asyncpg: not a peer (it is libpgwire, so a
# wrong answer fails the run, and it is no "fastest peer"), but measured as
# one (a GC runtime) and run with them (BENCH_PEERS=0 leaves it out too).
OWN_PY = ["pgwire-py"]
PY_LIBS = PY_PEERS + OWN_PY
ALL_LIBS = (["libpgwire", "libpgwire-blocking", "libpq"] + PEERS + OWN_PY +
            ["libpgwire-nocache", "libpgwire-autoprep", "libpgwire-single", "floor"])
LIBS = list(C_LIBS)  # the libraries of this run (main() adds the peers)
LIB_NAMES = {
    "libpgwire": "libpgwire (async)",
    "libpgwire-blocking": "libpgwire (blocking)",
    "libpq": "libpq",
    "pg": "pg (node-postgres)",
    "pg-native": "pg-native (libpq)",
    "postgres": "postgres (postgres.js)",
    "postgrejs": "PostgreJS",
    "asyncpg": "asyncpg (asyncio)",
    "asyncpg-uvloop": "asyncpg (uvloop)",
    "pgwire-py": "libpgwire from Python (ctypes, asyncio)",
    "libpgwire-single": "libpgwire, 1 connection (reference)",
    "libpgwire-nocache": "libpgwire (async), statement cache off (reference)",
    "libpgwire-autoprep": "libpgwire (async), plain queries through the statement cache (reference)",
    "floor": "wire floor",
}
# Reference rows: measured like the libraries but outside the ranking (never
# bold, not the slowest): the wire floor, and on the pool scenarios libpgwire
# with all the calls pipelined on one connection, what a pool has to beat.
POOL_IDS = ("pool_simple", "pool_ext", "pool_simple_pgbouncer")
# On the Extended Query scenarios, libpgwire with the statement cache off:
# the rows as they were before the cache (which must make none slower).
# On Prepared Statement Reuse, the same SQL run as plain queries, which the
# cache prepares by itself: what an application gets without preparing.
CACHE_IDS = ("ext_seq", "ext_conc")
PREP_IDS = ("prep_seq", "prep_conc")
REFERENCE = ("libpgwire-nocache", "libpgwire-autoprep", "libpgwire-single", "floor")
ONLY_IN = {"libpgwire-single": POOL_IDS, "libpgwire-nocache": CACHE_IDS,
           "libpgwire-autoprep": PREP_IDS}


def libs_for(sid):
    """The rows of one scenario: LIBS, less the reference rows of other scenarios."""
    return [l for l in LIBS if l not in ONLY_IN or sid in ONLY_IN[l]]

BASE_LIB_NAMES = dict(LIB_NAMES)
# Checksums that must agree across scenarios too: the same 1000 rows decoded
# through Simple Query, text and binary.
CHECKSUM_GROUP = {sid: "mixed" for sid in ("simple_fetch", "mixed_text", "mixed_binary",
                                            "simple_fetch_buffered", "mixed_text_buffered",
                                            "mixed_binary_buffered")}
BUFFERED_NOTE = (
    " **Buffered**: libpgwire keeps the whole result (pgw_result_t) and only then reads it, as "
    "a program that keeps its rows does: the async driver row by row (pgw_result_row), the "
    "blocking one cell by cell (pgw_result_value), both through the typed getters; the "
    "scenario above streams the rows instead. libpq and the floor do the same work in both "
    "rows (their measurements are separate runs of the same code).")

# (id, group, title, description) in seed 000's order.
SUITE_A = [
    ("connect", "Connection", "Connect",
     "Open a connection over TCP (127.0.0.1), startup and trust auth to ReadyForQuery, close. "
     "TLS and GSS encryption are off for every client (`sslmode=disable gssencmode=disable` for "
     "libpq), so the handshake is the protocol's, not OpenSSL's."),
    ("connect_tls", "Connection", "Connect over TLS",
     "The same over TLS: sslmode=require against the cluster's certificate, TLS 1.3, handshake, "
     "startup and trust auth, close; libpgwire and libpq only (the floor has no TLS client)."),
    ("connect_gss", "Connection", "Connect over GSS encryption",
     "The same with Kerberos: gssencmode=require (sslmode=disable) against a cluster of a "
     "throwaway realm (tests/pg/kdc.sh: MIT KDC on loopback), the service ticket cached after "
     "the first connect as GSS-API caches it for both; GSSENCRequest, the context tokens, "
     "startup and GSS authentication inside the encrypted channel, close; libpgwire and libpq "
     "only."),
    ("simple_seq", "Simple Query", "Sequential Execution",
     "`select 1`, one call at a time on an open connection, each answer checked."),
    ("simple_conc", "Simple Query", "Concurrent Execution",
     "100 Simple Query calls with distinct literals (`select <n>`) on ONE connection, each answer "
     "checked against its literal."),
    ("simple_fetch", "Simple Query", "Simple Query Fetch",
     "1000 mixed-type rows (no int8) through Simple Query, every value decoded."),
    ("simple_fetch_buffered", "Simple Query", "Simple Query Fetch (buffered)",
     "The same 1000 rows into a buffered result, then every value decoded." + BUFFERED_NOTE),
    ("ext_seq", "Extended Query", "Sequential Execution",
     "`select $1::int4`, a bound parameter, one call at a time; every answer checked."),
    ("ext_conc", "Extended Query", "Concurrent Execution",
     "50 `select $1::int4` calls in flight on one connection, distinct values, each with its own "
     "Sync; every answer checked."),
    ("mixed_text", "Extended Query", "Mixed-Type Decode (Text)",
     "1000 rows of int2/int4/float4/float8/varchar/json/jsonb/timestamp/timestamptz/bytea, row "
     "count as $1, text format, every value decoded (numbers parsed, timestamps to microseconds, "
     "bytea un-hexed)."),
    ("mixed_binary", "Extended Query", "Mixed-Type Decode (Binary)",
     "The same 1000 rows in binary format, every value decoded. The text and binary scenarios must "
     "produce the same checksum of decoded values."),
    ("mixed_text_buffered", "Extended Query", "Mixed-Type Decode (Text, buffered)",
     "The text scenario into a buffered result, then every value decoded." + BUFFERED_NOTE),
    ("mixed_binary_buffered", "Extended Query", "Mixed-Type Decode (Binary, buffered)",
     "The binary scenario into a buffered result, then every value decoded." + BUFFERED_NOTE),
    ("blob_fetch", "Extended Query", "Large Blob Fetch",
     "10 rows of a 1 MiB bytea, row count as $1; the length and a sampled byte pattern of every "
     "value are checked."),
    ("blob_fetch_tls", "Extended Query", "Large Blob Fetch over TLS",
     "The same 10 x 1 MiB over TCP with sslmode=require: decryption is in the measured path; "
     "libpgwire and libpq only."),
    ("array_fetch", "Extended Query", "Large Array Fetch",
     "10 rows of int4[50000], full-width values, half negative; every element decoded and checked."),
    ("prep_seq", "Extended Query", "Prepared Statement Reuse (Sequential)",
     "Prepare once, execute 50 times one at a time (one operation = 50 executions)."),
    ("prep_conc", "Extended Query", "Prepared Statement Reuse (Concurrent)",
     "50 executions of one prepared statement in flight, each with its own Sync."),
    ("ceiling", "Extended Query", "Per-Connection Ceiling",
     "{ceiling} executions of one prepared `select $1::int4` (values 1..{ceiling}) pipelined on "
     "one connection with one Sync, every answer checked; one operation is one batch, so "
     "queries per second are {ceiling} / mean and CPU per query is CPU per op / {ceiling}. "
     "libpq in pipeline mode (it flushes as its buffer fills); libpgwire writes the batch in "
     "parts while it encodes it (PGW_BATCH_STREAM) and keeps no result object "
     "(PGW_Q_NO_RESULT); the floor writes the pre-encoded batch at once."),
    ("unit_of_work", "Unit of Work", "Unit of Work",
     "20 different statements (10 writes, 5 reads, 5 writes) sent without waiting, one Sync; the "
     "reads must see the writes' counters."),
    ("copy_text", "Bulk Load", "Bulk Load (text COPY)",
     "TRUNCATE + COPY FROM STDIN of {copy_rows} CSV rows (10-digit int4, 19-digit int8, float8 "
     "with 17 significant digits, 40-char varchar), formatting inside the timed call; the loaded "
     "row count is checked, and once per run (after the timed loop, C drivers) count(*) and a "
     "server-side checksum of every value in the table."),
    ("copy_binary", "Bulk Load", "Bulk Load (binary COPY)",
     "The same rows through the library's binary COPY row encoder; libpq, which has none, "
     "carries rows the harness encodes by hand (the PGCOPY format, a fixed four-column row "
     "writer) inside the timed call: the hand-built loop a libpq program would write."),
    ("cursor", "Cursor Streaming", "Cursor Streaming",
     "{cursor_rows} rows (int4, text, float8) through a server-side portal/cursor in batches of "
     "500 (or streamed row by row where that is the library's fastest way), every value decoded."),
    ("pool_simple", "Connection Pooling", "Pooled Simple Query",
     "1000 concurrent `select 1 as one` through a pool of 10 connections, each call its own "
     "Simple Query (its own implicit transaction), every answer checked. Reference rows: the "
     "floor's 10 raw connections with 100 pipelined calls each, and the 1000 calls pipelined on "
     "one libpgwire connection."),
    ("pool_ext", "Connection Pooling", "Pooled Extended Query",
     "1000 concurrent `select $1::int4 as one` through a pool of 10 connections, distinct "
     "values, each call with its own Sync; every answer checked against its value."),
    ("pool_simple_pgbouncer", "Connection Pooling", "Pooled Simple Query through PgBouncer",
     "Pooled Simple Query with PgBouncer (transaction mode, default_pool_size 10, on this "
     "machine, started by bench/run.sh with tests/pg/pgbouncer.sh) between the clients and the "
     "server: the same 10 client connections, 10 server connections behind them. libpgwire "
     "connects with `stmt_cache_mode = PGW_STMT_UNNAMED`, the setting transaction mode needs. "
     "Read it against Pooled Simple Query above: the difference is the bouncer's hop."),
]
PAYLOAD = {"blob_fetch", "blob_fetch_tls", "array_fetch", "copy_text", "copy_binary"}

SUITE_B = [("b_seq_1", "Sequential", 1), ("b_seq_100", "Sequential", 100),
           ("b_seq_500", "Sequential", 500), ("b_pipe_1", "Pipelined x10", 1),
           ("b_pipe_100", "Pipelined x10", 100), ("b_pipe_500", "Pipelined x10", 500)]

failures = []
wrong_answers = []  # peers whose decoded values disagree with the other libraries'


def log(msg):
    print("[bench] " + msg, file=sys.stderr, flush=True)


# ---- running ------------------------------------------------------------------
def driver_cmd(args, lib):
    if lib in NODE_PEERS:
        return [args.node, os.path.join(HERE, "node", "driver.js")]
    if lib in PY_LIBS:
        return [args.python, os.path.join(HERE, "python", "driver.py")]
    return [args.driver]


def run_driver(args, lib, scenario, label):
    log(label)
    cmd = driver_cmd(args, lib) + ["--lib", lib, "--scenario", scenario, "--scale", str(args.scale)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        res = {"lib": lib, "scenario": scenario, "status": "failed",
               "reason": "timed out after %ds" % args.timeout}
        failures.append("%s / %s: %s" % (lib, scenario, res["reason"]))
        return res
    except OSError as e:  # the runtime itself is missing
        res = {"lib": lib, "scenario": scenario, "status": "failed",
               "reason": "cannot start %s: %s" % (cmd[0], e)}
        failures.append("%s / %s: %s" % (lib, scenario, res["reason"]))
        return res
    if p.stderr.strip():
        sys.stderr.write(p.stderr)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {"lib": lib, "scenario": scenario, "status": "failed",
               "reason": "no JSON from the driver (exit %d): %s" % (p.returncode,
                                                                    p.stderr.strip()[-300:])}
    if p.returncode != 0 and res.get("status") == "ok":
        res["status"] = "failed"
        res["reason"] = "driver exit %d" % p.returncode
    if res.get("status") == "failed":
        failures.append("%s / %s: %s" % (lib, scenario, res.get("reason")))
        log("FAILED %s / %s: %s" % (lib, scenario, res.get("reason")))
    return res


def selected(args, scenario):
    return not args.filter or re.search(args.filter, scenario)


def checkpoint():
    """Start a run of a write-heavy scenario from the same server state: a
    checkpoint, so no library's run pays for the WAL an earlier one wrote.
    Best effort (needs a superuser; an external server may refuse)."""
    subprocess.run(["psql", "-X", "-q", "-c", "CHECKPOINT"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def run_interleaved(args, suite, sid, before=None):
    """BENCH_REPS runs of every library for one scenario, interleaved: run k
    goes through the libraries starting at a different one each time
    (A B C D, B C D A, ...), so slow drift on the server (caches, WAL,
    autovacuum) does not always land on the same library."""
    libs = libs_for(sid)
    runs = {lib: [] for lib in libs}
    done = set()
    for rep in range(args.reps):
        order = libs[rep % len(libs):] + libs[:rep % len(libs)]
        for lib in order:
            if lib in done:
                continue
            if before:
                before()
            r = run_driver(args, lib, sid, "%s %s %s run %d/%d" % (suite, lib, sid, rep + 1,
                                                                   args.reps))
            runs[lib].append(r)
            if r.get("status") != "ok":
                done.add(lib)  # unsupported / not yet implemented / failed: no point repeating
    for lib in libs:
        save(args, "%s.%s.json" % (sid, lib), {"scenario": sid, "lib": lib, "runs": runs[lib]})
    return runs


def run_suite_a(args):
    out = {}
    for sid, _, _, _ in SUITE_A:
        if selected(args, sid):
            out[sid] = run_interleaved(args, "A", sid)
    return out


def suite_b_orders(libs):
    """Every execution order of the libraries (seed 001) while that is at most
    24 orders; beyond that (the peers make 9 libraries, 362880 orders) the n
    rotations of the fixed order, a Latin square: every library runs once in
    every position."""
    if len(libs) <= 4:
        return list(itertools.permutations(libs))
    return [tuple(libs[i:] + libs[:i]) for i in range(len(libs))]


def run_suite_b(args):
    """Every group under every execution order of the libraries (see
    suite_b_orders); the floor runs after the libraries in every order, as a
    reference outside the ranking."""
    libs = [l for l in libs_for("b") if l != "floor"]
    orders = suite_b_orders(libs)
    out = {}
    for gid, _, _ in SUITE_B:
        if not selected(args, gid):
            continue
        per_lib = {l: [] for l in libs_for(gid)}
        skip = set()
        for oi, order in enumerate(orders):
            for lib in list(order) + ["floor"]:
                if lib in skip:
                    continue
                r = run_driver(args, lib, gid, "B %s %s order %d/%d" % (lib, gid, oi + 1,
                                                                       len(orders)))
                r["order"] = oi
                per_lib[lib].append(r)
                if r.get("status") != "ok":
                    skip.add(lib)
        out[gid] = per_lib
        for lib in libs_for(gid):
            save(args, "%s.%s.json" % (gid, lib), {"scenario": gid, "lib": lib,
                                                   "runs": per_lib[lib]})
    return out


def run_suite_c(args):
    """The C libraries only: the peers' rows stop at suites A and B."""
    global LIBS
    saved, LIBS = LIBS, list(C_LIBS)
    out = {}
    try:
        for sid in ("c_speed", "c_rtt"):
            if selected(args, sid):
                out[sid] = run_interleaved(args, "C", sid,
                                           before=checkpoint if sid == "c_speed" else None)
    finally:
        LIBS = saved
    return out


def save(args, name, obj, subdir=""):
    d = os.path.join(args.results, subdir)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        json.dump(obj, f)


# The results of the suite modules (suited, repl, replicas), each in a
# directory of its own under args.results: cleared when the module runs,
# read back for --render-only.
def clear_saved(args, subdir):
    d = os.path.join(args.results, subdir)
    if os.path.isdir(d):
        for name in os.listdir(d):
            os.remove(os.path.join(d, name))


def load_saved(args, subdir, suites):
    """{suite: results} for each of suites with results saved in subdir."""
    out = {}
    for s in suites:
        path = os.path.join(args.results, subdir, s + ".json")
        if os.path.exists(path):
            with open(path) as f:
                out[s] = json.load(f)
    return out


# ---- statistics ------------------------------------------------------------------
def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def quantile(sorted_xs, q):
    if not sorted_xs:
        return None
    k = (len(sorted_xs) - 1) * q
    lo = math.floor(k)
    hi = math.ceil(k)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def per_op(r, key, unit):
    """A per-operation figure of a run in the given unit; None where the
    library's driver cannot measure it (allocations in a GC runtime, GC in C)."""
    v = r.get(key)
    return None if v is None else v / unit


def run_metrics(r):
    s = sorted(r["samples_ns"])
    mean = sum(s) / len(s) / 1e6
    m = {
        "mean": mean,
        "p50": quantile(s, 0.5) / 1e6,
        "p75": quantile(s, 0.75) / 1e6,
        "p99": quantile(s, 0.99) / 1e6,
        "ops": 1000.0 / mean if mean > 0 else 0,
        "cpu": r["cpu_ns_per_op"] / 1e6,
        "gc": per_op(r, "gc_ns_per_op", 1e6),
        "allocs": per_op(r, "allocs_per_op", 1),
        "akb": per_op(r, "alloc_bytes_per_op", 1024),
        "rss": r["peak_rss_kb"],
        "netin": per_op(r, "net_in_per_op", 1024),
        "netout": per_op(r, "net_out_per_op", 1024),
    }
    return m


COLS = [("mean", "Mean (ms)", "low", 3), ("spread", "Spread (%)", None, 0),
        ("p50", "p50 (ms)", "low", 3), ("p75", "p75 (ms)", "low", 3),
        ("p99", "p99 (ms)", "low", 3), ("ops", "ops/sec", "high", 1),
        ("vs_slowest", "vs. slowest", "high", 2), ("vs_floor", "vs floor", "low", 2),
        ("cpu", "CPU (ms/op)", "low", 4), ("gc", "GC (ms/op)", "low", 4),
        ("allocs", "Allocs/op", "low", 1),
        ("akb", "Alloc KB/op", "low", 2), ("rss", "Peak RSS (KB)", "low", 0)]
NET_COLS = [("netin", "Net in (KB/op)", "low", 2), ("netout", "Net out (KB/op)", "low", 2)]


def summarize(runs):
    """Median over runs of each column, plus each column's min..max (the tie band)."""
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return None
    per = [run_metrics(r) for r in ok]
    med, band = {}, {}
    for k in per[0]:
        vals = [p[k] for p in per if p[k] is not None]
        med[k] = median(vals) if vals else None
        band[k] = (min(vals), max(vals)) if vals else (None, None)
    return {"med": med, "band": band, "per": per, "n": len(ok), "first": ok[0]}


def unmeasured(lib, key):
    """The cell of a column a library's driver cannot measure."""
    if key in ("allocs", "akb") and (lib in PEERS or lib in OWN_PY):
        return "n/a (GC runtime)"
    if key in ("netin", "netout") and (lib in PEERS or lib in OWN_PY):
        return "n/a"
    return "—"


def fmt(v, digits):
    if v is None:
        return "—"
    if digits == 0:
        return "%d" % round(v)
    return "%.*f" % (digits, v)


# ---- report ---------------------------------------------------------------------
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, timeout=20).stdout.strip()
    except Exception:
        return ""


NODE_PACKAGES = ["pg", "pg-native", "libpq", "pg-types", "pg-copy-streams", "pg-cursor", "postgres",
                 "postgrejs"]


def peer_versions(args):
    """The versions the peers' drivers load: the runtimes and the installed
    packages (not package.json's ranges)."""
    v = {}
    if not args.peers:
        return v
    v["node"] = sh("'%s' --version" % args.node)
    for name in NODE_PACKAGES:
        try:
            with open(os.path.join(HERE, "node", "node_modules", name, "package.json")) as f:
                v[name] = json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            v[name] = ""
    if v.get("libpq") and not os.path.exists(os.path.join(HERE, "node", "node_modules", "libpq",
                                                          "build", "Release", "addon.node")):
        v["pg-native"] = ""  # its libpq binding did not build here
    py = sh("'%s' -c 'import sys, asyncpg; print(sys.version.split()[0], asyncpg.__version__)'"
            % args.python).split()
    v["python"], v["asyncpg"] = (py + ["", ""])[:2]
    v["uvloop"] = sh("'%s' -c 'import uvloop; print(uvloop.__version__)'" % args.python)
    return v


PEER_VERSION_KEY = {"pg": "pg", "pg-native": "pg-native", "postgres": "postgres",
                    "postgrejs": "postgrejs", "asyncpg": "asyncpg", "asyncpg-uvloop": "asyncpg"}


def name_libraries(env):
    """Row names carry the versions measured, as seed 000's do."""
    v = env.get("peers") or {}
    for lib, key in PEER_VERSION_KEY.items():
        if v.get(key):
            extra = " + uvloop %s" % v["uvloop"] if lib == "asyncpg-uvloop" and v.get("uvloop") else ""
            LIB_NAMES[lib] = "%s %s%s" % (BASE_LIB_NAMES[lib], v[key], extra)


def run_stamp():
    """When and at which commit a run measures: {"date", "commit"}."""
    commit = sh("git -C '%s' rev-parse --short HEAD" % ROOT)
    # The run's own output (results/, RESULTS.md) does not make the tree dirty.
    if commit and sh("git -C '%s' status --porcelain -- src include bench "
                     "':!bench/results' ':!bench/RESULTS.md'" % ROOT):
        commit += " (with uncommitted changes)"
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": commit}


def environment():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = "%.1f GB" % (int(line.split()[1]) / 1024 / 1024)
    except OSError:
        pass
    osname = platform.platform()
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"') + ", kernel " + platform.release()
    except OSError:
        pass
    version = ""
    m = re.search(r"project\(pgwire VERSION ([0-9.]+)", open(os.path.join(ROOT, "CMakeLists.txt")).read())
    if m:
        version = m.group(1)
    stamp = run_stamp()
    return {
        "date": stamp["date"],
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram": mem,
        "os": osname,
        "compiler": sh("cc --version | head -1"),
        "server": sh("psql -X -A -t -c 'select version()'"),
        "libpq": sh("pkg-config --modversion libpq"),
        "libpgwire": version,
        "commit": stamp["commit"],
        "libuv": sh("pkg-config --modversion libuv"),
    }


def cell_status(runs):
    if not runs:
        return "not run"
    r = runs[-1]
    st = r.get("status")
    if st == "failed":
        return "FAILED: " + r.get("reason", "")
    if st == "nyi":
        return "Not yet implemented"
    return r.get("reason") or st


def bold_set(rows, key, direction):
    """Libraries whose median is best, or inside the leader's own min..max."""
    libs = [l for l in rows if l not in REFERENCE and rows[l] is not None]
    if not libs:
        return set()
    pick = min if direction == "low" else max
    leader = pick(libs, key=lambda l: rows[l]["med"][key])
    lo, hi = rows[leader]["band"][key]
    out = {leader}
    for l in libs:
        v = rows[l]["med"][key]
        if lo <= v <= hi:
            out.add(l)
    return out


def add_spread(rows):
    """How much a row's mean moved between its runs: (max - min) / median,
    in percent (None with one run). Not a ranking column: never bold."""
    for r in rows.values():
        means = [p["mean"] for p in r["per"]]
        v = (max(means) - min(means)) / r["med"]["mean"] * 100 \
            if len(means) > 1 and r["med"]["mean"] else None
        r["med"]["spread"], r["band"]["spread"] = v, (v, v)


def scenario_table(sid, data):
    libs = libs_for(sid)
    rows = {lib: summarize(data.get(lib, [])) for lib in libs}
    present = {l: r for l, r in rows.items() if r}
    cols = COLS + (NET_COLS if sid in PAYLOAD else [])
    # Derived columns per run, so that they have a band too.
    lib_means = [r["med"]["mean"] for l, r in present.items() if l not in REFERENCE]
    slowest = max(lib_means) if lib_means else None
    floor = present.get("floor")
    for l, r in present.items():
        for p in r["per"]:
            p["vs_slowest"] = slowest / p["mean"] if slowest else None
            p["vs_floor"] = p["mean"] / floor["med"]["mean"] if floor else None
        for k in ("vs_slowest", "vs_floor"):
            vals = [p[k] for p in r["per"] if p[k] is not None]
            r["med"][k] = median(vals) if vals else None
            r["band"][k] = (min(vals), max(vals)) if vals else (None, None)
    add_spread(present)
    bolds = {}
    for key, _, direction, _ in cols:
        measured = {l: r for l, r in present.items() if r["med"].get(key) is not None}
        if measured and direction:
            bolds[key] = bold_set(measured, key, direction)
    head = "| Library | " + " | ".join(c[1] for c in cols) + " |"
    lines = [head, "|---|" + "---:|" * len(cols)]
    for lib in libs:
        runs = data.get(lib, [])
        r = rows[lib]
        if r is None:
            lines.append("| %s | %s |" % (LIB_NAMES[lib], cell_status(runs)) + " — |" * (len(cols) - 1))
            continue
        cells = []
        for key, _, _, digits in cols:
            v = r["med"].get(key)
            s = fmt(v, digits) if v is not None else unmeasured(lib, key)
            if key in ("vs_slowest", "vs_floor") and v is not None:
                s += "x"
            if lib in bolds.get(key, set()):
                s = "**" + s + "**"
            cells.append(s)
        lines.append("| %s | %s |" % (LIB_NAMES[lib], " | ".join(cells)))
    notes = []
    for lib in libs:
        r = rows[lib]
        if r and r["first"].get("note"):
            notes.append("- %s: %s. %d runs, %d timed operations each (after %d warm-up)." % (
                LIB_NAMES[lib], r["first"]["note"].rstrip("."), r["n"], r["first"]["ops"],
                r["first"]["warmup"]))
    if sid in POOL_IDS:
        notes.extend(pool_ratios(rows))
    if sid in CACHE_IDS or sid in PREP_IDS:
        notes.extend(cache_ratio(rows))
    return "\n".join(lines), notes, rows


def cache_ratio(rows):
    """Extended Query: the statement cache's effect, as the mean latency with
    the cache off over the mean with it on (above 1: the cache is faster)."""
    on, off, auto = (rows.get(l) for l in ("libpgwire", "libpgwire-nocache", "libpgwire-autoprep"))
    out = []
    if on and off:
        out.append("- Statement cache: libpgwire (async) with the cache off takes %.2fx the time "
                   "it takes with the cache on (default)." % (off["med"]["mean"] / on["med"]["mean"]))
    if on and auto:
        out.append("- Statement cache: the same SQL as plain queries, prepared by the cache, "
                   "takes %.2fx the time of the explicitly prepared statement."
                   % (auto["med"]["mean"] / on["med"]["mean"]))
    return out


def pgbouncer_ratios(rows, direct_data):
    """Through PgBouncer beside direct: each library's mean latency through
    the bouncer over its mean on the direct scenario, same pool size."""
    out = []
    for lib in ("libpgwire", "libpq", "floor"):
        via, direct = rows.get(lib), summarize(direct_data.get(lib, []))
        if via and direct:
            out.append("- Through PgBouncer beside direct, %s: %.2fx the direct mean latency."
                       % (LIB_NAMES[lib], via["med"]["mean"] / direct["med"]["mean"]))
    return out


def pool_ratios(rows):
    """The pool scenarios' ratios of mean latency to the two reference rows
    (the issue's goal: libpgwire's pool within 10% of the floor)."""
    def mean(lib):
        r = rows.get(lib)
        return r["med"]["mean"] if r else None
    floor, single = mean("floor"), mean("libpgwire-single")
    out = []
    for lib in ("libpgwire", "libpq", "libpgwire-single"):
        m = mean(lib)
        if m is None:
            continue
        parts = []
        if floor:
            parts.append("%.2fx the floor" % (m / floor))
        if single and lib != "libpgwire-single":
            parts.append("%.2fx the single connection" % (m / single))
        if parts:
            out.append("- Ratio of mean latency, %s: %s." % (LIB_NAMES[lib], ", ".join(parts)))
    if mean("libpgwire") is None:
        out.append("- libpgwire (async) has no pool row in this build: the pool (pgwire/pool.h) "
                   "is not in this tree yet.")
    return out


def verify_checksums(*suites):
    """Every library must decode the same values: within a checksum group (a
    scenario, or the three scenarios of the same 1000 mixed rows) and a domain
    (the C formula, or "json-objects" for libraries that hand back json as
    decoded objects, whose checksum folds their content instead of their text
    length), libpq's checksum is the answer (where libpq has none, the one most
    libraries agree on); a library
    with another one gets its cell failed ("wrong answer"). For the C
    libraries that is a failure of the run; for a peer it is a finding about
    the peer, listed under "Wrong answers" (a failure too with
    --strict-peers)."""
    groups = {}
    for data in suites:
        for sid, per in data.items():
            for lib, runs in per.items():
                if lib == "floor":
                    continue
                for r in runs:
                    if r.get("status") == "ok" and r.get("checksum"):
                        key = (CHECKSUM_GROUP.get(sid, sid), r.get("checksum_domain", "c"))
                        groups.setdefault(key, {}).setdefault(lib, set()).add(r["checksum"])
                        r["_sid"] = sid
    for (group, domain), libs in sorted(groups.items()):
        votes = {}
        for lib, sums in libs.items():
            for c in sums:
                votes.setdefault(c, []).append(lib)
        if len(votes) < 2:
            continue
        # libpq's, where libpq has one (the reference: the harness's own C decoders over
        # libpq's bytes); otherwise the one most libraries agree on.
        def rank(c):
            return ("libpq" in votes[c], len(votes[c]), any(l in C_LIBS for l in votes[c]), c)
        answer = max(votes, key=rank)
        for lib, sums in libs.items():
            if sums == {answer}:
                continue
            agree = ", ".join(LIB_NAMES[l] for l in sorted(votes[answer], key=ALL_LIBS.index)
                              if l != lib)
            reason = ("wrong answer: its decoded values differ from those of %s (checksum %s, "
                      "expected %s)" % (agree, ",".join(sorted(sums - {answer})), answer))
            for data in suites:
                for sid, per in data.items():
                    if CHECKSUM_GROUP.get(sid, sid) != group:
                        continue
                    for r in per.get(lib, []):
                        if (r.get("status") == "ok" and r.get("checksum_domain", "c") == domain
                                and r.get("checksum") != answer):
                            r["status"], r["reason"] = "failed", reason
            msg = "%s / %s: %s" % (lib, group, reason)
            (wrong_answers if lib in PEERS else failures).append(msg)
            log("FAILED " + msg)


def suite_b_report(bdata):
    lines = []
    libs = [l for l in libs_for("b") if l != "floor"]
    ratios = {l: {"Sequential": [], "Pipelined x10": [], "Overall": []} for l in libs}
    fastest = {l: {"Sequential": 0, "Pipelined x10": 0, "Overall": 0} for l in libs}
    wins = {l: {"Sequential": 0, "Pipelined x10": 0, "Overall": 0} for l in libs}
    ngroups = {"Sequential": 0, "Pipelined x10": 0, "Overall": 0}
    detail = []
    medians = {}
    for gid, mode, limit in SUITE_B:
        if gid not in bdata:
            continue
        per = bdata[gid]
        pooled = {}
        medians[gid] = pooled
        by_order = {}
        for lib in libs_for(gid):
            ok = [r for r in per.get(lib, []) if r.get("status") == "ok"]
            if not ok:
                continue
            pooled[lib] = median([s for r in ok for s in r["samples_ns"]])
            by_order[lib] = {r["order"]: median(r["samples_ns"]) for r in ok}
        title = "LIMIT %d, %s" % (limit, mode.lower())
        detail.append("\n**%s** (`%s`, %d execution orders, samples pooled per library)\n" % (
            title, SQL_B % limit, len(suite_b_orders([l for l in libs if per.get(l)]))))
        detail.append("| Library | Median (ms) | Mean (ms) | Samples | Queries/s |")
        detail.append("|---|---:|---:|---:|---:|")
        for lib in libs_for(gid):
            ok = [r for r in per.get(lib, []) if r.get("status") == "ok"]
            if not ok:
                detail.append("| %s | %s | — | — | — |" % (LIB_NAMES[lib], cell_status(per.get(lib, []))))
                continue
            allv = [s for r in ok for s in r["samples_ns"]]
            mean = sum(allv) / len(allv)
            qps = 1e9 / mean * (10 if mode != "Sequential" else 1)
            detail.append("| %s | %.4f | %.4f | %d | %.0f |" % (
                LIB_NAMES[lib], pooled[lib] / 1e6, mean / 1e6, len(allv), qps))
        contenders = [l for l in libs if l in pooled]
        if not contenders:
            continue
        best = min(pooled[l] for l in contenders)
        leader = min(contenders, key=lambda l: pooled[l])
        for bucket in (mode, "Overall"):
            ngroups[bucket] += 1
            fastest[leader][bucket] += 1
        # Outright: lower median than every rival in every execution order.
        if len(contenders) > 1:
            outright = all(by_order[leader][o] < by_order[r][o]
                           for r in contenders if r != leader
                           for o in by_order[leader] if o in by_order[r])
            if outright:
                for bucket in (mode, "Overall"):
                    wins[leader][bucket] += 1
        for l in contenders:
            for bucket in (mode, "Overall"):
                ratios[l][bucket].append(pooled[l] / best)
    for bucket in ("Sequential", "Pipelined x10", "Overall"):
        n = ngroups[bucket]
        if n == 0:
            continue
        lines.append("\n**%s (%d groups)**\n" % (bucket, n))
        lines.append("| Library | Relative latency | Slower than best | Fastest median | Outright wins |")
        lines.append("|---|---:|---:|---:|---:|")
        scored = []
        for l in libs:
            rs = ratios[l][bucket]
            if len(rs) == n:
                g = math.exp(sum(math.log(x) for x in rs) / n)
                scored.append((g, l))
        scored.sort()
        for g, l in scored:
            slower = "-" if g == scored[0][0] else "+%.1f%%" % ((g / scored[0][0] - 1) * 100)
            lines.append("| %s | %.3f | %s | %d/%d | %d/%d |" % (
                LIB_NAMES[l], g, slower, fastest[l][bucket], n, wins[l][bucket], n))
        for l in libs:
            if len(ratios[l][bucket]) != n:
                lines.append("| %s | not ranked (did not run every group) | — | — | — |" % LIB_NAMES[l])
    return lines, detail, medians


SQL_B = "SELECT * FROM benchmark_rows ORDER BY id LIMIT %d"


def suite_c_report(cdata):
    lines = []
    speed = cdata.get("c_speed", {})
    rtt = cdata.get("c_rtt", {})
    tests = None
    per_lib = {}
    for lib in C_LIBS:
        ok = [r for r in speed.get(lib, []) if r.get("status") == "ok"]
        if not ok:
            continue
        tests = [(t["id"], t["name"]) for t in ok[0]["tests"]]
        per_lib[lib] = {t["id"]: median([r["tests"][i]["ms"] for r in ok])
                        for i, t in enumerate(ok[0]["tests"])}
    rtt_ms = {}
    for lib in C_LIBS:
        ok = [r for r in rtt.get(lib, []) if r.get("status") == "ok"]
        if ok:
            rtt_ms[lib] = median([sum(r["samples_ns"]) / 1e6 for r in ok])
    lines.append("| Library | Total of the 17 tests (ms) | RTT: 100 × `select 1` (ms) | vs floor (total) |")
    lines.append("|---|---:|---:|---:|")
    floor_total = sum(per_lib["floor"].values()) if "floor" in per_lib else None
    for lib in C_LIBS:
        if lib not in per_lib:
            lines.append("| %s | %s | %s | — |" % (LIB_NAMES[lib], cell_status(speed.get(lib, [])),
                                                   fmt(rtt_ms.get(lib), 2)))
            continue
        tot = sum(per_lib[lib].values())
        lines.append("| %s | %.1f | %s | %s |" % (LIB_NAMES[lib], tot, fmt(rtt_ms.get(lib), 2),
                                                  "%.2fx" % (tot / floor_total) if floor_total else "—"))
    if tests:
        libs = [l for l in C_LIBS if l in per_lib]
        lines.append("\nFull operation table (median ms of the runs; lower is better):\n")
        lines.append("| # | Test | " + " | ".join(LIB_NAMES[l] for l in libs) + " |")
        lines.append("|---|---|" + "---:|" * len(libs))
        for tid, name in tests:
            vals = {l: per_lib[l][tid] for l in libs}
            real = [v for l, v in vals.items() if l != "floor"]
            best = min(real) if real else None
            cells = []
            for l in libs:
                s = "%.2f ms" % vals[l]
                if l != "floor" and vals[l] == best and len(real) > 1:
                    s = "**" + s + "**"
                cells.append(s)
            lines.append("| %s | %s | %s |" % (tid, name, " | ".join(cells)))
    return lines


PEER_NOTES = (
    "- **The peers** (pg, pg-native, postgres.js, PostgreJS from npm; asyncpg from Debian, on "
    "asyncio and on uvloop) run in their own processes (bench/node/driver.js, "
    "bench/python/driver.py), interleaved with the C libraries like any other row, against the "
    "same server and data set, each through its own fastest calling convention as seed 000 "
    "describes it (the note under each table says which call). Seed 000's notes apply: int8 is "
    "excluded where the seed excludes it; PostgreJS runs with `objectRows: true` everywhere; no "
    "custom type parsers anywhere, every library decodes as it does out of the box (pg on "
    "pg-types 2, as `npm install pg` gives it: seed 001's pg-types 4 override is not applied); "
    "pg and postgres.js fetch text (pg-types' binary parsers are missing or wrong for these "
    "columns, postgres.js has no binary format), so their Mixed-Type Decode (Binary) cells say "
    "so; pooling, pipelining and prepared statements use each library's own mechanism and "
    "defaults (pg and pg-native with `pipeline: true` wherever calls are in flight together, "
    "their fastest path since 8.23 / 3.9).\n"
    "- **Their columns.** Latency, CPU (the process's user+sys time), Peak RSS (VmHWM) and Net "
    "in/out are measured the same way as for the C rows. Allocations are counted only inside the "
    "C driver: a garbage-collected runtime's cells say \"n/a (GC runtime)\", and its **GC "
    "(ms/op)** column (seed 000's) is the collector's time per operation (Node: the `gc` entries "
    "of a `PerformanceObserver`; Python: the time inside the cyclic collector, from "
    "`gc.callbacks`). The C rows have no collector: \"—\". pg-native does its socket I/O inside "
    "libpq, where the Node driver cannot count it (\"n/a\").\n"
    "- **Verification.** Every answer is checked like the C drivers check theirs (row counts, "
    "distinct values per call, every array element and suite B row against setup.sql's "
    "formulas, a checksum of the decoded values that must be the same on every call and agree "
    "with the other libraries'). The Node libraries hand back json/jsonb as decoded objects, so "
    "their mixed-row checksum folds the objects' content instead of the text's length and is "
    "compared among themselves; every other checksum is the C formula, compared across all "
    "rows. asyncpg's answers that must not change between calls are compared with the first "
    "call's (`Record` equality, in C) instead of re-hashed in Python. A library whose values "
    "differ fails its cell (\"wrong answer\", listed at the end).\n"
    "- **One operation at a time.** asyncpg refuses a second call on a connection while one is "
    "running, so the scenarios defined as calls in flight together on one connection say so "
    "instead of running; it has no Simple Query path that returns rows (`execute()` discards "
    "them), and always requests binary where it has a codec. The version of PostgreJS npm "
    "serves (2.x; seed 000 measured 3.x) queues the statements of a connection one at a time "
    "and has no `pipeline()` and no COPY API; it always sends SSLRequest, so its Connect (over "
    "TCP, where this server offers TLS) is not run. pg-native has no COPY or cursor support "
    "(pg-copy-streams and pg-cursor need the JavaScript client).\n"
    "- **libpgwire from Python** (`pgwire-py`) is examples/python's ctypes package on its "
    "asyncio path (the sans-IO session driven by asyncio's loop), run by bench/python/driver.py "
    "with the same Python and the same checks as asyncpg, so the two rows compare a Python "
    "program's cost with either library. It is libpgwire, not a peer: a wrong answer fails the "
    "run and it is never the fastest peer. It pipelines calls in flight together on one "
    "connection; it has no prepare() (the statement cache prepares at the second use), no "
    "binary COPY encoder, cursor or pool, and those cells say so.\n"
    "- **Suite B with the peers** runs every group in the rotations of the fixed library order "
    "(a Latin square: every library once in every position) instead of all 9! orders; "
    "\"Outright wins\" is over those orders. **Suite C** is run for the C libraries only.\n")


def peer_ratio_section(chart):
    """Per scenario, libpgwire's latency against the fastest peer of the same run."""
    out = ["## libpgwire against the fastest peer\n",
           "Per scenario, in this run: libpgwire (async)'s mean latency (suite B: pooled median) "
           "÷ the fastest peer's (pg, pg-native, postgres.js, PostgreJS, asyncpg). Below 1.00x "
           "libpgwire is faster. Quote these ratios, not the milliseconds.\n",
           "| Scenario | libpgwire (ms) | Fastest peer | Its latency (ms) | libpgwire ÷ fastest peer |",
           "|---|---:|---|---:|---:|"]
    for label, means in chart:
        b = label.startswith("B: ")
        unit = 1e6 if b else 1.0
        peers = {l: v for l, v in means.items() if l in PEERS}
        if not peers:
            continue
        best = min(peers, key=peers.get)
        mine = means.get("libpgwire")
        if mine is None:
            out.append("| %s | no row yet | %s | %.3f | — |" % (label, LIB_NAMES[best],
                                                               peers[best] / unit))
            continue
        out.append("| %s | %.3f | %s | %.3f | %.2fx |" % (label, mine / unit, LIB_NAMES[best],
                                                         peers[best] / unit, mine / peers[best]))
    out.append("")
    return out


CHART_COLORS = ["#1c7ed6", "#74c0fc", "#495057", "#e8590c", "#f59f00", "#2f9e44", "#9c36b5",
                "#c2255c", "#f783ac"]


def svg_chart(chart, path):
    """Every library's latency ÷ libpgwire (async)'s, per scenario: one group
    of horizontal bars per scenario, one bar per library, on a log scale
    (1.0 = libpgwire; right of it = slower than libpgwire)."""
    libs = [l for l in LIBS if l not in REFERENCE]
    rows = [(label, {l: v / means["libpgwire"] for l, v in means.items() if l in libs})
            for label, means in chart if means.get("libpgwire")]
    bar_h, gap, left, top, width = 9, 10, 330, 50 + 16 * len(libs), 980
    h = top + sum(len(r) * bar_h + gap for _, r in rows) + 50
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (width, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20" font-size="14" font-weight="bold">Mean latency ÷ libpgwire '
           '(async)\'s, per scenario (log scale; right of 1.0 = slower than libpgwire)</text>']
    for i, l in enumerate(libs):
        y = 36 + 16 * i
        out.append('<rect x="10" y="%d" width="12" height="10" fill="%s"/>' % (
            y, CHART_COLORS[ALL_LIBS.index(l) % len(CHART_COLORS)]))
        out.append('<text x="28" y="%d">%s</text>' % (y + 9, LIB_NAMES[l].replace("&", "&amp;")))
    if not rows:
        out.append('<text x="10" y="%d">No scenario has a libpgwire result yet.</text>' % (top + 20))
    else:
        lo = min(min(r.values()) for _, r in rows)
        hi = max(max(r.values()) for _, r in rows)
        lmin, lmax = math.log10(min(lo, 0.5)), math.log10(max(hi, 2.0))
        span = width - left - 60

        def x(v):
            return left + (math.log10(v) - lmin) / (lmax - lmin) * span
        y = top
        for label, r in rows:
            out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (
                left - 8, y + len(r) * bar_h / 2 + 4, label.replace("&", "&amp;")))
            for l in libs:
                if l not in r:
                    continue
                x0, x1 = sorted((x(1.0), x(r[l])))
                out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">'
                           '<title>%s: %.2fx</title></rect>' % (
                               x0, y, max(x1 - x0, 1), bar_h - 1,
                               CHART_COLORS[ALL_LIBS.index(l) % len(CHART_COLORS)], LIB_NAMES[l], r[l]))
                y += bar_h
            y += gap
        for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100):
            if lmin <= math.log10(v) <= lmax:
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" %s/>' % (
                    x(v), top - 6, x(v), y, "black" if v == 1 else "#ced4da",
                    'stroke-dasharray="4"' if v == 1 else ""))
                out.append('<text x="%.1f" y="%d" text-anchor="middle">%gx</text>' % (x(v), y + 14, v))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def run_micro(args):
    """The decode micro-benchmark's output (kept in results/micro_codec.txt, so
    --render-only shows it again), or None when it is not built."""
    kept = os.path.join(args.results, "micro_codec.txt")
    if args.render_only:
        return open(kept).read() if os.path.exists(kept) else None
    if not args.micro or not os.path.exists(args.micro):
        return None
    log("micro-benchmark: %s" % args.micro)
    p = subprocess.run([args.micro, "run", os.path.join(HERE, "data")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    if p.returncode != 0:
        failures.append("micro_codec: exit %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
        return None
    with open(kept, "w") as f:
        f.write(p.stdout)
    return p.stdout


def write_report(args, adata, bdata, cdata, env, sdata=None):
    sdata = sdata or {}
    L = []
    L.append("# libpgwire benchmarks\n")
    L.append("Generated by `bench/run.sh` (bench/runner.py). Do not hand-edit: re-run the command "
             "instead.\n")
    L.append("## Method\n")
    L.append(
        "libpgwire against libpq on the same server, the same machine and the same workload, each "
        "library through its own fastest calling convention: only the mechanism differs, never the "
        "work. Where this run includes them, the seeds' own libraries (pg, pg-native, postgres.js, "
        "PostgreJS) and asyncpg, the fastest client a Python user would pick, are rows of the same "
        "tables, measured in the same run (see the notes below). A third row, the **wire floor**, is a minimal client inside the harness: a raw "
        "socket, its own startup, every request encoded once before the timed loop and written in "
        "one go, the answers only scanned for their message types (ReadyForQuery to end the "
        "exchange, DataRow / CommandComplete counts to verify it), nothing decoded. No library can "
        "beat it; how close a library comes to it is the honest measure of its overhead.\n")
    L.append(
        "- Each (library, scenario) pair runs in a process of its own (`pgw-bench-driver`), one at "
        "a time, %d times; the runs are interleaved (run k goes through the libraries starting at "
        "a different one, so slow drift on the server does not always land on the same library), "
        "and before every suite C run the server takes a CHECKPOINT, so no run pays for the WAL an "
        "earlier one wrote. Tables report the median of the runs' values. Inside a run: a warm-up "
        "(a tenth of the operations), then a timed loop of a fixed number of operations (stopped "
        "early, after at least 5, when it passes a time cap; the notes give the counts).\n"
        "- Every operation verifies its answer (distinct values per call, row counts, decoded "
        "values, a checksum of the decoded values that must be the same on every call and for "
        "every library): a wrong answer fails the run instead of reporting a fast number.\n"
        "- **Mean / p50 / p75 / p99**: latency of one operation (`CLOCK_MONOTONIC` around the "
        "call). **Spread (%%)**: how much the row's mean moved between its runs, (max − min) ÷ "
        "median of the runs' means (— with one run); never bold. "
        "**ops/sec** = 1000 / mean. **vs. slowest**: the slowest library's mean ÷ this row's "
        "(1.00x = slowest). **vs floor**: this row's mean ÷ the floor's (1.00x = at the physical "
        "limit).\n"
        "- **CPU (ms/op)**: the client process's user+sys time (`getrusage`) over the timed loop, "
        "per operation.\n"
        "- **Allocs/op, Alloc KB/op**: every malloc/calloc/realloc/memalign/posix_memalign/"
        "aligned_alloc in the client process during the timed loop, counted by the driver itself "
        "(it defines those functions and forwards them to glibc), so libpq's, libpgwire's, "
        "OpenSSL's and libuv's allocations are all counted alike. realloc counts as one allocation "
        "of its new size.\n"
        "- **Peak RSS (KB)**: the driver process's high-water resident set (`VmHWM`) at the end of the run, setup included. The harness does "
        "not tune malloc for anyone.\n"
        "- **Net in/out (KB/op)**: bytes through socket descriptors during the timed loop, counted "
        "by the driver's own read/recv/recvmsg/readv and write/send/sendmsg/writev (forwarded as "
        "raw system calls), the same for every library; shown on the payload scenarios only.\n"
        "- A value is **bold** when it is the best among the libraries or inside the leader's own "
        "run-to-run spread (min..max of its runs) for that column. The floor is never bolded: it "
        "is not a library.\n"
        "- What survives a re-run is the ordering and the ratios, not the milliseconds: quote "
        "ratios.\n" % args.reps)
    L.append("Settings of this run: BENCH_SCALE=%s, BENCH_REPS=%d%s.\n" % (
        args.scale, args.reps, (", BENCH_FILTER=%s" % args.filter) if args.filter else ""))

    L.append("## Environment\n")
    for k, label in (("date", "Run date"), ("cpu", "CPU"), ("cores", "Logical cores"),
                     ("ram", "RAM"), ("os", "OS"), ("compiler", "Compiler"),
                     ("server", "PostgreSQL server"), ("libpq", "libpq"),
                     ("libpgwire", "libpgwire"), ("commit", "libpgwire commit"),
                     ("libuv", "libuv")):
        L.append("- %s: %s" % (label, env.get(k) or "unknown"))
    pv = env.get("peers") or {}
    if pv:
        L.append("- Node.js: %s; npm packages as installed from bench/node/package-lock.json: %s"
                 % (pv.get("node") or "unknown", ", ".join(
                     "%s %s" % (n, pv.get(n) or "not installed") for n in NODE_PACKAGES)))
        L.append("- Python: %s (Debian's /usr/bin/python3); asyncpg %s; uvloop %s" % (
            pv.get("python") or "unknown", pv.get("asyncpg") or "not installed",
            pv.get("uvloop") or "not installed"))
    L.append("- Server: a throwaway cluster (tests/pg/pg-cluster.sh; fsync off) on this machine, "
             "unix socket for every scenario but Connect (TCP 127.0.0.1) unless PGHOST/PGPORT "
             "pointed elsewhere.\n")

    L.append("## Where the comparison is not like-for-like\n")
    L.append(
        "- **Simple Query cannot be pipelined in libpq.** libpq refuses `PQsendQuery` in pipeline "
        "mode, and outside it a second `PQsendQuery` must wait until the first's results are "
        "consumed. libpq's Simple Query *Concurrent Execution* therefore runs its 100 calls one "
        "after the other; libpgwire and the floor send them together, as the protocol allows. "
        "(libpq could put 100 statements in one Query string, but that makes them one implicit "
        "transaction, where one error aborts the rest: not independent calls.)\n"
        "- **Every PQpipelineSync writes.** libpq 15 has no `PQsendPipelineSync` (PostgreSQL 17); "
        "in pipeline mode each call's own Sync also flushes the socket. That is libpq's fastest "
        "convention in this version, and it is what its rows measure.\n"
        "- **Decoding.** libpq returns values as bytes; \"every value decoded\" means the harness "
        "decodes them for libpq (text: integer and float parsing, timestamps to microseconds, "
        "bytea un-hexed; binary: byte swaps), with code of the same kind as a library's decoder. "
        "libpgwire decodes through its own typed accessors. libpq uses binary results wherever the "
        "scenario allows it (everything but the text scenarios and Simple Query), which is its "
        "fastest path.\n"
        "- **Bulk Load (binary COPY)**: libpq has no binary COPY row encoder; its row carries "
        "rows the harness encodes by hand, a writer for exactly these four columns with no "
        "type dispatch, no checks and no bounds growth, so it is the yardstick for the "
        "libraries' general row encoders rather than a like-for-like library.\n"
        "- **Connection Pooling**: libpq has no pool; its rows are its fastest form of the same "
        "work by hand: 10 non-blocking PGconn served together with poll(), in pipeline mode for "
        "Extended Query, one call at a time per connection for Simple Query (which libpq cannot "
        "pipeline), so its Pooled Simple Query has at most 10 calls in flight where libpgwire and "
        "the floor have 1000. No pool logic (checkout, queueing, health) runs in it. The floor's "
        "pool row is 10 raw connections with the 1000 calls spread evenly and pipelined, the least "
        "a pool can do. The row \"libpgwire, 1 connection (reference)\" pipelines the 1000 calls "
        "on one connection: a pool slower than it costs more than it spreads. Both reference rows "
        "stay out of the ranking (never bold, not the slowest); the notes under each table give "
        "the ratios to them.\n"
        "- **Through PgBouncer** (Pooled Simple Query through PgBouncer): only the C rows run it; "
        "the bouncer is a separate process on the same two cores, so the row measures the clients "
        "plus the extra hop, and it is skipped (the cells say why) where tests/pg/pgbouncer.sh or "
        "the pgbouncer binary is missing. Its clients authenticate to the bouncer's auth file "
        "(the floor answers cleartext, md5 and SCRAM-SHA-256 requests for that).\n"
        "- **Cursor Streaming**: libpq has no portal row limit; it runs single-row mode "
        "(`PQsetSingleRowMode`; `PQsetChunkedRowsMode` is PostgreSQL 17) or a `DECLARE ... BINARY "
        "CURSOR` with `FETCH 500`, whichever was faster in a calibration before the timed loop (the "
        "note under the table says which). The floor sends all its `Execute(500)` messages at "
        "once. libpgwire's asynchronous row keeps one `FETCH` ahead (two `Execute(500)` in "
        "flight, so the server never waits for a round trip); its blocking cursor "
        "(`pgw_client_cursor_next`) sends the next `FETCH` when a batch arrives.\n"
        "- **The floor's requests are encoded once**, before the timed loop: its text COPY row "
        "does not format CSV inside the timed call (the libraries do), and its concurrent "
        "scenarios send the same literals every time. It is a limit, not a competitor.\n"
        "- **TLS is off** for every client, on TCP and on the unix socket, except in the two TLS "
        "rows (Connect over TLS, Large Blob Fetch over TLS: libpgwire and libpq with "
        "`sslmode=require` over 127.0.0.1, TLS 1.3; the floor and the peers have no row there).\n"
        "- **Suite C** sends every test's statements pipelined (libpq: pipeline mode, `PQsendQueryParams` "
        "without parameters), one Sync per statement for the autocommit tests (1, 6, 12, 13, 14, 16) "
        "and one for the whole test otherwise (its BEGIN ... COMMIT statements included), so a "
        "client's overhead per statement shows instead of one round trip per statement.\n")
    if args.peers:
        L.append(PEER_NOTES)
    if not args.suites_run.get("D") and not (sdata or {}).get("D"):
        L.append("- **Suite D** (seed 002's TSBS cpu load and analytic query shapes) is opt-in "
                 "(BENCH_SUITES=...,D) and did not run this time.\n")

    # Suite A.
    chart = []  # (label, {lib: mean ms}) per scenario and suite B group
    if adata:
        L.append("## Suite A: the scenario tables of seed 000\n")
        group = None
        sizes = {}
        for sid in adata:
            for lib in LIBS:
                for r in adata[sid].get(lib, []):
                    if r.get("status") == "ok" and "sizes" in r:
                        sizes = r["sizes"]
        for sid, grp, title, desc in SUITE_A:
            if sid not in adata:
                continue
            if grp != group:
                L.append("### %s\n" % grp)
                group = grp
            L.append("#### %s\n" % title)
            L.append(desc.format(copy_rows=sizes.get("copy_rows", 200000),
                                 cursor_rows=sizes.get("cursor_rows", 50000),
                                 ceiling=sizes.get("ceiling", 10000)) + "\n")
            table, notes, rows = scenario_table(sid, adata[sid])
            if sid.endswith("_pgbouncer") and sid[:-len("_pgbouncer")] in adata:
                notes.extend(pgbouncer_ratios(rows, adata[sid[:-len("_pgbouncer")]]))
            L.append(table + "\n")
            if notes:
                L.append("\n".join(notes) + "\n")
            chart.append(("%s: %s" % (grp, title),
                          {l: r["med"]["mean"] for l, r in rows.items()
                           if r and l not in REFERENCE}))

    if bdata:
        L.append("## Suite B: seed 001 (prepared `SELECT * FROM benchmark_rows ORDER BY id LIMIT n`)\n")
        L.append(
            "n = 1, 100, 500 over seed 001's 500-row table, prepared once, through the unix "
            "socket. Sequential: one query at a time, latency per query. Pipelined x10: 10 "
            "queries in flight on one connection, each with its own Sync, latency per batch. "
            "Each group runs in every execution order of the libraries (with the peers: every "
            "rotation of the order, see the notes; one process per library per order; the floor "
            "runs after them in each order, outside the ranking), and the "
            "samples are pooled per library. **Relative latency** is the geometric mean over the "
            "groups of the library's pooled median ÷ the group's fastest median; **Fastest "
            "median** counts the groups it led; **Outright wins** counts the groups where its "
            "median was lower than every rival's in every execution order. Every row of every "
            "answer is decoded and checked.\n")
        rank, detail, medians = suite_b_report(bdata)
        for gid, mode, limit in SUITE_B:
            if gid in medians:
                chart.append(("B: LIMIT %d, %s" % (limit, mode.lower()), medians[gid]))
        L.extend(rank)
        L.append("\nPer group:")
        L.extend(detail)
        L.append("")

    if cdata:
        L.append("## Suite C: seed 004's operation table\n")
        L.append(
            "The classic speed test's 17 steps (Test 1 ... Test 16 with 2.1 and 3.1), written from "
            "their names, run once each in order per process (table sizes scale with "
            "BENCH_SCALE), plus a round-trip test of 100 `select 1` one at a time. Median over "
            "the runs; lower is better. Every statement's outcome is checked (no error, the "
            "expected number of rows for the SELECTs).\n")
        L.extend(suite_c_report(cdata))
        L.append("")

    micro = run_micro(args)
    if micro:
        L.append("## Micro-benchmark: decoding a captured result\n")
        L.append("`pgw-bench-micro_codec run bench/data` (bench/micro_codec.c): the codec and the "
                 "type decoders over 1000 mixed-type rows captured from the server "
                 "(`bench/data/mixed_{binary,text}.bin`), with no socket in the loop. Each figure "
                 "is the median of 5 runs of at least 0.5 s; the memcpy of the same bytes is "
                 "measured in the same run.\n")
        L.append("```")
        L.append(micro.rstrip())
        L.append("```\n")

    # Suites D and T (bench/suited.py).
    L.extend(suited.report_lines(args, sdata))
    # Suite R (bench/repl.py): a logical replication stream.
    L.extend(repl.report_lines(args, sdata))
    # Suite P (bench/replicas.py): pooled reads over a primary and two standbys.
    L.extend(replicas.report_lines(args, sdata))

    if args.peers and chart:
        L.extend(peer_ratio_section(chart))
    L.append("## Chart\n")
    L.append("![every library's latency ÷ libpgwire's, per scenario](results/ratios.svg)\n")
    L.append("## Raw data\n")
    L.append("Every run's JSON (latency samples in ns, CPU, allocations, bytes, notes) is in "
             "`bench/results/<scenario>.<library>.json`; the environment in "
             "`bench/results/environment.json`.\n")
    if wrong_answers:
        L.append("## Wrong answers from peer libraries\n")
        L.append("Cells that failed because the library's decoded values differ from the other "
                 "libraries' (the checksums of bench.h over every decoded value). A finding about "
                 "that library in this version, not a failure of the harness (unless "
                 "BENCH_PEERS_STRICT=1):\n")
        for w in wrong_answers:
            L.append("- " + w)
        L.append("")
    if failures:
        L.append("## Failures\n")
        for f in failures:
            L.append("- " + f)
        L.append("")
    svg_chart(chart, os.path.join(args.results, "ratios.svg"))
    with open(args.output, "w") as f:
        f.write("\n".join(L) + "\n")


def load_results(args):
    adata, bdata, cdata = {}, {}, {}
    if not os.path.isdir(args.results):
        return adata, bdata, cdata
    ids_a = {s[0] for s in SUITE_A}
    ids_b = {s[0] for s in SUITE_B}
    for name in sorted(os.listdir(args.results)):
        m = re.match(r"(.+)\.([a-z-]+)\.json$", name)
        if not m or m.group(2) not in ALL_LIBS:
            continue
        obj = json.load(open(os.path.join(args.results, name)))
        sid, lib = obj["scenario"], obj["lib"]
        target = adata if sid in ids_a else bdata if sid in ids_b else cdata
        target.setdefault(sid, {})[lib] = obj["runs"]
    return adata, bdata, cdata


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", default=os.path.join(ROOT, "build-bench", "bench", "pgw-bench-driver"))
    ap.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "3")))
    ap.add_argument("--filter", default=os.environ.get("BENCH_FILTER", ""))
    ap.add_argument("--suites", default=os.environ.get("BENCH_SUITES", "A,B,C,T,M,R,P"))
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--micro", default=os.path.join(ROOT, "build-bench", "bench",
                                                    "pgw-bench-micro_codec"))
    ap.add_argument("--peers", type=int, choices=[0, 1],
                    default=int(os.environ.get("BENCH_PEERS", "1") or "1"),
                    help="1: run the Node.js and Python libraries too (BENCH_PEERS)")
    ap.add_argument("--node", default=os.environ.get("BENCH_NODE", "node"))
    ap.add_argument("--python", default=os.environ.get("BENCH_PYTHON", "/usr/bin/python3"),
                    help="the Python that has Debian's python3-asyncpg")
    ap.add_argument("--strict-peers", action="store_true",
                    default=os.environ.get("BENCH_PEERS_STRICT") == "1",
                    help="a peer's wrong answer fails the run too (BENCH_PEERS_STRICT=1)")
    args = ap.parse_args()
    suites = {s.strip().upper() for s in args.suites.split(",") if s.strip()}
    args.suites_run = {s: True for s in suites}

    if args.render_only:
        adata, bdata, cdata = load_results(args)
        env = json.load(open(os.path.join(args.results, "environment.json")))
        # The settings the data was measured with, not the renderer's.
        settings = env.get("settings") or {}
        args.scale = settings.get("scale", args.scale)
        args.reps = settings.get("reps", args.reps)
        args.filter = settings.get("filter", args.filter)
        args.peers = int(any(lib in PEERS or lib in OWN_PY for d in (adata, bdata)
                             for per in d.values() for lib in per))
        use_libraries(args)
        sdata = suited.load(args)
        sdata.update(repl.load(args))
        sdata.update(replicas.load(args))
    else:
        use_libraries(args)
        if args.peers:
            use_pgwire_lib(os.path.dirname(os.path.dirname(os.path.abspath(args.driver))))
        os.makedirs(args.results, exist_ok=True)
        for name in os.listdir(args.results):
            if name.endswith(".json") or name.endswith(".svg"):
                os.remove(os.path.join(args.results, name))
        env = environment()
        env["peers"] = peer_versions(args)
        env["settings"] = {"scale": args.scale, "reps": args.reps, "filter": args.filter}
        save(args, "environment.json", env)
        adata = run_suite_a(args) if "A" in suites else {}
        bdata = run_suite_b(args) if "B" in suites else {}
        cdata = run_suite_c(args) if "C" in suites else {}
        sdata = suited.run(args, suites, failures)  # suites D and T, when selected
        sdata.update(repl.run(args, suites, failures))  # suite R, when selected
        if sdata.get("R"):
            log(repl.summary(sdata["R"]))
        sdata.update(replicas.run(args, suites, failures))  # suite P, when selected
        if sdata.get("P"):
            log(replicas.summary(sdata["P"]))
    name_libraries(env)
    verify_checksums(adata, bdata)
    write_report(args, adata, bdata, cdata, env, sdata)
    log("wrote %s" % args.output)
    for w in wrong_answers:
        log("wrong answer from a peer: " + w)
    if failures or (args.strict_peers and wrong_answers):
        log("%d failure(s):" % (len(failures) + (len(wrong_answers) if args.strict_peers else 0)))
        for f in failures:
            log("  " + f)
        return 1
    return 0


def use_libraries(args):
    LIBS[:] = [l for l in ALL_LIBS if args.peers or (l not in PEERS and l not in OWN_PY)]


def use_pgwire_lib(build):
    """PGWIRE_LIB for the pgwire-py row: libpgwire.so of the build that made
    the driver (cmake's target pgwire, brought up to date here: bench/run.sh
    builds only the drivers, and a library left from an older tree would
    miss what the package calls). Leaves a PGWIRE_LIB already set alone;
    without a library the row reports itself unsupported ("not installed
    here")."""
    if os.environ.get("PGWIRE_LIB"):
        return
    lib = os.path.join(build, "libpgwire.so")
    if os.path.exists(os.path.join(build, "CMakeCache.txt")):
        log("pgwire-py: libpgwire.so in %s" % build)
        subprocess.run(["cmake", "--build", build, "--target", "pgwire"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if os.path.exists(lib):
        os.environ["PGWIRE_LIB"] = lib


if __name__ == "__main__":
    sys.exit(main())
