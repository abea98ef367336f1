import Synchronization

/// Counts of the costly libav work done while it is bound: inputs opened (each probes the
/// file, which decodes frames), video decoders opened and video frames decoded. Tests bind one
/// around a pipeline to prove that a movie is opened and decoded once (the poster comes from
/// the frames or packets the preview already reads, never from a second pass). Unbound, the
/// usual case, nothing is counted.
///
/// Bind with `MediaWork.$current.withValue(work) { ... }` around the synchronous work.
package final class MediaWork: Sendable {
    /// The counter of the work running on this task or thread, if any.
    @TaskLocal package static var current: MediaWork?

    private let inputs = Atomic<Int>(0)
    private let videoDecoders = Atomic<Int>(0)
    private let videoFrames = Atomic<Int>(0)

    package init() {}

    /// Media files opened (and probed) by ``MediaInput``.
    package var inputsOpened: Int { inputs.load(ordering: .relaxed) }
    /// Video decoders opened by ``MediaDecoder``.
    package var videoDecodersOpened: Int { videoDecoders.load(ordering: .relaxed) }
    /// Video frames received from decoders by the transcode and the poster.
    package var videoFramesDecoded: Int { videoFrames.load(ordering: .relaxed) }

    func openedInput() { inputs.add(1, ordering: .relaxed) }
    func openedVideoDecoder() { videoDecoders.add(1, ordering: .relaxed) }
    func decodedVideoFrame() { videoFrames.add(1, ordering: .relaxed) }
}
