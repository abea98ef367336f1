import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFileSystem
import PushPrepCore
import PushPrepJSON
import PushPrepQueue

/// `POST /v1/uploads`: a file sent in the request becomes a job. The body is the raw file (the
/// job's fields in the query) or `multipart/form-data` with one part named `file` (the fields
/// as text parts). The file streams to a temporary file in the uploads directory as it
/// arrives, hashed on the way, never whole in memory; past `--max-upload-bytes` reading stops
/// and the answer is 413, and nothing is left behind. Its type comes from its first bytes (a
/// text file is refused before the rest is read); it is then renamed, atomically, to
/// `<sha256>.<ext>`, the job's source. The same bytes uploaded twice at once meet under that
/// name as one complete file: each upload writes a temporary file of its own, and a rename
/// replaces a name in one step. The file is deleted by the ``UploadSweeper`` once no
/// unfinished job refers to it; from storing the file to its job's commit, the upload holds it
/// against the sweep.
struct UploadRoutes {
    let queue: any JobQueue & JobQueueAdmin & IdempotentEnqueue
    let configuration: ServerConfiguration
    let renderer: JobRenderer
    let depth: QueueDepth
    /// Deletes the uploads no unfinished job needs; nil in servers that take no uploads.
    var sweeper: UploadSweeper? = nil

    /// Creates jobs as `POST /v1/jobs` does (the same checks, settings and base URL).
    var jobs: JobRoutes { JobRoutes(queue: queue, configuration: configuration, renderer: renderer, depth: depth) }

    func register(on router: some RouterMethods<APIRequestContext>) {
        router.post("v1/uploads") { request, context in try await upload(request, context) }
    }

    func upload(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        guard let directory = configuration.uploadsDirectory else {
            throw Problem(.notFound, .notFound, "this server takes no uploads (it has no --uploads directory)")
        }
        let boundary = try MultipartReader.boundary(contentType: request.headers[.contentType] ?? "")
        // A form carries its fields (at most a JSON body's worth) beside the file.
        let maxBody = configuration.maxUploadBytes + (boundary == nil ? 0 : configuration.maxBodyBytes)
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBody {
            throw Self.tooLarge(configuration.maxUploadBytes)
        }
        var form = UploadForm()
        if boundary == nil {
            form = try UploadForm(query: request.uri.queryParameters)
            // Fields are checked before a byte of the file is read.
            _ = try await jobs.specs(
                for: form.request(source: directory + "/upload"), maxSources: 1, context: context, uploaded: true)
        } else if !request.uri.queryParameters.isEmpty {
            throw Problem(
                .badRequest, .invalidRequest, "a multipart upload takes its fields in the form, not the query")
        }
        // A queue already over --max-queued refuses before the file is read; the job itself is
        // admitted (or refused) when it is enqueued.
        try await depth.admitting(0) {}

        let temporary = AtomicFile.temporaryPath(in: directory, name: "upload")
        let received = try await receive(
            request, boundary: boundary, maxBody: maxBody, to: temporary, form: form, logger: context.logger)
        let specs: [JobSpec]
        let path: String
        let name = received.form.filename.flatMap(UploadName.sanitized)
        let results: [EnqueueResult]
        do {
            let type = try received.file.type()
            path = "\(directory)/\(received.file.sha256).\(type.fileExtension)"
            specs = try await jobs.specs(
                for: received.form.request(source: path), maxSources: 1, context: context, uploaded: true
            ).map { spec in
                // The client's name for the file, as the job's display name (``UploadName``).
                guard let name else { return spec }
                var spec = spec
                spec.metadata = UploadName.adding(name, to: spec.metadata)
                return spec
            }
            // From the rename to the job's commit, no sweep may take the file.
            sweeper?.begin(path)
            defer { sweeper?.end(path) }
            results = try await depth.admitting(1) {
                guard rename(temporary, path) == 0 else {
                    context.logger.error("cannot store an upload", metadata: ["error": "\(PushPrepError.system(path))"])
                    throw Problem(.internalServerError, .ioError, "the upload could not be stored")
                }
                return try await queue.enqueue(specs)
            }
        } catch {
            unlink(temporary)
            throw error
        }
        context.logger.info(
            "upload stored",
            metadata: [
                "file": "\(PathName.directoryAndName(of: path).1)", "bytes": "\(received.file.size)",
                "filename": "\(received.form.filename ?? "")",
            ])
        let created = JobRoutes.CreatedJobs(
            jobs: zip(specs, results).map { spec, result in
                JobRoutes.CreatedJob(
                    id: result.id, state: result.state, source: spec.source, sourceName: name,
                    created: result.created, links: .init(job: result.id))
            })
        return try json(created, status: .accepted)
    }

