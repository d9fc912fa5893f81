#!/usr/bin/env bash
# Language bindings built on libpq, as Debian ships them, run unchanged on
# libpq and on libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR): Python's psycopg2
# (psycopg2_session.py) and psycopg 3 (psycopg3_session.py, libpq through
# ctypes), Perl's DBD::Pg (dbd_pg_session.pl), Ruby's pg
# (ruby_pg_session.rb) and PHP's pgsql and PDO_PGSQL
# (php_pgsql_session.php). Each program's output and exit status must be
# identical on both libraries.
# The interpreters do not link libpq, the bindings' modules do: which libpq
# the loader gives them is checked in /proc/self/maps of each interpreter
# with its module loaded.
#
#   run-bindings.sh ENV_FILE COMPAT_DIR PYTHON PERL RUBY PHP
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into
# the uninstrumented interpreters for the instrumented library. PHP is then
# left out: it loads its extensions with RTLD_DEEPBIND, which the sanitizer
# runtime refuses.
set -uo pipefail

[ $# -eq 6 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR PYTHON PERL RUBY PHP" >&2; exit 2; }
python=$3 perl=$4 ruby=$5 php=$6
programs=5
if [ -n "${PQ_PRELOAD:-}" ]; then
    php='' programs=4
fi
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
    local got mapped=()
    mapped+=("$(mapped_libpq "$1" "$python" -c 'import psycopg2; print(open("/proc/self/maps").read())')")
    mapped+=("$(mapped_libpq "$1" "$python" -c 'import psycopg; psycopg.pq.version(); print(open("/proc/self/maps").read())')")
    # shellcheck disable=SC2016 # perl's own variables
    mapped+=("$(mapped_libpq "$1" "$perl" -MDBD::Pg -e 'open(my $f, "<", "/proc/self/maps"); print <$f>')")
    mapped+=("$(mapped_libpq "$1" "$ruby" -rpg -e 'print File.read("/proc/self/maps")')")
    [ -z "$php" ] || mapped+=("$(mapped_libpq "$1" "$php" -r 'echo file_get_contents("/proc/self/maps");')")
    for got in "${mapped[@]}"; do
        if [ -z "$got" ] || [ "$(printf '%s\n' "$got" | wc -l)" != 1 ] ||
            { [ "$1" = pgwire ] && [ "$got" != "$compat_lib" ]; } ||
            { [ "$1" = libpq ] && [ "$got" = "$compat_lib" ]; }; then
            echo "on $1 a binding mapped libpq from '$got' (the compat library: $compat_lib)" >&2
            exit 1
        fi
    done
}

run() { # LIB: every program on LIB, logged in $tmp/LIB.log
    local lib=$1
    : >"$tmp/$lib.log"
    check_loader "$lib"
    pq_step "$lib" "$compat" "$tmp/$lib.log" psycopg2 "$python" "$here/psycopg2_session.py"
    pq_step "$lib" "$compat" "$tmp/$lib.log" psycopg "$python" "$here/psycopg3_session.py"
    pq_step "$lib" "$compat" "$tmp/$lib.log" DBD::Pg "$perl" "$here/dbd_pg_session.pl"
    pq_step "$lib" "$compat" "$tmp/$lib.log" ruby-pg "$ruby" "$here/ruby_pg_session.rb"
    [ -z "$php" ] || pq_step "$lib" "$compat" "$tmp/$lib.log" php-pgsql "$php" "$here/php_pgsql_session.php"
}

run libpq
run pgwire
if [ "$(grep -c '^exit=0$' "$tmp/libpq.log")" != "$programs" ]; then
    echo "the programs failed on libpq itself:"
    cat "$tmp/libpq.log"
    exit 1
fi
if ! diff -u "$tmp/libpq.log" "$tmp/pgwire.log"; then
    echo "the bindings' output differs between libpq (-) and libpgwire-pq (+)"
    exit 1
fi
names="psycopg2, psycopg 3, DBD::Pg, ruby-pg"
[ -z "$php" ] || names+=" and PHP's pgsql"
echo "$names: identical output on both libraries ($(wc -l <"$tmp/libpq.log") lines)"
