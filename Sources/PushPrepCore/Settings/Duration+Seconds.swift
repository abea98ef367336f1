extension Duration {
    /// The duration in seconds, with its fraction (attosecond precision is more than a `Double`
    /// keeps; microseconds survive for any duration PushPrep deals with). Shared by every
    /// target of the package.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole microseconds, rounded toward zero: what libav's clocks count in.
    package var wholeMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }

    /// The duration in whole milliseconds, rounded toward zero: how logs write short waits.
    package var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// A number of seconds that came from outside (an option, queued settings, a database row)
    /// as a duration, to the microsecond: `invalid_settings` naming `name` unless it is finite and
    /// in `range`. The one conversion every such number goes through: `Duration.seconds(_:)`
    /// and `Int64(_:)` trap on a non-finite or huge `Double`, which would abort the process.
    package static func seconds(
        checking seconds: Double, in range: ClosedRange<Double>, _ name: String
    ) throws(PushPrepError) -> Duration {
        // Int64 microseconds hold about 292,000 years: any range PushPrep uses is far inside.
        guard seconds.isFinite, range.contains(seconds), abs(seconds) < 9e12 else {
            throw PushPrepError(
                .invalidSettings,
                "\(name) must be a number of seconds in \(NumberText.format(range.lowerBound))"
                    + "...\(NumberText.format(range.upperBound)), got \(NumberText.format(seconds))")
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    /// Whether this duration, in seconds, is in `range`.
    package func isWithin(seconds range: ClosedRange<Double>) -> Bool {
        range.contains(seconds)
    }
}

/// How limits and offending numbers are written in messages.
package enum NumberText {
    /// `86400`, `0.5`, `inf`, `nan`, `1e+300`: whole numbers without a fraction.
    package static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
