#!/usr/bin/env bash
# A streaming standby of a throwaway cluster of tests/pg/pg-cluster.sh.
#
#   pg-replica.sh start DIR PRIMARY_ENV   pg_basebackup -R of the cluster whose
#                                         pg-cluster.sh env file is PRIMARY_ENV,
#                                         started as a hot standby; write DIR/env
#   pg-replica.sh promote DIR             pg_ctl promote; wait until it accepts
#                                         writes
#   pg-replica.sh stop DIR                stop it and delete DIR (idempotent)
#   pg-replica.sh env DIR                 print DIR/env
#
# The standby streams from the primary's unix socket as the primary's trust
# superuser (pg-cluster.sh's pg_hba.conf has the replication lines), listens
# on 127.0.0.1 at a free port (probed from 55320, or PGW_STANDBY_PORT) and on
# a unix socket in DIR (or in a short directory under /tmp when DIR's path is
# too long), with a copy of the primary's TLS files, roles and settings.
# start returns once the standby is in recovery, streaming, and has replayed
# the primary's WAL up to where it was when the base backup finished.
#
# DIR/env lists KEY=VALUE lines: PGW_STANDBY_HOST (127.0.0.1),
# PGW_STANDBY_PORT, PGW_STANDBY_SOCKET_DIR, PGW_STANDBY_DATADIR,
# PGW_STANDBY_LOG, PGW_STANDBY_PRIMARY_PORT.
#
# With PGW_STANDBY_APPLY_DELAY set (a duration such as 30s or 5min), the
# standby holds each commit back that long (recovery_min_apply_delay): a
# standby that lags by design. start still returns once it has replayed the
# primary's WAL as of the base backup (nothing committed after it is held).
# Lift the delay with ALTER SYSTEM SET recovery_min_apply_delay = 0 and
# SELECT pg_reload_conf() on the standby.
#
# The server refuses to run as root: as root it runs as `postgres` (runuser).
set -euo pipefail

NAME=pg-replica
readonly FIRST_PORT=55320
readonly PORT_TRIES=40

