import Crypto
public import Foundation
import Logging
import Metrics
public import PushPrep

/// PushPrep's jobs: one input processed with the settings given at enqueue time.
public enum ProcessingJobs {
    /// The spec for processing `source` with `settings`. Local paths are made absolute (the
    /// worker may run elsewhere); the dedup key is the SHA-256 of the source and the settings,
    /// so the same input with the same settings is not queued twice. Settings or numbers out of
    /// range (``ProcessingSettings/validate()``, ``JobSpec/validate()``), or settings that cannot
    /// be encoded, throw `invalid_settings`; a source with control characters, or a URL the
    /// worker would not fetch, throws `invalid_request`: nothing is queued that a worker would
    /// refuse.
    public static func spec(
        source: String, settings: ProcessingSettings, priority: Int = 0, delay: Duration = .zero,
        maxAttempts: Int = 5, timeout: Duration? = nil,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(PushPrepError) -> JobSpec {
        try spec(
            source: source, payload: try payload(settings), priority: priority, delay: delay, maxAttempts: maxAttempts,
            timeout: timeout, currentDirectory: currentDirectory)
    }

    /// One spec per source, as ``spec(source:settings:priority:delay:maxAttempts:timeout:currentDirectory:)``
    /// makes it, with the settings validated and encoded once for all of them.
    public static func specs(
        sources: [String], settings: ProcessingSettings, priority: Int = 0, delay: Duration = .zero,
        maxAttempts: Int = 5, timeout: Duration? = nil,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(PushPrepError) -> [JobSpec] {
        let payload = try payload(settings)
        var specs: [JobSpec] = []
        for source in sources {
            specs.append(
                try spec(
                    source: source, payload: payload, priority: priority, delay: delay, maxAttempts: maxAttempts,
                    timeout: timeout, currentDirectory: currentDirectory))
        }
        return specs
    }

    /// The job's payload: `settings`, validated, with `jobs` 1, as JSON with sorted keys (the
    /// dedup key hashes it).
    private static func payload(_ settings: ProcessingSettings) throws(PushPrepError) -> String {
        var settings = settings
        // How many inputs run at once does not change an output; workers decide.
        settings.jobs = 1
        try settings.validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(settings), as: UTF8.self)
        } catch {
            throw PushPrepError(.invalidSettings, "cannot encode the job's settings: \(error)")
        }
    }

    /// The spec for `source` with a payload made by ``payload(_:)``.
    private static func spec(
        source: String, payload: String, priority: Int, delay: Duration, maxAttempts: Int, timeout: Duration?,
        currentDirectory: String
    ) throws(PushPrepError) -> JobSpec {
        try UntrustedText.check(source, field: "a job's source")
        let source = try absoluteSource(source, currentDirectory: currentDirectory)
        let key = SHA256.hash(data: Data("\(source)\n\(payload)".utf8)).hexString
        let spec = JobSpec(
            source: source, payload: payload, dedupKey: key, priority: priority, delay: delay,
            maxAttempts: maxAttempts, timeout: timeout)
        try spec.validate()
        return spec
    }

    /// URLs parsed and stored in their normalised form (``RemoteURL``: the scheme lowercase,
    /// the host in its one canonical spelling, what must be percent-encoded encoded), so that
    /// what is stored, printed and deduplicated is what the worker fetches, never the raw text;
    /// a URL the worker would refuse is `invalid_request` now. Absolute paths as they are;
    /// relative paths resolved against `currentDirectory` and standardized.
    static func absoluteSource(_ source: String, currentDirectory: String) throws(PushPrepError) -> String {
        if InputItem(source: source, path: source).isRemote {
            do {
                return try RemoteURL(source).text
            } catch {
                throw PushPrepError(.invalidRequest, "a job's source: \(error.message)")
            }
        }
        if source.hasPrefix("/") { return source }
        return URL(fileURLWithPath: source, relativeTo: URL(fileURLWithPath: currentDirectory, isDirectory: true))
            .standardizedFileURL.path
    }
}

/// Runs PushPrep jobs: processes the input into a private staging folder, confirms the lease,
/// then publishes the outputs to the worker's ``OutputStore`` (the out directory by atomic
/// rename, or a bucket; content-addressed names, so a second publication of the same job is
/// harmless) and returns the manifest entry as the job's result. A job succeeds only once its
/// outputs are published.
public struct ProcessingJobHandler: JobHandler {
    let session: ProcessingSession
    let store: any OutputStore
    let bytesIn = Counter(label: "pushprep_input_bytes_total")
    let bytesOut = Counter(label: "pushprep_output_bytes_total")

