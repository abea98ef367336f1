import Foundation
import Logging
import NIOCore
import PostgresNIO
import PushPrepCore
import Synchronization

extension PostgresJobQueue {
    /// How to reach the database: for the pool, and for the connections opened outside it (the
    /// migration and the listener).
    struct ConnectionSettings: Sendable {
        var client: PostgresClient.Configuration
        var connection: PostgresConnection.Configuration
        let description: String
        /// The server's host and port, as messages name them.
        let host: String
        let port: Int

        init(_ location: QueueURL.PostgresLocation, description: String) throws(PushPrepError) {
            self.description = description
            host = location.host
            port = location.port
            let clientTLS: PostgresClient.Configuration.TLS
            let connectionTLS: PostgresConnection.Configuration.TLS
            if location.tls {
                // Certificates are verified against the system's roots, with the host name.
                let tls = TLSConfiguration.makeClientConfiguration()
                do {
                    connectionTLS = .require(try NIOSSLContext(configuration: tls))
                } catch {
                    throw PushPrepError(
                        .queueUnavailable, "cannot set up TLS for the queue at \(description): \(error)", cause: error)
                }
                clientTLS = .require(tls)
            } else {
                (clientTLS, connectionTLS) = (.disable, .disable)
            }
            client = PostgresClient.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: clientTLS)
            client.options.connectTimeout = PostgresJobQueue.connectTimeout
            client.options.maximumConnections = PostgresJobQueue.maximumConnections
            client.options.connectionIdleTimeout = PostgresJobQueue.connectionIdleTimeout
            client.options.additionalStartupParameters = [("application_name", "pushprep")]
            connection = PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: connectionTLS)
            connection.options.connectTimeout = TimeAmount(PostgresJobQueue.connectTimeout)
            connection.options.additionalStartupParameters = [("application_name", "pushprep")]
        }

        /// Opens a connection outside the pool.
        func connect(logger: Logger) async throws -> PostgresConnection {
            try await PostgresConnection.connect(
                configuration: connection, id: Self.nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue,
                logger: logger)
        }

        private static let nextConnectionID = Atomic<Int>(1_000_000)
    }

    /// Connects once and applies the missing migrations, all within ``openTimeout``.
    ///
    /// Connecting on a connection of its own (rather than through the pool, which retries in
    /// the background) reports an unreachable server or refused credentials at once, with the
    /// reason.
    static func open(
        _ settings: ConnectionSettings, description: String, logger: Logger
    ) async throws(PushPrepError) {
        let connection: PostgresConnection
        do {
            connection = try await settings.connect(logger: logger)
        } catch {
            // A network failure in words (NetworkFailure), the library's text at debug level.
            if let failure = networkFailure(in: error) {
                logger.debug("cannot connect to the queue", metadata: ["queue": "\(description)", "error": "\(error)"])
                throw PushPrepError(
                    .queueUnavailable,
                    "cannot connect to the queue at \(description): "
                        + failure.connecting(to: settings.host, port: settings.port),
                    cause: error)
            }
            throw PushPrepError(
                .queueUnavailable, "cannot connect to the queue at \(description): \(reason(error))", cause: error)
        }
        do {
            let applied = try await withDeadline(openTimeout, closing: connection) {
                try await PostgresSchema.migrate(connection, logger: logger)
            }
            if !applied.isEmpty {
                logger.info(
                    "migrated the queue's schema",
                    metadata: ["queue": "\(description)", "versions": "\(applied.map(String.init))"])
            }
            try? await connection.close()
        } catch {
            try? await connection.close()
            if let error = pushPrepError(in: error) { throw error }
            throw PushPrepError(
                .queueUnavailable,
                "cannot migrate the queue at \(description) to schema version \(PostgresSchema.latestVersion): "
                    + reason(error),
                cause: error)
        }
    }

    /// Connects to `location` and applies the migrations up to `version` only: tests make the
    /// database of an older release with it (a queue's statements need the latest schema).
    static func migrate(_ location: QueueURL.PostgresLocation, upTo version: Int, logger: Logger) async throws {
        let settings = try ConnectionSettings(location, description: QueueURL.postgres(location).description)
        let connection = try await settings.connect(logger: logger)
        do {
            _ = try await PostgresSchema.migrate(connection, logger: logger, upTo: version)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The deadline of ``withDeadline(_:closing:_:)`` passed.
    struct DeadlineExceeded: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "the server did not answer within \(Int(limit.seconds)) seconds" }
    }

    /// Runs `body`, closing `connection` (which fails its query) when `body` has not finished
    /// after `limit`.
    static func withDeadline<T: Sendable>(
        _ limit: Duration, closing connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                // An Alarm: a cancelled sleep would stay scheduled for `limit` (swiftlang/swift#60441).
                // It also returns when cancelled: then the body won.
                await Alarm(after: limit).wait()
                try Task.checkCancellation()
                try? await connection.close()
                throw DeadlineExceeded(limit: limit)
            }
            defer { group.cancelAll() }
            // The first child to finish decides: the body's value or error, or the deadline.
            guard let value = try await group.next() ?? nil else { throw DeadlineExceeded(limit: limit) }
            return value
        }
    }
}

