#!/usr/bin/env bash
# Debian's unchanged pg_dump, pg_restore and psql move a database with most
# kinds of object and awkward data (seed.sql) on libpq and on libpgwire-pq
# (LD_LIBRARY_PATH=COMPAT_DIR):
#   - pg_dump as plain SQL, with --column-inserts, in the custom format and
#     in the directory format with two jobs (each of those two read back to
#     SQL by pg_restore -f): each file identical on both libraries;
#   - pg_restore -j 2 of the directory dump, and psql -f of the plain one
#     (its COPY ... FROM stdin data inline), into fresh databases: each dumped
#     again by libpq, identical to the first dump;
#   - every step's exit status and messages identical.
# The \restrict key pg_dump draws at random for each dump is masked.
#
#   run-pgdump.sh ENV_FILE COMPAT_DIR BINDIR
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into
# the uninstrumented programs for the instrumented library.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR BINDIR" >&2; exit 2; }
bin=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2" "$bin/pg_dump" "$bin/pg_restore" "$bin/psql"
compat=$PQ_COMPAT tmp=$PQ_TMP
src=pq_dump_src
dbs=("$src" pq_dump_libpq_r pq_dump_libpq_p pq_dump_pgwire_r pq_dump_pgwire_p)
sql() { "$bin/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
drop_all() {
    for db in "${dbs[@]}"; do
        sql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db"
    done
    sql -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS pq_dump_reader"
}
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    drop_all >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
drop_all >/dev/null 2>&1
sql -d postgres -c "CREATE DATABASE $src" && sql -d "$src" -f "$here/seed.sql" >"$tmp/seed.out" ||
    { echo "seed failed"; cat "$tmp/seed.out"; exit 1; }

unmask() { sed -E '/^\\(un)?restrict /d' "$1"; }

# step LIB NAME COMMAND...: COMMAND on LIB in its directory, logged.
step() {
    (cd "$tmp/$1" && pq_step "$1" "$compat" "$tmp/$1.log" "$2" "${@:3}")
}

run() {
    local lib=$1 d="$tmp/$1"
    mkdir -p "$d"
    : >"$tmp/$lib.log"
    step "$lib" plain "$bin/pg_dump" -d "$src" -f plain.sql
    step "$lib" inserts "$bin/pg_dump" -d "$src" --column-inserts -t kinds -f inserts.sql
    step "$lib" custom "$bin/pg_dump" -d "$src" -Fc -f custom.dump
    step "$lib" directory "$bin/pg_dump" -d "$src" -Fd -j 2 -f dir
    "$bin/pg_restore" -f "$d/custom.sql" "$d/custom.dump"
    "$bin/pg_restore" -f "$d/dir.sql" "$d/dir"
    # Restored on this library from libpq's dumps (the same input for both).
    sql -d postgres -c "CREATE DATABASE pq_dump_${lib}_r" -c "CREATE DATABASE pq_dump_${lib}_p"
    step "$lib" restore "$bin/pg_restore" -j 2 -d "pq_dump_${lib}_r" "$tmp/libpq/dir"
    step "$lib" replay "$bin/psql" -X -q -v ON_ERROR_STOP=1 -d "pq_dump_${lib}_p" -f "$tmp/libpq/plain.sql"
    "$bin/pg_dump" -d "pq_dump_${lib}_r" -f "$d/restored.sql"
    "$bin/pg_dump" -d "pq_dump_${lib}_p" -f "$d/replayed.sql"
}

run libpq
run pgwire
fail=0
same() { # LABEL A B: the two files, \restrict lines masked, must be identical
    if cmp -s <(unmask "$2") <(unmask "$3"); then
        echo "$1: identical ($(wc -c <"$2") bytes)"
    else
        echo "$1: DIFFERENT"
        diff <(unmask "$2") <(unmask "$3") | head -"${PQ_DIFF_MAX_LINES:-40}"
        fail=1
    fi
}
for f in plain.sql inserts.sql custom.sql dir.sql restored.sql replayed.sql; do
    same "$f (libpq / libpgwire-pq)" "$tmp/libpq/$f" "$tmp/pgwire/$f"
done
same "restored.sql (libpgwire-pq) / the source's dump" "$tmp/libpq/plain.sql" "$tmp/pgwire/restored.sql"
same "replayed.sql (libpgwire-pq) / the source's dump" "$tmp/libpq/plain.sql" "$tmp/pgwire/replayed.sql"
sed -i "s/pq_dump_libpq_/pq_dump_LIB_/g" "$tmp/libpq.log"
sed -i "s/pq_dump_pgwire_/pq_dump_LIB_/g" "$tmp/pgwire.log"
same "messages and exit statuses" "$tmp/libpq.log" "$tmp/pgwire.log"
grep -q "^exit=[^0]" "$tmp/libpq.log" && { echo "a step failed on libpq:"; cat "$tmp/libpq.log"; fail=1; }
exit $fail
