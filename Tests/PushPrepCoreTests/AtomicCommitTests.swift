import Crypto
import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepCore

/// A temporary written by someone not trusted (a decoder process) is checked as it is
/// committed: nothing that is over its bound, or not what its writer declared, is published.
@Suite struct AtomicCommitTests {
    @Test("commit refuses a file that is not the declared size and SHA-256, or over its bound, and publishes nothing")
    func declaredAndBounded() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let bytes = Data("the decoder's output".utf8)
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let final = dir.appendingPathComponent("img-1.jpg").path
        func temporary() throws -> String {
            let path = AtomicFile.temporaryPath(in: dir.path, name: "img-1.jpg")
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }

        let lying = try temporary()
        let wrongHash = #expect(throws: PushPrepError.self) {
            try AtomicFile.commit(lying, to: final, declared: (bytes.count, String(repeating: "0", count: 64)))
        }
        #expect(wrongHash?.message.contains("not the \(bytes.count) bytes") == true, "\(String(describing: wrongHash))")
        let wrongSize = try temporary()
        #expect(throws: PushPrepError.self) {
            try AtomicFile.commit(wrongSize, to: final, declared: (bytes.count + 1, sha256))
        }
        let tooLarge = try temporary()
        #expect(throws: PushPrepError.self) {
            try AtomicFile.commit(tooLarge, to: final, maxBytes: bytes.count - 1, declared: (bytes.count, sha256))
        }
        #expect(!FileManager.default.fileExists(atPath: final))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "temporaries removed")

        let honest = try temporary()
        let (outcome, file) = try AtomicFile.commit(
            honest, to: final, maxBytes: bytes.count, declared: (bytes.count, sha256))
        #expect(outcome == .written && file.sha256 == sha256)
        #expect(FileManager.default.contents(atPath: final) == bytes)
    }
}
