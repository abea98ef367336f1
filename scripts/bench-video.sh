#!/usr/bin/env bash
# The video section of `make bench` (run by scripts/bench.sh, or alone): PushPrep against the
# `ffmpeg` program doing the same job, side by side in the same run, interleaved.
#
#  (a) transcode: a 1080p 60 s H.264/AAC clip to a 720-wide, 15 s preview starting at 10 s:
#      PushPrep vs `ffmpeg` with the same encoder settings (libx264 preset veryfast, CRF 23,
#      the same maxrate/bufsize, High profile, level 4.0, yuv420p, the same output size,
#      bicubic scaling, AAC 128 kbit/s stereo, +faststart). The same work, as far as it goes:
#       - seek: `ffmpeg -ss` before `-i` is an accurate seek (to the keyframe before 10 s, then
#         the frames before 10 s are decoded and dropped), which is what PushPrep does; both
#         outputs are checked to hold the same number of video frames;
#       - threads: both automatic: the H.264 decoder's frame threads, x264's own threads, and
#         libswscale's slice threads (the `scale` filter's; PushPrep asks for the same);
#       - PushPrep also writes a poster JPEG (from a frame the transcode already decoded and
#         scaled: one 720-wide RGB conversion and JPEG encode), hashes the input for the
#         attachment id and writes a manifest; `ffmpeg` does none of these, so they count
#         against PushPrep.
#      Method: BENCH_REPEAT pairs (default 5), the two programs alternating which runs first
#      from pair to pair; the ratio is the median of the pairs' ratios (pushprep/ffmpeg wall
#      time). Goal: at most 1.05. The medians of each side and of CPU time are printed too.
#  (b) copy path: an already-fine clip (720x406 H.264 High/AAC-LC, 60 s) previewed with the
#      same start and length, vs PushPrep transcoding that same clip (forced with
#      --video-width 718, which is the same work: 720 → 718 px). Goal: >= 10x faster.
#
#  (c) isolation (issue 30; BENCH_ISOLATION=0 skips it): the same jobs with `--isolation
#      process` (decoding in a confined decoder process the parent starts and feeds), run in
#      the same rounds: the 1080p transcode takes the third place of (a)'s pairs, which then
#      rotate the order of the three programs; the copy path and the fine clip's transcode run
#      once each way per round, alternating which side goes first. Ratios are medians of each
#      round's ratio: isolated/in-process for every job, and isolated/`ffmpeg` for (a), whose
#      goal is the same: at most 1.05. The CPU time ratios (of the medians; the decoder's
#      included, as pushprep reaps it) are printed too: steadier on a shared machine.
#
# Environment: PUSHPREP (default .build/release/pushprep), BENCH_REPEAT (default 5: pairs in
# (a), runs in (b); medians are reported), BENCH_ISOLATION (default 1). Inputs are generated
# once into bench-out/cache.
#
# Last lines of output, for CI / scripts (the isolation line only with BENCH_ISOLATION=1):
#   bench isolation video: transcode_none_s=… transcode_process_s=… ratio=… ffmpeg_ratio=… cpu_ratio=… ffmpeg_cpu_ratio=… copy_none_s=… copy_process_s=… copy_ratio=… fine_none_s=… fine_process_s=… fine_ratio=…
#   bench video: pushprep_transcode_s=… ffmpeg_s=… ratio=… cpu_ratio=… copy_s=… pushprep_transcode_fine_s=… copy_speedup=…
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PUSHPREP=${PUSHPREP:-.build/release/pushprep}
BENCH_REPEAT=${BENCH_REPEAT:-5}
BENCH_ISOLATION=${BENCH_ISOLATION:-1}

# Must match PushPrep's defaults and VideoEncoder, or the comparison is meaningless.
START=10
LENGTH=15
WIDTH=720
PRESET=veryfast
CRF=23

ROOT=bench-out
CACHE=$ROOT/cache
OUT=$ROOT/video
LOGS=$ROOT/logs
CLIP=$CACHE/video-1080p-60s.mp4
FINE=$CACHE/video-720-fine-60s.mp4

