import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// Requests a web page or a hostile client sends, against the API running in this process
/// (HummingbirdTesting's live server on a free port of 127.0.0.1, the real application with its
/// channel configuration): DNS rebinding (a foreign `Host`), cross-site writes, bodies framed in
/// ways the server does not read, headers over the limits, and guessed keys.
@Suite(.serialized)
struct HostileRequestTests {
    static let writer = "hostile-writer-key-0123456789"

    /// Runs `body` with a client of the API (AsyncHTTPClient, its `Host` `localhost:PORT` unless
    /// a request sets one) and the port, on a SQLite queue in a temporary directory.
    static func withServer(
        keys: Bool = false, _ configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, Int, URL) async throws -> Void
    ) async throws {
        try await withApplication(keys: keys, configure, .ahc(.http)) { client, dir in
            try await body(client, try #require(client.port), dir)
        }
    }

    /// Runs `body` with a client of the API's router (HummingbirdTesting's `.router`: the real
    /// application's middleware and handlers, no socket), on a SQLite queue in a temporary
    /// directory. The router's requests name `localhost` without a port (their authority), which
    /// the server answers to as an `--allowed-host`.
    static func withRouter(
        keys: Bool = false, _ configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, URL) async throws -> Void
    ) async throws {
        try await withApplication(
            keys: keys,
            {
                $0.allowedHosts.append("localhost")
                configure(&$0)
            }, .router,
            body
        )
    }

    /// The application `serve` runs, configured by `configure`, tested through `setup`.
    private static func withApplication(
        keys: Bool, _ configure: (inout ServerConfiguration) -> Void, _ setup: TestingSetup,
        _ body: @Sendable (any TestClientProtocol, URL) async throws -> Void
    ) async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        var configuration = ServerConfiguration(
            port: 0, apiKeys: keys ? try APIKeyStore(parsing: Self.writer) : nil,
            uploadsDirectory: dir.appendingPathComponent("uploads").path)
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("uploads"), withIntermediateDirectories: true)
        configure(&configuration)
        let settings = configuration
        try await JobQueues.withBackend(.sqlite(path: dir.appendingPathComponent("q.db").path), logger: .quiet) {
            queue in
            let application = APIServer.application(
                configuration: settings, queue: queue, publicURL: PublicURL(configured: settings.publicURL),
                registry: nil, readiness: {}, logger: .quiet, onListening: nil)
            try await application.test(setup) { client in try await body(client, dir) }
        }
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(Array(buffer: response.body))) as? [String: Any])
    }

    static func jobCount(_ client: any TestClientProtocol) async throws -> Int {
        let listed = try await client.execute(uri: "/v1/jobs", method: .get)
        return (try json(listed)["jobs"] as? [Any])?.count ?? -1
    }

    static let jobBody = ByteBuffer(string: #"{"sources": ["https://media.example.com/a.jpg"]}"#)

    // MARK: Host

    /// A `Host` that names this server in any spelling is served; a foreign one (DNS
    /// rebinding) gets `421` on every route, the console included, and changes nothing; a
    /// missing, repeated or malformed one gets `400`.
    @Test func hostMustNameThisServer() async throws {
        try await Self.withServer({
            $0.allowedHosts = ["push.example.com", "ops.example.com:9443"]
            $0.publicURL = "https://console.example.com"
        }) { client, port, _ in
            let created = try await client.execute(
                uri: "/v1/jobs", method: .post, headers: [.contentType: "application/json"], body: Self.jobBody)
            #expect(created.status == .accepted)

            let served = [
                "127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "localhost.:\(port)",
                "push.example.com", "push.example.com:\(port)", "PUSH.example.com.:1", "ops.example.com:9443",
                "console.example.com", "console.example.com:443",
            ]
            for host in served {
                let answer = try await client.execute(uri: "/v1/jobs", method: .get, headers: [.host: host])
                #expect(answer.status == .ok, "Host: \(host)")
            }
            let misdirected = [
                "rebind.evil.example", "rebind.evil.example:\(port)", "127.0.0.1:\(port + 1)", "127.0.0.1",
                "127.0.0.2:\(port)", "[::1]:\(port)", "localhost.evil.example:\(port)", "localhost:\(port + 1)",
                "ops.example.com:9444", "ops.example.com", "console.example.com:8443", "evil.example.com",
            ]
            for host in misdirected {
                for (method, path) in [(HTTPRequest.Method.get, "/v1/jobs"), (.get, "/"), (.post, "/jobs/1/cancel")] {
                    let answer = try await client.execute(uri: path, method: method, headers: [.host: host])
                    #expect(answer.status == .misdirectedRequest, "Host: \(host) \(method) \(path)")
                    #expect(answer.headers[.contentType] == "application/problem+json")
                    #expect(try Self.json(answer)["code"] as? String == "invalid_request")
                    #expect(answer.headers[.setCookie] == nil, "no console session for \(host)")
                }
            }
            let malformed = [
                "", "localhost:", "localhost:\(port)@evil.example", "::1", "[::1", "[fe80::1%25eth0]:\(port)",
                "127.1:\(port)", "local host", "localhost:99999", "localhost..:\(port)",
            ]
            for host in malformed {
                let answer = try await client.execute(uri: "/v1/jobs", method: .get, headers: [.host: host])
                #expect(answer.status == .badRequest, "Host: \(host)")
                #expect(try Self.json(answer)["code"] as? String == "invalid_request")
            }
            // No Host at all, and two of them (only a raw client sends these).
            let missing = try await RawHTTP.exchange(port: port, "GET /v1/jobs HTTP/1.1\r\nConnection: close\r\n\r\n")
            #expect(missing.status == 400, "\(missing.text)")
            let twice = try await RawHTTP.exchange(
                port: port,
                "GET /v1/jobs HTTP/1.1\r\nHost: localhost:\(port)\r\nHost: rebind.evil.example\r\nConnection: close\r\n\r\n"
            )
            #expect(twice.status == 400, "\(twice.text)")
            #expect(try twice.json()["code"] as? String == "invalid_request")
            let job = try await client.execute(uri: "/v1/jobs/1", method: .get)
            #expect(try Self.json(job)["state"] as? String == "queued", "the rebinding page cancelled nothing")
        }
    }

    /// The names a server answers to, for each kind of bound address: a wildcard takes any IP
    /// literal with its port (a rebinding page sends its own name, never an address), IPv6
    /// compares as an address, names without case or trailing dot.
    @Test func namesForEachBinding() throws {
        func names(_ host: String, port: Int = 8080, allowed: [String] = []) -> ServerNames {
            var configuration = ServerConfiguration(host: host, port: port)
            configuration.allowedHosts = allowed
            return ServerNames(configuration)
        }
        func allows(_ names: ServerNames, _ host: String) -> Bool {
            HostAuthority(host).map { names.allows($0) } ?? false
        }
        let ipv6 = names("::1")
        #expect(allows(ipv6, "[::1]:8080"))
        #expect(allows(ipv6, "[0:0:0:0:0:0:0:1]:8080"))
        #expect(allows(ipv6, "localhost:8080"))
        #expect(!allows(ipv6, "127.0.0.1:8080"))
        #expect(!allows(ipv6, "[::1]:8081"))
        let any4 = names("0.0.0.0")
        #expect(allows(any4, "10.1.2.3:8080"))
        #expect(allows(any4, "127.0.0.1:8080"))
        #expect(!allows(any4, "[::1]:8080"))
        #expect(!allows(any4, "10.1.2.3:8081"))
        #expect(!allows(any4, "rebind.evil.example:8080"))
        let any6 = names("::")
        #expect(allows(any6, "[2001:db8::5]:8080"))
        #expect(allows(any6, "192.0.2.1:8080"))
        #expect(!allows(any6, "push.example.com:8080"))
        let port80 = names("127.0.0.1", port: 80, allowed: ["[2001:db8::1]:8443", "Push.Example.com."])
        #expect(allows(port80, "127.0.0.1"))
        #expect(allows(port80, "localhost"))
        #expect(allows(port80, "[2001:db8:0::1]:8443"))
        #expect(!allows(port80, "[2001:db8::1]"))
        #expect(allows(port80, "push.example.com:1234"))
        #expect(allows(port80, "PUSH.EXAMPLE.COM."))
        #expect(HostAuthority("[2001:db8::1]:8443") != nil)
        for bad in ["push.example.com:", "a..b", "[::1]x", "user@host", "host/path", "2130706433", "1.2.3.999"] {
            #expect(HostAuthority(bad) == nil, "\(bad)")
        }
        var invalid = ServerConfiguration()
        invalid.allowedHosts = ["evil.example/x"]
        #expect(throws: PushPrepError.self) { try invalid.validate() }
    }

    /// The console's same-origin check compares the `Origin` with the names this server
    /// answers to, not with `Host` alone: a rebinding page sends its own name as both.
    @Test func consoleOriginCheckDoesNotTrustHostAlone() throws {
        let names = ServerNames(ServerConfiguration(host: "127.0.0.1", port: 8080))
        func request(host: String, origin: String?) -> Request {
            var fields: HTTPFields = [:]
            if let origin { fields[.origin] = origin }
            return Request(
                head: HTTPRequest(
                    method: .post, scheme: "http", authority: host, path: "/jobs/1/cancel", headerFields: fields),
                body: .init(buffer: ByteBuffer()))
        }
        #expect(
            !RequestOrigin.isSameOrigin(
                request(host: "rebind.evil.example:8080", origin: "http://rebind.evil.example:8080"), names: names))
        #expect(
            RequestOrigin.isSameOrigin(request(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080"), names: names))
        #expect(
            RequestOrigin.isSameOrigin(request(host: "localhost:8080", origin: "http://localhost:8080"), names: names))
        #expect(
            !RequestOrigin.isSameOrigin(request(host: "127.0.0.1:8080", origin: "http://localhost:8080"), names: names))
        #expect(!RequestOrigin.isSameOrigin(request(host: "127.0.0.1:8080", origin: "null"), names: names))
        #expect(
            !RequestOrigin.isSameOrigin(
                request(host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080/x"), names: names))
        #expect(RequestOrigin.isSameOrigin(request(host: "127.0.0.1:8080", origin: nil), names: names))
    }

    // MARK: Origin

    /// Without keys, a write from another site's page (`text/plain` JSON, a multipart upload,
    /// `Sec-Fetch-Site: cross-site`, `Origin: null`) is refused with `403 forbidden` and queues
    /// nothing; the same write from this server's own origin, or from a client that sends no
    /// `Origin`, is accepted; reads stay open.
    @Test func crossSiteWritesAreRefused() async throws {
        try await Self.withServer { client, port, dir in
            let plain: HTTPFields = [.contentType: "text/plain", .origin: "https://evil.example"]
            let refused = try await client.execute(uri: "/v1/jobs", method: .post, headers: plain, body: Self.jobBody)
            #expect(refused.status == .forbidden)
            #expect(try Self.json(refused)["code"] as? String == "forbidden")

            let boundary = "----pushprep-hostile"
            let multipart = ByteBuffer(
                string: "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.gif\"\r\n"
                    + "Content-Type: image/gif\r\n\r\nGIF89a\r\n--\(boundary)--\r\n")
            let upload = try await client.execute(
                uri: "/v1/uploads", method: .post,
                headers: [
                    .contentType: "multipart/form-data; boundary=\(boundary)", .origin: "https://evil.example",
                    .secFetchSite: "cross-site",
                ], body: multipart)
            #expect(upload.status == .forbidden)
            for headers: HTTPFields in [
                [.contentType: "application/json", .secFetchSite: "cross-site"],
                [.contentType: "application/json", .secFetchSite: "same-site"],
                [.contentType: "application/json", .origin: "null"],
                [.contentType: "application/json", .origin: "http://localhost:\(port + 1)"],
                [.contentType: "application/json", .origin: "http://rebind.evil.example:\(port)"],
            ] {
                let answer = try await client.execute(
                    uri: "/v1/jobs", method: .post, headers: headers, body: Self.jobBody)
                #expect(answer.status == .forbidden, "\(headers)")
            }
            let cancel = try await client.execute(
                uri: "/v1/jobs/1", method: .delete, headers: [.origin: "https://evil.example"])
            #expect(cancel.status == .forbidden)
            #expect(try await Self.jobCount(client) == 0, "nothing was queued")
            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: dir.appendingPathComponent("uploads").path)
            #expect(leftovers.isEmpty, "\(leftovers)")

            for headers: HTTPFields in [
                [.contentType: "application/json"],
                [.contentType: "application/json", .origin: "http://localhost:\(port)", .secFetchSite: "same-origin"],
            ] {
                let answer = try await client.execute(
                    uri: "/v1/jobs", method: .post, headers: headers, body: Self.jobBody)
                #expect(answer.status == .accepted, "\(headers)")
            }
            let sameOrigin = try await client.execute(
                uri: "/v1/jobs", method: .post,
                headers: [
                    .contentType: "application/json", .host: "127.0.0.1:\(port)", .origin: "http://127.0.0.1:\(port)",
                ],
                body: Self.jobBody)
            #expect(sameOrigin.status == .accepted)
            let read = try await client.execute(
                uri: "/v1/stats", method: .get, headers: [.origin: "https://evil.example"])
            #expect(read.status == .ok)
        }
    }

    /// With keys, a request that presents a valid key is not refused for its `Origin` (a page
    /// on another site has no key to send); one without a key is still `401`.
    @Test func aKeyIsNotRefusedForItsOrigin() async throws {
        try await Self.withServer(keys: true) { client, _, _ in
            let headers: HTTPFields = [
                .contentType: "application/json", .origin: "https://tools.example",
                .authorization: "Bearer \(Self.writer)",
            ]
            let created = try await client.execute(uri: "/v1/jobs", method: .post, headers: headers, body: Self.jobBody)
            #expect(created.status == .accepted)
            let anonymous = try await client.execute(
                uri: "/v1/jobs", method: .post,
                headers: [.contentType: "application/json", .origin: "https://evil.example"],
                body: Self.jobBody)
            #expect(anonymous.status == .unauthorized)
        }
    }

    // MARK: Framing and limits

    /// `Transfer-Encoding: identity` or `gzip` (the body's length unknown) and `gzip, chunked`
    /// (a coding this server does not decode) get `400 invalid_request` problem JSON and queue
    /// nothing; chunked alone is read.
    @Test func transferCodingsOtherThanChunked() async throws {
        try await Self.withServer { client, port, _ in
            let body = #"{"sources": ["https://media.example.com/a.jpg"]}"#
            let chunk = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            for (coding, payload) in [("identity", body), ("gzip", body), ("gzip, chunked", chunk), ("IDENTITY", body)]
            {
                let answer = try await RawHTTP.exchange(
                    port: port,
                    "POST /v1/jobs HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: \(coding)\r\nConnection: close\r\n\r\n\(payload)")
                #expect(answer.status == 400, "\(coding): \(answer.text)")
                #expect(answer.header("Content-Type") == "application/problem+json", "\(coding)")
                #expect(try answer.json()["code"] as? String == "invalid_request", "\(coding)")
                #expect(answer.answers == 1, "one answer only: \(answer.text)")
            }
            let chunked = try await RawHTTP.exchange(
                port: port,
                "POST /v1/jobs HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n\(chunk)")
            #expect(chunked.status == 202, "\(chunked.text)")
            #expect(try await Self.jobCount(client) == 1)
        }
    }

    /// Headers over the limits (one field, all of them, their count), a malformed request and a
    /// broken chunk get problem JSON (`431 request_too_large`, `400 invalid_request`), also
    /// after a pipelined request that was answered first; the server goes on serving.
    @Test func parserErrorsAreProblems() async throws {
        try await Self.withServer { client, port, _ in
            let host = "Host: localhost:\(port)\r\n"
            let big = "GET /healthz HTTP/1.1\r\n\(host)X-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n"
            let many =
                "GET /healthz HTTP/1.1\r\n\(host)"
                + (0..<150).map { "X-H\($0): v\r\n" }.joined() + "\r\n"
            let total =
                "GET /healthz HTTP/1.1\r\n\(host)"
                + (0..<5).map { "X-H\($0): \(String(repeating: "b", count: 8000))\r\n" }.joined() + "\r\n"
            for request in [big, many, total] {
                let answer = try await RawHTTP.exchange(port: port, request)
                #expect(answer.status == 431, "\(answer.text.prefix(300))")
                #expect(answer.header("Content-Type") == "application/problem+json")
                #expect(try answer.json()["code"] as? String == "request_too_large")
            }
            let pipelined = try await RawHTTP.exchange(port: port, "GET /healthz HTTP/1.1\r\n\(host)\r\n" + big)
            #expect(pipelined.text.hasPrefix("HTTP/1.1 200"), "\(pipelined.text.prefix(300))")
            #expect(pipelined.text.contains("HTTP/1.1 431"), "\(pipelined.text.prefix(600))")
            #expect(pipelined.answers == 2, "\(pipelined.text.prefix(600))")
            #expect(pipelined.text.hasSuffix(#""code":"request_too_large"}"#), "\(pipelined.text.suffix(300))")
            for request in [
                "GARBAGE\r\n\r\n",
                "POST /v1/jobs HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
                "GET /healthz HTTP/1.1\r\n\(host)Bad Header\r\n\r\n",
            ] {
                let answer = try await RawHTTP.exchange(port: port, request)
                #expect(answer.status == 400, "\(answer.text)")
                #expect(try answer.json()["code"] as? String == "invalid_request", "\(answer.text)")
                #expect(answer.answers == 1, "one answer only: \(answer.text)")
            }
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
        }
    }

    // MARK: Failed authentication

    /// Past `--auth-failure-limit` failed keys, an address gets `429 rate_limited` with
    /// `Retry-After` for every key, a right one too; another address is not affected; failed
    /// console logins count in the same bucket.
    @Test func failedKeysAreLimitedPerAddress() async throws {
        try await Self.withServer(
            keys: true,
            {
                $0.authFailureLimit = 5
                $0.authFailureWindowSeconds = 600
            }
        ) { _, port, _ in
            func stats(key: String, from source: String) async throws -> RawHTTP.Answer {
                try await RawHTTP.exchange(
                    port: port,
                    "GET /v1/stats HTTP/1.1\r\nHost: localhost:\(port)\r\nAuthorization: Bearer \(key)\r\n"
                        + "Connection: close\r\n\r\n", from: source)
            }
            var statuses: [Int] = []
            for index in 0..<8 {
                statuses.append(try await stats(key: "guess-\(index)-0123456789abcdef", from: "127.0.0.2").status)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429, 429, 429])
            let limited = try await stats(key: Self.writer, from: "127.0.0.2")
            #expect(limited.status == 429, "a right key from a limited address is refused too")
            #expect(try limited.json()["code"] as? String == "rate_limited")
            #expect((Int(limited.header("Retry-After") ?? "") ?? 0) >= 1)
            #expect(try await stats(key: Self.writer, from: "127.0.0.1").status == 200)
            // A missing key is no guess.
            let none = try await RawHTTP.exchange(
                port: port, "GET /v1/stats HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n",
                from: "127.0.0.3")
            #expect(none.status == 401)

            func login(_ key: String, from source: String) async throws -> RawHTTP.Answer {
                let form = "key=\(key)&next=%2F"
                return try await RawHTTP.exchange(
                    port: port,
                    "POST /login HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                        + "Content-Length: \(form.utf8.count)\r\nConnection: close\r\n\r\n\(form)", from: source)
            }
            var logins: [Int] = []
            for index in 0..<3 {
                logins.append(try await login("wrong-\(index)-0123456789abcdef", from: "127.0.0.3").status)
            }
            for index in 0..<2 {
                logins.append(try await stats(key: "guess-\(index)-0123456789abcdef", from: "127.0.0.3").status)
            }
            let refusedLogin = try await login(Self.writer, from: "127.0.0.3")
            #expect(logins == [401, 401, 401, 401, 401])
            #expect(refusedLogin.status == 429, "\(refusedLogin.text.prefix(300))")
            #expect(refusedLogin.header("Retry-After") != nil)
            #expect(try await login(Self.writer, from: "127.0.0.1").status == 303)
        }
    }

    /// The failure table refills with time, keys IPv6 clients by their /64, and stays bounded
    /// however many addresses fail.
    @Test func failureTableIsBounded() throws {
        let limiter = AuthFailureLimiter(limit: 2, window: .seconds(10))
        let start = ContinuousClock.now
        let address = try SocketAddress(ipAddress: "192.0.2.7", port: 1)
        limiter.recordFailure(address, now: start)
        limiter.recordFailure(address, now: start)
        #expect(limiter.retryAfter(address, now: start) == 5)
        #expect(limiter.retryAfter(address, now: start + .seconds(5)) == nil)
        #expect(limiter.retryAfter(try SocketAddress(ipAddress: "192.0.2.8", port: 1), now: start) == nil)

        let first = try SocketAddress(ipAddress: "2001:db8:1:2::1", port: 1)
        let sibling = try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 1)
        let other = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1)
        limiter.recordFailure(first, now: start)
        limiter.recordFailure(sibling, now: start)
        #expect(limiter.retryAfter(first, now: start) != nil, "one /64 is one client")
        #expect(limiter.retryAfter(other, now: start) == nil)
        #expect(
            AuthFailureLimiter.key(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1))
                == AuthFailureLimiter.key(address))

        var largest = 0
        for index in 0..<(AuthFailureLimiter.maxAddresses * 3) {
            let address = try SocketAddress(
                ipAddress: "10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)", port: 1)
            limiter.recordFailure(address, now: start + .milliseconds(index))
            largest = max(largest, limiter.count)
        }
        #expect(largest <= AuthFailureLimiter.maxAddresses)
        #expect(largest >= AuthFailureLimiter.maxAddresses / 2)
        let latest = try SocketAddress(ipAddress: "10.0.117.47", port: 1)  // index 30 000 - 1
        limiter.recordFailure(latest, now: start + .seconds(30))
        #expect(limiter.retryAfter(latest, now: start + .seconds(30)) != nil, "the latest addresses are kept")
    }
}

