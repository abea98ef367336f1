import ArgumentParser
import Foundation
import Logging
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue
import PushPrepRemote
import PushPrepSandbox
import PushPrepStorage
import PushPrepWorker
import ServiceLifecycle

/// How queue workers hold, retry and keep jobs: shared by `worker` and `serve` (whose embedded
/// workers take the same options).
struct WorkerTuningOptions: ParsableArguments {
    @Option(help: "Seconds running jobs may take to finish after SIGTERM/SIGINT (0...86400).")
    var drainTimeout: Double = 30

    @Option(help: "Seconds a claim holds a job without a heartbeat (1...86400).")
    var lease: Double = 60

    @Option(help: "Seconds between looks for work when nothing signals it (0.01...3600).")
    var pollInterval: Double = 1

    @Option(help: "Seconds one attempt may take, for jobs enqueued without one (1...86400).")
    var jobTimeout: Double = 600

    @Option(help: "Seconds before the first retry, doubled for each further one (0.1...86400).")
    var retryBase: Double = 15

    @Option(help: "The longest wait between retries, in seconds (up to 2592000, 30 days).")
    var retryMax: Double = 3600

    @Option(help: "Days finished jobs are kept before pruning, 0...3650 (0 keeps them).")
    var retention: Double = 7

    @OptionGroup var memory: MemoryLimitOption

    @Option(help: Isolation.help(slots: "as many"))
    var isolation: Isolation = .process

    /// The program the decoders run (`PATH decoder`): this one unless given, which only a process
    /// that is not `pushprep` itself needs (a test running `serve` inside its own process).
    @Option(help: .hidden)
    var decoderExecutable: String?

    /// Each decoder's hard address-space limit, in bytes (default ``DecoderLimits``'): tests
    /// lower it to run a decoder out of memory.
    @Option(help: .hidden)
    var decoderAddressSpace: Int?

    /// Test mode: the decoders answer garbage (a malformed frame) for the sources that contain
    /// this, as a decoder taken over could.
    @Option(help: .hidden)
    var decoderTestGarbageFor: String?

    /// The options as a configuration; a usage error for a number that is not finite or out
    /// of its range.
    func configuration(concurrency: Int) throws -> WorkerConfiguration {
        do {
            typealias Limits = WorkerConfiguration
            let retryBase = try retryBase.seconds(option: "--retry-base", in: Limits.retryBaseSeconds)
            let retryMax = try retryMax.seconds(option: "--retry-max", in: Limits.retryMaxSeconds)
            guard retryMax >= retryBase else { throw ValidationError("--retry-max must be at least --retry-base") }
            guard retention.isFinite, Limits.retentionDays.contains(retention) else {
                throw ValidationError("--retention must be in 0...3650 days, got \(retention)")
            }
            return WorkerConfiguration(
                concurrency: concurrency, lease: try lease.seconds(option: "--lease", in: Limits.leaseSeconds),
                pollInterval: try pollInterval.seconds(option: "--poll-interval", in: Limits.pollIntervalSeconds),
                drainTimeout: try drainTimeout.seconds(option: "--drain-timeout", in: Limits.drainTimeoutSeconds),
                defaultJobTimeout: try jobTimeout.seconds(option: "--job-timeout", in: JobSpec.timeoutSeconds),
                backoff: Backoff(base: retryBase, cap: retryMax),
                retention: retention > 0
                    ? try (retention * 86_400).seconds(
                        option: "--retention", in: 0...(Limits.retentionDays.upperBound * 86_400))
                    : nil)
        }
    }
}

/// The command line's side of ``WorkerRuntime``: its options in, its failures out as
/// ``CommandFailure``.
extension WorkerRuntime {
    /// The out directory (created) or the bucket the worker publishes to, and the bucket's client
    /// (to shut down) when there is one.
    static func outputStore(location: StoreLocation, storage: StoreOptions, logger: Logger) throws
        -> (any OutputStore, S3Client?)
    {
        switch location {
        case .directory(let out):
            do {
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure(message: "cannot create the out directory \(out): \(error.localizedDescription)")
            }
            return (DirectoryOutputStore(outputDirectory: out), nil)
        case .s3(let s3):
            let client: S3Client
            let urls: ObjectURLStyle
            do {
                client = S3Client(configuration: try storage.configuration(for: s3), logger: logger)
                urls = try storage.urls(baseURL: nil)
            } catch {
                throw CommandFailure(message: error.description)
            }
            let store = BucketOutputStore(
                store: S3AttachmentStore(client: client, location: s3), urls: urls,
                stagingRoot: try LocalStaging.makeFolder("worker", unique: false))
            return (store, client)
        }
    }

    /// A worker on `url` processing into `store`, and what to call once it has stopped (it shuts
    /// down the processing session the worker runs in, then the decoders). Its inputs are decoded as `tuning` says
    /// (`--isolation`: by default in a pool of as many decoder processes as jobs run at once,
    /// staged beside the store's staging) and share the memory budget it says, exported with the
    /// worker's metrics.
    static func worker(
        url: QueueURL, configuration: WorkerConfiguration, store: any OutputStore, remote: RemoteSettings,
        sources: SourcePolicy, tuning: WorkerTuningOptions, logger: Logger
    ) async throws -> (QueueWorker<ProcessingJobHandler>, shutdown: @Sendable () async -> Void) {
        let budget = try tuning.memory.budget(logger: logger) { MemoryBudgetMetrics(limit: $0) }
        let decoders = try await tuning.isolation.decoders(
            size: configuration.concurrency, in: store.stagingRoot, timeout: tuning.jobTimeout, startingAll: true,
            executable: tuning.decoderExecutable, addressSpace: tuning.decoderAddressSpace,
            garbageFor: tuning.decoderTestGarbageFor, logger: logger)
        do {
            let (worker, session) = try makeWorker(
                url: url, configuration: configuration, store: store, remote: remote, sources: sources, budget: budget,
                decoders: decoders, logger: logger)
            return (
                worker,
                {
                    await session.shutdown()
                    await decoders?.shutdown()
                }
            )
        } catch {
            await decoders?.shutdown()
            throw CommandFailure(message: error.description)
        }
    }

    /// Runs `services` as ``runServices(_:drainTimeout:logger:cleanup:)`` does, a
    /// ``PushPrepError`` that stops them told as a ``CommandFailure``.
    static func run(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], drainTimeout: Duration, logger: Logger,
        cleanup: () async -> Void
    ) async throws {
        do {
            try await runServices(services, drainTimeout: drainTimeout, logger: logger, cleanup: cleanup)
        } catch let error as PushPrepError {
            throw CommandFailure(message: error.description)
        }
    }
}
