internal import CVips
internal import CVipsShims
import PushPrepCore

/// Step 3 of the image pipeline: decide whether the transparency is real. An alpha channel
/// that is opaque everywhere is dropped, so the image can be a (much smaller) JPEG.
enum AlphaStep {
    struct Output {
        let image: VipsImageRef
        /// Whether some pixel is not fully opaque.
        let hasTransparency: Bool
        let operations: [String]
    }

    static func run(_ image: VipsImageRef) throws(PushPrepError) -> Output {
        guard image.hasAlpha else { return Output(image: image, hasTransparency: false, operations: []) }
        let bands = image.bands
        let alpha = try VipsImageRef.make(.corruptInput, "cannot read the alpha channel") {
            cvipsshims_extract_band(image.pointer, $0, Int32(bands - 1), 1)
        }
        var minimum = 0.0
        try vipsCall(.corruptInput, "cannot read the alpha channel") { cvipsshims_min(alpha.pointer, &minimum) }
        if minimum < 255 {
            return Output(image: image, hasTransparency: true, operations: [])
        }
        let opaque = try VipsImageRef.make(.corruptInput, "cannot drop the alpha channel") {
            cvipsshims_extract_band(image.pointer, $0, 0, Int32(bands - 1))
        }
        return Output(image: opaque, hasTransparency: false, operations: ["dropped fully opaque alpha channel"])
    }
}
