#!/usr/bin/env bash
# The memory section of `make bench` (run by scripts/bench.sh, or alone; issue 16, §2): a batch
# of big inputs with ordinary photos, processed with `--memory-limit` and `--jobs 2`, must peak
# below the limit plus the process's baseline. The same batch with the default budget (half the
# machine's memory) is run beside it, to show what the limit saves.
#
# The batch: two 9000x7000 HEICs, a 9000x7000 progressive JPEG, a 480x360 GIF of 200 frames
# (the inputs of scripts/measure-peaks.sh, made the same way) and 8 ordinary photos (4032x3024
# and 2048x1536 JPEGs). The peak is GNU time's maximum resident set size of the whole
# `pushprep process` run; the baseline the largest of three runs on an 8x8 JPEG.
#
# Environment: PUSHPREP (default .build/release/pushprep), BENCH_MEMORY_LIMIT (default 500MB; a
# whole number of MB), BENCH_MEMORY_JOBS (default 2). Inputs are generated once into
# bench-out/cache/memory.
#
# Last line of output, for CI / scripts (MB are 10^6 bytes):
#   bench memory: peak_mb=… limit_mb=… baseline_mb=… default_peak_mb=… verdict=ok
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PUSHPREP=${PUSHPREP:-.build/release/pushprep}
LIMIT_MB=${BENCH_MEMORY_LIMIT:-500}
LIMIT_MB=${LIMIT_MB%MB}
JOBS=${BENCH_MEMORY_JOBS:-2}

ROOT=bench-out
CACHE=$ROOT/cache/memory
WORK=$ROOT/memory
LOGS=$ROOT/logs

die() { echo "bench memory: error: $*" >&2; exit 2; }
note() { echo "bench memory: $*" >&2; }

[[ $LIMIT_MB =~ ^[0-9]+$ ]] || die "BENCH_MEMORY_LIMIT must be a whole number of MB, got '$LIMIT_MB'"
[[ $JOBS =~ ^[0-9]+$ ]] && (( JOBS >= 1 )) || die "BENCH_MEMORY_JOBS must be >= 1, got '$JOBS'"
[[ -x $PUSHPREP ]] || die "no pushprep at $PUSHPREP (make release)"
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is required for peak memory"
command -v vips >/dev/null || die "vips is required to generate the inputs"
command -v ffmpeg >/dev/null || die "ffmpeg is required to generate the GIF"
vips -l 2>/dev/null | grep '(heifsave)' >/dev/null || die "this vips cannot write HEIC (heifsave)"

mkdir -p "$CACHE/batch" "$WORK" "$LOGS"
# shellcheck source=synth-photo.sh
source scripts/synth-photo.sh

# gen FILE COMMAND...: unless FILE exists, runs COMMAND with every argument that names FILE
# pointed at a temporary in $CACHE, outside the batch (vips' "FILE[options]" included), then renames it to FILE: an
# interrupted run leaves no truncated file that later runs would take as done.
gen() {
    local file=$1; shift
    [[ -s $file ]] && return 0
    note "generating ${file##*/}"
    local tmp="$CACHE/partial-${file##*/}" args=() arg
    for arg in "$@"; do args+=("${arg/#"$file"/$tmp}"); done
    "${args[@]}" >/dev/null 2>&1 && mv -f "$tmp" "$file" || { rm -f "$tmp"; die "cannot generate ${file##*/}"; }
}
[[ -s $CACHE/6000.v ]] || synth_photo 6000 4000 2 "$CACHE/6000.v"
[[ -s $CACHE/4032.v ]] || synth_photo 4032 3024 1 "$CACHE/4032.v"
# 9000x7000 from the 6000x4000 photo: synthesising it directly needs gigabytes of temporaries.
gen "$CACHE/9000.v" vips resize "$CACHE/6000.v" "$CACHE/9000.v" 1.5 --vscale 1.75
gen "$CACHE/batch/heic-9000-a.heic" vips copy "$CACHE/9000.v" "$CACHE/batch/heic-9000-a.heic[Q=60,compression=hevc]"
gen "$CACHE/batch/heic-9000-b.heic" vips copy "$CACHE/9000.v" "$CACHE/batch/heic-9000-b.heic[Q=55,compression=hevc]"
gen "$CACHE/batch/pjpeg-9000.jpg" vips copy "$CACHE/9000.v" "$CACHE/batch/pjpeg-9000.jpg[Q=85,interlace]"
gen "$CACHE/batch/gif-480x360-200.gif" ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=480x360:rate=10" -frames:v 200 \
    "$CACHE/batch/gif-480x360-200.gif"
for q in 80 84 88 92; do
    gen "$CACHE/batch/photo-4032-q$q.jpg" vips copy "$CACHE/4032.v" "$CACHE/batch/photo-4032-q$q.jpg[Q=$q]"
    gen "$CACHE/batch/photo-2048-q$q.jpg" vips resize "$CACHE/4032.v" "$CACHE/batch/photo-2048-q$q.jpg[Q=$q]" 0.508
done
gen "$CACHE/tiny.jpg" vips black "$CACHE/tiny.jpg" 8 8 --bands 3

# peak_mb OUT ARGS...: runs `pushprep process ARGS --out OUT` and prints its peak RSS in MB;
# fails the bench when an input fails.
peak_mb() {
    local out=$1; shift
    rm -rf "$out"
    /usr/bin/time -f '%M' -o "$out.time" "$PUSHPREP" process --out "$out" "$@" >"$out.log" 2>&1 \
        || die "pushprep process $* failed (log: $out.log)"
    awk '{ kb = $1 } END { printf "%.0f", kb * 1024 / 1e6 }' "$out.time"
}

baseline=0
for r in 1 2 3; do
    b=$(peak_mb "$WORK/baseline" "$CACHE/tiny.jpg" --jobs 1)
    (( b > baseline )) && baseline=$b
done
note "baseline (8x8 JPEG): $baseline MB"

# Big inputs first, spread among the photos, as a day of uploads would bring them.
batch=(heic-9000-a.heic photo-4032-q80.jpg pjpeg-9000.jpg photo-2048-q80.jpg heic-9000-b.heic photo-4032-q84.jpg
    gif-480x360-200.gif photo-2048-q84.jpg photo-4032-q88.jpg photo-2048-q88.jpg photo-4032-q92.jpg photo-2048-q92.jpg)
inputs=("${batch[@]/#/$CACHE/batch/}")

start=$(date +%s.%N)
peak=$(peak_mb "$WORK/limited" "${inputs[@]}" --jobs "$JOBS" --memory-limit "${LIMIT_MB}MB")
limited_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
start=$(date +%s.%N)
default_peak=$(peak_mb "$WORK/default" "${inputs[@]}" --jobs "$JOBS")
default_s=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

bound=$(( LIMIT_MB + baseline ))
verdict=$( (( peak < bound )) && echo ok || echo "OVER LIMIT" )
echo "memory: ${#inputs[@]} inputs (2 HEIC 9000x7000, progressive JPEG 9000x7000, GIF 200 frames, 8 photos), --jobs $JOBS"
echo "  --memory-limit ${LIMIT_MB}MB: peak $peak MB in $limited_s s (goal < $LIMIT_MB + baseline $baseline = $bound MB: $verdict)"
echo "  default budget:        peak $default_peak MB in $default_s s"
echo "bench memory: peak_mb=$peak limit_mb=$LIMIT_MB baseline_mb=$baseline default_peak_mb=$default_peak verdict=${verdict// /_}"