    static func tooLarge(_ maxBytes: Int) -> Problem {
        Problem(.contentTooLarge, .requestTooLarge, "the upload is larger than \(maxBytes) bytes (--max-upload-bytes)")
    }

    // MARK: Receiving

    /// The file, complete and flushed under its temporary name, and the form's fields.
    struct Received {
        var file: UploadSink.Summary
        var form: UploadForm
    }

    /// Streams the request's body into `temporary`. The file is created transactionally: it appears under
    /// that name only once complete, so a refused or broken upload leaves nothing behind.
    func receive(
        _ request: Request, boundary: String?, maxBody: Int, to temporary: String, form: UploadForm,
        logger: Logger
    ) async throws -> Received {
        do {
            return try await FileSystem.shared.withFileHandle(
                forWritingAt: FilePath(temporary), options: .newFile(replaceExisting: false)
            ) { handle in
                var sink = UploadSink(writer: handle.bufferedWriter(), maxBytes: configuration.maxUploadBytes)
                var form = form
                if let boundary {
                    try await readForm(request, boundary: boundary, maxBody: maxBody, into: &sink, form: &form)
                } else {
                    for try await buffer in request.body { try await sink.append(buffer) }
                }
                let summary = try await sink.finish()
                // On disk before the job exists: a crash after the answer must not lose it.
                try await handle.synchronize()
                return Received(file: summary, form: form)
            }
        } catch let error as FileSystemError {
            logger.error("cannot write an upload", metadata: ["error": "\(error)"])
            throw Problem(.internalServerError, .ioError, "the upload could not be stored")
        }
    }

    /// Reads a `multipart/form-data` body: the part named `file` into `sink`, the text fields
    /// into `form`. Parts other than the fields `POST /v1/jobs` takes are refused.
    func readForm(
        _ request: Request, boundary: String, maxBody: Int, into sink: inout UploadSink, form: inout UploadForm
    ) async throws {
        enum Target {
            case none
            case file
            case field(String)
        }
        var reader = try MultipartReader(boundary: boundary)
        var target = Target.none
        var field: [UInt8] = []
        var fieldBytes = 0
        var bodyBytes = 0
        var sawFile = false
        func endPart() throws {
            if case .field(let name) = target { try form.set(name, field) }
            target = .none
        }
        for try await buffer in request.body {
            bodyBytes += buffer.readableBytes
            guard bodyBytes <= maxBody else { throw Self.tooLarge(configuration.maxUploadBytes) }
            for event in try reader.feed(buffer) {
                switch event {
                case .part(let headers):
                    try endPart()
                    if headers.name == "file" {
                        guard !sawFile else {
                            throw Problem(.badRequest, .invalidRequest, "an upload takes one file part")
                        }
                        sawFile = true
                        form.filename = try UploadForm.checkFilename(headers.filename)
                        target = .file
                    } else {
                        try form.checkField(headers.name)
                        field = []
                        target = .field(headers.name)
                    }
                case .content(let bytes):
                    switch target {
                    case .file:
                        try await sink.append(bytes)
                    case .field:
                        fieldBytes += bytes.readableBytes
                        guard fieldBytes <= configuration.maxBodyBytes else {
                            throw Problem(
                                .contentTooLarge, .requestTooLarge,
                                "the form's fields are larger than \(configuration.maxBodyBytes) bytes")
                        }
                        field += bytes.readableBytesView
                    case .none:
                        break
                    }
                case .end:
                    try endPart()
                }
            }
        }
        try reader.finish()
        guard sawFile else {
            throw Problem(.badRequest, .invalidRequest, "the form has no file: send it as the part named file")
        }
    }
}

/// Where an upload's bytes go as they arrive: written through a buffered writer (off the event
/// loops), hashed, counted against the cap, and the first bytes kept to detect the type.
struct UploadSink {
    var writer: BufferedWriter<WriteFileHandle>
    let maxBytes: Int
    private var hasher = SHA256()
    private var size = 0
    private var prefix: [UInt8] = []

    init(writer: BufferedWriter<WriteFileHandle>, maxBytes: Int) {
        self.writer = writer
        self.maxBytes = maxBytes
    }

    /// What was written.
    struct Summary {
        var size: Int
        var sha256: String
        var prefix: [UInt8]

        /// The type the bytes are: `corrupt_input` when there are none, `unsupported_type`
        /// when they are not a type PushPrep reads.
        func type() throws -> PushPrepCore.MediaType {
            guard size > 0 else { throw PushPrepError(.corruptInput, "the upload is empty") }
            return try MediaDetector.require(prefix)
        }
    }

