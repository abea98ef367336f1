import Foundation
import PushPrepTestSupport
import Testing

/// The server tests' in-process servers (``InProcessServe``, HummingbirdTesting's) answer on the
/// test process's own concurrency threads, two on a 2-core machine. A test that waits for a child
/// process on one of them (`TestTools.run`, `PushPrepCLI.run`) can leave the server it talks to no
/// thread to answer on: its requests then waited out curl's 30 s timeout (issue 29). The server
/// tests wait with `TestTools.runAsync` and `PushPrepCLI.runAsync`; this keeps a blocking wait
/// from coming back into them.
struct OffThreadWaitTests {
    /// The calls that block the calling thread until a child process exits.
    static let blocking = ["TestTools.run(", "PushPrepCLI.run(", "TestTools.runChecked("]

    /// `file:line` of each blocking wait in `source` (comments aside).
    static func blockingWaits(in source: String, file: String) -> [String] {
        source.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return blocking.contains { code.contains($0) } ? "\(file):\(index + 1)" : nil
        }
    }

    @Test func recognisesABlockingWait() {
        let source = """
            let answer = try TestTools.run("curl", ["-sS", url])
            let later = try await TestTools.runAsync("curl", ["-sS", url])
            // TestTools.run( in a comment
            let made = try PushPrepCLI.run(["process", input], in: dir)
            """
        #expect(Self.blockingWaits(in: source, file: "Code.swift") == ["Code.swift:1", "Code.swift:4"])
    }

    @Test func serverTestsWaitForChildrenOffThread() throws {
        let folder = TestTools.packageRoot.appendingPathComponent("Tests/PushPrepServerTests")
        // This file names the calls it refuses: its own text is not a wait.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".swift") && $0 != "OffThreadWaitTests.swift" }
        #expect(names.count > 10, "the server tests were not found in \(folder.path)")
        let found = try names.sorted().flatMap { name in
            let source = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            return Self.blockingWaits(in: source, file: name)
        }
        #expect(found.isEmpty, "wait with TestTools.runAsync or PushPrepCLI.runAsync instead: \(found)")
    }
}
