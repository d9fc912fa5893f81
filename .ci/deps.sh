#!/usr/bin/env bash
# Install what a fresh Debian 12 machine lacks to build and test libpgwire.
# Does nothing (and needs no network) when every package is already there.
set -euo pipefail

# iproute2: tests/integration/test_deadline_partition.c builds a network namespace pair.
# pgbouncer: tests/pg/pgbouncer.sh, the pgbouncer fixture (tests/integration/test_pgbouncer.c).
# pgpool2: tests/pg/pgpool.sh, the pgpool fixture (tests/integration/test_pgpool.c).
# libkrb5-dev: GSSAPI (krb5-gssapi) for the library; krb5-kdc, krb5-admin-server (kadmin.local)
# and krb5-user (kinit): tests/pg/kdc.sh, the krb5 fixture's throwaway realm
# (tests/integration/test_gss_libpq.c, bench/'s Connect over GSS encryption row).
# doxygen: the API reference (the docs target, checked by .ci/run).
# python3-psycopg2, python3-psycopg, libdbd-pg-perl, ruby-pg, php-cli + php-pgsql: bindings
# built on libpq that tests/pq/bindings runs on libpgwire-pq.
PACKAGES=(cmake gcc clang pkg-config make libuv1-dev libssl-dev libcmocka-dev postgresql
    postgresql-contrib libpq-dev openssl valgrind ca-certificates python3 clang-format iproute2
    pgbouncer pgpool2 libkrb5-dev krb5-kdc krb5-admin-server krb5-user doxygen
    python3-psycopg2 python3-psycopg libdbd-pg-perl ruby-pg php-cli php-pgsql)

missing=()
for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all packages present"
    exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=()
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}"
# Debian's postgresql package may create and start a "main" cluster on 5432.
# The tests never use it: tests/pg/pg-cluster.sh starts its own cluster on
# its own port and socket directory. Likewise krb5-kdc's service: the tests'
# realm (tests/pg/kdc.sh) runs its own KDC with its own configuration.
