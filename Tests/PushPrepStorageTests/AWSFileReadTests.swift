import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepStorage

/// The AWS credentials and config files come from paths the environment names: reading them is
/// bounded and refuses what is not a regular file.
struct AWSFileReadTests {
    @Test("a device, a huge file and a directory are refused; a missing file is none, an empty one empty")
    func boundedRead() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        for path in ["/dev/zero", dir.path] {
            let error = #expect(throws: PushPrepError.self) { try AWSConfiguration.readFileIfPresent(path) }
            #expect(error?.code == .invalidSettings, "\(path): \(String(describing: error))")
        }
        let huge = dir.appendingPathComponent("config")
        try Data(repeating: UInt8(ascii: "#"), count: AWSConfiguration.maxFileBytes + 1).write(to: huge)
        let error = #expect(throws: PushPrepError.self) { try AWSConfiguration.readFileIfPresent(huge.path) }
        #expect(error?.code == .invalidSettings)
        #expect(try AWSConfiguration.readFileIfPresent(dir.appendingPathComponent("absent").path) == nil)
        let empty = dir.appendingPathComponent("credentials")
        try Data().write(to: empty)
        #expect(try AWSConfiguration.readFileIfPresent(empty.path) == "")
        try Data("[default]\nregion = eu-west-3\n".utf8).write(to: empty)
        #expect(try AWSConfiguration.readFileIfPresent(empty.path) == "[default]\nregion = eu-west-3\n")
    }
}
