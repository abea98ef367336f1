import Foundation
import NIOCore
import PushPrepCore
import PushPrepRemote
import Synchronization

/// Slows guessing: failed bearer keys and failed console logins, counted per client address in
/// a token bucket of `limit` failures that refills at `limit` per `window`. Once an address has
/// spent its bucket, every attempt to authenticate from it (a right key too, else a guess would
/// still learn whether it was right) gets `429 rate_limited` with `Retry-After` until a failure
/// has drained away. Other addresses are not affected, and a success resets nothing (one valid
/// read key must not buy more guesses at a write key).
///
/// An IPv6 client counts by its /64, the block one subscriber gets, so that an attacker cannot
/// take a fresh address per guess. The table holds at most ``maxAddresses`` addresses
/// (``TokenBuckets``: when it is full, addresses whose bucket has refilled go first, then the
/// least recently seen half), so memory stays bounded however many addresses an attacker has.
final class AuthFailureLimiter: Sendable {
    /// Failures an address may make in a burst; 0 turns the limiter off.
    let limit: Int
    /// Failures that may still be made, per address: the bucket refills completely in the window.
    private let table: Mutex<TokenBuckets>

    /// Addresses kept at most (about 100 bytes each: under 1 MB).
    static let maxAddresses = 10_000

    /// A limiter of `limit` failures a `window` (`--auth-failure-limit`, `--auth-failure-window`).
    init(limit: Int, window: Duration) {
        let limit = max(limit, 0)
        self.limit = limit
        table = Mutex(
            TokenBuckets(
                capacity: Double(limit), rate: Double(limit) / max(window.seconds, 0.001), maxKeys: Self.maxAddresses))
    }

    /// Nil when `address` may try to authenticate, else the whole seconds until it may again.
    func retryAfter(_ address: SocketAddress?, now: ContinuousClock.Instant = .now) -> Int? {
        guard limit > 0 else { return nil }
        let key = Self.key(address)
        return table.withLock { table -> Int? in
            let tokens = table.tokens(key, now: now)
            return tokens < 1 ? table.secondsUntilToken(from: tokens) : nil
        }
    }

    /// Counts one failure of `address`.
    func recordFailure(_ address: SocketAddress?, now: ContinuousClock.Instant = .now) {
        guard limit > 0 else { return }
        let key = Self.key(address)
        table.withLock { table in table.set(key, tokens: max(table.tokens(key, now: now) - 1, 0), now: now) }
    }

    /// The addresses tracked now (for the tests of the bound).
    var count: Int { table.withLock { $0.count } }

    /// The client an address counts as: IPv4 by its address (an IPv4-mapped IPv6 address too),
    /// IPv6 by its /64, anything else (a Unix socket, no address) as one client.
    static func key(_ address: SocketAddress?) -> String {
        guard let text = address?.ipAddress, let ip = IPAddress(text) else { return "local" }
        switch ip {
        case .v4:
            return ip.description
        case .v6(let v6):
            if v6.high == 0 && v6.low >> 32 == 0xFFFF {
                return IPAddress.v4(UInt32(truncatingIfNeeded: v6.low)).description
            }
            return String(v6.high, radix: 16) + "::/64"
        }
    }
}
