#!/usr/bin/env bash
# first-hour.sh: the path a new user walks in their first hour with PushPrep, asserted step by step
# (issue 28). Every command is one the README shows; every check is what that user would notice.
#
#   1. process the samples, build and pre-flight a payload for each dialect;
#   2. enqueue, work, and build a payload from the job;
#   3. start `serve`, submit by URL and by upload, long-poll, build the payload over HTTP;
#   4. open the console and the reports in headless chromium (scripts/first_hour_browser.py).
#
# Usage: scripts/first-hour.sh [PUSHPREP_BINARY]   (default: $PUSHPREP_BINARY, else the debug build)
# Needs curl, jq, python3 (a local source server), and for step 4 the test venv (make pyenv) and
# chromium (make browser-deps). `make test` runs it against the release build. Everything happens
# in a temporary directory on 127.0.0.1; it is removed at the end (KEEP_FIRST_HOUR=1 keeps it).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
bin="${1:-${PUSHPREP_BINARY:-$(swift build --show-bin-path 2>/dev/null)/pushprep}}"
[ -x "$bin" ] || { echo "first-hour: no pushprep at $bin (run make build)" >&2; exit 2; }
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
pyenv="$here/.build/pyenv/bin/python"

work="$(mktemp -d "${TMPDIR:-/tmp}/pushprep-first-hour.XXXXXX")"
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ $status -ne 0 ]; then
        echo "first-hour: FAILED (work directory: $work)" >&2
    elif [ -z "${KEEP_FIRST_HOUR:-}" ]; then
        rm -rf "$work"
    fi
    exit $status
}
trap cleanup EXIT
cd "$work"

