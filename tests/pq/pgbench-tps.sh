#!/usr/bin/env bash
# TPS of Debian's pgbench on libpq and on libpgwire-pq, for the layer's note
# (not a ctest test: its numbers depend on the machine).
#
#   pgbench-tps.sh ENV_FILE COMPAT_DIR [PGBENCH]
#
# One database initialised once (pgbench -i -s SCALE); then for each mode
# (simple, extended, prepared, -C, -c 8 -j 2, the \startpipeline script) the
# two libraries alternate, ROUNDS rounds each of DURATION seconds (-T), and
# the median TPS of each library and the ratio libpgwire-pq / libpq are
# printed, with the median of the per-round ratios (each round's two runs
# are adjacent in time, so a ratio of a pair moves less with the machine
# than the medians do), the rounds in which libpgwire-pq was ahead, and the
# client CPU per transaction (user + system time of the pgbench process,
# from bash's time, over the transactions it processed): at one client the
# server's work is the same for both, and what the library adds is that
# CPU. The order turns each round (libpq first, then libpgwire-pq first,
# ...): the tables grow with every run (pgbench_history, dead tuples until
# autovacuum), so the run that always came second would always meet the
# larger tables.
#
# PQ_TPS_SCALE (default 10), PQ_TPS_ROUNDS (3), PQ_TPS_DURATION (10).
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR [PGBENCH]" >&2; exit 2; }
pgbench=${3:-$(printf '%s\n' /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -1)}
psql=$(dirname "$pgbench")/psql
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
pq_setup "$1" "$2" "$pgbench"
compat=$PQ_COMPAT tmp=$PQ_TMP
scale=${PQ_TPS_SCALE:-10} rounds=${PQ_TPS_ROUNDS:-3} duration=${PQ_TPS_DURATION:-10}
db=pq_pgbench_tps
trap '"$psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1; rm -rf "$tmp"' EXIT


"$psql" -X -q -d postgres -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || exit 1
"$pgbench" -i -q -s "$scale" "$db" >/dev/null 2>&1 || { echo "pgbench -i failed"; exit 1; }

modes=(
    "simple|-M simple"
    "extended|-M extended"
    "prepared|-M prepared"
    "connect|-C -M simple"
    "8 clients, 2 threads|-c 8 -j 2 -M prepared"
    "pipeline|-M extended -f $(dirname "$0")/pgbench-pipeline.sql"
)

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

tps() { # LIB ARGS...: one run's TPS and client CPU per transaction (µs)
    local lib=$1 out t0 n cpu
    shift
    local TIMEFORMAT='%3U %3S'
    if [ "$lib" = pgwire ]; then
        out=$({ time LD_LIBRARY_PATH=$compat "$pgbench" -n -T "$duration" "$@" "$db" 2>&1; } 2>&1)
    else
        out=$({ time "$pgbench" -n -T "$duration" "$@" "$db" 2>&1; } 2>&1)
    fi
    t0=$(echo "$out" | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -1)
    n=$(echo "$out" | sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' | head -1)
    cpu=$(echo "$out" | tail -1 | awk -v n="${n:-0}" 'NF == 2 && n > 0 { printf "%.1f", ($1 + $2) * 1e6 / n }')
    if [ -z "$t0" ] || [ -z "$cpu" ]; then
        echo "$out" >&2
        echo "0 0"
        return
    fi
    echo "$t0 $cpu"
}

col() { awk -v c="$1" '{print $c}' "$2"; }

printf '%-22s %10s %10s %7s %7s %9s %9s %7s\n' mode "libpq tps" "pgwire tps" ratio \
    "paired" "libpq cpu" "pgw cpu" "cpu"
for m in "${modes[@]}"; do
    name=${m%%|*} args=${m#*|}
    : >"$tmp/libpq" && : >"$tmp/pgwire" && : >"$tmp/pairs"
    for r in $(seq "$rounds"); do
        order="libpq pgwire"
        [ $((r % 2)) -eq 0 ] && order="pgwire libpq"
        for lib in $order; do
            # shellcheck disable=SC2086
            tps "$lib" $args >>"$tmp/$lib"
        done
        paste -d' ' <(tail -1 "$tmp/libpq") <(tail -1 "$tmp/pgwire") |
            awk '$1 > 0 { printf "%.4f\n", $3 / $1 }' >>"$tmp/pairs"
    done
    a=$(col 1 "$tmp/libpq" | median) b=$(col 1 "$tmp/pgwire" | median)
    ca=$(col 2 "$tmp/libpq" | median) cb=$(col 2 "$tmp/pgwire" | median)
    p=$(median <"$tmp/pairs")
    printf '%-22s %10.1f %10.1f %7s %7.3f %9.1f %9.1f %7s\n' "$name" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')" \
        "${p:-0}" "$ca" "$cb" \
        "$(awk -v a="$ca" -v b="$cb" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }')"
    printf '    libpq tps: %s\n    pgwire tps: %s\n    per-round ratios: %s\n' \
        "$(col 1 "$tmp/libpq" | tr '\n' ' ' | sed 's/ $//')" \
        "$(col 1 "$tmp/pgwire" | tr '\n' ' ' | sed 's/ $//')" \
        "$(tr '\n' ' ' <"$tmp/pairs" | sed 's/ $//')"
    # With no difference between the libraries, each round is a coin toss:
    # libpgwire-pq ahead in (nearly) every round, or in (nearly) none, is a
    # difference the noise of single rounds hides.
    awk '{ n++; if ($1 >= 1) k++ } END { printf "    libpgwire-pq ahead in %d of %d rounds\n", k, n }' \
        "$tmp/pairs"
done
