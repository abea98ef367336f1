import PushPrepCore

/// Token buckets by key, the table both limiters keep (``RateLimiter`` per API key,
/// ``AuthFailureLimiter`` per client address): each bucket holds up to `capacity` tokens
/// (fractional while refilling) and regains `rate` a second; a key not in the table has a full
/// bucket.
///
/// The table keeps at most `maxKeys` keys, so memory stays bounded however many keys arrive:
/// when it is full, the keys whose bucket has refilled go first (they hold nothing a new bucket
/// would not), then the least recently updated ones, down to half the table (a forgotten key
/// only starts again full). A pass over the table thus makes room for at least `maxKeys / 2` new
/// keys, so a stream of new keys costs a pass per half table, not one per key.
struct TokenBuckets: Sendable {
    /// The tokens a full bucket holds.
    let capacity: Double
    /// Tokens regained per second.
    let rate: Double
    /// Keys kept at most.
    let maxKeys: Int
    private var table: [String: Bucket] = [:]

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// An empty table of buckets of `capacity` tokens refilling at `rate` a second.
    init(capacity: Double, rate: Double, maxKeys: Int) {
        self.capacity = capacity
        self.rate = rate
        self.maxKeys = maxKeys
    }

    /// The keys tracked now.
    var count: Int { table.count }

    /// The tokens `key`'s bucket holds at `now`.
    func tokens(_ key: String, now: ContinuousClock.Instant) -> Double {
        table[key].map { refilled($0, now: now) } ?? capacity
    }

    /// Sets `key`'s bucket to `tokens` at `now`, making room first when the key is new and the
    /// table full.
    mutating func set(_ key: String, tokens: Double, now: ContinuousClock.Instant) {
        if table[key] == nil && table.count >= maxKeys { evict(now: now) }
        table[key] = Bucket(tokens: tokens, updated: now)
    }

    /// The whole seconds until a bucket holding `tokens` holds one again, from 1 to a day
    /// (bounded before the conversion: a tiny rate would otherwise make a number Int cannot hold).
    func secondsUntilToken(from tokens: Double) -> Int {
        Int(min(max(((1 - tokens) / rate).rounded(.up), 1), 86_400))
    }

    private func refilled(_ bucket: Bucket, now: ContinuousClock.Instant) -> Double {
        min(capacity, bucket.tokens + max((now - bucket.updated).seconds, 0) * rate)
    }

    /// Makes room: drops the refilled buckets, then the least recently updated ones until at most
    /// half the table is left. (Dropping only the refilled ones could free one place a pass, and
    /// a pass per new key when buckets refill as fast as new keys arrive.)
    private mutating func evict(now: ContinuousClock.Instant) {
        table = table.filter { refilled($0.value, now: now) < capacity }
        guard table.count > maxKeys / 2 else { return }
        let kept = table.sorted { $0.value.updated > $1.value.updated }.prefix(maxKeys / 2)
        table = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }
}
