#!/usr/bin/env bash
# Synthesises a deterministic, photo-like image with the vips CLI only.
#
#   scripts/synth-photo.sh WIDTH HEIGHT SEED OUTPUT[save-options]
#   e.g. scripts/synth-photo.sh 4032 3024 1 out.jpg[Q=80]
#
# Also sourced by make-samples.sh and bench.sh for the synth_photo function.
#
# Why not a flat colour or a test pattern: encoders and resamplers behave very
# differently on smooth synthetic content (tiny files, trivial DCT blocks), so
# size and speed numbers would be meaningless. A sum of upscaled noise octaves
# gives soft "clouds/terrain" structure, a vertical gradient gives a sky-like
# ramp, and fine gaussian grain gives the sensor-noise entropy that makes real
# photos cost 1-1.5 MB per 12 MP at Q80. Every noise source has a fixed seed,
# so the same arguments produce the same bytes.

# synth_photo WIDTH HEIGHT SEED OUTPUT
synth_photo() {
    local w=$1 h=$2 seed=$3 out=$4
    local tmp
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/synth-photo.XXXXXX")
    # Subshell so the EXIT trap cleans up without clobbering the caller's trap.
    (
        trap 'rm -rf "$tmp"' EXIT
        set -euo pipefail

        # Three noise octaves: coarse blobs, mid detail, fine texture.
        # Generate each a little larger than needed so the upscale covers
        # the full frame, then crop to the exact size.
        local octave=0 factor sigma ow oh layers=()
        for spec in "128 50" "32 14" "8 6"; do
            read -r factor sigma <<<"$spec"
            ow=$(( w / factor + 2 ))
            oh=$(( h / factor + 2 ))
            vips gaussnoise "$tmp/n$octave.v" "$ow" "$oh" \
                --mean 0 --sigma "$sigma" --seed $(( seed * 7 + octave ))
            vips resize "$tmp/n$octave.v" "$tmp/u$octave.v" "$factor" --kernel cubic
            vips extract_area "$tmp/u$octave.v" "$tmp/c$octave.v" 0 0 "$w" "$h"
            layers+=("$tmp/c$octave.v")
            octave=$(( octave + 1 ))
        done
        vips sum "${layers[*]}" "$tmp/texture.v"

        # Vertical ramp: y / h in [0, 1].
        vips xyz "$tmp/xy.v" "$w" "$h"
        vips extract_band "$tmp/xy.v" "$tmp/y.v" 1
        vips linear "$tmp/y.v" "$tmp/ramp.v" "$(awk -v h="$h" 'BEGIN{printf "%.10f", 1/h}')" 0

        # Sky-ish top fading to earthy bottom; the seed nudges the palette so
        # a batch of benchmark images is not byte-for-byte similar content.
        local r0=$(( 90 + seed * 37 % 60 )) g0=$(( 130 + seed * 23 % 50 )) b0=$(( 190 + seed * 11 % 50 ))
        vips linear "$tmp/ramp.v" "$tmp/sky.v" \
            " $(( 120 - r0 )) $(( 95 - g0 )) $(( 60 - b0 ))" "$r0 $g0 $b0"

        # Texture modulates all bands (luma-like detail), slightly warmer in red.
        vips linear "$tmp/texture.v" "$tmp/tex3.v" "1.0 0.9 0.75" "0 0 0"
        vips add "$tmp/sky.v" "$tmp/tex3.v" "$tmp/scene.v"

        # Fine grain: per-band independent noise, like a real sensor.
        vips gaussnoise "$tmp/g.v" "$w" "$h" --mean 0 --sigma 5 --seed $(( seed * 7 + 5 ))
        vips gaussnoise "$tmp/g2.v" "$w" "$h" --mean 0 --sigma 3 --seed $(( seed * 7 + 6 ))
        vips bandjoin "$tmp/g.v $tmp/g2.v $tmp/g.v" "$tmp/grain.v"
        vips add "$tmp/scene.v" "$tmp/grain.v" "$tmp/photo.v"

        # cast clips to 0..255; tag as sRGB so savers treat it as a photo.
        vips cast "$tmp/photo.v" "$tmp/photo8.v" uchar
        vips copy "$tmp/photo8.v" "$out" --interpretation srgb
    )
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    if [[ $# -ne 4 ]]; then
        echo "usage: $0 WIDTH HEIGHT SEED OUTPUT[save-options]" >&2
        exit 2
    fi
    synth_photo "$@"
fi
