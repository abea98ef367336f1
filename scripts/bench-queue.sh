#!/usr/bin/env bash
# The queue section of `make bench` (run by scripts/bench.sh, or alone): the job queue's own
# throughput with no-op jobs (enqueue, claim, complete), on SQLite and on PostgreSQL, with 1
# and 4 workers. Each worker has its own connection (its own GRDB pool or PostgreSQL client),
# as separate `pushprep worker` processes would; its handler succeeds at once.
#
#   enqueue/s  jobs enqueued in batches on one connection, divided by the time it took
#   process/s  jobs divided by the time from the first claim to the last accepted result
#              (claim + complete: the queue's throughput)
#
# Goals on a 2-core machine: process/s >= 3000 on SQLite and >= 2000 on PostgreSQL (PASS or
# BELOW; BELOW does not fail the script). A run in which a job does not succeed exactly once
# fails the script (exit 1) after the summary.
#
# SQLite uses a new file under bench-out/ per run. PostgreSQL runs on a temporary server this
# script starts (initdb into bench-out/, 127.0.0.1 only, a free port, every setting at its
# default: fsync and synchronous_commit stay on) and removes on exit; one new database per run.
#
# Run from anywhere (it cd's to the repo root); writes only under bench-out/.
#
# Environment:
#   QUEUE_BENCH              the pushprep-queue-bench binary, relative to the repo root
#                            (default .build/release/pushprep-queue-bench; this script builds
#                            nothing: swift build -c release --product pushprep-queue-bench)
#   BENCH_QUEUE_JOBS         jobs per run (default 20000)
#   BENCH_QUEUE_WORKERS      worker counts to measure (default "1 4")
#   BENCH_QUEUE_CONCURRENCY  jobs each worker runs at once, which is also its largest claim
#                            (default 32)
#   BENCH_QUEUE_BACKENDS     backends to measure (default "sqlite postgres")
#   BENCH_QUEUE_REPEAT       runs per backend and worker count, interleaved; the median is
#                            reported (default 3)
#   BENCH_QUEUE_PROCESSES=1  each worker in its own process instead of as tasks of one process
#   BENCH_QUEUE_PG_BIN       PostgreSQL's programs (default: the newest /usr/lib/postgresql/*/bin)
#   BENCH_QUEUE_SQLITE_GOAL, BENCH_QUEUE_POSTGRES_GOAL  process/s goals (default 3000, 2000)
#
# Full output of every run (per-call timings: claim, finish, ...): bench-out/logs/queue-*.log
#
# Last line of output, for CI / scripts (process jobs/s, medians):
#   bench queue: sqlite_1w=… sqlite_4w=… postgres_1w=… postgres_4w=…
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

QUEUE_BENCH=${QUEUE_BENCH:-.build/release/pushprep-queue-bench}
JOBS=${BENCH_QUEUE_JOBS:-20000}
WORKER_COUNTS=${BENCH_QUEUE_WORKERS:-1 4}
CONCURRENCY=${BENCH_QUEUE_CONCURRENCY:-32}
BACKENDS=${BENCH_QUEUE_BACKENDS:-sqlite postgres}
REPEAT=${BENCH_QUEUE_REPEAT:-3}
PROCESSES=${BENCH_QUEUE_PROCESSES:-0}
SQLITE_GOAL=${BENCH_QUEUE_SQLITE_GOAL:-3000}
POSTGRES_GOAL=${BENCH_QUEUE_POSTGRES_GOAL:-2000}

ROOT=bench-out
LOGS=$ROOT/logs

die() { echo "bench-queue: error: $*" >&2; exit 2; }
note() { echo "bench-queue: $*" >&2; }

for n in JOBS CONCURRENCY REPEAT SQLITE_GOAL POSTGRES_GOAL; do
    [[ ${!n} =~ ^[0-9]+$ ]] && (( ${!n} >= 1 )) || die "$n must be a positive integer, got '${!n}'"
done
for w in $WORKER_COUNTS; do
    [[ $w =~ ^[0-9]+$ ]] && (( w >= 1 )) || die "BENCH_QUEUE_WORKERS must list positive integers, got '$WORKER_COUNTS'"
done
for b in $BACKENDS; do
    [[ $b == sqlite || $b == postgres ]] || die "BENCH_QUEUE_BACKENDS may hold sqlite and postgres, got '$b'"
