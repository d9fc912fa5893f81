#!/usr/bin/env bash
# A long libFuzzer run of one target, bounded by CPU time rather than wall
# time (on a shared machine, at nice 19, an hour of wall clock may be much
# less than an hour of fuzzing):
#
#   tests/fuzz/run-long.sh BUILD_FUZZ_DIR TARGET CPU_SECONDS WORK_DIR [SEEDS_DIR...]
#
# WORK_DIR/corpus starts from tests/fuzz/corpus/<short name> and any SEEDS_DIR
# given (tests/fuzz/seeds_from_golden.py writes seeds from the golden
# traces); new inputs are added there. The fuzzing runs in libFuzzer's fork
# mode with crashes, timeouts and OOMs ignored, so one finding does not end
# the run: each is saved in WORK_DIR/artifacts. When the CPU time of the
# fuzzer and its children reaches CPU_SECONDS it is stopped; a run stopped
# early (a crash of the driver itself) is resumed by calling again with the
# same WORK_DIR: the CPU already spent (WORK_DIR/cpu) counts. Then
# WORK_DIR/min is the corpus minimized with -merge=1 and WORK_DIR/summary
# holds the figures: executions, CPU seconds, findings, and the cov/ft of
# the minimized corpus.
set -euo pipefail

BUILD=$1 NAME=$2 CPU=$3 WORK=$4
shift 4
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$(find "$BUILD" -type f -executable -name "$NAME" | head -n 1)
[ -n "$BIN" ] || { echo "no $NAME under $BUILD" >&2; exit 1; }
SHORT=${NAME#fuzz_}
mkdir -p "$WORK/corpus" "$WORK/artifacts" "$WORK/min"
if [ -d "$ROOT/tests/fuzz/corpus/$SHORT" ]; then cp -rn "$ROOT/tests/fuzz/corpus/$SHORT/." "$WORK/corpus/"; fi
for s in "$@"; do [ -d "$s" ] && cp -rn "$s/." "$WORK/corpus/"; done

ticks=$(getconf CLK_TCK)
# CPU seconds of pid: its own, its waited-for children's, and its running
# children's (the fork mode's current fuzzing process).
tree_cpu() {
    local t=0 c
    t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0)
    for c in $(pgrep -P "$1" || true); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)))
    done
    echo $((t / ticks))
}

# libFuzzer's fork mode goes on starting jobs after SIGINT: the fuzzer gets
# SIGTERM, and the job it was running (its child) too.
stop_fuzzer() {
    local kids
    kids=$(pgrep -P "$1" || true)
    kill -TERM "$1" 2>/dev/null || true
    for k in $kids; do
        pkill -TERM -P "$k" 2>/dev/null || true
        kill -TERM "$k" 2>/dev/null || true
    done
}

before=$(cat "$WORK/cpu" 2>/dev/null || echo 0)
left=$((CPU - before))
run=$(($(find "$WORK" -maxdepth 1 -name 'log.*' | wc -l) + 1))
LOG=$WORK/log.$run
if [ "$left" -gt 0 ]; then
    # -timeout and -rss_limit_mb as in .ci/run.
    "$BIN" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=25 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$WORK/artifacts/" \
        "$WORK/corpus" >"$LOG" 2>&1 &
    pid=$!
    used=0
    while kill -0 "$pid" 2>/dev/null; do
        used=$(tree_cpu "$pid")
        echo $((before + used)) >"$WORK/cpu"
        if [ "$used" -ge "$left" ]; then
            stop_fuzzer "$pid"
            break
        fi
        sleep 5
    done
    wait "$pid" || true
fi

rm -rf "$WORK/min" && mkdir -p "$WORK/min"
"$BIN" -merge=1 -timeout=25 -rss_limit_mb=2048 "$WORK/min" "$WORK/corpus" >"$WORK/merge.log" 2>&1 || true
"$BIN" -runs=0 -rss_limit_mb=2048 "$WORK/min" >"$WORK/inited.log" 2>&1 || true
execs=0
for l in "$WORK"/log.*; do
    # fork mode: the last "#N: cov" line; a plain run: its final statistics
    n=$(grep -oE '^#[0-9]+: cov' "$l" | tail -n 1 | tr -dc 0-9)
    [ -n "$n" ] || n=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$l" | tr -dc 0-9)
    execs=$((execs + ${n:-0}))
done
{
    echo "target:        $NAME"
    echo "cpu_seconds:   $(cat "$WORK/cpu" 2>/dev/null || echo 0)"
    echo "executions:    $execs"
    echo "last status:   $(cat "$WORK"/log.* | grep -E '^#[0-9]+: cov' | tail -n 1)"
    echo "corpus:        $(find "$WORK/corpus" -type f | wc -l) inputs"
    echo "minimized:     $(find "$WORK/min" -type f | wc -l) inputs, $(find "$WORK/min" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}') bytes"
    echo "minimized cov: $(grep -E 'INITED' "$WORK/inited.log" | tail -n 1)"
    echo "findings:      $(find "$WORK/artifacts" -type f | wc -l) ($(ls "$WORK/artifacts" | tr '\n' ' '))"
} >"$WORK/summary"
cat "$WORK/summary"