die() { echo "bench video: error: $*" >&2; exit 2; }
note() { echo "bench video: $*" >&2; }

[[ $BENCH_REPEAT =~ ^[0-9]+$ ]] && (( BENCH_REPEAT >= 1 )) || die "BENCH_REPEAT must be >= 1"
[[ -x $PUSHPREP ]] || die "PushPrep binary not found at '$PUSHPREP' (build it: swift build -c release)"
for tool in ffmpeg ffprobe; do command -v "$tool" >/dev/null || die "'$tool' not found (apt-get install ffmpeg)"; done
[[ -x /usr/bin/time ]] || die "GNU time (/usr/bin/time) is required"
help=$("$PUSHPREP" process --help 2>&1 || true)
[[ $help == *--video-seconds* ]] || die "'$PUSHPREP' has no --video-seconds option"
[[ $BENCH_ISOLATION == [01] ]] || die "BENCH_ISOLATION must be 0 or 1, got '$BENCH_ISOLATION'"
[[ $BENCH_ISOLATION == 0 || $help == *--isolation* ]] \
    || die "'$PUSHPREP' has no --isolation option (an older build?); set BENCH_ISOLATION=0 to skip that comparison"

mkdir -p "$CACHE" "$OUT" "$LOGS"

# --- inputs (once; written under a temporary name so a broken run never leaves a truncated one)
if [[ ! -s $CLIP ]]; then
    note "generating $CLIP (one-off)..."
    ffmpeg -y -v error -nostdin -f lavfi -i "testsrc2=size=1920x1080:rate=30,noise=alls=2:allf=t" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 60 -c:v libx264 -preset veryfast -crf 23 \
        -pix_fmt yuv420p -c:a aac -b:a 160k -ac 2 "${CLIP%.mp4}.partial.mp4"
    mv "${CLIP%.mp4}.partial.mp4" "$CLIP"
fi
if [[ ! -s $FINE ]]; then
    note "generating $FINE (one-off)..."
    ffmpeg -y -v error -nostdin -i "$CLIP" -vf scale=720:406,setsar=1 -c:v libx264 -preset veryfast -crf 23 \
        -profile:v high -level 4.0 -pix_fmt yuv420p -c:a aac -b:a 128k -movflags +faststart \
        "${FINE%.mp4}.partial.mp4"
    mv "${FINE%.mp4}.partial.mp4" "$FINE"
fi

