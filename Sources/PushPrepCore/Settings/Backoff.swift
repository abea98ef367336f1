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
        self.minimumFraction = minimumFraction
    }

    /// The wait after failure number `failures` (1, 2, ...): never negative, never longer than
    /// `cap`, and never a trap, whatever the durations, the fraction or `random` hold (the
    /// arithmetic is done in seconds as `Double`, where nothing overflows, and bounded before
    /// it becomes a `Duration` again).
    public func delay(
        afterFailure failures: Int, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Duration {
        let capSeconds = cap.seconds > 0 ? cap.seconds : 0
        let exponent = min(max(0, failures - 1), 30)
        let doubled = max(base.seconds, 0) * Double(1 << exponent)
        let ceiling = min(doubled, capSeconds)
        let lower = minimumFraction.isNaN ? 0.5 : min(max(minimumFraction, 0), 1)
        let drawn = random(lower...1)
        let fraction = drawn.isNaN ? 1 : min(max(drawn, 0), 1)
        // Microseconds in an Int64 hold about 292,000 years; Duration holds them exactly.
        let microseconds = min(fraction * ceiling * 1_000_000, 9e18).rounded()
        return .microseconds(Int64(microseconds))
    }
}
