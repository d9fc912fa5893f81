"""Suite R: a logical replication stream decoded, run by runner.py (run(),
load(), report_lines()).

Three consumers of the same pgoutput stream (proto_version 1, one
publication of one table): libpgwire (bench/repl_stream.c's
pgw-bench-repl_stream, the blocking form: every message through the pgoutput
decoder, each insert's id through the type registry), postgres.js's
sql.subscribe (bench/node/repl.js: every insert decoded into a row object)
and pg_recvlogical writing the pgoutput bytes to /dev/null (the floor: the
walsender's decoding and the transfer, no client decoding).

In each repetition: a fresh table and publication; one slot per consumer,
all created before any change is written (postgres.js makes its own
temporary slot when it subscribes; its process then waits with
START_REPLICATION held back); then N inserts in 10 transactions, written
once; then each consumer streams its slot from the start until it has the
N changes (pg_recvlogical: until --endpos, the WAL position after the last
commit), one at a time, in a rotated order (k-th rotation in repetition k).
Every consumer therefore decodes the same changes from the same pre-written
WAL.
"""

import json
import os
import resource
import subprocess
import threading
import time

import runner  # its helpers, looked up when called (runner imports this module)
import suited

LIBS = ["libpgwire", "postgres", "pg_recvlogical"]
NAMES = {
    "libpgwire": "libpgwire (blocking form, pgw_client_repl_next + pgw_pgoutput_decode)",
    "postgres": "postgres.js (sql.subscribe)",
    "pg_recvlogical": "pg_recvlogical -f /dev/null (floor: no decoding)",
}
TXNS = 10
TABLE = "bench_repl_r"
PUB = "bench_repl_r_pub"
SUBDIR = "repl"
failures = []


def nchanges(args):
    scale = float(os.environ.get("BENCH_R_SCALE") or args.scale)
    return max(TXNS, int(1000000 * scale) // TXNS * TXNS)


def binary(args):
    return os.path.join(os.path.dirname(os.path.abspath(args.driver)), "pgw-bench-repl_stream")


def psql(*sqls):
    """Each statement as its own transaction (one -c each); the last one's output."""
    argv = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"]
    for s in sqls:
        argv += ["-c", s]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("psql: " + p.stderr.strip()[-300:])
    return p.stdout.strip()


def conninfo():
    keys = (("host", "PGHOST"), ("port", "PGPORT"), ("user", "PGUSER"), ("dbname", "PGDATABASE"))
    return " ".join("%s=%s" % (k, os.environ[v]) for k, v in keys if os.environ.get(v))


def _json_line(out):
    return json.loads(out.strip().splitlines()[-1])


def _rusage_cpu(ru):
    return ru.ru_utime + ru.ru_stime


def _start_postgres_js(args, n):
    """The node process, once its slot exists (it printed ready), or a failed result."""
    script = os.path.join(runner.HERE, "node", "repl.js")
    try:
        p = subprocess.Popen([args.node, script, str(n), PUB, TABLE], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=os.path.join(runner.HERE, "node"))
    except OSError as e:
        return None, {"status": "unsupported", "reason": "node is not installed here (%s)" % e}
    watchdog = threading.Timer(args.timeout, p.kill)  # a subscription that never comes
    watchdog.start()
    line = p.stdout.readline()
    watchdog.cancel()
    try:
        if json.loads(line).get("ready"):
            return p, None
    except ValueError:
        pass
    p.kill()
    _, err = p.communicate()
    if "Cannot find module 'postgres'" in err:
        return None, {"status": "unsupported", "reason": "postgres.js is not installed here "
                      "(npm ci in bench/node)"}
    return None, {"status": "failed", "reason": "postgres.js did not subscribe: %s %s" % (
        line.strip(), err.strip()[-300:])}


def _run_postgres_js(args, proc):
    try:
        out, err = proc.communicate("go\n", timeout=args.timeout)
        res = _json_line(out)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"status": "failed", "reason": "timed out after %ds" % args.timeout}
    except (ValueError, IndexError) as e:
        return {"status": "failed", "reason": "no JSON from repl.js: %s %s" % (e, err[-300:])}
    return res


