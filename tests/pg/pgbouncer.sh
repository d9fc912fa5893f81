#!/usr/bin/env bash
# PgBouncer in front of a throwaway cluster of tests/pg/pg-cluster.sh.
#
#   pgbouncer.sh start DIR PRIMARY_ENV   start pgbouncer for the cluster whose
#                                        pg-cluster.sh env file is PRIMARY_ENV,
#                                        write DIR/env
#   pgbouncer.sh stop DIR                stop it and delete DIR (idempotent)
#   pgbouncer.sh restart DIR             stop it (SIGTERM: its clients are cut)
#                                        and start it again with the same
#                                        settings and port (a soak's fault)
#   pgbouncer.sh env DIR                 print DIR/env
#
# PgBouncer (Debian's 1.18) listens on 127.0.0.1 at a free port (probed from
# 56320, or PGW_PGBOUNCER_PORT) and on a unix socket in DIR (or in a short
# directory under /tmp when DIR's path is too long). Every database name is
# forwarded to the cluster's database of that name (unix socket, trust user
# of the cluster). Clients authenticate to PgBouncer with its own auth file:
# the cluster's trust user (PGUSER of PRIMARY_ENV) with a password of this
# script. Settings from the environment:
#   PGW_PGBOUNCER_POOL_SIZE   default_pool_size (default 5)
#   PGW_PGBOUNCER_POOL_MODE   pool_mode (default transaction)
#   PGW_PGBOUNCER_AUTH        auth_type: scram-sha-256 (default), md5, trust
# max_client_conn is 500. The admin console (database "pgbouncer": SHOW
# POOLS, SHOW STATS) takes the same user and password.
#
# DIR/env lists KEY=VALUE lines: PGW_PGBOUNCER_HOST, PGW_PGBOUNCER_PORT,
# PGW_PGBOUNCER_USER, PGW_PGBOUNCER_PASSWORD, PGW_PGBOUNCER_DB,
# PGW_PGBOUNCER_SOCKET_DIR, PGW_PGBOUNCER_POOL_SIZE, PGW_PGBOUNCER_POOL_MODE,
# PGW_PGBOUNCER_AUTH, PGW_PGBOUNCER_VERSION, PGW_PGBOUNCER_LOG.
#
# pgbouncer refuses to run as root: as root it runs as `postgres` (runuser).
set -euo pipefail

NAME=pgbouncer
readonly FIRST_PORT=56320
readonly PORT_TRIES=40
readonly PASSWORD='bouncer-Pw-4'

