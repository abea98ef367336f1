import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// `pushprep jobs prune --delete-files` (issue 26 §1.8) on a real SQLite queue: the pruned jobs'
/// uploads and outputs go, unless a job left in the queue still names them, and nothing outside
/// `--uploads` and `--out` is touched, links included.
@Suite struct PruneFilesTests {
    @Test(
        "jobs prune --delete-files deletes the pruned jobs' uploads and outputs nothing else needs, only under the roots, never through a link"
    )
    func deletesFilesOfPrunedJobs() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let uploads = dir.appendingPathComponent("uploads").path
        let out = dir.appendingPathComponent("out").path
        for path in [uploads, out] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        func write(_ path: String, _ size: Int = 100) throws -> String {
            try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: path))
            // Written when their jobs ran, days ago: prune leaves an upload written in the last
            // minute alone (a new job may just have been given it).
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -3 * 86_400)], ofItemAtPath: path)
            return path
        }
        let hex = { (digit: Character) in String(repeating: digit, count: 64) }
        let done = try write("\(uploads)/\(hex("a")).bmp")
        let shared = try write("\(uploads)/\(hex("b")).bmp")
        let elsewhere = try write(dir.appendingPathComponent("elsewhere.bmp").path)
        let output = try write("\(out)/img-1.jpg")
        let poster = try write("\(out)/img-1-poster.jpg")
        let stillNamed = try write("\(out)/img-2.jpg")
        let outsideOutput = try write(dir.appendingPathComponent("secret.jpg").path)
        try FileManager.default.createSymbolicLink(atPath: "\(out)/link.jpg", withDestinationPath: outsideOutput)

        let database = dir.appendingPathComponent("queue.db").path
        try await JobQueues.withBackend(.sqlite(path: database), logger: .quiet) { queue in
            let ids = try await queue.enqueue([
                JobSpec(source: done, payload: "{}", priority: 9, maxAttempts: 1),
                JobSpec(source: shared, payload: "{}", priority: 8, maxAttempts: 1),
                JobSpec(source: elsewhere, payload: "{}", priority: 7, maxAttempts: 1),
                JobSpec(source: "https://media.example/c.bmp", payload: "{}", priority: 6, maxAttempts: 1),
                JobSpec(source: "https://media.example/d.bmp", payload: "{}", priority: 5, maxAttempts: 1),
            ]).map(\.id)
            let claimed = try await queue.claim(worker: "test:1:prune", limit: 5, lease: .seconds(60))
            #expect(claimed.map(\.id) == ids)
            let outcomes: [JobOutcome.Kind] = [
                .succeeded(result: #"{"file":"img-1.jpg","poster":{"file":"img-1-poster.jpg"}}"#),
                .failed(code: .corruptInput, message: "cut short"),
                .succeeded(result: #"{"file":"img-2.jpg"}"#),
                .succeeded(result: #"{"file":"../secret.jpg","poster":{"file":"link.jpg"}}"#),
                // Finished later: not pruned, and it names img-2.jpg.
                .succeeded(result: #"{"file":"img-2.jpg"}"#),
            ]
            _ = try await queue.finish(zip(claimed, outcomes).map { JobOutcome(job: $0, kind: $1) })
            // A newer upload of the same bytes as job 2's is queued: that file stays.
            _ = try await queue.enqueue([JobSpec(source: shared, payload: "{}")])
        }
        // The first four finished ten days ago.
        let backdate = "UPDATE pushprep_jobs SET finished_at = finished_at - 864000 WHERE id <= 4"
        let sqlite = try await ChildProcessTools.blocking { try TestTools.run("sqlite3", [database, backdate]) }
        #expect(sqlite.status == 0)

        let run = try await ChildProcessTools.blocking {
            try PushPrepCLI.run(
                [
                    "jobs", "prune", "--older-than", "1", "--delete-files", "--uploads", uploads, "--out", out,
                    "--queue", "sqlite:\(database)", "--json",
                ], in: dir)
        }
        #expect(run.status == 0, "\(run.stderrText)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any], "\(run.stdoutText)")
        #expect(report["pruned"] as? Int == 4)
        let files = try #require(report["files"] as? [String: Int], "\(run.stdoutText)")
        #expect(files == ["uploads_deleted": 1, "outputs_deleted": 2, "bytes_deleted": 300, "kept_in_use": 2])
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        for gone in [done, output, poster] { #expect(!exists(gone), "\(gone)") }
        for kept in [shared, elsewhere, stillNamed, outsideOutput] { #expect(exists(kept), "\(kept)") }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(out)/link.jpg")) == outsideOutput)

        // Without --delete-files nothing on disk changes.
        let plain = try await ChildProcessTools.blocking {
            try PushPrepCLI.run(["jobs", "prune", "--older-than", "0", "--queue", "sqlite:\(database)"], in: dir)
        }
        #expect(plain.status == 0 && plain.stdoutText.contains("pruned 1 finished job"), "\(plain.stdoutText)")
        #expect(exists(stillNamed))
    }
}
