import Foundation
package import PushPrepQueue
import Testing

/// A job queue backend the queue tests run against.
package enum QueueBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// The backends the queue tests are parameterized with.
    package static let testedBackends: [QueueBackend] = [.sqlite, .postgres]
}

/// Fresh, empty queues on real databases, one per test.
package enum QueueFixture {
    /// A fresh, empty queue for one test (sqlite: a new file in a new temporary directory;
    /// postgres: a new database on the shared test server), passed to body, cleaned up
    /// afterwards.
    package static func withQueue<T: Sendable>(
        _ backend: QueueBackend, _ body: (any JobQueueBackend, QueueURL) async throws -> T
    ) async throws -> T {
        switch backend {
        case .sqlite:
            let directory = try TestTools.temporaryDirectory()
            defer { TestTools.removeDirectory(directory) }
            let url = QueueURL.sqlite(path: directory.appendingPathComponent("queue.db").path)
            return try await JobQueues.withBackend(url, logger: .quiet) { try await body($0, url) }
        case .postgres:
            return try await PostgresTestServer.shared.withFreshDatabase { url in
                try await JobQueues.withBackend(url, logger: .quiet) { try await body($0, url) }
            }
        }
    }
}
