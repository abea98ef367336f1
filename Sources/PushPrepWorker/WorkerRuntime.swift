import Foundation
package import Logging
package import PushPrep
package import PushPrepCore
import PushPrepMedia
package import PushPrepQueue
package import PushPrepRemote
package import ServiceLifecycle
import UnixSignals

/// Building and running a worker that processes media, as `worker` and `serve` both do (the
/// command line turns its options into the arguments, and these failures into its own).
package enum WorkerRuntime {
    /// A worker on `url` processing into `store`, its inputs sharing the memory budget `budget`
    /// (or decoded by `decoders`, which the session then owns), and the processing session it
    /// runs in (to shut down once the worker has stopped).
    package static func makeWorker(
        url: QueueURL, configuration: WorkerConfiguration, store: any OutputStore, remote: RemoteSettings,
        sources: SourcePolicy, budget: MemoryBudget, decoders: (any InputDecoder)? = nil, logger: Logger
    ) throws(PushPrepError) -> (QueueWorker<ProcessingJobHandler>, ProcessingSession) {
        let session = try ProcessingSession(
            threads: configuration.concurrency, remote: remote, sources: sources, memory: budget, decoders: decoders,
            logger: logger)
        let handler = ProcessingJobHandler(session: session, store: store)
        handler.removeAbandonedStaging(workerID: configuration.workerID)
        return (QueueWorker(url: url, configuration: configuration, handler: handler, logger: logger), session)
    }

    /// Sets the C allocator up for a long-running process (see
    /// ``FreedMemory/limitArenas(environment:)``), before the command starts its threads.
    package static func tuneAllocator(logger: Logger) {
        if FreedMemory.limitArenas(environment: ProcessInfo.processInfo.environment) {
            logger.debug("allocator arenas limited", metadata: ["arenas": "\(FreedMemory.servingArenas)"])
        }
    }

    /// How often the allocator's free memory is given back (``AllocatorTrimmer``).
    package static let trimInterval: Duration = .seconds(10)

    /// Runs `services` until SIGTERM or SIGINT, shutting them down last-to-first within the
    /// drain timeout (and 15 s more for the rest), then `cleanup` (also when a ``PushPrepError``
    /// stops them, which is thrown after it). An ``AllocatorTrimmer`` runs beside them.
    package static func runServices(
        _ services: [ServiceGroupConfiguration.ServiceConfiguration], drainTimeout: Duration, logger: Logger,
        cleanup: () async -> Void
    ) async throws {
        let services = [.init(service: AllocatorTrimmer(interval: trimInterval))] + services
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = drainTimeout + .seconds(15)
        let group = ServiceGroup(configuration: groupConfiguration)
        do {
            try await group.run()
        } catch let error as PushPrepError {
            await cleanup()
            throw error
        }
        await cleanup()
    }
}

/// Gives the allocator's free memory back to the system every `interval` (``FreedMemory/trim()``),
/// so that what a burst of work freed does not stay with the process (issue 32).
struct AllocatorTrimmer: Service {
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                FreedMemory.trim()
            }
        }
    }
}
