import Foundation
public import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// What `inspect` reports about one input: read from headers only, no pixel is decoded.
public struct InspectReport: Sendable, Codable, Equatable {
    public var source: String
    /// Detected type, or nil when unrecognised.
    public var type: String?
    public var kind: MediaKind?
    public var bytes: Int?
    /// Width and height as the image is meant to be seen (EXIF orientation applied).
    public var width: Int?
    public var height: Int?
    public var frames: Int?
    /// Seconds, for movies and sounds.
    public var duration: Double?
    /// Movies and sounds: the main video and audio streams, e.g. "video h264 (High) 1920x1080, 30 fps".
    public var streams: [String]?
    /// EXIF orientation when not 1.
    public var orientation: Int?
    public var hasAlpha: Bool?
    /// Metadata blocks present (exif, gps, xmp, iptc, icc).
    public var metadata: [String]
    /// Whether Apple would accept the file as it is (type, size, extension).
    public var meetsAppleRules: Bool
    /// Why not, when it does not.
    public var problems: [String]
    /// What `process` would do, in order.
    public var plan: [String]
    /// The error `process` would fail with, if any.
    public var error: Failure.ErrorInfo?
    /// Bytes of memory `process` is expected to use for this input at its peak, above the
    /// process's baseline, from the header (issue 16); nil when it would be refused first.
    public var memoryEstimate: Int?
    /// What that estimate is made of, e.g. "progressive jpeg decoded at 1/4 scale, DCT
    /// coefficients of the whole image".
    public var memoryBasis: String?
}

/// Reads inputs' headers and tells whether they already meet Apple's rules and what
/// `process` would do with them: the plan the pipeline makes from the same headers and settings
/// (``ImagePlan``, ``VideoPlan``, ``AudioPlan``) with the same function, put into words.
public enum Inspector {
    /// The plan a pipeline makes before it runs, as `inspect` made it.
    enum Plan: Equatable {
        case image(ImagePlan)
        case video(VideoPlan)
        case audio(AudioPlan)
    }

    /// What `item` is and what `process` would do with it under `settings`, from headers only;
    /// never throws (a refusal is the report's `error`).
    public static func inspect(_ item: InputItem, settings: ProcessingSettings) -> InspectReport {
        inspectPlanning(item, settings: settings).report
    }

    /// The report, and the plan its `plan` lines put into words (nil when the input is refused
    /// before a pipeline would make one).
    static func inspectPlanning(_ item: InputItem, settings: ProcessingSettings) -> (report: InspectReport, plan: Plan?)
    {
        var report = InspectReport(
            source: item.source, metadata: [], meetsAppleRules: false, problems: [], plan: [])
        var plan: Plan? = nil
        do throws(PushPrepError) {
            let (size, prefix) = try InputFile.readPrefix(path: item.path)
            report.bytes = size
            guard size > 0 else { throw PushPrepError(.corruptInput, "empty file") }
            let type = try MediaDetector.require(prefix)
            report.type = type.rawValue
            report.kind = type.kind
            let ext = PathName.lowercasedExtension(of: item.path)
            if !type.acceptedByApple {
                report.problems.append("\(type.rawValue) is not a type iOS accepts as an attachment")
            }
            if size > AppleLimits.maxBytes(for: type.kind) {
                report.problems.append(
                    "\(size) bytes is over Apple's \(AppleLimits.maxBytes(for: type.kind))-byte limit for \(type.kind.rawValue)"
                )
            }
            if !type.knownExtensions.contains(ext) {
                report.problems.append(
                    ext.isEmpty
                        ? "no file extension: the phone infers the type from it"
                        : "the extension .\(ext) does not match the content (\(type.rawValue))")
            }
            report.meetsAppleRules = report.problems.isEmpty
            guard size <= settings.maxInputBytes else {
                throw PushPrepError(
                    .inputTooLarge, "input is \(size) bytes, over the limit of \(settings.maxInputBytes) bytes")
            }
            if type.kind == .image {
                try inspectImage(item, type: type, settings: settings, into: &report, plan: &plan)
            } else {
                try inspectMedia(item, type: type, settings: settings, into: &report, plan: &plan)
            }
        } catch {
            report.error = Failure.ErrorInfo(error)
            report.plan.append("fail with \(error.code)")
        }
        return (report, plan)
    }

