#!/usr/bin/env python3
"""The harness's own checks, run by `bash bench/run.sh --selftest` (which
provides the server: PG* variables) in a minute or two (a peer that
cannot pipeline runs the ceiling as 10,000 round trips):

1. bench/node/scenarios.json, the scenario table the Node.js and Python
   drivers read, agrees with bench/driver.c's scenarios[] and init_sizes().
2. Every peer driver that is installed, and the pgwire-py row (libpgwire's
   Python package, through the build's libpgwire.so), answers a few
   scenarios correctly (status "ok") and FAILS them when told to expect
   wrong values (BENCH_CORRUPT_EXPECT=1): a wrong answer fails its cell.
   The Per-Connection Ceiling too, unless the peer declines it with a
   reason of its own.
3. The runner fails the cell of a library whose decoded values disagree with
   the other libraries' (a peer's is a wrong answer, a C library's a failure
   of the run), on synthetic results.
4. The runner reports every scenario of driver.c, and the pool scenarios'
   reference rows (the floor, one libpgwire connection) stay out of the
   ranking and give the ratios the issue asks for, on synthetic results.
5. Suites D and T (suited.py): a query whose two libraries' checksums differ
   fails the run, and the tables give the ratios within each repetition,
   on synthetic results; suite M's table gives the first round as cold and
   the median of the later rounds as warm.
6. Suite R (repl.py): the libpgwire ÷ pg_recvlogical and ÷ postgres.js
   ratios are taken within each repetition, on synthetic results.

Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import runner  # noqa: E402

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok:     " + what)
    else:
        failed += 1
        print("FAILED: " + what)


def scenario_table():
    table = json.load(open(os.path.join(HERE, "node", "scenarios.json")))
    src = open(os.path.join(HERE, "driver.c")).read()
    c_rows = {m.group(1): [int(m.group(2)), int(m.group(3)), int(m.group(4))]
              for m in re.finditer(r'\{"(\w+)", (\d+), (\d), (\d)\}', src)}
    check(c_rows == table["scenarios"], "scenarios.json matches driver.c's scenario table")
    reported = {s[0] for s in runner.SUITE_A} | {s[0] for s in runner.SUITE_B} | {"c_speed",
                                                                                   "c_rtt"}
    check(reported == set(c_rows), "runner.py reports every scenario of driver.c (missing: %s, "
          "extra: %s)" % (sorted(set(c_rows) - reported) or "none",
                          sorted(reported - set(c_rows)) or "none"))
    sizes = {m.group(1): int(m.group(2)) for m in re.finditer(r"bench_sz\.(\w+) = (\d+);", src)}
    scaled = set(re.findall(r"bench_sz\.(\w+) = \(int\)\(", src))
    missing = sorted((set(sizes) | scaled) - set(table["sizes"]))
    check(not missing, "scenarios.json has every size of driver.c's init_sizes() (missing: %s)" % (
        missing or "none"))
    for k, v in table["sizes"].items():
        if k in table["scaled_sizes"]:
            m = re.search(r"bench_sz\.%s = \(int\)\((\d+) \* scale\) < (\d+)" % k, src)
            ok = bool(m) and int(m.group(1)) == v and int(m.group(2)) == table["scaled_sizes"][k]
        else:
            ok = sizes.get(k) == v
        check(ok, "size %s = %d as in driver.c's init_sizes()" % (k, v))


def run_peer(lib, scenario, corrupt):
    cmd = runner.driver_cmd(ARGS, lib) + ["--lib", lib, "--scenario", scenario, "--scale", "0.01"]
    env = dict(os.environ, BENCH_TIME_CAP="0.2")
    if corrupt:
        env["BENCH_CORRUPT_EXPECT"] = "1"
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=120)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), p.returncode
    except (ValueError, IndexError):
        return {"status": "no JSON", "reason": p.stderr[-300:]}, p.returncode


class Args:
    node = os.environ.get("BENCH_NODE", "node")
    python = os.environ.get("BENCH_PYTHON", "/usr/bin/python3")
    driver = ""
    reps = 2


ARGS = Args()
# Scenarios every peer runs, with different kinds of expectation: a bound
# value, a prepared row per id, every row of suite B, every element of an array.
PEER_SCENARIOS = ["ext_seq", "prep_seq", "b_seq_100", "array_fetch"]
# Scenarios a peer may decline, with a reason of its own (never the default "not in this
# harness": a scenario the peer's driver forgot): every answer of a 10,000-execution batch.
PEER_OPTIONAL = ["ceiling"]


def peer_drivers():
    runner.use_pgwire_lib(os.environ.get("BENCH_BUILD", os.path.join(runner.ROOT, "build-bench")))
    for lib in runner.PEERS + runner.OWN_PY:
        first, _ = run_peer(lib, PEER_SCENARIOS[0], False)
        if first.get("status") == "unsupported" and "not installed" in first.get("reason", ""):
            print("skip:   %s (%s)" % (lib, first["reason"]))
            continue
        for sid in PEER_SCENARIOS + PEER_OPTIONAL:
            good, rc = run_peer(lib, sid, False)
            if sid in PEER_OPTIONAL and good.get("status") == "unsupported" and rc == 0:
                reason = good.get("reason", "")
                check(reason and reason != "not in this harness",
                      "%s %s is declined with a reason (%s)" % (lib, sid, reason))
                continue
            check(good.get("status") == "ok" and rc == 0,
                  "%s %s answers correctly (%s)" % (lib, sid, good.get("reason", good.get("status"))))
            bad, rc = run_peer(lib, sid, True)
            check(bad.get("status") == "failed" and rc == 1,
                  "%s %s fails when it expects a wrong value (%s)" % (
                      lib, sid, bad.get("reason", bad.get("status"))))


def runner_checksums():
    def ok(lib, sum_, domain=None):
        r = {"lib": lib, "status": "ok", "checksum": sum_}
        if domain:
            r["checksum_domain"] = domain
        return [r]
    runner.LIBS[:] = runner.ALL_LIBS
    del runner.failures[:], runner.wrong_answers[:]
    adata = {
        "blob_fetch": {"libpgwire": ok("libpgwire", "aa"), "libpq": ok("libpq", "aa"),
                       "pg": ok("pg", "aa"), "postgres": ok("postgres", "bb")},
        "mixed_text": {"libpq": ok("libpq", "cc"), "pg": ok("pg", "dd", "json-objects"),
                       "postgres": ok("postgres", "dd", "json-objects")},
        "mixed_binary": {"libpgwire": ok("libpgwire", "cc"),
                         "postgrejs": ok("postgrejs", "ee", "json-objects")},
    }
    bdata = {"b_seq_1": {"libpgwire": ok("libpgwire", "11"), "libpq": ok("libpq", "12"),
                         "libpgwire-blocking": ok("libpgwire-blocking", "12")}}
    runner.verify_checksums(adata, bdata)
    check(adata["blob_fetch"]["postgres"][0]["status"] == "failed",
          "a peer whose checksum differs from the others' fails its cell")
    check(all(adata["blob_fetch"][l][0]["status"] == "ok" for l in ("libpgwire", "libpq", "pg")),
          "the libraries that agree keep their cells")
    check(adata["mixed_binary"]["postgrejs"][0]["status"] == "failed" and
          adata["mixed_text"]["pg"][0]["status"] == "ok",
          "json-object checksums are compared across the three mixed-row scenarios")
    check(adata["mixed_binary"]["libpgwire"][0]["status"] == "ok",
          "C checksums of the mixed rows agree across text and binary")
    check(bdata["b_seq_1"]["libpgwire"][0]["status"] == "failed" and
          any("libpgwire / b_seq_1" in f for f in runner.failures),
          "a C library that disagrees fails its cell and the run")
    check(len(runner.wrong_answers) == 2 and
          all(not w.startswith("libpgwire") for w in runner.wrong_answers),
          "peers' disagreements are listed as wrong answers")
    cell = runner.cell_status(adata["blob_fetch"]["postgres"])
    check(cell.startswith("FAILED: wrong answer"), "the cell says so: " + cell[:60])


def synthetic_run(lib, ms):
    return {"lib": lib, "status": "ok", "samples_ns": [int(ms * 1e6)] * 5, "cpu_ns_per_op": 1e5,
            "allocs_per_op": 0, "alloc_bytes_per_op": 0, "peak_rss_kb": 1000, "ops": 5,
            "warmup": 1, "note": "n"}


def runner_pool_rows():
    runner.LIBS[:] = [l for l in runner.ALL_LIBS if l not in runner.PEERS]
    check(all("libpgwire-single" in runner.libs_for(sid) for sid in runner.POOL_IDS),
          "the single-connection reference row is in every pool scenario")
    check("libpgwire-single" not in runner.libs_for("ext_conc") and
          "libpgwire-single" not in runner.libs_for("b_pipe_1"),
          "... and in no other scenario")
    data = {"floor": [synthetic_run("floor", 4.0)],
            "libpgwire-single": [synthetic_run("libpgwire-single", 2.0)],
            "libpgwire": [synthetic_run("libpgwire", 4.4)],
            "libpq": [synthetic_run("libpq", 8.8)]}
    table, notes, rows = runner.scenario_table("pool_ext", data)
    single = [l for l in table.splitlines() if l.startswith("| libpgwire, 1 connection")]
    mine = [l for l in table.splitlines() if l.startswith("| libpgwire (async)")]
    check(single and "**" not in single[0] and mine and "**2.00x**" in mine[0],
          "a faster reference row is neither bold nor the slowest's divisor")
    check(any("libpgwire (async): 1.10x the floor, 2.20x the single connection" in n
              for n in notes), "the pool table's notes give the ratios to the floor and to one "
          "connection")
    del data["libpgwire"]
    _, notes, _ = runner.scenario_table("pool_simple", data)
    check(any("no pool row in this build" in n for n in notes),
          "without a pool row the notes say so")
    table, _, _ = runner.scenario_table("ext_conc", {"floor": [synthetic_run("floor", 1.0)]})
    check("1 connection" not in table, "other scenarios' tables have no reference row")


def suited_rows():
    def run(lib, rep, ms, cpu, **extra):
        r = {"lib": lib, "status": "ok", "rep": rep, "samples_ns": [int(ms * 1e6)] * 3,
             "cpu_ns_per_op": cpu, "rows": 10}
        r.update(extra)
        return r
    failures = []
    dd = {"load": {lib: [run(lib, k, 1000, 1e6, rows_per_s=100.0 * (k + 1) * (2 if lib ==
                                                                              "server-file"
                                                                              else 1),
                             cpu_ns_per_row=5.0) for k in range(2)]
                   for lib in runner.suited.D_LOAD_LIBS},
          "q1": {"libpgwire": [run("libpgwire", k, 2.0, 1000, checksum="a") for k in range(2)],
                 "libpq": [run("libpq", k, 4.0, 4000, checksum="a") for k in range(2)]},
          "q2": {"libpgwire": [run("libpgwire", 0, 1.0, 1, checksum="a")],
                 "libpq": [run("libpq", 0, 1.0, 1, checksum="b")]}}
    runner.suited.failures = failures
    runner.suited._verify_d(dd)
    check(len(failures) == 1 and "q2" in failures[0],
          "suite D: a query whose libraries disagree fails the run")
    t = {"threads": {lib: [run(lib, k, 0.1, 2000 if lib == "libpq" else 1000, qps=1000.0 * (
        k + 1), backends=4) for k in range(2)] for lib in runner.suited.T_LIBS}}
    lines = "\n".join(runner.suited.report_lines(Args(), {"D": dd, "T": t}))
    check("| q1 | one host, 1 hour | 10 | 2.000 | 4.000 | 0.50x (0.50–0.50) |" in lines,
          "suite D's query table gives the p50 ratio within each repetition")
    check("| 2.00x (2.00–2.00) |" in lines, "suite D's load table gives the ratio to the "
          "server's COPY")
    check("q/s 1.00x (1.00–1.00), CPU per query 0.50x (0.50–0.50)" in lines,
          "suite T gives q/s and CPU ratios within each repetition")
    check("Measured at an unrecorded date, libpgwire commit unrecorded" in lines,
          "suite D without a stamp says its date and commit are unknown")
    dd["measured"] = {"date": "2026-01-02T03:04:05Z", "commit": "abc1234"}
    lines = "\n".join(runner.suited.report_lines(Args(), {"D": dd}))
    check("Measured 2026-01-02T03:04:05Z, libpgwire commit abc1234" in lines and
          "| q1 | one host, 1 hour | 10 | 2.000 | 4.000 | 0.50x (0.50–0.50) |" in lines,
          "suite D's section says when and at which commit it was measured")
    def mem_run(lib, rep, cold, warm):
        rnd = lambda b, a: {"pending": 1000, "rss_per_pending": b, "allocs": a,
                            "alloc_bytes": 10.0, "out": 62.0, "in": 40.0}
        return {"lib": lib, "status": "ok", "rep": rep, "requests": 1000,
                "sizes": {"req": 136, "req_aux": 72, "result": 344, "request": 176},
                "rounds": [rnd(cold, 1.0)] + [rnd(w, 0.0) for w in warm]}
    m = {"mem": {lib: [mem_run(lib, k, 300.0 + 10 * k, [60.0, 0.0]) for k in range(2)]
                 for lib in runner.suited.M_LIBS}}
    lines = "\n".join(runner.suited.report_lines(Args(), {"M": m}))
    check("| 1,000 | 305.0 | 30.0 | 1.000 / 0.000 | 10.0 | 62 / 40 | 3% |" in lines,
          "suite M gives cold (first round) and warm (later rounds) figures")
    check("a descriptor of 136 bytes" in lines and "adds an aux block of 72 bytes" in lines,
          "suite M gives the descriptor's and the aux block's sizes")


def repl_rows():
    def run(lib, rep, cps, cpu):
        return {"lib": lib, "status": "ok", "rep": rep, "changes": 100, "changes_per_s": cps,
                "cpu_ns_per_change": cpu, "vmhwm_kb": 1000}
    speed = {"libpgwire": 200.0, "postgres": 100.0, "pg_recvlogical": 400.0}
    rd = {"changes": 100, "runs": {lib: [run(lib, k, speed[lib] * (k + 1), 1000.0 / speed[lib])
                                         for k in range(2)] for lib in runner.repl.LIBS}}
    lines = "\n".join(runner.repl.report_lines(Args(), {"R": rd}))
    check("libpgwire ÷ pg_recvlogical: changes/s 0.50x (0.50–0.50), CPU per change 2.00x "
          "(2.00–2.00); libpgwire ÷ postgres.js: changes/s 2.00x (2.00–2.00), CPU per change "
          "0.50x (0.50–0.50)" in lines, "suite R gives the ratios within each repetition")


def profile_columns():
    import cpu_profile as prof  # bench/cpu_profile.py
    cat = prof.category
    check(cat("[kernel.kallsyms]", "libpq") == "kernel" and
          cat("/usr/lib/x86_64-linux-gnu/libpq.so.5.15", "libpq") == "library" and
          cat("/x/bench/pgw-bench-driver", "libpq", "main") == "harness" and
          cat("/x/bench/pgw-bench-driver", "libpgwire", "pgw_session_submit") == "library" and
          cat("/x/bench/pgw-bench-driver", "libpgwire", "recv") == "harness" and
          cat("/usr/lib/x86_64-linux-gnu/libuv.so.1.0.0", "libpgwire") == "libuv",
          "profile.py counts the kernel, libpq, libpgwire (in the driver) and the harness's "
          "interposed calls in their own columns")


def main():
    scenario_table()
    profile_columns()
    suited_rows()
    repl_rows()
    runner_checksums()
    runner_pool_rows()
    if os.environ.get("PGHOST") and os.environ.get("PGPORT"):
        peer_drivers()
    else:
        print("skip:   the peer drivers (no server: run through bash bench/run.sh --selftest)")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