# The output size and bitrate cap PushPrep chooses (VideoScaler.outputSize, VideoEncoder.maxRate):
# 720 wide, height rounded to the nearest even number; maxrate 0.1 bit/pixel/frame, >= 1 Mbit/s.
read -r in_w in_h < <(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$CLIP" | tr ',' ' ')
height=$(awk -v w="$in_w" -v h="$in_h" -v t="$WIDTH" 'BEGIN { x = h * t / w / 2; printf "%d", int(x + 0.5) * 2 }')
maxrate=$(awk -v w="$WIDTH" -v h="$height" 'BEGIN { b = w * h * 30 * 0.1; b = int(b / 1000 + 0.5) * 1000; if (b < 1000000) b = 1000000; print b }')
bufsize=$(( maxrate * 2 ))

cat "$CLIP" "$FINE" >/dev/null  # page cache

# GNU time: wall seconds, peak RSS (KiB), user and system CPU seconds.
timed() { local out=$1; shift; /usr/bin/time -f '%e %M %U %S' -o "$out" "$@"; }
seconds_of() { tail -n 1 "$1" | cut -d' ' -f1; }
cpu_of() { tail -n 1 "$1" | awk '{ printf "%.2f", $3 + $4 }'; }

# Runs PushPrep on one clip; prints the elapsed seconds; checks the manifest and the output.
run_pushprep() {
    local name=$1 input=$2 expect=$3; shift 3
    local dir=$OUT/$name log=$LOGS/video-$name
    rm -rf "$dir"; mkdir -p "$dir"
    timed "$log.time" "$PUSHPREP" process --out "$dir" --manifest "$dir/manifest.json" \
        --video-start "$START" --video-seconds "$LENGTH" "$@" "$input" >"$log.log" 2>&1 \
        || { tail -n 20 "$log.log" >&2; die "pushprep failed on $input (log: $log.log)"; }
    grep -q '"status" *: *"ok"' "$dir/manifest.json" || die "pushprep did not process $input: see $dir/manifest.json"
    grep -q "\"$expect\"" "$dir/manifest.json" || die "pushprep did not take the $expect path on $input"
    echo "$(seconds_of "$log.time") $(cpu_of "$log.time")"
}

run_ffmpeg() {
    local log=$LOGS/video-ffmpeg
    timed "$log.time" ffmpeg -y -v error -nostdin -ss "$START" -t "$LENGTH" -i "$CLIP" \
        -vf "scale=$WIDTH:$height:flags=bicubic" -c:v libx264 -preset "$PRESET" -crf "$CRF" \
        -maxrate "$maxrate" -bufsize "$bufsize" -profile:v high -level 4.0 -pix_fmt yuv420p \
        -c:a aac -b:a 128k -ac 2 -movflags +faststart "$OUT/ffmpeg.mp4" >"$log.log" 2>&1 \
        || { tail -n 20 "$log.log" >&2; die "ffmpeg failed (log: $log.log)"; }
    echo "$(seconds_of "$log.time") $(cpu_of "$log.time")"
}

# a / b, for the ratios.
divide() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

pp=() ff=() pp_cpu=() ff_cpu=() pair=() copy=() fine=()
iso=() iso_cpu=() iso_pair=() iso_ff_pair=() iso_copy=() iso_copy_pair=() iso_fine=() iso_fine_pair=()
note "$BENCH_REPEAT interleaved pairs: ${WIDTH}x$height, start $START s, $LENGTH s, preset $PRESET, CRF $CRF, maxrate $maxrate"
(( BENCH_ISOLATION == 0 )) || note "with --isolation process as the third of each round (the order rotates)"
for (( r = 1; r <= BENCH_REPEAT; r++ )); do
    # Alternate which side runs first, so neither always gets the cooler cache or the quieter
    # machine; with the isolated run as a third, rotate the three.
    if (( BENCH_ISOLATION == 0 )); then
        if (( r % 2 )); then order="pp ff"; else order="ff pp"; fi
    else
        case $(( r % 3 )) in 1) order="pp iso ff" ;; 2) order="iso ff pp" ;; 0) order="ff pp iso" ;; esac
    fi
    for who in $order; do
        case $who in
            pp) a=$(run_pushprep transcode "$CLIP" transcode --video-width "$WIDTH") ;;
            iso) i=$(run_pushprep transcode-isolated "$CLIP" transcode --video-width "$WIDTH" --isolation process) ;;
            ff) b=$(run_ffmpeg) ;;
        esac
    done
    read -r p pc <<<"$a"; read -r f fc <<<"$b"
    pp+=("$p") ff+=("$f") pp_cpu+=("$pc") ff_cpu+=("$fc")
    pair+=("$(divide "$p" "$f")")
    # The copy and the fine clip's transcode, in process and (with isolation) isolated; which
    # side goes first alternates.
    sides=none
    if (( BENCH_ISOLATION == 1 )); then
        if (( r % 2 )); then sides="none process"; else sides="process none"; fi
    fi
    for side in $sides; do
        if [[ $side == none ]]; then
            a=$(run_pushprep copy "$FINE" remux --video-width "$WIDTH"); c=${a%% *}
            a=$(run_pushprep transcode-fine "$FINE" transcode --video-width 718); t=${a%% *}
        else
            a=$(run_pushprep copy-isolated "$FINE" remux --video-width "$WIDTH" --isolation process); ic=${a%% *}
            a=$(run_pushprep transcode-fine-isolated "$FINE" transcode --video-width 718 --isolation process); it=${a%% *}
        fi
    done
    copy+=("$c") fine+=("$t")
    note "pair $r: pushprep $p s ($pc s CPU), ffmpeg $f s ($fc s CPU), ratio ${pair[-1]}; copy $c s, pushprep transcode of the fine clip $t s"
    if (( BENCH_ISOLATION == 1 )); then
        read -r ip ipc <<<"$i"
        iso+=("$ip") iso_cpu+=("$ipc")
        iso_pair+=("$(divide "$ip" "$p")") iso_ff_pair+=("$(divide "$ip" "$f")")
        iso_copy+=("$ic") iso_fine+=("$it")
        iso_copy_pair+=("$(divide "$ic" "$c")") iso_fine_pair+=("$(divide "$it" "$t")")
        note "pair $r, --isolation process: transcode $ip s ($ipc s CPU), ratio ${iso_pair[-1]} to in-process, ${iso_ff_pair[-1]} to ffmpeg; copy $ic s, transcode of the fine clip $it s"
    fi
