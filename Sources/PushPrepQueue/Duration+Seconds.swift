extension Duration {
    /// The duration in seconds, with its fraction (attosecond precision is more than a `Double`
    /// keeps; microseconds survive for any duration a queue deals with).
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
