#!/usr/bin/env bash
# Throwaway PostgreSQL cluster for the integration tests.
#
#   pg-cluster.sh start DIR     start a fresh cluster in DIR, write DIR/env
#   pg-cluster.sh stop DIR      stop it and delete DIR (nothing is kept)
#   pg-cluster.sh halt DIR      stop the server (pg_ctl stop -m fast) and keep
#                               DIR: its port stays claimed (fixture-lib.sh),
#                               so no other fixture's server can take it
#   pg-cluster.sh restart DIR   pg_ctl restart -m fast, same port and files
#   pg-cluster.sh env DIR       print DIR/env
#
# The cluster listens on a unix socket (in DIR, or in a short directory under
# /tmp when DIR's path is too long for a socket or not reachable by the
# server's user) and on 127.0.0.1 at a free port (probed from 54320, or
# PGW_TEST_PORT). It has trust, scram-sha-256, md5, password and cert roles,
# and TLS with a CA generated here. DIR/env lists KEY=VALUE lines for the
# tests (tests/common/pgtest.c reads it).
#
# initdb refuses to run as root: as root, the server runs as the `postgres`
# user via runuser; as anyone else, it runs as that user.
#
# Existing server: if PGHOST and PGPORT are both set at start, nothing is
# started; DIR/env is written from the environment, and stop leaves the
# server alone.
#
# A fixture that needs a cluster of its own with more (tests/pg/kdc.sh)
# names files in the environment at start: PGW_CLUSTER_CONF (settings
# appended to the configuration), PGW_CLUSTER_HBA (pg_hba.conf lines put
# before the default ones), PGW_CLUSTER_IDENT (pg_ident.conf lines) and
# PGW_CLUSTER_SQL (run by the superuser once the roles exist).
set -euo pipefail

readonly FIRST_PORT=54320
readonly PORT_TRIES=40
readonly TEST_USER=pgwire
readonly SCRAM_USER=pgw_scram SCRAM_PASSWORD='scram-Pw-1'
readonly MD5_USER=pgw_md5 MD5_PASSWORD='md5-Pw-2'
readonly CLEAR_USER=pgw_clear CLEAR_PASSWORD='clear-Pw-3'
# A password SASLprep maps to nothing (a soft hyphen): the server stored its
# verifier from the password as given, as libpq then logs in with it.
readonly PREP_USER=pgw_scram_prep PREP_PASSWORD=$'\xc2\xad'
readonly CERT_USER=pgw_cert
# Trust roles reachable over TCP only without TLS / only with TLS, for
# libpq's sslmode=prefer and allow retries.
readonly NOSSL_USER=pgw_nossl
readonly SSLONLY_USER=pgw_sslonly

NAME=pg-cluster
# die, log, as_server / own_by_server (who runs the server), free ports,
# start_server.
# shellcheck source=fixture-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/fixture-lib.sh"

usage() { die "usage: $0 start|stop|halt|restart|env DIR"; }

