"""Suite P: pooled reads over a primary and two streaming standbys, run by
runner.py (run(), load(), report_lines()).

bench/replica_reads.c's pgw-bench-replica_reads measures one configuration
per process: a routing pool whose host list names the primary alone or the
primary and both standbys. The standbys are up only while the suite runs
(they replay the primary's WAL on the cores every other suite uses): run()
starts them with tests/pg/pg-replica.sh in the directories bench/run.sh
made beside its throwaway cluster (BENCH_P_STANDBY_DIRS, from the
cluster's env file BENCH_P_PRIMARY_ENV) and stops them at the end, and
run.sh stops what is left on exit; BENCH_P_SKIP says why there are none.
Two workloads: one-shot reads (primary alone, primary + standbys) and
write-then-read chains (primary alone, primary + standbys with
read-your-writes off, and on). Before every measured process, `pgw-bench-replica_reads setup`
recreates the table on the primary and waits until both standbys have
replayed it. In repetition k the configurations of a workload run in their
k-th rotation (A/B, B/A, ...); ratios are taken within a repetition.
"""

import json
import os
import subprocess

import runner  # its helpers, looked up when called (runner imports this module)
import suited

READS_C = 64  # reads in flight
RYW_C = 16  # write-then-read chains
NKEYS = 10000  # replica_reads.c's NKEYS
CONNS_PER_HOST = 4  # replica_reads.c's CONNS_PER_HOST
ROLES = ["primary", "standby 1", "standby 2"]
# (config id, mode of pgw-bench-replica_reads, every host or the primary alone)
READS = [("reads-primary", "reads", False), ("reads-all", "reads", True)]
RYW = [("ryw-primary", "ryw-off", False), ("ryw-off-all", "ryw-off", True),
       ("ryw-on-all", "ryw-on", True)]
NAMES = {
    "reads-primary": "primary alone",
    "reads-all": "primary + 2 standbys",
    "ryw-primary": "primary alone, read-your-writes off",
    "ryw-off-all": "primary + 2 standbys, read-your-writes off",
    "ryw-on-all": "primary + 2 standbys, read-your-writes on (2, ryw_fail 2)",
}
BASELINE = {"reads": "reads-primary", "ryw": "ryw-primary"}
# The throwaway cluster runs synchronous_commit = off; see _ryw_lines.
POOL_OPTIONS = "load_balance_hosts=random options='-c synchronous_commit=on'"
HOST_COLUMNS = ("The last three columns: the reads each server answered (median over the "
                "repetitions) and, in parentheses, the pool's connections there at the end.\n")
REPLICA_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                              "pg", "pg-replica.sh")
SUBDIR = "replicas"
failures = []  # the runner's list of failures (run() binds it)


def binary(args):
    return os.path.join(os.path.dirname(os.path.abspath(args.driver)), "pgw-bench-replica_reads")


def sizes(args):
    """Reads and write-then-read iterations of one timed phase."""
    return max(1000, int(1000000 * args.scale)), max(500, int(200000 * args.scale))


def _start_standbys(args, dirs):
    """[(role, host, port)] of the primary (PG* variables) and of a standby
    started in each of dirs; RuntimeError when one does not start."""
    servers = [("primary", os.environ["PGHOST"], os.environ["PGPORT"])]
    for i, d in enumerate(dirs):
        runner.log("P starting a streaming standby in %s" % d)
        p = subprocess.run(["bash", REPLICA_SCRIPT, "start", d, os.environ["BENCH_P_PRIMARY_ENV"]],
                           stdout=subprocess.DEVNULL, timeout=args.timeout)
        if p.returncode != 0:
            raise RuntimeError("tests/pg/pg-replica.sh start %s failed (exit %d; its messages are "
                               "in the run's log)" % (d, p.returncode))
        env = dict(line.rstrip("\n").split("=", 1) for line in open(os.path.join(d, "env"))
                   if "=" in line)
        servers.append(("standby %d" % (i + 1), env["PGW_STANDBY_SOCKET_DIR"],
                         env["PGW_STANDBY_PORT"]))
    return servers


def _stop_standbys(dirs):
    for d in dirs:
        subprocess.run(["bash", REPLICA_SCRIPT, "stop", d], stdout=subprocess.DEVNULL)


def _conninfo(servers, extra=""):
    user = "user=%s dbname=%s" % (os.environ["PGUSER"], os.environ["PGDATABASE"])
    return "host=%s port=%s %s %s" % (",".join(s[1] for s in servers),
                                      ",".join(s[2] for s in servers), user, extra)


