#!/bin/sh
# The queue knows jobs, not media (issue 29 §1): pushprep-queue-bench is built from PushPrepQueue
# without the media modules, so its binary must load no libvips or FFmpeg library and reference
# none of their symbols. A target that imports PushPrep (or PushPrepMedia) again brings them
# back; this check fails then, naming what it found. Run by `make lint`.
#
# Usage: scripts/check-queue-links.sh [BINARY]   (default: builds the debug queue bench)
set -eu

SWIFT=${SWIFT:-swift}
bin=${1:-}
if [ -z "$bin" ]; then
    out=$("$SWIFT" build --product pushprep-queue-bench 2>&1) || { printf '%s\n' "$out" >&2; exit 1; }
    bin="$("$SWIFT" build --show-bin-path)/pushprep-queue-bench"
fi
[ -x "$bin" ] || { echo "check-queue-links: no binary at $bin" >&2; exit 1; }

# The media libraries PushPrepMedia links (CVips, CFFmpeg), as ldd names them.
libraries=$(ldd "$bin" | grep -E 'lib(vips|avformat|avcodec|avutil|avfilter|avdevice|swscale|swresample|postproc)\.' || true)
# Their functions and the shims' (CVipsShims, CFFmpegShims), defined or undefined.
symbols=$(nm "$bin" | grep -E ' [A-Za-z] (vips_|im_|av_|avformat_|avcodec_|avio_|sws_|swr_|cvipsshims_|cffmpegshims_)' || true)

if [ -n "$libraries" ] || [ -n "$symbols" ]; then
    echo "check-queue-links: $bin links media code; PushPrepQueue and the queue bench must not import PushPrep" >&2
    [ -z "$libraries" ] || printf '%s\n' "$libraries" >&2
    [ -z "$symbols" ] || printf '%s\n' "$symbols" | head -20 >&2
    exit 1
fi
echo "check-queue-links: $bin: $(ldd "$bin" | wc -l) shared libraries, none of libvips or FFmpeg"
