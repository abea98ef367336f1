extension Duration {
    /// The duration in seconds, with its fraction (attosecond precision is more than a `Double`
    /// keeps; microseconds survive for any duration PushPrep deals with). Shared by every
    /// target of the package.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
