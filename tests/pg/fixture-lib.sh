# Shared by tests/pg/pg-cluster.sh, pgbouncer.sh, pg-replica.sh and pgpool.sh (sourced,
# not run): who runs the server programs, free ports, starting a server, env
# files, safe deletes.
# The caller sets NAME (for messages) and DIR (absolute) before sourcing.
# shellcheck shell=bash

readonly SERVER_OS_USER=postgres

die() {
    echo "$NAME: $*" >&2
    exit 1
}
log() { echo "$NAME: $*" >&2; }

# As root, server programs run as `postgres` via runuser (initdb, postgres
# and pgbouncer all refuse root); as anyone else, as that user.
if [ "$(id -u)" = 0 ]; then
    getent passwd "$SERVER_OS_USER" >/dev/null ||
        die "running as root needs the '$SERVER_OS_USER' OS user (apt-get install postgresql)"
    RUNAS=(runuser -u "$SERVER_OS_USER" --)
else
    RUNAS=()
fi
as_server() { (cd / && "${RUNAS[@]}" "$@"); }
own_by_server() {
    if [ ${#RUNAS[@]} -gt 0 ]; then chown "$SERVER_OS_USER" "$@"; fi
}

# The first executable of the candidates (absolute paths, or names looked up
# in PATH; empty ones are skipped); dies with HINT when there is none.
find_program() {
    local hint=$1 p
    shift
    for p in "$@"; do
        case "$p" in
        "") continue ;;
        /*) ;;
        *) p=$(command -v "$p" 2>/dev/null || true) ;;
        esac
        if [ -n "$p" ] && [ -x "$p" ]; then
            echo "$p"
            return
        fi
    done
    die "$hint"
}

# Stop the process whose pid FILE holds: SIGTERM, then SIGKILL after 10 s.
stop_pid_file() {
    local pid
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || return 0
            sleep 0.1
        done
        log "process $pid did not stop in 10 s: killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

# A successful connect means someone listens there.
port_in_use() {
    timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# A port handed out by next_free_port stays claimed for DIR while DIR
# exists, whether or not its server is up: a test that stops a primary (and
# keeps DIR, pg-cluster.sh halt) must never find another test's new server
# answering on that port. The claim is a symlink PORT -> DIR, made with ln
# so that two starts cannot claim one port; one whose DIR is gone is stale.
readonly PORT_CLAIMS=${TMPDIR:-/tmp}/pgw-port-claims
port_claimed() {
    local dir
    dir=$(readlink "$PORT_CLAIMS/$1" 2>/dev/null) || return 1
    [ "$dir" != "$DIR" ] && [ -d "$dir" ]
}
claim_port() {
    mkdir -p "$PORT_CLAIMS" 2>/dev/null && chmod 1777 "$PORT_CLAIMS" 2>/dev/null
    ln -s "$DIR" "$PORT_CLAIMS/$1" 2>/dev/null && return 0
    port_claimed "$1" && return 1
    ln -sfn "$DIR" "$PORT_CLAIMS/$1" 2>/dev/null # stale, or DIR's own
}

# The first port from $1 that no one listens on and no fixture claims,
# claimed for DIR.
next_free_port() {
    local p=$1 last=$(($1 + 1000))
    while [ "$p" -lt "$last" ]; do
        if ! port_claimed "$p" && ! port_in_use "$p" && claim_port "$p"; then
            echo "$p"
            return
        fi
        p=$((p + 1))
    done
    die "no free TCP port in $1..$last"
}

# die_with_log LOG MESSAGE: die with MESSAGE and the tail of the program's
# LOG file.
die_with_log() {
    echo "$NAME: $2" >&2
    if [ -f "$1" ]; then
        echo "---- tail of $1 ----" >&2
        tail -n 30 "$1" >&2
    fi
    exit 1
}

# wait_listening PID_FILE PORT LOG BIND_ERROR_RE TENTHS: wait until a daemon
# wrote PID_FILE and listens on PORT (0); 2 when LOG matches BIND_ERROR_RE
# (the port was taken meanwhile); 1 after TENTHS tenths of a second.
wait_listening() {
    local pid_file=$1 port=$2 log_file=$3 bind_re=$4 tenths=$5
    for _ in $(seq 1 "$tenths"); do
        if [ -s "$pid_file" ] && port_in_use "$port"; then return 0; fi
        if grep -q -E "$bind_re" "$log_file" 2>/dev/null; then return 2; fi
        sleep 0.1
    done
    return 1
}

# psql of the cluster's binaries ($PGBIN, may be empty), else of PATH.
find_psql() {
    if [ -n "${PGBIN:-}" ] && [ -x "$PGBIN/psql" ]; then
        echo "$PGBIN/psql"
        return
    fi
    find_program "psql not found (apt-get install postgresql-client)" psql
}

# env_get FILE KEY: the value of KEY=VALUE in FILE ("" when absent).
env_get() {
    sed -n "s/^$2=//p" "$1" | tail -n 1
}

# The directory for sockets (and a server's files): DIR itself when its socket paths fit in
# sun_path and the server's user can reach it, else a short directory under
# /tmp (recorded in DIR/runtime, deleted on stop).
pick_run_dir() {
    local ok=1 run
    [ $((${#DIR} + 18)) -le 100 ] || ok=0
    if [ $ok = 1 ] && [ ${#RUNAS[@]} -gt 0 ]; then
        as_server test -w "$DIR" -a -x "$DIR" || ok=0
    fi
    if [ $ok = 1 ]; then
        echo "$DIR"
        return
    fi
    run=$(mktemp -d "/tmp/pgw-$NAME.XXXXXX")
    chmod 755 "$run"
    own_by_server "$run"
    echo "$run" >"$DIR/runtime"
    echo "$run"
}

# DIR is deleted on stop: refuse anything that does not look like ours
# (MARKER is a file only our start writes).
check_ours() {
    local marker=$1
    [ -d "$DIR" ] || return 0
    [ -z "$(ls -A -- "$DIR")" ] && return 0
    [ -f "$DIR/$marker" ] ||
        die "$DIR exists and is not a directory of this script: refusing to delete it"
    case "$DIR" in
    / | /tmp | /root | /home | "$HOME") die "refusing to use $DIR" ;;
    esac
}

remove_dir() {
    if [ -f "$DIR/runtime" ]; then
        local run
        run=$(cat "$DIR/runtime")
        if [[ "$run" == /tmp/pgw-$NAME.* ]]; then rm -rf -- "$run"; fi
    fi
    rm -rf -- "$DIR"
}

# Make DIR (owned by the server's user) for a fresh start.
make_dir() {
    mkdir -p "$DIR"
    chmod 755 "$DIR"
    own_by_server "$DIR"
}

# pg_ctl start of the cluster in $1/data ($PGBIN: its binaries), logging to
# $1/server.log. Returns 2 when the port was taken between the probe and
# the bind (the caller then tries another).
start_server() {
    local run=$1
    : >"$run/server.log"
    own_by_server "$run/server.log"
    if as_server "$PGBIN/pg_ctl" start -D "$run/data" -l "$run/server.log" -w -t 60 >/dev/null; then
        return 0
    fi
    if grep -q -E 'could not bind|Address already in use|could not create any TCP/IP sockets' \
        "$run/server.log"; then
        return 2
    fi
    return 1
}
