#!/usr/bin/env python3
"""Where a scenario's CPU goes, per library: pgw-bench-driver under `perf
record`, the samples split by where they landed (the kernel, libc, libuv,
the library, ...) and divided by the operations the process ran.

    python3 bench/cpu_profile.py --scenario ext_seq
    python3 bench/cpu_profile.py --scenario connect --libs libpq,libpgwire --rounds 5

The server comes from the PG* variables, as for bench/runner.py (a cluster
started by bench/run.sh or tests/pg/pg-cluster.sh, bench/setup.sql loaded).
Needs Debian's `perf` (linux-perf) and a kernel that lets this user sample
(root, or kernel.perf_event_paranoid <= 1 for the kernel's share).

Method: the libraries alternate within each round (the order rotates
between rounds); each run is one driver process sampled by the cpu-clock
software event at --freq Hz, kernel and user space together. A run's
samples are divided by its operations, timed and warm-up alike, so process
start (the loader's relocations, mostly) is spread over them as well: it is
its own column. libpq is a shared library of its own; libpgwire is linked
into the driver, so its column holds the harness's share too (the libpq
rows' "harness" column is that share's size). Each cell is the median
over the rounds of samples per operation, converted to microseconds by the
sampling period (1 / freq); the period is nominal, so compare the
libraries' cells with each other and read the driver's own CPU per
operation (its timed part only) beside them.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

COLUMNS = ["kernel", "libc", "libuv", "library", "harness", "TLS", "loader", "other"]


# bench/interpose.c's counting wrappers of the allocator and the socket calls,
# linked into the driver: the harness's, whichever library calls them
INTERPOSED = {"malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "read",
              "write", "readv", "writev", "recv", "recvmsg", "send", "sendmsg"}


def category(dso, lib, sym=None):
    """The column a sample counts in, by its DSO (and, inside the driver,
    its symbol: the counting wrappers are the harness's)."""
    base = os.path.basename(dso)
    if dso.startswith("[kernel") or base in ("[vdso]",):
        return "kernel"
    if base.startswith("libc.so") or base.startswith("libm.so"):
        return "libc"
    if base.startswith("libuv"):
        return "libuv"
    if base.startswith("libpq"):
        return "library"
    if base == "pgw-bench-driver":
        return "harness" if lib in ("libpq", "floor") or sym in INTERPOSED else "library"
    if base.startswith(("libssl", "libcrypto", "libgnutls", "libnettle", "libtasn1")):
        return "TLS"
    if base.startswith("ld-linux"):
        return "loader"
    return "other"


def report(data, sort):
    p = subprocess.run(["perf", "report", "-i", data, "--sort", sort, "-n", "--stdio",
                        "--percent-limit", "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True)
    rows = []
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[0].endswith("%"):
            continue
        rows.append((int(parts[1]), parts[2:]))
    return rows


def run_once(args, lib, tmp):
    data = os.path.join(tmp, "%s.data" % lib)
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.freq), "-o", data, "--",
           args.driver, "--lib", lib, "--scenario", args.scenario, "--scale", str(args.scale)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit("%s: no JSON from the driver (exit %d): %s" %
                 (lib, p.returncode, p.stderr.strip()[-300:]))
    if res.get("status") != "ok":
        sys.exit("%s: %s" % (lib, res.get("reason", "failed")))
    ops = res["ops"] + res.get("warmup", 0)
    cols = dict.fromkeys(COLUMNS, 0)
    syms = {}
    for n, rest in report(data, "dso,sym"):
        dso = rest[0]
        sym = " ".join(rest[2:]) if len(rest) > 2 else "?"
        cols[category(dso, lib, sym)] += n
        key = "%s %s" % (os.path.basename(dso), sym)
        syms[key] = syms.get(key, 0) + n
    return {"ops": ops, "cpu_us": res["cpu_ns_per_op"] / 1000.0, "cols": cols, "syms": syms}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", required=True, help="a pgw-bench-driver scenario id")
    ap.add_argument("--libs", default="libpq,libpgwire,libpgwire-blocking")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--freq", type=int, default=10000, help="samples per second of CPU")
    ap.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    ap.add_argument("--top", type=int, default=12, help="symbols listed per library")
    ap.add_argument("--driver",
                    default=os.path.join(ROOT, "build-bench", "bench", "pgw-bench-driver"))
    args = ap.parse_args()
    if not shutil.which("perf"):
        sys.exit("perf is not installed (Debian: apt-get install linux-perf)")
    libs = args.libs.split(",")
    runs = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            order = libs[r % len(libs):] + libs[:r % len(libs)]
            for lib in order:
                print("round %d: %s" % (r + 1, lib), file=sys.stderr, flush=True)
                runs[lib].append(run_once(args, lib, tmp))
    us = 1e6 / args.freq  # nominal CPU per sample

    def per_op(run, n):
        return n * us / run["ops"]

    print("# %s: CPU per operation by where it ran (perf record -e cpu-clock -F %d, %d rounds, "
          "median)\n" % (args.scenario, args.freq, args.rounds))
    print("| library | driver CPU (µs/op, timed part) | sampled (µs/op) | " +
          " | ".join(COLUMNS) + " |")
    print("|---|---:|---:|" + "---:|" * len(COLUMNS))
    for lib in libs:
        rs = runs[lib]
        total = statistics.median(per_op(r, sum(r["cols"].values())) for r in rs)
        cells = [statistics.median(per_op(r, r["cols"][c]) for r in rs) for c in COLUMNS]
        print("| %s | %.1f | %.1f | %s |" % (lib, statistics.median(r["cpu_us"] for r in rs), total,
                                             " | ".join("%.1f" % c for c in cells)))
    for lib in libs:
        rs = runs[lib]
        keys = set().union(*(r["syms"] for r in rs))
        med = {k: statistics.median(per_op(r, r["syms"].get(k, 0)) for r in rs) for k in keys}
        print("\n## %s: the %d symbols with the most CPU per operation (µs/op)\n" % (lib, args.top))
        for k in sorted(med, key=med.get, reverse=True)[:args.top]:
            print("- %.2f %s" % (med[k], k))


if __name__ == "__main__":
    main()
