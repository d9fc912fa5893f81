#!/usr/bin/env bash
# bench/run.sh: the one command that reproduces bench/RESULTS.md.
#
#   bash bench/run.sh
#
# On a fresh Debian 12 machine it installs what it needs (.ci/deps.sh, and
# python3 when missing), builds a Release build in build-bench/, starts a
# throwaway PostgreSQL cluster (unless PGHOST and PGPORT point at a server),
# loads the data set (bench/setup.sql), runs suites A, B and C and writes
# bench/RESULTS.md, bench/results/*.json and bench/results/ratios.svg.
#
# Environment:
#   BENCH_SCALE   scales row counts and iterations (default 1)
#   BENCH_REPS    runs per (library, scenario) (default 3)
#   BENCH_PORT    port for the throwaway cluster (default: first free from 54320)
#   BENCH_FILTER  regular expression of scenario ids to run (e.g. 'ext_|b_seq')
#   BENCH_SUITES  comma-separated suites (default A,B,C; D is not implemented)
#   BENCH_BUILD   build directory (default build-bench)
#   BENCH_NO_DEPS=1  skip the package installation step
#   BENCH_OUT     write the report and raw JSON there instead of bench/ (CI)
# Smoke mode for CI: BENCH_SCALE=0.1 BENCH_REPS=1 bash bench/run.sh
# Exit status: non-zero if a scenario failed its verification or did not run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BENCH_BUILD:-$ROOT/build-bench}
export BENCH_SCALE=${BENCH_SCALE:-1}
export BENCH_REPS=${BENCH_REPS:-3}
export BENCH_SUITES=${BENCH_SUITES:-A,B,C}
export BENCH_FILTER=${BENCH_FILTER:-}

say() { echo "bench: $*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        say "need root for: $*"
        return 1
    fi
}

# --- dependencies --------------------------------------------------------------
if [ "${BENCH_NO_DEPS:-0}" != 1 ]; then
    if [ -f .ci/deps.sh ]; then
        say "installing dependencies (.ci/deps.sh)"
        as_root bash .ci/deps.sh >&2
    fi
    if ! command -v python3 >/dev/null; then
        say "installing python3"
        as_root apt-get update -q >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >&2
    fi
fi

# --- build -----------------------------------------------------------------------
say "building (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPGW_BUILD_TESTS=OFF \
    -DPGW_BUILD_EXAMPLES=OFF -DPGW_BUILD_BENCH=ON >&2
cmake --build "$BUILD" -j"$(nproc)" --target pgw-bench-driver pgw-bench-micro_codec >&2
DRIVER=$BUILD/bench/pgw-bench-driver

# --- server ------------------------------------------------------------------------
CLUSTER=""
cleanup() {
    if [ -n "$CLUSTER" ]; then
        say "stopping the cluster"
        bash "$ROOT/tests/pg/pg-cluster.sh" stop "$CLUSTER" >&2 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${PGHOST:-}" ] && [ -n "${PGPORT:-}" ]; then
    say "using the server at $PGHOST:$PGPORT"
    export PGUSER=${PGUSER:-$(id -un)} PGDATABASE=${PGDATABASE:-${PGUSER:-$(id -un)}}
    export PGW_TEST_TCP_HOST=${PGW_TEST_TCP_HOST:-127.0.0.1}
else
    CLUSTER=$(mktemp -d /tmp/pgw-bench.XXXXXX)
    say "starting a throwaway cluster in $CLUSTER"
    if [ -n "${BENCH_PORT:-}" ]; then export PGW_TEST_PORT=$BENCH_PORT; fi
    bash "$ROOT/tests/pg/pg-cluster.sh" start "$CLUSTER" >/dev/null
    set -a
    # shellcheck disable=SC1091
    . "$CLUSTER/env"
    set +a
fi
# The wire floor speaks trust auth only; the driver needs these.
: "${PGUSER:?}" "${PGDATABASE:?}"

say "loading the data set"
psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/bench/setup.sql" >/dev/null 2>&1 ||
    psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/bench/setup.sql" >/dev/null

# --- run -----------------------------------------------------------------------------
REPORT=$ROOT/bench/RESULTS.md
out_args=()
if [ -n "${BENCH_OUT:-}" ]; then
    REPORT=$BENCH_OUT/RESULTS.md
    out_args=(--results "$BENCH_OUT/results" --output "$REPORT")
fi
rc=0
python3 "$ROOT/bench/runner.py" --driver "$DRIVER" --micro "$BUILD/bench/pgw-bench-micro_codec" \
    "${out_args[@]}" || rc=$?
if [ $rc = 0 ]; then say "done: $REPORT"; else say "FAILED (see $REPORT)"; fi
exit $rc
