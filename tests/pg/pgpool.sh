#!/usr/bin/env bash
# pgpool-II in streaming-replication mode with load balancing, in front of a
# throwaway cluster of tests/pg/pg-cluster.sh and its two standbys of
# tests/pg/pg-replica.sh, one of them delayed.
#
#   pgpool.sh start DIR PRIMARY_ENV   start pgpool for the cluster whose
#                                     pg-cluster.sh env file is PRIMARY_ENV,
#                                     the standby whose pg-replica.sh env
#                                     file is PRIMARY_ENV's directory with
#                                     "-replica" appended, /env (the pgreplica
#                                     fixture's; PGW_PGPOOL_STANDBY_ENV
#                                     overrides it) and the delayed standby
#                                     of "-replica-delayed/env" (fixture
#                                     pgreplica_delayed's;
#                                     PGW_PGPOOL_DELAYED_ENV overrides it);
#                                     write DIR/env
#   pgpool.sh restart DIR             stop pgpool and start it again with the
#                                     same configuration and port
#   pgpool.sh stop DIR                stop it and delete DIR (idempotent)
#   pgpool.sh env DIR                 print DIR/env
#
# pgpool-II (Debian's 4.3) listens on 127.0.0.1 at a free port (probed from
# 57320, or PGW_PGPOOL_PORT) and on a unix socket in DIR (or in a short
# directory under /tmp when DIR's path is too long). Backend 0 is the primary,
# backend 1 the standby, weight 1 each, backend 2 the delayed standby, weight
# 0, all over TCP on 127.0.0.1 (so inet_server_port() tells which one
# answered). pgpool 4.3 can bound a standby's lag only in WAL bytes, measured
# every sr_check_period, so between two checks it would balance reads to a
# standby an hour behind (one that does not even have the tables the tests
# just made): a delayed standby takes no load-balanced reads (weight 0), as
# with pgpool in production, and the tests check that none reaches it.
# backend_clustering_mode is
# streaming_replication, load_balance_mode on (a read-only SELECT outside a
# transaction that wrote goes to either), no watchdog, no failover (a node is
# never detached: failover_on_backend_error off, health checks off), the
# streaming-replication check as the cluster's trust user every 5 s. Clients
# authenticate as the backends ask (pool_hba off): the cluster's trust user,
# no password. num_init_children (PGW_PGPOOL_CHILDREN, default 32) is the
# number of client connections pgpool serves at once; max_pool 4.
#
# DIR/env lists KEY=VALUE lines: PGW_PGPOOL_HOST, PGW_PGPOOL_PORT,
# PGW_PGPOOL_USER, PGW_PGPOOL_DB, PGW_PGPOOL_SOCKET_DIR,
# PGW_PGPOOL_CHILDREN, PGW_PGPOOL_PRIMARY_PORT, PGW_PGPOOL_STANDBY_PORT,
# PGW_PGPOOL_DELAYED_PORT, PGW_PGPOOL_VERSION, PGW_PGPOOL_LOG, PGW_PGPOOL_SCRIPT (`bash $SCRIPT
# restart DIR` restarts it), PGW_PGPOOL_DIR.
#
# As root, pgpool runs as `postgres` (runuser), as the other fixtures do.
set -euo pipefail

NAME=pgpool
readonly FIRST_PORT=57320
readonly PORT_TRIES=40

