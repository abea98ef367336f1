package import Foundation

/// A worker process as it announces itself to the queue (see ``ConsoleQueries/recordWorker(_:)``);
/// only the queue's own worker (``QueueWorker``) makes one.
package struct WorkerRegistration: Sendable, Equatable {
    /// The worker's id, as its leases name it (``WorkerConfiguration/workerID``).
    package var id: String
    /// The machine's host name.
    package var host: String
    package var pid: Int
    /// Jobs it runs at once.
    package var concurrency: Int

    /// The longest id or host stored, in UTF-8 bytes; longer ones are cut.
    static let textLimit = 200

    /// `text` cut to ``textLimit`` bytes on a character boundary.
    static func bounded(_ text: String) -> String {
        guard text.utf8.count > textLimit else { return text }
        var result = ""
        for character in text {
            if result.utf8.count + character.utf8.count > textLimit { break }
            result.append(character)
        }
        return result
    }
}

/// A registered worker, with the jobs it holds now.
package struct WorkerRecord: Sendable, Equatable, Codable {
    package var id: String
    package var host: String
    package var pid: Int
    package var concurrency: Int
    package var startedAt: Date
    /// Its latest registration or heartbeat.
    package var lastSeenAt: Date
    /// The running jobs whose lease it holds, by id.
    package var runningJobs: [JobID]

    package init(
        id: String, host: String, pid: Int, concurrency: Int, startedAt: Date, lastSeenAt: Date,
        runningJobs: [JobID] = []
    ) {
        self.id = id
        self.host = host
        self.pid = pid
        self.concurrency = concurrency
        self.startedAt = startedAt
        self.lastSeenAt = lastSeenAt
        self.runningJobs = runningJobs
    }

    /// The most workers ``ConsoleQueries/workers(seenSince:)`` returns (most recently seen first).
    package static let listLimit = 1000
    /// Registrations not seen for this long are deleted when a worker registers: a worker killed
    /// with SIGKILL never removes its own.
    package static let forgottenAfter: Duration = .seconds(86_400)
}
