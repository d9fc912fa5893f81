#!/usr/bin/env bash
# The PostgreSQL server's own libpq clients, unchanged, on libpgwire-pq: the
# server started with the loader pointed at COMPAT_DIR loads it into
# dblink, postgres_fdw and libpqwalreceiver (a subscription's apply and
# table-sync workers, a standby's walreceiver). The fixture's cluster
# (ENV_FILE) is the remote server, the publisher and the primary.
#   - dblink and postgres_fdw (fdw.sql): the same output on a server of
#     tests/pg/pg-cluster.sh started on libpq and then restarted on
#     libpgwire-pq;
#   - a subscription on the libpgwire-pq server copies a table of the
#     fixture's (COPY ... TO STDOUT on a replication connection) and then
#     follows its inserts, updates and deletes;
#   - a standby of tests/pg/pg-replica.sh started on libpgwire-pq streams
#     the fixture's WAL: a row committed there shows on the standby.
# Which libpq the server's processes mapped is checked in /proc/PID/maps.
#
#   run-server-clients.sh ENV_FILE COMPAT_DIR
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
pgtests=$(cd "$here/../../pg" && pwd)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2"
tmp=$PQ_TMP
# The servers run as another user when this runs as root: they load a
# copy of the layer.
pq_server_copy
compat=$PQ_SERVER_COMPAT
compat_lib=$(realpath -- "$compat/libpq.so.5")
remote="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
rows=20000

# The fixture's server, by Debian's psql on libpq.
pub() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$@"; }
# on ENV_FILE ARGS...: psql on the server of that pg-cluster.sh env file.
on() {
    local e=$1
    shift
    (
        set -a
        # shellcheck disable=SC1090
        . "$e"
        set +a
        psql -X -q -v ON_ERROR_STOP=1 "$@"
    )
}
# cluster CMD DIR [LIB]: tests/pg/pg-cluster.sh CMD DIR, the server's
# environment pointing the loader at COMPAT_DIR for LIB pgwire. The fixture's
# PGHOST and PGPORT would make it reuse that server.
cluster() {
    local lib=${3:-libpq}
    if [ "$lib" = pgwire ]; then
        env -u PGHOST -u PGPORT LD_LIBRARY_PATH="$compat" bash "$pgtests/pg-cluster.sh" "$1" "$2"
    else
        env -u PGHOST -u PGPORT bash "$pgtests/pg-cluster.sh" "$1" "$2"
    fi
}

fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}

# maps_libpq PID: the libpq files process PID has mapped.
maps_libpq() { awk '$6 ~ /\/libpq\.so[^\/]*$/ {print $6}' "/proc/$1/maps" | sort -u; }

# wait_for ENV_FILE SQL WANT: SQL on that server until it prints WANT (60 s).
wait_for() {
    local got=
    for _ in $(seq 600); do
        got=$(on "$1" -At -c "$2" 2>/dev/null)
        [ "$got" = "$3" ] && return 0
        sleep 0.1
    done
    echo "waited for [$3], got [$got] from: $2"
    return 1
}

