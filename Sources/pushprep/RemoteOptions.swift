import ArgumentParser
import PushPrep

/// How `http://` and `https://` inputs are fetched, shared by `process` and `inspect`.
struct RemoteOptions: ParsableArguments {
    @Option(
        name: .customLong("max-download-bytes"),
        help: "Refuse downloads larger than this (default 200000000 for video, 50000000 otherwise).")
    var maxDownloadBytes: Int?

    @Flag(
        name: .customLong("allow-private-networks"),
        help: "Allow URLs on loopback, private networks and CGNAT (link-local and reserved stay blocked).")
    var allowPrivateNetworks = false

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp("Allow this URL host whatever it resolves to (repeatable).", valueName: "host"))
    var allowHosts: [String] = []

    @Option(name: .customLong("connect-timeout"), help: "Seconds to open a connection, per try.")
    var connectTimeout: Double = 10

    @Option(name: .customLong("read-timeout"), help: "Seconds of silence allowed while downloading.")
    var readTimeout: Double = 30

    @Option(
        name: .customLong("fetch-timeout"),
        help: "Seconds for the whole fetch of one URL, redirects and retries included.")
    var fetchTimeout: Double = 120

    func validate() throws {
        for (name, value) in [("connect", connectTimeout), ("read", readTimeout), ("fetch", fetchTimeout)] {
            guard value.isFinite, value > 0, value <= 86_400 else {
                throw ValidationError("--\(name)-timeout must be between 0 and 86400 seconds, got \(value)")
            }
        }
        do {
            try settings.validate()
        } catch {
            throw ValidationError(error.message)
        }
    }

    var settings: RemoteSettings {
        var settings = RemoteSettings()
        settings.maxDownloadBytes = maxDownloadBytes
        settings.allowPrivateNetworks = allowPrivateNetworks
        settings.allowedHosts = Set(allowHosts)
        settings.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        settings.readTimeout = .milliseconds(Int64(readTimeout * 1000))
        settings.totalTimeout = .milliseconds(Int64(fetchTimeout * 1000))
        return settings
    }
}
