import PushPrepTestSupport
import Testing

@testable import PushPrepCore
@testable import PushPrepRemote

/// The SSRF rules as pure functions over parsed addresses: nothing here touches the network.
@Suite struct RemoteAddressPolicyTests {
    private func verdict(_ text: String, allowPrivate: Bool = false) throws -> AddressPolicy.Verdict {
        let address = try #require(IPAddress(text), "\(text) does not parse")
        return AddressPolicy(allowPrivateNetworks: allowPrivate).verdict(for: address)
    }

    @Test(
        "blocked IPv4 ranges, each with its category",
        arguments: [
            ("0.0.0.0", AddressPolicy.Category.unspecified), ("0.255.1.2", .unspecified),
            ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
            ("10.0.0.1", .privateNetwork), ("10.255.255.255", .privateNetwork),
            ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
            ("192.168.1.1", .privateNetwork), ("100.64.0.1", .sharedAddressSpace),
            ("100.127.255.255", .sharedAddressSpace),
            ("169.254.169.254", .linkLocal), ("169.254.0.1", .linkLocal),
            ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("255.255.255.255", .broadcast),
            ("240.0.0.1", .reserved), ("192.0.0.8", .reserved), ("198.18.0.1", .reserved), ("198.19.255.1", .reserved),
            ("192.0.2.10", .documentation), ("198.51.100.7", .documentation), ("203.0.113.99", .documentation),
        ])
    func blockedIPv4(_ text: String, _ category: AddressPolicy.Category) throws {
        #expect(try verdict(text) == .blocked(category))
    }

    @Test(
        "public IPv4 addresses next to the blocked ranges are allowed",
        arguments: [
            "1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
            "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255",
            "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255", "93.184.216.34",
        ])
    func allowedIPv4(_ text: String) throws {
        #expect(try verdict(text) == .allowed)
    }

    @Test(
        "blocked IPv6 ranges",
        arguments: [
            ("::", AddressPolicy.Category.unspecified), ("::1", .loopback), ("fc00::1", .privateNetwork),
            ("fd12:3456:789a::1", .privateNetwork), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
            ("fec0::1", .privateNetwork), ("ff02::1", .multicast), ("ff0e::1", .multicast),
            ("2001:db8::1", .documentation), ("3fff::1", .documentation), ("100::1", .reserved),
            ("2001:10::1", .reserved), ("4000::1", .reserved), ("64:ff9b:1::a00:1", .privateNetwork),
        ])
    func blockedIPv6(_ text: String, _ category: AddressPolicy.Category) throws {
        #expect(try verdict(text) == .blocked(category))
    }

    @Test(
        "IPv4 hidden in IPv6 is judged by the IPv4 address it carries",
        arguments: [
            // IPv4-mapped, in both notations.
            ("::ffff:127.0.0.1", AddressPolicy.Category.loopback), ("::ffff:7f00:1", .loopback),
            ("::ffff:169.254.169.254", .linkLocal), ("::ffff:10.1.2.3", .privateNetwork),
            // SIIT IPv4-translated.
            ("::ffff:0:a9fe:a9fe", .linkLocal),
            // IPv4-compatible (deprecated): blocked even when it carries a public address.
            ("::127.0.0.1", .loopback), ("::169.254.169.254", .linkLocal), ("::8.8.8.8", .reserved),
            // NAT64 well-known prefix.
            ("64:ff9b::7f00:1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal),
            ("64:ff9b::192.168.0.1", .privateNetwork),
            // 6to4: the IPv4 address follows 2002::/16.
            ("2002:7f00:1::1", .loopback), ("2002:a9fe:a9fe::", .linkLocal), ("2002:c0a8:101::1", .privateNetwork),
            // Teredo: server IPv4 in bits 32-63 (65.54.227.120 below), the client's inverted in the
            // last 32 bits: ~80ff:fffe is 127.0.0.1, ~5601:5601 is 169.254.169.254.
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", .loopback),
            ("2001:0:4136:e378:8000:63bf:5601:5601", .linkLocal),
            ("2001:0:a00:1::", .privateNetwork),  // server 10.0.0.1
        ])
    func embeddedIPv4(_ text: String, _ category: AddressPolicy.Category) throws {
        #expect(try verdict(text) == .blocked(category))
    }

    @Test(
        "public IPv6, and public IPv4 carried by mapped, NAT64, 6to4 and Teredo addresses, are allowed",
        arguments: [
            "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808",
            "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
        ])
    func allowedIPv6(_ text: String) throws {
        #expect(try verdict(text) == .allowed)
    }

    @Test("--allow-private-networks opens loopback, private and CGNAT, never link-local or the rest")
    func privateOptIn() throws {
        for text in [
            "127.0.0.1", "10.0.0.1", "172.20.1.1", "192.168.0.10", "100.64.1.1", "::1", "fd00::1", "::ffff:10.0.0.1",
        ] {
            #expect(try verdict(text, allowPrivate: true) == .allowed, "\(text)")
        }
        #expect(try verdict("169.254.169.254", allowPrivate: true) == .blocked(.linkLocal))
        #expect(try verdict("fe80::1", allowPrivate: true) == .blocked(.linkLocal))
        #expect(try verdict("::ffff:169.254.169.254", allowPrivate: true) == .blocked(.linkLocal))
        #expect(try verdict("0.0.0.0", allowPrivate: true) == .blocked(.unspecified))
        #expect(try verdict("224.0.0.1", allowPrivate: true) == .blocked(.multicast))
        #expect(try verdict("192.0.2.1", allowPrivate: true) == .blocked(.documentation))
    }

    @Test("address parsing is strict: shorthand IPv4 forms are names, not addresses")
    func strictParsing() {
        #expect(IPAddress("127.0.0.1") == IPAddress(127, 0, 0, 1))
        #expect(IPAddress("[::1]") == IPAddress("::1"))
        #expect(IPAddress("::ffff:127.0.0.1") == IPAddress("::ffff:7f00:1"))
        for text in ["127.1", "0x7f.0.0.1", "2130706433", "017700000001", "localhost", "", "1.2.3.4.5", "[::1"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("::ffff:7f00:1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("2001:db8::1")?.urlHost == "[2001:db8::1]")
    }

    /// An IPv6 address always has 16 bytes (it was an `[UInt8]`, and the policy trapped on a
    /// value of another length): built from its halves, parsed or from a socket, it is the same.
    @Test("IPv6 addresses are 16 bytes by type")
    func ipv6Halves() {
        let documentation = IPv6Address(high: 0x2001_0DB8_0000_0000, low: 1)
        #expect(IPAddress("2001:db8::1") == .v6(documentation))
        #expect(documentation.bytes == [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1])
        #expect(IPAddress.v6(documentation).description == "2001:db8::1")
        #expect(AddressPolicy.category(of: .v6(documentation)) == .documentation)
        #expect(AddressPolicy.category(of: .v6(IPv6Address(high: 0, low: 1))) == .loopback)
        #expect(AddressPolicy.category(of: .v6(IPv6Address(high: 0, low: 0xFFFF_A9FE_A9FE))) == .linkLocal)
        let last = IPv6Address(high: .max, low: .max)
        #expect(IPAddress(IPAddress.v6(last).description) == .v6(last))
    }
}
