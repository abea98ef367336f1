import PushPrepCore

/// Whether a phone can reach a URL's host: the phone downloads an attachment over the mobile
/// network or someone else's Wi-Fi, so a host that only makes sense on the sender's machine or
/// network is out of its reach. The one classification that `serve`'s start-up warning and
/// pre-flight's `unreachable_url` share; the addresses are judged by ``AddressPolicy``'s
/// categories, the same that guard PushPrep's own fetches.
package enum PhoneReachability {
    /// Why a host is out of a phone's reach.
    package enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// `localhost` or a name under `.localhost` (RFC 6761): the phone itself.
        case loopbackName
        /// A name under `.local`: multicast DNS (RFC 6762), answered on the sender's own link.
        case linkLocalName
        /// An IP address in a special-purpose range (loopback, private, link-local, ...).
        case specialAddress(AddressPolicy.Category)
        /// A public IP address: it may answer, but only while that machine keeps it, and App
        /// Transport Security wants a certificate for a name.
        case bareAddress

        /// `a loopback name (localhost)`, `a private-network address`, ...
        package var description: String {
            switch self {
            case .loopbackName: "a loopback name (localhost is the phone itself)"
            case .linkLocalName: "a .local name (multicast DNS, answered only on the sender's own network)"
            case .specialAddress(let category): category.rawValue
            case .bareAddress: "a bare IP address (a phone needs a host name with a certificate for it)"
            }
        }
    }

    /// Why `host` (a URL's host, as ``RemoteURL/host`` spells it: lowercase, IPv6 without
    /// brackets) is out of a phone's reach, or nil for a host name a phone can look up.
    package static func reason(host: String) -> Reason? {
        if let address = IPAddress(host) {
            return AddressPolicy.category(of: address).map(Reason.specialAddress) ?? .bareAddress
        }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return .loopbackName }
        if name == "local" || name.hasSuffix(".local") { return .linkLocalName }
        return nil
    }
}