done
[[ $PROCESSES == 0 || $PROCESSES == 1 ]] || die "BENCH_QUEUE_PROCESSES must be 0 or 1, got '$PROCESSES'"
mode_flag=()
mode=tasks
if [[ $PROCESSES == 1 ]]; then mode_flag=(--processes); mode=processes; fi

if [[ ! -e $QUEUE_BENCH ]]; then
    die "queue benchmark binary not found at '$QUEUE_BENCH' (relative to $(pwd)).
  Build it first:  swift build -c release --product pushprep-queue-bench
  or point QUEUE_BENCH at a build, e.g.  QUEUE_BENCH=.build/debug/pushprep-queue-bench"
fi
[[ -x $QUEUE_BENCH ]] || die "'$QUEUE_BENCH' is not executable"

mkdir -p "$LOGS"
ROOT_ABS=$(cd "$ROOT" && pwd)
SQLITE_DIR=$ROOT_ABS/queue-sqlite
rm -rf "$SQLITE_DIR"
mkdir -p "$SQLITE_DIR"

# --- temporary PostgreSQL server ---------------------------------------------
PG_DIR=
PG_PORT=
PG_VERSION=
as_postgres=()

free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
        return
    fi
    local port
    for (( tries = 0; tries < 100; tries++ )); do
        port=$(( 20000 + RANDOM % 30000 ))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
    die "no free port found"
}

pg_start() {
    local pg_bin=${BENCH_QUEUE_PG_BIN:-}
    if [[ -z $pg_bin ]]; then
        pg_bin=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
    fi
    [[ -n $pg_bin && -x $pg_bin/initdb && -x $pg_bin/pg_ctl && -x $pg_bin/psql ]] \
        || die "PostgreSQL's programs not found (looked in ${pg_bin:-/usr/lib/postgresql/*/bin}).
  Install them with:  apt-get install postgresql   (or set BENCH_QUEUE_PG_BIN, or BENCH_QUEUE_BACKENDS=sqlite)"
    PG_BIN=$pg_bin
    PG_DIR=$ROOT_ABS/queue-postgres
    rm -rf "$PG_DIR"
    mkdir -p "$PG_DIR"
    # initdb refuses to run as root: the server runs as the postgres user then.
    if (( EUID == 0 )); then
        id postgres >/dev/null 2>&1 || die "running as root needs a 'postgres' user to run the server as"
        chown postgres: "$PG_DIR"
        as_postgres=(runuser -u postgres --)
        "${as_postgres[@]}" test -w "$PG_DIR" \
            || die "the postgres user cannot write to $PG_DIR (is a parent directory closed to it?)"
    fi
    "${as_postgres[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C \
        >"$LOGS/queue-postgres-initdb.log" 2>&1 \
        || { tail -n 20 "$LOGS/queue-postgres-initdb.log" >&2; die "initdb failed (log: $LOGS/queue-postgres-initdb.log)"; }
    PG_PORT=$(free_port)
    # Only where it listens changes; durability (fsync, synchronous_commit, ...) stays default.
    if ! "${as_postgres[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories='$PG_DIR'" \
        start >/dev/null 2>&1; then
        tail -n 20 "$PG_DIR/server.log" >&2 || true
        die "the temporary PostgreSQL server did not start"
    fi
    PG_VERSION=$(pg_sql -c 'SHOW server_version')
    local fsync sync
    fsync=$(pg_sql -c 'SHOW fsync')
    sync=$(pg_sql -c 'SHOW synchronous_commit')
    [[ $fsync == on && $sync == on ]] || die "the temporary server has fsync=$fsync synchronous_commit=$sync; expected on"
    note "postgres $PG_VERSION on 127.0.0.1:$PG_PORT ($PG_DIR), fsync=$fsync synchronous_commit=$sync"
}

pg_sql() { PGOPTIONS='-c client_min_messages=warning' "$PG_BIN/psql" -X -q -A -t -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }

pg_stop() {
    [[ -n $PG_DIR ]] || return 0
    if [[ -n $PG_PORT ]]; then
        "${as_postgres[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$PG_DIR"
    PG_DIR=
}

cleanup() {
    pg_stop
    rm -rf "$SQLITE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- runs --------------------------------------------------------------------
declare -A enqueue_rates process_rates
failures=0

# The queue URL of a fresh, empty queue for one run.
fresh_queue() {
    local backend=$1 name=$2
    case $backend in
        sqlite)
            rm -f "$SQLITE_DIR/$name.db" "$SQLITE_DIR/$name.db-wal" "$SQLITE_DIR/$name.db-shm"
            echo "sqlite:$SQLITE_DIR/$name.db"
            ;;
        postgres)
            pg_sql -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null
            echo "postgres://postgres@127.0.0.1:$PG_PORT/$name?sslmode=disable"
            ;;
    esac
}

