#!/usr/bin/env bash
# Measures the peak memory of `pushprep process` on one input at a time, above the process's
# baseline, and prints it beside the estimate `pushprep inspect --json` gives (issue 16, §2):
# the numbers the constants of Sources/PushPrepMedia/Memory/MemoryEstimate.swift are fitted to.
#
#   scripts/measure-peaks.sh [--bin PUSHPREP] [--inspect-bin PUSHPREP] [--work DIR] [--runs N] [--no-corpus] [INPUT...]
#
# Without INPUTs it generates a fixed set (cached in --work, default /tmp/pushprep-peaks):
# JPEGs (baseline, 4:4:4, progressive), PNGs (plain, interlaced, RGBA), WebP, TIFF, HEIC/AVIF
# when vips can save them, BMP, animated GIF/WebP, H.264/HEVC/VP9 movies at 720p/1080p/4K and
# sounds; then every file of ../shared/corpus when it is present (skipped when absent).
#
# The peak is the maximum resident set size from `/usr/bin/time -f %M` of
# `pushprep process INPUT --jobs 1 --out TMP`; the baseline is the same for an 8x8 JPEG (the
# largest of three runs), which is subtracted. With --runs N each input runs N times and the
# largest peak counts. --inspect-bin takes the estimates from another build (a debug build of
# a change, beside the release build measured). Output: one tab-separated line per input:
#   name  type  WxH  frames  file_bytes  peak_mb  above_baseline_mb  estimate_mb  estimate/measured
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$root/.build/release/pushprep"
work="${TMPDIR:-/tmp}/pushprep-peaks"
runs=1
corpus=1
inputs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --inspect-bin) inspect_bin=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --no-corpus) corpus=0; shift ;;
        -h|--help) sed -n 2,20p "$0"; exit 0 ;;
        *) inputs+=("$1"); shift ;;
    esac
done
inspect_bin=${inspect_bin:-$bin}
[[ -x "$bin" ]] || { echo "no pushprep at $bin (make release, or --bin PATH)" >&2; exit 2; }
mkdir -p "$work/in"
# shellcheck source=synth-photo.sh
source "$here/synth-photo.sh"

# make NAME COMMAND...: runs COMMAND (which writes $out) unless $work/in/NAME exists.
make_input() {
    local name=$1; shift
    out="$work/in/$name"
    [[ -s "$out" ]] && return 0
    "$@" >/dev/null 2>&1 || { echo "skipped $name (cannot generate)" >&2; rm -f "$out"; return 0; }
}
has_saver() { vips -l 2>/dev/null | grep "($1)" >/dev/null; }

generate() {
    local m="$work/master"
    mkdir -p "$m"
    [[ -s "$m/4032.v" ]] || synth_photo 4032 3024 1 "$m/4032.v"
    [[ -s "$m/6000.v" ]] || synth_photo 6000 4000 2 "$m/6000.v"
    # 9000x7000 from the 6000x4000 photo: synthesising it directly needs gigabytes of float temporaries.
    [[ -s "$m/9000.v" ]] || vips resize "$m/6000.v" "$m/9000.v" 1.5 --vscale 1.75
    [[ -s "$m/2048.v" ]] || vips resize "$m/4032.v" "$m/2048.v" 0.508 --vscale 0.508
    [[ -s "$m/1024.v" ]] || vips resize "$m/4032.v" "$m/1024.v" 0.254 --vscale 0.254
    [[ -s "$m/4032a.v" ]] || vips bandjoin_const "$m/4032.v" "$m/4032a.v" 200

    for s in 1024 2048 4032 6000 9000; do
        make_input "jpeg-$s.jpg" vips copy "$m/$s.v" "$work/in/jpeg-$s.jpg[Q=85]"
    done
    make_input "jpeg444-4032.jpg" vips copy "$m/4032.v" "$work/in/jpeg444-4032.jpg[Q=85,subsample-mode=off]"
    for s in 2048 4032 9000; do
        make_input "pjpeg-$s.jpg" vips copy "$m/$s.v" "$work/in/pjpeg-$s.jpg[Q=85,interlace]"
    done
    for s in 2048 6000; do
        make_input "png-$s.png" vips copy "$m/$s.v" "$work/in/png-$s.png[compression=1]"
    done
    make_input "pngi-4032.png" vips copy "$m/4032.v" "$work/in/pngi-4032.png[compression=1,interlace]"
    make_input "pnga-4032.png" vips copy "$m/4032a.v" "$work/in/pnga-4032.png[compression=1]"
    for s in 2048 6000; do
        make_input "webp-$s.webp" vips copy "$m/$s.v" "$work/in/webp-$s.webp[Q=80]"
    done
    make_input "tiff-6000.tif" vips copy "$m/6000.v" "$work/in/tiff-6000.tif[compression=deflate]"
    make_input "tiffj-6000.tif" vips copy "$m/6000.v" "$work/in/tiffj-6000.tif[compression=jpeg,tile]"
    if has_saver heifsave; then
        for s in 2048 4032 9000; do
            make_input "heic-$s.heic" vips copy "$m/$s.v" "$work/in/heic-$s.heic[Q=60,compression=hevc]"
        done
        make_input "avif-4032.avif" vips copy "$m/4032.v" "$work/in/avif-4032.avif[Q=60,compression=av1,effort=0]"
    fi
    make_input "bmp-4032.bmp" ffmpeg -v error -nostdin -y -i "$work/in/jpeg-4032.jpg" "$work/in/bmp-4032.bmp"
    # Animations: ffmpeg's test source at 10 frames a second.
    for spec in "480x360 50" "480x360 200" "1280x720 40"; do
        read -r size frames <<<"$spec"
        make_input "gif-$size-$frames.gif" ffmpeg -v error -nostdin -y -f lavfi \
            -i "testsrc2=size=$size:rate=10" -frames:v "$frames" "$work/in/gif-$size-$frames.gif"
    done
    make_input "webpanim-480x360-50.webp" vips copy "$work/in/gif-480x360-50.gif[n=-1]" \
        "$work/in/webpanim-480x360-50.webp[Q=70]"
    # Movies: 6 s at 30 fps with an AAC track (copied when it fits, else transcoded).
    local v=(-v error -nostdin -y -f lavfi -i "testsrc2=size=SIZE:rate=30" -f lavfi
        -i "sine=frequency=440:sample_rate=48000" -t 6 -pix_fmt yuv420p)
    for spec in "h264 1280x720 mp4 libx264" "h264 1920x1080 mp4 libx264" "h264 3840x2160 mp4 libx264" \
        "hevc 1920x1080 mp4 libx265" "hevc 3840x2160 mp4 libx265" "vp9 1920x1080 webm libvpx-vp9"; do
        read -r codec size ext encoder <<<"$spec"
        local audio=(-c:a aac -b:a 128k)
        [[ $ext == webm ]] && audio=(-c:a libopus -b:a 96k)
        local extra=()
        [[ $encoder == libx264 ]] && extra=(-preset veryfast)
        [[ $encoder == libx265 ]] && extra=(-preset ultrafast -tag:v hvc1 -x265-params log-level=error)
        [[ $encoder == libvpx-vp9 ]] && extra=(-deadline realtime -cpu-used 8)
        make_input "$codec-$size.$ext" ffmpeg "${v[@]/SIZE/$size}" -c:v "$encoder" "${extra[@]}" "${audio[@]}" \
            "$work/in/$codec-$size.$ext"
    done
    # Sounds: 60 s.
    local a=(-v error -nostdin -y -f lavfi -i "sine=frequency=440:sample_rate=44100" -ac 2 -t 60)
    make_input "audio-60s.mp3" ffmpeg "${a[@]}" -c:a libmp3lame -b:a 192k "$work/in/audio-60s.mp3"
    make_input "audio-60s.flac" ffmpeg "${a[@]}" -c:a flac "$work/in/audio-60s.flac"
    make_input "audio-60s.wav" ffmpeg "${a[@]}" "$work/in/audio-60s.wav"
    make_input "audio-60s.m4a" ffmpeg "${a[@]}" -c:a aac -b:a 256k "$work/in/audio-60s.m4a"
}

