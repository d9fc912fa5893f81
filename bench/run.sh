#!/usr/bin/env bash
# bench/run.sh: the one command that reproduces bench/RESULTS.md.
#
#   bash bench/run.sh              # the benchmark
#   bash bench/run.sh --selftest   # the harness's own checks (bench/selftest.py), no benchmark
#
# On a fresh Debian 12 machine it installs what it needs (.ci/deps.sh, and
# python3 when missing; for the peers Debian's nodejs, npm, python3-asyncpg
# and python3-uvloop, and the npm packages of bench/node/package-lock.json),
# builds a Release build in build-bench/, starts a throwaway PostgreSQL
# cluster (unless PGHOST and PGPORT point at a server), loads the data set
# (bench/setup.sql), runs suites A, B and C and writes bench/RESULTS.md,
# bench/results/*.json and bench/results/ratios.svg.
#
# Environment:
#   BENCH_SCALE   scales row counts and iterations (default 1)
#   BENCH_REPS    runs per (library, scenario) (default 3)
#   BENCH_PORT    port for the throwaway cluster (default: first free from 54320)
#   BENCH_FILTER  regular expression of scenario ids to run (e.g. 'ext_|b_seq')
#   BENCH_SUITES  comma-separated suites (default A,B,C,T,M,R,P; M: client memory per pending
#                 request; R: a logical replication stream,
#                 libpgwire beside pg_recvlogical and postgres.js; P: pooled reads over the
#                 throwaway cluster and two streaming standbys, up only while P runs
#                 (tests/pg/pg-replica.sh; skipped, its section says why, with an external
#                 server or without pg_basebackup); D, seed 002's TSBS cpu load and
#                 queries, is opt-in: it loads BENCH_D_SCALE x 2M rows; quick mode adds it)
#   BENCH_D_SCALE suite D's rows: x 2,000,000 (default BENCH_SCALE; quick mode 0.005)
#   BENCH_R_SCALE suite R's changes: x 1,000,000 (default BENCH_SCALE; quick mode 0.01)
#   BENCH_BUILD   build directory (default build-bench)
#   BENCH_NO_DEPS=1  skip the Debian package installation step (the npm packages of
#                 bench/node are still installed when missing: they are the harness's own)
#   BENCH_PEERS=0 leave out the Node.js and Python libraries (default 1: run them)
#   BENCH_PEERS_STRICT=1  a peer library's wrong answer fails the run too
#   BENCH_OUT     write the report and raw JSON there instead of bench/ (CI)
#   BENCH_QUICK=1 quick mode: BENCH_SCALE=0.1 BENCH_REPS=1 unless those are set
# Smoke mode for CI: BENCH_QUICK=1 bash bench/run.sh
#   PGW_PGBOUNCER_HOST, PGW_PGBOUNCER_PORT (and _USER, _DB, _PASSWORD): a PgBouncer (transaction
#                 mode, in front of the same server) for the PgBouncer row; otherwise one is
#                 started with tests/pg/pgbouncer.sh in front of the throwaway cluster, and the
#                 row is skipped (its cells say why) when that script or pgbouncer is missing
#   (the Connect over GSS encryption row starts a Kerberos realm and a cluster of its own with
#   tests/pg/kdc.sh when MIT Kerberos is installed; its cells say why when it cannot)
# Exit status: non-zero if a scenario failed its verification or did not run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SELFTEST=0
for arg in "$@"; do
    case $arg in
    --selftest) SELFTEST=1 ;;
    *)
        echo "usage: bash bench/run.sh [--selftest]" >&2
        exit 2
        ;;
    esac
done
BUILD=${BENCH_BUILD:-$ROOT/build-bench}
# BENCH_QUICK=1: the quick mode CI runs (every scenario runs and verifies its
# answers; the timings are not for quoting).
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    export BENCH_SCALE=${BENCH_SCALE:-0.1} BENCH_REPS=${BENCH_REPS:-1}
    # Suite D's code runs too, on a tiny table (10,000 rows).
    export BENCH_SUITES=${BENCH_SUITES:-A,B,C,D,T,M,R,P} BENCH_D_SCALE=${BENCH_D_SCALE:-0.005}
    # Suite R streams 10,000 changes.
    export BENCH_R_SCALE=${BENCH_R_SCALE:-0.01}