[ $# -eq 2 ] || usage
CMD=$1
DIR=$(realpath -m -- "$2")

# The role initdb creates: the server's OS user.
if [ ${#RUNAS[@]} -gt 0 ]; then BOOT_USER=$SERVER_OS_USER; else BOOT_USER=$(id -un); fi

find_pgbin() {
    local d best=""
    if [ -n "${PGW_PG_BINDIR:-}" ]; then
        [ -x "$PGW_PG_BINDIR/initdb" ] || die "PGW_PG_BINDIR=$PGW_PG_BINDIR has no initdb"
        echo "$PGW_PG_BINDIR"
        return
    fi
    # Debian: /usr/lib/postgresql/<major>/bin; take the newest major.
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5,5n); do
        if [ -x "$d/initdb" ]; then best=$d; fi
    done
    if [ -z "$best" ] && command -v pg_config >/dev/null; then
        d=$(pg_config --bindir)
        [ -x "$d/initdb" ] && best=$d
    fi
    if [ -z "$best" ] && command -v initdb >/dev/null; then
        best=$(dirname "$(command -v initdb)")
    fi
    [ -n "$best" ] || die "no PostgreSQL server binaries found (apt-get install postgresql)"
    echo "$best"
}

# --- state: where the runtime files live --------------------------------------
# RUN holds data/, tls/, the socket and server.log. It is DIR itself unless
# DIR/runtime names another directory.
runtime_dir() {
    if [ -f "$DIR/runtime" ]; then cat "$DIR/runtime"; else echo "$DIR"; fi
}

# DIR is deleted on stop: refuse anything that does not look like ours (a
# cluster directory has no single marker file, so this replaces
# fixture-lib.sh's check_ours).
check_ours() {
    [ -d "$DIR" ] || return 0
    [ -z "$(ls -A -- "$DIR")" ] && return 0
    [ -f "$DIR/mode" ] || [ -f "$DIR/data/PG_VERSION" ] || [ -f "$DIR/env" ] ||
        die "$DIR exists and is not a cluster directory of this script: refusing to delete it"
    case "$DIR" in
    / | /tmp | /root | /home | "$HOME") die "refusing to use $DIR" ;;
    esac
}

# The server of the cluster in RUN, if it runs: stopped, fast or else
# immediately; fails when neither stopped it.
stop_server() {
    local pgbin
    [ -f "$1/data/postmaster.pid" ] || return 0
    pgbin=$(find_pgbin)
    if ! as_server "$pgbin/pg_ctl" stop -D "$1/data" -m fast -w -t 60 >/dev/null 2>&1; then
        log "fast stop failed; stopping immediately"
        as_server "$pgbin/pg_ctl" stop -D "$1/data" -m immediate -w -t 30 >/dev/null 2>&1
    fi
}

# The cluster (if any) recorded in DIR: stop it and delete everything.
teardown() {
    local run
    [ -d "$DIR" ] || return 0
    check_ours
    if [ -f "$DIR/mode" ] && [ "$(cat "$DIR/mode")" = external ]; then
        rm -rf -- "$DIR"
        return 0
    fi
    run=$(runtime_dir)
    stop_server "$run" || true
    if [ -f "$run/server.log" ]; then
        # Crashes are worth seeing even though the log is deleted.
        grep -E 'PANIC|was terminated by signal|terminated by exception' "$run/server.log" >&2 || true
    fi
    if [ "$run" != "$DIR" ] && [[ "$run" == /tmp/pgw-cluster.* ]]; then rm -rf -- "$run"; fi
    rm -rf -- "$DIR"
}

# --- TLS material -----------------------------------------------------------
# new_key_csr NAME SUBJECT: NAME.key and NAME.csr in the current directory.
new_key_csr() {
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
}

# sign NAME EXTFILE: NAME.crt from NAME.csr, signed by the CA.
sign() {
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
        -days 3650 -sha256 -extfile "$2" -out "$1.crt" 2>/dev/null
}

make_tls() {
    local tls=$1
    mkdir -p "$tls"
    (
        cd "$tls"
        umask 077
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout ca.key -out ca.crt -days 3650 -sha256 -subj "/CN=pgwire test CA" \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

        cat >server.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1
EOF
        new_key_csr server "/CN=localhost"
        sign server server.ext

        cat >client.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EOF
        new_key_csr client "/CN=$CERT_USER"
        sign client client.ext

        # For tests of verification failures (served by a test's own TLS
        # listener): a CA-signed certificate for another host name, a
        # self-signed one for localhost, and an expired CA-signed one.
        cat >wronghost.ext <<'EOF'
basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth
subjectAltName=DNS:wrong.example.invalid
EOF
        new_key_csr wronghost "/CN=wrong.example.invalid"
        sign wronghost wronghost.ext
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout selfsigned.key -out selfsigned.crt -days 3650 -subj "/CN=localhost" \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
        make_expired
        rm -f ./*.csr ./*.ext ./*.srl
    )
    chmod 755 "$tls"
    chmod 644 "$tls"/*.crt
    chmod 600 "$tls"/*.key
    # The server reads its key as its own user; it insists on mode 0600.
    own_by_server "$tls/server.key"
}

# An expired certificate needs explicit dates, which only `openssl ca` takes.
make_expired() {
    local ca_dir
    ca_dir=$(mktemp -d ./expired.XXXXXX)
    : >"$ca_dir/index.txt"
    echo 1000 >"$ca_dir/serial"
    cat >"$ca_dir/ca.cnf" <<EOF
[ ca ]
default_ca = pgw
[ pgw ]
database = $ca_dir/index.txt
serial = $ca_dir/serial
new_certs_dir = $ca_dir
default_md = sha256
policy = anything
copy_extensions = copy
[ anything ]
commonName = supplied
EOF
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout expired.key -out expired.csr -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    openssl ca -batch -notext -config "$ca_dir/ca.cnf" -cert ca.crt -keyfile ca.key \
        -in expired.csr -out expired.crt -startdate 20200101000000Z \
        -enddate 20200102000000Z >/dev/null 2>&1 || log "could not make expired.crt (ignored)"
    rm -rf -- "$ca_dir"
}

# --- cluster configuration --------------------------------------------------
write_conf() {
    local run=$1 port=$2
    cat >"$run/data/pgwire.conf" <<EOF
# Written by tests/pg/pg-cluster.sh: a throwaway cluster, speed over safety.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$run'
unix_socket_permissions = 0777
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
password_encryption = 'scram-sha-256'
ssl = on
ssl_cert_file = '$run/tls/server.crt'
ssl_key_file = '$run/tls/server.key'
ssl_ca_file = '$run/tls/ca.crt'
logging_collector = off
log_line_prefix = '%m [%p] %u@%d '
# Logical decoding (pgoutput) for the replication tests; a superset of
# replica, so the standby tests stream from it as before.
wal_level = logical
# Room for the slots and WAL senders of replication tests that run at once
# (pq/repl-tools alone holds four slots and, in pg_basebackup, two senders).
max_replication_slots = 32
max_wal_senders = 32
# pg_basebackup -X stream makes its slot only after the backup began: WAL is
# kept so that the checkpoints other tests force meanwhile cannot remove
# the segment it then asks for.
wal_keep_size = 256MB
EOF
    if [ -n "${PGW_CLUSTER_CONF:-}" ]; then cat "$PGW_CLUSTER_CONF" >>"$run/data/pgwire.conf"; fi
}

write_hba() {
    local f=$1 u
    {
        echo "# TYPE   DATABASE USER           ADDRESS       METHOD"
        if [ -n "${PGW_CLUSTER_HBA:-}" ]; then cat "$PGW_CLUSTER_HBA"; fi
        echo "local    all      $BOOT_USER              trust"
        echo "local    all      $TEST_USER              trust"
        echo "local    all      $SCRAM_USER             scram-sha-256"
        echo "local    all      $PREP_USER        scram-sha-256"
        echo "local    all      $MD5_USER               md5"
        echo "local    all      $CLEAR_USER             password"
        # hostssl first: pg_hba.conf is first match, and host matches TLS too.
        for u in hostssl host; do
            echo "$u  all      $TEST_USER   127.0.0.1/32  trust"
            echo "$u  all      $SCRAM_USER  127.0.0.1/32  scram-sha-256"
            echo "$u  all      $PREP_USER  127.0.0.1/32  scram-sha-256"
            echo "$u  all      $MD5_USER    127.0.0.1/32  md5"
            echo "$u  all      $CLEAR_USER  127.0.0.1/32  password"
        done
        echo "hostssl  all      $CERT_USER   127.0.0.1/32  cert"
        echo "hostnossl all     $NOSSL_USER  127.0.0.1/32  trust"
        echo "hostssl  all      $SSLONLY_USER 127.0.0.1/32 trust"
        # Streaming replicas (tests/pg/pg-replica.sh) connect as the trust superuser.
        echo "local    replication $TEST_USER           trust"
        echo "host     replication $TEST_USER  127.0.0.1/32  trust"
    } >"$f"
}

create_roles() {
    local run=$1 port=$2
    as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$run" -p "$port" -U "$BOOT_USER" \
        -d postgres >/dev/null <<EOF
CREATE ROLE $TEST_USER LOGIN SUPERUSER;
CREATE DATABASE $TEST_USER OWNER $TEST_USER;
SET password_encryption = 'scram-sha-256';
CREATE ROLE $SCRAM_USER LOGIN PASSWORD '$SCRAM_PASSWORD';
CREATE ROLE $PREP_USER LOGIN PASSWORD '$PREP_PASSWORD';
CREATE ROLE $CLEAR_USER LOGIN PASSWORD '$CLEAR_PASSWORD';
SET password_encryption = 'md5';
CREATE ROLE $MD5_USER LOGIN PASSWORD '$MD5_PASSWORD';
RESET password_encryption;
CREATE ROLE $CERT_USER LOGIN;
CREATE ROLE $NOSSL_USER LOGIN;
CREATE ROLE $SSLONLY_USER LOGIN;
EOF
}

wait_ready() {
    local run=$1 port=$2
    for _ in $(seq 1 120); do
        if "$PGBIN/pg_isready" -q -h "$run" -p "$port" -t 1 &&
            "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
            return 0
        fi
        sleep 0.25
    done
    return 1
}

fail_with_log() {
    local run=$1
    echo "pg-cluster: $2" >&2
    if [ -f "$run/server.log" ]; then
        echo "---- tail of $run/server.log ----" >&2
        tail -n 40 "$run/server.log" >&2
    fi
    exit 1
}

# --- commands -----------------------------------------------------------------
write_env_external() {
    local version
    mkdir -p "$DIR"
    echo external >"$DIR/mode"
    version=$(psql -X -A -t -c 'SHOW server_version_num' 2>/dev/null || true)
    {
        echo "PGHOST=$PGHOST"
        echo "PGPORT=$PGPORT"
        echo "PGUSER=${PGUSER:-$TEST_USER}"
        echo "PGDATABASE=${PGDATABASE:-${PGUSER:-$TEST_USER}}"
        [ -n "${PGPASSWORD:-}" ] && echo "PGPASSWORD=$PGPASSWORD"
        [ -n "$version" ] && echo "PGW_TEST_SERVER_VERSION=$version"
        if [ -z "${PGW_TEST_TCP_HOST:-}" ] && [[ "$PGHOST" != /* ]]; then
            echo "PGW_TEST_TCP_HOST=$PGHOST"
        fi
        # Whatever the developer set for the other roles passes through.
        env | grep -E '^PGW_TEST_[A-Z_]+=' | grep -v -E '^PGW_TEST_(SERVER_VERSION|PORT)=' || true
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    cat "$DIR/env"
}

# fixture-lib.sh's pick_run_dir, with the /tmp/pgw-cluster.* name that
# is_own_socket_dir and existing env files know.
pick_run_dir() {
    # The socket path "$DIR/.s.PGSQL.NNNNN" must fit in sun_path (107 bytes),
    # and the server's user must be able to reach DIR.
    local ok=1
    [ $((${#DIR} + 18)) -le 100 ] || ok=0
    if [ $ok = 1 ] && [ ${#RUNAS[@]} -gt 0 ]; then
        as_server test -w "$DIR" -a -x "$DIR" || ok=0
    fi
    if [ $ok = 1 ]; then
        echo "$DIR"
    else
        local run
        run=$(mktemp -d /tmp/pgw-cluster.XXXXXX)
        chmod 755 "$run"
        own_by_server "$run"
        echo "$run" >"$DIR/runtime"
        echo "$run"
    fi
}

# True if dir is where a cluster of ours in DIR puts its socket: someone who
# sourced DIR/env must not turn the next start into "existing server" mode.
is_own_socket_dir() {
    local d
    d=$(realpath -m -- "$1")
    [ "$d" = "$DIR" ] || [ "$d" = "$(runtime_dir)" ] || [[ "$d" == /tmp/pgw-cluster.* ]]
}

cmd_start() {
    if [ -n "${PGHOST:-}" ] && [ -n "${PGPORT:-}" ] && ! is_own_socket_dir "$PGHOST"; then
        teardown
        log "PGHOST/PGPORT set: using the existing server at $PGHOST:$PGPORT"
        write_env_external
        return
    fi
    command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
    PGBIN=$(find_pgbin)
    teardown # a cluster left over from a previous run
    mkdir -p "$DIR"
    chmod 755 "$DIR"
    own_by_server "$DIR"
    echo starting >"$DIR/mode" # marks DIR as ours even if this start fails
    local run port rc attempt version version_str
    run=$(pick_run_dir)

    make_tls "$run/tls"
    mkdir -p "$run/data"
    chmod 700 "$run/data"
    own_by_server "$run/data"
    as_server "$PGBIN/initdb" -D "$run/data" -U "$BOOT_USER" --auth=trust --encoding=UTF8 \
        --locale=C --no-sync >"$run/initdb.log" 2>&1 ||
        { cat "$run/initdb.log" >&2; die "initdb failed"; }
    echo "include 'pgwire.conf'" >>"$run/data/postgresql.conf"
    write_hba "$run/data/pg_hba.conf"
    if [ -n "${PGW_CLUSTER_IDENT:-}" ]; then cat "$PGW_CLUSTER_IDENT" >>"$run/data/pg_ident.conf"; fi
    own_by_server "$run/data/postgresql.conf" \
        "$run/data/pg_hba.conf" "$run/data/pg_ident.conf"

    port=${PGW_TEST_PORT:-}
    for attempt in $(seq 1 $PORT_TRIES); do
        if [ -z "${PGW_TEST_PORT:-}" ]; then
            port=$(next_free_port "${port:-$FIRST_PORT}")
        fi
        write_conf "$run" "$port"
        own_by_server "$run/data/pgwire.conf"
        rc=0
        start_server "$run" || rc=$?
        [ $rc = 0 ] && break
        if [ $rc = 2 ] && [ -z "${PGW_TEST_PORT:-}" ] && [ "$attempt" -lt $PORT_TRIES ]; then
            log "port $port was taken, trying the next one"
            port=$((port + 1))
            continue
        fi
        fail_with_log "$run" "the server did not start (port $port)"
    done
    wait_ready "$run" "$port" || fail_with_log "$run" "the server did not become ready on port $port"
    create_roles "$run" "$port" || fail_with_log "$run" "could not create the test roles"
    if [ -n "${PGW_CLUSTER_SQL:-}" ]; then
        as_server "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$run" -p "$port" -U "$BOOT_USER" \
            -d postgres >/dev/null <"$PGW_CLUSTER_SQL" ||
            fail_with_log "$run" "$PGW_CLUSTER_SQL failed"
    fi

    version=$("$PGBIN/psql" -X -A -t -h "$run" -p "$port" -U "$TEST_USER" -d "$TEST_USER" \
        -c 'SHOW server_version_num')
    version_str=$("$PGBIN/psql" -X -A -t -h "$run" -p "$port" -U "$TEST_USER" -d "$TEST_USER" \
        -c 'SHOW server_version')
    version_str=${version_str%% *} # "15.8 (Debian ...)": keep the env file shell-friendly
    echo internal >"$DIR/mode"
    {
        echo "PGHOST=$run"
        echo "PGPORT=$port"
        echo "PGUSER=$TEST_USER"
        echo "PGDATABASE=$TEST_USER"
        echo "PGW_TEST_TCP_HOST=127.0.0.1"
        echo "PGW_TEST_SCRAM_USER=$SCRAM_USER"
        echo "PGW_TEST_SCRAM_PASSWORD=$SCRAM_PASSWORD"
        echo "PGW_TEST_SCRAM_PREP_USER=$PREP_USER"
        echo "PGW_TEST_SCRAM_PREP_PASSWORD=$PREP_PASSWORD"
        echo "PGW_TEST_MD5_USER=$MD5_USER"
        echo "PGW_TEST_MD5_PASSWORD=$MD5_PASSWORD"
        echo "PGW_TEST_CLEAR_USER=$CLEAR_USER"
        echo "PGW_TEST_CLEAR_PASSWORD=$CLEAR_PASSWORD"
        echo "PGW_TEST_CERT_USER=$CERT_USER"
        echo "PGW_TEST_NOSSL_USER=$NOSSL_USER"
        echo "PGW_TEST_SSLONLY_USER=$SSLONLY_USER"
        echo "PGW_TEST_SSL_ROOTCERT=$run/tls/ca.crt"
        echo "PGW_TEST_SSL_CLIENT_CERT=$run/tls/client.crt"
        echo "PGW_TEST_SSL_CLIENT_KEY=$run/tls/client.key"
        echo "PGW_TEST_TLS_DIR=$run/tls"
        echo "PGW_TEST_BOOTSTRAP_USER=$BOOT_USER"
        echo "PGW_TEST_SERVER_VERSION=$version"
        echo "PGW_TEST_SERVER_VERSION_STRING=$version_str"
        echo "PGW_TEST_DATADIR=$run/data"
        echo "PGW_TEST_SERVER_LOG=$run/server.log"
        echo "PGW_TEST_PGBIN=$PGBIN"
        echo "PGW_TEST_CLUSTER_DIR=$DIR"
        echo "PGW_TEST_CLUSTER_SCRIPT=$(realpath -- "$0")"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    chmod 644 "$DIR/env"
    cat "$DIR/env"
}

cmd_restart() {
    [ -f "$DIR/env" ] || die "no cluster in $DIR"
    [ "$(cat "$DIR/mode" 2>/dev/null)" = internal ] || die "$DIR is not a cluster started here"
    local run port
    PGBIN=$(find_pgbin)
    run=$(runtime_dir)
    port=$(sed -n 's/^PGPORT=//p' "$DIR/env")
    as_server "$PGBIN/pg_ctl" restart -D "$run/data" -l "$run/server.log" -m fast -w -t 60 \
        >/dev/null || fail_with_log "$run" "restart failed"
    wait_ready "$run" "$port" || fail_with_log "$run" "the server did not come back on port $port"
}

cmd_halt() {
    [ -f "$DIR/env" ] || die "no cluster in $DIR"
    [ "$(cat "$DIR/mode" 2>/dev/null)" = internal ] || die "$DIR is not a cluster started here"
    stop_server "$(runtime_dir)"
}

case "$CMD" in
start) cmd_start ;;
stop) teardown ;;
halt) cmd_halt ;;
restart) cmd_restart ;;
env) cat "$DIR/env" ;;
*) usage ;;
esac
