package import PushPrepCore

/// An image made ready for a notification.
package struct ProcessedImage {
    package let bytes: [UInt8]
    package let format: ImageOutputFormat
    package let width: Int
    package let height: Int
    package let frames: Int
    package let header: ImageHeader
    package let operations: [String]
    package let warnings: [ProcessingWarning]
    /// The plan the pipeline ran (the one `inspect` prints).
    package let plan: ImagePlan
    /// The platforms' renditions, from the same decode where it is large enough.
    package var renditions = RenditionOutcome()
}

/// The image pipeline: the header, then an ``ImagePlan`` made from it, then an ordered list of
/// small steps (decode/resize/orient/colour → alpha → encode) run as the plan says, repeated at
/// smaller sizes until the output fits the byte limit.
///
/// Runs synchronously on the calling thread, which must be one that may block (a worker
/// thread, not a Swift concurrency executor): libvips calls are blocking.
package enum ImagePipeline {
    /// Smallest width a still image is shrunk to before giving up with `cannot_fit`.
    static let minimumWidth = 32

    /// What the pipeline produced: an image, or the finding that an animation should be sent
    /// as a movie (`--gif-as-video`), which the caller hands to the video encoder.
    package enum Outcome {
        case image(ProcessedImage)
        case animationNeedsVideo(ImageHeader, reason: String)
    }

    /// Processes an image; an animation that would need a movie is reduced or sent as a still
    /// instead (as with `--gif-as-video never`).
    static func process(_ input: ImageInput, settings: ProcessingSettings, control: ProcessingControl? = nil)
        throws(PushPrepError) -> ProcessedImage
    {
        var settings = settings
        settings.gifAsVideo = .never
        guard case .image(let image) = try run(input, settings: settings, control: control) else {
            throw PushPrepError(.cannotFit, "the animation does not fit as an image")
        }
        return image
    }

    /// Runs the steps. A stopped `control` ends the run between decoding and encoding, and
    /// between attempts (libvips calls themselves cannot be interrupted). `admit` is given the
    /// plan's memory estimate before anything is decoded, and may wait (a memory budget).
    package static func run(
        _ input: ImageInput, settings: ProcessingSettings, control: ProcessingControl? = nil,
        admit: (MemoryEstimate) throws(PushPrepError) -> Void = { _ in }
    ) throws(PushPrepError) -> Outcome {
        try VipsRuntime.start()
        let header = try ImageHeaderStep.run(input, maxPixels: settings.maxPixels)
        let plan = ImagePlan(header: header, settings: settings)
        try admit(plan.memory)
        try control?.check()
        let outcome = try run(plan, input: input, header: header, control: control)
        guard case .image(var image) = outcome, !plan.renditions.isEmpty, image.renditions.rendered.isEmpty,
            image.renditions.warnings.isEmpty
        else { return outcome }
        // Not made from the attachment's pixels (an animation, a picture too small for a
        // rendition): from the source, decoded once more at the largest size they need.
        try control?.check()
        image.renditions = try RenditionStep.make(from: input, specs: plan.renditions, maxPixels: plan.maxPixels)
        return .image(image)
    }

    /// Carries out `plan` for `input` (whose header is `header`): the planned width first, and
    /// when nothing on the ladder fits, smaller widths, then for an animation fewer frames, a
    /// still or a movie, as the plan's fallback says.
    private static func run(
        _ plan: ImagePlan, input: ImageInput, header: ImageHeader, control: ProcessingControl?
    ) throws(PushPrepError) -> Outcome {
        if case .movie(let reason) = plan.output {
            return .animationNeedsVideo(header, reason: reason)
        }
        let limit = plan.limit
        let startWidth = plan.width
        var width = startWidth
        var keepEvery = 1
        var asStill = !header.isAnimated
        var reductions: [String] = []
        var warnings: [ProcessingWarning] = []

        while true {
            // The goal this size missed: an animation's memory budget (worked out from the header,
            // so an animation too large is never decoded at this size), else the byte limit.
            let missed: (goal: String, factor: Double)
            var lastAttempt = (smallest: 0, format: ImageOutputFormat.jpeg)
            let animationBytes = asStill ? 0 : decodedAnimationBytes(header, width: width, keepEvery: keepEvery)
            if animationBytes > plan.gifMaxMemory {
                // Decoded size grows exactly with the pixel count.
                missed = (
                    "\(plan.gifMaxMemory) bytes of decoded frames",
                    shrinkFactor(goal: plan.gifMaxMemory, reached: animationBytes, margin: 0.97)
                )
            } else {
                let attempt = try encode(
                    input, plan: plan, header: header, width: width, keepEvery: keepEvery, asStill: asStill,
                    control: control, reductions: reductions, warnings: warnings)
                if let image = attempt.fitted { return .image(image) }
                lastAttempt = (attempt.smallest, attempt.format)
                // Bytes grow roughly with the pixel count.
                missed = ("\(limit) bytes", shrinkFactor(goal: limit, reached: attempt.smallest, margin: 0.9))
            }

            // Nothing fitted at this size: shrink, and for animations then drop frames, then fall
            // back to a still.
            let smaller = Int(Double(width) * missed.factor)
            if !asStill {
                switch animationRetry(header, plan: plan, smaller: smaller, keepEvery: keepEvery) {
                case .width(let next):
                    width = next
                    reductions.append("reduced width to \(width) to fit \(missed.goal)")
                case .movie:
                    return .animationNeedsVideo(
                        header, reason: "the animation does not fit in \(missed.goal) as a GIF at \(width) px wide")
                case .fewerFrames(let next):
                    keepEvery = next
                case .still:
                    asStill = true
                    keepEvery = 1
                    width = startWidth
                    reductions = []
                    warnings.append(ProcessingWarning.animationSentAsStill(goal: missed.goal))
                }
            } else if smaller >= plan.minimumWidth {
                width = smaller
                reductions.append("reduced width to \(width) to fit \(missed.goal)")
            } else {
                throw PushPrepError(
                    .cannotFit,
                    "no \(lastAttempt.format.rawValue) of this image fits in \(limit) bytes (smallest tried: "
                        + "\(lastAttempt.smallest) bytes at \(width) px wide)")
            }
        }
    }

    /// Decodes the image at `width` (keeping every `keepEvery`-th frame, or only the first as a
    /// still) and goes down the plan's ladder for its format: the first encoding within the byte
    /// limit, or the smallest size reached and its format.
    private static func encode(
        _ input: ImageInput, plan: ImagePlan, header: ImageHeader, width: Int, keepEvery: Int, asStill: Bool,
        control: ProcessingControl?, reductions: [String], warnings: [ProcessingWarning]
    ) throws(PushPrepError) -> (fitted: ProcessedImage?, smallest: Int, format: ImageOutputFormat) {
        // A still is read once when its first encoding fits, as nearly every photo's does: it
        // then streams from the decoder into the encoder. Frames are picked from an animation,
        // so it is held at once.
        // With renditions to make from the same pixels, they are held from the start.
        let reads: ImageDecodeStep.Reads = asStill && !header.isAnimated && plan.renditions.isEmpty ? .once : .several
        let decoded = try ImageDecodeStep.run(
            input, header: header, width: width, maxPixels: plan.maxPixels, reads: reads)
        try control?.check()
        var image = decoded.image
        let frameNote = header.isAnimated ? ", \(header.frames) frames" : ""
        var operations = ["decoded \(input.type.rawValue) \(header.uprightWidth)x\(header.uprightHeight)\(frameNote)"]
        operations += decoded.operations
        if header.isAnimated && asStill {
            image = try AnimationStep.firstFrame(image)
            operations.append("kept the first frame as a still image")
        } else if keepEvery > 1 {
            image = try AnimationStep.dropFrames(image, keepEvery: keepEvery)
            operations.append(
                "kept every \(ordinal(keepEvery)) frame (\(AnimationStep.frameCount(image)) of \(header.frames))")
        }
        let alpha = try AlphaStep.run(image)
        operations += alpha.operations
        let format: ImageOutputFormat = !asStill ? .gif : (alpha.hasTransparency ? .png : .jpeg)
        var smallest = 0
        var encoded = alpha.image
        for (index, attempt) in plan.ladder(for: format).enumerated() {
            try control?.check()
            if index == 1 && reads == .once && !decoded.image.hasAlpha {
                // The first attempt consumed the streamed pixels: decode once more, held for
                // the rest of the ladder. (An image with an alpha channel was held from the
                // start, and without one the alpha step changed nothing.)
                encoded = try ImageDecodeStep.run(
                    input, header: header, width: width, maxPixels: plan.maxPixels, reads: .several
                ).image
                try control?.check()
            }
            let bytes = try ImageEncodeStep.encode(encoded, attempt)
            smallest = bytes.count
            guard bytes.count <= plan.limit else { continue }
            let frames = format == .gif ? AnimationStep.frameCount(encoded) : 1
            var image = ProcessedImage(
                bytes: bytes, format: format, width: encoded.width, height: encoded.height / frames,
                frames: frames, header: header,
                operations: operations + reductions + [describe(attempt), "stripped metadata"], warnings: warnings,
                plan: plan)
            let needed = RenditionStep.neededWidth(
                plan.renditions, sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight)
            if !plan.renditions.isEmpty && !header.isAnimated && encoded.width >= needed {
                // The renditions from the pixels just encoded: no second decode.
                try control?.check()
                image.renditions = try RenditionStep.make(
                    from: encoded, transparent: format == .png && encoded.hasAlpha,
                    sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight, specs: plan.renditions)
            }
            return (image, smallest, format)
        }
        return (nil, smallest, format)
    }

    /// Where an animation's run first decodes, from the header alone: the width at which its
    /// frames fit the plan's memory budget (the run shrinks, and drops frames, before decoding
    /// anything), or a movie. The same rules as the loop of ``run(_:input:header:control:)``.
    enum AnimationStart: Equatable {
        case gif(width: Int)
        case movie
    }

    static func animationStart(_ header: ImageHeader, plan: ImagePlan) -> AnimationStart {
        if case .movie = plan.output { return .movie }
        var width = plan.width
        var keepEvery = 1
        while true {
            let bytes = decodedAnimationBytes(header, width: width, keepEvery: keepEvery)
            guard bytes > plan.gifMaxMemory else { return .gif(width: width) }
            let smaller = Int(Double(width) * shrinkFactor(goal: plan.gifMaxMemory, reached: bytes, margin: 0.97))
            switch animationRetry(header, plan: plan, smaller: smaller, keepEvery: keepEvery) {
            case .width(let next): width = next
            case .movie: return .movie
            case .fewerFrames(let next): keepEvery = next
            // Sent as its first frame, which is decoded with all the others at the first width.
            case .still: return .gif(width: plan.width)
            }
        }
    }

    /// What an animation that missed a goal tries next, `smaller` being the width that would
    /// meet it: the one rule of both the run and ``animationStart(_:plan:)`` (so the memory
    /// estimate describes the width the run decodes at). A smaller width down to a third of the
    /// planned one (and 160 px), then a movie when the plan allows, then every second frame (up
    /// to every fourth, keeping two), then the first frame as a still.
    enum AnimationRetry: Equatable {
        case width(Int)
        case movie
        case fewerFrames(keepEvery: Int)
        case still
    }

    static func animationRetry(_ header: ImageHeader, plan: ImagePlan, smaller: Int, keepEvery: Int) -> AnimationRetry {
        if smaller >= max(160, plan.width / 3) { return .width(smaller) }
        if plan.output == .animation(fallback: .movie) { return .movie }
        if keepEvery < 4 && header.frames / (keepEvery * 2) >= 2 { return .fewerFrames(keepEvery: keepEvery * 2) }
        return .still
    }

    /// An animation's decoded size at `width` keeping every `keepEvery`-th frame, from its header.
    /// The height is rounded up, so the real frames are never larger than this says.
    static func decodedAnimationBytes(_ header: ImageHeader, width: Int, keepEvery: Int) -> Int {
        let height = animationHeight(header, width: width)
        let frames = (header.frames + keepEvery - 1) / keepEvery
        return AppleLimits.decodedBytes(width: width, height: height, frames: frames)
    }

    /// An animation's frame height at `width`, rounded up.
    static func animationHeight(_ header: ImageHeader, width: Int) -> Int {
        (header.uprightHeight * width + header.uprightWidth - 1) / max(1, header.uprightWidth)
    }

    /// How much to scale the width by when a size reached `reached` against `goal`, for a measure
    /// that grows with the pixel count: the square root of the overshoot with a margin, between
    /// 0.3 and 0.9 so that every round makes progress without overshooting.
    static func shrinkFactor(goal: Int, reached: Int, margin: Double) -> Double {
        min(0.9, max(0.3, (Double(goal) / Double(max(reached, 1))).squareRoot() * margin))
    }

    private static func describe(_ attempt: ImageEncodeStep.Attempt) -> String {
        switch attempt.format {
        case .jpeg: "encoded jpeg quality \(attempt.quality ?? 0)"
        case .png: attempt.palette ? "encoded png with a palette, quality \(attempt.quality ?? 0)" : "encoded png"
        case .gif: "encoded gif"
        }
    }

    private static func ordinal(_ n: Int) -> String {
        switch n {
        case 2: "2nd"
        case 3: "3rd"
        default: "\(n)th"
        }
    }
}