def _call(args, argv):
    """(exit status, last stdout line, stderr) of pgw-bench-replica_reads."""
    try:
        p = subprocess.run([binary(args)] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after %ds" % args.timeout
    except OSError as e:
        return -1, "", "pgw-bench-replica_reads: %s" % e
    lines = p.stdout.strip().splitlines()
    return p.returncode, lines[-1] if lines else "", p.stderr.strip()[-300:]


def _setup(args, servers):
    """The fresh table, replayed by every standby; None, or why not."""
    rc, _, err = _call(args, ["setup"] + [_conninfo([s]) for s in servers])
    return None if rc == 0 else "setup (the table, the standbys' replay): %s" % err


def _by_role(res, servers):
    """The answers per server, by role; a port outside the list fails the run."""
    roles = {int(port): role for role, _, port in servers}
    out = {role: {"reads": 0, "writes": 0, "connections": 0} for role in ROLES}
    for s in res.get("servers", []):
        if s["port"] not in roles:
            raise ValueError("port %d answered, which is none of the servers" % s["port"])
        out[roles[s["port"]]] = {k: s[k] for k in ("reads", "writes", "connections")}
    return out


def _result(rc, line, err, servers, writes):
    """The run's JSON with its answers by role; failed unless every one of
    the writes was the primary's."""
    try:
        res = json.loads(line)
        if res.get("status") == "ok":
            res["hosts"] = _by_role(res, servers)
            if res["hosts"]["primary"]["writes"] != writes:
                raise ValueError("%d of %d writes answered by the primary" % (
                    res["hosts"]["primary"]["writes"], writes))
    except ValueError as e:
        res = {"status": "failed", "reason": "%s (exit %d): %s" % (e, rc, err)}
    if rc != 0 and res.get("status") == "ok":
        res = {"status": "failed", "reason": "exit %d: %s" % (rc, err)}
    return res


def _measure(args, servers, config, mode, every, n, c):
    """One configuration in its own process, from a fresh table."""
    why = _setup(args, servers)
    if why:
        res = {"status": "failed", "reason": why}
    else:
        pool = servers if every else servers[:1]
        rc, line, err = _call(args, [mode, _conninfo(pool, POOL_OPTIONS), str(n), str(c)])
        res = _result(rc, line, err, servers, 0 if mode == "reads" else n)
    res["config"] = config
    return res


def _repetition(args, servers, k, n_reads, n_ryw):
    out = {}
    for configs, n, c in ((READS, n_reads, READS_C), (RYW, n_ryw, RYW_C)):
        order = configs[k % len(configs):] + configs[:k % len(configs)]
        for config, mode, every in order:
            runner.log("P %s rep %d/%d (%d operations)" % (config, k + 1, args.reps, n))
            r = _measure(args, servers, config, mode, every, n, c)
            r["rep"] = k
            r["order"] = [cfg for cfg, _, _ in order]
            if r.get("status") != "ok":
                failures.append("suite P %s rep %d: %s" % (config, k + 1, r.get("reason")))
                runner.log("FAILED suite P %s: %s" % (config, r.get("reason")))
            out[config] = r
    return out


def _standby_dirs():
    """The two directories for the standbys, or why suite P does not run
    here (not a failure)."""
    dirs = [d for d in os.environ.get("BENCH_P_STANDBY_DIRS", "").split(",") if d]
    if os.environ.get("BENCH_P_SKIP"):
        return None, os.environ["BENCH_P_SKIP"]
    if len(dirs) != 2 or not os.environ.get("BENCH_P_PRIMARY_ENV"):
        return None, ("skipped: no standby directories (BENCH_P_STANDBY_DIRS names two, "
                      "BENCH_P_PRIMARY_ENV the primary's env file: bash bench/run.sh makes them "
                      "beside its throwaway cluster)")
    return dirs, None


def run(args, suites, failure_list):
    """Runs suite P when selected; returns {"P": data}."""
    global failures
    failures = failure_list
    runner.clear_saved(args, SUBDIR)
    if "P" not in suites:
        return {}
    dirs, skip = _standby_dirs()
    if skip:
        data = {"skipped": skip}  # the runner logs it (summary())
    else:
        try:
            data = _run_all(args, _start_standbys(args, dirs))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            failures.append("suite P: %s" % e)
            runner.log("FAILED suite P: %s" % e)
            data = {"skipped": "not run: %s" % e}
        finally:
            _stop_standbys(dirs)
    runner.save(args, "P.json", data, SUBDIR)
    return {"P": data}


def _run_all(args, servers):
    n_reads, n_ryw = sizes(args)
    runs = {config: [] for config, _, _ in READS + RYW}
    for k in range(args.reps):
        for config, r in _repetition(args, servers, k, n_reads, n_ryw).items():
            runs[config].append(r)
    return {"reads": n_reads, "ryw": n_ryw, "cores": os.cpu_count(),
            "ports": {role: int(port) for role, _, port in servers}, "runs": runs}


def load(args):
    return runner.load_saved(args, SUBDIR, ("P",))


# ---- report ------------------------------------------------------------------------
_ok, _rep_ratios, _ratio_cell, _spread = suited._ok, suited._rep_ratios, suited._ratio_cell, \
    suited._spread


def _ratios(runs, config, workload):
    """(ops/s, CPU per op) of config ÷ its workload's baseline, per repetition."""
    base = BASELINE[workload]
    return (_rep_ratios(runs, config, base, lambda r: r["ops_per_s"]),
            _rep_ratios(runs, config, base, lambda r: r["cpu_us_per_op"]))


def _host_cells(ok):
    """One cell per server: the median of the reads it answered, and of the
    pool's connections there."""
    return ["%s (%g)" % ("{:,}".format(int(runner.median([r["hosts"][role]["reads"] for r in ok]))),
                         runner.median([r["hosts"][role]["connections"] for r in ok]))
            for role in ROLES]


def _table(runs, configs, workload, unit, extra):
    """extra: (header, cell function of the ok runs) columns after the
    allocations."""
    headers = (["pool's hosts", "%ss/s" % unit, "spread", "÷ primary alone",
                "CPU (µs/%s)" % unit, "÷ primary alone", "allocations/%s" % unit] +
               [h for h, _ in extra] + ROLES)
    L = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for config, _, _ in configs:
        ok = _ok(runs.get(config, []))
        if not ok:
            L.append("| %s | failed |%s" % (NAMES[config], " |" * (len(headers) - 2)))
            continue
        ops, cpu = _ratios(runs, config, workload)
        baseline = config == BASELINE[workload]
        cells = [NAMES[config], "%.0f" % runner.median([r["ops_per_s"] for r in ok]),
                 suited._fmt(_spread([r["ops_per_s"] for r in ok]), 1, "%"),
                 "1" if baseline else _ratio_cell(ops),
                 "%.2f" % runner.median([r["cpu_us_per_op"] for r in ok]),
                 "1" if baseline else _ratio_cell(cpu),
                 "%.3f" % runner.median([r["allocs_per_op"] for r in ok])]
        L.append("| " + " | ".join(cells + [f(ok) for _, f in extra] + _host_cells(ok)) + " |")
    return L


def _stale_cell(ok):
    stale = runner.median([r["stale"] for r in ok])
    return "{:,} ({:.1f}%)".format(int(stale), 100.0 * stale / ok[0]["ops"])


def _primary_share(ok):
    """The share of reads the primary answered, over every run."""
    reads = sum(r["hosts"][role]["reads"] for r in ok for role in ROLES)
    return sum(r["hosts"]["primary"]["reads"] for r in ok) / reads if reads else 0.0


def _method(args, pd):
    return [
        "One routing pool (`route = 1`, `max_size` %d per host named, `pipeline_target` 1, "
        "statement cache on, unix sockets) in `pgw-bench-replica_reads` (bench/replica_reads.c), "
        "one configuration per process: the pool's host list names the primary alone or the "
        "primary and two streaming hot standbys (`tests/pg/pg-replica.sh`, on the same "
        "machine, started when this suite begins and stopped when it ends, so that no other "
        "suite shares the cores with their replay), with `%s` so that the read-only "
        "connections spread over the standbys. The standbys are up and streaming in every "
        "configuration: \"primary alone\" is the pool's host list, not another server set-up. "
        "Before every process, `pgw-bench-replica_reads setup` recreates `bench_replica` (%s "
        "keys, `k int4 PRIMARY KEY, v int8`) on the primary and waits until each standby's "
        "`pg_last_wal_replay_lsn()` has reached the primary's `pg_current_wal_lsn()`, so that "
        "every run starts from the same table with "
        "no replay in flight. A warm-up of a tenth of the operations opens the connections and "
        "prepares the statements, then the timed phase runs. Each repetition runs a "
        "workload's configurations one after the other in a rotated order (A/B, B/A, ...; "
        "A/B/C, B/C/A, ...; %d repetitions); medians over the repetitions, ratios taken within "
        "a repetition (median, range in parentheses), spread = (max − min) ÷ median of the "
        "operations/s. **CPU**: user+sys of the client process (getrusage) over the timed phase. "
        "**Allocations**: every malloc & co. of the process in the timed phase (interpose.c). "
        "Every request also returns `current_setting('port')`: the per-server counts come "
        "from the answers, and are checked against `pgw_pool_hosts` (completed, less retried) "
        "for every server; the connections are the pool's, up there at the end.\n"
        % (CONNS_PER_HOST, POOL_OPTIONS.split(" ")[0], "{:,}".format(NKEYS), args.reps),
        "**The client and the three servers share this one machine (%s cores).** Spreading "
        "reads over two standbys adds no CPU here: a standby's backends take the same cores "
        "the primary's would, and each standby spends CPU replaying the primary's WAL as "
        "well. These tables measure what routing costs the client and what the machine makes "
        "of the extra backends; they say nothing of the capacity standbys on machines of "
        "their own would add.\n" % (pd.get("cores") or "?"),
    ]


def _reads_lines(pd):
    runs = pd["runs"]
    return [
        "**Reads**: %s one-shot `SELECT v, current_setting('port')::int4 FROM bench_replica "
        "WHERE k = $1` submitted with `PGW_POOL_READ_ONLY`, %d in flight (the next one from "
        "each callback), keys spread over the table; every answer must be the value setup "
        "stored.\n" % ("{:,}".format(pd["reads"]), READS_C),
        HOST_COLUMNS,
    ] + _table(runs, READS, "reads", "read", []) + [""]


def _ryw_lines(pd):
    runs = pd["runs"]
    L = [
        "**Read-your-writes**: %d chains, each on a key of its own, %s iterations in all; an "
        "iteration is a one-shot `UPDATE bench_replica SET v = v + 1 WHERE k = $1 RETURNING v, "
        "current_setting('port')::int4` (to the primary), then, from its callback, `SELECT v, "
        "current_setting('port')::int4 FROM bench_replica WHERE k = $1` submitted with "
        "`PGW_POOL_READ_ONLY | PGW_POOL_READ_YOUR_WRITES`. Off: `read_your_writes = 0`; a read "
        "answered by a standby that had not replayed the write yet returns the old value and "
        "is counted as stale (a stale answer from the primary, or a value newer than the "
        "write, fails the run). On: `read_your_writes = 2`, `ryw_fail = 2` (`lag_check_ms` and "
        "`ryw_wait_ms` at their defaults, 1000 ms): the pool sends a position query behind "
        "each write and a flagged read to a standby known to have replayed the pool's writes, "
        "or waits there for them, else to the primary (pool.h, READ YOUR WRITES); a stale "
        "read fails the run. The pool's connections set `synchronous_commit = on`: the "
        "throwaway cluster runs with it off, which holds a commit's WAL, and with it its "
        "arrival on the standbys, until the WAL writer's next round (up to 200 ms). Each "
        "write must be answered by the primary.\n" % (RYW_C, "{:,}".format(pd["ryw"])),
    ]
    L.append(HOST_COLUMNS)
    L += _table(runs, RYW, "ryw", "iteration", [("stale reads", _stale_cell)]) + [""]
    on = _ok(runs.get("ryw-on-all", []))
    if on:
        L.append(_ryw_on_note(_primary_share(on)))
    return L


def _ryw_on_note(share):
    """What the read-your-writes row measures, given the share of its reads
    the primary answered."""
    note = "With read-your-writes on, the primary answered %.0f%% of the reads." % (100 * share)
    if share < 0.9:
        return note + "\n"
    return note + (
        " A read sent from its write's callback finds that write's position query still "
        "unanswered (it runs right behind the write, in the same round trip), and pool.h sends "
        "a read-your-writes request that comes while a position is pending to the primary; "
        "with %d chains another chain's position is nearly always pending too. So this row "
        "measures what the tracking costs (a position query behind every write, and its "
        "allocation) with the reads on the primary, not a wait on a standby.\n" % RYW_C)


def report_lines(args, data):
    pd = data.get("P")
    if not pd:
        return []
    L = ["## Suite P: pooled reads over a primary and two streaming standbys\n"]
    if pd.get("skipped"):
        return L + [pd["skipped"][0].upper() + pd["skipped"][1:] + ".\n"]
    L += _method(args, pd) + _reads_lines(pd) + _ryw_lines(pd)
    L.append(summary(pd) + "\n")
    return L


def summary(pd):
    """The ratios in one sentence (the report's, and the runner's log line)."""
    if pd.get("skipped"):
        return "Suite P " + pd["skipped"]
    runs = pd["runs"]
    reads, reads_cpu = _ratios(runs, "reads-all", "reads")
    off, off_cpu = _ratios(runs, "ryw-off-all", "ryw")
    on, on_cpu = _ratios(runs, "ryw-on-all", "ryw")
    return ("Suite P, primary + 2 standbys ÷ primary alone: reads/s %s, CPU per read %s; "
            "read-your-writes off: iterations/s %s, CPU per iteration %s; on: iterations/s %s, "
            "CPU per iteration %s." % tuple(_ratio_cell(x) for x in (
                reads, reads_cpu, off, off_cpu, on, on_cpu)))
