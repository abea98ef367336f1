/// When a webhook that was not delivered is tried again, and when it is given up.
///
/// The default follows the Standard Webhooks recommendation: the first attempt at once, then
/// 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure, so a receiver down for up to
/// about a day still gets the event. Each wait is spread by ±``jitter`` so that the retries of
/// many deliveries to one receiver that came back do not arrive in one burst.
package struct WebhookRetrySchedule: Sendable, Equatable {
    /// The wait after failed attempt n (from 1) before attempt n + 1; its count plus one is the
    /// number of attempts.
    package var delays: [Duration]
    /// The fraction each wait may be shortened or lengthened by at random, in 0...1.
    package var jitter: Double

    /// A schedule; `jitter` is clamped to 0...1.
    package init(delays: [Duration], jitter: Double = 0.1) {
        self.delays = delays
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The Standard Webhooks schedule: 8 attempts over about 27 hours.
    package static let standard = WebhookRetrySchedule(delays: [
        .seconds(5), .seconds(5 * 60), .seconds(30 * 60), .seconds(2 * 3600), .seconds(5 * 3600),
        .seconds(10 * 3600), .seconds(10 * 3600),
    ])

    /// Attempts before a delivery is given up.
    package var maxAttempts: Int { delays.count + 1 }

    /// The wait after failed attempt `attempt` (from 1) before the next one, jittered; nil when
    /// that was the last attempt.
    package func delay(afterAttempt attempt: Int) -> Duration? {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, using: &generator)
    }

    /// ``delay(afterAttempt:)`` with the randomness of `generator`.
    package func delay(afterAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let base = delays[attempt - 1]
        guard jitter > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
    }

    /// The shortest and the longest wait after `attempt`, jitter included; nil after the last.
    package func bounds(afterAttempt attempt: Int) -> ClosedRange<Duration>? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let base = delays[attempt - 1]
        return (base * (1 - jitter))...(base * (1 + jitter))
    }
}
