internal import CVips
internal import CVipsShims
package import PushPrepCore

/// One platform's picture to make from a source: a box (2:1 for Android's big picture and the
/// web image, square for the web icon), where the crop falls, and a byte cap.
package struct RenditionSpec: Sendable, Equatable {
    /// Which rendition.
    package let key: Renditions.Key
    /// The largest output; the picture is never upscaled beyond its source.
    package let width: Int
    package let height: Int
    /// The byte cap: the quality steps down, then the size, until it fits.
    package let maxBytes: Int
    /// The JPEG quality to start from.
    package let quality: Int
    /// Where the crop falls; `fit` keeps the whole picture (a square icon is then centred).
    package let crop: CropStrategy
    /// A focal point that overrides `crop`'s position.
    package let focus: FocalPoint?

    /// The renditions `settings` asks for, in ``Renditions/Key`` order: none for `ios` alone.
    package static func specs(for settings: ProcessingSettings) -> [RenditionSpec] {
        var specs: [RenditionSpec] = []
        if settings.platforms.contains(.android) {
            specs.append(
                RenditionSpec(
                    key: .android, width: settings.androidWidth, height: settings.androidWidth / 2,
                    maxBytes: settings.androidMaxBytes, quality: settings.quality, crop: settings.crop,
                    focus: settings.focus))
        }
        if settings.platforms.contains(.web) {
            specs.append(
                RenditionSpec(
                    key: .web, width: settings.webWidth, height: settings.webWidth / 2, maxBytes: WebRules.maxBytes,
                    quality: settings.quality, crop: settings.crop, focus: settings.focus))
            specs.append(
                RenditionSpec(
                    key: .webIcon, width: WebRules.iconSize, height: WebRules.iconSize, maxBytes: WebRules.maxBytes,
                    quality: settings.quality, crop: settings.crop == .fit ? .centre : settings.crop,
                    focus: settings.focus))
        }
        return specs
    }

    /// The width a picture of a `sourceWidth`×`sourceHeight` source must be decoded at for this
    /// rendition to be as large as the source allows.
    func neededWidth(sourceWidth: Int, sourceHeight: Int) -> Int {
        let region = Self.region(width: sourceWidth, height: sourceHeight, box: self)
        let scale = outputScale(regionWidth: region.width, regionHeight: region.height)
        return min(sourceWidth, Int((Double(sourceWidth) * scale).rounded(.up)))
    }

    /// The scale from a region to the output: into the box, never up.
    func outputScale(regionWidth: Int, regionHeight: Int) -> Double {
        min(1, Double(width) / Double(max(1, regionWidth)), Double(height) / Double(max(1, regionHeight)))
    }

    /// The largest part of a `width`×`height` picture with the box's shape (the whole picture
    /// for `fit`).
    static func region(width: Int, height: Int, box: RenditionSpec) -> (width: Int, height: Int) {
        guard box.crop != .fit else { return (width, height) }
        let ratio = Double(box.width) / Double(box.height)
        if Double(width) / Double(height) > ratio {
            return (min(width, max(1, Int((Double(height) * ratio).rounded()))), height)
        }
        return (width, min(height, max(1, Int((Double(width) / ratio).rounded()))))
    }
}

/// A rendition made: its encoded bytes and where in the source it came from.
package struct RenderedRendition: Sendable {
    package let key: Renditions.Key
    package let bytes: [UInt8]
    package let format: ImageOutputFormat
    package let width: Int
    package let height: Int
    /// The rectangle of the source (upright) it shows, in source pixels.
    package let crop: CropRectangle
    /// What was done, one line.
    package let operation: String
}

/// The renditions of one source: those made, and a warning for each that could not be.
package struct RenditionOutcome: Sendable {
    package var rendered: [RenderedRendition] = []
    package var warnings: [ProcessingWarning] = []

    package init() {}
}

