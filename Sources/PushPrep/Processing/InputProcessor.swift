import Crypto
import Foundation
import Logging
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

/// Processes one input with one job's settings into one out directory, on the calling thread
/// (which must be one that may block: libvips and libav calls do), stopping at the next step
/// once `control` is stopped.
///
/// What ``ProcessingSession`` runs for each input; the image path is here, movies and sounds
/// in `InputProcessor+Media.swift`, URLs in `Remote/InputProcessor+Remote.swift`.
struct InputProcessor: Sendable {
    let settings: ProcessingSettings
    /// Where outputs go; must exist.
    let outputDirectory: String
    let logger: Logger
    let control: ProcessingControl?
    /// What local paths may be read (a worker's `--source-root`); downloads are not local paths.
    var sources: SourcePolicy = .any
    /// The session's memory budget, which each input waits for before it is decoded (none: no
    /// wait).
    var memory: MemoryBudget? = nil
    /// Where local files (and downloads) are decoded, when not on this process's threads.
    var decoders: (any InputDecoder)? = nil

    /// Processes a local file (or `file`, when a decoder's parent opened and hashed it already);
    /// never throws (a bad input, or a stop, is a failed entry).
    func processOne(_ item: InputItem, file: InputFile? = nil) -> ManifestEntry {
        var logger = self.logger
        logger[metadataKey: "source"] = "\(item.source)"
        // Held from the plan (before decoding) until the input is done, however it ends.
        let admission = InputAdmission(budget: memory, control: control, logger: logger)
        defer { admission.release() }
        do {
            // libvips' and libav's lines from this thread are about this input.
            let attachment = try LibraryLog.withInput(logger) { () throws(PushPrepError) in
                try process(item, file: file, admission: admission)
            }
            logger.debug("processed", metadata: ["id": "\(attachment.id)", "bytes": "\(attachment.bytes)"])
            return .ok(attachment)
        } catch {
            return failed(item, error)
        }
    }

    /// The failed entry for `item`, logged.
    func failed(_ item: InputItem, _ error: PushPrepError) -> ManifestEntry {
        logger.info(
            "failed", metadata: ["source": "\(item.source)", "code": "\(error.code)", "error": "\(error.message)"])
        return .failed(Failure(source: item.source, error: error))
    }

    /// The attachment made from a local file (read here unless `given`), or why there is none;
    /// `admission` holds the input's memory from its plan on.
    func process(_ item: InputItem, file given: InputFile? = nil, admission: InputAdmission) throws(PushPrepError)
        -> Attachment
    {
        try control?.check()
        // A BMP's bytes are kept from this one read: PushPrep decodes it from them.
        let file: InputFile
        if let given {
            file = given
        } else {
            file = try InputFile.read(path: item.path, maxBytes: settings.maxInputBytes, policy: sources) {
                MediaDetector.detect($0) == .bmp
            }
        }
        let type = try MediaDetector.require(file.prefix)
        try control?.check()
        var warnings = ExtensionCheck.warnings(path: item.path, detected: type)
        switch type.kind {
        case .video: return try processVideo(item, file: file, type: type, warnings: warnings, admission: admission)
        case .audio: return try processAudio(item, file: file, type: type, warnings: warnings, admission: admission)
        case .image: break
        }
        let payload: ImageInput.Payload
        switch type {
        case .jpeg, .png, .gif, .webp, .heic, .avif, .tiff:
            payload = .encoded(try ImageSource(descriptor: file.descriptor))
        case .bmp:
            guard let bytes = file.contents else { throw PushPrepError(.ioError, "the BMP's bytes were not kept") }
            payload = .bitmap(Bitmap(bytes))
        default:
            throw PushPrepError(
                .unsupportedType,
                "\(type.rawValue) images are not accepted (only JPEG, PNG, GIF, WebP, HEIF/AVIF, TIFF and BMP)")
        }
        let image = ImageInput(type: type, payload: payload)
        let processed: ProcessedImage
        let outcome = try ImagePipeline.run(image, settings: settings, control: control) {
            estimate throws(PushPrepError) in try admission.admit(estimate)
        }
        switch outcome {
        case .image(let result):
            processed = result
        case .animationNeedsVideo(let header, let reason):
            return try processAnimationAsVideo(
                item, file: file, image: image, header: header, reason: reason, warnings: warnings)
        }
        warnings += processed.warnings

        let id = AttachmentID.make(kind: .image, sourceSHA256: file.sha256, fingerprint: settings.imageFingerprint)
        var builder = builder(id: id, kind: .image, item: item)
        builder.operations = processed.operations
        try control?.check()
        let output = try builder.write(processed.bytes, as: processed.format.mediaType)
        try control?.check()
        let renditions = try builder.writeRenditions(
            processed.renditions, sourceSHA256: file.sha256, fingerprint: settings.imageFingerprint, settings: settings)
        let input = InputInfo(
            type: type.rawValue, bytes: file.size, width: processed.header.uprightWidth,
            height: processed.header.uprightHeight, duration: nil)
        return builder.attachment(
            output, picture: .init(width: processed.width, height: processed.height, frames: processed.frames),
            duration: nil, input: input, warnings: warnings + processed.renditions.warnings, renditions: renditions)
    }
}
