import Synchronization

@testable import PushPrepMedia

/// Counts of the costly libav work done while it is bound as the media code's observer
/// (``MediaInstrumentation``): inputs opened, video decoders opened and video frames decoded.
///
/// Bind with `MediaInstrumentation.$observer.withValue(work) { ... }` around the synchronous
/// work.
final class MediaWork: MediaWorkObserver {
    private let inputs = Atomic<Int>(0)
    private let videoDecoders = Atomic<Int>(0)
    private let videoFrames = Atomic<Int>(0)

    /// Media files opened (and probed) by ``MediaInput``.
    var inputsOpened: Int { inputs.load(ordering: .relaxed) }
    /// Video decoders opened by ``MediaDecoder``.
    var videoDecodersOpened: Int { videoDecoders.load(ordering: .relaxed) }
    /// Video frames received from decoders by the transcode and the poster.
    var videoFramesDecoded: Int { videoFrames.load(ordering: .relaxed) }

    func openedInput() { inputs.add(1, ordering: .relaxed) }
    func openedVideoDecoder() { videoDecoders.add(1, ordering: .relaxed) }
    func decodedVideoFrame() { videoFrames.add(1, ordering: .relaxed) }
}
