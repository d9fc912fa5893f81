#!/usr/bin/env bash
# The differential driver: runs one program of tests/pq/diff twice against the
# pgcluster fixture's server and compares what it printed (stdout and stderr,
# one stream, and its exit status).
#
#   run-diff.sh MODE ENV_FILE COMPAT_DIR PROGRAM [ARGS...]
#
# MODE
#   pgwire    Debian's libpq, then libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR,
#             checked to be the libpq.so.5 the loader picks): must be equal.
#   self      libpq twice: proves the program prints nothing that changes
#             from run to run (the harness's own check).
#   valgrind  as pgwire, the libpgwire-pq run under valgrind (leaks and memory
#             errors fail the test; valgrind's report is printed).
#   slowclock as pgwire, the libpgwire-pq run with PQ_CLOCK_SHIM (the
#             pq_slowclock library, ../slowclock.c) preloaded: every time
#             slice is over at its first check, as on a loaded machine.
#
# The same binary runs both times: the only thing that changes is the library
# the loader gives it, which is how psql and pgbench meet the layer too.
set -uo pipefail

[ $# -ge 4 ] || { echo "usage: $0 pgwire|self|valgrind|slowclock ENV_FILE COMPAT_DIR PROGRAM [ARGS...]" >&2; exit 2; }
mode=$1 env_file=$2 compat=$(realpath -m -- "$3")
shift 3

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
pq_load_env "$env_file"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp # no ~/.pgpass, ~/.pg_service.conf, ~/.postgresql

# run NAME [WRAPPER...]: the program's output in $tmp/NAME.out
run() {
    local name=$1 rc
    shift
    (cd "$tmp" && timeout -k 5 "$run_timeout" "$@" "${PROGRAM[@]}") >"$tmp/$name.out" 2>&1
    rc=$?
    echo "exit=$rc" >>"$tmp/$name.out"
    [ $rc = 124 ] && echo "(killed after $run_timeout s)" >>"$tmp/$name.out"
    # A temporary schema is named after the backend's slot (pg_temp_3), which
    # depends on what else is connected to the server at that moment.
    sed -i -E 's/pg_temp_[0-9]+/pg_temp_N/g' "$tmp/$name.out"
}

# A run that hangs is killed (status 124) and shows up in the diff.
run_timeout=${PQ_DIFF_TIMEOUT:-60}
[ "$mode" = valgrind ] && run_timeout=${PQ_DIFF_TIMEOUT:-400}
PROGRAM=("$(realpath -- "$1")" "${@:2}")
case "$mode" in
self)
    run a env
    run b env
    ;;
pgwire | valgrind | slowclock)
    pq_check_loader "${PROGRAM[0]}" "$compat"
    run a env
    if [ "$mode" = valgrind ]; then
        run b env LD_LIBRARY_PATH="$compat" valgrind --quiet --error-exitcode=99 \
            --leak-check=full --track-origins=yes --log-file="$tmp/valgrind.log"
    elif [ "$mode" = slowclock ]; then
        [ -f "${PQ_CLOCK_SHIM:-}" ] || { echo "slowclock: no PQ_CLOCK_SHIM library" >&2; exit 2; }
        # An instrumented program's ASan runtime then comes second: the shim
        # allocates nothing.
        run b env LD_LIBRARY_PATH="$compat" LD_PRELOAD="$PQ_CLOCK_SHIM" \
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
    else
        run b env LD_LIBRARY_PATH="$compat"
    fi
    ;;
*)
    echo "unknown mode $mode" >&2
    exit 2
    ;;
esac

status=0
# A program's known differences (expected-differences/NAME.txt: each entry
# the exact lines of both runs and why) are masked, those lines only.
expected="$(dirname "$0")/expected-differences/$(basename "$1" | sed 's/^pqdiff_//').txt"
if [ "$mode" != self ] && [ -f "$expected" ] && [ "$(tail -n 1 "$tmp/a.out")" = exit=0 ]; then
    python3 "$(dirname "$0")/expected-differences.py" "$expected" "$tmp/a.out" "$tmp/b.out" || status=1
fi
# The reference must have run to its end: otherwise the harness is broken.
if [ "$(tail -n 1 "$tmp/a.out")" != exit=0 ]; then
    echo "---- $(basename "$1"): the libpq run did not end with status 0 ----"
    tail -n 20 "$tmp/a.out"
    status=1
fi
if ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
    echo "---- $(basename "$1"): output differs (- libpq, + ${mode/self/libpq again}) ----"
    diff -u --label libpq --label "$mode" "$tmp/a.out" "$tmp/b.out" | head -n "${PQ_DIFF_MAX_LINES:-200}"
    status=1
fi
if [ "$mode" = valgrind ] && [ -s "$tmp/valgrind.log" ]; then
    echo "---- valgrind ----"
    cat "$tmp/valgrind.log"
    status=1
fi
if [ $status = 0 ]; then
    echo "$(basename "$1"): identical ($(wc -l <"$tmp/a.out") lines)"
    [ -n "${PQ_DIFF_VERBOSE:-}" ] && cat "$tmp/a.out"
fi
exit $status
