import Foundation
import PushPrepCore
import PushPrepQueue
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrep

/// What a worker reads of the sources strangers queue: `--sources` and `--source-root`, checked
/// on the opened file, and decoding from the descriptor that was hashed.
@Suite(.serialized)
struct SourcePolicyTests {
    /// Files for the tests: `root/in.bmp`, `outside/out.bmp`, `root/link.bmp` → the outside
    /// file, and `root/up` → the outside folder.
    private static func layout(in dir: URL) throws -> (root: URL, outside: URL) {
        let root = dir.appendingPathComponent("root")
        let outside = dir.appendingPathComponent("outside")
        for folder in [root, outside] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try Data(TinyBMP.bytes(1)).write(to: root.appendingPathComponent("in.bmp"))
        try Data(TinyBMP.bytes(2)).write(to: outside.appendingPathComponent("out.bmp"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("link.bmp").path,
            withDestinationPath: outside.appendingPathComponent("out.bmp").path)
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("up").path, withDestinationPath: outside.path)
        return (root, outside)
    }

    private static func process(_ source: String, policy: SourcePolicy, out: URL) async throws -> ManifestEntry {
        let session = try ProcessingSession(threads: 1, remote: RemoteSettings(), sources: policy, logger: .quiet)
        let entry = await session.process(
            InputItem(source: source, path: source), settings: try ProcessingSettings().validated(),
            outputDirectory: out.path, control: nil)
        await session.shutdown()
        return entry
    }

    private static func code(_ entry: ManifestEntry) -> PushPrepError.Code? {
        if case .failed(let failure) = entry { return failure.error.code }
        return nil
    }

