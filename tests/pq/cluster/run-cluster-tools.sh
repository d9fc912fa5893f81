#!/usr/bin/env bash
# Debian's cluster tools that connect through libpq, unchanged, on
# libpgwire-pq (LD_LIBRARY_PATH=COMPAT_DIR), on clusters of their own:
#   - oid2name and pg_dumpall on a seeded cluster;
#   - pg_upgrade from it to a new cluster of the same major: it connects to
#     both servers and runs pg_dumpall, pg_dump --binary-upgrade, psql and
#     pg_restore, which inherit the loader's path;
#   - pg_rewind of the upgraded cluster, after a standby of it was promoted
#     and both went on writing, from the promoted one (--source-server: the
#     source's files read in single-row mode).
# Each library gets the same fresh clusters with the same contents. The
# tools' outputs (pg_dumpall's \restrict keys and pg_rewind's WAL positions
# and sizes masked: they differ from run to run) and what the upgraded and
# the rewound cluster then hold must be identical, and succeed on libpq.
#
#   run-cluster-tools.sh ENV_FILE COMPAT_DIR BINDIR
#
# BINDIR: the server's bindir (initdb, pg_ctl, pg_upgrade, pg_rewind). The
# servers listen only on unix sockets in a directory of this run. Not under
# the sanitizer build: pg_upgrade and pg_ctl start servers with the
# loader's environment.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 ENV_FILE COMPAT_DIR BINDIR" >&2; exit 2; }
bin=$3
here=$(cd "$(dirname "$0")" && pwd)
progs=(oid2name pg_dumpall pg_upgrade pg_rewind)
# shellcheck source=../lib.sh
. "$here/../lib.sh"
pq_setup "$1" "$2" "${progs[@]/#/$bin/}"
tmp=$PQ_TMP
trap 'stop_all; rm -rf "$tmp"' EXIT
# initdb, the servers and the two upgrade tools refuse root: as root they
# run as postgres, who may not reach the build tree (under /root, say) and
# loads a copy of the layer from here.
runas=()
[ "$(id -u)" = 0 ] && runas=(runuser -u postgres --)
pq_server_copy
compat=$PQ_SERVER_COMPAT
w=$tmp/w # the clusters and their sockets; made anew for each library
port_old=54601 port_new=54602 port_standby=54603
export PGHOST=$w PGUSER=postgres PGDATABASE=postgres
unset PGPORT

srv() { (cd "$w" && "${runas[@]}" "$@"); }
# ctl DATADIR pg_ctl-ARGS...
ctl() {
    local d=$1
    shift
    srv "$bin/pg_ctl" -D "$w/$d" -l "$w/$d.log" -w "$@" >/dev/null
}
stop_all() {
    local d
    for d in old new standby; do
        [ -f "$w/$d/postmaster.pid" ] && ctl "$d" stop -m fast
    done
    return 0
}
sql() { # PORT ARGS...: psql on libpq, stopping at the first error
    local p=$1
    shift
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -p "$p" "$@"
}
# new_cluster NAME PORT: initdb'd and configured, not started.
new_cluster() {
    srv "$bin/initdb" -N -A trust -U postgres -D "$w/$1" >"$w/$1.initdb" 2>&1 || return 1
    srv tee -a "$w/$1/postgresql.conf" >/dev/null <<EOF
port = $2
listen_addresses = ''
unix_socket_directories = '$w'
wal_log_hints = on
wal_keep_size = '256MB'
fsync = off
EOF
}

# step LIB NAME PROGRAM ARGS...: PROGRAM of the bindir on LIB, run in $w as
# the servers' user, logged.
step() {
    local lib=$1 name=$2 prog=$3
    shift 3
    (cd "$w" && pq_step "$lib" "$compat" "$tmp/$lib.log" "$name" "${runas[@]}" "$bin/$prog" "$@")
}