checks=0
failures=()
step() { echo; echo "== $*"; }
ok() { checks=$((checks + 1)); echo "  ok: $*"; }
# fail: a check that failed; the walk goes on, so one run shows every failure. die: the walk
# cannot go on (a step's output that later steps need is missing).
fail() { echo "  FAIL: $*" >&2; failures+=("$*"); }
die() { echo "  FAIL: $*" >&2; failures+=("$*"); finish; }
finish() {
    echo
    if [ ${#failures[@]} -gt 0 ]; then
        echo "first-hour: ${#failures[@]} of $((checks + ${#failures[@]})) checks failed:" >&2
        printf '  - %s\n' "${failures[@]}" >&2
        exit 1
    fi
    echo "first-hour: passed ($checks checks)"
    exit 0
}

# run STATUS NAME COMMAND...: runs COMMAND with stdout in NAME.out and stderr in NAME.err; a
# failed check unless it exits with STATUS.
run() {
    local want="$1" name="$2"; shift 2
    local status=0
    "$@" >"$name.out" 2>"$name.err" || status=$?
    if [ "$status" != "$want" ]; then
        echo "  \$ $*" >&2
        { head -n 12 "$name.out"; head -n 12 "$name.err"; } | sed 's/^/  | /' >&2
        fail "$name: exit status $status, expected $want"
    fi
}
has() { # FILE TEXT WHAT: FILE contains TEXT (a fixed string)
    if grep -qF -- "$2" "$1"; then ok "$3"; else head -n 8 "$1" | sed 's/^/  | /' >&2; fail "$3 ($1 lacks: $2)"; fi
}
lacks() { # FILE TEXT WHAT: FILE does not contain TEXT
    if grep -qF -- "$2" "$1"; then grep -nF -m 5 -- "$2" "$1" >&2; fail "$3 ($1 has: $2)"; else ok "$3"; fi
}
is() { # VALUE EXPECTED WHAT
    if [ "$1" == "$2" ]; then ok "$3 ($1)"; else fail "$3: got '$1', expected '$2'"; fi
}
# answering STATUS LOG: a server on 127.0.0.1 that answers every request with STATUS (and S3's
# NotImplemented error body), one line per request in LOG; its port in LOG.port (see wait_port).
answering() {
    python3 - "$@" <<'PY' &
import http.server, os, sys
status, log = int(sys.argv[1]), sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self):
        length = int(self.headers.get("content-length") or 0)
        if length: self.rfile.read(length)
        with open(log, "a") as f: f.write(f"{self.command} {self.path}\n")
        body = b"<Error><Code>NotImplemented</Code><Message>not here</Message></Error>"
        self.send_response(status); self.send_header("content-length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = answer
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(log + ".port.tmp", "w") as f: f.write(str(server.server_address[1]))
os.rename(log + ".port.tmp", log + ".port")
server.serve_forever()
PY
    pids+=($!)
}
# Every server here binds port 0 and says which port it got: a port picked free and bound a moment
# later may be taken in between by another process (`make test` runs this beside the test passes).
# on_port0 KIND FILE [DIRECTORY]: in the background, a socket on 127.0.0.1 port 0 that only holds its
# port (KIND closed: bound, refusing connections), accepts none (busy: listening, never accepting), or
# serves DIRECTORY's files (files); its port in FILE (see wait_port).
on_port0() {
    python3 - "$@" <<'PY' &
import functools, http.server, os, socket, sys, time
kind, file = sys.argv[1], sys.argv[2]
if kind == "files":
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[3])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    port = server.server_address[1]
else:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    if kind == "busy":
        sock.listen()
    port = sock.getsockname()[1]
with open(file + ".tmp", "w") as f: f.write(str(port))
os.rename(file + ".tmp", file)
server.serve_forever() if kind == "files" else time.sleep(3600)
PY
    pids+=($!)
}
# wait_port FILE: the port a server started on port 0 wrote into FILE (30 s); fails when none did.
wait_port() {
    for _ in $(seq 300); do
        [ -s "$1" ] && { cat "$1"; return 0; }
        sleep 0.1
    done
    return 1
}
# wait_http URL: until it answers (30 s).
wait_http() {
    for _ in $(seq 300); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done
    die "nothing answered at $1"
}

echo "first-hour: $bin in $work"
cp -r "$here/samples" samples
# Two inputs that fail, as a real batch has: a file cut short and a path that does not exist.
head -c 4000 samples/large-photo.jpg > cut-short.jpg

##############################################################################################
step "1. process the samples; a payload and a pre-flight for each dialect"

run 0 process "$bin" process samples --out out --base-url https://cdn.example.com/push \
    --platforms ios,android,web --report report.html
n=$(jq '.attachments | length' out/manifest.json)
is "$n" "$(ls samples | wc -l)" "every sample has an attachment"
first=$(jq -r '.attachments[0].id' out/manifest.json)
second=$(jq -r '.attachments[1].id' out/manifest.json)

# The batch with failures: exit 1, the failures counted in the summary, first in the report.
run 1 process-failed "$bin" process cut-short.jpg missing.jpg samples --out out-failed --report report-failed.html
has process-failed.out "2 failed" "the summary line counts the two failed inputs"

# `inspect` and `enqueue` refuse what they cannot read.
run 1 inspect-missing "$bin" inspect missing.jpg
has inspect-missing.out "not_found" "inspect names the missing input's code"
run 2 enqueue-missing "$bin" enqueue missing.jpg --queue sqlite:refused.db
has enqueue-missing.err "not_found" "enqueue refuses a path it cannot read"

for dialect in apns fcm onesignal airship braze; do
    run 0 "payload-$dialect" "$bin" payload out/manifest.json --dialect "$dialect" --title "Hi" --body "Body"
    has "payload-$dialect.err" "$first" "payload --dialect $dialect says which attachment it took"
    lacks "payload-$dialect.out" "$second" "payload --dialect $dialect packs one attachment, not all"
    cp "payload-$dialect.out" "p-$dialect.json"
    run 0 "preflight-$dialect" "$bin" preflight "p-$dialect.json" --manifest out/manifest.json --json
    errors=$(jq '[.. | objects | select(.severity? == "error")] | length' "preflight-$dialect.out")
    is "$errors" 0 "pre-flight of the $dialect payload has no errors"
done

# Seven attachments in one APNs push: only the first shows in the banner.
run 0 payload-all "$bin" payload out/manifest.json --all --title "Hi"
cp payload-all.out p-all.json
run 0 preflight-all "$bin" preflight p-all.json --json
has preflight-all.out "attachments_beyond_first" "pre-flight warns of attachments beyond the first"
has preflight-all.out "$second" "the warning names the attachments beyond the first"

# Airship takes one attachment: asked for two, it lists the ids to choose from.
run 1 payload-airship-two "$bin" payload out/manifest.json --dialect airship --id "$first" --id "$second" --title "Hi"
has payload-airship-two.err "$second" "airship's refusal lists the ids to choose from"

# Keys where the provider ignores them: FCM's token belongs inside message.
echo '{"token": "abc"}' > t2.json
run 0 payload-merge "$bin" payload out/manifest.json --dialect fcm --merge t2.json --title "Hi"
cp payload-merge.out p-merge.json
run 0 preflight-merge "$bin" preflight p-merge.json --json
has preflight-merge.out "unknown_key" "pre-flight reports a key FCM does not define"
has preflight-merge.out '"/token"' "at the pointer where it sits"

# URLs a phone cannot reach.
run 0 payload-loopback "$bin" payload out/manifest.json --base-url http://127.0.0.1:8080/push --title "Hi"
cp payload-loopback.out p-loopback.json
run 1 preflight-loopback "$bin" preflight p-loopback.json --json
has preflight-loopback.out "unreachable_url" "pre-flight refuses a loopback attachment URL"

run 1 preflight-report "$bin" preflight p-all.json p-loopback.json --report preflight.html

##############################################################################################
step "2. enqueue, work, and build a payload from the job"

queue=sqlite:queue.db
run 0 enqueue "$bin" enqueue samples/large-photo.jpg --queue "$queue" --base-url https://cdn.example.com/worker
job=$(grep -m1 -oE '[0-9]+' enqueue.out || true)
[ -n "$job" ] || die "enqueue printed no job id"
ok "enqueued job $job"
"$bin" worker --queue "$queue" --out worker-out --concurrency 1 --poll-interval 0.2 >worker.log 2>&1 &
pids+=($!)
for _ in $(seq 600); do
    state=$("$bin" jobs show "$job" --queue "$queue" --json | jq -r .state)
    [ "$state" == succeeded ] && break
    case "$state" in failed|dead|cancelled) break;; esac
    sleep 0.2
