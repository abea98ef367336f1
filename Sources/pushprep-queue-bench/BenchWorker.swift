import Logging
import PushPrepQueue
import ServiceLifecycle
import Synchronization

/// A handler that does nothing: every job succeeds at once, so that only the queue is measured.
final class NoOpJobHandler: JobHandler {
    private let count = Atomic(0)

    /// Jobs handled so far.
    var handled: Int { count.load(ordering: .relaxed) }

    func handle(_ job: ClaimedJob, context: JobContext) async -> JobOutcome.Kind {
        count.add(1, ordering: .relaxed)
        return .succeeded(result: "{}")
    }
}

/// One ``QueueWorker`` on its own queue connection (as a separate worker process would have:
/// its own GRDB pool or PostgreSQL client), with its queue calls timed.
struct BenchWorker: Service {
    let url: QueueURL
    let worker: QueueWorker<NoOpJobHandler>
    let recorder: CallRecorder
    let logger: Logger

    init(
        url: QueueURL, configuration: WorkerConfiguration, handler: NoOpJobHandler, recorder: CallRecorder,
        logger: Logger
    ) {
        self.url = url
        self.worker = QueueWorker(url: url, configuration: configuration, handler: handler, logger: logger)
        self.recorder = recorder
        self.logger = logger
    }

    /// Opens the connection and works until graceful shutdown or cancellation.
    func run() async throws {
        try await JobQueues.withBackend(url, logger: logger) { queue in
            await worker.work(on: TimedJobQueue(base: queue, recorder: recorder))
        }
    }
}
