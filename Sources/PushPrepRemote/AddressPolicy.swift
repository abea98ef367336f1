package import PushPrepCore

/// Decides whether PushPrep may connect to an address: the server-side request forgery (SSRF)
/// rules, applied to every address a host resolves to, on every hop, before connecting.
///
/// Blocked by default: loopback, private networks (10/8, 172.16/12, 192.168/16, fc00::/7),
/// link-local (169.254/16 with the cloud metadata endpoints, fe80::/10), CGNAT 100.64/10,
/// 0.0.0.0/8, multicast, broadcast, reserved and documentation ranges, and anything outside
/// IPv6 global unicast (2000::/3). IPv4 carried inside IPv6 (IPv4-mapped, IPv4-compatible,
/// SIIT, 6to4, NAT64 and Teredo) is judged by the IPv4 address it carries.
package struct AddressPolicy: Sendable, Equatable {
    /// Why an address is refused.
    package enum Category: String, Sendable, Equatable {
        case unspecified = "an unspecified (this-network) address"
        case loopback = "a loopback address"
        case privateNetwork = "a private-network address"
        case sharedAddressSpace = "a carrier-grade NAT (100.64/10) address"
        case linkLocal = "a link-local address (cloud metadata endpoints live here)"
        case multicast = "a multicast address"
        case broadcast = "the broadcast address"
        case documentation = "a documentation address"
        case reserved = "a reserved address"
    }

    /// The outcome for one address.
    package enum Verdict: Sendable, Equatable {
        case allowed
        case blocked(Category)
    }

    /// Loopback, private networks and CGNAT become allowed (`--allow-private-networks`);
    /// link-local, multicast, reserved and the rest stay blocked.
    package var allowPrivateNetworks: Bool

    /// A policy; private networks are blocked unless asked for.
    package init(allowPrivateNetworks: Bool = false) {
        self.allowPrivateNetworks = allowPrivateNetworks
    }

    /// The verdict for `address` under this policy.
    package func verdict(for address: IPAddress) -> Verdict {
        guard let category = Self.category(of: address) else { return .allowed }
        if allowPrivateNetworks, [.loopback, .privateNetwork, .sharedAddressSpace].contains(category) {
            return .allowed
        }
        return .blocked(category)
    }

    /// What a message may suggest to reach `host`, refused as `category`: the opt-in for a
    /// private network or CGNAT address that may be the user's own (`--allow-host`, and
    /// `--allow-private-networks` when it is off), and nothing else. Loopback, link-local (the
    /// cloud metadata endpoints), unspecified, multicast, broadcast, documentation and reserved
    /// addresses are never suggested: opening one lets any URL reach the machine itself or its
    /// credentials. The one place that decides, for every message that names an opt-in.
    package func suggestion(host: String, for category: Category) -> String {
        switch category {
        case .privateNetwork, .sharedAddressSpace:
            "if it is yours, allow it with --allow-host \(host)"
                + (allowPrivateNetworks ? "" : " or --allow-private-networks")
        case .loopback, .linkLocal, .unspecified, .multicast, .broadcast, .documentation, .reserved:
            "use a URL on a public address"
        }
    }

    /// The special-purpose category of an address, or nil for an ordinary public address.
    package static func category(of address: IPAddress) -> Category? {
        switch address {
        case .v4(let value): category(v4: value)
        case .v6(let address): category(v6: address.bytes)
        }
    }

    private static func category(v4 a: UInt32) -> Category? {
        func within(_ prefix: UInt32, _ length: UInt32) -> Bool {
            length == 0 || (a >> (32 - length)) == (prefix >> (32 - length))
        }
        func ip(_ b0: UInt32, _ b1: UInt32, _ b2: UInt32, _ b3: UInt32) -> UInt32 {
            b0 << 24 | b1 << 16 | b2 << 8 | b3
        }
        if a == 0xFFFF_FFFF { return .broadcast }
        if within(ip(0, 0, 0, 0), 8) { return .unspecified }
        if within(ip(127, 0, 0, 0), 8) { return .loopback }
        if within(ip(10, 0, 0, 0), 8) || within(ip(172, 16, 0, 0), 12) || within(ip(192, 168, 0, 0), 16) {
            return .privateNetwork
        }
        if within(ip(100, 64, 0, 0), 10) { return .sharedAddressSpace }
        if within(ip(169, 254, 0, 0), 16) { return .linkLocal }
        if within(ip(192, 0, 2, 0), 24) || within(ip(198, 51, 100, 0), 24) || within(ip(203, 0, 113, 0), 24) {
            return .documentation
        }
        // IETF protocol assignments, the retired 6to4 relay anycast, benchmarking.
        if within(ip(192, 0, 0, 0), 24) || within(ip(192, 88, 99, 0), 24) || within(ip(198, 18, 0, 0), 15) {
            return .reserved
        }
        if within(ip(224, 0, 0, 0), 4) { return .multicast }
        if within(ip(240, 0, 0, 0), 4) { return .reserved }
        return nil
    }

    /// `b` is an ``IPv6Address``'s 16 bytes.
    private static func category(v6 b: [UInt8]) -> Category? {
        func prefix(_ bytes: [UInt8], bits: Int) -> Bool {
            for bit in 0..<bits {
                let mask = UInt8(0x80) >> UInt8(bit % 8)
                if (b[bit / 8] & mask) != (bytes[bit / 8] & mask) { return false }
            }
            return true
        }
        func v4(at offset: Int, xor: UInt32 = 0) -> UInt32 {
            (UInt32(b[offset]) << 24 | UInt32(b[offset + 1]) << 16 | UInt32(b[offset + 2]) << 8 | UInt32(b[offset + 3]))
                ^ xor
        }
        func embedded(_ values: UInt32...) -> Category? {
            values.lazy.compactMap { category(v4: $0) }.first
        }
        let zeros = [UInt8](repeating: 0, count: 16)
        if b == zeros { return .unspecified }
        if b == zeros.dropLast() + [1] { return .loopback }
        // ::ffff:0:0/96 IPv4-mapped and ::ffff:0:0:0/96 SIIT: the socket connects to the IPv4 address.
        if prefix(zeros.prefix(10) + [0xFF, 0xFF] + zeros.prefix(4), bits: 96)
            || prefix(zeros.prefix(8) + [0xFF, 0xFF] + zeros.prefix(6), bits: 96)
        {
            return category(v4: v4(at: 12))
        }
        // ::/96 IPv4-compatible: deprecated and never routable, whatever it carries.
        if prefix(zeros, bits: 96) { return embedded(v4(at: 12)) ?? .reserved }
        // 64:ff9b::/96 NAT64: the translator connects to the IPv4 address in the last 32 bits.
        if prefix([0x00, 0x64, 0xFF, 0x9B] + zeros.prefix(12), bits: 96) { return category(v4: v4(at: 12)) }
        // 64:ff9b:1::/48 local-use NAT64 (RFC 8215): an operator's internal translation.
        if prefix([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01] + zeros.prefix(10), bits: 48) { return .privateNetwork }
        // 2002::/16 6to4: the IPv4 address of the relay follows the prefix.
        if prefix([0x20, 0x02] + zeros.prefix(14), bits: 16) { return category(v4: v4(at: 2)) }
        // 2001::/32 Teredo: server IPv4 in bits 32-63, client IPv4 inverted in the last 32 bits.
        if prefix([0x20, 0x01, 0x00, 0x00] + zeros.prefix(12), bits: 32) {
            return embedded(v4(at: 4), v4(at: 12, xor: 0xFFFF_FFFF))
        }
        if prefix([0x20, 0x01, 0x0D, 0xB8] + zeros.prefix(12), bits: 32) { return .documentation }
        if prefix([0x3F, 0xFF] + zeros.prefix(14), bits: 20) { return .documentation }
        // 2001::/23 IETF protocol assignments (ORCHID, AMT, benchmarking, ...).
        if prefix([0x20, 0x01] + zeros.prefix(14), bits: 23) { return .reserved }
        if prefix([0xFC] + zeros.prefix(15), bits: 7) { return .privateNetwork }
        if prefix([0xFE, 0x80] + zeros.prefix(14), bits: 10) { return .linkLocal }
        // fec0::/10 site-local: deprecated private addressing.
        if prefix([0xFE, 0xC0] + zeros.prefix(14), bits: 10) { return .privateNetwork }
        if b[0] == 0xFF { return .multicast }
        // Only 2000::/3 is global unicast; everything else (100::/64 discard, ...) is reserved.
        if !prefix([0x20] + zeros.prefix(15), bits: 3) { return .reserved }
        return nil
    }
}
