internal import CVips
internal import CVipsShims
package import PushPrepCore

/// An animation decoded to plain RGB frames, for the movie encoder.
package struct AnimationFrames {
    /// One RGB buffer per frame, top-down rows.
    package let frames: [[UInt8]]
    package let width: Int
    package let height: Int
    /// Milliseconds each frame is shown.
    package let delays: [Int]

    /// Decodes every frame at `width` (never upscaled), with transparency flattened onto
    /// white: a movie has no alpha channel.
    package static func decode(_ input: ImageInput, header: ImageHeader, width: Int, maxPixels: Int)
        throws(PushPrepError)
        -> AnimationFrames
    {
        try VipsRuntime.start()
        let decoded = try ImageDecodeStep.run(
            input, header: header, width: min(width, header.uprightWidth), maxPixels: maxPixels)
        var image = decoded.image
        if image.hasAlpha {
            let withAlpha = image
            image = try VipsImageRef.make(.corruptInput, "cannot flatten the animation") {
                cvipsshims_flatten_white(withAlpha.pointer, $0)
            }
            image = try image.cast(VIPS_FORMAT_UCHAR, "cannot convert the animation to 8 bits")
        }
        let pageHeight = decoded.image.int(VIPS_META_PAGE_HEIGHT) ?? image.height
        let count = max(1, image.height / max(1, pageHeight))
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw PushPrepError(.corruptInput, "cannot decode the animation: \(takeVipsError())")
        }
        defer { g_free(memory) }
        let bands = image.bands
        let frameBytes = image.width * pageHeight * bands
        guard bands == 3, size >= frameBytes * count else {
            throw PushPrepError(.corruptInput, "unexpected animation layout (\(bands) bands, \(size) bytes)")
        }
        let all = UnsafeRawBufferPointer(start: memory, count: size)
        let frames = (0..<count).map { Array(all[($0 * frameBytes)..<(($0 + 1) * frameBytes)]) }
        let delays = decoded.image.intArray("delay") ?? []
        return AnimationFrames(
            frames: frames,
            width: image.width,
            height: pageHeight,
            delays: (0..<count).map { delays.indices.contains($0) && delays[$0] > 0 ? delays[$0] : 100 }
        )
    }
}
