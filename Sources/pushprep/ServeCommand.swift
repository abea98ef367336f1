import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepPayload
import PushPrepQueue
import PushPrepServer
import PushPrepStorage
import PushPrepWorker

/// `pushprep serve`: the HTTP API, with embedded workers on the same queue.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API (and run workers) until stopped (SIGTERM/SIGINT drain gracefully).",
        discussion: """
            Other services submit sources over HTTP (POST /v1/jobs, POST /v1/uploads, POST \
            /v1/process), learn when attachments are ready (webhooks, or GET /v1/jobs/ID?wait=20s) \
            and fetch manifests, payloads and pre-flight findings. The contract is the OpenAPI \
            document at /openapi.json. Errors are RFC 9457 problem details with the CLI's codes.

            One command runs everything on one machine: --workers (default: the core count) \
            embedded workers process the same queue. With --workers 0 the server is an API node \
            in front of separate `pushprep worker` hosts sharing a PostgreSQL queue.

            Without --api-keys-file the server listens on loopback only. With it, requests need \
            Authorization: Bearer KEY (read or write scope); the published attachments stay \
            public (phones cannot send keys). Every request must name the server in its Host \
            (its address and port, localhost, --public-url's host or an --allowed-host); writes \
            without a key from another site's page (Origin, Sec-Fetch-Site) are refused.

            Webhooks (callback_url, --webhook-url) are signed per Standard Webhooks with \
            --webhook-secret-file, kept in the queue's database until delivered, and retried \
            for about a day.

            Examples:
              pushprep serve --out /srv/push
              pushprep serve --out /srv/push --webhook-secret-file hook.secret
              pushprep serve --host 0.0.0.0 --api-keys-file keys --out /srv/push
              pushprep serve --queue postgres://db/push --workers 0 --store s3://media
            """
    )

    @Option(help: "The address to listen on (anything but loopback needs --api-keys-file).")
    var host: String = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one; the bound port is printed).")
    var port: Int = 8080

    @OptionGroup var queue: QueueOptions

    @OptionGroup var output: OutputOptions

    @Option(help: "Embedded workers' jobs at once; 0 for an API-only node (default: the core count).")
    var workers: Int = ProcessingSettings.defaultJobs

    @Option(help: "How clients reach this server, e.g. https://push.example.com (default: http://HOST:PORT).")
    var publicURL: String?

    @Option(
        name: ProcessingSettings.Declared.baseURL.name,
        help:
            "URL prefix of published files for jobs that name none (default: PUBLIC-URL/v1/attachments with an out directory)."
    )
    var baseURL: String?

    @Option(
        help:
            "Where uploads are kept until processed; workers read local files only from here (default ./pushprep-uploads)."
    )
    var uploads: String = "./pushprep-uploads"

    @Option(help: "API keys, one per line with optional scopes (KEY [read|write|read,write]); KEY may be sha256:HEX.")
    var apiKeysFile: String?

    @Option(help: "Requests a second per API key (token bucket); none by default.")
    var rateLimit: Double?

    @Option(help: "Requests a key may send at once above its rate.")
    var rateBurst: Double = 100

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "A name clients reach this server by (NAME for any port, NAME:PORT; repeatable).",
            discussion:
                "Requests whose Host is not the bound address, localhost, --public-url's host or one of these get 421."
        ))
    var allowedHosts: [String] = []

    @Option(help: "Failed API keys and console logins a client address may make at once before 429 (0: no limit).")
    var authFailureLimit: Int = 20

    @Option(help: "Seconds in which --auth-failure-limit failures are forgiven again.")
    var authFailureWindow: Double = 60

    @Option(help: "Refuse new jobs with 429 while more than this many are queued.")
    var maxQueued: Int = 50_000

    @Option(help: "The largest JSON request body.")
    var maxBodyBytes: Int = 1 << 20

    @Option(help: "The largest upload (POST /v1/uploads).")
    var maxUploadBytes: Int = 200_000_000

    @Option(help: "The longest ?wait= and ?timeout= a request may ask for, in seconds.")
    var maxWait: Double = 60

    @Option(
        help: "Seconds a request may take to be handled, its upload included (408 past it; longer than --max-wait).")
    var requestTimeout: Double = 300

    @Option(help: "Long polls (?wait=, POST /v1/process) waiting at once over all clients; more get 429.")
    var maxWaits: Int = ServerConfiguration().maxWaits

    @Option(help: "Long polls waiting at once per API key (per client address without keys); more get 429.")
    var maxWaitsPerClient: Int = ServerConfiguration().maxWaitsPerClient

    @Option(
        name: .customLong("max-preflight-urls"),
        help: "The most attachment URLs one POST /v1/preflight may download (its fetch_max_urls at most).")
    var maxPreflightURLs: Int = PreflightSession.FetchBudget().maxURLs

    @Option(help: "The most bytes one POST /v1/preflight may download (its fetch_max_bytes at most).")
    var maxPreflightBytes: Int = PreflightSession.FetchBudget().maxBytes

    @Option(
        help:
            "Seconds an upload is kept once no queued or running job refers to it, then deleted (more than the longest upload-to-enqueue time of any server sharing --uploads)."
    )
    var keepUploads: Double = 60

    @Option(help: "Where to POST job results of jobs created without a callback_url.")
    var webhookURL: String?

    @Option(
        help: ArgumentHelp(
            "Sign webhooks (Standard Webhooks) with the secret in this file (whsec_BASE64; several lines while rotating).",
            discussion: "Without it the server takes no callback_url: an unsigned webhook could be forged."))
    var webhookSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "Sign the console's login sessions with the secret in this file (at least 32 bytes).",
            discussion: "Without it each process signs with a random key of its own: a restart logs everyone out."))
    var consoleSecretFile: String?

    @OptionGroup(title: "Signed attachment URLs") var signing: AttachmentSigningOptions

    @OptionGroup(title: "Leases, retries and retention") var tuning: WorkerTuningOptions

    @OptionGroup(title: "Remote sources") var remote: RemoteOptions

    @OptionGroup var logging: LogLevelOption<InfoByDefault>

    func validate() throws {
        guard (0...256).contains(workers) else { throw ValidationError("--workers must be in 0...256") }
        _ = try tuning.configuration(concurrency: max(workers, 1))
        try output.validate(baseURL: baseURL)
        if let webhookURL {
            try checkURL(webhookURL, option: "--webhook-url")
            guard webhookSecretFile != nil else {
                throw ValidationError("--webhook-url needs --webhook-secret-file: webhooks are signed")
            }
        }
        // The keys are read in run(); here it is enough to know there will be some.
        let configuration = try serverConfiguration(keys: nil)
        try signing.validate(directory: configuration.attachmentsDirectory != nil)
        try asUsageError { try configuration.validate(keysConfigured: apiKeysFile != nil) }
    }

    private func checkURL(_ text: String, option: String) throws {
        let lowercased = text.lowercased()
        guard lowercased.hasPrefix("http://") || lowercased.hasPrefix("https://"), URL(string: text) != nil else {
            throw ValidationError("\(option) must be an http or https URL")
        }
    }

    /// `--store`, else `--out`, else `./pushprep-out`.
    var location: StoreLocation {
        get throws { try output.location }
    }

    func serverConfiguration(keys: APIKeyStore?) throws -> ServerConfiguration {
        var directory: String?
        if case .directory(let out) = try location { directory = out }
        var configuration = ServerConfiguration(
            host: host, port: port, apiKeys: keys, rateLimit: rateLimit, rateBurst: rateBurst, maxQueued: maxQueued,
            maxBodyBytes: maxBodyBytes, maxUploadBytes: maxUploadBytes, maxWaitSeconds: maxWait, publicURL: publicURL,
            baseURL: baseURL, attachmentsDirectory: directory, uploadsDirectory: uploads, webhookURL: webhookURL,
            acceptsCallbacks: webhookSecretFile != nil)
        configuration.remote = remote.settings
        configuration.requestTimeoutSeconds = requestTimeout
        configuration.allowedHosts = allowedHosts
        configuration.authFailureLimit = authFailureLimit
        configuration.authFailureWindowSeconds = authFailureWindow
        configuration.maxWaits = maxWaits
        configuration.maxWaitsPerClient = maxWaitsPerClient
        configuration.preflightFetchCeiling = PreflightSession.FetchBudget(
            maxURLs: maxPreflightURLs, maxBytes: maxPreflightBytes)
        configuration.keepUploadsSeconds = keepUploads
        return configuration
    }

    func run() async throws {
        let logger = logging.makeLogger()
        WorkerRuntime.tuneAllocator(logger: logger)
        // Metrics must be bootstrapped before the workers create their counters.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let serve = try await ServeServices(
            self, registry: registry, logger: logger,
            onListening: { address in
                FileHandle.standardOutput.write(Data("pushprep serve: listening on \(address)\n".utf8))
            })
        try await WorkerRuntime.run(
            serve.services, drainTimeout: serve.drainTimeout, logger: logger, cleanup: serve.cleanup)
    }

    /// What `/readyz` checks besides the queue: that outputs can be published (the out
    /// directory writable; the bucket answering a HEAD, within 3 s, with the server's key) and
    /// that uploads can be written.
    static func readiness(of location: StoreLocation, client: S3Client?, uploads: String)
        -> @Sendable () async throws -> Void
    {
        {
            guard access(uploads, W_OK) == 0 else {
                throw PushPrepError(.ioError, "the uploads directory \(uploads) is not writable")
            }
            switch location {
            case .directory(let out):
                guard access(out, W_OK) == 0 else {
                    throw PushPrepError(.storageUnavailable, "the out directory \(out) is not writable")
                }
            case .s3(let s3):
                guard let client else { return }
                // Any key: a missing object (404) is an answer; a refusal or no answer is not.
                let key = try s3.key(forFile: "pushprep-readiness-check")
                // withDeadline, not a raced Task.sleep: that would stay scheduled for 3 s after
                // every probe (see withDeadline).
                guard try await withDeadline(.seconds(3), { _ = try await client.head(key) }) != nil else {
                    throw PushPrepError(.storageUnavailable, "the bucket did not answer within 3 s")
                }
            }
        }
    }
}
