import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// Issue 28: `pushprep serve` binds its listener before it opens or creates the queue, makes
/// the uploads directory or starts a worker, and says why it cannot in one sentence.
@Suite(.serialized)
struct ServeListenerTests {
    /// A port another server holds: exit 1 with one line naming the port, no NIO text, and
    /// nothing left in the directory (no `pushprep.db`, no uploads or out directory).
    @Test func aBusyPortStopsServeBeforeTheQueue() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let holder = try await TestServer.start(files: [:])
        let result = try await PushPrepCLI.runAsync(
            ["serve", "--port", "\(holder.port)", "--workers", "1"], in: dir)
        await holder.shutdown()
        #expect(result.status == 1, "\(result.stderrText)")
        let lines = result.stderrText.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderrText)")
        #expect(result.stderrText.contains("port \(holder.port) is already in use"), "\(result.stderrText)")
        for library in ["errno", "bind(descriptor", "Address already in use"] {
            #expect(!result.stderrText.contains(library), "\(result.stderrText)")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(left.isEmpty, "\(left)")
    }

    /// The in-process check itself: the same sentence, `invalid_settings`; a free port passes.
    @Test func listenerCheckNamesThePort() async throws {
        let holder = try await TestServer.start(files: [:])
        var refusal: PushPrepError?
        do {
            try await ListenerCheck.check(host: "127.0.0.1", port: holder.port)
        } catch {
            refusal = error
        }
        await holder.shutdown()
        #expect(refusal?.code == .invalidSettings)
        #expect(
            refusal?.message.contains("port \(holder.port) is already in use on 127.0.0.1") == true,
            "\(String(describing: refusal))")
        try await ListenerCheck.check(host: "127.0.0.1", port: 0)
    }
}
