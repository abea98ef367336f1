import Foundation
public import Logging
public import PushPrepCore

/// Where the queue lives: `sqlite:PATH` (one machine) or `postgres://USER:PASSWORD@HOST:PORT/DB`
/// (many hosts).
public enum QueueURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    /// The default: a SQLite file in the current directory.
    public static let defaultValue = "sqlite:./pushprep.db"

    /// A PostgreSQL server and database.
    public struct PostgresLocation: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String
        /// `sslmode=disable|prefer|require` from the query; `prefer` is treated as `disable` on
        /// loopback and `require` elsewhere.
        public var tls: Bool

        public init(host: String, port: Int, username: String, password: String?, database: String, tls: Bool) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.tls = tls
        }
    }

    /// Parses `sqlite:PATH`, `sqlite://PATH` or `postgres[ql]://USER[:PASSWORD]@HOST[:PORT]/DB`.
    public init(parsing text: String) throws(PushPrepError) {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else {
                throw PushPrepError(.invalidSettings, "--queue sqlite: needs a path, as in sqlite:./pushprep.db")
            }
            self = .sqlite(path: path)
            return
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"),
            let components = URLComponents(string: text), let host = components.host, !host.isEmpty
        else {
            throw PushPrepError(
                .invalidSettings,
                "--queue must be sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE, got \(URLCredentials.redacted(text))"
            )
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let loopback = ["127.0.0.1", "::1", "localhost"].contains(host)
        let tls: Bool
        switch query["sslmode"] ?? "prefer" {
        case "disable": tls = false
        case "require", "verify-ca", "verify-full": tls = true
        case "prefer", "allow": tls = !loopback
        case let other: throw PushPrepError(.invalidSettings, "--queue: unknown sslmode \(other)")
        }
        self = .postgres(
            PostgresLocation(
                host: host, port: components.port ?? 5432,
                username: components.percentEncodedUser?.removingPercentEncoding ?? "postgres",
                password: components.percentEncodedPassword?.removingPercentEncoding,
                database: database.isEmpty ? "postgres" : database, tls: tls))
    }

    /// The URL without its password, for logs and messages.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location):
            "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
        }
    }

    /// This URL with the PostgreSQL password taken from `file` (its content, one trailing
    /// newline removed), else from `PGPASSWORD` in `environment` (as libpq does), when the URL
    /// has none. A password in both the URL and a file is refused (which one was meant?), as
    /// is a file for a SQLite queue. Messages name the file, never its content.
    public func withPassword(file: String?, environment: [String: String]) throws(PushPrepError) -> QueueURL {
        guard case .postgres(var location) = self else {
            if let file {
                throw PushPrepError(
                    .invalidSettings, "--queue-password-file \(file): only a postgres:// queue takes a password")
            }
            return self
        }
        if let file {
            guard location.password == nil else {
                throw PushPrepError(
                    .invalidSettings,
                    "--queue has a password and --queue-password-file \(file) gives another: give it once")
            }
            location.password = try Self.readPassword(file)
        } else if location.password == nil, let password = environment["PGPASSWORD"], !password.isEmpty {
            location.password = password
        }
        return .postgres(location)
    }

    private static func readPassword(_ path: String) throws(PushPrepError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedDescription
            throw PushPrepError(.invalidSettings, "cannot read --queue-password-file \(path): \(reason)")
        }
        var password = String(decoding: data, as: UTF8.self)
        // "\r\n" is one Character in Swift: removeLast drops either ending whole.
        if password.hasSuffix("\n") || password.hasSuffix("\r\n") { password.removeLast() }
        guard !password.isEmpty else {
            throw PushPrepError(.invalidSettings, "--queue-password-file \(path) is empty")
        }
        return password
    }
}

/// Opens queues.
public enum JobQueues {
    /// Opens the queue at `url`, applies the schema migrations it is missing, runs `body`, and
    /// closes the queue (and its connections) when `body` returns or throws. A graceful shutdown
    /// of the calling service does not close it early: a worker drains through it.
    ///
    /// A library user gets the queue's jobs (``QueueClient``); PushPrep's own server, console and
    /// webhooks use ``withBackend(_:logger:_:)``, whose queue also answers their queries.
    public static func withQueue<Result: Sendable>(
        _ url: QueueURL, logger: Logger, _ body: (any QueueClient) async throws -> Result
    ) async throws -> Result {
        try await withBackend(url, logger: logger) { queue in try await body(queue) }
    }

    /// ``withQueue(_:logger:_:)`` with the whole backend: jobs, the webhook outbox and the
    /// console's queries.
    package static func withBackend<Result: Sendable>(
        _ url: QueueURL, logger: Logger, _ body: (any JobQueueBackend) async throws -> Result
    ) async throws -> Result {
        switch url {
        case .sqlite(let path):
            let queue = try SQLiteJobQueue(path: path, logger: logger)
            return try await body(queue)
        case .postgres(let location):
            return try await PostgresJobQueue.withQueue(location, logger: logger) { queue in try await body(queue) }
        }
    }
}
