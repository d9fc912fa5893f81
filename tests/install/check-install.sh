#!/usr/bin/env bash
# Installs the build tree BUILD into a scratch prefix, then builds and runs a
# consumer through each way a user finds the library: find_package(pgwire)
# (shared and static) and pkg-config libpgwire.
#   check-install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d /tmp/pgw-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name 'libpgwire.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
pc=$(dirname "$(find "$work/prefix" -name libpgwire.pc | head -n 1)")
# shellcheck disable=SC2046 # pkg-config prints a list of flags
cc -std=c11 "$src/tests/install/consumer.c" -o "$work/consumer_pc" \
    $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs libpgwire)
LD_LIBRARY_PATH=$libdir "$work/consumer_pc"
echo "install: find_package (shared, static) and pkg-config consumers built and ran"
