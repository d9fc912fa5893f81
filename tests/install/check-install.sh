#!/usr/bin/env bash
# Builds and runs tests/install/consumer.c through every way a user finds
# libpgwire, from the build tree BUILD (already built):
#
# 1. Uninstalled: BUILD/libpgwire.pc (PKG_CONFIG_PATH=BUILD) names the source
#    tree's headers and BUILD's libraries; the consumer compiles and links
#    against the shared library, and statically with `pkg-config --static`.
# 2. Installed into a scratch prefix: find_package(pgwire) (shared and
#    static) and the installed libpgwire.pc (shared and --static), which
#    names the prefix and nothing of the build or source tree.
#
# The static links take every object of libpgwire.a (--whole-archive), so
# they succeed only if --static lists every library the whole library needs
# (libuv, libssl, libcrypto, libm).
#
#   check-install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(realpath "$1") build=$(realpath "$2")
work=$(mktemp -d /tmp/pgw-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
consumer=$src/tests/install/consumer.c

fail() {
    echo "install: $*" >&2
    exit 1
}

# pc DIR ARGS...: pkg-config with DIR searched first.
pc() {
    local dir=$1
    shift
    PKG_CONFIG_PATH=$dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config "$@" libpgwire
}

expect_var() {
    local dir=$1 var=$2 want=$3 got
    got=$(pc "$dir" --variable="$var")
    [ "$got" = "$want" ] || fail "$dir/libpgwire.pc: $var is '$got', expected '$want'"
}

# check_pc DIR NAME: consumer built with the flags of DIR/libpgwire.pc, shared
# and static, and run.
check_pc() {
    local dir=$1 name=$2 libdir static_libs flag
    libdir=$(pc "$dir" --variable=libdir)
    [ -f "$libdir/libpgwire.so" ] || fail "$name: no libpgwire.so in libdir $libdir"
    [ -f "$libdir/libpgwire.a" ] || fail "$name: no libpgwire.a in libdir $libdir"
    # shellcheck disable=SC2046 # pkg-config prints a list of flags
    cc -std=c11 "$consumer" -o "$work/$name-shared" $(pc "$dir" --cflags --libs)
    LD_LIBRARY_PATH=$libdir "$work/$name-shared" >/dev/null

    static_libs=$(pc "$dir" --static --libs)
    for flag in -luv -lssl -lcrypto -lm; do
        case " $static_libs " in
        *" $flag "*) ;;
        *) fail "$name: pkg-config --static --libs lacks $flag: $static_libs" ;;
        esac
    done
    # shellcheck disable=SC2046,SC2001 # a list of flags; -lpgwire becomes the archive
    cc -std=c11 "$consumer" -o "$work/$name-static" $(pc "$dir" --cflags) \
        -Wl,--whole-archive "$libdir/libpgwire.a" -Wl,--no-whole-archive \
        $(echo "$static_libs" | sed 's/\(^\| \)-lpgwire\( \|$\)/ /')
    if readelf -d "$work/$name-static" | grep -q 'NEEDED.*libpgwire'; then
        fail "$name: the static consumer needs libpgwire.so"
    fi
    "$work/$name-static" >/dev/null
}

# 1. The build tree's libpgwire.pc, before anything is installed.
[ -f "$build/libpgwire.pc" ] || fail "no libpgwire.pc in the build tree $build"
expect_var "$build" includedir "$src/include"
expect_var "$build" prefix "$build"
check_pc "$build" build-tree

# 2. Installed.
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libpgwire.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$work/consumer/consumer_shared" >/dev/null
"$work/consumer/consumer_static" >/dev/null

installed_pc=$(find "$prefix" -name libpgwire.pc | head -n 1)
[ -n "$installed_pc" ] || fail "no libpgwire.pc installed"
pcdir=$(dirname "$installed_pc")
if grep -qF -e "$build" -e "$src" "$installed_pc"; then
    fail "the installed libpgwire.pc names the build or source tree: $(cat "$installed_pc")"
fi
expect_var "$pcdir" prefix "$prefix"
expect_var "$pcdir" includedir "$prefix/include"
expect_var "$pcdir" libdir "$libdir"
check_pc "$pcdir" installed

echo "install: build-tree pkg-config (shared, --static), find_package (shared, static)" \
    "and installed pkg-config (shared, --static) consumers built and ran"