seed() {
    sql "$port_old" <<'EOF'
CREATE ROLE tools_role LOGIN;
CREATE DATABASE tools OWNER tools_role;
\c tools
CREATE TABLE items (id int PRIMARY KEY, doc jsonb, tags text[], at timestamptz DEFAULT '2026-01-02 03:04:05+00');
INSERT INTO items (id, doc, tags) SELECT g, jsonb_build_object('k', g), ARRAY['t' || g % 7] FROM generate_series(1, 3000) g;
CREATE INDEX items_tags ON items USING gin (tags);
CREATE VIEW item_keys AS SELECT id, doc->>'k' AS k FROM items;
CREATE FUNCTION next_id(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
CREATE SEQUENCE tools_seq START 40;
SELECT nextval('tools_seq') \g /dev/null
SELECT lo_from_bytea(424242, 'a large object') \g /dev/null
EOF
}
contents() { # PORT: what a cluster holds, the same query on each
    sql "$1" -d tools -At <<'EOF'
SELECT count(*), sum(id), sum((doc->>'k')::int), count(DISTINCT tags) FROM items WHERE id <= 3000;
SELECT k FROM item_keys WHERE id = 7;
SELECT next_id(41), last_value FROM tools_seq;
SELECT convert_from(lo_get(424242), 'UTF8');
SELECT rolname FROM pg_roles WHERE rolname = 'tools_role';
SELECT count(*), count(*) FILTER (WHERE tags = '{rewound}') FROM items WHERE id > 3000;
EOF
}

run() {
    local lib=$1
    rm -rf "$w" && mkdir -m 755 "$w" || exit 1
    [ ${#runas[@]} -eq 0 ] || chown postgres "$w"
    : >"$tmp/$lib.log"
    if ! { new_cluster old "$port_old" && ctl old start && seed >"$w/seed.out" 2>&1; }; then
        echo "the old cluster could not be made on $lib's run"
        cat "$w"/*.log "$w/seed.out"
        exit 1
    fi
    step "$lib" oid2name oid2name -p "$port_old"
    step "$lib" oid2name-table oid2name -p "$port_old" -d tools -t items -x
    step "$lib" oid2name-no-db oid2name -p "$port_old" -d no_such_db
    step "$lib" pg_dumpall pg_dumpall -p "$port_old" --no-sync
    ctl old stop
    new_cluster new "$port_new" || { echo "no new cluster"; exit 1; }
    step "$lib" pg_upgrade pg_upgrade -b "$bin" -B "$bin" -d "$w/old" -D "$w/new" -U postgres \
        -p "$port_old" -P "$port_new" -s "$w" --no-sync
    ctl new start || { echo "the upgraded cluster did not start"; cat "$w/new.log"; exit 1; }
    { echo "---- upgraded"; contents "$port_new" 2>&1; } >>"$tmp/$lib.log"

    # A standby of the upgraded cluster, promoted; each side then writes its
    # own rows; the old side is rewound from the promoted one.
    if ! { srv "$bin/pg_basebackup" -p "$port_new" -D "$w/standby" -R -X stream >"$w/bb.out" 2>&1 &&
        srv sed -i "s/^port = $port_new/port = $port_standby/" "$w/standby/postgresql.conf" &&
        ctl standby start && ctl standby promote; }; then
        echo "no standby"
        cat "$w/bb.out" "$w/standby.log"
        exit 1
    fi
    sql "$port_new" -d tools -c "INSERT INTO items (id, tags) SELECT g, '{lost}' FROM generate_series(3001, 3400) g" \
        -c "CREATE TABLE only_old (x int)" -c CHECKPOINT
    sql "$port_standby" -d tools -c "INSERT INTO items (id, tags) SELECT g, '{rewound}' FROM generate_series(5001, 5100) g" \
        -c CHECKPOINT
    ctl new stop -m fast
    # -R: standby.signal and primary_conninfo, made from PQconninfo of
    # pg_rewind's connection.
    step "$lib" pg_rewind pg_rewind -D "$w/new" --no-sync -R \
        --source-server="host=$w port=$port_standby user=postgres dbname=postgres"
    { echo "---- primary_conninfo"; grep '^primary_conninfo' "$w/new/postgresql.auto.conf" 2>&1; } >>"$tmp/$lib.log"
    srv sed -i "s/^port = $port_standby/port = $port_new/" "$w/new/postgresql.conf"
    ctl new start || { echo "the rewound cluster did not start"; cat "$w/new.log"; exit 1; }
    sql "$port_standby" -d tools -c "INSERT INTO items (id, tags) VALUES (9999, '{rewound}')"
    # The rewound cluster follows the promoted one: it has the row just
    # written there, and none of the rows only it had written.
    local got=
    for _ in $(seq 300); do
        got=$(sql "$port_new" -d tools -At -c "SELECT count(*) FROM items WHERE id = 9999" 2>/dev/null)
        [ "$got" = 1 ] && break
        sleep 0.1
    done
    {
        echo "---- rewound"
        contents "$port_new" 2>&1
        sql "$port_new" -d tools -At -c "SELECT to_regclass('only_old') IS NULL" 2>&1
    } >>"$tmp/$lib.log"
    stop_all
}

run libpq
run pgwire
# Per-run values: pg_dumpall's random \restrict keys, pg_rewind's WAL
# positions and sizes.
mask() {
    sed -E -e 's/^\\(un)?restrict [A-Za-z0-9]+$/\\\1restrict KEY/' \
        -e '/^pg_rewind: /s/[0-9A-F]+\/[0-9A-F]+/LSN/g' -e '/^pg_rewind: /s/[0-9]+ (kB|MB)/N \1/g' "$1"
}
mask "$tmp/libpq.log" >"$tmp/libpq.masked"
mask "$tmp/pgwire.log" >"$tmp/pgwire.masked"
fail=0
pq_compare_steps "$tmp/libpq.masked" "$tmp/pgwire.masked" oid2name oid2name-table pg_dumpall pg_upgrade \
    pg_rewind || fail=1
# The upgraded and the rewound cluster hold what they should.
seeded=$'3000|4501500|4501500|7\n7\n42|40\na large object\ntools_role'
for part in upgraded rewound; do
    # rewound: the 101 rows written on the promoted side, none of the old
    # side's own (its 400 rows, its table)
    want=$seeded$'\n0|0'
    [ $part = rewound ] && want=$seeded$'\n101|101\nt'
    got=$(awk -v s="---- $part" '$0 == s {on = 1; next} /^---- / {on = 0} on' "$tmp/libpq.log")
    [ "$got" = "$want" ] || { echo "the $part cluster on libpq holds:"; echo "$got"; fail=1; }
done
exit $fail
