public import ArgumentParser
import Logging
import PushPrep

/// The options that decide how inputs are processed, shared by `process` and `inspect`.
struct ImageOptions: ParsableArguments {
    @Option(name: .long, help: "Target image width in pixels; never upscaled.")
    var width: Int = ProcessingSettings().width

    @Option(name: .long, help: "JPEG quality to start from (1-100).")
    var quality: Int = ProcessingSettings().quality

    @Option(name: .customLong("image-max-bytes"), help: "Largest image output in bytes (at most Apple's 10000000).")
    var imageMaxBytes: Int = ProcessingSettings().imageMaxBytes

    @Option(
        name: .customLong("max-pixels"),
        help: "Refuse images with more pixels than this, all frames counted (at most 1000000000).")
    var maxPixels: Int = ProcessingSettings().maxPixels

    @Option(
        name: .customLong("max-input-bytes"), help: "Refuse inputs larger than this many bytes (at most 10000000000).")
    var maxInputBytes: Int = ProcessingSettings().maxInputBytes

    @Option(name: .customLong("video-start"), help: "Where video previews start, in seconds (0...86400).")
    var videoStart: Double = ProcessingSettings().videoStart

    @Option(name: .customLong("video-seconds"), help: "Length of video previews in seconds (whole clip if shorter).")
    var videoSeconds: Double = ProcessingSettings().videoSeconds

    @Option(name: .customLong("video-width"), help: "Width of transcoded video in pixels; never upscaled.")
    var videoWidth: Int = ProcessingSettings().videoWidth

    @Option(name: .customLong("video-max-bytes"), help: "Largest video output in bytes (at most Apple's 50000000).")
    var videoMaxBytes: Int = ProcessingSettings().videoMaxBytes

    @Option(name: .customLong("audio-seconds"), help: "Length of audio previews in seconds.")
    var audioSeconds: Double = ProcessingSettings().audioSeconds

    @Option(name: .customLong("audio-max-bytes"), help: "Largest audio output in bytes (at most Apple's 5000000).")
    var audioMaxBytes: Int = ProcessingSettings().audioMaxBytes

    @Option(name: .long, help: "Deadline for processing one video or audio input, in seconds.")
    var timeout: Double = ProcessingSettings().timeout

    @Option(
        name: .customLong("gif-as-video"),
        help: "When an animated GIF/WebP becomes an MP4: auto (when it cannot fit as an image), always, never.")
    var gifAsVideo: ProcessingSettings.GIFAsVideo = .auto

    @Option(
        name: .customLong("gif-max-memory"),
        help: "Largest decoded size of an animated GIF output in bytes, width x height x 4 x frames (at most 24000000)."
    )
    var gifMaxMemory: Int = ProcessingSettings().gifMaxMemory

    var settings: ProcessingSettings {
        var settings = ProcessingSettings()
        settings.videoStart = videoStart
        settings.videoSeconds = videoSeconds
        settings.videoWidth = videoWidth
        settings.videoMaxBytes = videoMaxBytes
        settings.audioSeconds = audioSeconds
        settings.audioMaxBytes = audioMaxBytes
        settings.timeout = timeout
        settings.gifAsVideo = gifAsVideo
        settings.gifMaxMemory = gifMaxMemory
        settings.width = width
        settings.quality = quality
        settings.imageMaxBytes = imageMaxBytes
        settings.maxPixels = maxPixels
        settings.maxInputBytes = maxInputBytes
        return settings
    }
}

/// `--log-level`, shared by every command.
struct LoggingOptions: ParsableArguments {
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func makeLogger() -> Logger {
        Self.makeLogger(level: Logger.Level(rawValue: logLevel) ?? .warning)
    }

    /// Sends every log line at `level` or above to standard error.
    static func makeLogger(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "pushprep")
    }
}

extension ProcessingSettings.GIFAsVideo: ExpressibleByArgument {}
