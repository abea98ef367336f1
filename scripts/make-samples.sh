#!/usr/bin/env bash
# Regenerates samples/ from nothing but the vips CLI (libvips 8.14), the
# ffmpeg CLI (its synthetic lavfi sources) and coreutils/sed, so the repo never
# ships third-party media and anyone can rebuild them. Every random source is
# seeded: on the same libvips build and fonts, reruns produce identical bytes
# (text rendering depends on the installed DejaVu fonts, so another machine may
# differ in a few bytes); the ffmpeg outputs are encoded single-threaded and
# bit-exact.
#
#   scripts/make-samples.sh            # writes samples/*.{jpg,png,gif,webp,webm,ogg}
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$repo/samples"
# shellcheck source=scripts/synth-photo.sh
source "$repo/scripts/synth-photo.sh"

for tool in vips vipsheader ffmpeg; do
    command -v "$tool" >/dev/null || { echo "error: '$tool' not found (apt-get install libvips-tools ffmpeg)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-samples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

FONT="DejaVu Sans Bold"

# set_meta FILE.v XML-FIELD-LINES
#
# The vips CLI has no "set metadata" command, but a .v file is a 64-byte
# header, the raw pixels, then an XML block holding every metadata field.
# libvips reads that block back verbatim, and its savers turn `orientation`
# and `exif-ifdN-*` fields into real EXIF tags and `page-height`/`delay`/
# `loop` into animation frames. So we splice extra <field> lines into the XML.
# Only uchar images are handled (1 byte per band keeps the offset maths exact).
set_meta() {
    local file=$1 fields=$2 w h b
    [[ $(vipsheader -f format "$file") == *UCHAR* ]] || { echo "set_meta: $file is not uchar" >&2; return 1; }
    w=$(vipsheader -f width "$file")
    h=$(vipsheader -f height "$file")
    b=$(vipsheader -f bands "$file")
    local pixels_end=$(( 64 + w * h * b ))
    printf '%s\n' "$fields" >"$tmp/fields.xml"
    head -c "$pixels_end" "$file" >"$tmp/pixels.bin"
    tail -c +"$(( pixels_end + 1 ))" "$file" | sed "/^  <meta>\$/r $tmp/fields.xml" >"$tmp/meta.xml"
    cat "$tmp/pixels.bin" "$tmp/meta.xml" >"$file"
}

# solid W H "R G B" OUT.v -- a flat uchar sRGB canvas.
solid() {
    vips black "$tmp/solid-black.v" "$1" "$2" --bands 3
    vips linear "$tmp/solid-black.v" "$tmp/solid-f.v" "1 1 1" "$3"
    vips cast "$tmp/solid-f.v" "$4" uchar
}

# paint_text BASE.v TEXT SIZE X Y "R G B" OUT.v -- anti-aliased text over BASE.
# X may be "centre" to centre the text horizontally.
paint_text() {
    local base=$1 text=$2 size=$3 x=$4 y=$5 rgb=$6 dst=$7 w h
    w=$(vipsheader -f width "$base")
    h=$(vipsheader -f height "$base")
    vips text "$tmp/text.v" "$text" --font "$FONT $size" --dpi 72
    [[ $x != centre ]] || x=$(( (w - $(vipsheader -f width "$tmp/text.v")) / 2 ))
    vips embed "$tmp/text.v" "$tmp/text-mask.v" "$x" "$y" "$w" "$h"
    solid "$w" "$h" "$rgb" "$tmp/text-ink.v"
    # --blend uses the 0..255 glyph coverage as a mix factor: smooth edges.
    vips ifthenelse "$tmp/text-mask.v" "$tmp/text-ink.v" "$base" "$dst" --blend
}

# disc_alpha W H CX CY R OUT.v -- 1-band uchar alpha of an anti-aliased disc.
disc_alpha() {
    local w=$1 h=$2 cx=$3 cy=$4 r=$5 dst=$6
    vips xyz "$tmp/disc-xy.v" "$w" "$h"
    # Leading space: vips' option parser would read "-400 ..." as a flag.
    vips linear "$tmp/disc-xy.v" "$tmp/disc-d.v" "1 1" " -$cx -$cy"
    vips multiply "$tmp/disc-d.v" "$tmp/disc-d.v" "$tmp/disc-d2.v"
    vips bandmean "$tmp/disc-d2.v" "$tmp/disc-m.v"
    vips linear "$tmp/disc-m.v" "$tmp/disc-s.v" 2 0
    vips math2_const "$tmp/disc-s.v" "$tmp/disc-dist.v" pow 0.5
    # ~1.5 px ramp at the rim; cast clips to 0..255.
    vips linear "$tmp/disc-dist.v" "$tmp/disc-a.v" " -170" "$(( 170 * r ))"
    vips cast "$tmp/disc-a.v" "$dst" uchar
}

# 1. portrait-exif6.jpg ------------------------------------------------------
# Design the *upright* portrait (1200x1600), then store it rotated 90 degrees
# counter-clockwise (1600x1200 landscape pixels) with EXIF Orientation=6
# ("rotate 90 CW to display"). A viewer that ignores EXIF shows "TOP" on the
# left edge, sideways; correct handling shows it upright at the top.
echo "portrait-exif6.jpg"
synth_photo 1200 1600 3 "$tmp/portrait-bg.v"
solid 1200 260 "245 245 245" "$tmp/banner.v"
vips insert "$tmp/portrait-bg.v" "$tmp/banner.v" "$tmp/portrait-banner.v" 0 0
paint_text "$tmp/portrait-banner.v" "TOP ↑" 150 centre 40 "200 20 20" "$tmp/portrait-top.v"
paint_text "$tmp/portrait-top.v" "bottom" 70 centre 1480 "255 255 255" "$tmp/portrait-up.v"
paint_text "$tmp/portrait-up.v" "L" 90 30 760 "255 255 0" "$tmp/portrait-upright.v"
vips rot "$tmp/portrait-upright.v" "$tmp/portrait-stored.v" d270
# GPS (Eiffel Tower) and camera tags exist so the pipeline's metadata
# stripping can be checked: none of these may survive into the output.
set_meta "$tmp/portrait-stored.v" '    <field type="gint" name="orientation">6</field>
    <field type="VipsRefString" name="exif-ifd0-Make">PushPrep</field>
    <field type="VipsRefString" name="exif-ifd0-Model">make-samples.sh</field>
    <field type="VipsRefString" name="exif-ifd0-DateTime">2024:01:01 12:00:00</field>
    <field type="VipsRefString" name="exif-ifd3-GPSLatitudeRef">N</field>
    <field type="VipsRefString" name="exif-ifd3-GPSLatitude">48/1 51/1 2976/100</field>
    <field type="VipsRefString" name="exif-ifd3-GPSLongitudeRef">E</field>
    <field type="VipsRefString" name="exif-ifd3-GPSLongitude">2/1 17/1 4020/100</field>'
vips copy "$tmp/portrait-stored.v" "$out/portrait-exif6.jpg[Q=85,optimize_coding]" --interpretation srgb

# 2. logo-transparent.png ----------------------------------------------------
# Fully transparent background, a 50%-alpha square and an opaque disc with
# soft (partially transparent) edges: exercises alpha flattening and
# premultiplied resampling (dark fringes show up if that goes wrong).
echo "logo-transparent.png"
solid 800 600 "0 150 160" "$tmp/sq-rgb.v"
vips black "$tmp/sq-black.v" 300 300
vips linear "$tmp/sq-black.v" "$tmp/sq-half.v" 1 128
vips cast "$tmp/sq-half.v" "$tmp/sq-small.v" uchar
vips embed "$tmp/sq-small.v" "$tmp/sq-alpha.v" 90 60 800 600
vips bandjoin "$tmp/sq-rgb.v $tmp/sq-alpha.v" "$tmp/square-mb.v"
# bandjoin leaves "multiband"; composite2 needs to know these are sRGB(A).
vips copy "$tmp/square-mb.v" "$tmp/square.v" --interpretation srgb
vips grey "$tmp/ramp.v" 800 600
vips linear "$tmp/ramp.v" "$tmp/disc-f.v" "30 -200 120" "230 120 40"
vips cast "$tmp/disc-f.v" "$tmp/disc-rgb0.v" uchar
paint_text "$tmp/disc-rgb0.v" "PP" 200 360 240 "255 255 255" "$tmp/disc-rgb.v"
disc_alpha 800 600 480 340 220 "$tmp/disc-alpha.v"
vips bandjoin "$tmp/disc-rgb.v $tmp/disc-alpha.v" "$tmp/disc-mb.v"
vips copy "$tmp/disc-mb.v" "$tmp/disc.v" --interpretation srgb
vips composite2 "$tmp/square.v" "$tmp/disc.v" "$tmp/logo-f.v" over
vips cast "$tmp/logo-f.v" "$tmp/logo.v" uchar
vips copy "$tmp/logo.v" "$out/logo-transparent.png[compression=9]" --interpretation srgb

# 3. spinner-animated.gif ----------------------------------------------------
# 12 frames of 480x360: a dot orbiting the centre plus the frame number, so
# "which frame did we keep?" is answerable by eye (should be frame 1).
echo "spinner-animated.gif"
frames=()
for i in $(seq 0 11); do
    read -r cx cy < <(awk -v i="$i" 'BEGIN { a = i * 3.14159265 / 6; printf "%d %d\n", 240 + 120 * sin(a), 180 - 120 * cos(a) }')
    solid 480 360 "250 250 250" "$tmp/f-bg.v"
    paint_text "$tmp/f-bg.v" "$(( i + 1 ))" 80 centre 140 "40 40 40" "$tmp/f-num.v"
    disc_alpha 480 360 "$cx" "$cy" 34 "$tmp/f-dot.v"
    solid 480 360 "20 110 230" "$tmp/f-ink.v"
    vips ifthenelse "$tmp/f-dot.v" "$tmp/f-ink.v" "$tmp/f-num.v" "$tmp/frame$i.v" --blend
    frames+=("$tmp/frame$i.v")
done
# Animated images in libvips are one tall strip of frames plus page-height.
# (Pairwise join, not arrayjoin: vips 8.14.1 arrayjoin segfaults on 3+ .v inputs.)
cp "${frames[0]}" "$tmp/strip.v"
for f in "${frames[@]:1}"; do
    vips join "$tmp/strip.v" "$f" "$tmp/strip-next.v" vertical
    mv "$tmp/strip-next.v" "$tmp/strip.v"
done
set_meta "$tmp/strip.v" '    <field type="gint" name="page-height">360</field>
    <field type="gint" name="n-pages">12</field>
    <field type="gint" name="loop">0</field>
    <field type="VipsArrayInt" name="delay">80 80 80 80 80 80 80 80 80 80 80 80 </field>'
vips copy "$tmp/strip.v" "$out/spinner-animated.gif" --interpretation srgb

# 4. photo-webp.webp ---------------------------------------------------------
echo "photo-webp.webp"
synth_photo 2000 1500 2 "$out/photo-webp.webp[Q=75]"

# 5. large-photo.jpg ---------------------------------------------------------
# 12 MP, the size of a current iPhone photo: the main resize/memory case.
echo "large-photo.jpg"
synth_photo 4032 3024 1 "$out/large-photo.jpg[Q=80]"

# 6. clip-vp9.webm -----------------------------------------------------------
# A 5 s 720p VP9/Opus WebM, as browsers record: iOS plays neither the
# container nor the codecs, so it is transcoded to H.264/AAC MP4 and scaled.
echo "clip-vp9.webm"
ffmpeg -v error -y -nostdin \
    -f lavfi -i "testsrc=size=1280x720:rate=30:duration=5" \
    -f lavfi -i "sine=frequency=440:duration=5:sample_rate=48000" \
    -c:v libvpx-vp9 -b:v 0 -crf 40 -deadline good -cpu-used 4 -threads 1 -pix_fmt yuv420p \
    -c:a libopus -b:a 48k -fflags +bitexact -flags:v +bitexact -flags:a +bitexact "$out/clip-vp9.webm"

# 7. jingle.ogg --------------------------------------------------------------
# 8 s of two alternating decaying tones in Ogg Vorbis: transcoded to AAC .m4a.
echo "jingle.ogg"
ffmpeg -v error -y -nostdin \
    -f lavfi -i "aevalsrc=0.2*sin(2*PI*523.25*t)*exp(-2*mod(t\\,0.5))+0.2*sin(2*PI*659.25*t)*exp(-2*mod(t+0.25\\,0.5)):s=44100:d=8" \
    -ac 2 -c:a libvorbis -q:a 3 -fflags +bitexact -flags:a +bitexact "$out/jingle.ogg"

ls -l "$out"