def _run_libpgwire(args, n, slot):
    try:
        p = subprocess.run([binary(args), conninfo(), str(n), slot, PUB], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": "timed out after %ds" % args.timeout}
    except OSError as e:
        return {"status": "failed", "reason": "pgw-bench-repl_stream: %s" % e}
    try:
        return _json_line(p.stdout)
    except (ValueError, IndexError):
        return {"status": "failed", "reason": "no JSON from pgw-bench-repl_stream (exit %d): %s"
                % (p.returncode, p.stderr.strip()[-300:])}


def _run_recvlogical(args, n, slot, endpos):
    argv = ["pg_recvlogical", "-d", conninfo(), "--start", "--no-loop", "-S", slot, "-o", "proto_version=1",
            "-o", "publication_names=" + PUB, "-E", endpos, "-f", "/dev/null"]
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return {"status": "unsupported", "reason": "pg_recvlogical is not installed here (Debian: "
                "postgresql-client): %s" % e}
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read()
    p.stderr.close()
    if p.returncode != 0:
        return {"status": "failed", "reason": "pg_recvlogical exited %d: %s" % (
            p.returncode, err.strip()[-300:])}
    # It confirms what it wrote: the slot must have reached endpos (every change streamed).
    reached = psql("SELECT confirmed_flush_lsn >= '%s' FROM pg_replication_slots "
                   "WHERE slot_name = '%s'" % (endpos, slot))
    if reached != "t":
        return {"status": "failed", "reason": "slot %s did not reach %s" % (slot, endpos)}
    cpu = _rusage_cpu(ru)
    return {"status": "ok", "changes": n, "seconds": secs, "changes_per_s": n / secs,
            "cpu_ns_per_change": cpu * 1e9 / n, "vmhwm_kb": ru.ru_maxrss}


def _prepare():
    """A fresh table and publication, and the libpgwire and pg_recvlogical slots."""
    psql("DROP PUBLICATION IF EXISTS %s" % PUB, "DROP TABLE IF EXISTS %s" % TABLE,
         "CREATE TABLE %s (id int8 PRIMARY KEY, v text, n numeric)" % TABLE,
         "CREATE PUBLICATION %s FOR TABLE %s" % (PUB, TABLE))


def _slot(lib, rep):
    return "bench_r_%s_%d" % (lib, rep)


def _write(n):
    """n inserts in TXNS transactions; the WAL position after the last commit."""
    per = n // TXNS
    inserts = ["INSERT INTO %s SELECT i, 'row ' || i, i / 7.0 FROM generate_series(%d, %d) i"
               % (TABLE, t * per + 1, (t + 1) * per) for t in range(TXNS)]
    return psql(*inserts, "SELECT pg_current_wal_insert_lsn()").splitlines()[-1]


def _drop_slots(rep):
    psql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
         "WHERE slot_name LIKE 'bench\\_r\\_%%\\_%d'" % rep)


def _repetition(args, n, k, order):
    """One repetition: the slots, the WAL, then each consumer in order. The
    slots are dropped (and postgres.js's process ended, which drops its
    temporary slot) however it ends: a slot left behind keeps WAL forever."""
    _prepare()
    node, res_node = (None, None)
    if "postgres" in order:
        node, res_node = _start_postgres_js(args, n)
    try:
        for lib in ("libpgwire", "pg_recvlogical"):
            psql("SELECT pg_create_logical_replication_slot('%s', 'pgoutput')" % _slot(lib, k))
        endpos = _write(n)
        psql("CHECKPOINT")
        return {lib: _consume(args, n, k, order, lib, endpos, node, res_node) for lib in order}
    finally:
        if node is not None and node.poll() is None:
            node.kill()
            node.communicate()
        _drop_slots(k)


def _consume(args, n, k, order, lib, endpos, node, res_node):
    runner.log("R %s rep %d/%d (%d changes)" % (lib, k + 1, args.reps, n))
    if lib == "libpgwire":
        r = _run_libpgwire(args, n, _slot(lib, k))
    elif lib == "pg_recvlogical":
        r = _run_recvlogical(args, n, _slot(lib, k), endpos)
    else:
        r = res_node if node is None else _run_postgres_js(args, node)
    r.setdefault("lib", lib)
    r["rep"] = k
    r["order"] = order
    if r.get("status") == "unsupported":
        runner.log("suite R %s not run: %s" % (lib, r.get("reason")))
    elif r.get("status") != "ok":
        failures.append("suite R %s rep %d: %s" % (lib, k + 1, r.get("reason")))
        runner.log("FAILED suite R %s: %s" % (lib, r.get("reason")))
    return r


def run(args, suites, failure_list):
    """Runs suite R when selected; returns {"R": {lib: [runs]}}."""
    global failures
    failures = failure_list
    runner.clear_saved(args, SUBDIR)
    if "R" not in suites:
        return {}
    libs = LIBS if args.peers else [l for l in LIBS if l != "postgres"]
    n = nchanges(args)
    runs = {lib: [] for lib in libs}
    for k in range(args.reps):
        order = libs[k % len(libs):] + libs[:k % len(libs)]
        try:
            for lib, r in _repetition(args, n, k, order).items():
                runs[lib].append(r)
        except RuntimeError as e:
            failures.append("suite R rep %d: %s" % (k + 1, e))
            runner.log("FAILED suite R rep %d: %s" % (k + 1, e))
    try:
        psql("DROP PUBLICATION IF EXISTS %s" % PUB, "DROP TABLE IF EXISTS %s" % TABLE)
    except RuntimeError:
        pass
    out = {"R": {"changes": n, "runs": runs}}
    runner.save(args, "R.json", out["R"], SUBDIR)
    return out


def load(args):
    return runner.load_saved(args, SUBDIR, ("R",))


