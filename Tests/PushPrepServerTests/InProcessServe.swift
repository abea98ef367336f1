import ArgumentParser
import Foundation
import Logging
import Prometheus
import PushPrepCommandLine
import PushPrepCore
import PushPrepTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import pushprep

/// `pushprep serve` running in this process for a test: the command's options parsed as the
/// command parses them, and the services it runs (``ServeServices``: the API server on a free
/// port of 127.0.0.1, the embedded workers, the webhook dispatcher) in a service group of their
/// own, without signal handlers. What the process would write is kept: the log lines (the same
/// lines, ``LogLineHandler``) as its standard error, the listening line as its standard output.
///
/// Process-wide things stay the test process's: the metrics system is not bootstrapped (its
/// `/metrics` serves a registry of its own, empty), the allocator is not tuned, no signal is
/// handled. Tests of those, of the command line's own output and exit, and of per-process
/// memory start a process (``RunningServe``).
final class InProcessServe: ServeUnderTest {
    /// What the server wrote: log lines and the listening line.
    private final class Output: Sendable {
        let stdout = Mutex("")
        let stderr = Mutex("")
        /// Whether the services have stopped (as a process exits).
        let stopped = Atomic(false)
    }

    /// `http://127.0.0.1:PORT`.
    let baseURL: String
    private let output: Output
    private let group: ServiceGroup
    /// Runs the group, then the services' cleanup.
    private let running: Task<Void, Never>

    private init(baseURL: String, output: Output, group: ServiceGroup, running: Task<Void, Never>) {
        self.baseURL = baseURL
        self.output = output
        self.group = group
        self.running = running
    }

    /// Stops the services at once when the test drops the server without ``stop(within:)``, as
    /// ``RunningServe``'s process is killed.
    deinit { running.cancel() }

    /// What the server logged so far, line by line as `pushprep serve` writes its standard error.
    var stderrText: String { output.stderr.withLock { $0 } }

    /// Whether the services still run: neither stopped nor failed.
    var isRunning: Bool { !output.stopped.load(ordering: .acquiring) }

    /// What the server printed so far (its listening line).
    var stdoutText: String { output.stdout.withLock { $0 } }

    /// The last `count` log lines, for failure messages.
    func logTail(_ count: Int) -> String {
        "pushprep serve (in process) log, last lines:\n"
            + stderrText.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }

    /// Starts `pushprep serve --port 0 ARGUMENTS` in this process and waits for it to listen,
    /// with ``RunningServe/start(_:in:environment:)``'s defaults: the queue a SQLite file in
    /// `directory`, outputs to `directory/out`, uploads to `directory/uploads`, one embedded
    /// worker polling every 0.1 s (decoding in its pool of decoder processes of the built
    /// `pushprep`), loopback sources allowed, logs at debug level. Paths in
    /// `arguments` must be absolute (the process ran in `directory`; this one runs elsewhere).
    static func start(_ arguments: [String] = [], in directory: URL) async throws -> InProcessServe {
        // The decoders run the built `pushprep`: this process is the test runner.
        let decoder = try #require(TestTools.pushprepBinary(), "the pushprep executable was not built")
        let command = try ServeCommand.parse(
            RunningServe.arguments(arguments, in: directory) + ["--decoder-executable", decoder.path])
        let output = Output()
        let logger = Logger(label: "pushprep") { label in
            LogLineHandler(label: label, level: command.logging.level) { line in
                output.stderr.withLock { $0 += line }
            }
        }
        let (addresses, listening) = AsyncStream.makeStream(of: String.self)
        let services = try await ServeServices(
            command, registry: PrometheusCollectorRegistry(), logger: logger,
            onListening: { address in
                output.stdout.withLock { $0 += "pushprep serve: listening on \(address)\n" }
                listening.yield(address)
            })
        var configuration = ServiceGroupConfiguration(services: services.services, logger: logger)
        configuration.maximumGracefulShutdownDuration = services.drainTimeout + .seconds(15)
        let group = ServiceGroup(configuration: configuration)
        let running = Task {
            do {
                try await group.run()
            } catch {
                logger.error("the services stopped", metadata: ["error": "\(error)"])
            }
            output.stopped.store(true, ordering: .releasing)
            await services.cleanup()
            listening.finish()
        }
        var iterator = addresses.makeAsyncIterator()
        guard let address = await iterator.next() else {
            let log = output.stderr.withLock { $0 }
            throw TestTools.Failure(description: "pushprep serve (in process) stopped before listening\n\(log)")
        }
        return InProcessServe(baseURL: address, output: output, group: group, running: running)
    }

    /// Shuts the services down gracefully (the API stops accepting, the dispatcher and the
    /// workers drain, as on SIGTERM) and waits up to `timeout` for them to stop; past it they are
    /// cancelled. False when they did not stop in time.
    @discardableResult
    func stop(within timeout: Duration = .seconds(30)) async -> Bool {
        await group.triggerGracefulShutdown()
        let running = self.running
        // Past the deadline the operation is cancelled, and with it the services.
        let stopped = try? await withDeadline(timeout) {
            await withTaskCancellationHandler {
                await running.value
            } onCancel: {
                running.cancel()
            }
            return true
        }
        return stopped == true
    }
}
