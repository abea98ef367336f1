package import PushPrepCore

/// The addresses a URL may be connected to: its host resolved once by PushPrep (an IP literal
/// "resolves" to itself) and every answer judged by ``AddressPolicy``, unless the host was named
/// with `--allow-host`. The one check every outgoing request goes through, remote sources and
/// webhooks alike, before the request is pinned to a checked address with ``PinnedClients``.
package struct AddressCheck: Sendable {
    /// The policy and the allowed hosts come from here.
    package let settings: RemoteSettings
    private let resolver: any HostResolver

    /// A check with `settings`' policy and allowed hosts, resolving with `resolver`.
    package init(settings: RemoteSettings, resolver: any HostResolver = SystemHostResolver()) {
        self.settings = settings
        self.resolver = resolver
    }

    /// The URL's addresses, in the order to try them, before any check; throws `fetch_failed`
    /// when the name does not resolve.
    package func resolve(_ url: RemoteURL) async throws(PushPrepError) -> [IPAddress] {
        if let literal = url.literalAddress { return [literal] }
        return try await resolver.resolve(host: url.host, port: url.port)
    }

    /// The first of `addresses` that may not be connected to, with the `blocked_address` error
    /// that says why, or nil when all may. Every answer must pass: a name that also points
    /// somewhere internal is not trusted.
    package func refusal(of url: RemoteURL, addresses: [IPAddress]) -> (address: IPAddress, error: PushPrepError)? {
        if settings.isAllowedHost(url.host) { return nil }
        let policy = settings.addressPolicy
        for address in addresses {
            if case .blocked(let category) = policy.verdict(for: address) {
                let how = url.literalAddress == nil ? "\(url.host) resolves to \(address)" : "\(address)"
                let error = PushPrepError(
                    .blockedAddress,
                    "refused to connect to \(url): \(how) is \(category.rawValue)"
                        + " (\(policy.suggestion(host: url.host, for: category)))")
                return (address, error)
            }
        }
        return nil
    }

    /// The URL's addresses, every one of them allowed; throws `blocked_address` otherwise.
    package func checkedAddresses(_ url: RemoteURL) async throws(PushPrepError) -> [IPAddress] {
        let addresses = try await resolve(url)
        if let refusal = refusal(of: url, addresses: addresses) { throw refusal.error }
        return addresses
    }
}
