# Shared by the scripts of tests/pq (sourced, not run).
# shellcheck shell=bash

# pq_load_env ENV_FILE: the pgcluster fixture's server (PGHOST, PGPORT,
# PGUSER, PGDATABASE, PGW_TEST_*) into the environment, and nothing of the
# caller's own libpq configuration, so both libraries see the same.
pq_load_env() {
    [ -f "$1" ] || { echo "no $1: the pgcluster fixture did not start" >&2; exit 1; }
    unset PGPASSWORD PGSERVICE PGSERVICEFILE PGSSLMODE PGCLIENTENCODING PGOPTIONS PGAPPNAME \
        PGCONNECT_TIMEOUT PGTARGETSESSIONATTRS PGSYSCONFDIR PGHOSTADDR PGREQUIRESSL \
        PGSSLROOTCERT PGSSLCERT PGSSLKEY PGGSSENCMODE PGDATESTYLE PGTZ PGPASSFILE LD_PRELOAD
    set -a
    # shellcheck disable=SC1090
    . "$1"
    set +a
    export LC_ALL=C LANG=C TZ=UTC
}

# pq_check_loader PROGRAM COMPAT_DIR: exits unless the loader, given
# LD_LIBRARY_PATH=COMPAT_DIR, gives PROGRAM COMPAT_DIR/libpq.so.5 (a relative
# or wrong directory would silently load the system's libpq again).
pq_check_loader() {
    local lib
    lib=$(LD_TRACE_LOADED_OBJECTS=1 LD_LIBRARY_PATH=$2 "$1" 2>&1 | awk '$1 == "libpq.so.5" {print $3}')
    if [ "$(realpath -m -- "$lib")" != "$(realpath -m -- "$2/libpq.so.5")" ]; then
        echo "the loader gives $1 libpq.so.5 from '$lib', not $2" >&2
        exit 1
    fi
}

# pq_setup ENV_FILE COMPAT_DIR PROGRAM...: the start of a script that runs
# Debian's PROGRAMs on both libraries. PQ_COMPAT, COMPAT_DIR made absolute,
# must hold libpq.so.5 and be where the loader finds it for every PROGRAM
# (pq_check_loader); the fixture's server goes into the environment
# (pq_load_env); PQ_TMP, a new directory, is also HOME (no ~/.psqlrc or
# ~/.pgpass of the caller's). Exits on failure.
pq_setup() {
    local p
    PQ_COMPAT=$(realpath -m -- "$2")
    [ -f "$PQ_COMPAT/libpq.so.5" ] || { echo "no $PQ_COMPAT/libpq.so.5: build pq_compat" >&2; exit 1; }
    for p in "${@:3}"; do pq_check_loader "$p" "$PQ_COMPAT"; done
    pq_load_env "$1"
    PQ_TMP=$(mktemp -d)
    export HOME=$PQ_TMP
}

# pq_server_copy: PQ_SERVER_COMPAT, a copy of the layer in PQ_TMP (made
# world-readable) for programs that run as the server's user: as root,
# that is postgres, who may not reach the build tree (under /root, say).
# The layer needs nothing of the build tree. Exits on failure.
pq_server_copy() {
    chmod 755 "$PQ_TMP"
    mkdir -m 755 "$PQ_TMP/lib" && cp -L "$PQ_COMPAT/libpq.so.5" "$PQ_TMP/lib/" || exit 1
    # shellcheck disable=SC2034 # for the sourcing script
    PQ_SERVER_COMPAT=$PQ_TMP/lib
}

# pq_wrap LIB COMPAT_DIR: PQ_WRAP, the command prefix that runs a program on
# LIB: libpq as installed, or pgwire (LD_LIBRARY_PATH=COMPAT_DIR; under the
# sanitizer build PQ_PRELOAD too, the ASan runtime for the uninstrumented
# program, with LeakSanitizer off: it cannot tell the program's own leaks).
pq_wrap() {
    PQ_WRAP=(env)
    [ "$1" = pgwire ] || return 0
    PQ_WRAP+=(LD_LIBRARY_PATH="$2")
    [ -n "${PQ_PRELOAD:-}" ] && PQ_WRAP+=(LD_PRELOAD="$PQ_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
    return 0
}

# pq_step LIB COMPAT_DIR LOG NAME COMMAND...: COMMAND on LIB (pq_wrap), its
# output appended to LOG under "---- NAME", then "exit=STATUS". A hang is
# killed after PQ_STEP_TIMEOUT seconds (180): status 124, which shows in
# the comparison of the two libraries' logs.
pq_step() {
    local log=$3 name=$4
    pq_wrap "$1" "$2"
    shift 4
    {
        echo "---- $name"
        timeout -k 5 "${PQ_STEP_TIMEOUT:-180}" "${PQ_WRAP[@]}" "$@" 2>&1
        echo "exit=$?"
    } >>"$log"
}

# pq_compare_steps LIBPQ_LOG PGWIRE_LOG STEP...: the two libraries' pq_step
# logs are identical ("identical (N steps, M lines)", else a diff of at most
# PQ_DIFF_MAX_LINES lines), and each STEP, one meant to succeed, exited 0
# on libpq (a broken setup fails the test). Returns 1 otherwise.
pq_compare_steps() {
    local a=$1 b=$2 s fail=0
    shift 2
    if cmp -s "$a" "$b"; then
        echo "identical ($(grep -c '^---- ' "$a") steps, $(wc -l <"$a") lines)"
    else
        echo "DIFFERENT (- libpq, + libpgwire-pq):"
        diff -u "$a" "$b" | head -"${PQ_DIFF_MAX_LINES:-60}"
        fail=1
    fi
    for s in "$@"; do
        awk -v s="---- $s" '$0 == s {on = 1; next} on && /^exit=/ {print; exit}' "$a" | grep -qx "exit=0" ||
            { echo "step $s failed on libpq:"; cat "$a"; return 1; }
    done
    return $fail
}
