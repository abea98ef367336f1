package import PushPrepCore

/// Settings the tests share.
package enum SettingsFixtures {
    /// Settings unlike the defaults in every field, valid.
    package static var changed: ProcessingSettings {
        var settings = ProcessingSettings()
        settings.width = 1179
        settings.quality = 70
        settings.imageMaxBytes = 2_000_000
        settings.maxPixels = 50_000_000
        settings.maxInputBytes = 1_000_000
        settings.jobs = 13
        settings.baseURL = "https://cdn.example.com/push"
        settings.videoStart = 2.5
        settings.videoSeconds = 10
        settings.videoWidth = 640
        settings.videoMaxBytes = 20_000_000
        settings.audioSeconds = 12.25
        settings.audioMaxBytes = 1_000_000
        settings.timeout = 30
        settings.gifAsVideo = .never
        settings.gifMaxMemory = 6_000_000
        settings.platforms = PlatformSet([.ios, .android, .web])
        settings.androidWidth = 720
        settings.androidMaxBytes = 500_000
        settings.webWidth = 1000
        settings.crop = .centre
        settings.focus = FocalPoint(x: 0.25, y: 0.75)
        return settings
    }
}
