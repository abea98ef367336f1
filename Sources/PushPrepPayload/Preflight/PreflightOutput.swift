/// Pre-flight's JSON answer: every report and the totals. `pushprep preflight --json` prints it
/// and `POST /v1/preflight` answers with it, so a client reads one shape from either.
public struct PreflightOutput: Sendable, Encodable, Equatable {
    public var reports: [PreflightReport]
    public var errors: Int
    public var warnings: Int
    public var infos: Int

    /// The output of `reports`, with their outcomes (the findings after a fix, if any) counted.
    public init(reports: [PreflightReport]) {
        self.reports = reports
        errors = reports.map { $0.count(.error) }.reduce(0, +)
        warnings = reports.map { $0.count(.warning) }.reduce(0, +)
        infos = reports.map { $0.count(.info) }.reduce(0, +)
    }
}
