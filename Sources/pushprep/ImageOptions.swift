public import ArgumentParser
import PushPrepCore

/// The options that decide how inputs are processed, shared by `process`, `inspect`, `enqueue`
/// and `preflight --fix`. Each option's name, help and default are its setting's declaration
/// (``ProcessingSettings/Declared``); ArgumentParser needs a property for each, and
/// ``settings`` copies every one (the CLI tests check that none is missed).
struct ImageOptions: ParsableArguments {
    private typealias Declared = ProcessingSettings.Declared

    @Option(name: Declared.width.name, help: Declared.width.argumentHelp)
    var width: Int = Declared.width.defaultValue

    @Option(name: Declared.quality.name, help: Declared.quality.argumentHelp)
    var quality: Int = Declared.quality.defaultValue

    @Option(name: Declared.imageMaxBytes.name, help: Declared.imageMaxBytes.argumentHelp)
    var imageMaxBytes: Int = Declared.imageMaxBytes.defaultValue

    @Option(name: Declared.maxPixels.name, help: Declared.maxPixels.argumentHelp)
    var maxPixels: Int = Declared.maxPixels.defaultValue

    @Option(name: Declared.maxInputBytes.name, help: Declared.maxInputBytes.argumentHelp)
    var maxInputBytes: Int = Declared.maxInputBytes.defaultValue

    @Option(name: Declared.videoStart.name, help: Declared.videoStart.argumentHelp)
    var videoStart: Double = Declared.videoStart.defaultValue

    @Option(name: Declared.videoSeconds.name, help: Declared.videoSeconds.argumentHelp)
    var videoSeconds: Double = Declared.videoSeconds.defaultValue

    @Option(name: Declared.videoWidth.name, help: Declared.videoWidth.argumentHelp)
    var videoWidth: Int = Declared.videoWidth.defaultValue

    @Option(name: Declared.videoMaxBytes.name, help: Declared.videoMaxBytes.argumentHelp)
    var videoMaxBytes: Int = Declared.videoMaxBytes.defaultValue

    @Option(name: Declared.audioSeconds.name, help: Declared.audioSeconds.argumentHelp)
    var audioSeconds: Double = Declared.audioSeconds.defaultValue

    @Option(name: Declared.audioMaxBytes.name, help: Declared.audioMaxBytes.argumentHelp)
    var audioMaxBytes: Int = Declared.audioMaxBytes.defaultValue

    @Option(name: Declared.timeout.name, help: Declared.timeout.argumentHelp)
    var timeout: Double = Declared.timeout.defaultValue

    @Option(name: Declared.gifAsVideo.name, help: Declared.gifAsVideo.argumentHelp)
    var gifAsVideo: ProcessingSettings.GIFAsVideo = Declared.gifAsVideo.defaultValue

    @Option(name: Declared.gifMaxMemory.name, help: Declared.gifMaxMemory.argumentHelp)
    var gifMaxMemory: Int = Declared.gifMaxMemory.defaultValue

    @Option(name: Declared.platforms.name, help: Declared.platforms.argumentHelp)
    var platforms: PlatformSet = Declared.platforms.defaultValue

    @Option(name: Declared.androidWidth.name, help: Declared.androidWidth.argumentHelp)
    var androidWidth: Int = Declared.androidWidth.defaultValue

    @Option(name: Declared.androidMaxBytes.name, help: Declared.androidMaxBytes.argumentHelp)
    var androidMaxBytes: Int = Declared.androidMaxBytes.defaultValue

    @Option(name: Declared.webWidth.name, help: Declared.webWidth.argumentHelp)
    var webWidth: Int = Declared.webWidth.defaultValue

    @Option(name: Declared.crop.name, help: Declared.crop.argumentHelp)
    var crop: CropStrategy = Declared.crop.defaultValue

    @Option(name: Declared.focus.name, help: Declared.focus.argumentHelp)
    var focus: FocalPoint? = Declared.focus.defaultValue

    /// The options as settings; `jobs` and `baseURL` are the commands' own.
    var settings: ProcessingSettings {
        var settings = ProcessingSettings()
        settings.width = width
        settings.quality = quality
        settings.imageMaxBytes = imageMaxBytes
        settings.maxPixels = maxPixels
        settings.maxInputBytes = maxInputBytes
        settings.videoStart = videoStart
        settings.videoSeconds = videoSeconds
        settings.videoWidth = videoWidth
        settings.videoMaxBytes = videoMaxBytes
        settings.audioSeconds = audioSeconds
        settings.audioMaxBytes = audioMaxBytes
        settings.timeout = timeout
        settings.gifAsVideo = gifAsVideo
        settings.gifMaxMemory = gifMaxMemory
        settings.platforms = platforms
        settings.androidWidth = androidWidth
        settings.androidMaxBytes = androidMaxBytes
        settings.webWidth = webWidth
        settings.crop = crop
        settings.focus = focus
        return settings
    }
}

extension ProcessingSettings.Setting {
    /// `--option`, as declared.
    var name: NameSpecification { .customLong(option) }

    /// The declared help: what the setting does and what it accepts.
    var argumentHelp: ArgumentHelp { ArgumentHelp(help) }

    /// A command's own words for what the setting does, then what it accepts, as declared.
    func argumentHelp(_ summary: String) -> ArgumentHelp { ArgumentHelp(help(summary: summary)) }
}

extension ProcessingSettings.GIFAsVideo: ExpressibleByArgument {}
extension CropStrategy: ExpressibleByArgument {}

extension PlatformSet: ExpressibleByArgument {
    init?(argument: String) { self.init(text: argument) }
    var defaultValueDescription: String { description }
    static var defaultCompletionKind: CompletionKind { .list(["ios", "android", "web"]) }
}

extension FocalPoint: ExpressibleByArgument {
    init?(argument: String) { self.init(text: argument) }
}
