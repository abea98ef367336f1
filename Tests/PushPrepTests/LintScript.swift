import Foundation
import PushPrepTestSupport

/// One of `make lint`'s scripts in `scripts/`, run on a source text or on the project's own
/// directories (``TupleAwaitLintTests``, ``RacedSleepLintTests``).
struct LintScript {
    /// The script's path.
    let path: String

    init(_ name: String) {
        path = TestTools.packageRoot.appendingPathComponent("scripts/\(name)").path
    }

    /// The 1-based lines of `source` the script flags, and its exit status.
    func flagged(_ source: String) throws -> (lines: [Int], status: Int32) {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        try source.write(to: directory.appendingPathComponent("Code.swift"), atomically: true, encoding: .utf8)
        let result = try TestTools.run("python3", [path, directory.path])
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.split(separator: ":").dropFirst().first.flatMap { Int($0) }
        }
        return (lines, result.status)
    }

    /// The script's exit status and output on the project's `directories` (`Sources`, `Tests`).
    func run(onProject directories: [String]) throws -> (status: Int32, output: String) {
        let result = try TestTools.run(
            "python3", [path] + directories.map { TestTools.packageRoot.appendingPathComponent($0).path })
        return (result.status, String(decoding: result.stdout, as: UTF8.self))
    }
}
