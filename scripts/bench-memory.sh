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
# Isolation (issue 30; BENCH_ISOLATION=0 skips it): the limited batch again with `--isolation
# none` and `--isolation process` (a pool of --jobs confined decoder processes), in interleaved
# pairs, both measured with scripts/rss-tree.py, which samples the peak RSS of the whole
# process tree (the parent and its decoders) from /proc: GNU time's is one process's. The goal:
# the tree stays under the same limit plus its own baseline (the parent and --jobs decoders
# after one 8x8 JPEG each). Printed too: the tree with the file pages its processes share (the
# executable, the libraries) counted once, about what a cgroup is charged.
#
# Environment: PUSHPREP (default .build/release/pushprep), BENCH_MEMORY_LIMIT (default 500MB; a
# whole number of MB), BENCH_MEMORY_JOBS (default 2), BENCH_ISOLATION (default 1),
# BENCH_MEMORY_PAIRS (default 2: isolation pairs). Inputs are generated once into
# bench-out/cache/memory.
#
# Last lines of output, for CI / scripts (MB are 10^6 bytes; the isolation line only with
# BENCH_ISOLATION=1):
#   bench isolation memory: none_tree_mb=… process_tree_mb=… process_shared_once_mb=… process_baseline_mb=… limit_mb=… none_s=… process_s=… ratio=… verdict=ok
#   bench memory: peak_mb=… limit_mb=… baseline_mb=… default_peak_mb=… verdict=ok
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PUSHPREP=${PUSHPREP:-.build/release/pushprep}
LIMIT_MB=${BENCH_MEMORY_LIMIT:-500}
LIMIT_MB=${LIMIT_MB%MB}
JOBS=${BENCH_MEMORY_JOBS:-2}
BENCH_ISOLATION=${BENCH_ISOLATION:-1}
PAIRS=${BENCH_MEMORY_PAIRS:-2}

ROOT=bench-out
CACHE=$ROOT/cache/memory
WORK=$ROOT/memory
LOGS=$ROOT/logs

die() { echo "bench memory: error: $*" >&2; exit 2; }
note() { echo "bench memory: $*" >&2; }

[[ $LIMIT_MB =~ ^[0-9]+$ ]] || die "BENCH_MEMORY_LIMIT must be a whole number of MB, got '$LIMIT_MB'"
[[ $JOBS =~ ^[0-9]+$ ]] && (( JOBS >= 1 )) || die "BENCH_MEMORY_JOBS must be >= 1, got '$JOBS'"
[[ $BENCH_ISOLATION == [01] ]] || die "BENCH_ISOLATION must be 0 or 1, got '$BENCH_ISOLATION'"
[[ $PAIRS =~ ^[0-9]+$ ]] && (( PAIRS >= 1 )) || die "BENCH_MEMORY_PAIRS must be >= 1, got '$PAIRS'"
[[ -x $PUSHPREP ]] || die "no pushprep at $PUSHPREP (make release)"
if [[ $BENCH_ISOLATION == 1 ]]; then
    help=$("$PUSHPREP" process --help 2>&1 || true)
    [[ $help == *--isolation* ]] \
        || die "'$PUSHPREP' has no --isolation option (an older build?); set BENCH_ISOLATION=0 to skip that comparison"
    command -v python3 >/dev/null || die "python3 is needed to measure the process tree (scripts/rss-tree.py)"
fi
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
# The isolated baseline's inputs: one per decoder, each its own picture (8x8, 9x9, ...).
tiny=()
for (( j = 0; j < JOBS; j++ )); do
    gen "$CACHE/tiny-$j.jpg" vips black "$CACHE/tiny-$j.jpg" $(( 8 + j )) $(( 8 + j )) --bands 3
    tiny+=("$CACHE/tiny-$j.jpg")
done

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

