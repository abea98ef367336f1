public import PushPrep
import PushPrepQueue

/// How webhooks are sent: the address policy (the same as for remote sources), timeouts, the
/// retry schedule and how much the dispatcher does at once.
public struct WebhookSettings: Sendable {
    /// Allow callback URLs on loopback, private networks and CGNAT (`--allow-private-networks`).
    public var allowPrivateNetworks = false
    /// How the job in an event is shown: the API's rendering (signed attachment URLs), or nil
    /// for the job as stored.
    public var renderer: JobRenderer?
    /// Hosts that may resolve to any address (`--allow-host`).
    public var allowedHosts: Set<String> = []
    /// Time allowed to open a connection (TCP and TLS).
    public var connectTimeout: Duration = .seconds(10)
    /// The whole request, from connecting to the end of the response: a receiver should answer
    /// at once and do its work later.
    public var timeout: Duration = .seconds(10)
    /// The most of a response body read (then dropped): only the status matters.
    public var maxResponseBytes = 4096
    /// When failed attempts are tried again.
    public var schedule = WebhookRetrySchedule.standard
    /// Deliveries sent at once by one dispatcher.
    public var concurrency = 8
    /// Deliveries claimed at once.
    public var batchSize = 32
    /// The wait before looking again when no delivery is due.
    public var idleInterval: Duration = .seconds(1)

    /// The defaults: nothing private is reachable.
    public init() {}

    /// How long a claim holds a delivery: twice the longest send, so a claim outlives its send
    /// and only a dispatcher that died leaves one to be claimed again.
    public var lease: Duration { (connectTimeout + timeout) * 2 }

    /// The remote sources' settings with this address policy, for ``AddressCheck``.
    var remoteSettings: RemoteSettings {
        var settings = RemoteSettings()
        settings.allowPrivateNetworks = allowPrivateNetworks
        settings.allowedHosts = allowedHosts
        settings.connectTimeout = connectTimeout
        settings.readTimeout = timeout
        settings.totalTimeout = timeout
        return settings
    }

    /// Checks ranges (`invalid_settings`).
    public func validate() throws(PushPrepError) {
        func require(_ condition: Bool, _ message: String) throws(PushPrepError) {
            if !condition { throw PushPrepError(.invalidSettings, message) }
        }
        try require(connectTimeout > .zero, "the webhook connect timeout must be positive")
        try require(timeout > .zero, "the webhook timeout must be positive")
        try require((0...1 << 20).contains(maxResponseBytes), "the webhook response cap must be in 0...1048576")
        try require(!schedule.delays.contains { $0 < .zero }, "webhook retry delays must not be negative")
        try require(schedule.maxAttempts <= 100, "at most 100 webhook attempts")
        try require((1...1000).contains(concurrency), "webhook concurrency must be in 1...1000, got \(concurrency)")
        try require((1...1000).contains(batchSize), "the webhook batch size must be in 1...1000, got \(batchSize)")
        try require(idleInterval > .zero, "the webhook idle interval must be positive")
        try remoteSettings.validate()
    }
}
