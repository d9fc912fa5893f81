#!/usr/bin/env bash
# The test command: install missing dependencies, build with warnings as
# errors, run every test (ctest starts and stops the throwaway PostgreSQL
# cluster itself). Exit status is ctest's.
#
#   PGW_BUILD_DIR   build directory (default: build/ at the top of the tree)
#   PGW_CMAKE_ARGS  extra arguments for cmake's configure step
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${PGW_BUILD_DIR:-$ROOT/build}
JOBS=$(nproc 2>/dev/null || echo 2)

bash "$ROOT/.ci/deps.sh"
# shellcheck disable=SC2086 # PGW_CMAKE_ARGS is a list of words
cmake -S "$ROOT" -B "$BUILD" -DPGW_WERROR=ON ${PGW_CMAKE_ARGS:-}
cmake --build "$BUILD" -j"$JOBS"
rc=0
ctest --test-dir "$BUILD" --output-on-failure || rc=$?
exit $rc
