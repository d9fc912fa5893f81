#!/usr/bin/env bash
# Runs a program that needs no server (pure.c) on libpq and then on
# libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR, checked to be the libpq.so.5 the
# loader picks) and fails when what they print differs, but for the lines
# expected-differences/NAME.txt lists with the reason (the format of
# tests/pq/diff/expected-differences.py).
#
#   run-pure.sh COMPAT_DIR PROGRAM
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 COMPAT_DIR PROGRAM" >&2; exit 2; }
compat=$(realpath -m -- "$1") program=$(realpath -- "$2")
export LC_ALL=C LANG=C
unset PGCLIENTENCODING LD_PRELOAD
lib=$(LD_TRACE_LOADED_OBJECTS=1 LD_LIBRARY_PATH=$compat "$program" 2>&1 | awk '$1 == "libpq.so.5" {print $3}')
if [ "$(realpath -m "$lib")" != "$compat/libpq.so.5" ]; then
    echo "the loader gives $program libpq.so.5 from '$lib', not $compat" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$program" >"$tmp/libpq.out" 2>&1
echo "exit=$?" >>"$tmp/libpq.out"
env LD_LIBRARY_PATH="$compat" ${PQ_PRELOAD:+LD_PRELOAD="$PQ_PRELOAD"} "$program" >"$tmp/pgwire.out" 2>&1
echo "exit=$?" >>"$tmp/pgwire.out"
expected="$(dirname "$0")/expected-differences/$(basename "$program" | sed 's/^pqabi_//').txt"
if [ -f "$expected" ]; then
    python3 "$(dirname "$0")/../diff/expected-differences.py" "$expected" "$tmp/libpq.out" \
        "$tmp/pgwire.out" || exit 1
fi
if ! diff -u --label libpq --label pgwire "$tmp/libpq.out" "$tmp/pgwire.out" | cut -c1-300; then
    :
fi
cmp -s "$tmp/libpq.out" "$tmp/pgwire.out" || { echo "---- output differs (- libpq, + pgwire)"; exit 1; }
echo "$(wc -l <"$tmp/libpq.out") lines, identical"
