import Foundation
import PushPrep
import PushPrepQueue
import Testing

/// Numbers that reach the queue from outside, end to end with real `pushprep` processes:
/// queued settings and database rows a worker must refuse (not crash on, not retry forever).
@Suite(.serialized)
struct QueueHardeningTests {
    // MARK: - Numbers in the queue

    /// A job whose stored timeout is not a usable number of seconds (written by hand or by
    /// another program) fails at once with `invalid_settings`; the worker does not crash.
    /// PostgreSQL stores `Infinity` and `NaN` in a double precision column; SQLite stores an
    /// infinity (`9e999`) but turns NaN into NULL.
    @Test(arguments: [
        (QueueBackend.postgres, "'Infinity'"), (.postgres, "'NaN'"), (.postgres, "1e300"), (.postgres, "-5"),
        (.sqlite, "9e999"), (.sqlite, "1e300"),
    ])
    func storedTimeoutOutOfRangeFailsTheJob(_ backend: QueueBackend, _ value: String) async throws {
        if backend == .sqlite { try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool") }
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(7)).write(to: input)

        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try WorkerProcessTests.enqueue([input.path], queue: url.commandLineArgument, in: dir)[0]
            let update = "UPDATE pushprep_jobs SET timeout_seconds = \(value) WHERE id = \(id)"
            switch url {
            case .postgres(let location):
                try await PostgresTestServer.shared.execute(update, database: location.database)
            case .sqlite(let path):
                try TestTools.runChecked("sqlite3", [path, update])
            }
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(60), worker: worker)
            #expect(done.state == .failed, "\(done.state): \(done.errorMessage ?? "")")
            #expect(done.errorCode == "invalid_settings")
            #expect(done.errorMessage?.contains("timeout") == true, "\(done.errorMessage ?? "")")
            #expect(done.attempt == 1, "failed at once, not retried")
            try await WorkerProcessTests.stop(worker)
        }
    }

    /// Queued settings are checked when the worker reads them: numbers out of range (a start
    /// at 1e13 s once trapped converting it to a time stamp) fail the job at once with
    /// `invalid_settings`, as does JSON that is not settings.
    @Test(arguments: [
        (QueueBackend.sqlite, #"{"videoStart":1e13}"#), (.postgres, #"{"videoStart":1e13}"#),
        (.sqlite, #"{"audioSeconds":1e300}"#), (.sqlite, #"{"width":1e300}"#), (.sqlite, "not json"),
    ])
    func queuedSettingsOutOfRangeFailTheJob(_ backend: QueueBackend, _ payload: String) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let input = dir.appendingPathComponent("a.bmp")
        try Data(TinyBMP.bytes(8)).write(to: input)

        try await QueueFixture.withQueue(backend) { queue, url in
            let id = try await queue.enqueue([JobSpec(source: input.path, payload: payload)])[0].id
            let worker = try PushPrepCLI.startWorker(
                queue: url.commandLineArgument, out: dir.appendingPathComponent("out"), in: dir)
            let done = try await WorkerProcessTests.waitUntilFinished(
                id, on: queue, within: .seconds(60), worker: worker)
            #expect(done.state == .failed, "\(done.state): \(done.errorMessage ?? "")")
            #expect(done.errorCode == "invalid_settings", "\(done.errorCode ?? ""): \(done.errorMessage ?? "")")
            #expect(done.attempt == 1, "failed at once, not retried")
            try await WorkerProcessTests.stop(worker)
        }
    }
}
