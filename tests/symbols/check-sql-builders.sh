#!/usr/bin/env bash
# RELIABILITY case 3: the public API has no path that splices a value into
# SQL text. Requests carry their values as Bind parameters (session.h); the
# only exported functions that put a caller's text into SQL are the ones
# listed below, each of which refuses invalid UTF-8 with an error and no
# string (tests/unit/test_escape.c, tests/integration/test_send_limits.c's
# test_sql_builders_refuse_invalid_utf8). This check lists the exported
# functions of the public headers whose names say they build, quote or
# escape SQL (SQLSTATE helpers aside), and fails on one that is not in the list: a new one must be
# added here together with its test.
#
#   check-sql-builders.sh INCLUDE_DIR
set -euo pipefail
inc=$1
# name: why it is allowed
allowed='
pgw_escape_literal      quotes a value as a literal; refuses invalid UTF-8
pgw_escape_identifier   quotes a name as an identifier; refuses invalid UTF-8
pgw_escape_free         frees what the two above return
pgw_listen_sql          LISTEN/UNLISTEN with a quoted channel; refuses invalid UTF-8
pgw_type_load_sql       a constant query; the type names go as its parameter
pgw_hostplan_probe_sql  one of two constant queries; takes no value
'
found=$(grep -ho 'PGW_EXTERN[^(]*(' "$inc"/pgwire/*.h | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' |
    grep -iE 'sql|escape|quote|literal|ident|interp|splice|format_query' |
    grep -v sqlstate | sort -u)
[ -n "$found" ] || { echo "no exported function found under $inc: wrong directory?"; exit 1; }
bad=0
for f in $found; do
    if ! grep -qE "^$f " <<<"$allowed"; then
        echo "$f: an exported function that may build SQL from a value; if it does, it must"
        echo "  refuse invalid UTF-8 (test it) and be listed in $0"
        bad=1
    fi
done
[ $bad = 0 ] || exit 1
echo "SQL builders: $(wc -w <<<"$found") exported, all known: $(tr '\n' ' ' <<<"$found")"
