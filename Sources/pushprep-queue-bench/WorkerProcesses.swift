import Foundation
import Synchronization

/// Benchmark workers as child processes of this executable (`worker` subcommand), each writing
/// its ``WorkerReport`` to a file when it stops.
///
/// `Process` is not `Sendable`; after launch this type only calls its thread-safe members
/// (`isRunning`, `terminate`, `terminationStatus`, `processIdentifier`), hence the unchecked
/// conformance.
final class WorkerProcesses: @unchecked Sendable {
    private let processes: [Process]
    private let reportURLs: [URL]
    private let stopping = Atomic(false)

    /// How long stopped workers may take to drain and write their reports.
    static let exitTimeout: Duration = .seconds(30)

    /// Starts `count` workers with `arguments` (the shared ``WorkerOptions``), worker `i` in
    /// network namespace `namespaces[i % namespaces.count]` when any are named.
    init(count: Int, arguments: [String], namespaces: [String] = []) throws {
        let executable = try Self.currentExecutable()
        let directory = FileManager.default.temporaryDirectory
        let tag = "pushprep-queue-bench-\(ProcessInfo.processInfo.processIdentifier)"
        reportURLs = (0..<count).map { directory.appendingPathComponent("\(tag)-\($0).json") }
        var started: [Process] = []
        for (index, url) in reportURLs.enumerated() {
            try? FileManager.default.removeItem(at: url)
            let process = Process()
            let command = ["worker"] + arguments + ["--report", url.path]
            if namespaces.isEmpty {
                process.executableURL = executable
                process.arguments = command
            } else {
                // `ip netns exec` execs the worker, so signals sent to this process reach it.
                process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
                process.arguments =
                    ["netns", "exec", namespaces[index % namespaces.count], executable.path] + command
            }
            do {
                try process.run()
            } catch {
                for process in started { process.terminate() }
                throw BenchFailure("cannot start a worker process \(executable.path): \(error)")
            }
            started.append(process)
        }
        processes = started
    }

    /// Returns when every worker has exited after ``terminate()``; throws as soon as one exits
    /// before it.
    func waitForExit() async throws {
        var deadline: ContinuousClock.Instant?
        while true {
            let running = processes.filter(\.isRunning).count
            if running == 0 { return }
            if stopping.load(ordering: .acquiring) {
                deadline = deadline ?? .now + Self.exitTimeout
                if let deadline, ContinuousClock.now > deadline {
                    throw BenchFailure("\(running) worker processes did not stop within \(Self.exitTimeout)")
                }
            } else if let exited = processes.first(where: { !$0.isRunning }) {
                throw BenchFailure(
                    "worker process \(exited.processIdentifier) exited early with status \(exited.terminationStatus)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Asks every worker to drain and stop (SIGTERM).
    func terminate() {
        stopping.store(true, ordering: .releasing)
        for process in processes where process.isRunning { process.terminate() }
    }

    /// Stops the workers at once, on failure (SIGKILL).
    func kill() {
        stopping.store(true, ordering: .releasing)
        for process in processes where process.isRunning {
            _ = Foundation.kill(process.processIdentifier, SIGKILL)
        }
    }

    /// The workers' reports, merged; throws when one did not exit cleanly or wrote none.
    func reports() throws -> WorkerReport {
        var merged = WorkerReport()
        for (process, url) in zip(processes, reportURLs) {
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw BenchFailure(
                    "worker process \(process.processIdentifier) ended with status \(process.terminationStatus)")
            }
            do {
                merged.merge(try JSONDecoder().decode(WorkerReport.self, from: Data(contentsOf: url)))
            } catch {
                throw BenchFailure("cannot read the report of worker process \(process.processIdentifier): \(error)")
            }
        }
        return merged
    }

    func removeReports() {
        for url in reportURLs { try? FileManager.default.removeItem(at: url) }
    }

    /// This executable's path, to start it again as a worker.
    private static func currentExecutable() throws -> URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        if let path = Bundle.main.executablePath { return URL(fileURLWithPath: path) }
        throw BenchFailure("cannot find this executable to start worker processes")
    }
}
