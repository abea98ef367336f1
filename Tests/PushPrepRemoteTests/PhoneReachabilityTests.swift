import Testing

@testable import PushPrepRemote

/// Which hosts a phone cannot reach: the one classification behind `serve`'s start-up warning and
/// pre-flight's `unreachable_url`, with addresses judged by ``AddressPolicy``'s categories.
@Suite struct PhoneReachabilityTests {
    @Test(
        "loopback, private, link-local and other special addresses, by AddressPolicy's category",
        arguments: [
            ("127.0.0.1", AddressPolicy.Category.loopback), ("::1", .loopback), ("10.0.0.5", .privateNetwork),
            ("192.168.1.20", .privateNetwork), ("172.16.0.9", .privateNetwork), ("fd00::1", .privateNetwork),
            ("169.254.169.254", .linkLocal), ("fe80::1", .linkLocal), ("100.64.0.1", .sharedAddressSpace),
            ("0.0.0.0", .unspecified), ("::ffff:127.0.0.1", .loopback),
        ])
    func specialAddresses(_ host: String, _ category: AddressPolicy.Category) {
        #expect(PhoneReachability.reason(host: host) == .specialAddress(category))
    }

    @Test("a public address is still a bare IP", arguments: ["8.8.8.8", "93.184.216.34", "2606:4700::1111"])
    func bareAddresses(_ host: String) {
        #expect(PhoneReachability.reason(host: host) == .bareAddress)
    }

    @Test(
        "localhost and .local names",
        arguments: [
            ("localhost", PhoneReachability.Reason.loopbackName), ("LOCALHOST.", .loopbackName),
            ("api.localhost", .loopbackName), ("printer.local", .linkLocalName), ("Mac-mini.local.", .linkLocalName),
        ])
    func localNames(_ host: String, _ reason: PhoneReachability.Reason) {
        #expect(PhoneReachability.reason(host: host) == reason)
        #expect(!reason.description.isEmpty)
    }

    @Test(
        "names a phone can look up",
        arguments: [
            "cdn.example.com", "push.example.com", "localhost.example.com", "local.example.com", "localhost-cdn.net",
        ]
    )
    func reachableNames(_ host: String) {
        #expect(PhoneReachability.reason(host: host) == nil)
    }
}