# peak_kb INPUT: the largest max-RSS (KiB) of $runs runs of `pushprep process INPUT`.
peak_kb() {
    local best=0 i kb out
    for ((i = 0; i < runs; i++)); do
        out=$(mktemp -d "$work/out.XXXXXX")
        /usr/bin/time -o "$out.rss" -f %M "$bin" process "$1" --jobs 1 --out "$out" >/dev/null 2>&1 || true
        kb=$(tail -1 "$out.rss")
        rm -rf "$out" "$out.rss"
        [[ "$kb" =~ ^[0-9]+$ ]] || kb=0
        ((kb > best)) && best=$kb
    done
    echo "$best"
}

# facts INPUT: "type WxH frames estimate_bytes" from `pushprep inspect --json`.
facts() {
    "$inspect_bin" inspect --json "$1" 2>/dev/null | jq -r '.[0] | [(.type // "?"),
        ((.width|tostring) + "x" + (.height|tostring)), (.frames // 1), (.memoryEstimate // 0)] | @tsv' \
        2>/dev/null || printf '?\t?\t?\t0\n'
}

if [[ ${#inputs[@]} -eq 0 ]]; then
    generate
    inputs=("$work"/in/*)
    if [[ $corpus -eq 1 && -d "$root/../shared/corpus" ]]; then
        while IFS= read -r f; do inputs+=("$f"); done < <(find "$root/../shared/corpus" -type f ! -name '*.md' | sort)
    elif [[ $corpus -eq 1 ]]; then
        echo "no ../shared/corpus: generated inputs only" >&2
    fi
fi

vips black "$work/tiny.jpg" 8 8 --bands 3 >/dev/null
runs_saved=$runs
runs=3
base=$(peak_kb "$work/tiny.jpg")
runs=$runs_saved
printf '# %s, baseline (8x8 jpeg) %.1f MB\n' "$bin" "$(echo "$base / 1024" | bc -l)"
printf 'name\ttype\tsize\tframes\tfile_bytes\tpeak_mb\tabove_mb\testimate_mb\tratio\n'
for f in "${inputs[@]}"; do
    kb=$(peak_kb "$f")
    IFS=$'\t' read -r type size frames estimate <<<"$(facts "$f")"
    above=$(( kb > base ? kb - base : 0 ))
    awk -v n="$(basename "$f")" -v t="$type" -v s="$size" -v fr="$frames" -v b="$(stat -c %s "$f")" \
        -v kb="$kb" -v above="$above" -v e="$estimate" 'BEGIN {
            m = above / 1024; em = e / 1048576
            printf "%s\t%s\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%s\n", n, t, s, fr, b, kb / 1024, m, em,
                (m > 0 ? sprintf("%.2f", em / m) : "-") }'
done
