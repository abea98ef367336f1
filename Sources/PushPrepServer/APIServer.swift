package import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
package import Logging
import Metrics
package import Prometheus
import PushPrepCore
package import PushPrepQueue
import PushPrepRemote
import ServiceLifecycle
import Synchronization

/// `pushprep serve`'s HTTP side: the `/v1` API, health, readiness and metrics, as a service of
/// the command's service group (beside the embedded workers and the webhook dispatcher). On
/// graceful shutdown it stops accepting connections and finishes the requests in flight.
package struct APIServer: Service {
    let configuration: ServerConfiguration
    let queueURL: QueueURL
    let registry: PrometheusCollectorRegistry?
    let publicURL: PublicURL
    let readiness: @Sendable () async throws -> Void
    let logger: Logger
    let onListening: (@Sendable (String) async -> Void)?

    /// A server for the queue at `queueURL` (opened when the service runs, closed when it
    /// stops). `registry` is the Prometheus registry the metrics system was bootstrapped with
    /// (served at `/metrics`); `readiness` checks what else `/readyz` needs (the store);
    /// `onListening` reports the URL the server is bound to.
    package init(
        configuration: ServerConfiguration, queueURL: QueueURL, registry: PrometheusCollectorRegistry?,
        publicURL: PublicURL? = nil, readiness: @escaping @Sendable () async throws -> Void = {}, logger: Logger,
        onListening: (@Sendable (String) async -> Void)? = nil
    ) {
        self.publicURL = publicURL ?? PublicURL(configured: configuration.publicURL)
        self.configuration = configuration
        self.queueURL = queueURL
        self.registry = registry
        self.readiness = readiness
        self.logger = logger.with("component", "api")
        self.onListening = onListening
    }

    package func run() async throws {
        try await JobQueues.withBackend(queueURL, logger: logger) { queue in
            let sweeper = Self.uploadSweeper(configuration: configuration, queue: queue, logger: logger)
            let application = Self.application(
                configuration: configuration, queue: queue, publicURL: publicURL, registry: registry,
                readiness: readiness, sweeper: sweeper, logger: logger, onListening: onListening)
            try await withThrowingDiscardingTaskGroup { group in
                if let sweeper { group.addTask { await sweeper.run() } }
                do {
                    try await application.run()
                } catch {
                    // A port taken since ListenerCheck looked: the same sentence, not NIO's text.
                    guard let failure = NetworkFailure(error),
                        [.addressInUse, .permissionDenied, .addressNotAvailable].contains(failure.kind)
                    else { throw error }
                    logger.debug("cannot listen", metadata: ["error": "\(error)"])
                    throw ListenerCheck.failure(error, host: configuration.host, port: configuration.port)
                }
                group.cancelAll()
            }
        }
    }

    /// The sweeper of the uploads directory, when the server takes uploads.
    static func uploadSweeper(configuration: ServerConfiguration, queue: any JobQueueBackend, logger: Logger)
        -> UploadSweeper?
    {
        guard let directory = configuration.uploadsDirectory else { return nil }
        let grace = Duration.milliseconds(Int64((configuration.keepUploadsSeconds * 1000).rounded()))
        return UploadSweeper(
            directory: directory, queue: queue, grace: grace, interval: UploadSweeper.interval(forGrace: grace),
            logger: logger)
    }

    /// The server as it runs: the routes of
    /// ``router(configuration:queue:publicURL:registry:readiness:names:sweeper:)`` on HTTP/1.1 with
    /// ``channelConfiguration(_:)``. Once bound, it records its port with the names it answers to
    /// (``ServerNames``) and its URL with `publicURL`, then calls `onListening` with that URL. The
    /// tests run this same application in-process; `run()` runs the upload sweeper beside it.
    static func application(
        configuration: ServerConfiguration, queue: any JobQueueBackend, publicURL: PublicURL,
        registry: PrometheusCollectorRegistry?, readiness: @escaping @Sendable () async throws -> Void,
        sweeper: UploadSweeper? = nil, logger: Logger, onListening: (@Sendable (String) async -> Void)?
    ) -> Application<RouterResponder<APIRequestContext>> {
        let names = ServerNames(configuration)
        let router = Self.router(
            configuration: configuration, queue: queue, publicURL: publicURL, registry: registry,
            readiness: readiness, names: names, sweeper: sweeper)
        return Application(
            router: router, server: .http1(configuration: Self.channelConfiguration(configuration)),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "pushprep"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                names.bound(port: port)
                let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
                let bound = "http://\(host):\(port)"
                publicURL.bound(bound)
                if let warning = JobRenderer(configuration: configuration, publicURL: publicURL)
                    .unreachableAttachmentsWarning
                {
                    logger.warning("\(warning)")
                }
                await onListening?(bound)
            },
            logger: logger)
    }

    /// The connection's limits: headers of at most 16 KiB each, 32 KiB and 100 fields in all
    /// (about nginx's defaults; NIO answers more with an error and closes), and a connection
    /// idle with no request in flight for longer than the longest long poll plus 30 s is closed,
    /// so idle clients cannot hold connections open.
    /// A request NIO's parser refuses is answered with problem JSON (``ParserErrorHandler``).
    static func channelConfiguration(_ configuration: ServerConfiguration) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            additionalChannelHandlers: [ParserErrorHandler()],
            idleTimeout: .seconds(Int64(configuration.maxWaitSeconds.rounded(.up)) + 30),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100))
    }

    /// The routes and middleware of the API and the console; `names` (made from `configuration`
    /// when nil) learns the bound port from
    /// ``application(configuration:queue:publicURL:registry:readiness:sweeper:logger:onListening:)``.
    static func router(
        configuration: ServerConfiguration, queue: any JobQueueBackend, publicURL: PublicURL,
        registry: PrometheusCollectorRegistry?, readiness: @escaping @Sendable () async throws -> Void,
        names: ServerNames? = nil, sweeper: UploadSweeper? = nil
    ) -> Router<APIRequestContext> {
        let names = names ?? ServerNames(configuration)
        let failures = AuthFailureLimiter(
            limit: configuration.authFailureLimit, window: .seconds(configuration.authFailureWindowSeconds))
        let router = Router(context: APIRequestContext.self)
        // Outermost first: metrics see the final status of every request, problems included.
        router.add(middleware: MetricsMiddleware())
        let routes = RouteTable()
        router.add(middleware: RequestIDMiddleware(maxURLBytes: configuration.maxURLBytes, routes: routes))
        // Before anything reads the request: whom it is for, and how its body is framed.
        router.add(middleware: HostMiddleware(names: names))
        router.add(middleware: TransferEncodingMiddleware())
        router.add(middleware: DeadlineMiddleware(timeout: .seconds(Int64(configuration.requestTimeoutSeconds))))
        // The API's routes are in a group behind the keys; health, readiness, the contract, the
        // console (its own session, ``ConsoleRoutes``) and the attachments phones download
        // (phones cannot send keys; `--sign-attachments` protects those) are not.
        let auth = AuthMiddleware(
            keys: configuration.apiKeys,
            rateLimiter: configuration.rateLimit.map { RateLimiter(rate: $0, burst: configuration.rateBurst) },
            names: names, failures: failures)
        let api = router.group().add(middleware: auth)
        router.get("healthz") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get("readyz") { _, _ -> Response in
            do {
                _ = try await queue.stats()
                try await readiness()
            } catch let error as PushPrepError {
                throw Problem(
                    .serviceUnavailable, error.code, "not ready: \(error.message)", retryAfter: Problem.unavailableRetry
                )
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
        }
        if let registry { api.addMetricsRoute(registry: registry) }
        // Made once; every answer shares the buffer.
        let openAPIDocument = ByteBuffer(bytes: PackageResources.openapi_json)
        router.get("openapi.json") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: openAPIDocument))
        }
        let depth = QueueDepth(queue: queue, maxQueued: configuration.maxQueued)
        let renderer = JobRenderer(configuration: configuration, publicURL: publicURL)
        let watch = JobWatch(
            queue: queue, maxWaits: configuration.maxWaits, maxWaitsPerClient: configuration.maxWaitsPerClient)
        JobRoutes(queue: queue, configuration: configuration, renderer: renderer, depth: depth, watch: watch)
            .register(on: api)
        DeliveryRoutes(queue: queue).register(on: api)
        UploadRoutes(queue: queue, configuration: configuration, renderer: renderer, depth: depth, sweeper: sweeper)
            .register(on: api)
        PayloadRoutes(queue: queue, configuration: configuration, renderer: renderer).register(on: api)
        ConsoleRoutes(
            queue: queue, configuration: configuration, renderer: renderer, publicURL: publicURL,
            sessions: ConsoleSessions(secret: configuration.consoleSecret, keys: configuration.apiKeys),
            names: names, failures: failures
        ).register(on: router)
        if let directory = configuration.attachmentsDirectory {
            AttachmentRoutes(directory: directory, signer: configuration.attachmentSigner)
                .register(on: router)
        }
        // A request no route answers meets the key check too (a router's middleware apply to the
        // routes added after them, and to its not-found answer): without a key an unknown path
        // is 401, as an API route is, and tells nothing of which paths exist.
        router.add(middleware: auth)
        routes.record(router.routes.map { ("\($0.path)", $0.method.rawValue) })
        return router
    }
}

