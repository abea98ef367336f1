/// Exponential backoff with jitter: the wait after the n-th failure is `base · 2^(n-1)`, capped
/// at `cap`, then drawn at random between `minimumFraction` of it and all of it, so that many
/// clients (or many failing jobs) do not retry in lockstep.
public struct Backoff: Sendable, Equatable {
    /// The ceiling of the wait after the first failure.
    public var base: Duration
    /// No wait is longer than this.
    public var cap: Duration
    /// The shortest wait as a fraction of the ceiling: 1 waits exactly the ceiling, 0.1 waits
    /// between 10% and 100% of it.
    public var minimumFraction: Double

    public init(base: Duration, cap: Duration, minimumFraction: Double = 0.5) {
        self.base = base
        self.cap = cap
        self.minimumFraction = min(max(minimumFraction, 0), 1)
    }

    /// The wait after failure number `failures` (1, 2, ...).
    public func delay(
        afterFailure failures: Int, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Duration {
        let exponent = min(max(0, failures - 1), 30)
        let doubled = base * (1 << exponent)
        let ceiling = doubled > cap || doubled < .zero ? cap : doubled
        return .milliseconds(Int64(random(minimumFraction...1) * ceiling.seconds * 1000))
    }
}
