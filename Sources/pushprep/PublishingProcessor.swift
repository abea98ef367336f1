import PushPrepCore
import PushPrepPayload
import PushPrepStorage

/// What `preflight --fix --store s3://…` processes attachments with: another
/// ``AttachmentProcessing`` (a `Processor` writing into a private staging folder, which the
/// command removes after the fix), whose ready outputs and posters are then published to the
/// bucket with ``S3AttachmentStore`` and come back with their store URLs. Pre-flight's fix thus
/// points the payload at the bucket without knowing about stores.
///
/// An output whose upload fails becomes a failed entry (`storage_denied` or
/// `storage_unavailable`), which the fix reports as not fixed, leaving that URL as it was.
struct PublishingProcessor: AttachmentProcessing {
    /// Writes the processed files into ``outputDirectory``.
    let processing: any AttachmentProcessing
    /// The bucket and prefix they are published to.
    let store: S3AttachmentStore
    /// The URLs the published outputs get.
    let urls: ObjectURLStyle
    /// Outputs uploaded at once.
    let concurrency: Int

    /// The staging folder the wrapped processing writes into.
    var outputDirectory: String { processing.outputDirectory }

    func process(_ items: [InputItem], animationsAsMovies: Bool) async throws(PushPrepError) -> Manifest {
        let manifest = try await processing.process(items, animationsAsMovies: animationsAsMovies)
        return await store.publish(manifest, from: processing.outputDirectory, urls: urls, concurrency: concurrency)
    }
}
