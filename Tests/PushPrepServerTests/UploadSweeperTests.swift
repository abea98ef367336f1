import Foundation
import PushPrepQueue
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The sweep's guards, in process against a real SQLite queue: what it must not delete.
@Suite struct UploadSweeperTests {
    @Test(
        "a sweep deletes only unreferenced uploads: not those a queued job names, an upload between its file and its commit, a link, a foreign name, or a file within the grace"
    )
    func sweepGuards() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let uploads = dir.appendingPathComponent("uploads").path
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        func upload(_ digit: Character) throws -> String {
            let path = "\(uploads)/\(String(repeating: digit, count: 64)).bmp"
            try Data(TinyBMP.bytes(Int(digit.asciiValue ?? 0))).write(to: URL(fileURLWithPath: path))
            return path
        }
        let finished = try upload("a")
        let queued = try upload("b")
        let inFlight = try upload("c")
        let outside = dir.appendingPathComponent("outside.bmp").path
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: outside))
        let link = "\(uploads)/\(String(repeating: "d", count: 64)).bmp"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        let foreign = "\(uploads)/notes.txt"
        try Data("operator's".utf8).write(to: URL(fileURLWithPath: foreign))
        try await JobQueues.withBackend(.sqlite(path: dir.appendingPathComponent("queue.db").path), logger: .quiet) {
            queue in
            let ids = try await queue.enqueue([
                JobSpec(source: finished, payload: "{}", maxAttempts: 1),
                JobSpec(source: queued, payload: "{}", maxAttempts: 1),
            ]).map(\.id)
            _ = try await queue.cancel(ids[0])
            #expect(try await queue.unfinishedSources(withPrefix: uploads + "/") == [queued])
            let recent = UploadSweeper(
                directory: uploads, queue: queue, grace: .seconds(3600), interval: .seconds(1), logger: .quiet)
            #expect(try await recent.sweep() == 0, "within the grace nothing goes")
            let sweeper = UploadSweeper(
                directory: uploads, queue: queue, grace: .zero, interval: .seconds(1), logger: .quiet)
            sweeper.begin(inFlight)
            #expect(try await sweeper.sweep() == 1)
            #expect(!FileManager.default.fileExists(atPath: finished))
            for kept in [queued, inFlight, foreign, outside] {
                #expect(FileManager.default.fileExists(atPath: kept), "\(kept)")
            }
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == outside)
            sweeper.end(inFlight)
            #expect(try await sweeper.sweep() == 1)
            #expect(!FileManager.default.fileExists(atPath: inFlight))
            #expect(FileManager.default.fileExists(atPath: queued))
        }
    }
}
