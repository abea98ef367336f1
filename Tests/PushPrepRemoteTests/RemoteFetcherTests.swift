import Crypto
import Foundation
import Logging
import PushPrepCore
import PushPrepRemote
import PushPrepTestSupport
import Synchronization
import Testing

/// ``RemoteFetcher`` against a real HTTP server on 127.0.0.1. Every request in these tests goes
/// to 127.0.0.1 or ::1; refusals of other addresses are asserted to happen before connecting.
@Suite(.timeLimit(.minutes(2)))
final class RemoteFetcherTests {
    let directory: URL
    /// Bytes that start like a JPEG (the fetcher only looks at the first bytes).
    static let small: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    static let big: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 17) }

    init() throws {
        directory = try TestTools.temporaryDirectory()
    }

    deinit {
        TestTools.removeDirectory(directory)
    }

    /// Runs `body` with a server and a fetcher (allowing 127.0.0.1 unless `configure` says
    /// otherwise), both shut down afterwards whatever happens.
    private func withFetcher(
        resolver: any HostResolver = SystemHostResolver(),
        _ configure: (inout RemoteSettings) -> Void = { _ in },
        _ body: (TestServer<SourceFixtures>, RemoteFetcher, EventLog) async throws -> Void
    ) async throws {
        let server = try await TestServer.start(files: ["small.jpg": Self.small, "big.jpg": Self.big])
        var settings = RemoteSettings()
        settings.allowedHosts = ["127.0.0.1"]
        settings.totalTimeout = .seconds(20)
        configure(&settings)
        let events = EventLog()
        let fetcher = RemoteFetcher(settings: settings, resolver: resolver, logger: .quiet, observer: events.record)
        do {
            try await body(server, fetcher, events)
        } catch {
            await fetcher.shutdown()
            await server.shutdown()
            throw error
        }
        await fetcher.shutdown()
        await server.shutdown()
    }

    private func fetchError(_ fetcher: RemoteFetcher, _ url: String) async -> PushPrepError? {
        do {
            let outcome = try await fetcher.fetch(url, into: directory.path)
            if case .downloaded(let download) = outcome { unlink(download.path) }
            return nil
        } catch {
            return error
        }
    }

    private func download(_ fetcher: RemoteFetcher, _ url: String) async throws -> RemoteFetcher.Download {
        guard case .downloaded(let download) = try await fetcher.fetch(url, into: directory.path) else {
            throw TestTools.Failure(description: "expected a download from \(url)")
        }
        return download
    }

    /// Files left in the download directory (temporaries must never be).
    private func leftovers() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? ["(unreadable directory)"]
    }

    @Test("a file is streamed to a temporary file with its hash, type headers and validators")
    func downloads() async throws {
        try await withFetcher { server, fetcher, events in
            let download = try await download(fetcher, server.url("/files/big.jpg"))
            defer { unlink(download.path) }
            #expect(download.size == Self.big.count)
            #expect(download.sha256 == SHA256.hash(data: Self.big).hexString)
            #expect(try Data(contentsOf: URL(fileURLWithPath: download.path)) == Data(Self.big))
            #expect(download.path.hasSuffix(".jpg") && download.path.hasPrefix(directory.path + "/"))
            #expect(download.prefix == Array(Self.big.prefix(MediaDetector.prefixLength)))
            #expect(download.status == 200 && download.contentType == "image/jpeg")
            #expect(download.validators.etag == "\"v1\"")
            #expect(download.finalURL == server.url("/files/big.jpg"))
            #expect(events.connections == [IPAddress(127, 0, 0, 1)])
        }
    }

    @Test("loopback is refused by default with blocked_address, before any connection")
    func loopbackBlockedByDefault() async throws {
        try await withFetcher({ $0.allowedHosts = [] }) { server, fetcher, events in
            let error = await fetchError(fetcher, server.url("/files/small.jpg"))
            #expect(error?.code == .blockedAddress)
            #expect(error?.message.contains("loopback") == true)
            #expect(events.connections.isEmpty)
            #expect(server.hits("/files/small.jpg") == 0)
        }
    }

    @Test("a slow first byte hits the idle-read timeout")
    func slowFirstByte() async throws {
        try await withFetcher({
            $0.readTimeout = .milliseconds(300)
            $0.maxTries = 1
        }) { server, fetcher, _ in
            let started = ContinuousClock.now
            let error = await fetchError(fetcher, server.url("/slow-first-byte/120000/small.jpg"))
            #expect(error?.code == .timeout)
            // The server would wait 120 s; a generous bound, since a loaded 2-core machine
            // running the whole suite delays everything by many seconds.
            #expect(ContinuousClock.now - started < .seconds(60))
        }
    }

    @Test("a trickle that beats the idle timeout still hits the total deadline, leaving no temporary file")
    func trickle() async throws {
        try await withFetcher({
            $0.readTimeout = .seconds(5)
            $0.totalTimeout = .seconds(1)
        }) { server, fetcher, _ in
            let started = ContinuousClock.now
            let error = await fetchError(fetcher, server.url("/trickle/small.jpg"))
            #expect(error?.code == .timeout)
            // The whole trickle would take a minute (600 bytes at 10 a second); the bound is
            // generous because a loaded 2-core machine running the whole suite stalls for seconds.
            #expect(ContinuousClock.now - started < .seconds(50))
            #expect(leftovers().isEmpty)
        }
    }

    @Test("a body larger than its Content-Length is cut at the declared length")
    func lyingLength() async throws {
        try await withFetcher { server, fetcher, _ in
            let download = try await download(fetcher, server.url("/lying-length/2000/big.jpg"))
            defer { unlink(download.path) }
            #expect(download.size == 2000)
            #expect(download.sha256 == SHA256.hash(data: Self.big.prefix(2000)).hexString)
        }
    }

    @Test("a body shorter than its Content-Length fails with fetch_failed")
    func shortBody() async throws {
        try await withFetcher({ $0.maxTries = 1 }) { server, fetcher, _ in
            let error = await fetchError(fetcher, server.url("/short-body/big.jpg"))
            #expect(error?.code == .fetchFailed)
            #expect(leftovers().isEmpty)
        }
    }

    @Test("a chunked body with no length streams in, and is stopped at the cap")
    func chunked() async throws {
        try await withFetcher({ $0.maxDownloadBytes = 100_000 }) { server, fetcher, _ in
            let download = try await download(fetcher, server.url("/chunked/small.jpg"))
            unlink(download.path)
            #expect(download.size == Self.small.count)
            let error = await fetchError(fetcher, server.url("/chunked/big.jpg"))
            #expect(error?.code == .inputTooLarge)
            #expect(error?.message.contains("100000") == true)
            #expect(leftovers().isEmpty)
        }
    }

    @Test("a Content-Length over the cap is refused before the body is read")
    func contentLengthOverCap() async throws {
        try await withFetcher({ $0.maxDownloadBytes = 100_000 }) { server, fetcher, _ in
            let error = await fetchError(fetcher, server.url("/files/big.jpg"))
            #expect(error?.code == .inputTooLarge)
            #expect(error?.message.contains("Content-Length") == true)
            #expect(leftovers().isEmpty)
        }
    }

    @Test("the default cap depends on the kind and --max-input-bytes caps downloads too")
    func inputCap() async throws {
        #expect(RemoteSettings().downloadCap(for: .video) == 200_000_000)
        #expect(RemoteSettings().downloadCap(for: .image) == 50_000_000)
        #expect(RemoteSettings().downloadCap(for: nil) == 50_000_000)
        try await withFetcher { server, fetcher, _ in
            do throws(PushPrepError) {
                _ = try await fetcher.fetch(server.url("/chunked/big.jpg"), into: directory.path, maxInputBytes: 10_000)
                Issue.record("a download over --max-input-bytes was accepted")
            } catch {
                #expect(error.code == .inputTooLarge)
            }
        }
    }

    @Test("redirects: up to 5 are followed; a 6th, a loop and a missing file fail with fetch_failed")
    func redirects() async throws {
        try await withFetcher { server, fetcher, _ in
            let download = try await download(fetcher, server.url("/redirect/5/small.jpg"))
            unlink(download.path)
            #expect(download.finalURL == server.url("/files/small.jpg"))
            let tooMany = await fetchError(fetcher, server.url("/redirect/6/small.jpg"))
            #expect(tooMany?.code == .fetchFailed && tooMany?.message.contains("more than 5 redirects") == true)
            let loop = await fetchError(fetcher, server.url("/loop/a"))
            #expect(loop?.code == .fetchFailed && loop?.message.contains("loop") == true)
            #expect(server.hits("/loop/a") == 1 && server.hits("/loop/b") == 1)
        }
    }

    @Test(
        "a redirect cannot escape the opt-in: link-local, IPv4-mapped loopback and IPv6 loopback are refused before connecting",
        arguments: [
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            ("http://[::ffff:127.0.0.1]:PORT/files/small.jpg", "::ffff:127.0.0.1"),
            ("http://[::1]:PORT/files/small.jpg", "::1"),
            ("http://0.0.0.0:PORT/files/small.jpg", "0.0.0.0"),
        ])
    func redirectEscapes(_ location: String, _ address: String) async throws {
        try await withFetcher { server, fetcher, events in
            let target = location.replacingOccurrences(of: "PORT", with: "\(server.port)")
            let start = server.url(
                "/redirect-to?location=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            let error = await fetchError(fetcher, start)
            #expect(error?.code == .blockedAddress, "\(String(describing: error))")
            let blocked = try #require(IPAddress(address))
            #expect(!events.connections.contains(blocked))
            #expect(events.refusals == [blocked])
            #expect(server.hits("/redirect-to") == 1)
            #expect(server.hits("/files/small.jpg") == 0)
        }
    }

    @Test("--allow-host localhost does not let a redirect reach 127.0.0.1 under another name")
    func allowHostIsPerHost() async throws {
        try await withFetcher({ $0.allowedHosts = ["localhost"] }) { server, fetcher, events in
            let target = "http://127.0.0.1:\(server.port)/files/small.jpg"
            let start = "http://localhost:\(server.port)/redirect-to?location=\(target)"
            let error = await fetchError(fetcher, start)
            #expect(error?.code == .blockedAddress, "\(String(describing: error))")
            #expect(server.hits("/redirect-to") == 1)
            #expect(server.hits("/files/small.jpg") == 0)
            #expect(events.refusals == [IPAddress(127, 0, 0, 1)])
        }
    }

    @Test("HTTP errors other than 429/502/503/504 are final: 404 and 500 are not retried")
    func finalStatuses() async throws {
        try await withFetcher { server, fetcher, events in
            let notFound = await fetchError(fetcher, server.url("/status/404"))
            #expect(notFound?.code == .fetchFailed && notFound?.message.contains("404") == true)
            #expect(server.hits("/status/404") == 1)
            let serverError = await fetchError(fetcher, server.url("/fail-then-ok/500/a/small.jpg"))
            #expect(serverError?.code == .fetchFailed && serverError?.message.contains("HTTP 500") == true)
            #expect(server.hits("/fail-then-ok/500/a/small.jpg") == 1)
            #expect(events.retries == 0)
        }
    }

    @Test("503 then 200 is retried with backoff and succeeds")
    func transientStatus() async throws {
        try await withFetcher { server, fetcher, events in
            let download = try await download(fetcher, server.url("/fail-then-ok/503/b/small.jpg"))
            unlink(download.path)
            #expect(download.size == Self.small.count)
            #expect(server.hits("/fail-then-ok/503/b/small.jpg") == 2)
            #expect(events.retries == 1)
        }
    }

    @Test("429 with Retry-After is honoured within the deadline, refused beyond it")
    func retryAfter() async throws {
        try await withFetcher({ $0.totalTimeout = .seconds(10) }) { server, fetcher, _ in
            let started = ContinuousClock.now
            let download = try await download(fetcher, server.url("/retry-after/1/c/small.jpg"))
            unlink(download.path)
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(server.hits("/retry-after/1/c/small.jpg") == 2)

            let quick = ContinuousClock.now
            let error = await fetchError(fetcher, server.url("/retry-after/3600/d/small.jpg"))
            #expect(error?.code == .fetchFailed && error?.message.contains("Retry-After") == true)
            #expect(ContinuousClock.now - quick < .seconds(15))
            #expect(server.hits("/retry-after/3600/d/small.jpg") == 1)
        }
    }

    /// A server's head is bounded by the HTTP parser (swift-nio refuses a head past 80 KiB), so a
    /// hostile header or redirect costs a refusal, not memory: a 1 MB header or Location fails
    /// with fetch_failed at once, while 8 KB of header is an ordinary response. A declared
    /// length of 2^63-1 is refused before the body is read.
    @Test("a huge response head or declared length is refused, not buffered")
    func hostileHeads() async throws {
        try await withFetcher({ $0.maxTries = 1 }) { server, fetcher, _ in
            let fine = try await download(fetcher, server.url("/big-header/8000/small.jpg"))
            unlink(fine.path)
            #expect(fine.size == Self.small.count)

            let header = await fetchError(fetcher, server.url("/big-header/1000000/small.jpg"))
            #expect(header?.code == .fetchFailed, "\(String(describing: header))")
            #expect(header?.message.contains("header") == true, "\(String(describing: header))")
            let location = await fetchError(fetcher, server.url("/big-location/1000000"))
            #expect(location?.code == .fetchFailed, "\(String(describing: location))")
            let length = await fetchError(fetcher, server.url("/lying-length/\(Int64.max)/small.jpg"))
            #expect(length?.code == .inputTooLarge, "\(String(describing: length))")
            #expect(leftovers().isEmpty)
        }
    }

    @Test("connection errors are retried at most 3 tries, then fail with fetch_failed")
    func connectionRefused() async throws {
        let closed = try await TestServer.start(files: [:])
        let port = closed.port
        await closed.shutdown()
        try await withFetcher { _, fetcher, events in
            let error = await fetchError(fetcher, "http://127.0.0.1:\(port)/files/small.jpg")
            #expect(error?.code == .fetchFailed)
            #expect(events.retries == 2)
            #expect(events.connections.count == 3)
        }
    }

    @Test("ETag revalidation: a matching validator gives notModified, a stale one a download")
    func revalidation() async throws {
        try await withFetcher { server, fetcher, _ in
            let url = server.url("/files/small.jpg")
            let current = try await fetcher.fetch(
                url, into: directory.path, validators: .init(etag: "\"v1\"", lastModified: nil))
            guard case .notModified(let finalURL, let validators) = current else {
                Issue.record("expected 304 for a current ETag")
                return
            }
            #expect(finalURL == url && validators.etag == "\"v1\"")
            let stale = try await fetcher.fetch(url, into: directory.path, validators: .init(etag: "\"v0\""))
            guard case .downloaded(let download) = stale else {
                Issue.record("expected a download for a stale ETag")
                return
            }
            unlink(download.path)
            #expect(server.conditionalHits("/files/small.jpg") == 2)
        }
    }

    @Test("the request is pinned to the checked address: the client never resolves the name again")
    func pinnedToCheckedAddress() async throws {
        // First answer loopback, every later answer the metadata endpoint: a rebinding DNS.
        let resolver = RebindingResolver(first: IPAddress(127, 0, 0, 1), later: IPAddress(169, 254, 169, 254))
        try await withFetcher(resolver: resolver, { $0.allowPrivateNetworks = true }) { server, fetcher, events in
            // rebind.test exists in no DNS: success proves the connection went to the pinned address.
            let download = try await download(fetcher, "http://rebind.test:\(server.port)/files/small.jpg")
            unlink(download.path)
            #expect(resolver.calls == 1)
            #expect(events.connections == [IPAddress(127, 0, 0, 1)])
            // The next hop of a redirect is resolved again, gets the rebound answer, and is refused.
            let error = await fetchError(fetcher, "http://rebind.test:\(server.port)/redirect/1/small.jpg")
            #expect(error?.code == .blockedAddress && error?.message.contains("link-local") == true)
            #expect(events.connections == [IPAddress(127, 0, 0, 1)])
            #expect(events.refusals == [IPAddress(169, 254, 169, 254)])
        }
    }

    @Test("an international name is resolved, checked, pinned and requested in its one ASCII spelling")
    func internationalHostName() async throws {
        for spelling in ["bücher.test", "BÜCHER.test", "xn--bcher-kva.test"] {
            let resolver = RebindingResolver(first: IPAddress(127, 0, 0, 1), later: IPAddress(169, 254, 169, 254))
            try await withFetcher(resolver: resolver, { $0.allowPrivateNetworks = true }) { server, fetcher, events in
                // Neither spelling exists in any DNS: a download proves the client connected to
                // the pinned address instead of resolving the name itself.
                let download = try await download(fetcher, "http://\(spelling):\(server.port)/files/small.jpg")
                unlink(download.path)
                #expect(resolver.hosts == ["xn--bcher-kva.test"])
                #expect(events.connections == [IPAddress(127, 0, 0, 1)])
                // The other spelling is the same name: checked again, it gets the rebound answer
                // and is refused before any connection.
                let other = spelling == "xn--bcher-kva.test" ? "bücher.test" : "xn--bcher-kva.test"
                let error = await fetchError(fetcher, "http://\(other):\(server.port)/files/small.jpg")
                #expect(error?.code == .blockedAddress && error?.message.contains("xn--bcher-kva.test") == true)
                #expect(events.connections == [IPAddress(127, 0, 0, 1)])
                #expect(events.refusals == [IPAddress(169, 254, 169, 254)])
            }
        }
    }

    @Test("a redirect to an international name is pinned like any hop")
    func internationalRedirect() async throws {
        for spelling in ["bücher.test", "xn--bcher-kva.test"] {
            let resolver = RebindingResolver(first: IPAddress(127, 0, 0, 1), later: IPAddress(169, 254, 169, 254))
            try await withFetcher(resolver: resolver, { $0.allowPrivateNetworks = true }) { server, fetcher, events in
                let target = "http://\(spelling):\(server.port)/files/small.jpg"
                let start = server.url(
                    "/redirect-to?location=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
                let download = try await download(fetcher, start)
                unlink(download.path)
                #expect(resolver.hosts == ["xn--bcher-kva.test"])
                #expect(events.connections == [IPAddress(127, 0, 0, 1), IPAddress(127, 0, 0, 1)])
                #expect(server.hits("/files/small.jpg") == 1)
            }
        }
    }

    @Test("a name with any blocked address among its answers is refused before connecting")
    func mixedAnswers() async throws {
        let resolver = FixedResolver(addresses: [IPAddress(93, 184, 216, 34), IPAddress(10, 0, 0, 7)])
        try await withFetcher(resolver: resolver) { _, fetcher, events in
            let error = await fetchError(fetcher, "https://mixed.test/a.jpg")
            #expect(error?.code == .blockedAddress && error?.message.contains("10.0.0.7") == true)
            #expect(events.connections.isEmpty)
        }
    }
}

/// Collects a fetcher's events.
final class EventLog: Sendable {
    private let events = Mutex<[RemoteFetcher.Event]>([])

    var record: @Sendable (RemoteFetcher.Event) -> Void { { event in self.events.withLock { $0.append(event) } } }

    var connections: [IPAddress] {
        events.withLock { $0.compactMap { if case .connecting(_, let address) = $0 { address } else { nil } } }
    }

    var refusals: [IPAddress] {
        events.withLock { $0.compactMap { if case .refused(_, let address) = $0 { address } else { nil } } }
    }

    var retries: Int { events.withLock { $0.filter { if case .retrying = $0 { true } else { false } }.count } }
}

/// A resolver whose first answer differs from all later ones.
final class RebindingResolver: HostResolver {
    private let first: IPAddress
    private let later: IPAddress
    private let asked = Mutex<[String]>([])

    init(first: IPAddress, later: IPAddress) {
        self.first = first
        self.later = later
    }

    var calls: Int { asked.withLock { $0.count } }

    /// The host names asked for, in order.
    var hosts: [String] { asked.withLock { $0 } }

    func resolve(host: String, port: Int) async throws(PushPrepError) -> [IPAddress] {
        let call = asked.withLock { asked -> Int in
            asked.append(host)
            return asked.count
        }
        return [call == 1 ? first : later]
    }
}

/// A resolver with a fixed answer.
struct FixedResolver: HostResolver {
    let addresses: [IPAddress]

    func resolve(host: String, port: Int) async throws(PushPrepError) -> [IPAddress] { addresses }
}
