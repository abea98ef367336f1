import Crypto
import Foundation
public import Logging
import NIOPosix
import Synchronization

/// Processes inputs into attachments in an out directory, with bounded parallelism, and
/// returns the manifest.
public struct Processor: Sendable {
    /// Progress of a run, reported after each input.
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var failed: Int
    }

    public let settings: ProcessingSettings
    public let outputDirectory: String
    /// How `http://` and `https://` inputs are fetched.
    public let remote: RemoteSettings
    let logger: Logger

    /// A processor writing into `outputDirectory` (created when missing).
    public init(
        settings: ProcessingSettings, outputDirectory: String, logger: Logger, remote: RemoteSettings = RemoteSettings()
    ) {
        self.settings = settings
        self.outputDirectory = outputDirectory
        self.remote = remote
        self.logger = logger
        // libvips and libav log through C callbacks that carry no context: both go to this
        // processor's logger.
        VipsRuntime.logger.withLock { $0 = logger }
        FFmpegRuntime.logger.withLock { $0 = logger }
    }

    /// Processes every input; never throws for a bad input (that is a failed entry). Throws
    /// only when the out directory cannot be used.
    public func run(
        _ inputs: [InputItem],
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws(PushPrepError) -> Manifest {
        try settings.validate()
        try remote.validate()
        try prepareOutputDirectory()
        // libvips calls block their thread: they run on a pool of `jobs` threads of their own,
        // never on Swift's cooperative executor.
        let pool = NIOThreadPool(numberOfThreads: settings.jobs)
        pool.start()
        defer { pool.shutdownGracefully { _ in } }
        let fetcher = makeFetcher(for: inputs)

        var entries = [ManifestEntry?](repeating: nil, count: inputs.count)
        var failed = 0
        var done = 0
        await withTaskGroup(of: (Int, ManifestEntry).self) { group in
            var next = 0
            func submit() {
                guard next < inputs.count else { return }
                let index = next
                let item = inputs[index]
                next += 1
                group.addTask {
                    let entry: ManifestEntry
                    do {
                        if let fetcher, item.isRemote {
                            entry = await self.processRemote(item, fetcher: fetcher, pool: pool)
                        } else {
                            entry = try await pool.runIfActive { self.processOne(item) }
                        }
                    } catch {
                        entry = .failed(Failure(source: item.source, error: PushPrepError(.ioError, "\(error)")))
                    }
                    return (index, entry)
                }
            }
            // A window of twice the thread count keeps every thread busy without queueing
            // thousands of tasks up front.
            for _ in 0..<(settings.jobs * 2) { submit() }
            for await (index, entry) in group {
                entries[index] = entry
                done += 1
                if entry.failure != nil { failed += 1 }
                progress?(Progress(done: done, total: inputs.count, failed: failed))
                submit()
            }
        }
        await fetcher?.shutdown()
        return Manifest(settings: settings, attachments: entries.map { $0! })
    }

    /// Processes one input synchronously (blocking).
    public func processOne(_ item: InputItem) -> ManifestEntry {
        var logger = self.logger
        logger[metadataKey: "source"] = "\(item.source)"
        do {
            let attachment = try process(item)
            logger.debug("processed", metadata: ["id": "\(attachment.id)", "bytes": "\(attachment.bytes)"])
            return .ok(attachment)
        } catch {
            logger.info("failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
            return .failed(Failure(source: item.source, error: error))
        }
    }

    func process(_ item: InputItem) throws(PushPrepError) -> Attachment {
        let file = try InputFile.read(path: item.path, maxBytes: settings.maxInputBytes)
        let type = try MediaDetector.require(file.prefix)
        var warnings = ExtensionCheck.warnings(path: item.path, detected: type)
        switch type.kind {
        case .video: return try processVideo(item, file: file, type: type, warnings: warnings)
        case .audio: return try processAudio(item, file: file, type: type, warnings: warnings)
        case .image: break
        }
        let payload: ImageInput.Payload
        switch type {
        case .jpeg, .png, .gif, .webp, .heic, .avif, .tiff:
            payload = .file(item.path)
        case .bmp:
            payload = .bitmap(
                try InputFile.read(path: item.path, maxBytes: settings.maxInputBytes, keepContents: true).contents ?? []
            )
        default:
            throw PushPrepError(
                .unsupportedType,
                "\(type.rawValue) images are not accepted (only JPEG, PNG, GIF, WebP, HEIF/AVIF, TIFF and BMP)")
        }
        let image = ImageInput(type: type, payload: payload)
        let processed: ProcessedImage
        switch try ImagePipeline.run(image, settings: settings) {
        case .image(let result):
            processed = result
        case .animationNeedsVideo(let header, let reason):
            return try processAnimationAsVideo(
                item, file: file, image: image, header: header, reason: reason, warnings: warnings)
        }
        warnings += processed.warnings

        let id = AttachmentID.make(kind: .image, sourceSHA256: file.sha256, fingerprint: settings.imageFingerprint)
        let output = processed.format.mediaType
        let name = "\(id).\(output.fileExtension)"
        var operations = processed.operations
        switch try AtomicFile.write(processed.bytes, to: "\(outputDirectory)/\(name)") {
        case .written: operations.append("wrote \(name)")
        case .reused: operations.append("reused identical existing output \(name)")
        }
        return Attachment(
            id: id,
            source: item.source,
            kind: .image,
            file: name,
            url: settings.baseURL.map { URLJoin.join($0, name) },
            uti: output.uti,
            mime: output.mime,
            bytes: processed.bytes.count,
            sha256: Crypto.SHA256.hash(data: processed.bytes).hexString,
            width: processed.width,
            height: processed.height,
            duration: nil,
            frames: processed.frames,
            options: AttachmentOptions(typeHint: output.uti),
            input: InputInfo(
                type: type.rawValue,
                bytes: file.size,
                width: processed.header.uprightWidth,
                height: processed.header.uprightHeight,
                duration: nil
            ),
            operations: operations,
            warnings: warnings
        )
    }

    private func prepareOutputDirectory() throws(PushPrepError) {
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw PushPrepError(
                .ioError, "cannot create the out directory \(outputDirectory): \(error.localizedDescription)")
        }
        AtomicFile.removeStaleTemporaries(in: outputDirectory)
    }
}

/// Joins a base URL and a file name with exactly one slash.
enum URLJoin {
    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }
}

/// Warns when a file's extension names another type than its bytes.
enum ExtensionCheck {
    static func warnings(path: String, detected: MediaType) -> [String] {
        let ext = (path as NSString).pathExtension.lowercased()
        guard !ext.isEmpty, MediaType.allKnownExtensions.contains(ext), !detected.knownExtensions.contains(ext) else {
            return []
        }
        return [
            "the extension .\(ext) does not match the content, which is \(detected.rawValue); processed as \(detected.rawValue)"
        ]
    }
}
