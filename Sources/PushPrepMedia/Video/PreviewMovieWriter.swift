internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// The output half of a transcode: frames in (already `yuv420p` at the output size), an MP4
/// out with `moov` first: H.264 from ``VideoEncoder``, optionally AAC-LC from
/// ``AudioTranscoder``, and a representative frame kept aside for the poster.
///
/// Frames are placed on a grid of `timeBase` ticks (at most 30 per second): a frame whose
/// tick is already taken is dropped, which is how 60 fps becomes 30 fps.
///
/// Confined to one job; the muxer, encoders and picked frames are owned by their classes.
final class PreviewMovieWriter {
    /// What was written.
    struct Result {
        let frames: Int
        /// Seconds of video in the file.
        let duration: Double
        let poster: PosterStep.Picker
    }

    private let output: MediaOutput
    private let encoder: VideoEncoder
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audio: AudioTranscoder?
    private let audioStream: UnsafeMutablePointer<AVStream>?
    private let picker: PosterStep.Picker
    private let ticksPerSecond: Double
    private var frames = 0
    private var lastTick: Int64 = -1
    private var lastDuration: Int64 = 1
    /// Frame durations in ticks by pts, for the packets (the encoder reorders frames).
    private var durations: [Int64: Int64] = [:]

    /// `rotationFrom`: a stream whose display matrix the video keeps. `posterTimes`: seconds
    /// into the output at which poster candidates are taken.
    init(
        path: String, encoder: VideoEncoder, rotationFrom: UnsafeMutablePointer<AVStream>?, audio: AudioTranscoder?,
        posterTimes: [Double], deadline: MediaDeadline
    ) throws(PushPrepError) {
        let output = try MediaOutput(path: path, format: "mp4", deadline: deadline)
        let videoStream = try output.addStream(encoder: encoder.context)
        if let rotationFrom {
            try avCall("cannot keep the rotation", deadline: deadline, default: .ioError) {
                cffmpegshims_copy_display_matrix(rotationFrom, videoStream)
            }
        }
        var audioStream: UnsafeMutablePointer<AVStream>? = nil
        if let audio { audioStream = try output.addStream(encoder: audio.encoder) }
        try output.writeHeader(faststart: true)
        self.output = output
        self.encoder = encoder
        self.audio = audio
        self.videoStream = videoStream
        self.audioStream = audioStream
        let timeBase = encoder.context.pointee.time_base
        ticksPerSecond = Double(timeBase.den) / Double(timeBase.num)
        picker = PosterStep.Picker(times: posterTimes)
    }

    /// Adds a frame shown from `time` seconds into the output for `duration` seconds (nil:
    /// until the next frame). Returns false when the frame was dropped for the frame rate.
    @discardableResult
    func addVideo(_ frame: UnsafeMutablePointer<AVFrame>, time: Double, duration: Double? = nil) throws(PushPrepError)
        -> Bool
    {
        // Round half down, so that 60 fps frames at 0, 1/60, 2/60 take ticks 0, 0, 1 at
        // 30 fps, while slightly early timestamps (29.97 fps stored in milliseconds) still
        // land on their own tick.
        let tick = try MediaTime.integer((time * ticksPerSecond + 0.499).rounded(.down), "\(time) s")
        guard tick > lastTick, tick >= 0 else { return false }
        let ticks =
            try duration.map { (seconds) throws(PushPrepError) in
                max(1, try MediaTime.integer(seconds * ticksPerSecond, "\(seconds) s"))
            } ?? 1
        frame.pointee.pts = tick
        frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
        durations[tick] = ticks
        lastTick = tick
        lastDuration = ticks
        frames += 1
        try picker.consider(frame, time: Double(tick) / ticksPerSecond)
        try encoder.push(frame, emit: writeVideo)
        return true
    }

    /// Adds decoded audio (any format; the transcoder converts it).
    func addAudio(_ frame: UnsafeMutablePointer<AVFrame>) throws(PushPrepError) {
        try audio?.push(frame, emit: writeAudio)
    }

    /// Whether the audio track has all the samples it may hold.
    var audioIsFull: Bool { audio?.isFull ?? true }

    /// Flushes the encoders and finishes the file.
    func finish() throws(PushPrepError) -> Result {
        try encoder.push(nil, emit: writeVideo)
        try audio?.push(nil, emit: writeAudio)
        try output.finish()
        let duration = lastTick < 0 ? 0 : Double(lastTick + lastDuration) / ticksPerSecond
        return Result(frames: frames, duration: duration, poster: picker)
    }

    private func writeVideo(_ packet: UnsafeMutablePointer<AVPacket>) throws(PushPrepError) {
        if packet.pointee.duration <= 0 {
            packet.pointee.duration = durations[packet.pointee.pts] ?? 1
        }
        durations[packet.pointee.pts] = nil
        packet.pointee.stream_index = videoStream.pointee.index
        av_packet_rescale_ts(packet, encoder.context.pointee.time_base, videoStream.pointee.time_base)
        try output.write(packet)
    }

    private func writeAudio(_ packet: UnsafeMutablePointer<AVPacket>) throws(PushPrepError) {
        guard let audio, let audioStream else { return }
        packet.pointee.stream_index = audioStream.pointee.index
        av_packet_rescale_ts(packet, audio.encoder.pointee.time_base, audioStream.pointee.time_base)
        try output.write(packet)
    }
}
