internal import CVips
internal import CVipsShims
import PushPrepCore

/// Reductions for an animation over budget. libvips stores the frames of an animation as one
/// tall image (frames stacked vertically) with `page-height`, `delay` and `loop` metadata.
enum AnimationStep {
    /// Keeps every `keepEvery`-th frame; each kept frame lasts as long as the frames it stands
    /// for, so the animation keeps its speed.
    static func dropFrames(_ image: VipsImageRef, keepEvery: Int) throws(PushPrepError) -> VipsImageRef {
        let pageHeight = image.int(VIPS_META_PAGE_HEIGHT) ?? image.height
        let frames = max(1, image.height / max(1, pageHeight))
        let delays = image.intArray("delay") ?? Array(repeating: 100, count: frames)
        var kept: [VipsImageRef] = []
        var keptDelays: [Int] = []
        for first in stride(from: 0, to: frames, by: keepEvery) {
            let frame = try VipsImageRef.make(.corruptInput, "cannot extract frame \(first)") {
                cvipsshims_extract_area(
                    image.pointer, $0, 0, Int32(first * pageHeight), Int32(image.width), Int32(pageHeight))
            }
            kept.append(frame)
            let span = first..<min(frames, first + keepEvery)
            keptDelays.append(span.reduce(0) { $0 + (delays.indices.contains($1) ? delays[$1] : 100) })
        }
        var pointers: [UnsafeMutablePointer<VipsImage>?] = kept.map { $0.pointer }
        let joined = try VipsImageRef.make(.corruptInput, "cannot join frames") { out in
            pointers.withUnsafeMutableBufferPointer {
                cvipsshims_arrayjoin_vertical($0.baseAddress, Int32(kept.count), out)
            }
        }
        let result = try VipsImageRef.make(.corruptInput, "cannot copy frames") { cvipsshims_copy(joined.pointer, $0) }
        result.setInt(VIPS_META_PAGE_HEIGHT, pageHeight)
        result.setInt(VIPS_META_N_PAGES, kept.count)
        result.setIntArray("delay", keptDelays)
        if let loop = image.int("loop") { result.setInt("loop", loop) }
        return result
    }

    /// The first frame as a still image, without animation metadata.
    static func firstFrame(_ image: VipsImageRef) throws(PushPrepError) -> VipsImageRef {
        let pageHeight = image.int(VIPS_META_PAGE_HEIGHT) ?? image.height
        let frame = try VipsImageRef.make(.corruptInput, "cannot extract the first frame") {
            cvipsshims_extract_area(image.pointer, $0, 0, 0, Int32(image.width), Int32(pageHeight))
        }
        let still = try VipsImageRef.make(.corruptInput, "cannot copy the first frame") {
            cvipsshims_copy(frame.pointer, $0)
        }
        for name in [VIPS_META_PAGE_HEIGHT, VIPS_META_N_PAGES, "delay", "loop", "gif-delay", "gif-loop"] {
            still.remove(name)
        }
        return still
    }

    /// Number of frames of an image in libvips' stacked layout.
    static func frameCount(_ image: VipsImageRef) -> Int {
        guard let pageHeight = image.int(VIPS_META_PAGE_HEIGHT), pageHeight > 0 else { return 1 }
        return max(1, image.height / pageHeight)
    }
}