fi
export BENCH_PEERS=${BENCH_PEERS:-1}
export BENCH_SCALE=${BENCH_SCALE:-1}
export BENCH_REPS=${BENCH_REPS:-3}
export BENCH_SUITES=${BENCH_SUITES:-A,B,C,T,M,R,P}
export BENCH_FILTER=${BENCH_FILTER:-}

say() { echo "bench: $*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        say "need root for: $*"
        return 1
    fi
}

# --- dependencies --------------------------------------------------------------
if [ "${BENCH_NO_DEPS:-0}" != 1 ]; then
    if [ -f .ci/deps.sh ]; then
        say "installing dependencies (.ci/deps.sh)"
        as_root bash .ci/deps.sh >&2
    fi
    if ! command -v python3 >/dev/null; then
        say "installing python3"
        as_root apt-get update -q >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >&2
    fi
fi

# --- the peers: Node.js and Python libraries ------------------------------------
# Debian's packages when missing (a fresh machine), then the npm packages of
# bench/node/package-lock.json (npm ci: from npm's cache when it has them).
# pg-native's libpq binding is compiled against the installed Node headers; if
# that fails, its cells say it is not installed here.
peer_debs() {
    local need=()
    command -v node >/dev/null || need+=(nodejs)
    command -v npm >/dev/null || need+=(npm)
    command -v g++ >/dev/null || need+=(g++)
    command -v make >/dev/null || need+=(make)
    /usr/bin/python3 -c 'import asyncpg' 2>/dev/null || need+=(python3-asyncpg)
    /usr/bin/python3 -c 'import uvloop' 2>/dev/null || need+=(python3-uvloop)
    [ -f /usr/include/postgresql/libpq-fe.h ] || need+=(libpq-dev)
    if [ ${#need[@]} -gt 0 ]; then
        say "installing ${need[*]}"
        as_root apt-get update -q >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
    fi
}

node_gyp() {
    local npm_dir
    npm_dir=$(dirname "$(readlink -f "$(command -v npm)")")/..
    for g in "$npm_dir/node_modules/node-gyp/bin/node-gyp.js" \
        /usr/share/nodejs/node-gyp/bin/node-gyp.js /usr/lib/node_modules/node-gyp/bin/node-gyp.js; do
        if [ -f "$g" ]; then
            echo "$g"
            return 0
        fi
    done
    return 1
}

peer_npm() {
    local dir=$ROOT/bench/node
    if ! command -v npm >/dev/null; then
        say "npm is missing: the Node.js libraries will report that they are not installed"
        return 0
    fi
    # node_modules/.bench-lock: the lock file node_modules was installed from.
    if ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.bench-lock" 2>/dev/null; then
        say "installing the Node.js libraries (npm ci in bench/node)"
        (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --ignore-scripts >&2)
        cp "$dir/package-lock.json" "$dir/node_modules/.bench-lock"
    fi
    local addon=$dir/node_modules/libpq/build/Release/addon.node gyp nodedir=""
    if [ -d "$dir/node_modules/libpq" ] && [ ! -f "$addon" ]; then
        say "building pg-native's libpq binding"
        for d in /usr /usr/local; do [ -f "$d/include/node/node.h" ] && nodedir=$d && break; done
        if gyp=$(node_gyp) && [ -n "$nodedir" ] &&
            (cd "$dir/node_modules/libpq" && npm_config_nodedir=$nodedir node "$gyp" rebuild >&2); then
            say "pg-native built"
        else
            say "pg-native could not be built here (node-gyp, Node headers or libpq-dev missing)"
        fi
    fi
}

if [ "$BENCH_PEERS" != 0 ]; then
    if [ "${BENCH_NO_DEPS:-0}" != 1 ]; then peer_debs; fi
    peer_npm
fi

# --- build -----------------------------------------------------------------------
DRIVER=$BUILD/bench/pgw-bench-driver
if [ $SELFTEST = 0 ]; then
    say "building (Release) in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPGW_BUILD_TESTS=OFF \
        -DPGW_BUILD_EXAMPLES=OFF -DPGW_BUILD_BENCH=ON >&2
    cmake --build "$BUILD" -j"$(nproc)" --target pgw-bench-driver pgw-bench-micro_codec \
        pgw-bench-suited pgw-bench-mem_pending pgw-bench-repl_stream pgw-bench-replica_reads >&2
fi

# --- server ------------------------------------------------------------------------
CLUSTER=""
PGBOUNCER=""
KRB5REALM=""
STANDBYS=()
cleanup() {
    local dir
    for dir in "${STANDBYS[@]}"; do
        [ -d "$dir" ] || continue # the runner stopped it
        say "stopping the standby in $dir"
        bash "$ROOT/tests/pg/pg-replica.sh" stop "$dir" >&2 || true
    done
    if [ -n "$PGBOUNCER" ]; then
        say "stopping PgBouncer"
        bash "$ROOT/tests/pg/pgbouncer.sh" stop "$PGBOUNCER" >&2 || true
    fi
    if [ -n "$KRB5REALM" ]; then
        say "stopping the Kerberos realm"
        bash "$ROOT/tests/pg/kdc.sh" stop "$KRB5REALM" >&2 || true
    fi
    if [ -n "$CLUSTER" ]; then
        say "stopping the cluster"
        bash "$ROOT/tests/pg/pg-cluster.sh" stop "$CLUSTER" >&2 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${PGHOST:-}" ] && [ -n "${PGPORT:-}" ]; then
    say "using the server at $PGHOST:$PGPORT"
    export PGUSER=${PGUSER:-$(id -un)} PGDATABASE=${PGDATABASE:-${PGUSER:-$(id -un)}}
    export PGW_TEST_TCP_HOST=${PGW_TEST_TCP_HOST:-127.0.0.1}
else
    CLUSTER=$(mktemp -d /tmp/pgw-bench.XXXXXX)
    say "starting a throwaway cluster in $CLUSTER"
    if [ -n "${BENCH_PORT:-}" ]; then export PGW_TEST_PORT=$BENCH_PORT; fi
    bash "$ROOT/tests/pg/pg-cluster.sh" start "$CLUSTER" >/dev/null
    set -a
    # shellcheck disable=SC1091
    . "$CLUSTER/env"
    set +a
fi
# The wire floor speaks trust auth only; the driver needs these.
: "${PGUSER:?}" "${PGDATABASE:?}"

say "loading the data set"
psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/bench/setup.sql" >/dev/null 2>&1 ||
    psql -X -q -v ON_ERROR_STOP=1 -f "$ROOT/bench/setup.sql" >/dev/null

# --- run -----------------------------------------------------------------------------
if [ $SELFTEST = 1 ]; then
    rc=0
    python3 "$ROOT/bench/selftest.py" || rc=$?
    exit $rc
fi
# --- PgBouncer, for the Pooled Simple Query through PgBouncer row -----------------------
# Started only when that row is selected; when it cannot be, BENCH_PGBOUNCER_SKIP says why
# and the driver reports the row's cells as unsupported with that reason.
pgbouncer_wanted() {
    case ",$BENCH_SUITES," in *,A,* | *,a,*) ;; *) return 1 ;; esac
    [ -z "$BENCH_FILTER" ] || echo pool_simple_pgbouncer | grep -Eq -- "$BENCH_FILTER"
}
start_pgbouncer() {
    export BENCH_PGBOUNCER_SKIP=""
    if [ -n "${PGW_PGBOUNCER_HOST:-}" ] && [ -n "${PGW_PGBOUNCER_PORT:-}" ]; then
        say "using the PgBouncer at $PGW_PGBOUNCER_HOST:$PGW_PGBOUNCER_PORT"
        return 0
    fi
    if [ ! -f "$ROOT/tests/pg/pgbouncer.sh" ]; then
        BENCH_PGBOUNCER_SKIP="skipped: tests/pg/pgbouncer.sh is not in this tree"
    elif ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
        BENCH_PGBOUNCER_SKIP="skipped: the pgbouncer binary is not installed (Debian: apt-get install pgbouncer)"
    elif [ -z "$CLUSTER" ]; then
        BENCH_PGBOUNCER_SKIP="skipped: PgBouncer is started only in front of the throwaway cluster; set PGW_PGBOUNCER_HOST and PGW_PGBOUNCER_PORT to use one in front of $PGHOST:$PGPORT"
    else
        local dir
        dir=$(mktemp -d /tmp/pgw-bench-pgbouncer.XXXXXX)
        say "starting PgBouncer (transaction mode, pool size 10) in $dir"
        if PGW_PGBOUNCER_POOL_SIZE=10 bash "$ROOT/tests/pg/pgbouncer.sh" start "$dir" "$CLUSTER/env" >&2 &&
            [ -f "$dir/env" ]; then
            PGBOUNCER=$dir
            set -a
            # shellcheck disable=SC1091
            . "$dir/env"
            set +a
            # Its unix socket, like the direct rows' connections, where it has one.
            if [ -S "$dir/.s.PGSQL.$PGW_PGBOUNCER_PORT" ]; then export BENCH_PGBOUNCER_HOST=$dir; fi
            return 0
        fi
        bash "$ROOT/tests/pg/pgbouncer.sh" stop "$dir" >&2 || true
        rm -rf "$dir"
        BENCH_PGBOUNCER_SKIP="skipped: tests/pg/pgbouncer.sh start failed (its messages are in the run's log)"
    fi
    say "PgBouncer row $BENCH_PGBOUNCER_SKIP"
}
if pgbouncer_wanted; then start_pgbouncer; fi

# --- a Kerberos realm, for the Connect over GSS encryption row ---------------------------
# tests/pg/kdc.sh: MIT's KDC on loopback and a cluster of its own that accepts GSSAPI; the
# driver gets its address and a ticket cache (kinit from the realm's client keytab) as
# BENCH_GSS_*, or BENCH_GSS_SKIP says why the row is skipped.
gss_wanted() {
    case ",$BENCH_SUITES," in *,A,* | *,a,*) ;; *) return 1 ;; esac
    [ -z "$BENCH_FILTER" ] || echo connect_gss | grep -Eq -- "$BENCH_FILTER"
}
start_realm() {
    export BENCH_GSS_SKIP=""
    local dir kinit
    kinit=$(command -v kinit || true)
    if [ ! -f "$ROOT/tests/pg/kdc.sh" ]; then
        BENCH_GSS_SKIP="skipped: tests/pg/kdc.sh is not in this tree"
    elif ! command -v krb5kdc >/dev/null && [ ! -x /usr/sbin/krb5kdc ] || [ -z "$kinit" ]; then
        BENCH_GSS_SKIP="skipped: MIT Kerberos is not installed (Debian: apt-get install krb5-kdc krb5-admin-server krb5-user)"
    else
        dir=$(mktemp -d /tmp/pgw-bench-krb5.XXXXXX)
        say "starting a Kerberos realm and its cluster in $dir"
        if bash "$ROOT/tests/pg/kdc.sh" start "$dir" >/dev/null && [ -f "$dir/env" ]; then
            KRB5REALM=$dir
            local conf keytab principal
            conf=$(sed -n 's/^PGW_KRB5_CONFIG=//p' "$dir/env")
            keytab=$(sed -n 's/^PGW_KRB_KEYTAB=//p' "$dir/env")
            principal=$(sed -n 's/^PGW_KRB_PRINCIPAL=//p' "$dir/env")
            if KRB5_CONFIG=$conf KRB5CCNAME=FILE:$dir/bench.ccache "$kinit" -k -t "$keytab" \
                "$principal" >&2; then
                export BENCH_GSS_KRB5_CONFIG=$conf BENCH_GSS_KRB5CCNAME=FILE:$dir/bench.ccache
                BENCH_GSS_HOST=$(sed -n 's/^PGW_GSS_HOST=//p' "$dir/env")
                BENCH_GSS_HOSTADDR=$(sed -n 's/^PGW_GSS_HOSTADDR=//p' "$dir/env")
                BENCH_GSS_PORT=$(sed -n 's/^PGW_GSS_PORT=//p' "$dir/env")
                BENCH_GSS_USER=$(sed -n 's/^PGW_GSS_USER=//p' "$dir/env")
                export BENCH_GSS_HOST BENCH_GSS_HOSTADDR BENCH_GSS_PORT BENCH_GSS_USER
                return 0
            fi
            BENCH_GSS_SKIP="skipped: kinit from the realm's keytab failed"
        else
            bash "$ROOT/tests/pg/kdc.sh" stop "$dir" >&2 || true
            rm -rf "$dir"
            BENCH_GSS_SKIP="skipped: tests/pg/kdc.sh start failed (its messages are in the run's log)"
        fi
    fi
    say "Connect over GSS encryption row $BENCH_GSS_SKIP"
}
if gss_wanted; then start_realm; fi

