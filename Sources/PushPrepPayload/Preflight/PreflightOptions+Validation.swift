public import PushPrepCore

extension PreflightOptions {
    /// Refuses options no check can run with: a time budget or a slow link that is not a
    /// positive number (the download-time estimates divide by them). `pushprep preflight` and
    /// `POST /v1/preflight` both check with this.
    public func validate() throws(PushPrepError) {
        guard timeBudget.isFinite, timeBudget > 0 else {
            throw PushPrepError(.invalidSettings, "the time budget must be positive seconds, got \(timeBudget)")
        }
        guard slowLinkKbps.isFinite, slowLinkKbps > 0 else {
            throw PushPrepError(.invalidSettings, "the slow link must be positive kbit/s, got \(slowLinkKbps)")
        }
    }
}
