public import PushPrepCore

/// How `http://` and `https://` sources are fetched: byte caps, the address policy and its
/// opt-ins, timeouts, retries and concurrency. None of this changes an output's bytes, so none
/// of it is part of the attachment ids.
public struct RemoteSettings: Sendable, Equatable {
    /// The download cap in bytes for every source (`--max-download-bytes`); when nil, 200,000,000
    /// for video sources and 50,000,000 for the rest (the kind is known from the first bytes).
    public var maxDownloadBytes: Int?
    /// Allow loopback, private networks and CGNAT (`--allow-private-networks`).
    public var allowPrivateNetworks = false
    /// Hosts that may resolve to any address (`--allow-host`), compared as written in the URL,
    /// case-insensitively. A redirect to another host is checked like any other.
    public var allowedHosts: Set<String> = []
    /// Time allowed to open a connection (TCP and TLS), per attempt.
    public var connectTimeout: Duration = .seconds(10)
    /// Longest silence allowed while waiting for the response or its next bytes.
    public var readTimeout: Duration = .seconds(30)
    /// The whole fetch of one source, redirects, retries and waits included.
    public var totalTimeout: Duration = .seconds(120)
    /// Tries per request for transient failures (connection errors, timeouts, 429, 502, 503, 504).
    public var maxTries = 3
    /// Redirects followed per source; each hop is checked like the first.
    public var maxRedirects = 5
    /// Fetches running at once, overall.
    public var maxConcurrentFetches = 16
    /// Fetches running at once against one host.
    public var maxConcurrentFetchesPerHost = 6

    /// The default cap for video sources.
    public static let defaultVideoDownloadBytes = 200_000_000
    /// The default cap for every other source.
    public static let defaultDownloadBytes = 50_000_000

    /// The defaults: nothing private is reachable.
    public init() {}

    /// The cap for a source of this kind.
    public func downloadCap(for kind: MediaKind?) -> Int {
        if let maxDownloadBytes { return maxDownloadBytes }
        return kind == .video ? Self.defaultVideoDownloadBytes : Self.defaultDownloadBytes
    }

    /// The largest cap of any kind: a `Content-Length` above it is refused before any byte.
    var largestDownloadCap: Int { maxDownloadBytes ?? Self.defaultVideoDownloadBytes }

    /// The address policy these settings ask for.
    var addressPolicy: AddressPolicy { AddressPolicy(allowPrivateNetworks: allowPrivateNetworks) }

    /// Whether `host` (as written in a URL) was named with `--allow-host`.
    package func isAllowedHost(_ host: String) -> Bool {
        let host = Self.normalizedHost(host)
        return allowedHosts.contains { Self.normalizedHost($0) == host }
    }

    /// The URL's canonical spelling (``RemoteURL/asciiHost(_:)``: lowercase ASCII, IDNA for
    /// international names, no IPv6 brackets) without a trailing dot, so `--allow-host bücher.example`
    /// matches the punycode name the request uses.
    static func normalizedHost(_ host: String) -> String {
        var host = RemoteURL.asciiHost(host) ?? host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// Checks ranges; the CLI reports a failure as a usage error.
    public func validate() throws(PushPrepError) {
        func require(_ condition: Bool, _ message: String) throws(PushPrepError) {
            if !condition { throw PushPrepError(.invalidSettings, message) }
        }
        if let maxDownloadBytes {
            try require(maxDownloadBytes >= 1, "--max-download-bytes must be positive, got \(maxDownloadBytes)")
        }
        try require(connectTimeout > .zero, "--connect-timeout must be positive")
        try require(readTimeout > .zero, "--read-timeout must be positive")
        try require(totalTimeout > .zero, "--fetch-timeout must be positive")
        try require((1...10).contains(maxTries), "tries must be between 1 and 10, got \(maxTries)")
        try require((0...20).contains(maxRedirects), "redirects must be between 0 and 20, got \(maxRedirects)")
        try require(maxConcurrentFetches >= 1, "concurrent fetches must be positive")
        try require(maxConcurrentFetchesPerHost >= 1, "concurrent fetches per host must be positive")
        for host in allowedHosts {
            try require(
                !host.isEmpty && !host.contains("/") && !host.contains(":") || IPAddress(host) != nil,
                "--allow-host takes a host name or an IP address, got \(host)")
        }
    }
}
