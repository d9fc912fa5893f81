"""Suite D (seed 002's TSBS cpu workload) and suite T (16 threads through
the blocking pool's one-shot pgw_client_pool_run beside 16 libpq
connections), run by bench/suited.c's pgw-bench-suited, and suite M
(client memory per pending request, bench/mem_pending.c's
pgw-bench-mem_pending), reported by runner.py (run(), load(),
report_lines()).

Every (library, scenario) pair runs in a process of its own, BENCH_REPS
times; in repetition k the libraries go in a rotated order (k-th rotation),
so each repetition holds one run of every library, back to back. Ratios are
taken inside a repetition (libpgwire's run ÷ libpq's run of the same
repetition), and the tables give their median and their range over the
repetitions; a row's spread is (max - min) / median of its runs.
"""

import json
import os
import subprocess

import runner  # its helpers, looked up when called (runner imports this module)

D_LOAD_LIBS = ["libpgwire-binary", "libpgwire-text", "libpq-text", "server-file"]
D_LOAD_NAMES = {
    "libpgwire-binary": "libpgwire, binary COPY (pgw_copy_bin_*)",
    "libpgwire-text": "libpgwire, text COPY (CSV, pgw_copy_csv_*)",
    "libpq-text": "libpq, text COPY (CSV formatted by the harness, PQputCopyData)",
    "server-file": "server's COPY FROM a file (floor)",
}
D_QUERIES = [
    ("q1", "one host, 1 hour"),
    ("q2", "one host, 12 hours"),
    ("q3", "one host, 12 hours, 5 aggregates"),
    ("q4", "all hosts, 12 hours, group by host"),
    ("q5", "all hosts, 12 hours, 10 aggregates"),
    ("q6", "full scan, one value filter"),
    ("q7", "last point per host"),
    ("q8", "top 20 by max"),
]
D_QUERY_LIBS = ["libpgwire", "libpq"]
T_LIBS = ["libpgwire-pool", "libpq"]
T_NAMES = {
    "libpgwire-pool": "libpgwire: pgw_client_pool_run, pool of 4 connections",
    "libpq": "libpq: 16 connections, one per thread (PQexecParams)",
}
M_LIBS = ["libpgwire", "libpgwire-noresult", "libpq"]
M_NAMES = {
    "libpgwire": "libpgwire: pgw_conn_submit, results delivered and freed",
    "libpgwire-noresult": "libpgwire: pgw_conn_submit with PGW_Q_NO_RESULT",
    "libpq": "libpq: pipeline mode, PQsendQueryPrepared + PQpipelineSync",
}
M_ROUNDS = 3
SUBDIR = "suited"
failures = []  # the runner's list of failures (run() binds it)


def binary(args):
    return os.path.join(os.path.dirname(os.path.abspath(args.driver)), "pgw-bench-suited")


def _m_requests(args):
    """Suite M's pending requests per round: 100,000 × BENCH_SCALE (at least 1,000)."""
    return max(1000, int(100000 * args.scale))


def _m_argv(args, lib):
    argv = [os.path.join(os.path.dirname(binary(args)), "pgw-bench-mem_pending"), "--json",
            "--requests", str(_m_requests(args)), "--rounds", str(M_ROUNDS)]
    return argv + (["--lib", "libpq"] if lib == "libpq" else
                   ["--no-result"] if lib == "libpgwire-noresult" else [])


def _run(args, cmd, lib, label, scenario=None):
    runner.log(label)
    if cmd == "mem":
        argv = _m_argv(args, lib)
    else:
        argv = [binary(args), cmd, "--lib", lib, "--scale", str(args.scale)]
        if scenario:
            argv += ["--scenario", scenario]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=args.timeout)
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        res = {"status": "failed", "reason": "timed out after %ds" % args.timeout}
    except (OSError, ValueError, IndexError) as e:
        res = {"status": "failed", "reason": "no JSON from %s: %s" % (os.path.basename(argv[0]),
                                                                       e)}
    res.setdefault("lib", lib)
    if res.get("status") != "ok":
        failures.append("%s / %s: %s" % (lib, scenario or cmd, res.get("reason")))
        runner.log("FAILED %s / %s: %s" % (lib, scenario or cmd, res.get("reason")))
    return res


def _rotations(args, libs):
    return [libs[k % len(libs):] + libs[:k % len(libs)] for k in range(args.reps)]


def _alternate(args, cmd, libs, label, scenario=None):
    """BENCH_REPS repetitions; each runs every library once, rotated."""
    runs = {lib: [] for lib in libs}
    for k, order in enumerate(_rotations(args, libs)):
        for lib in order:
            r = _run(args, cmd, lib, "%s %s %s rep %d/%d" % (label, lib, scenario or cmd, k + 1,
                                                             args.reps), scenario)
            r["rep"] = k
            runs[lib].append(r)
    return runs


