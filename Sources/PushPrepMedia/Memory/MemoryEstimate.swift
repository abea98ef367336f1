import Foundation
import PushPrepCore

/// How much memory processing one input takes at its peak, above the process's baseline, worked
/// out from its header before anything is decoded: what a scheduler under a memory budget adds
/// up to decide which inputs may run together (issue 16, §2), and what `inspect` shows.
///
/// Every plan carries one (``ImagePlan/memory``, ``VideoPlan/memory``, ``AudioPlan/memory``),
/// made by the functions below from the plan's own inputs. The formulas follow what the
/// decoders hold; their constants were fitted to peaks measured on this machine (2 cores,
/// libvips 8.14, FFmpeg 5.1) with
///
///     scripts/measure-peaks.sh --bin .build/release/pushprep
///
/// which runs `pushprep process INPUT --jobs 1` under `/usr/bin/time -f %M` for generated
/// JPEG/PNG/WebP/TIFF/HEIC/AVIF/BMP/GIF files, H.264/HEVC/VP9 movies and sounds, and
/// `../shared/corpus`, and subtracts the peak of an 8x8 JPEG. `MemoryEstimateTests` checks the
/// estimates stay within 30% of those peaks.
package struct MemoryEstimate: Equatable, Sendable {
    /// Peak bytes above the process's baseline.
    package let bytes: Int
    /// What the estimate is made of, in words, for `inspect`.
    package let basis: String

    /// Clamped to `0...maximum` before the conversion: `Int(_:)` traps on NaN, infinity and
    /// values past `Int.max`, which headers of absurd dimensions could produce.
    package init(bytes: Double, basis: String) {
        self.bytes = bytes.isNaN ? 0 : Int(min(max(bytes, 0), Self.maximum).rounded())
        self.basis = basis
    }

    static let mebibyte = Double(1 << 20)
    /// The largest estimate: 2^62 bytes, far past any budget, exactly representable as a Double.
    static let maximum = Double(1 << 62)

    // MARK: - Images

    /// libvips' own overhead for any image: its thread buffers, caches and the encoder's output
    /// buffer (about 2.5 MiB for the small images of the corpus).
    static let imageFixed = 2.5 * mebibyte
    /// Lines of a full-scale JPEG the resize keeps per unit of shrink: flowers.jpeg (1920x1080)
    /// 8.6 MiB, jpeg-2048 5.6 MiB.
    static let jpegStreamLinesPerShrink = 270.0
    /// Lines of a PNG or TIFF (no shrink while loading) the resize keeps, times the square of
    /// the whole shrink factor: png-6000 (6000x4000 RGB, shrink 4) 27.1 MiB, tiff-6000 29.6 MiB,
    /// a 4096x3072 PNG (shrink 3) 12.3 MiB, png-2048 (shrink 1) 6.0 MiB.
    static let streamLinesPerSquaredShrink = 70.0
    /// Lines kept, in float, when an alpha channel is premultiplied for the resize, whatever the
    /// shrink: pnga-4032 (RGBA) 48.7 MiB, blackbug.png (2048x1536 RGBA) 24.5 MiB.
    static let premultipliedLines = 600.0
    /// A JPEG decoded at 1/2, 1/4 or 1/8 scale keeps about this much of the scaled image:
    /// jpeg-4032 12.6 MiB, jpeg-6000 8.8 MiB, jpeg-9000 14.5 MiB.
    static let jpegScaledShare = 0.75
    /// libwebp decodes the whole image, at 1/n scale (n whole) when it is to shrink: RGBA and
    /// libvips' copy, 8 bytes a pixel: webp-2048 (n = 1) 24.4 MiB, webp-4032 (n = 3) 10.4 MiB,
    /// webp-6000 (n = 4) 9.7 MiB.
    static let webpBytesPerPixel = 8.0
    /// A WebP that needs no resize costs more than its pixels say, up to about 8 MiB (measured,
    /// not explained): webp-1024 14.7 MiB, 4.webp (1024x772) 14.9 MiB, 5_webp_a (300x300) 2.7 MiB.
    static let webpUnscaledExtraPerPixel = 32.0
    static let webpUnscaledExtraMax = 8 * mebibyte
    /// libheif decodes the whole image: YUV planes, the interleaved RGB and the HEVC decoder's
    /// pictures; heic-2048 23.2 MiB, heic-4032 93.7 MiB, heic-9000 419.6 MiB.
    static let heicBytesPerPixel = 6.8
    static let heicFixed = 4 * mebibyte
    /// AVIF through dav1d: a larger fixed pool, fewer bytes per pixel; avif-4032 79.9 MiB,
    /// pitm.avif (4096x800) 39.7 MiB.
    static let avifBytesPerPixel = 5.8
    static let avifFixed = 12 * mebibyte
    /// A BMP is held as file bytes, PushPrep's decoded pixels and libvips' copy of them:
    /// bmp-4032 (24-bit) 98.2 MiB.
    static let bmpCopies = 2.6
    /// Above this many bytes the decoded output stays lazy (``ImageDecodeStep``), so it is not
    /// held in memory.
    static let inMemoryLimit = Double(ImageDecodeStep.inMemoryLimit)
    /// A CMYK image goes to sRGB through lcms (with its embedded profile, or libvips' own), whose
    /// transform and the buffers of the two threads a streamed still runs on cost about this
    /// much: Channel_digital_image_CMYK_color.jpg (500x333) 8.3 MiB, fogra-0-100-100-0.tif
    /// (1000x1000) 9.0 MiB, the same JPEG without a profile 5.5 MiB.
    static let cmykTransform = 4.5 * mebibyte
    /// With renditions to make, a still's pixels are held (decoded at once rather than streamed
    /// into the encoder): a JPEG the loader cannot shrink is then held whole at its own size.
    /// Measured with `pushprep process --platforms ios` against `--platforms ios,android` under
    /// GNU time (peaks above an 8x8 JPEG's, ±3 MiB from run to run): flowers.jpeg (1920x1080)
    /// 6 → 12 MiB; streamed PNGs peak lower held (a 4096x3072 PNG 14 → 9 to 12 MiB), which the
    /// estimate leaves as it is.

    /// The peak for a still or animated image planned as `plan` from `header`, decoded at the
    /// plan's width; `videoWidth` is the movie's width when an animation becomes one.
    static func image(_ header: ImageHeader, plan: ImagePlan, videoWidth: Int) -> MemoryEstimate {
        let estimate = renditions(header, plan: plan, adding: decoded(header, plan: plan, videoWidth: videoWidth))
        guard header.layout.bands - (header.hasAlpha ? 1 : 0) == 4 else { return estimate }
        return MemoryEstimate(bytes: Double(estimate.bytes) + cmykTransform, basis: estimate.basis + ", cmyk to srgb")
    }

    /// `estimate` with the plan's renditions' own pixels: libvips crops, scales and encodes each
    /// from the held picture, about three bytes a pixel of its output, six with an alpha channel
    /// (a transparent one goes down the PNG ladder, whose palette quantiser holds RGBA:
    /// Flag_of_the_Netherlands-alpha.png 8.3 MiB with its Android rendition). (A
    /// second decode, when the attachment's pixels are too small for them, is added by
    /// ``ImagePlan``: the same estimate at the width they need.)
    static func renditions(_ header: ImageHeader, plan: ImagePlan, adding estimate: MemoryEstimate)
        -> MemoryEstimate
    {
        guard !plan.renditions.isEmpty else { return estimate }
        var bytes = Double(estimate.bytes)
        for spec in plan.renditions {
            let width = spec.neededWidth(sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight)
            bytes += Double(min(width, spec.width) * min(spec.height, header.uprightHeight)) * (header.hasAlpha ? 6 : 3)
        }
        return MemoryEstimate(bytes: bytes, basis: estimate.basis)
    }

    /// ``image(_:plan:videoWidth:)`` before a CMYK image's colour transform.
    private static func decoded(_ header: ImageHeader, plan: ImagePlan, videoWidth: Int) -> MemoryEstimate {
        let layout = header.layout
        let width = Double(header.width)
        let height = Double(header.height)
        let pixels = width * height
        let outWidth = Double(max(1, plan.width))
        let ratio = Double(header.uprightWidth) / outWidth
        let outHeight = (Double(header.uprightHeight) / max(ratio, 1)).rounded(.up)
        let out = outWidth * outHeight * (header.hasAlpha ? 4 : 3)

        if header.isAnimated {
            return animation(header, plan: plan, videoWidth: videoWidth)
        }
        let bands = Double(layout.bands)
        // What the resize keeps of a source the loader could not shrink: a band of lines, in
        // float (4 bytes a sample) when an alpha channel is premultiplied.
        // An image with an alpha channel is held whatever the renditions (``ImageDecodeStep``).
        let held = !plan.renditions.isEmpty && !header.hasAlpha
        func stream() -> Double {
            guard ratio > 1 else { return 0 }
            if header.hasAlpha { return width * bands * 4 * premultipliedLines }
            let shrink = ratio.rounded(.down)
            return width * bands * Double(layout.sampleBytes) * streamLinesPerSquaredShrink * shrink * shrink
        }

        switch layout.type {
        case .jpeg:
            // libjpeg scales by 1/2, 1/4, 1/8 while decoding: the largest that stays above the width.
            let shrink = ratio >= 8 ? 8.0 : ratio >= 4 ? 4.0 : ratio >= 2 ? 2.0 : 1.0
            let scaled = (width / shrink).rounded(.up) * (height / shrink).rounded(.up) * bands
            var bytes = imageFixed + out
            var basis: String
            if shrink > 1 {
                bytes += jpegScaledShare * scaled
                basis = "jpeg decoded at 1/\(Int(shrink)) scale"
            } else {
                bytes += ratio <= 1 ? 0 : width * bands * jpegStreamLinesPerShrink * ratio
                basis = "jpeg decoded at full scale, streamed"
                if held && ratio > 1 {
                    bytes += pixels * bands
                    basis = "jpeg decoded at full scale, held"
                }
            }
            if layout.interlaced {
                // A progressive JPEG keeps every DCT coefficient (2 bytes) of the whole image,
                // whatever the scale: pjpeg-9000 195.6 MiB, pjpeg-4032 47.7 MiB, pjpeg-2048 15.1 MiB.
                let components: Double =
                    switch (layout.bands, layout.chromaSubsampling) {
                    case (1, _): 1
                    case (_, "4:2:0"): 1.5
                    case (_, "4:2:2"): 2
                    default: bands
                    }
                bytes += pixels * components * 2
                basis = "progressive " + basis + ", DCT coefficients of the whole image"
            }
            return MemoryEstimate(bytes: bytes, basis: basis)
        case .png where layout.interlaced:
            // Adam7 needs every pass before the first line is whole; the resize then reads from
            // that image, without a band of its own: pngi-4032 40.6 MiB, a 2048x1536 10.8 MiB.
            return MemoryEstimate(
                bytes: imageFixed + pixels * bands * Double(layout.sampleBytes),
                basis: "interlaced png decoded whole")
        case .webp:
            let shrink = max(1, ratio.rounded(.down))
            let scaled = (width / shrink).rounded(.up) * (height / shrink).rounded(.up)
            let unscaled = ratio <= 1 ? min(webpUnscaledExtraMax, webpUnscaledExtraPerPixel * pixels) : 0
            return MemoryEstimate(
                bytes: webpBytesPerPixel * scaled + unscaled,
                basis: shrink > 1 ? "webp decoded whole at 1/\(Int(shrink)) scale" : "webp decoded whole")
        case .heic:
            return MemoryEstimate(bytes: heicFixed + heicBytesPerPixel * pixels, basis: "heic decoded whole")
        case .avif:
            return MemoryEstimate(bytes: avifFixed + avifBytesPerPixel * pixels, basis: "avif decoded whole")
        case .bmp:
            return MemoryEstimate(
                bytes: imageFixed + out + bmpCopies * pixels * bands, basis: "bmp decoded whole by PushPrep")
        default:
            // PNG, TIFF, a GIF's single frame: line by line, no shrink while loading.
            return MemoryEstimate(
                bytes: imageFixed + out + stream(),
                basis: "\(layout.type.rawValue) streamed line by line")
        }
    }

    /// An animation (libvips' fixed overhead is lost in the frames' share): every frame decoded at the width the plan's header-only checks arrive at
    /// (the GIF memory budget shrinks it before anything is decoded), or the frames of the movie
    /// it becomes. gif-480x360-50 peaks 12.9 MiB (decoded at 274 px wide), gif-480x360-200
    /// 196.4 MiB and gif-1280x720-40 111.5 MiB (both become movies), webpanim-480x360-50 48.4 MiB.
    private static func animation(_ header: ImageHeader, plan: ImagePlan, videoWidth: Int) -> MemoryEstimate {
        let frames = Double(header.frames)
        // libwebp's animation decoder composes every frame on a canvas of full size first.
        let canvas =
            header.layout.type == .webp ? Double(header.uprightWidth * header.uprightHeight) * 4 * frames : 0
        func height(at width: Int) -> Double { Double(ImagePipeline.animationHeight(header, width: width)) }
        switch ImagePipeline.animationStart(header, plan: plan) {
        case .gif(let width):
            let decoded = Double(width) * height(at: width) * 4 * frames
            return MemoryEstimate(
                bytes: canvas + decoded, basis: "\(header.frames) frames decoded at \(width) px wide")
        case .movie:
            let width = min(videoWidth, header.uprightWidth)
            let rgba = Double(width) * height(at: width) * 4 * frames
            // The RGBA frames when small enough to be held, then the RGB copy libvips writes
            // and the per-frame arrays made from it (``AnimationFrames``).
            let held = rgba <= inMemoryLimit ? rgba : 0
            return MemoryEstimate(
                bytes: canvas + held + 2 * rgba * 3 / 4,
                basis: "\(header.frames) frames decoded at \(width) px wide for a movie")
        }
    }

    // MARK: - Movies and sounds

    /// libav's demuxer, the H.264 encoder at the preview's size (at most 720 px wide by default),
    /// the scaler and the poster: h264-1280x720 (copied) 62.4 MiB; the rest is the decoder's pictures.
    static let videoFixed = 45 * mebibyte

    /// Pictures an H.264 or HEVC decoder holds: its reference frames and one in flight per
    /// frame thread (h264-1920x1080 82.7 MiB, h264-3840x2160 186.7 MiB, hevc-3840x2160
    /// 199.5 MiB at 2 threads); other codecs (VP9, 61.6 MiB at 1080p) hold fewer references.
    static func heldPictures(codec: String, threads: Int) -> Double {
        let threads = Double(max(1, threads))
        return ["h264", "hevc"].contains(codec) ? 8 + 2 * threads : 1 + 2 * threads
    }

    /// Threads libav's decoders and x264 use (`thread_count = 0`: one per core).
    package static var mediaThreads: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The peak for a movie whose main video stream is `video`, decoded with `threads` threads.
    static func video(_ video: VideoStreamInfo, threads: Int = mediaThreads) -> MemoryEstimate {
        let sampleBytes = video.bitDepth > 8 ? 2.0 : 1.0
        let chroma = video.is420 ? 1.5 : 3
        let picture = Double(video.width * video.height) * chroma * sampleBytes
        let pictures = heldPictures(codec: video.codec, threads: threads)
        return MemoryEstimate(
            bytes: videoFixed + pictures * picture,
            basis: "\(Int(pictures)) decoded \(video.codec) pictures of \(video.width)x\(video.height)")
    }

    /// A sound: the demuxer, a decoded frame and the AAC encoder; audio-60s.m4a 0.9 MiB, the
    /// MP3, FLAC and WAV files under 0.1 MiB.
    static let audio = MemoryEstimate(bytes: 1 * mebibyte, basis: "audio frames")
}
