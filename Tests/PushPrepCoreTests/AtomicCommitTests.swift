import Crypto
import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepCore

/// A file written by someone not trusted (a decoder process) is read once and checked in that
/// read: nothing over its bound, not what its writer declared, or not a regular file, is let
/// through; what is published is the reader's own copy, which the writer cannot change.
@Suite struct AtomicCommitTests {
    @Test("readUntrusted refuses a file that is not the declared size and SHA-256, over its bound, or a link")
    func declaredAndBounded() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let bytes = Data("the decoder's output".utf8)
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let written = dir.appendingPathComponent("img-1.jpg").path
        try bytes.write(to: URL(fileURLWithPath: written))

        let zeros = String(repeating: "0", count: 64)
        let wrongHash = #expect(throws: PushPrepError.self) {
            try AtomicFile.readUntrusted(written, maxBytes: .max, declared: (bytes.count, zeros))
        }
        #expect(wrongHash?.message.contains("not the \(bytes.count) bytes") == true, "\(String(describing: wrongHash))")
        #expect(throws: PushPrepError.self) {
            try AtomicFile.readUntrusted(written, maxBytes: .max, declared: (bytes.count + 1, sha256))
        }
        #expect(throws: PushPrepError.self) {
            try AtomicFile.readUntrusted(written, maxBytes: bytes.count - 1, declared: (bytes.count, sha256))
        }
        let link = dir.appendingPathComponent("img-2.jpg").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: written)
        let linked = #expect(throws: PushPrepError.self) {
            try AtomicFile.readUntrusted(link, maxBytes: .max, declared: (bytes.count, sha256))
        }
        #expect(linked?.message.contains("not a regular file") == true, "\(String(describing: linked))")
        // The read itself follows no link either: one swapped in after the check is not read.
        #expect(throws: PushPrepError.self) {
            try InputFile.read(path: link, maxBytes: .max, followingLinks: false)
        }
        #expect(try InputFile.read(path: link, maxBytes: .max).size == bytes.count, "a link is followed by default")

        let honest = try AtomicFile.readUntrusted(written, maxBytes: bytes.count, declared: (bytes.count, sha256))
        #expect(honest == [UInt8](bytes))
    }

    @Test("the published copy is the reader's: the writer changing its file afterwards changes nothing published")
    func publishedCopyIsOwn() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let bytes = Data("the decoder's output".utf8)
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let written = dir.appendingPathComponent("staged.jpg").path
        try bytes.write(to: URL(fileURLWithPath: written))
        // The writer keeps its file open, as a decoder taken over could.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: written))
        defer { try? handle.close() }
        let final = dir.appendingPathComponent("img-1.jpg").path
        let checked = try AtomicFile.readUntrusted(written, maxBytes: .max, declared: (bytes.count, sha256))
        #expect(try AtomicFile.write(checked, to: final) == .written)
        try handle.write(contentsOf: Data("something else entirely".utf8))
        #expect(FileManager.default.contents(atPath: final) == bytes)
    }
}
