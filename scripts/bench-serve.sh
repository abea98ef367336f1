#!/usr/bin/env bash
# The HTTP section of `make bench` (run by scripts/bench.sh, or alone with BENCH_ONLY=serve):
# `pushprep serve` under load from wrk, on the same machine and cores, in the same run as the
# reference it is compared with.
#
#   jobs     POST /v1/jobs, one new URL source per request (a SQLite queue, no embedded workers,
#            so the number is the API's and the queue's accepting rate), wrk with BENCH_SERVE_CONNS
#            connections for BENCH_SERVE_SECONDS; jobs accepted/s = 202 answers per second,
#            checked against the jobs the queue holds afterwards. Goal: >= 2000/s.
#   files    GET /v1/attachments/{file} (a 1290x860 JPEG of about 450 KB: a typical image attachment)
#            from `pushprep serve` and from nginx serving the same folder (sendfile, ETag, the
#            same Cache-Control), interleaved BENCH_SERVE_REPEAT times; the median requests/s of
#            each and their ratio. Aim: within 2x of nginx (ratio >= 0.5).
#
# Run from anywhere (it cd's to the repo root); writes only under bench-out/serve/.
#
# Environment:
#   PUSHPREP             the binary (default .build/release/pushprep)
#   BENCH_SERVE_SECONDS  seconds per wrk run (default 10)
#   BENCH_SERVE_CONNS    connections (default 32); wrk uses 2 threads (the machine's cores)
#   BENCH_SERVE_REPEAT   interleaved runs of the files comparison (default 3)
#
# Last line of output, for CI / scripts:
#   bench serve: jobs_per_s=… files_rps=… nginx_rps=… ratio=…
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PUSHPREP=${PUSHPREP:-.build/release/pushprep}
SECONDS_PER_RUN=${BENCH_SERVE_SECONDS:-10}
CONNS=${BENCH_SERVE_CONNS:-32}
REPEAT=${BENCH_SERVE_REPEAT:-3}
ROOT=$PWD/bench-out/serve

for tool in wrk nginx vips; do
    command -v "$tool" >/dev/null || { echo "bench serve: error: $tool not found (make bench installs it)" >&2; exit 1; }
done
[[ -x $PUSHPREP ]] || { echo "bench serve: error: $PUSHPREP not built (make bench builds it)" >&2; exit 1; }

rm -rf "$ROOT"
mkdir -p "$ROOT/out" "$ROOT/nginx/logs"
pids=()
# TERM first: nginx's master stops its workers then (killed with -9 it would leave them running,
# holding the port and this script's output pipe).
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 0.3
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Starts `pushprep serve` on a free port and sets `url` to its base URL (not in a subshell:
# the pid must reach `pids` for the cleanup).
start_serve() {
    local log=$1; shift
    "$PUSHPREP" serve --port 0 --log-level warning "$@" > "$log.out" 2> "$log.err" &
    pids+=($!)
    for _ in $(seq 1 200); do
        if grep -q 'listening on' "$log.out" 2>/dev/null; then
            url=$(grep -o 'http://[^ ]*' "$log.out" | head -1)
            return
        fi
        sleep 0.05
    done
    echo "bench serve: error: pushprep serve did not start:" >&2
    cat "$log.err" >&2
    exit 1
}

# wrk's requests/s from its output.
rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }

echo "== pushprep serve under wrk: 2 threads, $CONNS connections, $SECONDS_PER_RUN s per run"

# --- jobs ---------------------------------------------------------------------------------
cat > "$ROOT/post.lua" <<'LUA'
-- One new source per request (the same source and settings would be deduplicated), counted
-- per thread; 202s counted by wrk as successes, anything else reported.
local counter = 0
local thread_id = 0
local threads = {}
function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end
function init(args)
    thread_id = id
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
function request()
    counter = counter + 1
    local body = string.format('{"sources":["https://media.example.com/t%d/%d.jpg"]}', thread_id, counter)
    return wrk.format(nil, "/v1/jobs", nil, body)
end
-- Globals, so that done() can read each thread's counts with thread:get.
accepted = 0
other = 0
function response(status, headers, body)
    if status == 202 then accepted = accepted + 1 else other = other + 1 end
end
function done(summary, latency, requests)
    local a, o = 0, 0
    for _, thread in ipairs(threads) do
        a = a + thread:get("accepted")
        o = o + thread:get("other")
    end
    io.write(string.format("accepted=%d other=%d\n", a, o))
end
LUA
start_serve "$ROOT/serve-jobs" --queue "sqlite:$ROOT/jobs.db" --out "$ROOT/out" --uploads "$ROOT/uploads" \
    --workers 0 --max-queued 100000000
