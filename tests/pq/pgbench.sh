#!/usr/bin/env bash
# Debian's unchanged pgbench through libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR),
# beside the same runs on Debian's libpq.
#
#   pgbench.sh [--valgrind] ENV_FILE COMPAT_DIR PGBENCH
#
# For each library, in a database of its own: pgbench -i -s SCALE (the COPY
# load), then -M simple, -M extended, -M prepared, -C (a connection per
# transaction), -c 8 -j 2, and a custom script in \startpipeline/\endpipeline,
# each for a fixed number of transactions. Asserts for the libpgwire-pq runs:
# exit status 0, no error line, every transaction processed and none failed,
# and the row counts of the four tables after each step equal to libpq's.
#
# PQ_PGBENCH_SCALE (default 10; 1 with --valgrind) and PQ_PGBENCH_TX
# (transactions per client, default 200; 10 with --valgrind) size it;
# PQ_PGBENCH_STEP_TIMEOUT (90 s; 400 with --valgrind) bounds each step.
# --valgrind: the libpgwire-pq runs under valgrind (memory errors and leaks
# fail; libpq's runs are not). PQ_PRELOAD (set by the sanitizer build): the
# ASan runtime, preloaded into the uninstrumented pgbench for the
# instrumented library.
set -uo pipefail

valgrind=0
if [ "${1:-}" = --valgrind ]; then
    valgrind=1
    shift
fi
[ $# -eq 3 ] || { echo "usage: $0 [--valgrind] ENV_FILE COMPAT_DIR PGBENCH" >&2; exit 2; }
pgbench=$3
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
pq_setup "$1" "$2" "$pgbench"
compat=$PQ_COMPAT tmp=$PQ_TMP
psql=$(dirname "$pgbench")/psql
[ -x "$psql" ] || psql=psql

if [ $valgrind = 1 ]; then
    scale=${PQ_PGBENCH_SCALE:-1} tx=${PQ_PGBENCH_TX:-10}
else
    scale=${PQ_PGBENCH_SCALE:-10} tx=${PQ_PGBENCH_TX:-200}
fi
# A step that hangs fails alone instead of the whole test timing out.
step_timeout=${PQ_PGBENCH_STEP_TIMEOUT:-$((valgrind ? 400 : 90))}
dbs=()
cleanup() {
    for db in "${dbs[@]}"; do
        "$psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
    done
    rm -rf "$tmp"
}
trap cleanup EXIT


# The steps: a name and pgbench's arguments.
steps=(
    "init|-i -s $scale -q"
    "simple|-M simple -t $tx"
    "extended|-M extended -t $tx"
    "prepared|-M prepared -t $tx"
    "connect|-C -t $((tx / 10 + 1))"
    "clients|-c 8 -j 2 -t $((tx / 4 + 1))"
    "pipeline|-M extended -f $(dirname "$0")/pgbench-pipeline.sql -c 2 -t $tx"
)

counts() {
    "$psql" -X -A -t -d "$1" -c "SELECT (SELECT count(*) FROM pgbench_accounts) || ' accounts, ' ||
        (SELECT count(*) FROM pgbench_branches) || ' branches, ' ||
        (SELECT count(*) FROM pgbench_tellers) || ' tellers, ' ||
        (SELECT count(*) FROM pgbench_history) || ' history'" 2>&1
}

# run LIB: every step on a fresh database pq_pgbench_LIB; counts in $tmp/LIB.counts
run() {
    local lib=$1 db=pq_pgbench_$1 step name args wrap=()
    dbs+=("$db")
    "$psql" -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" ||
        return 1
    : >"$tmp/$lib.counts"
    pq_wrap "$lib" "$compat"
    wrap=("${PQ_WRAP[@]}")
    if [ "$lib" = pgwire ]; then
        if [ $valgrind = 1 ]; then
            wrap+=(valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite
                --errors-for-leak-kinds=definite --suppressions="$(dirname "$0")/pgbench.supp"
                --log-file="$tmp/valgrind.%p.log")
        fi
    fi
    for step in "${steps[@]}"; do
        name=${step%%|*} args=${step#*|}
        local out=$tmp/$lib.$name.out rc=0 started=$SECONDS
        # shellcheck disable=SC2086
        timeout -k 5 "$step_timeout" "${wrap[@]}" "$pgbench" $args "$db" >"$out" 2>&1 || rc=$?
        [ $rc = 124 ] && echo "(killed after ${step_timeout} s)" >>"$out"
        echo "$name $(counts "$db")" >>"$tmp/$lib.counts"
        echo "$lib $name: exit $rc, $((SECONDS - started)) s, $(grep -E '^tps|done in' "$out" | head -1)"
        if [ "$lib" = pgwire ]; then
            check "$name" "$out" "$rc"
            if [ "$name" = init ] && [ "$rc" != 0 ]; then
                # The other steps are still worth running: on tables libpq loaded.
                echo "pgwire init failed: loading the tables with libpq for the next steps"
                # shellcheck disable=SC2086
                "$pgbench" $args "$db" >/dev/null 2>&1
            fi
        fi
    done
}

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

check() {
    local name=$1 out=$2 rc=$3
    [ "$rc" = 0 ] || fail "$name: pgbench exited $rc"
    if grep -qiE 'error|fatal|abort|warning|symbol lookup|sanitizer|runtime error' "$out"; then
        fail "$name: error lines:"
        grep -iE 'error|fatal|abort|warning|symbol lookup|sanitizer|runtime error' "$out" | head -20
    fi
    if [ "$name" != init ]; then
        grep -qE '^number of failed transactions: 0 ' "$out" ||
            fail "$name: failed transactions: $(grep -E 'failed transactions' "$out")"
        local processed
        processed=$(sed -nE 's/^number of transactions actually processed: ([0-9]+)\/([0-9]+)$/\1 \2/p' "$out")
        if [ -z "$processed" ] || [ "${processed% *}" != "${processed#* }" ]; then
            fail "$name: processed '${processed:-none}'"
        fi
    fi
    if [ $valgrind = 1 ] && compgen -G "$tmp/valgrind.*.log" >/dev/null; then
        if [ -n "$(cat "$tmp"/valgrind.*.log)" ]; then
            fail "$name: valgrind:"
            cat "$tmp"/valgrind.*.log | head -80
        fi
        rm -f "$tmp"/valgrind.*.log
    fi
    if [ "$rc" != 0 ] || [ "${PQ_PGBENCH_VERBOSE:-}" ]; then
        echo "---- pgbench output ($name) ----"
        head -40 "$out"
    fi
}

run libpq
run pgwire
if ! diff -u --label libpq --label libpgwire-pq "$tmp/libpq.counts" "$tmp/pgwire.counts"; then
    fail "row counts differ"
fi
[ $failures = 0 ] && echo "pgbench: all steps agree with libpq ($(wc -l <"$tmp/libpq.counts") steps, scale $scale)"
[ $failures = 0 ]
