#!/usr/bin/env bash
# Language bindings built on libpq, as Debian ships them, run unchanged on
# libpq and on libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR): Python's psycopg2
# (psycopg2_session.py), Perl's DBD::Pg (dbd_pg_session.pl) and Ruby's pg
# (ruby_pg_session.rb). Each program's output and exit status must be
# identical on both libraries.
# The interpreters do not link libpq, the bindings' modules do: which libpq
# the loader gives them is checked in /proc/self/maps of each interpreter
# with its module loaded.
#
#   run-bindings.sh ENV_FILE COMPAT_DIR PYTHON PERL RUBY
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into
# the uninstrumented interpreters for the instrumented library.
set -uo pipefail

[ $# -eq 5 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR PYTHON PERL RUBY" >&2; exit 2; }
python=$3 perl=$4 ruby=$5
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2"
compat=$PQ_COMPAT tmp=$PQ_TMP
trap 'rm -rf "$tmp"' EXIT
compat_lib=$(realpath -- "$compat/libpq.so.5")

# mapped_libpq LIB COMMAND...: the libpq files COMMAND on LIB has mapped
# once it printed its /proc/self/maps.
mapped_libpq() {
    pq_wrap "$1" "$compat"
    "${PQ_WRAP[@]}" "${@:2}" | awk '$6 ~ /\/libpq\.so[^\/]*$/ {print $6}' | sort -u
}

# check_loader LIB: each interpreter with its binding loaded maps one
# libpq: the compat library on pgwire, another on libpq.
check_loader() {
    local py pl rb got
    py=$(mapped_libpq "$1" "$python" -c 'import psycopg2; print(open("/proc/self/maps").read())')
    # shellcheck disable=SC2016 # perl's own variables
    pl=$(mapped_libpq "$1" "$perl" -MDBD::Pg -e 'open(my $f, "<", "/proc/self/maps"); print <$f>')
    rb=$(mapped_libpq "$1" "$ruby" -rpg -e 'print File.read("/proc/self/maps")')
    for got in "$py" "$pl" "$rb"; do
        if [ -z "$got" ] || [ "$(printf '%s\n' "$got" | wc -l)" != 1 ] ||
            { [ "$1" = pgwire ] && [ "$got" != "$compat_lib" ]; } ||
            { [ "$1" = libpq ] && [ "$got" = "$compat_lib" ]; }; then
            echo "on $1 a binding mapped libpq from '$got' (the compat library: $compat_lib)" >&2
            exit 1
        fi
    done
}

run() { # LIB: both programs on LIB, logged in $tmp/LIB.log
    local lib=$1
    : >"$tmp/$lib.log"
    check_loader "$lib"
    pq_step "$lib" "$compat" "$tmp/$lib.log" psycopg2 "$python" "$here/psycopg2_session.py"
    pq_step "$lib" "$compat" "$tmp/$lib.log" DBD::Pg "$perl" "$here/dbd_pg_session.pl"
    pq_step "$lib" "$compat" "$tmp/$lib.log" ruby-pg "$ruby" "$here/ruby_pg_session.rb"
}

run libpq
run pgwire
if [ "$(grep -c '^exit=0$' "$tmp/libpq.log")" != 3 ]; then
    echo "the programs failed on libpq itself:"
    cat "$tmp/libpq.log"
    exit 1
fi
if ! diff -u "$tmp/libpq.log" "$tmp/pgwire.log"; then
    echo "the bindings' output differs between libpq (-) and libpgwire-pq (+)"
    exit 1
fi
echo "psycopg2, DBD::Pg and ruby-pg: identical output on both libraries ($(wc -l <"$tmp/libpq.log") lines)"