# shellcheck disable=SC2317 # run by the trap
cleanup() {
    [ -f "$tmp/s/env" ] && on "$tmp/s/env" -c "DROP SUBSCRIPTION IF EXISTS pq_srv_sub" >/dev/null 2>&1
    pub -c "DROP PUBLICATION IF EXISTS pq_srv_pub" -c "DROP TABLE IF EXISTS pq_srv_t" \
        -c "SELECT pg_drop_replication_slot('pq_srv_sub') FROM pg_replication_slots
            WHERE slot_name = 'pq_srv_sub'" >/dev/null 2>&1
    bash "$pgtests/pg-replica.sh" stop "$tmp/r" >/dev/null 2>&1
    cluster stop "$tmp/s" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

# ------------------------------------------------ dblink and postgres_fdw
sed -e "s|@REMOTE@|$remote|g" -e "s|@HOST@|$PGHOST|g" -e "s|@PORT@|$PGPORT|g" \
    -e "s|@DB@|$PGDATABASE|g" -e "s|@USER@|$PGUSER|g" "$here/fdw.sql" >"$tmp/fdw.sql"
pub -c "DROP TABLE IF EXISTS pq_srv_remote, pq_srv_a, pq_srv_b" \
    -c "CREATE TABLE pq_srv_remote (id int PRIMARY KEY, v text)" \
    -c "INSERT INTO pq_srv_remote SELECT g, 'r' || g FROM generate_series(1, 50) g" \
    -c "CREATE TABLE pq_srv_a AS SELECT g AS id, 'a' || g AS v FROM generate_series(0, 999) g" \
    -c "CREATE TABLE pq_srv_b AS SELECT g AS id, 'b' || g AS v FROM generate_series(1000, 1999) g" ||
    { echo "the remote table could not be made"; exit 1; }
cluster start "$tmp/s" >"$tmp/s.log" 2>&1 || { echo "no server"; cat "$tmp/s.log"; exit 1; }
for lib in libpq pgwire; do
    if [ "$lib" = pgwire ]; then
        cluster restart "$tmp/s" pgwire >>"$tmp/s.log" 2>&1 || { echo "no restart"; cat "$tmp/s.log"; exit 1; }
    fi
    on "$tmp/s/env" -c "DROP EXTENSION IF EXISTS dblink CASCADE" \
        -c "DROP EXTENSION IF EXISTS postgres_fdw CASCADE" >/dev/null 2>&1
    # (ON_ERROR_STOP off: the script's errors are part of what it shows)
    on "$tmp/s/env" -v ON_ERROR_STOP=0 -f "$tmp/fdw.sql" >"$tmp/fdw.$lib.out" 2>&1
done
pub -c "DROP TABLE IF EXISTS pq_srv_remote, pq_srv_a, pq_srv_b" >/dev/null
if cmp -s "$tmp/fdw.libpq.out" "$tmp/fdw.pgwire.out"; then
    echo "dblink and postgres_fdw: identical ($(wc -l <"$tmp/fdw.libpq.out") lines)"
else
    bad "dblink and postgres_fdw differ (- libpq, + libpgwire-pq):"
    diff -u "$tmp/fdw.libpq.out" "$tmp/fdw.pgwire.out" | head -"${PQ_DIFF_MAX_LINES:-60}"
fi
# A backend of the restarted server that used dblink mapped the layer.
dblink_maps=$(on "$tmp/s/env" -At 2>&1 <<EOF
SELECT dblink_connect('maps', '$remote') \g /dev/null
SELECT pg_backend_pid() AS backend \gset
\setenv BACKEND :backend
\! awk '\$6 ~ /\/libpq\.so[^\/]*\$/ {print \$6}' /proc/\$BACKEND/maps | sort -u
EOF
)
[ "$dblink_maps" = "$compat_lib" ] || bad "the dblink backend mapped libpq from '$dblink_maps'"

# ------------------------------------------------ logical replication
pub -c "CREATE TABLE pq_srv_t (id int PRIMARY KEY, v text)" \
    -c "INSERT INTO pq_srv_t SELECT g, 'initial ' || g FROM generate_series(1, $rows) g" \
    -c "CREATE PUBLICATION pq_srv_pub FOR TABLE pq_srv_t" ||
    { echo "the publication could not be made"; exit 1; }
on "$tmp/s/env" -c "CREATE TABLE pq_srv_t (id int PRIMARY KEY, v text)" \
    -c "CREATE SUBSCRIPTION pq_srv_sub CONNECTION '$remote' PUBLICATION pq_srv_pub" \
    >>"$tmp/s.log" 2>&1 || bad "CREATE SUBSCRIPTION failed"
if wait_for "$tmp/s/env" "SELECT count(*) FROM pq_srv_t" "$rows"; then
    echo "subscription: the table's $rows rows copied"
else
    bad "the subscription did not copy the table"
fi
apply=$(on "$tmp/s/env" -At -c "SELECT pid FROM pg_stat_subscription WHERE subname = 'pq_srv_sub'
                                 AND relid IS NULL" 2>/dev/null)
if [ -z "$apply" ] || [ "$(maps_libpq "$apply")" != "$compat_lib" ]; then
    bad "the apply worker (pid '$apply') mapped libpq from '$(maps_libpq "${apply:-0}" 2>&1)'"
fi
pub -c "INSERT INTO pq_srv_t SELECT g, 'later ' || g FROM generate_series($rows + 1, $rows + 500) g" \
    -c "UPDATE pq_srv_t SET v = 'updated' WHERE id <= 10" -c "DELETE FROM pq_srv_t WHERE id % 100 = 0"
want=$(pub -At -c "SELECT count(*), count(*) FILTER (WHERE v = 'updated'), sum(id) FROM pq_srv_t")
if wait_for "$tmp/s/env" \
    "SELECT count(*), count(*) FILTER (WHERE v = 'updated'), sum(id) FROM pq_srv_t" "$want"; then
    echo "subscription: inserts, updates and deletes followed ($want)"
else
    bad "the subscription did not follow the changes"
fi
on "$tmp/s/env" -c "DROP SUBSCRIPTION pq_srv_sub" >/dev/null 2>&1 || bad "DROP SUBSCRIPTION failed"
cluster stop "$tmp/s" >/dev/null 2>&1

# ------------------------------------------------ a streaming standby
if LD_LIBRARY_PATH=$compat bash "$pgtests/pg-replica.sh" start "$tmp/r" "$1" >"$tmp/r.log" 2>&1; then
    pub -c "CREATE TABLE IF NOT EXISTS pq_srv_t (id int PRIMARY KEY, v text)" \
        -c "INSERT INTO pq_srv_t VALUES (-1, 'to the standby')"
    # shellcheck disable=SC1091
    r() { (. "$tmp/r/env" && psql -X -At -h "$PGW_STANDBY_SOCKET_DIR" -p "$PGW_STANDBY_PORT" "$@"); }
    got=
    for _ in $(seq 600); do
        got=$(r -c "SELECT v FROM pq_srv_t WHERE id = -1" 2>/dev/null)
        [ "$got" = "to the standby" ] && break
        sleep 0.1
    done
    if [ "$got" = "to the standby" ]; then
        echo "standby: streamed a row committed on the primary"
    else
        bad "the standby did not replay the row (got '$got')"
    fi
    walrcv=$(r -c "SELECT pid FROM pg_stat_wal_receiver WHERE status = 'streaming'" 2>/dev/null)
    if [ -z "$walrcv" ] || [ "$(maps_libpq "$walrcv")" != "$compat_lib" ]; then
        bad "the walreceiver (pid '$walrcv') mapped libpq from '$(maps_libpq "${walrcv:-0}" 2>&1)'"
    fi
else
    bad "the standby did not start:"
    cat "$tmp/r.log"
fi
exit $fail