    private static func inspectImage(
        _ item: InputItem, type: MediaType, settings: ProcessingSettings, into report: inout InspectReport,
        plan: inout Plan?
    ) throws(PushPrepError) {
        let input: ImageInput
        switch type {
        case .bmp:
            let file = try InputFile.read(path: item.path, maxBytes: settings.maxInputBytes) { _ in true }
            input = ImageInput(type: type, payload: .bitmap(Bitmap(file.contents ?? [])))
        case .svg:
            throw PushPrepError(
                .unsupportedType, "svg images are not accepted (only JPEG, PNG, GIF, WebP, HEIF/AVIF, TIFF and BMP)")
        default:
            input = ImageInput(type: type, payload: .encoded(try ImageSource(path: item.path)))
        }
        try VipsRuntime.start()
        let header = try ImageHeaderStep.run(input, maxPixels: .max)
        report.width = header.uprightWidth
        report.height = header.uprightHeight
        report.frames = header.isAnimated ? header.frames : 1
        report.hasAlpha = header.hasAlpha
        if header.orientation != 1 { report.orientation = header.orientation }
        if case .encoded(let source) = input.payload {
            report.metadata = ImageMetadata.blocks(source)
        }
        try ImageHeaderStep.checkPixels(header, maxPixels: settings.maxPixels)

        let imagePlan = ImagePlan(header: header, settings: settings)
        plan = .image(imagePlan)
        report.memoryEstimate = imagePlan.memory.bytes
        report.memoryBasis = imagePlan.memory.basis
        report.plan += lines(imagePlan, metadata: report.metadata)
    }

    /// The image plan in words; `metadata` names the blocks the header shows, which every output
    /// leaves out.
    static func lines(_ plan: ImagePlan, metadata: [String]) -> [String] {
        var lines: [String] = []
        if plan.orientation != 1 { lines.append("apply EXIF orientation \(plan.orientation) to the pixels") }
        if case .movie = plan.output {
            // The movie has a width of its own (--video-width).
        } else if plan.resizes {
            let height = Int((Double(plan.sourceHeight) * Double(plan.width) / Double(plan.sourceWidth)).rounded())
            lines.append("resize \(plan.sourceWidth)x\(plan.sourceHeight) to \(plan.width)x\(height)")
        }
        if !metadata.isEmpty {
            lines.append("strip metadata (\(metadata.joined(separator: ", ")))")
        }
        switch plan.output {
        case .still(let alpha):
            let first = plan.jpegLadder.first?.quality.map { " quality \($0)" } ?? ""
            let target = alpha ? "png if the alpha channel is really used, else jpeg" : "jpeg\(first)"
            lines.append("encode as \(target), at most \(plan.limit) bytes")
        case .animation(let fallback):
            let otherwise =
                fallback == .fewerFramesThenStill ? "fewer frames, or its first frame as a still" : "an mp4 movie"
            lines.append(
                "encode as gif, at most \(plan.limit) bytes and \(plan.gifMaxMemory) bytes of decoded"
                    + " frames (smaller if need be; else \(otherwise))")
        case .movie(let reason):
            lines.append("encode as a silent mp4 movie (\(reason))")
        }
        return lines
    }
}

/// Which metadata blocks an image carries, from its header.
enum ImageMetadata {
    static func blocks(_ source: ImageSource) -> [String] {
        guard let image = try? ImageHeaderReader.open(source) else { return [] }
        let names = image.fieldNames()
        var blocks: [String] = []
        if names.contains("exif-data") { blocks.append("exif") }
        if names.contains(where: { $0.hasPrefix("exif-ifd3-") }) { blocks.append("gps") }
        if names.contains("xmp-data") { blocks.append("xmp") }
        if names.contains("iptc-data") { blocks.append("iptc") }
        if names.contains("icc-profile-data") { blocks.append("icc") }
        if names.contains(where: { $0.hasSuffix("comment") || $0.hasPrefix("png-comment") }) {
            blocks.append("comment")
        }
        return blocks
    }
}

extension InspectReport {
    /// "438 MB", "3.2 MB": megabytes (10^6) as people read them.
    public static func megabytes(_ bytes: Int) -> String {
        bytes >= 10_000_000 ? "\(bytes / 1_000_000) MB" : String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