    /// Writes `buffer`; refuses it once the upload passes the cap, and refuses an upload whose
    /// first bytes are no type PushPrep reads as soon as they are in (the rest is never read).
    mutating func append(_ buffer: ByteBuffer) async throws {
        size += buffer.readableBytes
        guard size <= maxBytes else { throw UploadRoutes.tooLarge(maxBytes) }
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        if prefix.count < MediaDetector.prefixLength {
            prefix += buffer.readableBytesView.prefix(MediaDetector.prefixLength - prefix.count)
            if prefix.count == MediaDetector.prefixLength { _ = try MediaDetector.require(prefix) }
        }
        _ = try await writer.write(contentsOf: buffer)
    }

    /// Flushes what is buffered and returns the size, hash and first bytes.
    mutating func finish() async throws -> Summary {
        try await writer.flush()
        return Summary(size: size, sha256: hasher.finalize().hexString, prefix: prefix)
    }
}

/// The fields of the job an upload becomes, as `POST /v1/jobs` takes them beside its sources
/// (`settings`, `priority`, `callback_url`, `metadata`): from the query of a raw upload or the
/// text parts of a form, turned into the same create request with the same checks.
struct UploadForm {
    static let fields: Set<String> = ["settings", "priority", "callback_url", "metadata"]

    /// Field values as sent.
    private(set) var values: [String: String] = [:]
    /// The client's name for the file (`?filename=` or the part's), for the log and as the
    /// job's display name (``UploadName``): the stored name is the content's hash and the
    /// extension of its detected type.
    var filename: String?

    init() {}

    /// The fields of a raw upload's query, and `filename`.
    init(query: some Sequence<(key: Substring, value: Substring)>) throws {
        for (name, value) in query {
            let name = String(name)
            if name == "filename" {
                guard filename == nil else { throw Self.repeated(name) }
                filename = try Self.checkFilename(String(value))
            } else {
                try checkField(name)
                values[name] = String(value)
            }
        }
    }

    /// Refuses a field no job takes, or one given twice.
    func checkField(_ name: String) throws {
        guard Self.fields.contains(name) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "unknown field \(name); uploads take filename (raw uploads), "
                    + Self.fields.sorted().joined(separator: ", "))
        }
        guard values[name] == nil else { throw Self.repeated(name) }
    }

    mutating func set(_ name: String, _ bytes: [UInt8]) throws {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Problem(.badRequest, .invalidRequest, "\(name) is not UTF-8 text")
        }
        values[name] = text
    }

    /// A client's file name when it is one a log can hold: at most 255 bytes, no control
    /// characters or line separators (the jobs' one check, ``UntrustedText``), no directory.
    static func checkFilename(_ name: String?) throws -> String? {
        guard let name else { return nil }
        guard name.utf8.count <= 255 else {
            throw Problem(.badRequest, .invalidRequest, "filename must be at most 255 bytes")
        }
        do {
            try UntrustedText.check(name, field: "filename")
        } catch {
            throw Problem(error)
        }
        return PathName.directoryAndName(of: name).1
    }

    private static func repeated(_ name: String) -> Problem {
        Problem(.badRequest, .invalidRequest, "the field \(name) appears more than once")
    }

    /// The create request for `source`: the JSON fields parsed strictly, then decoded as
    /// `POST /v1/jobs` decodes its body, so errors read the same.
    func request(source: String) throws -> JobRoutes.CreateRequest {
        var members: [(key: String, value: JSONValue)] = [("sources", .array([.string(source)]))]
        for (name, text) in values.sorted(by: { $0.key < $1.key }) {
            switch name {
            case "priority":
                guard let priority = Int(text) else {
                    throw Problem(.badRequest, .invalidRequest, "priority must be an integer")
                }
                members.append((name, JSONValue(priority)))
            case "callback_url":
                members.append((name, .string(text)))
            default:
                let document: JSONDocument
                do {
                    document = try JSONValue.parse(Array(text.utf8))
                } catch {
                    throw Problem(.badRequest, .invalidRequest, "\(name) is not JSON: \(error.message)")
                }
                if let duplicate = document.duplicateKeys.first {
                    throw Problem(
                        .badRequest, .invalidRequest, "the key \(name)\(duplicate.pointer) appears more than once")
                }
                members.append((name, document.value))
            }
        }
        let body = Array(JSONValue.object(JSONObject(members)).serialized().utf8)
        return try RequestBody.decode(JobRoutes.CreateRequest.self, from: body)
    }
}
