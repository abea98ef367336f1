import ArgumentParser
import Foundation
import Logging
import Prometheus
import PushPrep
import PushPrepCommandLine
import PushPrepCore
import PushPrepQueue
import PushPrepServer
import PushPrepStorage
import PushPrepWorker
import ServiceLifecycle

/// What `pushprep serve` runs, built from its options: the embedded workers, the webhook
/// dispatcher and the API server, in the order a service group starts them (it shuts them down
/// last-to-first). The command runs them under its signal handlers and the metrics system it
/// bootstrapped; the server tests run the same services in their own process, with a logger,
/// a registry and a listening callback of their own.
struct ServeServices: Sendable {
    /// The services, started first-to-last and shut down last-to-first: the API stops accepting
    /// first, then the dispatcher and the workers drain.
    let services: [ServiceGroupConfiguration.ServiceConfiguration]
    /// How long running jobs may take to finish once shutdown begins (`--drain-timeout`).
    let drainTimeout: Duration
    /// Shuts down what the services ran on (the processing session, the bucket's client), once
    /// they have stopped.
    let cleanup: @Sendable () async -> Void

    /// The services of `command`, logging to `logger`; `registry` is served at `/metrics` and
    /// `onListening` is told the bound address. Reads the key, webhook and console secret
    /// files, checks the listener, creates the uploads and out directories and refuses a
    /// `--webhook-url` the dispatcher would refuse to connect to, as `pushprep serve` does
    /// before it starts anything.
    init(
        _ command: ServeCommand, registry: PrometheusCollectorRegistry?, logger: Logger,
        onListening: @escaping @Sendable (String) async -> Void
    ) async throws {
        let keys = try command.apiKeysFile.map { path in
            try asUsageError { try APIKeyStore(path: path) }
        }
        let signer = try command.webhookSecretFile.map { path in
            try asUsageError { try StandardWebhook(secretFile: path) }
        }
        var configuration = try command.serverConfiguration(keys: keys)
        configuration.attachmentSigner = try command.signing.signer()
        if let path = command.consoleSecretFile {
            configuration.consoleSecret = try asUsageError {
                try ConsoleSecret.read(path: path)
            }
        }
        try asUsageError { [configuration] in try configuration.validate() }
        // The listener first: a port that cannot be bound stops the command before the queue is
        // opened or created, the uploads directory made or a worker started.
        do {
            try await ListenerCheck.check(host: configuration.host, port: configuration.port)
        } catch {
            logger.debug("cannot listen", metadata: ["error": "\(error.cause.map { "\($0)" } ?? "")"])
            throw CommandFailure(message: "pushprep serve: \(error.message)")
        }
        let uploads = command.uploads
        do {
            try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(
                message: "cannot create the uploads directory \(uploads): \(error.localizedDescription)")
        }
        // A --webhook-url the dispatcher would refuse to connect to is refused now, as a job's
        // callback_url is when it is submitted.
        if let webhookURL = command.webhookURL,
            let refusal = await WebhookSettings(addressPolicyOf: configuration.remote)
                .refusal(ofCallback: webhookURL)
        {
            throw ValidationError("--webhook-url: \(refusal.message)")
        }
        // The API and the webhooks write the same attachment URLs (known once the port is bound).
        let publicURL = PublicURL(configured: configuration.publicURL)
        let url = try command.queue.url
        let location = try command.location
        let (store, client) = try WorkerRuntime.outputStore(
            location: location, storage: command.output.storage, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        var shutdown: (@Sendable () async -> Void)?
        let workerConfiguration = try command.tuning.configuration(concurrency: max(command.workers, 1))
        if command.workers > 0 {
            var embedded = workerConfiguration
            embedded.recordsQueueStats = true
            let sources = try asUsageError { try SourcePolicy(kinds: .any, root: uploads) }
            let (worker, shutdownWorker) = try await WorkerRuntime.worker(
                url: url, configuration: embedded, store: store, remote: command.remote.settings, sources: sources,
                tuning: command.tuning, logger: logger)
            services.append(.init(service: worker))
            shutdown = shutdownWorker
        }
        if let signer {
            // Webhook targets go through the same address policy as sources.
            var webhooks = WebhookSettings(addressPolicyOf: configuration.remote)
            webhooks.renderer = JobRenderer(configuration: configuration, publicURL: publicURL)
            services.append(
                .init(
                    service: WebhookService(queueURL: url, settings: webhooks, signer: signer, logger: logger)))
        }
        services.append(
            .init(
                service: APIServer(
                    configuration: configuration, queueURL: url, registry: registry, publicURL: publicURL,
                    readiness: ServeCommand.readiness(of: location, client: client, uploads: uploads), logger: logger,
                    onListening: onListening)))
        self.services = services
        self.drainTimeout = workerConfiguration.drainTimeout
        let processing = shutdown
        self.cleanup = {
            await processing?()
            await client?.shutdown()
        }
    }
}
