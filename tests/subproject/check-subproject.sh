#!/usr/bin/env bash
# Builds tests/subproject (a parent project that adds libpgwire with
# add_subdirectory and compiles everything with a strict warning set and
# -Werror) in a scratch directory, from the source tree SOURCE_DIR, and
# runs its two consumers (shared and static). Nothing but the library's
# own targets is built: no tests, bench or examples, as for any parent.
#
#   check-subproject.sh SOURCE_DIR
set -euo pipefail
src=$(realpath "$1")
work=$(mktemp -d /tmp/pgw-subproject.XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() {
    echo "subproject: $*" >&2
    exit 1
}

# Makefiles, whatever CMAKE_GENERATOR says: -k below is make's.
cmake -G "Unix Makefiles" -S "$src/tests/subproject" -B "$work" -DPGW_SOURCE_DIR="$src" \
    >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configure failed"; }
# -k: every error, not the first
if ! cmake --build "$work" -j"$(nproc 2>/dev/null || echo 2)" -- -k >"$work/build.log" 2>&1; then
    grep -E 'error|warning' "$work/build.log" | head -n 40
    fail "the parent's build failed under its warnings (-Werror)"
fi
for t in parent_shared parent_static; do
    "$work/$t" >/dev/null || fail "$t did not run"
done
if readelf -d "$work/parent_static" | grep -q 'NEEDED.*libpgwire'; then
    fail "parent_static needs libpgwire.so"
fi
targets=$(grep -c 'Built target' "$work/build.log" || true)
echo "subproject: add_subdirectory under -Werror and the strict warnings: built $targets targets," \
    "shared and static consumers ran"
