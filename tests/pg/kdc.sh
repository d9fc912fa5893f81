#!/usr/bin/env bash
# A throwaway Kerberos realm and a PostgreSQL cluster of its own that
# accepts GSSAPI, for the GSSAPI tests (fixture "krb5").
#
#   kdc.sh start DIR [PRIMARY_ENV]   start the KDC and the cluster, write DIR/env
#   kdc.sh stop DIR                  stop both and delete DIR (idempotent)
#   kdc.sh env DIR                   print DIR/env
#
# The realm PGWIRE.TEST is served by MIT's krb5kdc on 127.0.0.1 at a free
# port (probed from 58800, TCP and UDP; loopback only), with principals
# for the server (postgres/localhost and postgres/127.0.0.1, in a keytab
# the server reads through krb_server_keyfile) and a user (pgw_gss, with a
# password and a keytab the tests kinit from). DIR/krb5.conf is the realm's
# private configuration: the tests and the server use it through
# KRB5_CONFIG, never the machine's /etc/krb5.conf, and credential caches
# live in files the tests name (KRB5CCNAME).
#
# The cluster (tests/pg/pg-cluster.sh in DIR/cluster, its TLS and roles as
# usual) has krb_server_keyfile set and these pg_hba.conf lines first,
# pg_ident.conf's map "krb" letting pgw_gss@PGWIRE.TEST log in as each of
# the roles:
#   hostgssenc   pgw_gssenc    gss   only GSS-encrypted connections
#   hostnogssenc pgw_nogssenc  gss   only connections without GSS encryption
#   host         pgw_gss       gss   any (GSS authentication over plaintext,
#                                    over TLS, or implied by GSS encryption)
#
# DIR/env lists KEY=VALUE lines: PGW_KRB5_CONFIG, PGW_KRB_REALM,
# PGW_KRB_PRINCIPAL, PGW_KRB_PASSWORD, PGW_KRB_KEYTAB, PGW_KRB_KDC_PORT,
# PGW_GSS_HOST (localhost), PGW_GSS_HOSTADDR, PGW_GSS_PORT,
# PGW_GSS_SOCKET_DIR, PGW_GSS_SUPERUSER, PGW_GSS_USER, PGW_GSS_ENC_USER,
# PGW_GSS_NOENC_USER, PGW_GSS_SSL_ROOTCERT, PGW_GSS_SERVER_LOG.
#
# Needs krb5-kdc, krb5-admin-server (kadmin.local), krb5-user (kinit) and a
# server built with GSSAPI (Debian's is). The server runs as `postgres`
# when this runs as root (pg-cluster.sh).
set -euo pipefail

NAME=kdc
readonly FIRST_PORT=58800
readonly PORT_TRIES=40
readonly REALM=PGWIRE.TEST
readonly USER_PRINCIPAL=pgw_gss
readonly USER_PASSWORD='gss-Pw-5'
readonly MASTER_PASSWORD='kdc-master-Pw-6'