done

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
pp_med=$(median "${pp[@]}"); ff_med=$(median "${ff[@]}")
pp_cpu_med=$(median "${pp_cpu[@]}"); ff_cpu_med=$(median "${ff_cpu[@]}")
copy_med=$(median "${copy[@]}"); fine_med=$(median "${fine[@]}")
ratio=$(printf '%.2f' "$(median "${pair[@]}")")
ratio_of_medians=$(awk -v a="$pp_med" -v b="$ff_med" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
cpu_ratio=$(awk -v a="$pp_cpu_med" -v b="$ff_cpu_med" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
# /usr/bin/time has 10 ms resolution; a copy faster than that counts as 0.01 s.
speedup=$(awk -v a="$fine_med" -v b="$copy_med" 'BEGIN { if (b < 0.01) b = 0.01; printf "%.1f", a / b }')
ratio_verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.05) ? "ok" : "ABOVE GOAL" }')
speedup_verdict=$(awk -v s="$speedup" 'BEGIN { print (s >= 10) ? "ok" : "BELOW GOAL" }')
pp_file=$(find "$OUT/transcode" -name '*.mp4' | head -n 1)
pp_bytes=$(stat -c %s "$pp_file")
ff_bytes=$(stat -c %s "$OUT/ffmpeg.mp4")