/// Errors: what the database and the connections say, in words.
extension PostgresJobQueue {
    /// How long an operation may take, from asking the pool for a connection to the answer,
    /// before it fails with `queue_unavailable`. While the server is down (a restart, a
    /// partition) the pool keeps every request waiting for a connection it retries: without
    /// this, an API request hung until the database came back, instead of a `503`.
    static let operationDeadline: Duration = .seconds(10)

    /// Runs `body` within `deadline` (none for the prunes, whose deletes may be long);
    /// `PushPrepError`s pass through, database errors and a missed deadline become
    /// `queue_unavailable`. At the deadline `body` is cancelled and left behind: what it still
    /// writes (a result the server commits late) is what a retry finds, as after a lost answer.
    func perform<T: Sendable>(
        _ action: String, deadline: Duration? = operationDeadline, _ body: @escaping @Sendable () async throws -> T
    ) async throws(PushPrepError) -> T {
        do {
            guard let deadline else { return try await body() }
            // Not awaited past the deadline: a query sent on a connection whose server stopped
            // answering (a partition) waits for as long as the connection takes to die.
            guard let value = try await withDeadlineAbandoning(deadline, body) else {
                throw PushPrepError(
                    .queueUnavailable,
                    "cannot \(action) in the queue at \(description): the database did not answer within "
                        + "\(Int(deadline.seconds)) s; is it running and reachable?")
            }
            return value
        } catch {
            if let error = Self.pushPrepError(in: error) { throw error }
            throw PushPrepError(
                .queueUnavailable, "cannot \(action) in the queue at \(description): \(Self.reason(error))",
                cause: error)
        }
    }

    /// A ``PushPrepError`` thrown inside a transaction, which PostgresNIO wraps.
    private static func pushPrepError(in error: any Error) -> PushPrepError? {
        if let error = error as? PushPrepError { return error }
        if let error = error as? PostgresTransactionError, let closureError = error.closureError {
            return pushPrepError(in: closureError)
        }
        return nil
    }

    /// The network failure under a connection error (PostgresNIO wraps NIO's), if it is one.
    static func networkFailure(in error: any Error) -> NetworkFailure? {
        if let error = error as? PSQLError {
            guard [.connectionError, .uncleanShutdown, .failedToAddSSLHandler].contains(error.code) else { return nil }
            return error.underlying.flatMap(networkFailure)
        }
        return NetworkFailure(error)
    }

    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    /// A short explanation of a database or connection error, for messages. PostgresNIO's own
    /// descriptions are deliberately generic.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as PushPrepError:
            return error.message
        case let error as PostgresTransactionError:
            let inner = error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError
            return inner.map(reason) ?? "the transaction failed"
        case let error as PSQLError:
            return reason(error)
        case is CancellationError:
            return "the task was cancelled"
        case let error as NIOConnectionError:
            if let failure = NetworkFailure(error) { return failure.connecting(to: error.host, port: error.port) }
            return error.connectionErrors.last.map { reason($0.error) } ?? "\(error)"
        default:
            return "\(error)"
        }
    }

    private static func reason(_ error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] {
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return message + state
        }
        switch error.code {
        case .connectionError, .uncleanShutdown, .failedToAddSSLHandler:
            return error.underlying.map(reason) ?? "the connection failed"
        case .serverClosedConnection: return "the server closed the connection"
        case .clientClosedConnection: return "the connection was closed"
        case .sslUnsupported: return "the server does not support TLS (add ?sslmode=disable to connect without)"
        case .poolClosed: return "the queue is closed"
        case .queryCancelled: return "the query was cancelled"
        case .authMechanismRequiresPassword: return "the server asks for a password and the URL has none"
        default: return error.underlying.map { "\(error.code): \(reason($0))" } ?? "\(error.code)"
        }
    }
}
