import Foundation
import NIOPosix
package import PushPrepCore

/// Turns a host name into the addresses to connect to. The fetcher resolves every hop itself,
/// checks each answer with ``AddressPolicy`` and then connects to exactly a checked address, so
/// a DNS answer that changes between check and connect never reaches the network.
package protocol HostResolver: Sendable {
    /// The addresses of `host`, in the order to try them. Throws a `PushPrepError`.
    func resolve(host: String, port: Int) async throws(PushPrepError) -> [IPAddress]
}

/// The system resolver (`getaddrinfo`, so `/etc/hosts` and `nsswitch.conf` apply), run on a
/// thread pool because it blocks.
package struct SystemHostResolver: HostResolver {
    /// The system resolver.
    package init() {}

    package func resolve(host: String, port: Int) async throws(PushPrepError) -> [IPAddress] {
        let result: Result<[IPAddress], PushPrepError>
        do {
            result = try await NIOThreadPool.singleton.runIfActive { Self.lookUp(host: host, port: port) }
        } catch {
            throw PushPrepError(.fetchFailed, "cannot resolve \(host): \(error)")
        }
        return try result.get()
    }

    /// `getaddrinfo` for `host`, each address once, in the order the system gives.
    private static func lookUp(host: String, port: Int) -> Result<[IPAddress], PushPrepError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            // The mapping's sentence (NetworkFailure), with the resolver's short reason, which
            // tells a name that does not exist from a resolver that did not answer.
            let reason = String(cString: gai_strerror(status))
            let sentence = NetworkFailure(kind: .dns).connecting(to: host, port: nil)
            return .failure(PushPrepError(.fetchFailed, "\(sentence) (\(reason))"))
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ai_next }
            guard let sockaddr = entry.pointee.ai_addr else { continue }
            let address: IPAddress?
            switch entry.pointee.ai_family {
            case AF_INET:
                address = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr))
                }
            case AF_INET6:
                address = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    .v6(IPv6Address($0.pointee.sin6_addr))
                }
            default:
                address = nil
            }
            if let address, !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            return .failure(PushPrepError(.fetchFailed, "cannot resolve \(host): no IPv4 or IPv6 address"))
        }
        return .success(addresses)
    }
}