done
is "$state" succeeded "the worker finished job $job"

run 0 payload-job "$bin" payload --job "$job" --queue "$queue" --title "Hi"
is "$(jq -c '.aps["mutable-content"]' payload-job.out 2>/dev/null)" 1 "payload --job builds the push"
run 0 jobs-manifest "$bin" jobs show "$job" --queue "$queue" --manifest
run 0 payload-stdin bash -c "'$bin' payload - --title Hi < jobs-manifest.out"
if [ -s payload-job.out ] && cmp -s payload-job.out payload-stdin.out; then ok "jobs show --manifest | payload - gives the same push"
else fail "jobs show --manifest | payload - differs from payload --job"; fi
run 0 jobs-json "$bin" jobs show "$job" --queue "$queue" --json
run 1 payload-json bash -c "'$bin' payload - --title Hi < jobs-json.out"
has payload-json.err "--job" "payload - given a job says how to use it"
lacks payload-json.err "CodingKeys" "and shows no decoder text"

##############################################################################################
step "3. serve: by URL and by upload, long-poll, the payload over HTTP"

# A busy port: one sentence naming it, and nothing created.
on_port0 busy busy.port
busy=$(wait_port busy.port) || die "the busy socket did not start"
mkdir busy && run 1 serve-busy bash -c "cd busy && '$bin' serve --port $busy"
has serve-busy.err "$busy" "serve on a busy port names the port"
lacks serve-busy.err "errno" "in words, without the library's text"
is "$(ls busy)" "" "serve on a busy port created nothing (no database)"

# The sources, on a local web server.
on_port0 files sources.port "$work/samples" 2>sources.log
src_port=$(wait_port sources.port) || die "the source server did not start: $(tail -n 3 sources.log)"
wait_http "http://127.0.0.1:$src_port/"