# ---- report ------------------------------------------------------------------------
# Within-repetition ratios and cells as suites D and T give them.
_ok, _rep_ratios, _ratio_cell = suited._ok, suited._rep_ratios, suited._ratio_cell


def ratios(data):
    """{(other, key): [libpgwire ÷ other per repetition]} for the report and the log."""
    runs = data["runs"]
    out = {}
    for other in ("pg_recvlogical", "postgres"):
        out[(other, "changes_per_s")] = _rep_ratios(runs, "libpgwire", other,
                                                    lambda r: r["changes_per_s"])
        out[(other, "cpu_ns_per_change")] = _rep_ratios(runs, "libpgwire", other,
                                                        lambda r: r["cpu_ns_per_change"])
    return out


def report_lines(args, data):
    rd = data.get("R")
    if not rd:
        return []
    runs = rd["runs"]
    L = ["## Suite R: a logical replication stream decoded\n"]
    L.append(
        "%s changes (inserts into a table of `id int8 PRIMARY KEY, v text, n numeric`, in %d "
        "transactions, one publication), pgoutput proto_version 1, streamed from a slot created "
        "before the changes were written and consumed from its start. Each repetition "
        "creates one slot per client (postgres.js makes its own temporary slot when it "
        "subscribes; its START_REPLICATION is held back until its turn), writes the changes "
        "once, takes a CHECKPOINT, then runs the clients one at a time in a rotated order "
        "(%d repetitions; A/B/C, B/C/A, ...), so every client decodes the same changes from "
        "the same WAL. **changes/s**: N ÷ the wall time from START_REPLICATION to the N-th "
        "change (pg_recvlogical: its process's whole life, connect included, to --endpos, the "
        "WAL position after the last commit: the few ms of exec and connect count against "
        "the floor, noticeably only at small N). **CPU**: user+sys of the client's process over the same "
        "span (getrusage; postgres.js: process.cpuUsage(); pg_recvlogical: wait4's rusage of "
        "the whole process). The walsender's decoding on the server is in every row's wall "
        "time and in none of the CPU columns: where the three rows' changes/s are about "
        "equal, the walsender is the bottleneck and every client waits on it, and CPU per "
        "change (which then includes a wakeup per few messages) is the client's figure. "
        "Small N (quick mode) is dominated by fixed costs: Node's warm-up, pg_recvlogical's "
        "exec and connect. Medians over the repetitions; the ratios are "
        "taken within a repetition (median, range in parentheses).\n"
        % ("{:,}".format(rd["changes"]), TXNS, args.reps))
    L.append("- **libpgwire**: `pgw-bench-repl_stream CONNINFO N SLOT PUB` (bench/repl_stream.c), "
             "the blocking form: `pgw_client_repl_next`, every message through "
             "`pgw_pgoutput_decode` (tuples as views), each insert's id read with "
             "`pgw_get_int8`, each commit confirmed.")
    L.append("- **postgres.js**: `sql.subscribe('insert:public.%s', fn)` (bench/node/repl.js): "
             "each insert decoded into a row object (its parsers), ids summed and checked." % TABLE)
    L.append("- **pg_recvlogical** (the floor: no decoding): `pg_recvlogical --start --no-loop -S "
             "SLOT -o proto_version=1 -o publication_names=PUB -E ENDPOS -f /dev/null`; checked by "
             "the slot's confirmed_flush_lsn reaching ENDPOS.\n")
    L.append("| client | changes/s | CPU (ns/change) | allocations/change (steady) | VmHWM (kB) |")
    L.append("|---|---|---|---|---|")
    for lib in LIBS:
        if lib not in runs:
            continue
        ok = _ok(runs[lib])
        if not ok:
            why = next((r.get("reason") for r in runs[lib]), "")
            L.append("| %s | %s | | | |" % (NAMES[lib], "not run: " + why if all(
                r.get("status") == "unsupported" for r in runs[lib]) else "failed"))
            continue
        allocs = [r["allocs_per_change"] for r in ok if "allocs_per_change" in r]
        L.append("| %s | %.0f | %.0f | %s | %d |" % (
            NAMES[lib], runner.median([r["changes_per_s"] for r in ok]),
            runner.median([r["cpu_ns_per_change"] for r in ok]),
            "%.4f" % runner.median(allocs) if allocs else "—",
            max(r.get("vmhwm_kb", 0) for r in ok)))
    L.append("")
    L.append(summary(rd) + "\n")
    return L


def summary(data):
    """The ratios in one sentence (the report's, and the runner's log line)."""
    rt = ratios(data)
    return ("Suite R, libpgwire ÷ pg_recvlogical: changes/s %s, CPU per change %s; libpgwire ÷ "
            "postgres.js: changes/s %s, CPU per change %s." % (
                _ratio_cell(rt[("pg_recvlogical", "changes_per_s")]),
                _ratio_cell(rt[("pg_recvlogical", "cpu_ns_per_change")]),
                _ratio_cell(rt[("postgres", "changes_per_s")]),
                _ratio_cell(rt[("postgres", "cpu_ns_per_change")])))
