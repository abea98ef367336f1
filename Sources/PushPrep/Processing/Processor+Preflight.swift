public import Logging
public import PushPrepCore
public import PushPrepPayload
public import PushPrepRemote

/// `preflight --fix` processes the attachments it replaces with a ``Processor``.
extension Processor: AttachmentProcessing {
    /// Runs `items`; with `animationsAsMovies` false, `gifAsVideo` is `never` for the run.
    public func process(_ items: [InputItem], animationsAsMovies: Bool) async throws(PushPrepError) -> Manifest {
        guard !animationsAsMovies, settings.gifAsVideo != .never else { return try await run(items) }
        var settings = settings
        settings.gifAsVideo = .never
        return try await Processor(settings: settings, outputDirectory: outputDirectory, logger: logger, remote: remote)
            .run(items)
    }
}

extension PreflightSession {
    /// A session that reads downloaded images with libvips (``LibvipsImageInspector``).
    public convenience init(
        options: PreflightOptions, remote: RemoteSettings, budget: FetchBudget = FetchBudget(), logger: Logger
    ) throws(PushPrepError) {
        try self.init(options: options, remote: remote, budget: budget, images: LibvipsImageInspector(), logger: logger)
    }
}
