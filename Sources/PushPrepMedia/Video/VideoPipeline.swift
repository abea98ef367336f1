internal import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

/// Video → preview MP4 for a notification: a ``VideoPlan`` made from the headers, then run: the
/// source's streams copied as they are when iOS already plays them (``RemuxStep``), else a
/// transcode (``VideoTranscodeStep``); re-encoded at a lower bitrate until the file fits the byte
/// limit; plus a poster (``PosterStep``).
///
/// Runs synchronously on the calling thread, which must be one that may block. Never leaves a
/// partial file at `outputPath` when it fails.
package enum VideoPipeline {
    /// Smallest video bitrate worth trying before giving up with `cannot_fit`.
    static let minimumBitRate = 64_000
    /// Bitrate of the AAC track of transcoded movies.
    static let audioBitRate = 128_000
    /// Re-encodes at a lower bitrate, at most.
    static let maxFitAttempts = 4

    /// Writes the preview MP4 to `outputPath` (a temporary name the caller renames when this
    /// returns). `admit` is given the plan's memory estimate before anything is decoded, and
    /// may wait (a memory budget).
    package static func process(
        path: String, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline,
        admit: (MemoryEstimate) throws(PushPrepError) -> Void = { _ in }
    ) throws(PushPrepError) -> ProcessedVideo {
        do {
            return try run(path: path, settings: settings, outputPath: outputPath, deadline: deadline, admit: admit)
        } catch {
            try? FileManager.default.removeItem(atPath: outputPath)
            throw error
        }
    }

    private static func run(
        path: String, settings: ProcessingSettings, outputPath: String, deadline: MediaDeadline,
        admit: (MemoryEstimate) throws(PushPrepError) -> Void
    ) throws(PushPrepError) -> ProcessedVideo {
        try deadline.check("opening the video")
        let input = try open(path, maxPixels: settings.maxPixels, deadline: deadline)
        let probe = MediaProbe(input)
        let plan = try VideoPlan(input: input, probe: probe, settings: settings)
        try admit(plan.memory)
        try deadline.check("waiting for memory")
        return try run(plan, path: path, input: input, probe: probe, outputPath: outputPath, deadline: deadline)
    }

    /// Carries out `plan` for the movie `input` (opened from `path`, not yet read): the copy
    /// first when the plan says so, the transcode when it does not or when the copy fails or is
    /// over the budget.
    private static func run(
        _ plan: VideoPlan, path: String, input: MediaInput, probe: MediaProbe, outputPath: String,
        deadline: MediaDeadline
    ) throws(PushPrepError) -> ProcessedVideo {
        let window = plan.window
        var warnings = plan.warnings
        let limit = plan.ladder.limit

        // Fast path.
        var unread: MediaInput? = input
        if plan.copiesStreams {
            unread = nil
            do {
                let copied = try RemuxStep.run(
                    input: input, probe: probe, start: window.start, seconds: window.seconds, origin: window.origin,
                    expectedEnd: window.sourceDuration, maxPixels: plan.maxPixels, outputPath: outputPath,
                    deadline: deadline)
                let bytes = try fileSize(outputPath)
                if bytes <= limit {
                    let poster = try copied.poster.best.map { (best) throws(PushPrepError) in
                        try PosterStep.encode(
                            best.frame, rotation: plan.rotation, time: best.time, quality: plan.posterQuality)
                    }
                    return ProcessedVideo(
                        width: plan.sourceWidth, height: plan.sourceHeight, duration: copied.duration,
                        frames: copied.frames, bytes: bytes, input: probe,
                        poster: poster.map { ($0.jpeg, $0.width, $0.height) }, thumbnailTime: poster?.time ?? 0,
                        operations: ["remux"] + copied.operations, warnings: warnings + copied.warnings, plan: plan)
                }
                warnings.append(ProcessingWarning.copyTooLarge(bytes: bytes, limit: limit))
            } catch {
                // A damaged or hostile file fails the same way when transcoded; anything else
                // (a seek the demuxer refuses, a stream the muxer cannot copy) is worth a transcode.
                if error.stopsProcessing || [.corruptInput, .tooManyPixels].contains(error.code) { throw error }
                warnings.append(ProcessingWarning.copyFailed(reason: error.message))
            }
            try? FileManager.default.removeItem(atPath: outputPath)
        }

        // Transcode.
        let transcode = plan.transcode
        var operations = ["transcode"] + transcode.operations
        var fitted = try encodeToFit(
            plan.ladder, operations: &operations, outputPath: outputPath, deadline: deadline
        ) { (rate) throws(PushPrepError) -> (Int, Double, Int, PosterStep.Picker, [ProcessingWarning]) in
            let step = VideoTranscodeStep.Plan(
                start: window.start, seconds: window.seconds, origin: window.origin,
                expectedEnd: window.sourceDuration, width: transcode.width, height: transcode.height,
                frameRate: transcode.frameRate.rational, rate: rate, maxPixels: plan.maxPixels,
                posterTimes: transcode.posterTimes)
            let opened = unread
            unread = nil
            let out = try VideoTranscodeStep.run(
                path: path, opened: opened, plan: step, outputPath: outputPath, deadline: deadline)
            return (out.frames, out.duration, try fileSize(outputPath), out.poster, out.warnings)
        }
        warnings += fitted.warnings
        let poster = try fitted.poster.best.map { (best) throws(PushPrepError) in
            try PosterStep.encode(best.frame, rotation: plan.rotation, time: best.time, quality: plan.posterQuality)
        }
        fitted.poster = PosterStep.Picker(times: [])
        return ProcessedVideo(
            width: transcode.displayWidth, height: transcode.displayHeight, duration: fitted.duration,
            frames: fitted.frames, bytes: fitted.bytes, input: probe,
            poster: poster.map { ($0.jpeg, $0.width, $0.height) }, thumbnailTime: poster?.time ?? 0,
            operations: operations, warnings: warnings, plan: plan)
    }

    /// The result of one encode that fits.
    struct Fitted {
        let frames: Int
        let duration: Double
        let bytes: Int
        var poster: PosterStep.Picker
        let warnings: [ProcessingWarning]
    }

    /// Walks `ladder`: encodes at constant quality, then, while the file is over the limit,
    /// again at a bitrate computed from the duration (and corrected by how far the last attempt
    /// missed), until it fits or the bitrate is too low to be worth it (`cannot_fit`).
    static func encodeToFit(
        _ ladder: VideoFitLadder, operations: inout [String], outputPath: String, deadline: MediaDeadline,
        encode: (VideoEncoder.RateControl) throws(PushPrepError) -> (
            Int, Double, Int, PosterStep.Picker, [ProcessingWarning]
        )
    ) throws(PushPrepError) -> Fitted {
        let limit = ladder.limit
        var rate = ladder.first
        var lastBytes = 0
        for _ in 0...ladder.retries {
            try deadline.check("encoding the video")
            let (frames, seconds, bytes, poster, warnings) = try encode(rate)
            if bytes <= limit {
                if case .bitRate(let bitRate) = rate {
                    operations.append("re-encoded at \(bitRate / 1000) kbit/s to fit")
                }
                return Fitted(frames: frames, duration: seconds, bytes: bytes, poster: poster, warnings: warnings)
            }
            lastBytes = bytes
            // The budget, less about 2 % for the container, less the audio track.
            let length = max(seconds, ladder.duration, 0.1)
            var target = Int(Double(limit) * 8 * 0.98 / length) - ladder.audioReserve
            if case .bitRate(let previous) = rate {
                target = min(target, Int(Double(previous) * Double(limit) / Double(bytes) * 0.95))
            }
            target = min(target, VideoEncoder.maxLevelBitRate)
            guard target >= ladder.minimumBitRate else { break }
            rate = .bitRate(target / 1000 * 1000)
        }
        try? FileManager.default.removeItem(atPath: outputPath)
        throw PushPrepError(
            .cannotFit,
            "the preview is still \(lastBytes) bytes at the lowest bitrate tried, more than \(limit) (--video-max-bytes)"
        )
    }

    /// Opens a movie, for `process` and `inspect` alike. A file that starts like an MP4 (an `ftyp`
    /// box) but does not open is damaged (a truncated download without its `moov`), not of
    /// another type.
    package static func open(_ path: String, maxPixels: Int, deadline: MediaDeadline) throws(PushPrepError)
        -> MediaInput
    {
        do {
            return try MediaInput(path: path, maxPixels: maxPixels, deadline: deadline)
        } catch {
            guard error.code == .unsupportedType, let handle = FileHandle(forReadingAtPath: path) else { throw error }
            defer { try? handle.close() }
            let head = [UInt8]((try? handle.read(upToCount: 12)) ?? Data())
            if head.count >= 8, Array(head[4..<8]) == Array("ftyp".utf8) {
                throw PushPrepError(.corruptInput, "a damaged MP4/MOV: \(error.message)")
            }
            throw error
        }
    }

    static func fileSize(_ path: String) throws(PushPrepError) -> Int {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw PushPrepError(.ioError, "cannot read the size of \(path): \(error.localizedDescription)")
        }
    }
}
