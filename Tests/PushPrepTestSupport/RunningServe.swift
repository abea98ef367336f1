package import AsyncHTTPClient
package import Foundation
import NIOCore
package import NIOHTTP1

/// A `pushprep serve` a test talks to: in a process of its own (``RunningServe``) or in the
/// test's (the server tests' `InProcessServe`), as the test needs.
package protocol ServeUnderTest: Sendable {
    /// `http://127.0.0.1:PORT`.
    var baseURL: String { get }
    /// What the server logged so far, as `pushprep serve` writes its standard error.
    var stderrText: String { get }
    /// The last `count` lines of the server's log, for failure messages.
    func logTail(_ count: Int) -> String
}

extension ServeUnderTest {
    /// `127.0.0.1:PORT`: the `Host` a raw request to this server sends (the server refuses
    /// names it does not answer to).
    package var host: String { String(baseURL.dropFirst("http://".count)) }

    /// The last 40 lines of the server's log.
    package func logTail() -> String { logTail(40) }
}

/// A `pushprep serve` running for a test, started by it: the process (for signals and its log)
/// and the URL it listens on, read from the line it prints once bound (`--port 0` picks a free
/// port).
package struct RunningServe: ServeUnderTest {
    package let process: PushPrepProcess
    /// `http://127.0.0.1:PORT`.
    package let baseURL: String

    /// Starts `pushprep serve --port 0 ARGUMENTS` in `directory` and waits (up to 60 s) for it to
    /// listen, with ``arguments(_:in:)``'s defaults.
    package static func start(
        _ arguments: [String] = [], in directory: URL, environment: [String: String] = [:]
    ) async throws -> RunningServe {
        let process = try PushPrepProcess(
            ["serve"] + Self.arguments(arguments, in: directory), in: directory, environment: environment)
        let url = try await Poll.value(
            "pushprep serve to listen", within: .seconds(60), diagnostics: { process.logTail() }
        ) { () -> String? in
            if !process.isRunning {
                throw TestTools.Failure(description: "pushprep serve exited before listening\n\(process.logTail())")
            }
            return process.stdoutText.split(separator: "\n").lazy
                .compactMap { line in line.range(of: "listening on ").map { String(line[$0.upperBound...]) } }.first
        }
        return RunningServe(process: process, baseURL: url)
    }

    /// `serve`'s arguments for a test: `--port 0 ARGUMENTS`, the queue a SQLite file in
    /// `directory` unless they name one, outputs to `directory/out`, uploads to
    /// `directory/uploads`, embedded workers to one polling every 0.1 s; loopback sources are
    /// allowed; logs at debug level.
    package static func arguments(_ arguments: [String], in directory: URL) -> [String] {
        var defaults: [String] = ["--port", "0", "--allow-private-networks", "--log-level", "debug"]
        if !arguments.contains("--queue") { defaults += ["--queue", "sqlite:\(directory.path)/queue.db"] }
        if !arguments.contains("--out") && !arguments.contains("--store") {
            defaults += ["--out", directory.appendingPathComponent("out").path]
        }
        if !arguments.contains("--workers") { defaults += ["--workers", "1"] }
        if !arguments.contains("--uploads") {
            defaults += ["--uploads", directory.appendingPathComponent("uploads").path]
        }
        if !arguments.contains("--poll-interval") { defaults += ["--poll-interval", "0.1"] }
        return defaults + arguments
    }

    /// What the process logged so far (its standard error).
    package var stderrText: String { process.stderrText }

    /// The last `count` lines of the process's log, for failure messages.
    package func logTail(_ count: Int) -> String { process.logTail(count) }

    /// SIGTERM, then waits for a graceful exit (the drain), up to `timeout`.
    package func stop(within timeout: Duration = .seconds(30)) async -> PushPrepProcess.Exit? {
        process.send(SIGTERM)
        return await process.waitForExit(within: timeout)
    }
}

/// A real HTTP client for the API tests (AsyncHTTPClient), with the answer read whole.
package struct APITestClient: Sendable {
    package struct Answer: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: [UInt8]

        package var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object (fails the test when it is not one).
        package func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw TestTools.Failure(description: "not a JSON object: \(text)")
            }
            return object
        }

        package func header(_ name: String) -> String? { headers.first(name: name) }
    }

    package let baseURL: String
    package let client: HTTPClient
    /// Sent as `Authorization: Bearer` when set.
    package var apiKey: String?

    package init(baseURL: String, client: HTTPClient = .shared, apiKey: String? = nil) {
        self.baseURL = baseURL
        self.client = client
        self.apiKey = apiKey
    }

    /// `method path` with `body` (JSON text unless `contentType` says otherwise).
    package func send(
        _ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, contentType: String = "application/json",
        headers: [(String, String)] = [], timeout: Duration = .seconds(60)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let apiKey { request.headers.add(name: "Authorization", value: "Bearer \(apiKey)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(
            request, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
        let collected = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(buffer: collected))
    }

    package func get(_ path: String, headers: [(String, String)] = []) async throws -> Answer {
        try await send(.GET, path, headers: headers)
    }

    package func post(_ path: String, json: String, headers: [(String, String)] = []) async throws -> Answer {
        try await send(.POST, path, body: Array(json.utf8), headers: headers)
    }
}
