import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepCore

#if canImport(Glibc)
    import Glibc
#endif

/// Files a user names (`--manifest`, `preflight --fix`, a report): replaced atomically when they
/// are regular files, written through when they are a device or a pipe, never renamed over.
@Suite(.serialized)
struct AtomicDestinationTests {
    @Test("a FIFO given as the destination is written through and stays a FIFO")
    func fifoIsWrittenThrough() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let fifo = dir.appendingPathComponent("manifest.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // A reader on the other end, as a script reading the manifest would be (bounded: were the
        // FIFO renamed over, nothing would ever write to it).
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = [
            "-c", "timeout 20 cat \"$1\" > \"$2\"", "sh", fifo.path, dir.appendingPathComponent("read").path,
        ]
        try reader.run()
        try AtomicFile.writeDestination(Array(#"{"version":1}"#.utf8), to: fifo.path)
        reader.waitUntilExit()
        #expect(try String(contentsOf: dir.appendingPathComponent("read"), encoding: .utf8) == #"{"version":1}"#)
        var info = stat()
        #expect(lstat(fifo.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "still a FIFO")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!names.contains { $0.hasPrefix(AtomicFile.temporaryPrefix) }, "no temporary left: \(names)")
    }

    @Test("a regular file or a new name is replaced atomically; a directory is refused")
    func regularAndDirectory() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let path = dir.appendingPathComponent("m.json").path
        try AtomicFile.writeDestination(Array("one".utf8), to: path)
        try AtomicFile.writeDestination(Array("two".utf8), to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "two")
        let error = #expect(throws: PushPrepError.self) {
            try AtomicFile.writeDestination(Array("x".utf8), to: dir.path)
        }
        #expect(error?.code == .ioError && error?.message.contains("is a directory") == true)
    }
}
