package import Foundation

/// An IPv4 or IPv6 address, parsed strictly (`inet_pton`: no shorthand such as `127.1` or
/// `0x7f.0.0.1`; such hosts are names and go through the resolver, whose answer is checked).
package enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first.
    case v4(UInt32)
    /// An IPv6 address.
    case v6(IPv6Address)

    /// Parses a literal address. IPv6 may be written with or without square brackets.
    package init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("[") && literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            self = .v6(IPv6Address(v6))
            return
        }
        return nil
    }

    /// Builds an IPv4 address from its four bytes.
    package init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        self = .v4(UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d))
    }

    /// The address in its canonical textual form (`inet_ntop`), without brackets.
    package var description: String {
        switch self {
        case .v4(let value):
            return "\(value >> 24).\((value >> 16) & 0xFF).\((value >> 8) & 0xFF).\(value & 0xFF)"
        case .v6(let address):
            var raw = address.raw
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil else {
                return address.bytes.map { String($0, radix: 16) }.joined(separator: ":")
            }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The form to put in a URL's host: IPv6 in square brackets.
    package var urlHost: String {
        switch self {
        case .v4: description
        case .v6: "[\(description)]"
        }
    }
}

/// An IPv6 address, as two 64-bit halves in network order: a value of this type always has
/// its 16 bytes (an `[UInt8]` could have any length and the address policy trapped on a wrong
/// one).
package struct IPv6Address: Sendable, Hashable {
    /// Bytes 0 to 7, the first byte most significant.
    package var high: UInt64
    /// Bytes 8 to 15, the first byte most significant.
    package var low: UInt64
}

extension IPv6Address {
    /// The address a socket API holds.
    package init(_ raw: in6_addr) {
        let bytes = withUnsafeBytes(of: raw) { Array($0) }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The 16 bytes in network order.
    package var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// The address as a socket API takes it.
    package var raw: in6_addr {
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        return raw
    }
}