# Library text never reaches a person: https to a plain port, a closed port, an S3 server's 501.
on_port0 closed closed.port
closed=$(wait_port closed.port) || die "the closed socket did not start"
run 1 tls "$bin" inspect --allow-host 127.0.0.1 "https://127.0.0.1:$src_port/large-photo.jpg"
has tls.out "does not speak TLS" "https to a plain-HTTP port is one sentence"
lacks tls.out "NIOSSL" "without the library's text"
run 1 refused "$bin" inspect --allow-host 127.0.0.1 "http://127.0.0.1:$closed/a.jpg"
has refused.out "127.0.0.1:$closed (connection refused)" "a closed port is one sentence naming it"
lacks refused.out "errno" "without the library's text"
answering 501 s3.log
s3=$(wait_port s3.log.port) || die "the S3 stand-in did not start"
wait_http "http://127.0.0.1:$s3/"
: > s3.log
run 1 s3-501 env AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test "$bin" process samples/jingle.ogg \
    --store "s3://media/push?endpoint=http://127.0.0.1:$s3&path-style=true&region=us-east-1"
has s3-501.err "does not implement" "an S3 501 says the store lacks the request"
has s3-501.err "storage_denied" "with the permanent code"
is "$(wc -l < s3.log)" 1 "and is not retried"


mkdir served
head -c 48 /dev/urandom | base64 > served/hook.secret
# --retry-base 600: the 503 source's job waits out its first backoff (7.5 to 15 s by default, with
# jitter) until the script ends, so the console still shows it retrying when the browser looks.
(cd served && exec "$bin" serve --port 0 --workers 1 --allow-host 127.0.0.1 --out out \
    --webhook-secret-file hook.secret --retry-base 600) >serve.log 2>&1 &
pids+=($!)
# The address serve bound, from the line it prints once it listens.
for _ in $(seq 300); do
    api=$(sed -n 's|^pushprep serve: listening on ||p' serve.log | head -n 1)
    [ -n "$api" ] && break
    sleep 0.1
done
[ -n "$api" ] || die "serve did not say where it listens: $(tail -n 5 serve.log)"
wait_http "$api/healthz"
has serve.log "--public-url" "serve warns at start-up that its URLs are not reachable from a phone"

post() { curl -s -o "$1.out" -D "$1.headers" -w '%{http_code}' -H 'content-type: application/json' -d "$2" "$api$3"; }
code=$(post submit '{"sources": ["http://127.0.0.1:'"$src_port"'/large-photo.jpg"]}' /v1/jobs)
is "$code" 202 "POST /v1/jobs by URL"
url_job=$(jq -r '.jobs[0].id // .[0].id // .id' submit.out)

# A source that answers 503: its job waits to retry (the console shows it).
answering 503 flaky.log
flaky=$(wait_port flaky.log.port) || die "the 503 source did not start"
code=$(post flaky '{"sources": ["http://127.0.0.1:'"$flaky"'/later.jpg"], "max_attempts": 5}' /v1/jobs)
is "$code" 202 "POST /v1/jobs of a source that answers 503"
flaky_job=$(jq -r '.jobs[0].id' flaky.out)

code=$(post metadata-hook '{"sources": ["http://127.0.0.1:'"$src_port"'/jingle.ogg"], "callback_url": "http://169.254.169.254/x"}' /v1/jobs)
is "$code" 422 "a metadata-address callback_url is refused at submit"
has metadata-hook.out "blocked_address" "with its code"
lacks metadata-hook.out "--allow" "and no one is told to allow it"

code=$(post sources-string '{"sources": "http://x/a.jpg"}' /v1/jobs)
is "${code:0:1}" 4 "sources as a string is refused ($code)"
has sources-string.out "array of URLs" "in words"

code=$(curl -s -o upload.out -w '%{http_code}' -F "file=@samples/clip-vp9.webm;filename=Team clip.webm" "$api/v1/uploads")
is "$code" 202 "POST /v1/uploads"
upload_job=$(jq -r '.jobs[0].id // .[0].id // .id' upload.out)

