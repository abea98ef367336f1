import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepStorage

#if canImport(Glibc)
    import Glibc
#endif

/// A store that takes no connection at all (neither accepts nor refuses it) fails the request
/// with `storage_unavailable` once the connect timeout passes, instead of waiting for the
/// request deadline.
struct S3ConnectTimeoutTests {
    /// A socket listening on 127.0.0.1 whose accept queue is full and never drained: the kernel
    /// drops every later SYN, so a connect hangs as it does towards a host that went away.
    final class Unanswering {
        let listener: Int32
        let port: Int
        private var fillers: [Int32] = []

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            try #require(listener >= 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(bound == 0 && listen(listener, 0) == 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            self.listener = listener
            port = Int(UInt16(bigEndian: address.sin_port))
            // A backlog of 0 holds one connection; the ones after it fill what is left.
            for _ in 0..<3 {
                let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                fillers.append(filler)
            }
        }

        deinit {
            for filler in fillers { close(filler) }
            close(listener)
        }
    }

    @Test("a server that never takes the connection: storage_unavailable after the connect timeout")
    func connectTimeout() async throws {
        let server = try Unanswering()
        var limits = S3Configuration.Limits()
        limits.connectTimeout = .milliseconds(300)
        limits.requestTimeout = .seconds(60)
        limits.maxAttempts = 1
        let configuration = try S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(server.port)")!, bucket: "media", region: "us-east-1",
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret-not-shown"),
            limits: limits)
        let started = ContinuousClock.now
        var caught: PushPrepError?
        do throws(PushPrepError) {
            _ = try await S3Client.withClient(configuration, logger: CapturedLog().logger()) {
                client throws(PushPrepError) in try await client.head("a.jpg")
            }
        } catch {
            caught = error
        }
        let error = try #require(caught, "the HEAD did not fail")
        #expect(error.code == .storageUnavailable)
        #expect(
            error.message.contains("could not connect") && error.message.contains("within 0.3 seconds"),
            "\(error.message)")
        // Well before the 60 s request deadline: the connect timeout ended it.
        #expect(ContinuousClock.now - started < .seconds(30))
        withExtendedLifetime(server) {}
    }
}
