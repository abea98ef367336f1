import Foundation
import Logging
import NIOCore
import NIOPosix
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepRemote

/// Issue 28: refusals never suggest opening loopback, link-local or metadata addresses, and
/// network failures reach people as one sentence naming the host and port (``NetworkFailure``),
/// never as NIO's or BoringSSL's text. Every connection goes to 127.0.0.1.
@Suite(.timeLimit(.minutes(2)))
struct NetworkFailureTests {
    /// Every refused category: only private networks and CGNAT get an opt-in suggested.
    @Test func suggestionsNeverOpenLoopbackOrMetadata() throws {
        let closed: [AddressPolicy.Category] = [
            .unspecified, .loopback, .linkLocal, .multicast, .broadcast, .documentation, .reserved,
        ]
        for allow in [false, true] {
            let policy = AddressPolicy(allowPrivateNetworks: allow)
            for category in closed {
                let text = policy.suggestion(host: "h.example", for: category)
                #expect(!text.contains("--allow"), "\(category): \(text)")
            }
        }
        let open = AddressPolicy().suggestion(host: "10.1.2.3", for: .privateNetwork)
        #expect(open.contains("--allow-host 10.1.2.3") && open.contains("--allow-private-networks"))
        #expect(AddressPolicy().suggestion(host: "100.64.0.1", for: .sharedAddressSpace).contains("--allow-host"))
    }

    /// The refusal messages themselves (the one every fetch and webhook throws), on literals.
    @Test func refusalsOfMetadataAndLoopbackSuggestNoOptIn() throws {
        let check = AddressCheck(settings: RemoteSettings())
        for text in [
            "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:9/x", "http://[::1]/x", "http://0.0.0.0/",
        ] {
            let url = try RemoteURL(text)
            let address = try #require(url.literalAddress)
            let refusal = try #require(check.refusal(of: url, addresses: [address]))
            #expect(refusal.error.code == .blockedAddress)
            #expect(!refusal.error.message.contains("--allow"), "\(refusal.error.message)")
        }
        let privateURL = try RemoteURL("http://192.168.1.20/x")
        let privateAddress = try #require(privateURL.literalAddress)
        let refusal = try #require(check.refusal(of: privateURL, addresses: [privateAddress]))
        #expect(refusal.error.message.contains("--allow-host 192.168.1.20"), "\(refusal.error.message)")
    }

    private func fetchError(_ url: String) async throws -> PushPrepError {
        var settings = RemoteSettings()
        settings.allowedHosts = ["127.0.0.1"]
        settings.maxTries = 1
        settings.totalTimeout = .seconds(20)
        let fetcher = RemoteFetcher(settings: settings, logger: .quiet)
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        do {
            _ = try await fetcher.fetch(url, into: directory.path)
            await fetcher.shutdown()
            Issue.record("\(url) was fetched")
            return PushPrepError(.fetchFailed, "")
        } catch {
            await fetcher.shutdown()
            return error
        }
    }

    /// `https://` to a plain-HTTP port: BoringSSL's `WRONG_VERSION_NUMBER` becomes a sentence.
    @Test func httpsToAPlainPortIsASentence() async throws {
        let server = try await TestServer.start(files: ["a.jpg": [0xFF, 0xD8, 0xFF, 0xE0]])
        let error = try await fetchError("https://127.0.0.1:\(server.port)/files/a.jpg")
        await server.shutdown()
        #expect(error.code == .fetchFailed)
        #expect(
            error.message.contains("127.0.0.1:\(server.port) does not speak TLS on that port: use http://"),
            "\(error.message)")
        for library in ["NIOSSL", "BoringSSL", "WRONG_VERSION_NUMBER", "handshakeFailed"] {
            #expect(!error.message.contains(library), "\(error.message)")
        }
    }

    /// A closed port: `Connection refused (errno: 111)` becomes a sentence.
    @Test func refusedConnectionIsASentence() async throws {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        let error = try await fetchError("http://127.0.0.1:\(port)/a.jpg")
        #expect(error.code == .fetchFailed)
        #expect(error.message.contains("nothing accepts connections at 127.0.0.1:\(port)"), "\(error.message)")
        #expect(!error.message.contains("errno") && !error.message.contains("error set"), "\(error.message)")
    }

    /// The classes the mapping knows, from the errors NIO throws.
    @Test func classesFromNIOErrors() {
        #expect(NetworkFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect"))?.kind == .refused)
        #expect(NetworkFailure(IOError(errnoCode: ECONNRESET, reason: "read"))?.kind == .reset)
        #expect(NetworkFailure(IOError(errnoCode: EADDRINUSE, reason: "bind"))?.kind == .addressInUse)
        #expect(NetworkFailure(IOError(errnoCode: EACCES, reason: "bind"))?.kind == .permissionDenied)
        #expect(NetworkFailure(CancellationError()) == nil)
        let sentence = NetworkFailure(kind: .addressInUse).listening(on: "127.0.0.1", port: 8080)
        #expect(sentence.contains("port 8080 is already in use"))
    }
}
