#!/usr/bin/env bash
# Debian's unchanged psql runs tests/pq/psql/script.sql on libpq and then on
# libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR): stdout and stderr (one stream),
# the exit status and the files the script writes must be byte-identical,
# except the lines expected-differences.txt lists (with the reason for each).
#
#   run-psql.sh ENV_FILE COMPAT_DIR PSQL
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into the
# uninstrumented psql for the instrumented library.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR PSQL" >&2; exit 2; }
psql=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2" "$psql"
compat=$PQ_COMPAT tmp=$PQ_TMP
export PAGER=cat PSQL_PAGER=cat COLUMNS=120
db=pq_psql
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    "$psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

run() {
    local lib=$1 dir=$tmp/$1
    mkdir -p "$dir"
    cp "$here/script.sql" "$here/stop.sql" "$here/items_in.csv" "$dir/"
    # A large object with every byte value.
    python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 40)' >"$dir/lo_in.bin"
    "$psql" -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || return 1
    pq_wrap "$lib" "$compat"
    : >"$tmp/$lib.out"
    for script in script.sql stop.sql; do
        # A hang is killed (status 124) and shows in the comparison.
        (cd "$dir" && timeout -k 5 "${PQ_PSQL_TIMEOUT:-60}" "${PQ_WRAP[@]}" "$psql" -X -w -d "$db" -f "$script" \
            -v T_HOST="$PGHOST" -v T_PORT="$PGPORT" -v T_USER="$PGUSER" -v T_DB="$db" \
            -v TCP_HOST="${PGW_TEST_TCP_HOST:-127.0.0.1}" -v SCRAM_USER="$PGW_TEST_SCRAM_USER" \
            -v SCRAM_PASSWORD="$PGW_TEST_SCRAM_PASSWORD") >>"$tmp/$lib.out" 2>&1
        echo "exit=$?" >>"$tmp/$lib.out"
    done
    for f in items_out.tsv items_out.csv g_out.txt lo_out.bin; do
        echo "---- file $f" >>"$tmp/$lib.out"
        if [ -f "$dir/$f" ]; then md5sum <"$dir/$f" >>"$tmp/$lib.out"; else echo missing >>"$tmp/$lib.out"; fi
    done
    # The listed lines, masked (whole-line extended regular expressions).
    python3 - "$here/expected-differences.txt" "$tmp/$lib.out" >"$tmp/$lib.masked" <<'PY'
import re, sys
pats = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
for line in open(sys.argv[2], "rb").read().decode("utf-8", "surrogateescape").splitlines(True):
    body = line.rstrip("\n")
    hit = next((p for p in pats if re.fullmatch(p, body)), None)
    sys.stdout.write("<masked: %s>\n" % hit if hit else line)
PY
}

run libpq
run pgwire
if cmp -s "$tmp/libpq.masked" "$tmp/pgwire.masked"; then
    echo "psql: identical output ($(wc -l <"$tmp/libpq.out") lines, $(grep -c '^<masked' "$tmp/libpq.masked") masked)"
    [ -n "${PQ_PSQL_VERBOSE:-}" ] && cat "$tmp/libpq.out"
    exit 0
fi
echo "---- psql: output differs (- libpq, + libpgwire-pq) ----"
diff -u --label libpq --label libpgwire-pq "$tmp/libpq.masked" "$tmp/pgwire.masked" |
    head -n "${PQ_DIFF_MAX_LINES:-200}"
exit 1
