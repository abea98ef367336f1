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
/// take a fresh address per guess. The table holds at most ``maxAddresses`` addresses: when it is
/// full, addresses whose bucket has refilled go first, then the least recently seen half, so
/// memory stays bounded however many addresses an attacker has (a forgotten address only starts
/// again with a full bucket).
final class AuthFailureLimiter: Sendable {
    /// Failures an address may make in a burst; 0 turns the limiter off.
    let limit: Int
    /// The time in which the bucket refills completely.
    let window: Duration
    private let table = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        /// Failures that may still be made (fractional while refilling).
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// Addresses kept at most (about 100 bytes each: under 1 MB).
    static let maxAddresses = 10_000

    /// A limiter of `limit` failures a `window` (`--auth-failure-limit`, `--auth-failure-window`).
    init(limit: Int, window: Duration) {
        self.limit = max(limit, 0)
        self.window = window
    }

    /// Failures regained per second.
    private var rate: Double {
        let seconds = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
        return Double(limit) / max(seconds, 0.001)
    }

    /// Nil when `address` may try to authenticate, else the whole seconds until it may again.
    func retryAfter(_ address: SocketAddress?, now: ContinuousClock.Instant = .now) -> Int? {
        guard limit > 0 else { return nil }
        let key = Self.key(address)
        return table.withLock { table -> Int? in
            guard let bucket = table[key] else { return nil }
            let tokens = refilled(bucket, now: now)
            guard tokens < 1 else { return nil }
            return Int(min(max(((1 - tokens) / rate).rounded(.up), 1), 86_400))
        }
    }

    /// Counts one failure of `address`.
    func recordFailure(_ address: SocketAddress?, now: ContinuousClock.Instant = .now) {
        guard limit > 0 else { return }
        let key = Self.key(address)
        table.withLock { table in
            var bucket = table[key] ?? Bucket(tokens: Double(limit), updated: now)
            bucket.tokens = max(refilled(bucket, now: now) - 1, 0)
            bucket.updated = now
            if table[key] == nil && table.count >= Self.maxAddresses { evict(&table, now: now) }
            table[key] = bucket
        }
    }

    /// The addresses tracked now (for the tests of the bound).
    var count: Int { table.withLock { $0.count } }

    private func refilled(_ bucket: Bucket, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(Double(limit), bucket.tokens + max(seconds, 0) * rate)
    }

    /// Makes room: drops the refilled buckets (they hold nothing a new one would not), and when
    /// that is not enough, the least recently updated half.
    private func evict(_ table: inout [String: Bucket], now: ContinuousClock.Instant) {
        table = table.filter { refilled($0.value, now: now) < Double(limit) }
        guard table.count >= Self.maxAddresses else { return }
        let kept = table.sorted { $0.value.updated > $1.value.updated }.prefix(Self.maxAddresses / 2)
        table = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

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