# --- two streaming standbys, for suite P ---------------------------------------------------
# bench/replicas.py starts them (tests/pg/pg-replica.sh start DIR "$CLUSTER/env") when suite P
# begins and stops them when it ends: standbys replaying the primary's WAL take the cores
# every other suite runs on (with two up, suite A's COPY rows took about 1.6 times as long).
# run.sh makes their directories (BENCH_P_STANDBY_DIRS) and stops what is left in them on
# exit; BENCH_P_SKIP says why there are none (the suite is skipped).
p_wanted() {
    case ",$BENCH_SUITES," in *,P,* | *,p,*) return 0 ;; esac
    return 1
}
has_basebackup() {
    local bin=${PGW_PG_BINDIR:-${PGW_TEST_PGBIN:-}}
    [ -n "$bin" ] || bin=$(pg_config --bindir 2>/dev/null || true)
    [ -x "$bin/pg_basebackup" ]
}
prepare_standbys() {
    export BENCH_P_SKIP="" BENCH_P_STANDBY_DIRS="" BENCH_P_PRIMARY_ENV=""
    if [ -z "$CLUSTER" ]; then
        BENCH_P_SKIP="skipped: the standbys are started only beside the throwaway cluster, and PGHOST and PGPORT name a server ($PGHOST:$PGPORT)"
    elif [ ! -f "$ROOT/tests/pg/pg-replica.sh" ]; then
        BENCH_P_SKIP="skipped: tests/pg/pg-replica.sh is not in this tree"
    elif ! has_basebackup; then
        BENCH_P_SKIP="skipped: pg_basebackup is not installed (Debian: apt-get install postgresql)"
    else
        local i
        for i in 1 2; do STANDBYS+=("$(mktemp -d /tmp/pgw-bench-standby.XXXXXX)"); done
        BENCH_P_STANDBY_DIRS=${STANDBYS[0]},${STANDBYS[1]}
        BENCH_P_PRIMARY_ENV=$CLUSTER/env
        return 0
    fi
    say "suite P $BENCH_P_SKIP"
}
if p_wanted; then prepare_standbys; fi

REPORT=$ROOT/bench/RESULTS.md
out_args=()
if [ -n "${BENCH_OUT:-}" ]; then
    REPORT=$BENCH_OUT/RESULTS.md
    out_args=(--results "$BENCH_OUT/results" --output "$REPORT")
fi
rc=0
python3 "$ROOT/bench/runner.py" --driver "$DRIVER" --micro "$BUILD/bench/pgw-bench-micro_codec" \
    "${out_args[@]}" || rc=$?
if [ $rc = 0 ]; then say "done: $REPORT"; else say "FAILED (see $REPORT)"; fi
exit $rc
