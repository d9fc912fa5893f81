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
# 3. The Release build a packager makes, library only (README's Building),
#    with link-time optimization on (PGW_LTO's default): installed, and
#    linked through its libpgwire.pc by gcc, gcc -fno-lto and clang, shared
#    and static, and by a clang find_package(pgwire) consumer. With GCC its
#    libpgwire.a carries LTO bytecode, which only GCC's linker plugin reads:
#    the archive must hold machine code as well, as every toolchain that
#    links statically without that plugin (clang, gcc -fno-lto, Rust's cc,
#    cgo) needs.
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

# check_pc DIR NAME [COMPILER...]: consumer built with the flags of
# DIR/libpgwire.pc by COMPILER (default cc), shared and static, and run.
check_pc() {
    local dir=$1 name=$2 libdir static_libs flag
    shift 2
    local compiler=("${@:-cc}")
    libdir=$(pc "$dir" --variable=libdir)
    [ -f "$libdir/libpgwire.so" ] || fail "$name: no libpgwire.so in libdir $libdir"
    [ -f "$libdir/libpgwire.a" ] || fail "$name: no libpgwire.a in libdir $libdir"
    # shellcheck disable=SC2046 # pkg-config prints a list of flags
    "${compiler[@]}" -std=c11 "$consumer" -o "$work/$name-shared" $(pc "$dir" --cflags --libs) ||
        fail "$name: ${compiler[*]} could not link with libpgwire.so"
    LD_LIBRARY_PATH=$libdir "$work/$name-shared" >/dev/null

    static_libs=$(pc "$dir" --static --libs)
    for flag in -luv -lssl -lcrypto -lm; do
        case " $static_libs " in
        *" $flag "*) ;;
        *) fail "$name: pkg-config --static --libs lacks $flag: $static_libs" ;;
        esac
    done
    # shellcheck disable=SC2046,SC2001 # a list of flags; -lpgwire becomes the archive
    "${compiler[@]}" -std=c11 "$consumer" -o "$work/$name-static" $(pc "$dir" --cflags) \
        -Wl,--whole-archive "$libdir/libpgwire.a" -Wl,--no-whole-archive \
        $(echo "$static_libs" | sed 's/\(^\| \)-lpgwire\( \|$\)/ /') ||
        fail "$name: ${compiler[*]} could not link with libpgwire.a"
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

# 3. A Release build, library only, LTO on (the default), installed; by the
# compiler of BUILD.
rel=$work/release
build_cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$src" -B "$rel/build" -DCMAKE_BUILD_TYPE=Release -DPGW_BUILD_TESTS=OFF \
    -DPGW_BUILD_BENCH=OFF -DPGW_BUILD_EXAMPLES=OFF ${build_cc:+-DCMAKE_C_COMPILER="$build_cc"} \
    >"$rel.log" 2>&1 ||
    { cat "$rel.log"; fail "release: configure failed"; }
cmake --build "$rel/build" -j"$(nproc 2>/dev/null || echo 2)" >>"$rel.log" 2>&1 ||
    { cat "$rel.log"; fail "release: build failed"; }
cmake --install "$rel/build" --prefix "$rel/prefix" >/dev/null
rel_pc=$(dirname "$(find "$rel/prefix" -name libpgwire.pc | head -n 1)")
archive=$(pc "$rel_pc" --variable=libdir)/libpgwire.a
compiler_id=$(sed -n 's/^set(CMAKE_C_COMPILER_ID "\(.*\)")$/\1/p' \
    "$rel"/build/CMakeFiles/*/CMakeCCompiler.cmake | head -n 1)
lto=""
if readelf -S --wide "$archive" 2>/dev/null | grep '\.gnu\.lto_' >/dev/null; then # not -q: pipefail
    lto=" (GCC LTO bytecode and machine code)"
elif [ "$compiler_id" = GNU ]; then
    fail "release: the $compiler_id build's libpgwire.a holds no LTO bytecode: is PGW_LTO off?"
fi
for toolchain in "gcc" "gcc -fno-lto" "clang"; do
    command -v "${toolchain%% *}" >/dev/null || fail "release: ${toolchain%% *} not installed"
    # shellcheck disable=SC2086 # the toolchain is a command and its flags
    check_pc "$rel_pc" "release-${toolchain// /}" $toolchain
done
CC=clang cmake -S "$src/tests/install" -B "$rel/consumer" -DCMAKE_PREFIX_PATH="$rel/prefix" \
    >/dev/null
cmake --build "$rel/consumer" >/dev/null ||
    fail "release: find_package(pgwire) consumer built by clang failed"
LD_LIBRARY_PATH=$(dirname "$archive") "$rel/consumer/consumer_shared" >/dev/null
"$rel/consumer/consumer_static" >/dev/null
echo "install: Release build (library only, LTO on) by $compiler_id: libpgwire.a$lto linked" \
    "by gcc, gcc -fno-lto and clang (pkg-config shared and --static; clang find_package" \
    "shared and static); consumers ran"
