public import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue
import PushPrepServer
import PushPrepStorage
import PushPrepWorker
import ServiceLifecycle
import UnixSignals

/// `pushprep worker`: processes queued jobs until SIGTERM or SIGINT.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Process queued jobs until stopped (SIGTERM/SIGINT drain gracefully).",
        discussion: """
            Any number of workers, on one host or many, can share a queue: a SQLite file on one \
            host, or a PostgreSQL database. Outputs land in --out (a shared directory when \
            several hosts work), named by content, written atomically; each finished job keeps \
            its manifest entry (pushprep jobs show ID). With --store s3://BUCKET/PREFIX, each \
            job is processed in a private local folder and its outputs uploaded to the bucket \
            once the lease is confirmed; the job succeeds only once they are stored \
            (storage_unavailable is retried, storage_denied fails the job).

            Jobs are leased for --lease seconds and the lease is renewed every third of it; a \
            worker that dies loses its jobs to the next worker once their lease expires. \
            Failures are retried with exponential backoff and jitter up to each job's \
            --max-attempts (then dead); permanent errors (unsupported_type, corrupt_input, \
            too_many_pixels, cannot_fit, blocked_address, source_not_allowed) fail at once.

            Queued jobs name their sources: --sources and --source-root say which this worker \
            reads (any on SQLite; URLs only on PostgreSQL unless --source-root names the \
            directory local paths must resolve into).

            Examples:
              pushprep worker --out /srv/push --concurrency 4
              pushprep worker --queue postgres://pushprep@db/pushprep --out /mnt/shared/push --metrics-port 9464
              pushprep worker --queue postgres://pushprep@db/pushprep --out /mnt/shared/push --source-root /mnt/shared/uploads
              pushprep worker --queue postgres://pushprep@db/pushprep --store s3://media/push --presign 7d
            """
    )

    @OptionGroup var queue: QueueOptions

    @OptionGroup var output: OutputOptions

    @Option(help: "Jobs run at once (default: the number of cores).")
    var concurrency: Int = ProcessingSettings.defaultJobs

    @OptionGroup(title: "Leases, retries and retention") var tuning: WorkerTuningOptions

    @Option(help: "Serve Prometheus metrics on this port (GET /metrics).")
    var metricsPort: Int?

    @Option(
        help: "The address the metrics server listens on (0.0.0.0 for every interface; there is no authentication).")
    var metricsHost: String = MetricsServer.defaultHost

    @Option(
        help: ArgumentHelp(
            "The sources queued jobs may name: remote (URLs only), local (paths only) or any.",
            discussion: "Default: any with a SQLite queue (one machine, one owner); remote with PostgreSQL, "
                + "or any when --source-root is given."))
    var sources: SourcePolicy.Kinds?

    @Option(help: "Local paths must resolve (symbolic links followed) to files under this directory.")
    var sourceRoot: String?

    @OptionGroup(title: "Remote sources") var remote: RemoteOptions

    @OptionGroup var logging: LogLevelOption<InfoByDefault>

    func validate() throws {
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be in 0...65535")
        }
        let configuration = try workerConfiguration
        let url = try queue.url
        try asUsageError {
            try configuration.validate()
            _ = try sourcePolicy(for: url)
        }
        // A job's own --base-url names its URLs when it has one; --presign is for the others.
        try output.validate(baseURL: nil)
    }

    /// What the jobs may read: `--sources`, else any on SQLite (one machine, whose owner
    /// queues the jobs), and on PostgreSQL (a queue others write to) URLs only unless a
    /// `--source-root` says which local files may be read.
    func sourcePolicy(for url: QueueURL) throws(PushPrepError) -> SourcePolicy {
        let kinds: SourcePolicy.Kinds
        if let sources {
            kinds = sources
        } else if case .sqlite = url {
            kinds = .any
        } else {
            kinds = sourceRoot == nil ? .remote : .any
        }
        return try SourcePolicy(kinds: kinds, root: sourceRoot)
    }

    var workerConfiguration: WorkerConfiguration {
        get throws { try tuning.configuration(concurrency: concurrency) }
    }

    func run() async throws {
        let logger = logging.makeLogger()
        WorkerRuntime.tuneAllocator(logger: logger)
        let (store, client) = try WorkerRuntime.outputStore(
            location: try output.location, storage: output.storage, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // Metrics must be bootstrapped before the worker creates its counters.
        if let metricsPort {
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let server = MetricsServer(
                registry: registry, host: metricsHost, port: metricsPort, logger: logger,
                onListening: { port in
                    logger.info("metrics on /metrics", metadata: ["host": "\(metricsHost)", "port": "\(port)"])
                })
            services.append(.init(service: server))
        }
        var configuration = try workerConfiguration
        configuration.recordsQueueStats = metricsPort != nil
        let url = try queue.url
        let sources = try sourcePolicy(for: url)
        let (worker, shutdown) = try await WorkerRuntime.worker(
            url: url, configuration: configuration, store: store, remote: remote.settings, sources: sources,
            tuning: tuning, logger: logger)
        // Shut down last-to-first: the worker drains before the metrics server stops.
        services.append(.init(service: worker))
        try await WorkerRuntime.run(
            services, drainTimeout: configuration.drainTimeout, logger: logger,
            cleanup: {
                await shutdown()
                await client?.shutdown()
            })
    }
}

extension SourcePolicy.Kinds: ExpressibleByArgument {}
