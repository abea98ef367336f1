import ArgumentParser
import Logging
import PushPrep

/// The options that decide how images are processed, shared by `process` and `inspect`.
struct ImageOptions: ParsableArguments {
    @Option(name: .long, help: "Target image width in pixels; never upscaled.")
    var width: Int = ProcessingSettings().width

    @Option(name: .long, help: "JPEG quality to start from (1-100).")
    var quality: Int = ProcessingSettings().quality

    @Option(name: .customLong("image-max-bytes"), help: "Largest image output in bytes (at most Apple's 10000000).")
    var imageMaxBytes: Int = ProcessingSettings().imageMaxBytes

    @Option(name: .customLong("max-pixels"), help: "Refuse images with more pixels than this, all frames counted.")
    var maxPixels: Int = ProcessingSettings().maxPixels

    @Option(name: .customLong("max-input-bytes"), help: "Refuse inputs larger than this many bytes.")
    var maxInputBytes: Int = ProcessingSettings().maxInputBytes

    var settings: ProcessingSettings {
        var settings = ProcessingSettings()
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
        let level = Logger.Level(rawValue: logLevel) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "pushprep")
    }
}