    /// A handler publishing into the out directory `outputDirectory`.
    public init(session: ProcessingSession, outputDirectory: String) {
        self.init(session: session, store: DirectoryOutputStore(outputDirectory: outputDirectory))
    }

    /// A handler publishing to `store`.
    package init(session: ProcessingSession, store: any OutputStore) {
        self.session = session
        self.store = store
    }

    /// Removes staging folders left by killed workers of this host (`workerID` is this
    /// worker's, `host:pid:random`).
    public func removeAbandonedStaging(workerID: String) {
        Staging.removeAbandoned(in: store.stagingRoot, host: String(workerID.prefix(while: { $0 != ":" })))
    }

    public func handle(_ job: ClaimedJob, context: JobContext) async -> JobOutcome.Kind {
        // The job's settings are checked here, once, as they come in.
        let settings: ProcessingSettings.Validated
        do {
            settings = try JSONDecoder().decode(ProcessingSettings.self, from: Data(job.payload.utf8)).validated()
        } catch {
            return .failed(code: .invalidSettings, message: "the job's settings: \(error)")
        }
        let staging = Staging.directory(in: store.stagingRoot, worker: context.workerID, lease: job.lease)
        defer { Staging.remove(staging) }
        let entry = await session.process(
            InputItem(source: job.source, path: job.source), settings: settings, outputDirectory: staging,
            control: context.control, metadata: ["job": "\(job.lease.id)"])
        switch entry {
        case .failed(let failure):
            let code = failure.error.code
            if code == .cancelled {
                return .cancelled(message: failure.error.message)
            }
            // A source's 404 or 403 is as final as a corrupt file: retrying would only delay the
            // same failure (the error says so; its code alone may not).
            if failure.error.isPermanent {
                return .failed(code: code, message: failure.error.message)
            }
            return .retry(code: code.rawValue, message: failure.error.message, delay: context.retryDelay)
        case .ok(let attachment):
            guard await context.confirmLease() else {
                return .retry(
                    code: "lease_lost", message: "the lease was lost before publishing; nothing was published",
                    delay: .zero)
            }
            let stagedPosterBytes = attachment.poster.flatMap { posterBytes("\(staging)/\($0.file)") } ?? 0
            let published: Attachment
            do {
                published = try await store.publish(attachment, from: staging, baseURL: settings.settings.baseURL)
            } catch {
                // storage_denied is permanent (the job fails); storage_unavailable and I/O errors are retried.
                if error.isPermanent {
                    return .failed(code: error.code, message: error.message)
                }
                return .retry(code: error.code.rawValue, message: error.message, delay: context.retryDelay)
            }
            bytesIn.increment(by: attachment.input.bytes)
            bytesOut.increment(
                by: attachment.bytes + stagedPosterBytes
                    + attachment.renditions.all.reduce(0) { $0 + $1.rendition.bytes })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(ManifestEntry.ok(published)) else {
                return .failed(code: .ioError, message: "cannot encode the manifest entry")
            }
            return .succeeded(result: String(decoding: data, as: UTF8.self))
        }
    }

    private func posterBytes(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }
}

/// Per-attempt folders under a store's staging root (`OUT/.staging/` for a directory) where
/// jobs write before publishing.
enum Staging {
    static func directory(in root: String, worker: String, lease: Lease) -> String {
        "\(root)/\(WorkerConfiguration.fileNameSafe(worker))-\(lease.id)-\(lease.token)"
    }

    static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Moves each named file from `staging` into `outputDirectory` with rename(2): readers
    /// see the old file or the new one, never a part.
    static func publish(_ names: [String], from staging: String, to outputDirectory: String) throws(PushPrepError) {
        for name in names {
            guard !name.contains("/") else { throw PushPrepError(.ioError, "unexpected output name \(name)") }
            if rename("\(staging)/\(name)", "\(outputDirectory)/\(name)") != 0 {
                throw PushPrepError.system("cannot publish \(name) into \(outputDirectory)")
            }
        }
    }

    /// Removes staging folders of workers on this host whose process is gone (killed
    /// mid-job), leaving other hosts' folders alone.
    static func removeAbandoned(in root: String, host: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        let prefix = WorkerConfiguration.fileNameSafe(host) + "_"
        for name in names where name.hasPrefix(prefix) {
            let pidText = name.dropFirst(prefix.count).prefix(while: \.isNumber)
            guard let pid = Int32(pidText), WorkerHost.isGone(pid) else { continue }
            remove("\(root)/\(name)")
        }
    }
}