wrk -t2 -c"$CONNS" -d"${SECONDS_PER_RUN}s" -s "$ROOT/post.lua" --latency "$url" > "$ROOT/wrk-jobs.txt"
accepted=$(awk -F'[= ]' '/^accepted=/ { print $2 }' "$ROOT/wrk-jobs.txt")
other=$(awk -F'[= ]' '/^accepted=/ { print $4 }' "$ROOT/wrk-jobs.txt")
elapsed=$(awk '/requests in/ { sub("s,$", "", $4); print $4 }' "$ROOT/wrk-jobs.txt")
p99=$(awk '/^ +99%/ { print $2 }' "$ROOT/wrk-jobs.txt")
jobs_per_s=$(awk -v a="$accepted" -v s="$elapsed" 'BEGIN { printf "%.0f", (s > 0) ? a / s : 0 }')
queued=$(curl -s "$url/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"]["queued"])')
jobs_verdict=$(awk -v r="$jobs_per_s" 'BEGIN { print (r >= 2000) ? "PASS" : "BELOW" }')
echo "POST /v1/jobs: $accepted accepted in ${elapsed}s = $jobs_per_s jobs/s (p99 latency $p99; other answers: $other; queue holds $queued)"
echo "  goal >= 2000 jobs/s on SQLite: $jobs_verdict"
# Requests still in flight when wrk stops are answered after it stopped counting: the queue
# may hold up to one more job per connection than wrk saw accepted, never fewer.
if (( queued < accepted || queued > accepted + CONNS )); then
    echo "bench serve: error: the queue holds $queued jobs but $accepted were accepted" >&2
    exit 1
fi
cleanup; pids=()

# --- files --------------------------------------------------------------------------------
vips black "$ROOT/base.v" 1290 860 --bands 3
vips gaussnoise "$ROOT/noise.v" 1290 860 --sigma 40
vips add "$ROOT/base.v" "$ROOT/noise.v" "$ROOT/sum.v"
vips cast "$ROOT/sum.v" "$ROOT/photo.jpg[Q=70]" uchar
hash=$(sha256sum "$ROOT/photo.jpg" | cut -c1-40)
file="img-$hash.jpg"
mv "$ROOT/photo.jpg" "$ROOT/out/$file"
rm -f "$ROOT"/*.v
bytes=$(stat -c %s "$ROOT/out/$file")

nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$ROOT/nginx/nginx.conf" <<NGINX
worker_processes 2;
error_log $ROOT/nginx/logs/error.log warn;
pid $ROOT/nginx/nginx.pid;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    types { image/jpeg jpg; }
    client_body_temp_path $ROOT/nginx/body;
    proxy_temp_path $ROOT/nginx/proxy;
    fastcgi_temp_path $ROOT/nginx/fastcgi;
    uwsgi_temp_path $ROOT/nginx/uwsgi;
    scgi_temp_path $ROOT/nginx/scgi;
    server {
        listen 127.0.0.1:$nginx_port;
        location /v1/attachments/ {
            alias $ROOT/out/;
            add_header Cache-Control "public, max-age=31536000, immutable";
        }
    }
}
NGINX
nginx -p "$ROOT/nginx" -c "$ROOT/nginx/nginx.conf" &
pids+=($!)
start_serve "$ROOT/serve-files" --queue "sqlite:$ROOT/files.db" --out "$ROOT/out" --uploads "$ROOT/uploads" \
    --workers 0
for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/v1/attachments/$file" && break; sleep 0.05; done
# curl fails (-f) rather than hanging when a server does not serve the file.
for server in "$url" "http://127.0.0.1:$nginx_port"; do
    got=$( (curl -sf --max-time 10 "$server/v1/attachments/$file" || true) | sha256sum | cut -c1-40)
    [[ $got == "$hash" ]] || { echo "bench serve: error: $server does not serve the file" >&2; exit 1; }
done

pp_runs=(); nginx_runs=()
for run in $(seq 1 "$REPEAT"); do
    wrk -t2 -c"$CONNS" -d"${SECONDS_PER_RUN}s" "$url/v1/attachments/$file" > "$ROOT/wrk-files-pushprep-$run.txt"
    pp_runs+=("$(rps "$ROOT/wrk-files-pushprep-$run.txt")")
    wrk -t2 -c"$CONNS" -d"${SECONDS_PER_RUN}s" "http://127.0.0.1:$nginx_port/v1/attachments/$file" \
        > "$ROOT/wrk-files-nginx-$run.txt"
    nginx_runs+=("$(rps "$ROOT/wrk-files-nginx-$run.txt")")
done
pp_rps=$(median "${pp_runs[@]}")
nginx_rps=$(median "${nginx_runs[@]}")
ratio=$(awk -v p="$pp_rps" -v n="$nginx_rps" 'BEGIN { printf "%.2f", (n > 0) ? p / n : 0 }')
files_verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.5) ? "PASS" : "BELOW" }')
echo "GET /v1/attachments/{file} ($bytes bytes), median of $REPEAT interleaved runs:"
echo "  pushprep serve: $pp_rps req/s   nginx: $nginx_rps req/s   (runs: pushprep ${pp_runs[*]} | nginx ${nginx_runs[*]})"
echo "ratio pushprep/nginx requests/s: $ratio (aim >= 0.5, within 2x of nginx: $files_verdict)"
echo "bench serve: jobs_per_s=$jobs_per_s files_rps=$pp_rps nginx_rps=$nginx_rps ratio=$ratio"