usage() {
    echo "usage: $0 start DIR PRIMARY_ENV | promote DIR | stop DIR | env DIR" >&2
    exit 1
}
[ $# -ge 2 ] || usage
CMD=$1
DIR=$(realpath -m -- "$2")
# shellcheck source=fixture-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/fixture-lib.sh"

# The standby's files: DIR/env names them once started; while starting,
# DIR/runtime (or DIR itself).
run_dir() {
    if [ -f "$DIR/runtime" ]; then cat "$DIR/runtime"; else echo "$DIR"; fi
}

pgbin_of() {
    local b=${PGW_PG_BINDIR:-}
    [ -n "$b" ] || b=$(env_get "$1" PGW_TEST_PGBIN)
    if [ -z "$b" ] && command -v pg_config >/dev/null; then b=$(pg_config --bindir); fi
    [ -n "$b" ] && [ -x "$b/pg_basebackup" ] ||
        die "no PostgreSQL server binaries with pg_basebackup (apt-get install postgresql)"
    echo "$b"
}

teardown() {
    local run
    [ -d "$DIR" ] || return 0
    check_ours standby
    run=$(run_dir)
    if [ -f "$run/data/postmaster.pid" ] && [ -f "$DIR/pgbin" ]; then
        PGBIN=$(cat "$DIR/pgbin")
        if ! as_server "$PGBIN/pg_ctl" stop -D "$run/data" -m fast -w -t 60 >/dev/null 2>&1; then
            log "fast stop failed; stopping immediately"
            as_server "$PGBIN/pg_ctl" stop -D "$run/data" -m immediate -w -t 30 >/dev/null 2>&1 ||
                true
        fi
    fi
    if [ -f "$run/server.log" ]; then
        grep -E 'PANIC|was terminated by signal|terminated by exception' "$run/server.log" >&2 ||
            true
    fi
    remove_dir
}

fail_with_log() {
    local run
    run=$(run_dir)
    echo "$NAME: $1" >&2
    if [ -f "$run/server.log" ]; then
        echo "---- tail of $run/server.log ----" >&2
        tail -n 40 "$run/server.log" >&2
    fi
    exit 1
}

# psql_at HOST PORT SQL: one value.
psql_at() {
    "$PGBIN/psql" -X -A -t -v ON_ERROR_STOP=1 -h "$1" -p "$2" -U "$PGUSER_P" -d "$PGDB_P" -c "$3"
}

# Settings that differ from the primary's (included last: they win).
write_replica_conf() {
    local run=$1 port=$2
    {
        echo "# Written by tests/pg/pg-replica.sh: the standby's own settings."
        echo "port = $port"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = '$run'"
        echo "hot_standby = on"
        if [ -n "${PGW_STANDBY_APPLY_DELAY:-}" ]; then
            echo "recovery_min_apply_delay = '$PGW_STANDBY_APPLY_DELAY'"
        fi
        if [ -f "$run/tls/server.crt" ]; then
            echo "ssl_cert_file = '$run/tls/server.crt'"
            echo "ssl_key_file = '$run/tls/server.key'"
            echo "ssl_ca_file = '$run/tls/ca.crt'"
        else
            echo "ssl = off"
        fi
    } >"$run/data/replica.conf"
    own_by_server "$run/data/replica.conf"
}

# In recovery, streaming, and replayed up to lsn.
wait_caught_up() {
    local run=$1 port=$2 lsn=$3 ok
    for _ in $(seq 1 240); do
        ok=$(psql_at "$run" "$port" "SELECT pg_is_in_recovery()
              AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')
              AND pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '$lsn') >= 0" 2>/dev/null || true)
        [ "$ok" = t ] && return 0
        sleep 0.25
    done
    return 1
}

cmd_start() {
    local primary_env phost pport run port rc lsn level senders tls attempt
    [ $# -eq 3 ] || usage
    primary_env=$(realpath -m -- "$3")
    [ -f "$primary_env" ] || die "no cluster env file $primary_env (start tests/pg/pg-cluster.sh first)"
    PGBIN=$(pgbin_of "$primary_env")
    phost=$(env_get "$primary_env" PGHOST)
    pport=$(env_get "$primary_env" PGPORT)
    PGUSER_P=$(env_get "$primary_env" PGUSER)
    PGDB_P=$(env_get "$primary_env" PGDATABASE)
    tls=$(env_get "$primary_env" PGW_TEST_TLS_DIR)
    [ -n "$phost" ] && [ -n "$pport" ] && [ -n "$PGUSER_P" ] ||
        die "$primary_env lacks PGHOST, PGPORT or PGUSER"
    [ -n "$PGDB_P" ] || PGDB_P=$PGUSER_P
    level=$(psql_at "$phost" "$pport" 'SHOW wal_level') ||
        die "cannot query the primary at $phost port $pport"
    senders=$(psql_at "$phost" "$pport" 'SHOW max_wal_senders')
    [ "$level" != minimal ] || die "the primary has wal_level=minimal: streaming needs replica"
    [ "$senders" -ge 2 ] || die "the primary has max_wal_senders=$senders: need 2 or more"

    teardown # left over from a previous run
    make_dir
    echo starting >"$DIR/standby" # marks DIR as ours even if this start fails
    echo "$PGBIN" >"$DIR/pgbin"
    echo "$PGUSER_P" >"$DIR/user"
    run=$(pick_run_dir)
    if [ -n "$tls" ] && [ -f "$tls/server.crt" ]; then
        mkdir -p "$run/tls"
        cp "$tls"/*.crt "$tls/server.key" "$run/tls/"
        chmod 600 "$run/tls/server.key"
        own_by_server "$run/tls/server.key"
    fi
    as_server "$PGBIN/pg_basebackup" -h "$phost" -p "$pport" -U "$PGUSER_P" -D "$run/data" \
        -R -X stream -c fast -N >"$run/basebackup.log" 2>&1 ||
        {
            cat "$run/basebackup.log" >&2
            die "pg_basebackup from $phost port $pport failed (does pg_hba.conf allow replication for $PGUSER_P?)"
        }
    echo "include 'replica.conf'" >>"$run/data/postgresql.conf"

    port=${PGW_STANDBY_PORT:-}
    for attempt in $(seq 1 $PORT_TRIES); do
        [ -n "${PGW_STANDBY_PORT:-}" ] || port=$(next_free_port "${port:-$FIRST_PORT}")
        write_replica_conf "$run" "$port"
        rc=0
        start_server "$run" || rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 2 ] && [ -z "${PGW_STANDBY_PORT:-}" ] && [ "$attempt" -lt $PORT_TRIES ]; then
            log "port $port was taken, trying the next one"
            port=$((port + 1))
            continue
        fi
        fail_with_log "the standby did not start (port $port)"
    done
    lsn=$(psql_at "$phost" "$pport" 'SELECT pg_current_wal_lsn()')
    wait_caught_up "$run" "$port" "$lsn" ||
        fail_with_log "the standby on port $port is not streaming or did not catch up to $lsn"
    echo standby >"$DIR/standby"
    {
        echo "PGW_STANDBY_HOST=127.0.0.1"
        echo "PGW_STANDBY_PORT=$port"
        echo "PGW_STANDBY_SOCKET_DIR=$run"
        echo "PGW_STANDBY_DATADIR=$run/data"
        echo "PGW_STANDBY_LOG=$run/server.log"
        echo "PGW_STANDBY_PRIMARY_PORT=$pport"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    chmod 644 "$DIR/env"
    cat "$DIR/env"
}

cmd_promote() {
    local run port ok
    [ -f "$DIR/env" ] || die "no standby in $DIR"
    PGBIN=$(cat "$DIR/pgbin")
    run=$(run_dir)
    port=$(env_get "$DIR/env" PGW_STANDBY_PORT)
    PGUSER_P=$(cat "$DIR/user")
    PGDB_P=postgres
    as_server "$PGBIN/pg_ctl" promote -D "$run/data" -w -t 60 >/dev/null ||
        fail_with_log "pg_ctl promote failed"
    for _ in $(seq 1 240); do
        ok=$(psql_at "$run" "$port" 'SELECT NOT pg_is_in_recovery()' 2>/dev/null || true)
        if [ "$ok" = t ]; then
            echo primary >"$DIR/standby"
            return 0
        fi
        sleep 0.25
    done
    fail_with_log "the promoted standby still reports pg_is_in_recovery()"
}

case "$CMD" in
start) cmd_start "$@" ;;
promote) cmd_promote ;;
stop) teardown ;;
env) cat "$DIR/env" ;;
*) usage ;;
esac