# The same work: both previews hold the same frames (an inaccurate seek or a different frame
# rate would show here).
frames_of() { ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1"; }
pp_frames=$(frames_of "$pp_file"); ff_frames=$(frames_of "$OUT/ffmpeg.mp4")
(( pp_frames == ff_frames )) || die "not the same work: pushprep wrote $pp_frames video frames, ffmpeg $ff_frames"
if (( BENCH_ISOLATION == 1 )); then
    iso_file=$(find "$OUT/transcode-isolated" -name '*.mp4' | head -n 1)
    iso_bytes=$(stat -c %s "$iso_file")
    iso_frames=$(frames_of "$iso_file")
    (( iso_frames == ff_frames )) || die "not the same work: pushprep --isolation process wrote $iso_frames video frames, ffmpeg $ff_frames"
fi

echo
echo "PushPrep video benchmark: $CLIP (${in_w}x$in_h, 60 s) → ${WIDTH}x$height, $START-$(( START + LENGTH )) s, preset $PRESET, CRF $CRF, maxrate $maxrate, $(nproc) cores, $BENCH_REPEAT interleaved pairs, $(ffmpeg -version | head -n 1 | cut -d' ' -f1-3)"
printf '%-34s %10s %10s %12s %8s\n' job "median s" "CPU s" "output bytes" frames
printf '%-34s %10s %10s %12s %8s\n' "pushprep transcode (+ poster)" "$pp_med" "$pp_cpu_med" "$pp_bytes" "$pp_frames"
printf '%-34s %10s %10s %12s %8s\n' "ffmpeg transcode" "$ff_med" "$ff_cpu_med" "$ff_bytes" "$ff_frames"
printf '%-34s %10s\n' "pushprep copy path (fine clip)" "$copy_med"
printf '%-34s %10s\n' "pushprep transcode (fine clip)" "$fine_med"
echo "  pairs (s): pushprep ${pp[*]} | ffmpeg ${ff[*]} | ratios ${pair[*]}"
echo "  runs (s): copy ${copy[*]} | transcode-fine ${fine[*]}"
echo
echo "ratio pushprep/ffmpeg transcode time, median of $BENCH_REPEAT pairs: $ratio (goal <= 1.05: $ratio_verdict); ratio of the medians $ratio_of_medians, of CPU time $cpu_ratio"
echo "copy path speed-up over transcoding the same clip: ${speedup}x (goal >= 10: $speedup_verdict)"
if (( BENCH_ISOLATION == 1 )); then
    iso_med=$(median "${iso[@]}"); iso_cpu_med=$(median "${iso_cpu[@]}")
    iso_copy_med=$(median "${iso_copy[@]}"); iso_fine_med=$(median "${iso_fine[@]}")
    iso_ratio=$(printf '%.2f' "$(median "${iso_pair[@]}")")
    iso_ff_ratio=$(printf '%.2f' "$(median "${iso_ff_pair[@]}")")
    iso_copy_ratio=$(printf '%.2f' "$(median "${iso_copy_pair[@]}")")
    iso_fine_ratio=$(printf '%.2f' "$(median "${iso_fine_pair[@]}")")
    iso_cpu_ratio=$(awk -v a="$iso_cpu_med" -v b="$pp_cpu_med" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    iso_ff_cpu_ratio=$(awk -v a="$iso_cpu_med" -v b="$ff_cpu_med" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
    iso_ff_verdict=$(awk -v r="$iso_ff_ratio" 'BEGIN { print (r <= 1.05) ? "ok" : "ABOVE GOAL" }')
    echo
    echo "isolation: the same jobs with --isolation process (a confined decoder process), in the same rounds"
    printf '%-34s %10s %10s %12s %8s\n' job "median s" "CPU s" "output bytes" frames
    printf '%-34s %10s %10s %12s %8s\n' "transcode, --isolation none" "$pp_med" "$pp_cpu_med" "$pp_bytes" "$pp_frames"
    printf '%-34s %10s %10s %12s %8s\n' "transcode, --isolation process" "$iso_med" "$iso_cpu_med" "$iso_bytes" "$iso_frames"
    printf '%-34s %10s %10s\n' "copy path, --isolation process" "$iso_copy_med" "(none: $copy_med)"
    printf '%-34s %10s %10s\n' "fine clip, --isolation process" "$iso_fine_med" "(none: $fine_med)"
    echo "  rounds (s): transcode ${iso[*]} | copy ${iso_copy[*]} | transcode-fine ${iso_fine[*]}"
    echo "  ratios to in-process: transcode ${iso_pair[*]} | copy ${iso_copy_pair[*]} | transcode-fine ${iso_fine_pair[*]}"
    echo "ratio isolated/in-process time, median of $BENCH_REPEAT rounds: transcode $iso_ratio, copy path $iso_copy_ratio, fine clip $iso_fine_ratio"
    echo "ratio isolated pushprep/ffmpeg transcode time, median of $BENCH_REPEAT rounds: $iso_ff_ratio (issue 30: <= 1.05: $iso_ff_verdict)"
    echo "ratio of CPU time, transcode: isolated/in-process $iso_cpu_ratio, isolated/ffmpeg $iso_ff_cpu_ratio"
    echo "bench isolation video: transcode_none_s=$pp_med transcode_process_s=$iso_med ratio=$iso_ratio ffmpeg_ratio=$iso_ff_ratio cpu_ratio=$iso_cpu_ratio ffmpeg_cpu_ratio=$iso_ff_cpu_ratio copy_none_s=$copy_med copy_process_s=$iso_copy_med copy_ratio=$iso_copy_ratio fine_none_s=$fine_med fine_process_s=$iso_fine_med fine_ratio=$iso_fine_ratio"
fi
echo "bench video: pushprep_transcode_s=$pp_med ffmpeg_s=$ff_med ratio=$ratio cpu_ratio=$cpu_ratio copy_s=$copy_med pushprep_transcode_fine_s=$fine_med copy_speedup=$speedup"