for id in "$url_job" "$upload_job"; do
    for _ in $(seq 20); do
        curl -s -o "job-$id.json" "$api/v1/jobs/$id?wait=20s"
        state=$(jq -r .state "job-$id.json")
        case "$state" in succeeded|failed|dead|cancelled) break;; esac
    done
    is "$state" succeeded "job $id, long-polled"
done
is "$(jq -r .source_name "job-$upload_job.json")" "Team clip.webm" "an upload's job shows the file's own name"
is "$(jq -r '[keys[] | select(test("[A-Z]"))] | join(",")' "job-$upload_job.json")" "" "the API's own fields are snake_case"
for _ in $(seq 100); do
    curl -s -o flaky-job.json "$api/v1/jobs/$flaky_job"
    [ "$(jq -r '.attempt > 0 and .state == "queued"' flaky-job.json)" == true ] && break
    sleep 0.2
done
is "$(jq -r .state flaky-job.json)/$(jq -r .error.code flaky-job.json)" "queued/fetch_failed" "the 503 source's job waits to retry"

code=$(post http-payload '{"job_ids": ['"$url_job"', '"$upload_job"'], "title": "Hi", "body": "Body"}' /v1/payload)
is "$code" 200 "POST /v1/payload from two jobs"
has http-payload.headers "PushPrep-Selection" "the HTTP payload says which attachment it took"
has http-payload.headers "unreachable_url" "and that a phone cannot reach the server's loopback URLs"
code=$(post http-preflight "$(jq -c '{payload: .}' http-payload.out)" /v1/preflight)
is "$code" 200 "POST /v1/preflight"
has http-preflight.out "unreachable_url" "the served loopback URL is reported unreachable"
# `--fix` re-hosts an attachment only this machine reaches, and says its verdict once.
echo '{"aps": {"alert": {"title": "Hi"}}, "attachments": [{"id": "a", "url": "http://127.0.0.1:'"$src_port"'/large-photo.jpg"}]}' > p-local.json
run 1 preflight-local "$bin" preflight p-local.json --allow-http
has preflight-local.out "unreachable_url" "pre-flight says a phone cannot reach the local URL"
run 0 preflight-fix "$bin" preflight p-local.json --fix fixed.json --out fixed --base-url https://cdn.example.com/fixed \
    --allow-host 127.0.0.1 --allow-http
has preflight-fix.out "after the fix: clean" "preflight --fix re-hosts it on --base-url"
is "$(grep -c 'clean' preflight-fix.out)" 1 "and says its verdict once"

# The upload's movie, pre-flighted with its download: the report's badge and caption.
code=$(post http-movie '{"job_ids": ['"$upload_job"'], "title": "Trailer", "body": "Two seconds"}' /v1/payload)
is "$code" 200 "POST /v1/payload of the movie"
run 1 preflight-movie "$bin" preflight http-movie.out --fetch --allow-http --allow-host 127.0.0.1 --report preflight-movie.html
has preflight-movie.out "unreachable_url" "pre-flight of a served loopback URL says a phone cannot reach it"
code=$(post http-airship '{"job_ids": ['"$url_job"', '"$upload_job"'], "dialect": "airship", "all": true, "title": "Hi"}' /v1/payload)
has http-airship.out "choose one with ids" "the HTTP API's messages name its own field"
lacks http-airship.out "--id" "and not the CLI's option"

##############################################################################################
step "4. the console and the reports in headless chromium"

if [ -x "$pyenv" ] && command -v chromedriver >/dev/null; then
    run 0 browser "$pyenv" "$here/scripts/first_hour_browser.py" --api "$api" \
        --report "$work/report-failed.html" --preflight-report "$work/preflight.html" --movie-report "$work/preflight-movie.html" --job "$upload_job" --retrying "$flaky_job"
    sed 's/^/  /' browser.out
    checks=$((checks + $(grep -c '^ok:' browser.out)))
else
    die "step 4 needs the test venv and chromium: make pyenv browser-deps"
fi

finish