usage() {
    echo "usage: $0 start DIR PRIMARY_ENV | stop DIR | restart DIR | env DIR" >&2
    exit 1
}
[ $# -ge 2 ] || usage
CMD=$1
DIR=$(realpath -m -- "$2")
# shellcheck source=fixture-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/fixture-lib.sh"

find_pgbouncer() {
    find_program "pgbouncer not found (apt-get install pgbouncer, or set PGW_PGBOUNCER_BIN)" \
        "${PGW_PGBOUNCER_BIN:-}" pgbouncer /usr/sbin/pgbouncer /usr/local/sbin/pgbouncer \
        /usr/bin/pgbouncer
}

teardown() {
    [ -d "$DIR" ] || return 0
    check_ours pgbouncer.ini
    # SIGTERM: immediate shutdown (clients are disconnected).
    stop_pid_file "$DIR/pgbouncer.pid"
    remove_dir
}

write_ini() {
    local port=$1 sock=$2 pghost=$3 pgport=$4 user=$5
    cat >"$DIR/pgbouncer.ini" <<EOF
; Written by tests/pg/pgbouncer.sh: a throwaway pooler for the tests.
[databases]
* = host=$pghost port=$pgport

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir = $sock
unix_socket_mode = 0777
auth_type = $AUTH
auth_file = $DIR/userlist.txt
pool_mode = $POOL_MODE
default_pool_size = $POOL_SIZE
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 500
admin_users = $user
stats_users = $user
ignore_startup_parameters = extra_float_digits
logfile = $DIR/pgbouncer.log
pidfile = $DIR/pgbouncer.pid
log_connections = 0
log_disconnections = 0
EOF
    own_by_server "$DIR/pgbouncer.ini"
}

write_auth_file() {
    local user=$1
    # Plain-text passwords: PgBouncer derives the SCRAM or MD5 exchange
    # from them.
    printf '"%s" "%s"\n' "$user" "$PASSWORD" >"$DIR/userlist.txt"
    chmod 600 "$DIR/userlist.txt"
    own_by_server "$DIR/userlist.txt"
}

# Wait for the pid file and the port; 2 when the port was taken meanwhile.
wait_started() {
    wait_listening "$DIR/pgbouncer.pid" "$1" "$DIR/pgbouncer.log" \
        'Address already in use|bind\(\) failed|could not bind' 100
}

fail_with_log() { die_with_log "$DIR/pgbouncer.log" "$1"; }

# One query through the pooler, as a client would make it.
check_query() {
    local port=$1 user=$2 db=$3 psql
    psql=$(find_psql)
    PGPASSWORD=$PASSWORD PGSSLMODE=disable "$psql" -X -A -t -h 127.0.0.1 -p "$port" -U "$user" \
        -d "$db" -c 'SELECT 1' 2>&1
}

cmd_start() {
    local primary_env bin port rc out pghost pgport user db sock version attempt
    [ $# -eq 3 ] || usage
    primary_env=$(realpath -m -- "$3")
    [ -f "$primary_env" ] || die "no cluster env file $primary_env (start tests/pg/pg-cluster.sh first)"
    bin=$(find_pgbouncer)
    pghost=$(env_get "$primary_env" PGHOST)
    pgport=$(env_get "$primary_env" PGPORT)
    user=$(env_get "$primary_env" PGUSER)
    db=$(env_get "$primary_env" PGDATABASE)
    PGBIN=$(env_get "$primary_env" PGW_TEST_PGBIN)
    [ -n "$pghost" ] && [ -n "$pgport" ] && [ -n "$user" ] ||
        die "$primary_env lacks PGHOST, PGPORT or PGUSER"
    [ -n "$db" ] || db=$user
    POOL_SIZE=${PGW_PGBOUNCER_POOL_SIZE:-5}
    POOL_MODE=${PGW_PGBOUNCER_POOL_MODE:-transaction}
    AUTH=${PGW_PGBOUNCER_AUTH:-scram-sha-256}
    case "$POOL_MODE" in session | transaction | statement) ;; *) die "bad PGW_PGBOUNCER_POOL_MODE=$POOL_MODE" ;; esac
    case "$AUTH" in scram-sha-256 | md5 | trust | plain) ;; *) die "bad PGW_PGBOUNCER_AUTH=$AUTH" ;; esac
    [[ "$POOL_SIZE" =~ ^[0-9]+$ ]] && [ "$POOL_SIZE" -gt 0 ] ||
        die "bad PGW_PGBOUNCER_POOL_SIZE=$POOL_SIZE"

    teardown # left over from a previous run
    make_dir
    sock=$(pick_run_dir)
    write_auth_file "$user"
    port=${PGW_PGBOUNCER_PORT:-}
    for attempt in $(seq 1 $PORT_TRIES); do
        [ -n "${PGW_PGBOUNCER_PORT:-}" ] || port=$(next_free_port "${port:-$FIRST_PORT}")
        write_ini "$port" "$sock" "$pghost" "$pgport" "$user"
        rm -f "$DIR/pgbouncer.pid"
        : >"$DIR/pgbouncer.log"
        own_by_server "$DIR/pgbouncer.log"
        as_server "$bin" -q -d "$DIR/pgbouncer.ini" >"$DIR/start.log" 2>&1 ||
            { cat "$DIR/start.log" >&2; fail_with_log "pgbouncer did not start"; }
        rc=0
        wait_started "$port" || rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 2 ] && [ -z "${PGW_PGBOUNCER_PORT:-}" ] && [ "$attempt" -lt $PORT_TRIES ]; then
            log "port $port was taken, trying the next one"
            [ -s "$DIR/pgbouncer.pid" ] && kill -TERM "$(cat "$DIR/pgbouncer.pid")" 2>/dev/null || true
            port=$((port + 1))
            continue
        fi
        fail_with_log "pgbouncer did not come up on port $port"
    done
    out=$(check_query "$port" "$user" "$db") ||
        fail_with_log "a query through pgbouncer on port $port failed: $out"
    version=$("$bin" --version 2>/dev/null | sed -n 's/^PgBouncer \([0-9.]*\).*/\1/p' | head -n 1)
    {
        echo "PGW_PGBOUNCER_HOST=127.0.0.1"
        echo "PGW_PGBOUNCER_PORT=$port"
        echo "PGW_PGBOUNCER_USER=$user"
        echo "PGW_PGBOUNCER_PASSWORD=$PASSWORD"
        echo "PGW_PGBOUNCER_DB=$db"
        echo "PGW_PGBOUNCER_SOCKET_DIR=$sock"
        echo "PGW_PGBOUNCER_POOL_SIZE=$POOL_SIZE"
        echo "PGW_PGBOUNCER_POOL_MODE=$POOL_MODE"
        echo "PGW_PGBOUNCER_AUTH=$AUTH"
        echo "PGW_PGBOUNCER_VERSION=$version"
        echo "PGW_PGBOUNCER_LOG=$DIR/pgbouncer.log"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    chmod 644 "$DIR/env"
    cat "$DIR/env"
}

# Stop the running pgbouncer of DIR and start it again on the same port.
cmd_restart() {
    local bin port
    [ $# -eq 2 ] || usage
    [ -f "$DIR/env" ] || die "no pgbouncer started in $DIR"
    check_ours pgbouncer.ini
    bin=$(find_pgbouncer)
    port=$(env_get "$DIR/env" PGW_PGBOUNCER_PORT)
    stop_pid_file "$DIR/pgbouncer.pid"
    rm -f "$DIR/pgbouncer.pid"
    as_server "$bin" -q -d "$DIR/pgbouncer.ini" >"$DIR/start.log" 2>&1 ||
        { cat "$DIR/start.log" >&2; fail_with_log "pgbouncer did not restart"; }
    wait_started "$port" || fail_with_log "pgbouncer did not come back on port $port"
    # Another program may have taken the port while it was free: then the
    # port answers but this pgbouncer could not bind it and exited.
    sleep 0.2
    kill -0 "$(cat "$DIR/pgbouncer.pid" 2>/dev/null || echo 0)" 2>/dev/null ||
        fail_with_log "pgbouncer did not stay up after its restart (port $port taken?)"
}

case "$CMD" in
start) cmd_start "$@" ;;
restart) cmd_restart "$@" ;;
stop) teardown ;;
env) cat "$DIR/env" ;;
*) usage ;;
esac
