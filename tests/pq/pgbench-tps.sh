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
# printed. The order turns each round (libpq first, then libpgwire-pq first,
# ...): the tables grow with every run (pgbench_history, dead tuples until
# autovacuum), so the run that always came second would always meet the
# larger tables.
#
# PQ_TPS_SCALE (default 10), PQ_TPS_ROUNDS (3), PQ_TPS_DURATION (10).
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR [PGBENCH]" >&2; exit 2; }
env_file=$1 compat=$(realpath -m -- "$2")
pgbench=${3:-$(printf '%s\n' /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -1)}
psql=$(dirname "$pgbench")/psql
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
pq_check_loader "$pgbench" "$compat"
pq_load_env "$env_file"
scale=${PQ_TPS_SCALE:-10} rounds=${PQ_TPS_ROUNDS:-3} duration=${PQ_TPS_DURATION:-10}
db=pq_pgbench_tps
tmp=$(mktemp -d)
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

tps() { # LIB ARGS...: one run's TPS
    local lib=$1 out
    shift
    if [ "$lib" = pgwire ]; then
        out=$(LD_LIBRARY_PATH=$compat "$pgbench" -n -T "$duration" "$@" "$db" 2>&1)
    else
        out=$("$pgbench" -n -T "$duration" "$@" "$db" 2>&1)
    fi
    echo "$out" | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -1 | grep . || { echo "$out" >&2; echo 0; }
}

printf '%-22s %12s %12s %8s\n' mode "libpq tps" "pgwire tps" ratio
for m in "${modes[@]}"; do
    name=${m%%|*} args=${m#*|}
    : >"$tmp/libpq" && : >"$tmp/pgwire"
    for r in $(seq "$rounds"); do
        order="libpq pgwire"
        [ $((r % 2)) -eq 0 ] && order="pgwire libpq"
        for lib in $order; do
            # shellcheck disable=SC2086
            tps "$lib" $args >>"$tmp/$lib"
        done
    done
    a=$(median <"$tmp/libpq") b=$(median <"$tmp/pgwire")
    printf '%-22s %12.1f %12.1f %8s   (libpq: %s; pgwire: %s)\n' "$name" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')" \
        "$(tr '\n' ' ' <"$tmp/libpq" | sed 's/ $//')" "$(tr '\n' ' ' <"$tmp/pgwire" | sed 's/ $//')"
done
