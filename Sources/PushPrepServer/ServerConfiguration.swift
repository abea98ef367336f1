import Foundation
package import PushPrepCore
package import PushPrepPayload
package import PushPrepRemote

/// What `pushprep serve` was told: where it listens, what it accepts, and the limits that keep
/// it standing.
package struct ServerConfiguration: Sendable {
    package var host: String
    /// 0 picks a free port (the tests do); the bound port is reported by `onListening`.
    package var port: Int
    /// The keys of `--api-keys-file`; nil: no authentication, loopback only.
    package var apiKeys: APIKeyStore?
    /// Requests a second per key (token bucket), nil for no limit.
    package var rateLimit: Double?
    /// The bucket's size: the burst a key may send at once.
    package var rateBurst: Double
    /// Refuse new jobs (429) while more than this many are queued.
    package var maxQueued: Int
    /// The largest JSON request body.
    package var maxBodyBytes: Int
    /// The largest upload (`POST /v1/uploads`).
    package var maxUploadBytes: Int
    /// The longest URL, path and query.
    package var maxURLBytes: Int
    /// Sources in one `POST /v1/jobs`.
    package var maxSourcesPerRequest: Int
    /// Sources in one `POST /v1/process`.
    package var maxProcessSources: Int
    /// The longest `?wait=` and `?timeout=`, in seconds.
    package var maxWaitSeconds: Double
    /// The longest a request's handler may take, reading the request's body included (`408`
    /// past it): at least the longest long poll.
    package var requestTimeoutSeconds: Double = 300
    /// How long an `Idempotency-Key` is remembered.
    package var idempotencyRetention: Duration
    /// How clients reach this server (`--public-url`); nil: the address it binds.
    package var publicURL: String?
    /// The URL prefix of published files for jobs whose settings name none (`--base-url`);
    /// nil: this server's `/v1/attachments` when it serves an out directory.
    package var baseURL: String?
    /// The out directory this server publishes from (`GET /v1/attachments/{file}`), or nil
    /// when outputs go to a bucket.
    package var attachmentsDirectory: String?
    /// `--sign-attachments`: attachments are served only by URLs it signed, and the jobs the
    /// API renders carry such URLs; nil serves them to anyone who has the name.
    package var attachmentSigner: AttachmentURLSigner? = nil
    /// `--console-secret-file`: the key console sessions are signed with, so that several
    /// servers behind one name accept each other's logins and a restart keeps them; nil: a
    /// random key of this process's own.
    package var consoleSecret: [UInt8]? = nil
    /// Where uploads are written before they become jobs (the workers read them from here).
    package var uploadsDirectory: String?
    /// `--keep-uploads`: how long, in seconds, an upload no unfinished job refers to is kept
    /// after it was written before the sweep deletes it (see `UploadSweeper`).
    package var keepUploadsSeconds: Double = 60
    /// The webhook target of jobs created without a `callback_url`.
    package var webhookURL: String?
    /// Whether webhooks can be sent (a signing secret is configured): without one, a request
    /// naming a `callback_url` is refused.
    package var acceptsCallbacks: Bool
    /// `--allowed-host`: names (`NAME` for any port, `NAME:PORT`) this server answers to besides
    /// its address, `localhost` and `--public-url`'s host (``ServerNames``).
    package var allowedHosts: [String] = []
    /// `--auth-failure-limit`: failed API keys and console logins one client address may make in
    /// a burst before `429` (``AuthFailureLimiter``); 0 for no limit.
    package var authFailureLimit: Int = 20
    /// `--auth-failure-window`: seconds in which that many failures are forgiven again.
    package var authFailureWindowSeconds: Double = 60
    /// How `POST /v1/preflight` with `fetch` downloads attachments: the address policy, caps
    /// and timeouts of remote sources (`--allow-host`, `--allow-private-networks`, ...).
    package var remote = RemoteSettings()

    // MARK: Long polls and pre-flight downloads

    /// The most long polls (`GET /v1/jobs/{id}?wait=`, `POST /v1/process`) waiting at once over
    /// all clients (`--max-waits`); more are `429`. Each holds a connection, so a descriptor:
    /// 512 is half the usual soft descriptor limit (1024), the rest for workers, the database,
    /// uploads and ordinary requests.
    package var maxWaits: Int = 512
    /// The most long polls waiting at once per API key, or per client address on a server
    /// without keys (`--max-waits-per-client`): 64 lets a client wait for a batch of jobs one
    /// request each, while eight clients are needed to take every slot; more is what webhooks
    /// are for.
    package var maxWaitsPerClient: Int = 64
    /// What one `POST /v1/preflight` may download at most (`--max-preflight-urls`,
    /// `--max-preflight-bytes`): the budget of a request that asks for none, and the ceiling of
    /// one that asks (more is `422 invalid_settings`). The CLI's defaults.
    package var preflightFetchCeiling = PreflightSession.FetchBudget()

    package init(
        host: String = "127.0.0.1", port: Int = 8080, apiKeys: APIKeyStore? = nil, rateLimit: Double? = nil,
        rateBurst: Double = 100, maxQueued: Int = 50_000, maxBodyBytes: Int = 1 << 20,
        maxUploadBytes: Int = 200 << 20, maxURLBytes: Int = 8192, maxSourcesPerRequest: Int = 100,
        maxProcessSources: Int = 10, maxWaitSeconds: Double = 60, idempotencyRetention: Duration = .seconds(86_400),
        publicURL: String? = nil, baseURL: String? = nil, attachmentsDirectory: String? = nil,
        uploadsDirectory: String? = nil,
        webhookURL: String? = nil, acceptsCallbacks: Bool = false
    ) {
        self.host = host
        self.port = port
        self.apiKeys = apiKeys
        self.rateLimit = rateLimit
        self.rateBurst = rateBurst
        self.maxQueued = maxQueued
        self.maxBodyBytes = maxBodyBytes
        self.maxUploadBytes = maxUploadBytes
        self.maxURLBytes = maxURLBytes
        self.maxSourcesPerRequest = maxSourcesPerRequest
        self.maxProcessSources = maxProcessSources
        self.maxWaitSeconds = maxWaitSeconds
        self.idempotencyRetention = idempotencyRetention
        self.publicURL = publicURL
        self.baseURL = baseURL
        self.attachmentsDirectory = attachmentsDirectory
        self.uploadsDirectory = uploadsDirectory
        self.webhookURL = webhookURL
        self.acceptsCallbacks = acceptsCallbacks
    }

    /// Whether `host` is a loopback name or address: the only kind a server without API keys
    /// may listen on.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Refuses a configuration that cannot be served safely. `keysConfigured` says whether
    /// keys will be there when it is not yet ``apiKeys`` (the file is read later).
    package func validate(keysConfigured: Bool? = nil) throws(PushPrepError) {
        if !(keysConfigured ?? (apiKeys != nil)) && !Self.isLoopback(host) {
            throw PushPrepError(
                .invalidSettings,
                "without --api-keys-file the server listens on loopback only (127.0.0.1, ::1), not \(host)")
        }
        guard (0...65535).contains(port) else {
            throw PushPrepError(.invalidSettings, "--port must be in 0...65535, got \(port)")
        }
        guard maxQueued >= 1 else { throw PushPrepError(.invalidSettings, "--max-queued must be at least 1") }
        guard keepUploadsSeconds.isFinite, (0...604_800).contains(keepUploadsSeconds) else {
            throw PushPrepError(.invalidSettings, "--keep-uploads must be 0 to 604800 seconds (7 days)")
        }
        guard maxUploadBytes >= 1 else {
            throw PushPrepError(.invalidSettings, "--max-upload-bytes must be at least 1")
        }
        guard maxWaitSeconds.isFinite, (0...3600).contains(maxWaitSeconds) else {
            throw PushPrepError(.invalidSettings, "--max-wait must be in 0...3600 seconds")
        }
        guard requestTimeoutSeconds.isFinite, (1...86_400).contains(requestTimeoutSeconds),
            requestTimeoutSeconds > maxWaitSeconds
        else {
            throw PushPrepError(
                .invalidSettings, "--request-timeout must be in 1...86400 seconds and longer than --max-wait")
        }
        guard rateBurst.isFinite, rateBurst >= 1 else {
            throw PushPrepError(.invalidSettings, "--rate-burst must be a number of requests, at least 1")
        }
        if let rateLimit, !(rateLimit.isFinite && rateLimit > 0) {
            throw PushPrepError(.invalidSettings, "--rate-limit must be a positive number of requests a second")
        }
        guard (1...1_000_000).contains(maxWaits) else {
            throw PushPrepError(.invalidSettings, "--max-waits must be in 1...1000000, got \(maxWaits)")
        }
        guard (1...maxWaits).contains(maxWaitsPerClient) else {
            throw PushPrepError(
                .invalidSettings,
                "--max-waits-per-client must be in 1...--max-waits (\(maxWaits)), got \(maxWaitsPerClient)")
        }
        guard PreflightSession.FetchBudget.urlRange.contains(preflightFetchCeiling.maxURLs) else {
            throw PushPrepError(
                .invalidSettings, "--max-preflight-urls must be in 1...1000, got \(preflightFetchCeiling.maxURLs)")
        }
        guard PreflightSession.FetchBudget.byteRange.contains(preflightFetchCeiling.maxBytes) else {
            throw PushPrepError(
                .invalidSettings,
                "--max-preflight-bytes must be in 1000000...10000000000, got \(preflightFetchCeiling.maxBytes)")
        }
        try validateNames()
    }

    /// `--allowed-host`, `--public-url` and the failure limits.
    private func validateNames() throws(PushPrepError) {
        for name in allowedHosts where HostAuthority(name) == nil {
            throw PushPrepError(
                .invalidSettings,
                "--allowed-host takes a host name or IP address, optionally with :PORT (IPv6 in brackets), not \(name)")
        }
        if let publicURL, ServerNames.origin(publicURL) == nil {
            throw PushPrepError(
                .invalidSettings, "--public-url must be an http or https URL with a host, not \(publicURL)")
        }
        guard (0...1_000_000).contains(authFailureLimit) else {
            throw PushPrepError(.invalidSettings, "--auth-failure-limit must be in 0...1000000 (0: no limit)")
        }
        guard authFailureWindowSeconds.isFinite, (1...86_400).contains(authFailureWindowSeconds) else {
            throw PushPrepError(.invalidSettings, "--auth-failure-window must be in 1...86400 seconds")
        }
    }
}
