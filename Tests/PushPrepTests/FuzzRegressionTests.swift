import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@_spi(Fuzzing) @testable import PushPrep

/// Replays `Tests/FuzzCorpus/<target>/`, the seeds and every crash `make fuzz` has found, through
/// the `FuzzEntry` function the libFuzzer target of that name calls: each input must end in a
/// result or a PushPrepError with a documented code. An input that crashed once crashes this
/// test run if the bug comes back.
@Suite struct FuzzRegressionTests {
    static let corpus = TestTools.packageRoot.appendingPathComponent("Tests/FuzzCorpus")

    static let documentedCodes = Set(PushPrepError.Code.all)

    /// The corpus files of one target, sorted.
    static func inputs(_ target: String) throws -> [URL] {
        let folder = corpus.appendingPathComponent(target)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test("every committed fuzz input ends in a result or a documented PushPrepError", arguments: FuzzEntry.targets)
    func replay(target: String) throws {
        let files = try Self.inputs(target)
        #expect(!files.isEmpty, "Tests/FuzzCorpus/\(target) has no inputs")
        var outcomes: [String: Int] = [:]
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            do {
                try FuzzEntry.run(target, bytes)
                outcomes["ok", default: 0] += 1
            } catch {
                #expect(
                    Self.documentedCodes.contains(error.code),
                    "\(target)/\(file.lastPathComponent): undocumented code \(error.code)")
                outcomes[error.code.rawValue, default: 0] += 1
            }
        }
        // The seeds are valid inputs of each kind: most must succeed, or the target no longer
        // reaches the code it is meant to fuzz.
        let seeds = files.filter { $0.lastPathComponent.hasPrefix("seed-") }.count
        #expect(outcomes["ok", default: 0] * 2 >= seeds, "\(target): \(outcomes)")
    }

    @Test("there is a corpus folder for every fuzz target and no folder without one")
    func foldersMatchTargets() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).filter {
            !$0.hasPrefix(".")
        }
        #expect(Set(folders) == Set(FuzzEntry.targets))
    }
}
