import Foundation
import Logging
import Metrics
public import PushPrep
import PushPrepCore
public import PushPrepQueue

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
            // Cancelled when the job is stopped (its lease lost, cancelled, timed out): an upload
            // stalled on a connection a partition broke then ends at the next heartbeat instead
            // of holding the job's slot until its request deadline.
            let store = self.store
            let baseURL = settings.settings.baseURL
            let publication = await context.control.cancellingOnStop { () -> Result<Attachment, PushPrepError> in
                do throws(PushPrepError) {
                    return .success(try await store.publish(attachment, from: staging, baseURL: baseURL))
                } catch {
                    return .failure(error)
                }
            }
            let published: Attachment
            switch publication {
            case .success(let attachment):
                // Stored: the result goes to the queue even when a stop came meanwhile, and the
                // queue's fencing decides whether it still counts.
                published = attachment
            case .failure(let error):
                // Failed because the job was stopped: the stop is the outcome, not the upload's error.
                if let stop = context.control.reason?.error {
                    return stop.code == .cancelled
                        ? .cancelled(message: stop.message)
                        : .retry(code: stop.code.rawValue, message: stop.message, delay: context.retryDelay)
                }
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