/// One request written as raw bytes on a new connection from 127.0.0.1 (or `from`, another
/// loopback address), and everything the server answers until it closes: for requests no HTTP
/// client sends (no `Host`, two of them, a broken body).
enum RawHTTP {
    struct Answer {
        var text: String

        /// The status of the first answer, or 0.
        var status: Int {
            Int(text.split(separator: " ", maxSplits: 2).dropFirst().first ?? "") ?? 0
        }

        /// A header of the first answer.
        func header(_ name: String) -> String? {
            let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
            for line in head.split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }

        /// The body of the first answer, as JSON.
        func json() throws -> [String: Any] {
            let parts = text.components(separatedBy: "\r\n\r\n")
            let length = Int(header("Content-Length") ?? "") ?? 0
            let body = Data(parts.dropFirst().joined(separator: "\r\n\r\n").utf8.prefix(length))
            return try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "\(text)")
        }

        /// How many answers came: status lines (`HTTP/1.1 NNN `), wherever they start.
        var answers: Int {
            text.ranges(of: "HTTP/1.1 ").filter { range in
                let status = text[range.upperBound...].prefix(4)
                return status.count == 4 && status.prefix(3).allSatisfy(\.isNumber) && status.last == " "
            }.count
        }
    }

    /// Sends `request` to 127.0.0.1:`port` (from the loopback address `source` when given) and
    /// reads until the server closes, at most 20 s.
    static func exchange(port: Int, _ request: String, from source: String? = nil) async throws -> Answer {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        // withDeadline (PushPrepCore), whose timer is freed when the answer comes first.
        let answer = try await withDeadline(.seconds(20)) {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                var received = ByteBuffer()
                for try await chunk in inbound {
                    received.writeImmutableBuffer(chunk)
                    // Keep-alive answers (a pipelined request) end here once the last one is in.
                    if received.readableBytes > 1 << 20 { break }
                }
                return Answer(text: String(buffer: received))
            }
        }
        guard let answer else {
            throw TestTools.Failure(description: "no answer within 20 s to \(request.prefix(200))")
        }
        return answer
    }
}
