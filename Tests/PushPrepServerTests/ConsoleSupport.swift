import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

/// A browser for the console tests: no redirects followed (the tests look at each 303), one
/// cookie jar, forms posted as `application/x-www-form-urlencoded`.
final class ConsoleBrowser: @unchecked Sendable {
    let baseURL: String
    let client: HTTPClient
    /// The cookies the server set, by name (a `Max-Age=0` removes one).
    private(set) var cookies: [String: String] = [:]

    init(baseURL: String) {
        self.baseURL = baseURL
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async throws { try await client.shutdown() }

    func get(_ path: String, headers: [(String, String)] = []) async throws -> APITestClient.Answer {
        try await send(.GET, path, body: nil, headers: headers)
    }

    func post(_ path: String, form: [(String, String)], headers: [(String, String)] = []) async throws
        -> APITestClient.Answer
    {
        try await send(.POST, path, body: Self.encode(form), headers: headers)
    }

    func send(_ method: HTTPMethod, _ path: String, body: String?, headers: [(String, String)]) async throws
        -> APITestClient.Answer
    {
        let api = APITestClient(baseURL: baseURL, client: client)
        var all = headers
        if !cookies.isEmpty {
            all.append(
                ("Cookie", cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        let answer = try await api.send(
            method, path, body: body.map { Array($0.utf8) }, contentType: "application/x-www-form-urlencoded",
            headers: all)
        for header in answer.headers["Set-Cookie"] {
            let pair = header.split(separator: ";")[0]
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            if header.contains("Max-Age=0") || value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
        return answer
    }

    /// Sets a cookie by hand (a forged or tampered one).
    func setCookie(_ name: String, _ value: String?) { cookies[name] = value }

    static func encode(_ form: [(String, String)]) -> String {
        let allowed = CharacterSet.alphanumerics.union(.init(charactersIn: "-._~"))
        return form.map {
            "\($0.0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")="
                + ($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }.joined(separator: "&")
    }

    /// The value of the first `name="csrf"` hidden field of a page.
    static func csrf(in page: String) throws -> String {
        let marker = "name=\"csrf\" value=\""
        let start = try #require(page.range(of: marker)).upperBound
        let end = try #require(page[start...].firstIndex(of: "\""))
        return String(page[start..<end])
    }
}

/// Writes jobs straight into a running server's SQLite queue, in states the API cannot make
/// without a worker (failed, with hostile sources).
enum ConsoleQueue {
    static func url(_ directory: URL) -> QueueURL {
        .sqlite(path: directory.appendingPathComponent("queue.db").path)
    }

    /// Enqueues `sources`; returns their ids in order.
    static func enqueue(_ directory: URL, _ sources: [String]) async throws -> [JobID] {
        try await JobQueues.withBackend(url(directory), logger: .quiet) { queue in
            try await queue.enqueue(sources.map { JobSpec(source: $0, payload: "{}", maxAttempts: 1) }).map(\.id)
        }
    }

    /// Enqueues `sources` and fails them with `code` (one attempt each).
    static func failed(_ directory: URL, _ sources: [String], code: PushPrepError.Code = .fetchFailed) async throws
        -> [JobID]
    {
        let ids = try await enqueue(directory, sources)
        try await JobQueues.withBackend(url(directory), logger: .quiet) { queue in
            let claimed = try await queue.claim(worker: "console-test-worker", limit: 1000, lease: .seconds(60))
            let mine = claimed.filter { ids.contains($0.id) }
            _ = try await queue.finish(
                mine.map {
                    JobOutcome(job: $0, kind: .failed(code: code, message: "could not fetch \($0.source)"))
                })
            _ = try await queue.release(claimed.filter { !ids.contains($0.id) }.map(\.lease))
        }
        return ids
    }

    static func state(_ directory: URL, _ id: JobID) async throws -> JobState? {
        try await JobQueues.withBackend(url(directory), logger: .quiet) { queue in try await queue.job(id)?.state }
    }
}
