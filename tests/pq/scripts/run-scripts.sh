#!/usr/bin/env bash
# Debian's unchanged client programs of the server's bindir that are not
# psql, pgbench or pg_dump run the same on libpq and on libpgwire-pq
# (LD_LIBRARY_PATH=COMPAT_DIR): createdb, createuser, vacuumdb, reindexdb,
# clusterdb, pg_amcheck, vacuumlo, pg_isready, dropuser and dropdb, each
# echoing the SQL it sends (-e), with their failures too (an object that
# exists or does not, a table that is not there, a server that does not
# answer). vacuumdb, reindexdb and pg_amcheck with -j run their statements
# on several connections from one select() loop over PQsocket, with
# PQconsumeInput, PQisBusy and PQgetResult. Each library gets the same
# fresh database, made by its own createdb; every step's output and exit
# status must be identical.
#
#   run-scripts.sh ENV_FILE COMPAT_DIR BINDIR
#
# PQ_PRELOAD (set by the sanitizer build): the ASan runtime, preloaded into
# the uninstrumented programs for the instrumented library.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR BINDIR" >&2; exit 2; }
bin=$3
here=$(cd "$(dirname "$0")" && pwd)
progs=(createdb createuser vacuumdb reindexdb clusterdb pg_amcheck vacuumlo pg_isready dropuser dropdb)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2" "${progs[@]/#/$bin/}"
compat=$PQ_COMPAT tmp=$PQ_TMP
db=pq_scripts role=pq_scripts_role
sql() { "$bin/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
drop_all() {
    sql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" \
        -c "DROP ROLE IF EXISTS $role"
}
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    drop_all >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
drop_all >/dev/null 2>&1

# Tables of different sizes (vacuumdb and reindexdb order them by size),
# indexes, one clustered, and large objects of fixed OIDs (vacuumlo names
# them): two referenced, two orphaned.
seed() {
    sql -d "$db" <<'EOF'
CREATE TABLE big (id int PRIMARY KEY, v text);
INSERT INTO big SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g;
CREATE TABLE mid (id int PRIMARY KEY, k int);
INSERT INTO mid SELECT g, g % 7 FROM generate_series(1, 3000) g;
CREATE INDEX mid_k ON mid (k);
ALTER TABLE mid CLUSTER ON mid_k;
CREATE TABLE small (id int PRIMARY KEY);
INSERT INTO small SELECT generate_series(1, 10);
CREATE TABLE docs (id int PRIMARY KEY, body oid);
INSERT INTO docs VALUES (1, lo_from_bytea(900001, 'one')), (2, lo_from_bytea(900002, 'two'));
SELECT lo_from_bytea(900002 + g, convert_to('orphan ' || g, 'UTF8')) FROM generate_series(1, 2) g \g /dev/null
VACUUM ANALYZE;
EOF
}

# step LIB NAME PROGRAM ARGS...: PROGRAM of the bindir on LIB, logged.
step() {
    local lib=$1 name=$2 prog=$3
    shift 3
    pq_step "$lib" "$compat" "$tmp/$lib.log" "$name" "$bin/$prog" "$@"
}

run() {
    local lib=$1
    : >"$tmp/$lib.log"
    step "$lib" createdb createdb -e "$db" "the database of tests/pq/scripts"
    seed >"$tmp/seed-$lib.out" 2>&1 || { echo "seed failed on $lib's database"; cat "$tmp/seed-$lib.out"; exit 1; }
    step "$lib" createdb-again createdb -e "$db"
    step "$lib" createuser createuser -e --no-login "$role"
    step "$lib" createuser-again createuser -e --no-login "$role"
    step "$lib" vacuumdb-j vacuumdb -e -j 3 -d "$db" -t big -t mid -t small -t docs
    step "$lib" vacuumdb-analyze vacuumdb -e -Z -d "$db" -t big -t mid
    step "$lib" vacuumdb-stages vacuumdb -e --analyze-in-stages -d "$db" -t small
    step "$lib" vacuumdb-missing vacuumdb -e -j 2 -d "$db" -t small -t no_such_table
    step "$lib" reindexdb-j reindexdb -e -j 2 -d "$db" -t big -t mid -t small
    step "$lib" reindexdb-index reindexdb -e -d "$db" -i mid_k
    step "$lib" reindexdb-missing reindexdb -e -d "$db" -i no_such_index
    step "$lib" clusterdb clusterdb -e -d "$db"
    step "$lib" clusterdb-table clusterdb -e -d "$db" -t mid
    step "$lib" pg_amcheck pg_amcheck -j 2 --install-missing -d "$db" -t big -t mid -t small
    step "$lib" vacuumlo-dry vacuumlo -v -n "$db"
    step "$lib" vacuumlo vacuumlo -v "$db"
    step "$lib" pg_isready pg_isready -d "$db"
    step "$lib" pg_isready-no-server pg_isready -h 127.0.0.1 -p 1 # (tcpmux: nothing listens)
    step "$lib" pg_isready-bad-option pg_isready -d "no_such_option=1"
    step "$lib" dropuser dropuser -e "$role"
    step "$lib" dropuser-again dropuser -e "$role"
    step "$lib" dropdb dropdb -e "$db"
    step "$lib" dropdb-again dropdb -e "$db"
}

run libpq
run pgwire
# (the steps meant to succeed)
pq_compare_steps "$tmp/libpq.log" "$tmp/pgwire.log" createdb createuser vacuumdb-j vacuumdb-analyze \
    vacuumdb-stages reindexdb-j reindexdb-index clusterdb clusterdb-table pg_amcheck vacuumlo-dry vacuumlo \
    pg_isready dropuser dropdb