usage() {
    echo "usage: $0 start DIR [PRIMARY_ENV] | stop DIR | env DIR" >&2
    exit 1
}
[ $# -ge 2 ] || usage
CMD=$1
DIR=$(realpath -m -- "$2")
HERE=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=fixture-lib.sh
. "$HERE/fixture-lib.sh"

find_tool() {
    find_program "$1 not found (apt-get install krb5-kdc krb5-admin-server krb5-user)" \
        "$1" "/usr/sbin/$1" "/usr/bin/$1"
}

teardown() {
    [ -d "$DIR" ] || return 0
    check_ours kdc.conf
    if [ -d "$DIR/cluster" ]; then
        bash "$HERE/pg-cluster.sh" stop "$DIR/cluster" >/dev/null 2>&1 || true
    fi
    stop_pid_file "$DIR/krb5kdc.pid"
    remove_dir
}

write_kdc_conf() {
    local port=$1
    cat >"$DIR/kdc.conf" <<EOF
# Written by tests/pg/kdc.sh: a throwaway KDC on loopback.
[kdcdefaults]
 kdc_listen = 127.0.0.1:$port
 kdc_tcp_listen = 127.0.0.1:$port
[realms]
 $REALM = {
  database_name = $DIR/principal
  acl_file = $DIR/kadm5.acl
  key_stash_file = $DIR/stash
  max_life = 10h 0m 0s
  max_renewable_life = 7d 0h 0m 0s
 }
[logging]
 kdc = FILE:$DIR/krb5kdc.log
EOF
    cat >"$DIR/krb5.conf" <<EOF
# Written by tests/pg/kdc.sh: the private configuration of the tests'
# realm (KRB5_CONFIG). Nothing is looked up in DNS.
[libdefaults]
 default_realm = $REALM
 dns_lookup_realm = false
 dns_lookup_kdc = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 forwardable = true
 default_ccache_name = FILE:$DIR/ccache-default
[realms]
 $REALM = {
  kdc = 127.0.0.1:$port
 }
[domain_realm]
 localhost = $REALM
 127.0.0.1 = $REALM
EOF
    chmod 644 "$DIR/krb5.conf"
}

# Create the realm's database and its principals and keytabs.
make_realm() {
    local kdb5_util kadmin
    kdb5_util=$(find_tool kdb5_util)
    kadmin=$(find_tool kadmin.local)
    : >"$DIR/kadm5.acl"
    "$kdb5_util" -r "$REALM" create -s -P "$MASTER_PASSWORD" >"$DIR/kdb5_util.log" 2>&1 ||
        { cat "$DIR/kdb5_util.log" >&2; die "kdb5_util create failed"; }
    {
        echo "addprinc -randkey postgres/localhost"
        echo "addprinc -randkey postgres/127.0.0.1"
        echo "addprinc -pw $USER_PASSWORD $USER_PRINCIPAL"
        echo "ktadd -k $DIR/server.keytab postgres/localhost postgres/127.0.0.1"
        echo "ktadd -norandkey -k $DIR/client.keytab $USER_PRINCIPAL"
    } | "$kadmin" -r "$REALM" >"$DIR/kadmin.log" 2>&1 ||
        { cat "$DIR/kadmin.log" >&2; die "kadmin.local failed"; }
    [ -s "$DIR/server.keytab" ] && [ -s "$DIR/client.keytab" ] ||
        { cat "$DIR/kadmin.log" >&2; die "the keytabs were not written"; }
    chmod 600 "$DIR/server.keytab" "$DIR/client.keytab"
    own_by_server "$DIR/server.keytab"
}

# Start krb5kdc on a free port; its pid in DIR/krb5kdc.pid.
start_kdc() {
    local krb5kdc port attempt
    krb5kdc=$(find_tool krb5kdc)
    port=${PGW_KDC_PORT:-}
    for attempt in $(seq 1 $PORT_TRIES); do
        [ -n "${PGW_KDC_PORT:-}" ] || port=$(next_free_port "${port:-$FIRST_PORT}")
        write_kdc_conf "$port"
        rm -f "$DIR/krb5kdc.pid"
        : >"$DIR/krb5kdc.log"
        if "$krb5kdc" -r "$REALM" -P "$DIR/krb5kdc.pid" >"$DIR/krb5kdc.out" 2>&1; then
            for _ in $(seq 1 50); do
                [ -s "$DIR/krb5kdc.pid" ] && port_in_use "$port" && break
                sleep 0.1
            done
            if [ -s "$DIR/krb5kdc.pid" ] && port_in_use "$port"; then
                KDC_PORT=$port
                return 0
            fi
        fi
        [ -s "$DIR/krb5kdc.pid" ] && kill -TERM "$(cat "$DIR/krb5kdc.pid")" 2>/dev/null || true
        [ -z "${PGW_KDC_PORT:-}" ] && [ "$attempt" -lt $PORT_TRIES ] || break
        log "the KDC did not come up on port $port, trying the next one"
        port=$((port + 1))
    done
    cat "$DIR/krb5kdc.out" "$DIR/krb5kdc.log" >&2 || true
    die "krb5kdc did not start"
}

# The cluster's additions (pg-cluster.sh's PGW_CLUSTER_* files).
write_cluster_files() {
    echo "krb_server_keyfile = '$DIR/server.keytab'" >"$DIR/cluster.conf"
    cat >"$DIR/cluster.hba" <<EOF
hostgssenc   all pgw_gssenc   127.0.0.1/32 gss map=krb
hostnogssenc all pgw_nogssenc 127.0.0.1/32 gss map=krb
host         all pgw_gss      127.0.0.1/32 gss map=krb
EOF
    cat >"$DIR/cluster.ident" <<EOF
krb $USER_PRINCIPAL@$REALM pgw_gss
krb $USER_PRINCIPAL@$REALM pgw_gssenc
krb $USER_PRINCIPAL@$REALM pgw_nogssenc
EOF
    cat >"$DIR/cluster.sql" <<EOF
CREATE ROLE pgw_gss LOGIN;
CREATE ROLE pgw_gssenc LOGIN;
CREATE ROLE pgw_nogssenc LOGIN;
EOF
    chmod 644 "$DIR"/cluster.*
}

# A GSS-encrypted query with a fresh ticket, as a client would make it.
check_gss() {
    local port=$1 pgbin=$2 out
    KRB5CCNAME=FILE:$DIR/check.ccache "$(find_tool kinit)" -k -t "$DIR/client.keytab" \
        "$USER_PRINCIPAL" >"$DIR/kinit.log" 2>&1 ||
        { cat "$DIR/kinit.log" >&2; die "kinit from the client keytab failed"; }
    out=$(KRB5CCNAME=FILE:$DIR/check.ccache "$pgbin/psql" -X -A -t \
        "host=localhost hostaddr=127.0.0.1 port=$port user=pgw_gss dbname=postgres gssencmode=require" \
        -c 'SELECT encrypted FROM pg_stat_gssapi WHERE pid = pg_backend_pid()' 2>&1) ||
        die "a GSS-encrypted query failed: $out"
    [ "$out" = t ] || die "the GSS-encrypted query says encrypted=$out"
    rm -f "$DIR/check.ccache"
}

cmd_start() {
    local cenv port sock pgbin
    teardown # left over from a previous run
    make_dir
    # The realm's files are ours (root's, or the caller's); only the server
    # keytab is the server's.
    export KRB5_CONFIG=$DIR/krb5.conf KRB5_KDC_PROFILE=$DIR/kdc.conf
    write_kdc_conf 0 # kdb5_util and kadmin.local read these; the port comes next
    make_realm
    start_kdc
    write_cluster_files
    # The server's GSS-API reads the private configuration, and keeps no
    # replay cache on disk (all of it dies with DIR).
    cenv=$(
        unset PGHOST PGPORT PGW_TEST_PORT
        export KRB5RCACHETYPE=none PGW_CLUSTER_CONF=$DIR/cluster.conf \
            PGW_CLUSTER_HBA=$DIR/cluster.hba PGW_CLUSTER_IDENT=$DIR/cluster.ident \
            PGW_CLUSTER_SQL=$DIR/cluster.sql
        bash "$HERE/pg-cluster.sh" start "$DIR/cluster"
    ) || die "the cluster did not start"
    port=$(echo "$cenv" | sed -n 's/^PGPORT=//p' | tail -n 1)
    sock=$(echo "$cenv" | sed -n 's/^PGHOST=//p' | tail -n 1)
    pgbin=$(echo "$cenv" | sed -n 's/^PGW_TEST_PGBIN=//p' | tail -n 1)
    check_gss "$port" "$pgbin"
    {
        echo "PGW_KRB5_CONFIG=$DIR/krb5.conf"
        echo "PGW_KRB_REALM=$REALM"
        echo "PGW_KRB_PRINCIPAL=$USER_PRINCIPAL@$REALM"
        echo "PGW_KRB_PASSWORD=$USER_PASSWORD"
        echo "PGW_KRB_KEYTAB=$DIR/client.keytab"
        echo "PGW_KRB_KDC_PORT=$KDC_PORT"
        echo "PGW_GSS_HOST=localhost"
        echo "PGW_GSS_HOSTADDR=127.0.0.1"
        echo "PGW_GSS_PORT=$port"
        echo "PGW_GSS_SOCKET_DIR=$sock"
        echo "PGW_GSS_SUPERUSER=$(echo "$cenv" | sed -n 's/^PGUSER=//p' | tail -n 1)"
        echo "PGW_GSS_USER=pgw_gss"
        echo "PGW_GSS_ENC_USER=pgw_gssenc"
        echo "PGW_GSS_NOENC_USER=pgw_nogssenc"
        echo "PGW_GSS_SSL_ROOTCERT=$(echo "$cenv" | sed -n 's/^PGW_TEST_SSL_ROOTCERT=//p' | tail -n 1)"
        echo "PGW_GSS_SERVER_LOG=$(echo "$cenv" | sed -n 's/^PGW_TEST_SERVER_LOG=//p' | tail -n 1)"
    } >"$DIR/env.tmp"
    mv "$DIR/env.tmp" "$DIR/env"
    chmod 644 "$DIR/env"
    cat "$DIR/env"
}

case "$CMD" in
start) cmd_start ;;
stop) teardown ;;
env) cat "$DIR/env" ;;
*) usage ;;
esac