/// Makes the platforms' renditions (Android's big picture, the web image and icon) from a
/// decoded picture: crops it to the box's shape where ``RenditionSpec/crop`` says (libvips'
/// attention strategy, the centre, or a focal point), scales it into the box and encodes it
/// under the byte cap, JPEG (PNG when the transparency is real) with the quality stepped
/// down, then the size.
///
/// The picture is decoded once for all renditions: ``ImagePipeline`` hands over the pixels it
/// decoded for the iOS attachment when they are large enough, and otherwise (a panorama wider
/// than 2:1, a movie's poster, an animation's first frame) ``make(from:specs:maxPixels:)``
/// decodes the source once at the largest size any rendition needs.
package enum RenditionStep {
    /// A rendition is never shrunk below this width to fit its cap: it is left out, with a warning.
    static let minimumWidth = 160

    /// The width the source must be decoded at for every one of `specs`.
    static func neededWidth(_ specs: [RenditionSpec], sourceWidth: Int, sourceHeight: Int) -> Int {
        specs.map { $0.neededWidth(sourceWidth: sourceWidth, sourceHeight: sourceHeight) }.max() ?? 0
    }

    /// Decodes `input` (an animation's first frame) once at the largest size `specs` need, then
    /// makes each rendition from it.
    package static func make(
        from input: ImageInput, specs: [RenditionSpec], maxPixels: Int
    ) throws(PushPrepError) -> RenditionOutcome {
        guard !specs.isEmpty else { return RenditionOutcome() }
        do throws(PushPrepError) {
            return try decodeAndMake(from: input, specs: specs, maxPixels: maxPixels)
        } catch {
            // A picture the renditions cannot be made from (a poster that does not decode, a
            // frame over the pixel cap) costs the renditions, never the attachment.
            var outcome = RenditionOutcome()
            outcome.warnings = specs.map {
                ProcessingWarning.renditionNotMade(rendition: $0.key.rawValue, reason: error.message)
            }
            return outcome
        }
    }

    /// ``make(from:specs:maxPixels:)``'s decode, throwing.
    private static func decodeAndMake(
        from input: ImageInput, specs: [RenditionSpec], maxPixels: Int
    ) throws(PushPrepError) -> RenditionOutcome {
        try VipsRuntime.start()
        let header = try ImageHeaderStep.run(input, maxPixels: maxPixels)
        let width = neededWidth(specs, sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight)
        let decoded = try ImageDecodeStep.run(
            input, header: header, width: max(1, width), maxPixels: maxPixels, reads: .several, firstFrameOnly: true)
        let picture = try AlphaStep.run(decoded.image)
        return try make(
            from: picture.image, transparent: picture.hasTransparency, sourceWidth: header.uprightWidth,
            sourceHeight: header.uprightHeight, specs: specs)
    }

    /// Makes every one of `specs` from `picture`, the upright sRGB pixels of a
    /// `sourceWidth`×`sourceHeight` source at some scale (with an alpha channel only when
    /// `transparent`). A rendition that cannot be made is a warning, not a failure.
    static func make(
        from picture: VipsImageRef, transparent: Bool, sourceWidth: Int, sourceHeight: Int, specs: [RenditionSpec]
    ) throws(PushPrepError) -> RenditionOutcome {
        var outcome = RenditionOutcome()
        for spec in specs {
            do throws(PushPrepError) {
                outcome.rendered.append(
                    try make(
                        spec, from: picture, transparent: transparent, sourceWidth: sourceWidth,
                        sourceHeight: sourceHeight))
            } catch {
                // Too large for its cap at any size, or a crop or encoding libvips refused: that
                // platform goes without a picture; the attachment is not affected.
                outcome.warnings.append(
                    ProcessingWarning.renditionNotMade(rendition: spec.key.rawValue, reason: error.message))
            }
        }
        return outcome
    }

    /// One rendition from `picture`. The crop is decided in the source's pixels (so that its
    /// shape is the box's exactly there), then taken from the picture at its scale.
    static func make(
        _ spec: RenditionSpec, from picture: VipsImageRef, transparent: Bool, sourceWidth: Int, sourceHeight: Int
    ) throws(PushPrepError) -> RenderedRendition {
        let pictureWidth = picture.width
        let pictureHeight = picture.height
        let scale = Double(pictureWidth) / Double(max(1, sourceWidth))
        let crop = try sourceCrop(
            spec, picture: picture, scale: scale, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        // The same rectangle in the picture's pixels.
        let left = min(pictureWidth - 1, Int((Double(crop.rectangle.x) * scale).rounded()))
        let top = min(pictureHeight - 1, Int((Double(crop.rectangle.y) * scale).rounded()))
        let region = (
            width: min(pictureWidth - left, max(1, Int((Double(crop.rectangle.width) * scale).rounded()))),
            height: min(pictureHeight - top, max(1, Int((Double(crop.rectangle.height) * scale).rounded())))
        )
        let cropped: VipsImageRef
        if region.width == pictureWidth && region.height == pictureHeight {
            cropped = picture
        } else {
            cropped = try VipsImageRef.make(.corruptInput, "cannot crop the picture") {
                cvipsshims_extract_area(
                    picture.pointer, $0, Int32(left), Int32(top), Int32(region.width), Int32(region.height))
            }
        }

        let format: ImageOutputFormat = transparent ? .png : .jpeg
        let ladder = ImageEncodeStep.ladder(for: format, quality: spec.quality)
        // Into the box, never larger than the crop is in the source, nor than the picture holds.
        var outWidth = min(
            region.width,
            Int(
                (Double(crop.rectangle.width)
                    * spec.outputScale(regionWidth: crop.rectangle.width, regionHeight: crop.rectangle.height))
                    .rounded()))
        var smallest = (bytes: 0, width: 0)
        while true {
            let outHeight =
                spec.crop == .fit
                ? max(
                    1,
                    min(region.height, Int((Double(outWidth) * Double(region.height) / Double(region.width)).rounded()))
                )
                : max(1, Int((Double(outWidth) * Double(spec.height) / Double(spec.width)).rounded()))
            let resized: VipsImageRef
            if outWidth == region.width && outHeight == region.height {
                resized = cropped
            } else {
                // A quarter pixel high, so that the rounding never comes out a pixel short.
                let hscale = (Double(outWidth) + 0.25) / Double(region.width)
                let vscale = (Double(outHeight) + 0.25) / Double(region.height)
                let scaled = try VipsImageRef.make(.corruptInput, "cannot resize the picture") {
                    cvipsshims_resize(cropped.pointer, $0, hscale, vscale)
                }
                resized = try exactly(scaled, width: outWidth, height: outHeight)
            }
            for attempt in ladder {
                let bytes = try ImageEncodeStep.encode(resized, attempt)
                smallest = (bytes.count, outWidth)
                guard bytes.count <= spec.maxBytes else { continue }
                let quality = attempt.quality.map { " quality \($0)" } ?? ""
                let rectangle = crop.rectangle
                return RenderedRendition(
                    key: spec.key, bytes: bytes, format: format, width: resized.width, height: resized.height,
                    crop: rectangle,
                    operation:
                        "\(spec.key.rawValue) rendition: \(crop.how) \(rectangle.width)x\(rectangle.height) at"
                        + " (\(rectangle.x),\(rectangle.y)), \(resized.width)x\(resized.height)"
                        + " \(format.rawValue)\(quality)")
            }
            let next = Int(
                Double(outWidth) * ImagePipeline.shrinkFactor(goal: spec.maxBytes, reached: smallest.bytes, margin: 0.9)
            )
            guard next >= minimumWidth else {
                throw PushPrepError(
                    .cannotFit,
                    "no \(format.rawValue) fits in \(spec.maxBytes) bytes (smallest: \(smallest.bytes) bytes at"
                        + " \(smallest.width) px wide)")
            }
            outWidth = next
        }
    }

    /// The part of the source the rendition shows, in source pixels, with the box's shape:
    /// centred on the focal point, the attention centre (found in `picture`, the source at
    /// `scale`) or the middle, kept inside the source; and how it was chosen, for the operations.
    private static func sourceCrop(
        _ spec: RenditionSpec, picture: VipsImageRef, scale: Double, sourceWidth: Int, sourceHeight: Int
    ) throws(PushPrepError) -> (rectangle: CropRectangle, how: String) {
        let region = RenditionSpec.region(width: sourceWidth, height: sourceHeight, box: spec)
        guard region.width < sourceWidth || region.height < sourceHeight else {
            return (CropRectangle(x: 0, y: 0, width: sourceWidth, height: sourceHeight), "kept")
        }
        let centre: (x: Double, y: Double)
        let how: String
        if let focus = spec.focus {
            centre = (focus.x * Double(sourceWidth), focus.y * Double(sourceHeight))
            how = "cropped at focus \(focus)"
        } else {
            switch spec.crop {
            case .attention:
                let width = min(picture.width, max(1, Int((Double(region.width) * scale).rounded())))
                let height = min(picture.height, max(1, Int((Double(region.height) * scale).rounded())))
                var x: Int32 = 0
                var y: Int32 = 0
                try vipsCall(.corruptInput, "cannot find the picture's centre of attention") {
                    cvipsshims_attention(picture.pointer, Int32(width), Int32(height), &x, &y)
                }
                centre = (Double(x) / scale, Double(y) / scale)
                how = "cropped by attention"
            case .centre, .fit:
                centre = (Double(sourceWidth) / 2, Double(sourceHeight) / 2)
                how = "cropped at the centre"
            }
        }
        let left = Int((centre.x - Double(region.width) / 2).rounded())
        let top = Int((centre.y - Double(region.height) / 2).rounded())
        let rectangle = CropRectangle(
            x: min(max(0, left), sourceWidth - region.width), y: min(max(0, top), sourceHeight - region.height),
            width: region.width, height: region.height)
        return (rectangle, how)
    }

    /// `image` cut by the pixel of rounding the resize may add to exactly `width`×`height`
    /// (the resize aims a quarter pixel high, so it is never short).
    private static func exactly(_ image: VipsImageRef, width: Int, height: Int) throws(PushPrepError) -> VipsImageRef {
        if image.width == width && image.height == height { return image }
        guard image.width >= width && image.height >= height else {
            throw PushPrepError(
                .corruptInput, "resizing gave \(image.width)x\(image.height), not \(width)x\(height)")
        }
        return try VipsImageRef.make(.corruptInput, "cannot crop the picture") {
            cvipsshims_extract_area(image.pointer, $0, 0, 0, Int32(width), Int32(height))
        }
    }
}