def run(args, suites, failure_list):
    """Runs suites D and T when selected; returns {"D": ..., "T": ...}.
    Failures are appended to failure_list (the runner's)."""
    global failures
    failures = failure_list
    runner.clear_saved(args, SUBDIR)
    out = {}
    if "D" in suites:
        runner.log("D: preparing the cpu table")
        p = subprocess.run([binary(args), "prepare", "--scale", str(args.scale)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            failures.append("suite D prepare: " + p.stderr.strip()[-300:])
            runner.log("FAILED suite D prepare: " + p.stderr.strip())
        else:
            dd = {"load": _alternate(args, "load", D_LOAD_LIBS, "D")}
            for qid, _ in D_QUERIES:
                if not args.filter or qid in args.filter or ("d_" + qid) in args.filter:
                    dd[qid] = _alternate(args, "query", D_QUERY_LIBS, "D", qid)
            _verify_d(dd)
            dd["measured"] = runner.run_stamp()  # the section may outlive this run
            out["D"] = dd
            runner.save(args, "D.json", dd, SUBDIR)
    if "T" in suites:
        out["T"] = {"threads": _alternate(args, "threads", T_LIBS, "T")}
        runner.save(args, "T.json", out["T"], SUBDIR)
    if "M" in suites:
        out["M"] = {"mem": _alternate(args, "mem", M_LIBS, "M")}
        runner.save(args, "M.json", out["M"], SUBDIR)
    return out


def _verify_d(dd):
    """Both libraries decode the same values: every run's checksum agrees."""
    for qid, runs in dd.items():
        if qid == "load":
            continue
        sums = {r.get("checksum") for rs in runs.values() for r in rs if r.get("status") == "ok"}
        if len(sums) > 1:
            failures.append("suite D %s: the libraries' checksums differ: %s" % (qid,
                                                                                 sorted(sums)))


def load(args):
    """The saved results of a previous run (--render-only)."""
    return runner.load_saved(args, SUBDIR, ("D", "T", "M"))


# ---- report ------------------------------------------------------------------------
def _ok(runs):
    return [r for r in runs if r.get("status") == "ok"]


def _spread(xs):
    m = runner.median(xs)
    return (max(xs) - min(xs)) / m * 100 if len(xs) > 1 and m else None


def _fmt(v, digits=2, suffix=""):
    return "—" if v is None else "%.*f%s" % (digits, v, suffix)


def _p50_ms(r):
    return runner.quantile(sorted(r["samples_ns"]), 0.5) / 1e6


def _mean_ms(r):
    return sum(r["samples_ns"]) / len(r["samples_ns"]) / 1e6


def _rep_ratios(runs, a, b, key):
    """key(run of a) ÷ key(run of b) within each repetition where both ran."""
    by_rep = {lib: {r["rep"]: r for r in _ok(runs.get(lib, []))} for lib in (a, b)}
    return [key(by_rep[a][k]) / key(by_rep[b][k]) for k in sorted(by_rep[a])
            if k in by_rep[b] and key(by_rep[b][k])]


def _ratio_cell(xs):
    if not xs:
        return "—"
    return "%.2fx (%.2f–%.2f)" % (runner.median(xs), min(xs), max(xs)) if len(xs) > 1 else \
        "%.2fx" % xs[0]


def _load_table(runs):
    L = ["| client | rows/s | spread | CPU (µs/1000 rows) | server COPY's rows/s ÷ this row's |",
         "|---|---|---|---|---|"]
    for lib in D_LOAD_LIBS:
        ok = _ok(runs.get(lib, []))
        if not ok:
            L.append("| %s | failed | | | |" % D_LOAD_NAMES[lib])
            continue
        rps = [r["rows_per_s"] for r in ok]
        cpu = runner.median([r["cpu_ns_per_row"] for r in ok])  # ns/row = µs/1000 rows
        vs = _rep_ratios(runs, "server-file", lib, lambda r: r["rows_per_s"])
        L.append("| %s | %.0f | %s | %s | %s |" % (
            D_LOAD_NAMES[lib], runner.median(rps), _fmt(_spread(rps), 0, "%"), _fmt(cpu, 1),
            "1.00x (floor)" if lib == "server-file" else _ratio_cell(vs)))
    return L


def _query_table(dd):
    L = ["| query | shape | rows | libpgwire p50 (ms) | libpq p50 (ms) | p50 ratio | "
         "libpgwire CPU (µs/query) | libpq CPU (µs/query) | CPU ratio | spread (p50, "
         "libpgwire / libpq) |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for qid, shape in D_QUERIES:
        runs = dd.get(qid)
        if not runs:
            continue
        a, b = _ok(runs.get("libpgwire", [])), _ok(runs.get("libpq", []))
        if not a or not b:
            L.append("| %s | %s | failed | | | | | | | |" % (qid, shape))
            continue
        pa, pb = [_p50_ms(r) for r in a], [_p50_ms(r) for r in b]
        L.append("| %s | %s | %d | %.3f | %.3f | %s | %.1f | %.1f | %s | %s / %s |" % (
            qid, shape, a[0]["rows"], runner.median(pa), runner.median(pb),
            _ratio_cell(_rep_ratios(runs, "libpgwire", "libpq", _p50_ms)),
            runner.median([r["cpu_ns_per_op"] for r in a]) / 1000,
            runner.median([r["cpu_ns_per_op"] for r in b]) / 1000,
            _ratio_cell(_rep_ratios(runs, "libpgwire", "libpq", lambda r: r["cpu_ns_per_op"])),
            _fmt(_spread(pa), 0, "%"), _fmt(_spread(pb), 0, "%")))
    return L


def _threads_table(runs):
    L = ["| client | q/s | spread | mean (µs) | p50 (µs) | CPU (µs/query) | server backends |",
         "|---|---|---|---|---|---|---|"]
    for lib in T_LIBS:
        ok = _ok(runs.get(lib, []))
        if not ok:
            L.append("| %s | failed | | | | | |" % T_NAMES[lib])
            continue
        qps = [r["qps"] for r in ok]
        L.append("| %s | %.0f | %s | %.1f | %.1f | %.1f | %d |" % (
            T_NAMES[lib], runner.median(qps), _fmt(_spread(qps), 0, "%"),
            runner.median([_mean_ms(r) for r in ok]) * 1000,
            runner.median([_p50_ms(r) for r in ok]) * 1000,
            runner.median([r["cpu_ns_per_op"] for r in ok]) / 1000,
            max(r["backends"] for r in ok)))
    qps = _rep_ratios(runs, "libpgwire-pool", "libpq", lambda r: r["qps"])
    cpu = _rep_ratios(runs, "libpgwire-pool", "libpq", lambda r: r["cpu_ns_per_op"])
    L.append("")
    L.append("libpgwire ÷ libpq within each repetition: q/s %s, CPU per query %s." % (
        _ratio_cell(qps), _ratio_cell(cpu)))
    return L


def _mem_table(runs):
    L = ["| client | pending | RSS growth per pending request, cold (B) | warm (B) | "
         "allocations per request, cold / warm | bytes allocated per request, warm | "
         "socket bytes out / in per request | spread (cold) |",
         "|---|---|---|---|---|---|---|---|"]
    for lib in M_LIBS:
        ok = [r for r in _ok(runs.get(lib, [])) if len(r.get("rounds", [])) >= 2]
        if not ok:
            L.append("| %s | failed | | | | | | |" % M_NAMES[lib])
            continue
        cold = [r["rounds"][0]["rss_per_pending"] for r in ok]
        # Warm: the rounds after the first, every repetition's.
        warm = [x["rss_per_pending"] for r in ok for x in r["rounds"][1:]]
        last = ok[0]["rounds"][-1]
        L.append("| %s | %s | %.1f | %.1f | %.3f / %.3f | %.1f | %.0f / %.0f | %s |" % (
            M_NAMES[lib], "{:,}".format(ok[0]["rounds"][0]["pending"]), runner.median(cold),
            runner.median(warm), runner.median([r["rounds"][0]["allocs"] for r in ok]),
            runner.median([x["allocs"] for r in ok for x in r["rounds"][1:]]),
            runner.median([x["alloc_bytes"] for r in ok for x in r["rounds"][1:]]),
            last["out"], last["in"], _fmt(_spread(cold), 0, "%")))
    return L


def _reps_of(section):
    """The repetitions a suite's data holds: its longest list of runs (a
    report rendered again later states what was measured, not the
    renderer's BENCH_REPS)."""
    if isinstance(section, list):
        return len(section)
    if isinstance(section, dict):
        return max((_reps_of(v) for v in section.values()), default=0)
    return 0


def report_lines(args, data):
    L = []
    dd = data.get("D")
    if dd:
        rows = next((r["rows"] for r in _ok(dd["load"].get("server-file", []))), None)
        L.append("## Suite D: seed 002's TSBS cpu workload\n")
        L.append(
            "`pgw-bench-suited` (bench/suited.c): seed 002's TSBS cpu-only shape, a table of 21 "
            "columns (time timestamptz, 10 text tags, 10 double precision metrics), %s rows: "
            "100 hosts, one point per host every 10 s from 2024-01-01, in time order "
            "(BENCH_D_SCALE, else BENCH_SCALE, × 2,000,000 rows). Each process runs one "
            "(client, scenario) pair; each of the %d repetitions runs every client once, in a "
            "rotated order, and ratios are taken within a repetition (median, and range over "
            "the repetitions, in parentheses). **spread**: (max − min) ÷ median of a row's runs (— with one run)."
            "\n" % ("{:,}".format(rows) if rows else "?", _reps_of(dd)))
        m = dd.get("measured") or {}
        L.append("Measured %s, libpgwire commit %s (suite D may come from a run of its own: "
                 "this date and commit are its own, not the Environment section's).\n" % (
                     m.get("date", "at an unrecorded date"), m.get("commit", "unrecorded")))
        L.append(
            "### Load\n\nOne COPY of every row into an unindexed table (TRUNCATE and a CHECKPOINT "
            "before, outside the timing; verified after by count(*) and sum(usage_user)). The "
            "clients generate the rows as they send them (the same generator for all three, "
            "inside the timed call); the floor is the server reading a CSV file of the same "
            "rows written before the timed call, so it does no client work at all. libpq and "
            "the file format floats with `%.17g`, as suite A's text COPY does for libpq.\n")
        L.extend(_load_table(dd["load"]))
        L.append("")
        L.append(
            "### Queries q1–q8\n\nSeed 002's eight query shapes over the table above "
            "(btree on (hostname, time DESC), VACUUM ANALYZE; `max_parallel_workers_per_gather "
            "= 0`, the seed's serial table), each on an open connection: up to 3 warm-up runs "
            "(fewer past 3 s), then up to 20 timed runs (at least 3; fewer past 10 s). "
            "libpgwire: `pgw_client_query` (the statement "
            "cache turns it into a prepared, binary-result statement from the third run); "
            "libpq: `PQexecParams` with binary results. Every value of every row is decoded "
            "into a checksum both clients must agree on.\n")
        L.extend(_query_table(dd))
        L.append("")
    td = data.get("T")
    if td:
        L.append("## Suite T: 16 threads, a blocking pool of 4 beside 16 libpq connections\n")
        L.append(
            "16 threads each run sequential `select $1::int4` (binary parameter, result "
            "checked): libpgwire through one `pgw_client_pool_t` of 4 connections (min = max = "
            "4) with the one-shot `pgw_client_pool_run` (no checkout: the threads' requests "
            "pipelined on the pool's connections), libpq with one connection per thread. q/s "
            "over the whole run; latency per query; CPU is the process's user+sys over the run "
            "÷ queries; server backends is the most of this program's connections "
            "`pg_stat_activity` showed, sampled every 20 ms by a monitor connection of its own "
            "(not counted). %d repetitions, rotated.\n" % _reps_of(td))
        L.extend(_threads_table(td["threads"]))
        L.append("")
    md = data.get("M")
    if md:
        runs = md["mem"]
        sz = next((r["sizes"] for rs in runs.values() for r in _ok(rs) if "sizes" in r), None)
        n = next((r["requests"] for rs in runs.values() for r in _ok(rs)), 0)
        L.append("## Suite M: client memory per pending request\n")
        L.append(
            "`pgw-bench-mem_pending` (bench/mem_pending.c), one process per client, %d "
            "repetitions in a rotated order: after a warm-up that prepares the statement, %d "
            "rounds of %s one-parameter `SELECT $1::int4` requests (binary parameter, one Sync "
            "each) submitted before any answer is read, then read to the last (every answer "
            "checked). **RSS growth per pending request**: VmRSS after the last submit minus "
            "before the first, ÷ the requests. **Cold** is a fresh process's first round (what "
            "a program pays the first time it holds that many); **warm** the later rounds "
            "(free lists and buffers already grown), median over rounds and repetitions. "
            "Allocations (malloc & co., counted by bench/interpose.c for every library alike) "
            "and bytes allocated run from the first submit to the last answer. libpgwire "
            "accepts every request before writing (its loop has not run yet); libpq writes as "
            "it goes and, when the socket is full, reads the answers into its own buffer, so "
            "part of its pending work sits in the server and the kernel.\n" % (
                _reps_of(md), M_ROUNDS, "{:,}".format(n)))
        L.extend(_mem_table(runs))
        L.append("")
        if sz:
            L.append(
                "libpgwire's share: a pending request is a descriptor of %d bytes (allocated "
                "in blocks of descriptors, kept on a free list after its answer; a streaming, "
                "COPY or simple-query request, or the last of a submit with a deadline, adds "
                "an aux block of %s bytes, which these do not) plus its "
                "encoded Bind, Execute and Sync in the output buffer until written; a "
                "`pgw_request_t` on the caller's stack is %d bytes and a result object %d "
                "bytes (none with PGW_Q_NO_RESULT). The goal is at most 128 bytes per pending "
                "request.\n" % (sz["req"], sz.get("req_aux", "?"), sz["request"], sz["result"]))
    return L