    @Test func rootAdmitsOnlyFilesThatResolveUnderIt() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let (root, outside) = try Self.layout(in: dir)
        let policy = try SourcePolicy(kinds: .any, root: root.path)
        let out = dir.appendingPathComponent("out")
        let inside = try await Self.process(root.appendingPathComponent("in.bmp").path, policy: policy, out: out)
        #expect(Self.code(inside) == nil, "\(inside)")
        for source in [
            outside.appendingPathComponent("out.bmp").path,  // plainly outside
            root.appendingPathComponent("link.bmp").path,  // a link inside to a file outside
            root.appendingPathComponent("up/out.bmp").path,  // through a linked folder
            root.appendingPathComponent("../outside/out.bmp").path,  // dot-dot
            "/etc/hostname",
        ] {
            let entry = try await Self.process(source, policy: policy, out: out)
            #expect(Self.code(entry) == .sourceNotAllowed, "\(source): \(entry)")
        }
        // The root's own spelling may be a link or have a trailing slash; it is resolved once.
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("alias").path, withDestinationPath: root.path)
        let aliased = try SourcePolicy(kinds: .local, root: dir.appendingPathComponent("alias").path + "/")
        #expect(aliased.root == policy.root)
        let viaAlias = try await Self.process(
            dir.appendingPathComponent("alias/in.bmp").path, policy: aliased, out: out)
        #expect(Self.code(viaAlias) == nil, "\(viaAlias)")
    }

    @Test func kindsRefuseTheOtherKind() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let (root, _) = try Self.layout(in: dir)
        let out = dir.appendingPathComponent("out")
        let local = try await Self.process(
            root.appendingPathComponent("in.bmp").path, policy: try SourcePolicy(kinds: .remote, root: nil), out: out)
        #expect(Self.code(local) == .sourceNotAllowed)
        // Refused before any connection: nothing listens on port 9 of 127.0.0.1.
        let remote = try await Self.process(
            "http://127.0.0.1:9/a.jpg", policy: try SourcePolicy(kinds: .local, root: nil), out: out)
        #expect(Self.code(remote) == .sourceNotAllowed)
        #expect(PushPrepError.Code.sourceNotAllowed.isPermanent)
        #expect(throws: PushPrepError.self) { try SourcePolicy(kinds: .remote, root: root.path) }
        #expect(throws: PushPrepError.self) {
            try SourcePolicy(kinds: .any, root: root.appendingPathComponent("in.bmp").path)
        }
        #expect(throws: PushPrepError.self) {
            try SourcePolicy(kinds: .any, root: dir.appendingPathComponent("none").path)
        }
    }

    /// The decoders read the file that was hashed, through its descriptor: replacing the path
    /// after the checks (a rename over it) does not change what is decoded.
    @Test func decodersReadTheHashedFile() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let path = dir.appendingPathComponent("a.bmp")
        let first = TinyBMP.bytes(1)
        try Data(first).write(to: path)
        let file = try InputFile.read(path: path.path, maxBytes: 1 << 20)
        // Swapped: another file renamed over the path, and the path's old file is gone.
        let other = dir.appendingPathComponent("b.bmp")
        try Data(TinyBMP.bytes(7) + [0, 0, 0, 0]).write(to: other)
        #expect(rename(other.path, path.path) == 0)
        #expect(try InputFile.read(path: file.decodePath, maxBytes: 1 << 20) { _ in true }.contents == first)
        let reread = try InputFile.read(path: file.decodePath, maxBytes: 1 << 20)
        #expect(reread.sha256 == file.sha256)
        #expect(try InputFile.read(path: path.path, maxBytes: 1 << 20).sha256 != file.sha256)
    }

    /// A BMP's bytes are kept from the one read that hashes it (PushPrep decodes BMPs from bytes),
    /// small or spanning several read chunks; other files' are not.
    @Test func bmpContentsComeFromTheHashingRead() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let isBMP: ([UInt8]) -> Bool = { MediaDetector.detect($0) == .bmp }
        for (name, bytes) in [
            ("small.bmp", TinyBMP.bytes(3)), ("large.bmp", TinyBMP.bytes(700) + [UInt8](repeating: 1, count: 3 << 20)),
        ] {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let file = try InputFile.read(path: path, maxBytes: 1 << 24, keepContents: isBMP)
            #expect(file.contents == bytes, "\(name)")
            #expect(file.size == bytes.count)
        }
        let other = dir.appendingPathComponent("other.bin").path
        try Data(repeating: 7, count: 3 << 20).write(to: URL(fileURLWithPath: other))
        #expect(try InputFile.read(path: other, maxBytes: 1 << 24, keepContents: isBMP).contents == nil)
    }

    /// A FIFO named as a source is refused at once (opening it used to wait for a writer).
    @Test func fifoIsRefusedWithoutWaiting() throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let fifo = dir.appendingPathComponent("pipe.jpg")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: PushPrepError.self) { try InputFile.read(path: fifo.path, maxBytes: 1 << 20) }
    }

    /// A worker with `--source-root` processes the job inside it and fails the others at once
    /// (permanent: one attempt); on PostgreSQL, with no source option, local paths are refused.
    @Test(arguments: QueueBackend.testedBackends)
    func workerAppliesItsSourcePolicy(_ backend: QueueBackend) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let (root, outside) = try Self.layout(in: dir)
        let out = dir.appendingPathComponent("out")
        try await QueueFixture.withQueue(backend) { queue, url in
            let queueArgument = url.commandLineArgument
            let sources = [
                root.appendingPathComponent("in.bmp").path, outside.appendingPathComponent("out.bmp").path,
                root.appendingPathComponent("link.bmp").path,
            ]
            let ids = try WorkerProcessTests.enqueue(sources, queue: queueArgument, in: dir)
            let worker = try PushPrepCLI.startWorker(
                queue: queueArgument, out: out, in: dir, options: ["--source-root", root.path])
            defer { worker.send(SIGKILL) }
            var finished: [JobRecord] = []
            for id in ids {
                finished.append(
                    try await WorkerProcessTests.waitUntilFinished(id, on: queue, within: .seconds(60), worker: worker))
            }
            #expect(finished[0].state == .succeeded, "\(finished[0])")
            for job in finished.dropFirst() {
                #expect(job.state == .failed && job.attempt == 1 && job.errorCode == "source_not_allowed", "\(job)")
            }
            try await WorkerProcessTests.stop(worker)

            guard backend == .postgres else { return }
            // The PostgreSQL default: URLs only.
            let second = root.appendingPathComponent("second.bmp")
            try Data(TinyBMP.bytes(3)).write(to: second)
            let id = try WorkerProcessTests.enqueue([second.path], queue: queueArgument, in: dir)
            let plain = try PushPrepProcess(
                ["worker", "--queue", queueArgument, "--out", out.path, "--poll-interval", "0.2"], in: dir)
            defer { plain.send(SIGKILL) }
            let job = try await WorkerProcessTests.waitUntilFinished(
                id[0], on: queue, within: .seconds(60), worker: plain)
            #expect(job.state == .failed && job.errorCode == "source_not_allowed", "\(job)")
            try await WorkerProcessTests.stop(plain)
        }
    }
}
