import ArgumentParser
import PushPrepCommandLine
import PushPrepCore
import PushPrepRemote

/// How `http://` and `https://` inputs are fetched, shared by `process` and `inspect`.
struct RemoteOptions: ParsableArguments {
    @Option(help: "Refuse downloads larger than this (default 200000000 for video, 50000000 otherwise).")
    var maxDownloadBytes: Int?

    @Flag(help: "Allow URLs on loopback, private networks and CGNAT (link-local and reserved stay blocked).")
    var allowPrivateNetworks = false

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp("Allow this URL host whatever it resolves to (repeatable).", valueName: "host"))
    var allowHosts: [String] = []

    @Option(help: "Seconds to open a connection, per try.")
    var connectTimeout: Double = 10

    @Option(help: "Seconds of silence allowed while downloading.")
    var readTimeout: Double = 30

    @Option(help: "Seconds for the whole fetch of one URL, redirects and retries included.")
    var fetchTimeout: Double = 120

    func validate() throws {
        _ = try timeouts
        try asUsageError { try settings.validate() }
    }

    /// The fetch timeouts, each 0.001...86400 seconds; a usage error otherwise.
    var timeouts: (connect: Duration, read: Duration, total: Duration) {
        get throws {
            let range = 0.001...86_400.0
            return (
                try connectTimeout.seconds(option: "--connect-timeout", in: range),
                try readTimeout.seconds(option: "--read-timeout", in: range),
                try fetchTimeout.seconds(option: "--fetch-timeout", in: range)
            )
        }
    }

    /// The settings; `validate()` has checked the timeouts.
    var settings: RemoteSettings {
        var settings = RemoteSettings()
        settings.maxDownloadBytes = maxDownloadBytes
        settings.allowPrivateNetworks = allowPrivateNetworks
        settings.allowedHosts = Set(allowHosts)
        if let (connect, read, total) = try? timeouts {
            settings.connectTimeout = connect
            settings.readTimeout = read
            settings.totalTimeout = total
        }
        return settings
    }
}