extension APIServer: CustomStringConvertible {
    /// What the service group logs: where it listens, never the keys' hashes or other settings.
    package var description: String { "APIServer(\(configuration.host):\(configuration.port))" }
}

/// The URL clients reach this server at: `--public-url`, else the address it bound (known only
/// once listening, when the port was 0). Shared by the API and the webhook dispatcher, which
/// both write attachment URLs.
package final class PublicURL: Sendable {
    private let value: Mutex<String?>

    package init(configured: String?) {
        value = Mutex(configured.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }

    /// Records the bound address, unless a public URL was configured.
    func bound(_ url: String) {
        value.withLock { if $0 == nil { $0 = url } }
    }

    package var url: String? { value.withLock { $0 } }
}

/// How a job is shown to clients, the same in API answers, payloads and webhooks: its
/// ``JobResource``, with the attachment URLs this server publishes signed when
/// `--sign-attachments` is on (the stored manifest entry never holds a signature).
package struct JobRenderer: Sendable {
    let configuration: ServerConfiguration
    let publicURL: PublicURL

    package init(configuration: ServerConfiguration, publicURL: PublicURL) {
        self.configuration = configuration
        self.publicURL = publicURL
    }

    /// The URL prefix of this server's published files, for jobs whose settings name none:
    /// `--base-url`, else `PUBLIC-URL/v1/attachments` when it publishes into an out directory.
    var attachmentBaseURL: String? {
        if let baseURL = configuration.baseURL { return baseURL }
        guard configuration.attachmentsDirectory != nil, let url = publicURL.url else { return nil }
        return url + "/v1/attachments"
    }

    /// `record` as clients see it; signatures expire `--attachment-url-ttl` after `now` (a
    /// webhook passes the job's end, so that every retry sends the same bytes).
    package func resource(_ record: JobRecord, now: Date = Date()) -> JobResource {
        let resource = JobResource(record)
        guard let signer = configuration.attachmentSigner, let base = attachmentBaseURL else { return resource }
        return resource.transformingAttachment { signer.sign(&$0, under: base, now: now) }
    }
}
