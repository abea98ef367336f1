/// What the media code reports of its costly libav work: inputs opened (each probes the file,
/// which decodes frames), video decoders opened and video frames decoded. An observer bound
/// around a pipeline sees each of them (the tests count them, to prove that a movie is opened
/// and decoded once: the poster comes from the frames or packets the preview already reads,
/// never from a second pass).
///
/// Called from the thread doing the work: an observer counts with atomics, and does nothing
/// slow.
package protocol MediaWorkObserver: AnyObject, Sendable {
    /// A media file was opened (and probed) by ``MediaInput``.
    func openedInput()
    /// A video decoder was opened by ``MediaDecoder``.
    func openedVideoDecoder()
    /// A video frame was received from a decoder, by the transcode or the poster.
    func decodedVideoFrame()
}

/// The seam the media code reports its work through. Unbound, the usual case (and always in
/// production), there is no observer and nothing is reported.
///
/// Bind with `MediaInstrumentation.$observer.withValue(observer) { ... }` around the synchronous
/// work.
package enum MediaInstrumentation {
    /// The observer of the work running on this task or thread, if any.
    @TaskLocal package static var observer: (any MediaWorkObserver)?
}