# A field of the result line: `field process_per_s "$line"`.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

run_one() {
    local backend=$1 workers=$2 round=$3 name url log line rc=0
    name="bench_${backend}_${workers}w_$round"
    url=$(fresh_queue "$backend" "$name")
    log=$LOGS/queue-$backend-${workers}w-$round.log
    "$QUEUE_BENCH" --queue "$url" --jobs "$JOBS" --workers "$workers" --concurrency "$CONCURRENCY" \
        "${mode_flag[@]}" >"$log" 2>&1 || rc=$?
    line=$(grep '^bench queue: ' "$log" | tail -n 1 || true)
    if (( rc != 0 )) || [[ -z $line || $line == *FAILED* ]]; then
        tail -n 20 "$log" >&2
        note "$backend, $workers workers, round $round: FAILED (exit $rc, log: $log)"
        failures=$(( failures + 1 ))
        return
    fi
    enqueue_rates[$backend,$workers]+="$(field enqueue_per_s "$line") "
    process_rates[$backend,$workers]+="$(field process_per_s "$line") "
    note "$backend, $workers workers, round $round: $(field process_per_s "$line") jobs/s processed," \
        "$(field enqueue_per_s "$line") jobs/s enqueued (claim batch $(field claim_batch "$line")," \
        "finish batch $(field finish_batch "$line"))"
    case $backend in
        sqlite) rm -f "$SQLITE_DIR/$name.db" "$SQLITE_DIR/$name.db-wal" "$SQLITE_DIR/$name.db-shm" ;;
        postgres) pg_sql -c "DROP DATABASE IF EXISTS $name" >/dev/null ;;
    esac
}

if [[ " $BACKENDS " == *" postgres "* ]]; then pg_start; fi

note "running: $JOBS no-op jobs per run, workers {${WORKER_COUNTS// /, }} as $mode, concurrency $CONCURRENCY," \
    "$REPEAT rounds (interleaved)"
for (( r = 1; r <= REPEAT; r++ )); do
    for backend in $BACKENDS; do
        for w in $WORKER_COUNTS; do run_one "$backend" "$w" "$r"; done
    done
done

# --- report ------------------------------------------------------------------
median() {
    (( $# > 0 )) || { echo NA; return; }
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo
echo "Queue benchmark: $JOBS no-op jobs per run, workers as $mode (each its own connection)," \
    "concurrency $CONCURRENCY per worker, median of $REPEAT interleaved runs, $(nproc) cores"
if [[ -n $PG_VERSION ]]; then
    echo "PostgreSQL $PG_VERSION on a temporary server, default settings (fsync=on, synchronous_commit=on)"
fi
echo
printf '%-9s %7s %11s %11s %6s  %s\n' backend workers enqueue/s process/s goal verdict
summary=()
for backend in $BACKENDS; do
    goal=$SQLITE_GOAL
    [[ $backend == postgres ]] && goal=$POSTGRES_GOAL
    for w in $WORKER_COUNTS; do
        # shellcheck disable=SC2086 # the lists are space-separated numbers
        enq=$(median ${enqueue_rates[$backend,$w]:-})
        # shellcheck disable=SC2086
        proc=$(median ${process_rates[$backend,$w]:-})
        if [[ $proc == NA ]]; then
            verdict=FAILED
        else
            verdict=$(awk -v p="$proc" -v g="$goal" 'BEGIN { print (p >= g) ? "PASS" : "BELOW" }')
        fi
        printf '%-9s %7s %11s %11s %6s  %s\n' "$backend" "$w" "$enq" "$proc" "$goal" "$verdict"
        summary+=("${backend}_${w}w=$proc")
    done
done
runs=()
for backend in $BACKENDS; do
    for w in $WORKER_COUNTS; do
        rates=${process_rates[$backend,$w]:-none}
        runs+=("$backend ${w}w: ${rates% }")
    done
done
printf '  runs (process/s): %s\n' "$(IFS='|'; echo "${runs[*]}" | sed 's/|/ | /g')"
echo "  per-call timings (claim, finish, ...) of each run: $LOGS/queue-*.log"
(( failures == 0 )) || echo "  FAILED: $failures runs did not process every job exactly once (see the logs)"
echo "bench queue: ${summary[*]}"
(( failures == 0 )) || exit 1
