import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// Idempotency records and job rows that no PushPrep wrote, on real databases edited by hand:
/// reading one is `queue_unavailable` with the same words on both backends, never a crash.
extension QueueConformanceTests {
    /// SQLite's `job_ids` edited by hand. Before the record was read as stored values, a NULL or
    /// a number (after the column was loosened through `writable_schema`, as a hand editor can)
    /// trapped in GRDB's non-optional subscript, and a JSON value that is not an array (`7`,
    /// `{"a":1}`) replayed jobs nobody recorded.
    @Test(
        "a hand-edited SQLite idempotency record's job_ids is queue_unavailable, not a crash",
        arguments: ["NULL", "5", "'not json'", "'7'", #"'{"a":1}'"#, "'[1.5]'", "'[\"one\"]'"])
    func sqliteIdempotencyJobIDsEditedByHand(_ value: String) async throws {
        try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool")
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            guard case .sqlite(let path) = url else { return }
            let key = IdempotencyKey(scope: "client-a", key: "order-7", fingerprint: "sha256:aaaa")
            let first = try await queue.enqueue([spec("x")], idempotency: key)
            // A STRICT column takes no NULL and turns a number into text: loosen it first, as a
            // hand editor can, in its own connection (the schema is read when a connection opens).
            let loosen = """
                PRAGMA writable_schema = ON;
                UPDATE sqlite_schema SET sql = replace(sql, 'job_ids TEXT NOT NULL', 'job_ids ANY')
                WHERE name = 'pushprep_idempotency_keys';
                """
            try TestTools.runChecked("sqlite3", [path, loosen])
            try TestTools.runChecked(
                "sqlite3", [path, "UPDATE pushprep_idempotency_keys SET job_ids = \(value) WHERE key = 'order-7'"])
            await expectError(.queueUnavailable, mentioning: "not all numbers") {
                try await queue.enqueue([spec("x")], idempotency: key)
            }
            await expectError(.queueUnavailable, mentioning: "order-7") {
                try await queue.recordedEnqueue(key)
            }
            // The queue still works for everything else.
            #expect(try await queue.job(first.results[0].id)?.state == .queued)
        }
    }

    /// PostgreSQL's `job_ids` (`bigint[] NOT NULL`) can still hold a NULL element: the replay
    /// said PostgresNIO's generic decoding error; it says what is wrong, as SQLite does.
    @Test("a hand-edited PostgreSQL idempotency record with a NULL job id is queue_unavailable in words")
    func postgresIdempotencyJobIDsEditedByHand() async throws {
        try await QueueFixture.withQueue(.postgres) { queue, url in
            guard case .postgres(let location) = url else { return }
            let key = IdempotencyKey(scope: "client-a", key: "order-8", fingerprint: "sha256:aaaa")
            let first = try await queue.enqueue([spec("x")], idempotency: key)
            try await PostgresTestServer.shared.execute(
                "UPDATE pushprep_idempotency_keys SET job_ids = ARRAY[\(first.results[0].id), NULL]::bigint[]",
                database: location.database)
            await expectError(.queueUnavailable, mentioning: "not all numbers") {
                try await queue.enqueue([spec("x")], idempotency: key)
            }
            await expectError(.queueUnavailable, mentioning: "order-8") {
                try await queue.recordedEnqueue(key)
            }
            #expect(try await queue.job(first.results[0].id)?.state == .queued)
        }
    }

    /// A job row's required column edited by hand to NULL or a number (after the column was
    /// loosened through `writable_schema`): every backend reads rows through one `JobColumns`
    /// reader, which refuses it; GRDB's non-optional subscript trapped on it.
    @Test(
        "a hand-edited SQLite job row with a NULL or a number in its source is queue_unavailable, not a crash",
        arguments: ["NULL", "7"])
    func sqliteJobRowEditedByHand(_ value: String) async throws {
        try #require(TestTools.programAvailable("sqlite3"), "needs the sqlite3 tool")
        try await QueueFixture.withQueue(.sqlite) { queue, url in
            guard case .sqlite(let path) = url else { return }
            let id = try await enqueueOne(queue, spec("x"))
            let other = try await enqueueOne(queue, spec("y"))
            let loosen = """
                PRAGMA writable_schema = ON;
                UPDATE sqlite_schema SET sql = replace(sql, 'source TEXT NOT NULL', 'source ANY')
                WHERE name = 'pushprep_jobs';
                """
            try TestTools.runChecked("sqlite3", [path, loosen])
            try TestTools.runChecked("sqlite3", [path, "UPDATE pushprep_jobs SET source = \(value) WHERE id = \(id)"])
            await expectError(.queueUnavailable, mentioning: "whose source is missing") {
                try await queue.job(id)
            }
            await expectError(.queueUnavailable, mentioning: "whose source is missing") {
                try await queue.list(state: nil, limit: 10)
            }
            #expect(try await queue.job(other)?.source == "y", "the other rows still read")
        }
    }
}
