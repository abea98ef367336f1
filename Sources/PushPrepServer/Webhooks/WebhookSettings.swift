package import PushPrepCore
import PushPrepQueue
package import PushPrepRemote

/// How webhooks are sent: the address policy (the same as for remote sources), timeouts, the
/// retry schedule and how much the dispatcher does at once.
package struct WebhookSettings: Sendable {
    /// Allow callback URLs on loopback, private networks and CGNAT (`--allow-private-networks`).
    package var allowPrivateNetworks = false
    /// How the job in an event is shown: the API's rendering (signed attachment URLs), or nil
    /// for the job as stored.
    package var renderer: JobRenderer?
    /// Hosts that may resolve to any address (`--allow-host`).
    package var allowedHosts: Set<String> = []
    /// Time allowed to open one connection (TCP and TLS), within ``timeout``.
    package var connectTimeout: Duration = .seconds(10)
    /// The whole send, one deadline: resolving the name, connecting (to every address tried),
    /// the request and the response's status line. The body of the response is never read, so a
    /// receiver that trickles it holds nothing. A receiver should answer at once and do its work
    /// later.
    package var timeout: Duration = .seconds(10)
    /// When failed attempts are tried again.
    package var schedule = WebhookRetrySchedule.standard
    /// Deliveries sent at once by one dispatcher.
    package var concurrency = 8
    /// Deliveries sent at once by one dispatcher to one receiver host (as
    /// ``WebhookDelivery/receiverHost`` names it; receivers on several ports of one host share
    /// it), so that receivers that are slow, or hang until the deadline, hold at most this many
    /// of the ``concurrency`` slots and the others stay free for every other receiver. Half the
    /// default concurrency: one slow host, or two, cannot stop deliveries elsewhere, and a setup
    /// whose every webhook goes to one receiver (`--webhook-url`) still sends four at once.
    /// Taken as at most ``concurrency``.
    package var concurrencyPerHost = 4
    /// Deliveries claimed at once.
    package var batchSize = 32
    /// The wait before looking again when no delivery is due.
    package var idleInterval: Duration = .seconds(1)

    /// The defaults: nothing private is reachable.
    package init() {}

    /// The defaults with the address policy of the remote sources (`--allow-private-networks`,
    /// `--allow-host`): how `serve` sends webhooks, and how it checks a `callback_url` when a
    /// job is submitted.
    package init(addressPolicyOf remote: RemoteSettings) {
        allowPrivateNetworks = remote.allowPrivateNetworks
        allowedHosts = remote.allowedHosts
    }

    /// How long a claim holds a delivery, derived from the send's deadline so that a claim always
    /// outlives its send and only a dispatcher that died leaves one to be claimed again: the
    /// dispatcher starts a send at most ``timeout`` after claiming it (or not at all), the send
    /// ends by its deadline ``timeout`` later, and ``recordingAllowance`` remains for recording
    /// the outcome.
    package var lease: Duration { timeout * 2 + Self.recordingAllowance }

    /// The part of a claim left for recording a send's outcome in the queue once the send's
    /// deadline has passed.
    package static let recordingAllowance: Duration = .seconds(30)

    /// The longest wait between claiming a delivery and starting its send: a send that could not
    /// start by then is not started, so that it cannot run past the claim (the delivery is sent
    /// by the next claim, after this one's lease).
    package var startAllowance: Duration { timeout }

    /// The per-host bound in effect: ``concurrencyPerHost``, at most ``concurrency``.
    var slotsPerHost: Int { min(concurrencyPerHost, concurrency) }

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

    /// Why a webhook to `callback` would be refused before connecting (`blocked_address`: its
    /// host is, or resolves to, an address this policy refuses), or nil. The sender's own
    /// check, run ahead of time: when a job names the URL, and for `--webhook-url` at start-up.
    /// A host named with `--allow-host` is not resolved (any address is allowed). A name that
    /// does not resolve within ``submitResolveTimeout`` is not refused (DNS may come back; each
    /// delivery checks again), nor is text that is no URL (the caller's syntax check says what
    /// is wrong with it).
    package func refusal(ofCallback callback: String) async -> PushPrepError? {
        guard let url = try? RemoteURL(callback), !remoteSettings.isAllowedHost(url.host) else { return nil }
        let check = AddressCheck(settings: remoteSettings)
        let deadline = ContinuousClock.now + min(connectTimeout, Self.submitResolveTimeout)
        let resolved = await WebhookSender.value(before: deadline) { try? await check.resolve(url) }
        guard let addresses = resolved ?? nil else { return nil }
        return check.refusal(of: url, addresses: addresses)?.error
    }

    /// The longest a submit waits for a callback URL's name to resolve: a slow resolver delays
    /// the request by no more than this, and the delivery checks again anyway.
    package static let submitResolveTimeout: Duration = .seconds(2)

    /// Checks ranges (`invalid_settings`).
    package func validate() throws(PushPrepError) {
        func require(_ condition: Bool, _ message: String) throws(PushPrepError) {
            if !condition { throw PushPrepError(.invalidSettings, message) }
        }
        try require(connectTimeout > .zero, "the webhook connect timeout must be positive")
        try require(timeout > .zero, "the webhook timeout must be positive")
        try require(!schedule.delays.contains { $0 < .zero }, "webhook retry delays must not be negative")
        try require(schedule.maxAttempts <= 100, "at most 100 webhook attempts")
        try require((1...1000).contains(concurrency), "webhook concurrency must be in 1...1000, got \(concurrency)")
        try require(
            (1...1000).contains(concurrencyPerHost),
            "webhook concurrency per host must be in 1...1000, got \(concurrencyPerHost)")
        try require((1...1000).contains(batchSize), "the webhook batch size must be in 1...1000, got \(batchSize)")
        try require(idleInterval > .zero, "the webhook idle interval must be positive")
        try remoteSettings.validate()
    }
}
