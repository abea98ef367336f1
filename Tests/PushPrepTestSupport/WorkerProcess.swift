package import Foundation
import PushPrepQueue
package import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `pushprep` process started by a test and left running while the test acts on it: signals
/// (SIGKILL for a crash, SIGTERM for a graceful stop), bounded waits for its exit, and its
/// standard error for failure messages.
///
/// Output goes to files, so a chatty worker never blocks on a full pipe. A process still
/// running when its object goes away is killed with SIGKILL and reaped, so a failing test never
/// leaves workers behind.
package final class PushPrepProcess: @unchecked Sendable {
    /// How a process ended.
    package struct Exit: Sendable, CustomStringConvertible {
        /// The exit status, or the signal number when `signal` is set.
        package var status: Int32
        /// The signal that ended the process, if one did.
        package var signal: Int32?

        package var description: String { signal.map { "killed by signal \($0)" } ?? "exit status \(status)" }
    }

    /// The arguments after `pushprep`.
    let arguments: [String]
    private let process = Process()
    private let scratch: URL

    /// Starts `pushprep ARGUMENTS` in `directory`, with this process's environment and
    /// `environment` over it (an `s3://` store's `AWS_*` keys, say).
    package init(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws {
        self.arguments = arguments
        scratch = try TestTools.temporaryDirectory()
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = try PushPrepCLI.binary()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
    }

    deinit {
        if process.isRunning {
            signalProcess(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? (process.standardOutput as? FileHandle)?.close()
        try? (process.standardError as? FileHandle)?.close()
        TestTools.removeDirectory(scratch)
    }

    package var pid: Int32 { process.processIdentifier }
    package var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGKILL, SIGTERM, …) to the process if it still runs.
    package func send(_ signal: Int32) {
        if process.isRunning { signalProcess(process.processIdentifier, signal) }
    }

    /// Waits for the process to end, for at most `timeout`; nil when it is still running then.
    package func waitForExit(within timeout: Duration) async -> Exit? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Exit(status: process.terminationStatus, signal: signal)
    }

    /// SIGKILL, then waits for the exit (a killed process is gone within milliseconds; 10 s
    /// covers a machine under load).
    @discardableResult
    package func kill() async throws -> Exit {
        send(SIGKILL)
        guard let exit = await waitForExit(within: .seconds(10)) else {
            throw TestTools.Failure(description: "pid \(pid) still runs 10 s after SIGKILL")
        }
        return exit
    }

    /// What the process wrote on standard output so far.
    package var stdoutText: String {
        String(decoding: (try? Data(contentsOf: scratch.appendingPathComponent("stdout"))) ?? Data(), as: UTF8.self)
    }

    /// What the process wrote on standard error so far.
    package var stderrText: String {
        String(decoding: (try? Data(contentsOf: scratch.appendingPathComponent("stderr"))) ?? Data(), as: UTF8.self)
    }

    /// The last `count` lines of standard error, for failure messages.
    package func logTail(_ count: Int = 40) -> String {
        let lines = stderrText.split(separator: "\n", omittingEmptySubsequences: false)
        return "pushprep \(arguments.first ?? "") (pid \(pid)) stderr, last lines:\n"
            + lines.suffix(count).joined(separator: "\n")
    }
}

/// Running the built `pushprep` to completion.
package enum PushPrepCLI {
    package struct Result: Sendable {
        package var status: Int32
        package var stdout: Data
        package var stderr: Data

        package init(status: Int32, stdout: Data, stderr: Data) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
        package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        package var stderrText: String { String(decoding: stderr, as: UTF8.self) }
        /// Standard output split into non-empty lines.
        package var lines: [String] { stdoutText.split(separator: "\n").map(String.init) }
    }

    /// The built `pushprep`; fails the test when it is not there.
    package static func binary() throws -> URL {
        try #require(TestTools.pushprepBinary(), "the pushprep executable was not built (swift build --build-tests)")
    }

    /// Runs `pushprep ARGUMENTS` in `directory`, bounded to 120 s.
    package static func run(_ arguments: [String], in directory: URL) throws -> Result {
        let result = try TestTools.run(try binary().path, arguments, currentDirectory: directory)
        return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// ``run(_:in:)`` from an async test, with `stdin` as standard input: the wait happens on a
    /// thread of its own, never on one of Swift concurrency's few threads.
    package static func runAsync(_ arguments: [String], in directory: URL, stdin: Data? = nil) async throws -> Result {
        let binary = try binary().path
        return try await ChildProcessTools.blocking {
            let result = try TestTools.run(binary, arguments, stdin: stdin, currentDirectory: directory)
            return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
        }
    }

    /// Runs `pushprep ARGUMENTS` and requires exit status 0.
    package static func runChecked(
        _ arguments: [String], in directory: URL, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Result {
        let result = try run(arguments, in: directory)
        try #require(
            result.status == 0,
            "pushprep \(arguments.joined(separator: " ")) exited with \(result.status): \(result.stderrText)",
            sourceLocation: sourceLocation)
        return result
    }

    /// Runs `pushprep worker` with the options these tests share: a short lease, fast polling,
    /// loopback sources allowed, every kind of source read (unless `options` names a source
    /// option) and debug logs (for failure messages). Outputs go to `out`, or to `store` (an
    /// `s3://` URL, with its key in `environment`) when given.
    package static func startWorker(
        queue: String, out: URL, store: String? = nil, environment: [String: String] = [:], in directory: URL,
        lease: Double = 2, concurrency: Int = 1, pollInterval: Double = 0.2, options: [String] = []
    ) throws -> PushPrepProcess {
        try PushPrepProcess(
            [
                "worker", "--queue", queue, store == nil ? "--out" : "--store", store ?? out.path, "--lease",
                "\(lease)",
                "--concurrency",
                "\(concurrency)", "--poll-interval", "\(pollInterval)", "--allow-private-networks", "--log-level",
                "debug",
            ] + (options.contains { $0.hasPrefix("--source") } ? [] : ["--sources", "any"]) + options, in: directory,
            environment: environment)
    }
}

extension QueueURL {
    /// The URL as a `--queue` argument for another process, password included (unlike
    /// `description`, which hides it).
    package var commandLineArgument: String {
        switch self {
        case .sqlite(let path):
            return "sqlite:\(path)"
        case .postgres(let location):
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(
                    withAllowedCharacters: .urlUserAllowed.subtracting(.init(charactersIn: ":@")))
                    ?? text
            }
            let password = location.password.map { ":" + encoded($0) } ?? ""
            return "postgres://\(encoded(location.username))\(password)@\(location.host):\(location.port)/"
                + "\(location.database)?sslmode=\(location.tls ? "require" : "disable")"
        }
    }
}

/// Bounded polling: the way these tests wait for another process, never a fixed sleep.
package enum Poll {
    /// Calls `probe` every `interval` until it returns a value, and returns that value; throws,
    /// naming `what` and adding `diagnostics()`, when `timeout` passes first.
    package static func value<Value>(
        _ what: String, within timeout: Duration, every interval: Duration = .milliseconds(50),
        diagnostics: () -> String = { "" }, _ probe: () async throws -> Value?
    ) async throws -> Value {
        let start = ContinuousClock.now
        while true {
            if let value = try await probe() { return value }
            guard ContinuousClock.now - start < timeout else {
                throw TestTools.Failure(
                    description: "timed out after \(timeout) waiting until \(what)\n\(diagnostics())")
            }
            try await Task.sleep(for: interval)
        }
    }

    /// Waits until `condition` holds (see ``value(_:within:every:diagnostics:_:)``).
    package static func until(
        _ what: String, within timeout: Duration, every interval: Duration = .milliseconds(50),
        diagnostics: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        _ = try await value(what, within: timeout, every: interval, diagnostics: diagnostics) {
            try await condition() ? true : nil
        }
    }
}

/// Tiny, distinct BMP images (8×8, 24-bit, 246 bytes), which PushPrep decodes itself: thousands
/// are written in milliseconds and each processes in a few.
package enum TinyBMP {
    static let side = 8

    /// Image number `index` (0 ..< 2²⁴): the first pixel holds `index`, so no two are alike;
    /// the others are a gradient seeded by it.
    package static func bytes(_ index: Int) -> [UInt8] {
        precondition((0..<(1 << 24)).contains(index), "TinyBMP index out of range")
        func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        var pixels: [UInt8] = []
        pixels.reserveCapacity(side * side * 3)
        for y in 0..<side {
            for x in 0..<side {
                if x == 0 && y == 0 {
                    pixels += [UInt8(index & 0xFF), UInt8((index >> 8) & 0xFF), UInt8((index >> 16) & 0xFF)]
                } else {
                    pixels += [
                        UInt8(truncatingIfNeeded: index &* 7 &+ x &* 29),
                        UInt8(truncatingIfNeeded: index &* 13 &+ y &* 31),
                        UInt8(truncatingIfNeeded: x &* y &* 5 &+ index),
                    ]
                }
            }
        }
        // Rows of 8 × 3 bytes need no padding to 4 bytes.
        let fileHeader = Array("BM".utf8) + le32(54 + pixels.count) + le32(0) + le32(54)
        let infoHeader =
            le32(40) + le32(side) + le32(side) + le16(1) + le16(24) + le32(0) + le32(pixels.count) + le32(2835)
            + le32(2835) + le32(0) + le32(0)
        return fileHeader + infoHeader + pixels
    }

    /// Writes images `0 ..< count` as `img-00000.bmp`, … into `directory`; returns their paths.
    @discardableResult
    package static func write(count: Int, into directory: URL, firstIndex: Int = 0) throws -> [URL] {
        try (0..<count).map { offset in
            let url = directory.appendingPathComponent(String(format: "img-%05d.bmp", firstIndex + offset))
            try Data(bytes(firstIndex + offset)).write(to: url)
            return url
        }
    }
}

/// A worker's out directory as tests see it.
package enum OutDirectory {
    /// Names in `directory` that do not start with a dot: the published outputs, not the
    /// `.staging` folder.
    package static func visibleNames(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
    }
}

/// `kill(2)`, out of reach of ``PushPrepProcess/kill()``'s name.
private func signalProcess(_ pid: pid_t, _ signal: Int32) {
    _ = kill(pid, signal)
}