# tree_run OUT ARGS...: runs `pushprep process ARGS --out OUT` under scripts/rss-tree.py and prints
# "tree_mb shared_once_mb processes elapsed_s"; fails the bench when an input fails.
tree_run() {
    local out=$1; shift
    rm -rf "$out"
    python3 scripts/rss-tree.py -o "$out.rss" -- "$PUSHPREP" process --out "$out" "$@" >"$out.log" 2>&1 \
        || die "pushprep process $* failed (log: $out.log)"
    awk '{ printf "%.0f %.0f %d %s", $3 * 1024 / 1e6, $7 * 1024 / 1e6, $6, $1 }' "$out.rss"
}
if [[ $BENCH_ISOLATION == 1 ]]; then
    iso_baseline=0 once_baseline=0
    for r in 1 2 3; do
        result=$(tree_run "$WORK/baseline-isolated" "${tiny[@]}" --jobs "$JOBS" --isolation process)
        read -r b o _ _ <<<"$result"
        (( b > iso_baseline )) && iso_baseline=$b
        (( o > once_baseline )) && once_baseline=$o
    done
    note "baseline with --isolation process (the parent and $JOBS decoders, one 8x8 JPEG each): $iso_baseline MB, $once_baseline MB with shared file pages once"
    iso_none=() iso_process=() iso_once=() iso_none_s=() iso_process_s=() iso_pairs=() iso_procs=0
    for (( r = 1; r <= PAIRS; r++ )); do
        if (( r % 2 )); then sides="none process"; else sides="process none"; fi
        for side in $sides; do
            result=$(tree_run "$WORK/isolation-$side" "${inputs[@]}" --jobs "$JOBS" \
                --memory-limit "${LIMIT_MB}MB" --isolation "$side")
            read -r mb once procs secs <<<"$result"
            if [[ $side == none ]]; then
                iso_none+=("$mb") iso_none_s+=("$secs")
            else
                iso_process+=("$mb") iso_once+=("$once") iso_process_s+=("$secs")
                (( procs > iso_procs )) && iso_procs=$procs
            fi
        done
        iso_pairs+=("$(awk -v p="${iso_process_s[-1]}" -v n="${iso_none_s[-1]}" 'BEGIN { printf "%.3f", (n > 0) ? p / n : 0 }')")
        note "isolation pair $r: --isolation none ${iso_none[-1]} MB in ${iso_none_s[-1]} s, process ${iso_process[-1]} MB (${iso_once[-1]} MB file pages once) in ${iso_process_s[-1]} s"
    done
fi
echo "memory: ${#inputs[@]} inputs (2 HEIC 9000x7000, progressive JPEG 9000x7000, GIF 200 frames, 8 photos), --jobs $JOBS"
echo "  --memory-limit ${LIMIT_MB}MB: peak $peak MB in $limited_s s (goal < $LIMIT_MB + baseline $baseline = $bound MB: $verdict)"
echo "  default budget:        peak $default_peak MB in $default_s s"
if [[ $BENCH_ISOLATION == 1 ]]; then
    largest() { printf '%s\n' "$@" | sort -g | tail -n 1; }
    median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
    iso_none_mb=$(largest "${iso_none[@]}"); iso_process_mb=$(largest "${iso_process[@]}")
    iso_once_mb=$(largest "${iso_once[@]}")
    iso_none_med=$(printf '%.2f' "$(median "${iso_none_s[@]}")")
    iso_process_med=$(printf '%.2f' "$(median "${iso_process_s[@]}")")
    iso_ratio=$(printf '%.2f' "$(median "${iso_pairs[@]}")")
    iso_bound=$(( LIMIT_MB + iso_baseline ))
    iso_verdict=$( (( iso_process_mb < iso_bound )) && echo ok || echo "OVER LIMIT" )
    once_bound=$(( LIMIT_MB + once_baseline ))
    once_verdict=$( (( iso_once_mb < once_bound )) && echo ok || echo "OVER LIMIT" )
    echo "  isolation, the same batch and limit, $PAIRS interleaved pairs, peak RSS of the whole process tree (scripts/rss-tree.py):"
    echo "    --isolation none:    tree peak $iso_none_mb MB, median $iso_none_med s"
    echo "    --isolation process: tree peak $iso_process_mb MB ($iso_procs processes), median $iso_process_med s; time ratio process/none $iso_ratio"
    echo "      goal < $LIMIT_MB + its baseline $iso_baseline (the parent and $JOBS decoders) = $iso_bound MB: $iso_verdict"
    echo "      with the file pages the processes share counted once: $iso_once_mb MB (goal < $LIMIT_MB + its baseline $once_baseline = $once_bound MB: $once_verdict)"
    echo "bench isolation memory: none_tree_mb=$iso_none_mb process_tree_mb=$iso_process_mb process_shared_once_mb=$iso_once_mb process_baseline_mb=$iso_baseline limit_mb=$LIMIT_MB none_s=$iso_none_med process_s=$iso_process_med ratio=$iso_ratio verdict=${iso_verdict// /_}"
fi
echo "bench memory: peak_mb=$peak limit_mb=$LIMIT_MB baseline_mb=$baseline default_peak_mb=$default_peak verdict=${verdict// /_}"
