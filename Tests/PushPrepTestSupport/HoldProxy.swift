package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `scripts/s3_hold_proxy.py`: a TCP relay on 127.0.0.1 to a local port. By default it holds
/// every multipart part upload unanswered, so a worker storing through it to moto is stuck
/// mid-upload for as long as a test needs; with `passAll` it passes everything, and ``pause()``
/// (SIGSTOP) makes a server behind it stop answering without touching the server. Killed by
/// ``stop()`` or when it goes away.
package final class HoldProxy: @unchecked Sendable {
    private let process = Process()
    private let log: URL

    package init(upstreamPort: Int, log: URL, passAll: Bool = false) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: MotoS3Server.python)
        process.arguments =
            [TestTools.packageRoot.appendingPathComponent("scripts/s3_hold_proxy.py").path, "\(upstreamPort)"]
            + (passAll ? ["--pass-all"] : [])
        let output = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    deinit { stop() }

    /// What the proxy printed.
    package var output: String {
        String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
    }

    /// The request lines of the part uploads held so far.
    package var heldRequests: [String] {
        output.split(separator: "\n").filter { $0.hasPrefix("held ") }.map { String($0.dropFirst(5)) }
    }

    /// The port it listens on, once it does.
    package func port() async throws -> Int {
        try await Poll.value("the proxy listens", within: .seconds(60), diagnostics: { self.output }) {
            self.output.split(separator: "\n").first { $0.hasPrefix("listening ") }.flatMap { Int($0.dropFirst(10)) }
        }
    }

    /// Stops relaying (SIGSTOP): connections through it stay open and nothing comes back.
    package func pause() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Relays again (SIGCONT).
    package func resume() {
        kill(process.processIdentifier, SIGCONT)
    }

    /// SIGKILL, not `terminate()`'s SIGTERM: the test runner starts children with SIGTERM
    /// blocked, so the proxy would never see it (and waiting for its exit would hang).
    package func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