usage() {
    echo "usage: $0 start DIR PRIMARY_ENV | restart DIR | stop DIR | env DIR" >&2
    exit 1
}
[ $# -ge 2 ] || usage
CMD=$1
DIR=$(realpath -m -- "$2")
# shellcheck source=fixture-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/fixture-lib.sh"
SCRIPT=$(realpath -- "${BASH_SOURCE[0]}")

find_pgpool() {
    find_program "pgpool not found (apt-get install pgpool2, or set PGW_PGPOOL_BIN)" \
        "${PGW_PGPOOL_BIN:-}" pgpool /usr/sbin/pgpool /usr/local/sbin/pgpool /usr/bin/pgpool
}

# pgpool's parent forwards its shutdown to the children: SIGQUIT (immediate
# shutdown), then SIGKILL of the whole process group after 10 s.
stop_pgpool() {
    local pid
    [ -f "$DIR/pgpool.pid" ] || return 0
    pid=$(tr -cd 0-9 <"$DIR/pgpool.pid")
    [ -n "$pid" ] || return 0
    kill -QUIT "$pid" 2>/dev/null || { rm -f "$DIR/pgpool.pid"; return 0; }
    for _ in $(seq 1 100); do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$DIR/pgpool.pid"
            return 0
        fi
        sleep 0.1
    done
    log "pgpool $pid did not stop in 10 s: killing its process group"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    rm -f "$DIR/pgpool.pid"
}

teardown() {
    [ -d "$DIR" ] || return 0
    check_ours pgpool.conf
    stop_pgpool
    remove_dir
}

write_conf() {
    local port=$1 sock=$2 pgport=$3 sbport=$4 dlport=$5 user=$6
    cat >"$DIR/pgpool.conf" <<EOF
# Written by tests/pg/pgpool.sh: a throwaway pooler for the tests.
backend_clustering_mode = 'streaming_replication'
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sock'
pcp_listen_addresses = ''
pcp_port = $((port + 1000))
pcp_socket_dir = '$sock'
backend_hostname0 = '127.0.0.1'
backend_port0 = $pgport
backend_weight0 = 1
backend_flag0 = 'ALWAYS_PRIMARY|DISALLOW_TO_FAILOVER'
backend_application_name0 = 'primary'
backend_hostname1 = '127.0.0.1'
backend_port1 = $sbport
backend_weight1 = 1
backend_flag1 = 'DISALLOW_TO_FAILOVER'
backend_application_name1 = 'standby'
backend_hostname2 = '127.0.0.1'
backend_port2 = $dlport
backend_weight2 = 0
backend_flag2 = 'DISALLOW_TO_FAILOVER'
backend_application_name2 = 'delayed'
enable_pool_hba = off
pool_passwd = ''
allow_clear_text_frontend_auth = off
num_init_children = $CHILDREN
max_pool = 4
child_life_time = 0
connection_life_time = 0
client_idle_limit = 0
load_balance_mode = on
statement_level_load_balance = off
disable_load_balance_on_write = 'transaction'
sr_check_period = 5
sr_check_user = '$user'
sr_check_password = ''
sr_check_database = 'postgres'
delay_threshold = 0
health_check_period = 0
failover_on_backend_error = off
failover_command = ''
use_watchdog = off
memory_cache_enabled = off
ssl = off
log_destination = 'stderr'
logging_collector = off
log_connections = off
log_hostname = off
pid_file_name = '$DIR/pgpool.pid'
logdir = '$DIR'
EOF
    : >"$DIR/pcp.conf"
    : >"$DIR/pool_hba.conf"
    own_by_server "$DIR/pgpool.conf" "$DIR/pcp.conf" "$DIR/pool_hba.conf"
}

# Start pgpool in the foreground of a detached session (-n: its log is its
# stderr), forgetting any node status a previous run saved (-D).
launch() {
    local bin=$1
    rm -f "$DIR/pgpool.pid"
    : >>"$DIR/pgpool.log"
    own_by_server "$DIR/pgpool.log"
    as_server setsid "$bin" -n -D -f "$DIR/pgpool.conf" -F "$DIR/pcp.conf" \
        -a "$DIR/pool_hba.conf" </dev/null >>"$DIR/pgpool.log" 2>&1 &
}

# Wait for the pid file and the port; 2 when the port was taken meanwhile.
wait_started() {
    wait_listening "$DIR/pgpool.pid" "$1" "$DIR/pgpool.log" \
        'Address already in use|could not bind|failed to bind' 150
}

fail_with_log() { die_with_log "$DIR/pgpool.log" "$1"; }

# A query through pgpool, as a client would make it; retried while pgpool's
# children come up.
check_query() {
    local port=$1 user=$2 db=$3 psql out=""
    psql=$(find_psql)
    for _ in $(seq 1 50); do
        if out=$(PGSSLMODE=disable "$psql" -X -A -t -h 127.0.0.1 -p "$port" -U "$user" \
            -d "$db" -c 'SELECT 1' 2>&1) && [ "$out" = 1 ]; then
            return 0
        fi
        sleep 0.2
    done
    echo "$out"
    return 1
}

cmd_start() {
    local primary_env standby_env delayed_env bin port rc out pgport sbport dlport user db sock
    local version attempt
    [ $# -eq 3 ] || usage
    primary_env=$(realpath -m -- "$3")
    [ -f "$primary_env" ] || die "no cluster env file $primary_env (start tests/pg/pg-cluster.sh first)"
    standby_env=${PGW_PGPOOL_STANDBY_ENV:-$(dirname "$primary_env")-replica/env}
    [ -f "$standby_env" ] ||
        die "no standby env file $standby_env (start tests/pg/pg-replica.sh first)"
    delayed_env=${PGW_PGPOOL_DELAYED_ENV:-$(dirname "$primary_env")-replica-delayed/env}
    [ -f "$delayed_env" ] || die "no delayed standby env file $delayed_env (start" \
        "tests/pg/pg-replica.sh with PGW_STANDBY_APPLY_DELAY first)"
    bin=$(find_pgpool)
    pgport=$(env_get "$primary_env" PGPORT)
    user=$(env_get "$primary_env" PGUSER)
    db=$(env_get "$primary_env" PGDATABASE)
    PGBIN=$(env_get "$primary_env" PGW_TEST_PGBIN)
    sbport=$(env_get "$standby_env" PGW_STANDBY_PORT)
    dlport=$(env_get "$delayed_env" PGW_STANDBY_PORT)
    [ -n "$pgport" ] && [ -n "$user" ] && [ -n "$sbport" ] && [ -n "$dlport" ] ||
        die "$primary_env lacks PGPORT or PGUSER, or $standby_env or $delayed_env lacks" \
            "PGW_STANDBY_PORT"
    [ -n "$db" ] || db=$user
    CHILDREN=${PGW_PGPOOL_CHILDREN:-32}
    [[ "$CHILDREN" =~ ^[0-9]+$ ]] && [ "$CHILDREN" -gt 0 ] ||
        die "bad PGW_PGPOOL_CHILDREN=$CHILDREN"

    teardown # left over from a previous run
    make_dir
    sock=$(pick_run_dir)
    port=${PGW_PGPOOL_PORT:-}
    for attempt in $(seq 1 $PORT_TRIES); do
        [ -n "${PGW_PGPOOL_PORT:-}" ] || port=$(next_free_port "${port:-$FIRST_PORT}")
        write_conf "$port" "$sock" "$pgport" "$sbport" "$dlport" "$user"
        : >"$DIR/pgpool.log"
        launch "$bin"
        rc=0
        wait_started "$port" || rc=$?
        [ $rc = 0 ] && break
        stop_pgpool
        if [ $rc = 2 ] && [ -z "${PGW_PGPOOL_PORT:-}" ] && [ "$attempt" -lt $PORT_TRIES ]; then
            log "port $port was taken, trying the next one"
            port=$((port + 1))
            continue
        fi
        fail_with_log "pgpool did not come up on port $port"
    done
    out=$(check_query "$port" "$user" "$db") ||
        fail_with_log "a query through pgpool on port $port failed: $out"
    version=$("$bin" --version 2>&1 | sed -n 's/^pgpool-II version \([0-9.]*\).*/\1/p' | head -n 1)
    {
        echo "PGW_PGPOOL_HOST=127.0.0.1"
        echo "PGW_PGPOOL_PORT=$port"
        echo "PGW_PGPOOL_USER=$user"
        echo "PGW_PGPOOL_DB=$db"
        echo "PGW_PGPOOL_SOCKET_DIR=$sock"
        echo "PGW_PGPOOL_CHILDREN=$CHILDREN"
        echo "PGW_PGPOOL_PRIMARY_PORT=$pgport"
        echo "PGW_PGPOOL_STANDBY_PORT=$sbport"
        echo "PGW_PGPOOL_DELAYED_PORT=$dlport"
        echo "PGW_PGPOOL_VERSION=$version"
        echo "PGW_PGPOOL_LOG=$DIR/pgpool.log"
        echo "PGW_PGPOOL_SCRIPT=$SCRIPT"
        echo "PGW_PGPOOL_DIR=$DIR"
        echo "PGW_PGPOOL_BIN=$bin"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    chmod 644 "$DIR/env"
    cat "$DIR/env"
}

# Same configuration, same port: clients see their connections broken and
# connect again once it is back.
cmd_restart() {
    local bin port user db
    [ -f "$DIR/env" ] || die "$DIR/env missing: start pgpool first"
    bin=$(env_get "$DIR/env" PGW_PGPOOL_BIN)
    port=$(env_get "$DIR/env" PGW_PGPOOL_PORT)
    stop_pgpool
    launch "$bin"
    wait_started "$port" || fail_with_log "pgpool did not come back on port $port"
}

case "$CMD" in
start) cmd_start "$@" ;;
restart) cmd_restart ;;
stop) teardown ;;
env) cat "$DIR/env" ;;
*) usage ;;
esac
