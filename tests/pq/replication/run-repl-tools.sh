#!/usr/bin/env bash
# Debian's unchanged replication clients on libpq and on libpgwire-pq
# (LD_LIBRARY_PATH=COMPAT_DIR), over replication connections (COPY TO of
# BASE_BACKUP, COPY BOTH of START_REPLICATION):
#   - pg_basebackup -Fp -X stream (WAL streamed beside the copy): exit 0 and
#     pg_verifybackup finds the backup whole, on both libraries;
#   - pg_recvlogical from a test_decoding slot of each library's own, made
#     before the same changes, to the same end position: the changes of
#     this script's table (other tests may write meanwhile) all there, 2,030
#     lines, and identical. The end position lies past one more transaction
#     after them, so that wherever the server lets pg_recvlogical stop at
#     the end (a keepalive past it, a record past it), every change before
#     that transaction has been sent;
#   - pg_receivewal from a physical slot of each, to one end position: the
#     same WAL files, byte for byte;
#   - every step's messages and exit status identical.
#
#   run-repl-tools.sh ENV_FILE COMPAT_DIR BINDIR
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into
# the uninstrumented programs for the instrumented library.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR BINDIR" >&2; exit 2; }
bin=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2" "$bin/pg_basebackup" "$bin/pg_recvlogical" "$bin/pg_receivewal"
compat=$PQ_COMPAT tmp=$PQ_TMP
libs=(libpq pgwire)
sql() { "$bin/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
drop_slots() {
    for lib in "${libs[@]}"; do
        sql -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
                WHERE slot_name IN ('pq_rl_$lib', 'pq_rw_$lib')"
    done
    sql -c "DROP TABLE IF EXISTS pq_repl_tools"
}
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    drop_slots >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
drop_slots >/dev/null 2>&1

# step LIB NAME COMMAND...: COMMAND on LIB, logged.
step() { pq_step "$1" "$compat" "$tmp/$1.log" "$2" "${@:3}"; }

for lib in "${libs[@]}"; do
    : >"$tmp/$lib.log"
    step "$lib" basebackup "$bin/pg_basebackup" -D "$tmp/$lib.base" -Fp -X stream -c fast --no-sync
    "$bin/pg_verifybackup" -q "$tmp/$lib.base" >>"$tmp/$lib.log" 2>&1
    echo "verify exit=$?" >>"$tmp/$lib.log"
    rm -rf "$tmp/$lib.base"
done
for lib in "${libs[@]}"; do
    sql -c "SELECT 1 FROM pg_create_logical_replication_slot('pq_rl_$lib', 'test_decoding')" \
        -c "SELECT 1 FROM pg_create_physical_replication_slot('pq_rw_$lib', true)" >/dev/null
done
sql -c "CREATE TABLE pq_repl_tools (id int PRIMARY KEY, t text)" \
    -c "INSERT INTO pq_repl_tools SELECT g, repeat('x', g) FROM generate_series(1, 2000) g" \
    -c "UPDATE pq_repl_tools SET t = 'u' WHERE id % 100 = 0" \
    -c "DELETE FROM pq_repl_tools WHERE id > 1990" >/dev/null
# The end of what was inserted, not the write position (pg_current_wal_lsn),
# which lags behind the changes under the fixture's synchronous_commit=off.
end=$(sql -c "SELECT pg_current_wal_insert_lsn()")
sql -c "SELECT 1 FROM pg_logical_emit_message(true, 'pq_rt_after', 'x')" >/dev/null
logical_end=$(sql -c "SELECT pg_current_wal_insert_lsn()")
for lib in "${libs[@]}"; do
    step "$lib" recvlogical "$bin/pg_recvlogical" -d "$PGDATABASE" --slot "pq_rl_$lib" --start \
        -E "$logical_end" -f "$tmp/$lib.changes" -o include-xids=0
    grep -F 'pq_repl_tools' "$tmp/$lib.changes" >"$tmp/$lib.ours"
    mkdir "$tmp/$lib.wal"
    step "$lib" receivewal "$bin/pg_receivewal" -D "$tmp/$lib.wal" -S "pq_rw_$lib" -E "$end" --no-sync
done

fail=0
same() { # LABEL A B
    if cmp -s "$2" "$3"; then
        echo "$1: identical ($(wc -c <"$2") bytes)"
    else
        echo "$1: DIFFERENT"
        diff "$2" "$3" | head -"${PQ_DIFF_MAX_LINES:-40}"
        fail=1
    fi
}
sed -i 's/pq_r\([lw]\)_libpq/pq_r\1_LIB/g' "$tmp/libpq.log"
sed -i 's/pq_r\([lw]\)_pgwire/pq_r\1_LIB/g; s/pgwire\.\(base\|wal\|changes\)/libpq.\1/g' "$tmp/pgwire.log"
same "messages and exit statuses" "$tmp/libpq.log" "$tmp/pgwire.log"
for lib in "${libs[@]}"; do # 2,000 inserted, 20 updated, 10 deleted
    n=$(wc -l <"$tmp/$lib.ours")
    [ "$n" -eq 2030 ] || { echo "pg_recvlogical on $lib decoded $n of the 2030 changes"; fail=1; }
done
same "decoded changes (libpq / libpgwire-pq)" "$tmp/libpq.ours" "$tmp/pgwire.ours"
# The two slots were made one after the other: the first may keep a segment
# more of what other tests wrote meanwhile. The files both have, up to the
# one holding the end position, are the same.
walfiles=$(cd "$tmp/libpq.wal" && ls)
[ -n "$walfiles" ] || { echo "pg_receivewal on libpq wrote no file"; fail=1; }
last_libpq=$(echo "$walfiles" | tail -1) last_pgwire=$(cd "$tmp/pgwire.wal" && ls | tail -1)
if [ "$last_libpq" = "$last_pgwire" ]; then
    echo "last WAL file: $last_libpq on both"
else
    echo "last WAL file: $last_libpq on libpq, '$last_pgwire' on libpgwire-pq"
    fail=1
fi
# What other tests wrote after the end position may follow it in the last,
# partial segment, as much as each stream happened to carry: that file is
# compared up to the end position.
lsn=$((16#${end%/*} * 4294967296 + 16#${end#*/}))
upto=$((lsn % (16 * 1024 * 1024)))
for f in $walfiles; do
    [ -f "$tmp/pgwire.wal/$f" ] || continue
    if [ "${f%.partial}" = "$f" ]; then
        same "WAL $f" "$tmp/libpq.wal/$f" "$tmp/pgwire.wal/$f"
    elif cmp -s -n "$upto" "$tmp/libpq.wal/$f" "$tmp/pgwire.wal/$f"; then
        echo "WAL $f: identical up to the end position ($upto bytes)"
    else
        echo "WAL $f: DIFFERENT before the end position"
        fail=1
    fi
done
grep -q "exit=[^0]" "$tmp/libpq.log" && { echo "a step failed on libpq:"; cat "$tmp/libpq.log"; fail=1; }
exit $fail
