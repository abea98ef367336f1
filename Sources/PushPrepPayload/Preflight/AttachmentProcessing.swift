public import PushPrepCore

/// Turns downloaded attachments into notification-ready files: what `--fix` needs from the
/// media pipeline. Pre-flight receives one (``PreflightSession/fix(_:file:writeTo:processing:)``)
/// instead of building a processor itself; PushPrep's `Processor` is the one the CLI passes.
public protocol AttachmentProcessing: Sendable {
    /// Where the processed files are written.
    var outputDirectory: String { get }

    /// Processes `items` into one manifest entry each, in order. With `animationsAsMovies`
    /// false no animation becomes a movie (it is reduced, or falls back to its first frame):
    /// for a provider that carries no MP4.
    func process(_ items: [InputItem], animationsAsMovies: Bool) async throws(PushPrepError) -> Manifest
}
