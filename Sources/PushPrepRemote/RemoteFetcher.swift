import AsyncHTTPClient
import Crypto
import Foundation
package import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
package import PushPrepCore
import SystemPackage

/// Fetches `http://` and `https://` sources into temporary files, safely: every hop is
/// resolved by PushPrep, every address checked with ``AddressPolicy`` and the request pinned to
/// a checked address (see ``PinnedClients``); at most ``RemoteSettings/maxRedirects`` redirects,
/// byte caps on `Content-Length` and while streaming, connect/idle-read/total deadlines,
/// retries with backoff for transient failures, and bounded concurrency overall and per host.
package final class RemoteFetcher: Sendable {
    /// What happened during a fetch, for logs and tests.
    package enum Event: Sendable, Equatable {
        /// `host` resolved to these addresses (a literal host "resolves" to itself).
        case resolved(host: String, addresses: [IPAddress])
        /// A request to `url` is about to be sent over a connection to `address`.
        case connecting(url: String, address: IPAddress)
        /// A hop was refused before any connection.
        case refused(url: String, address: IPAddress)
        /// A request will be tried again after `delay`.
        case retrying(url: String, reason: String, delay: Duration)
    }

    /// The validators of an earlier download, sent as `If-None-Match` / `If-Modified-Since`.
    package struct Validators: Sendable, Codable, Equatable {
        /// The `ETag` the server sent.
        package var etag: String?
        /// The `Last-Modified` the server sent.
        package var lastModified: String?

        /// Validators; both nil means none.
        package init(etag: String? = nil, lastModified: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
        }

        var isEmpty: Bool { etag == nil && lastModified == nil }
    }

    /// A source downloaded into a temporary file, which the caller removes.
    package struct Download: Sendable {
        /// The temporary file.
        package var path: String
        /// Its size in bytes.
        package var size: Int
        /// Lowercase hex SHA-256 of the content.
        package var sha256: String
        /// The first ``MediaDetector/prefixLength`` bytes.
        package var prefix: [UInt8]
        /// The final URL, after redirects.
        package var finalURL: String
        /// The final HTTP status.
        package var status: Int
        /// The `Content-Type` header, if any.
        package var contentType: String?
        /// The `Content-Length` header, when the server sent one (a chunked body has none).
        package var contentLength: Int? = nil
        /// The response's validators, for the next revalidation.
        package var validators: Validators
    }

    /// The outcome of a fetch.
    package enum Outcome: Sendable {
        /// The body is in a temporary file.
        case downloaded(Download)
        /// The server answered 304 to the validators sent: the earlier download is current.
        case notModified(finalURL: String, validators: Validators)
    }

    let settings: RemoteSettings
    private let addressCheck: AddressCheck
    private let logger: Logger
    private let observer: (@Sendable (Event) -> Void)?
    private let clients: PinnedClients
    private let limiter: FetchLimiter
    private let retry: RetryPolicy

    /// A fetcher. Call ``shutdown()`` when done with it.
    package init(
        settings: RemoteSettings,
        resolver: any HostResolver = SystemHostResolver(),
        logger: Logger,
        observer: (@Sendable (Event) -> Void)? = nil
    ) {
        self.settings = settings
        self.addressCheck = AddressCheck(settings: settings, resolver: resolver)
        self.logger = logger
        self.observer = observer
        self.clients = PinnedClients(
            connectTimeout: settings.connectTimeout, readTimeout: settings.readTimeout, logger: logger)
        self.limiter = FetchLimiter(
            overall: settings.maxConcurrentFetches, perHost: settings.maxConcurrentFetchesPerHost)
        self.retry = RetryPolicy(maxTries: settings.maxTries)
    }

    /// Closes every connection. Fetches after this fail.
    package func shutdown() async {
        await clients.shutdown()
    }

    /// Fetches `source` into a new temporary file in `directory`. `maxInputBytes` caps the
    /// download too; `validators` make the request conditional.
    package func fetch(
        _ source: String, into directory: String, maxInputBytes: Int = .max, validators: Validators? = nil
    ) async throws(PushPrepError) -> Outcome {
        let start = try RemoteURL(source)
        let deadline = ContinuousClock.now + settings.totalTimeout
        return try await limiter.withSlot(host: start.origin) { () async throws(PushPrepError) -> Outcome in
            try await Self.withDeadline(deadline, timeout: settings.totalTimeout, source: source) {
                () async throws(PushPrepError) -> Outcome in
                try await self.follow(
                    start, directory: directory, maxInputBytes: maxInputBytes, validators: validators,
                    deadline: deadline)
            }
        }
    }

    // MARK: - Redirects

    private func follow(
        _ start: RemoteURL, directory: String, maxInputBytes: Int, validators: Validators?,
        deadline: ContinuousClock.Instant
    ) async throws(PushPrepError) -> Outcome {
        var url = start
        var visited: Set<String> = [start.text]
        var redirects = 0
        while true {
            let (response, address) = try await requestWithRetries(url, validators: validators, deadline: deadline)
            let status = Int(response.status.code)
            switch status {
            case 301, 302, 303, 307, 308:
                guard let location = response.headers.first(name: "location") else {
                    throw PushPrepError(.fetchFailed, "HTTP \(status) without a Location header from \(url)")
                }
                guard redirects < settings.maxRedirects else {
                    throw PushPrepError(
                        .fetchFailed, "more than \(settings.maxRedirects) redirects, starting at \(start)")
                }
                let next = try url.redirected(to: location)
                guard visited.insert(next.text).inserted else {
                    throw PushPrepError(.fetchFailed, "redirect loop: \(url) leads back to \(next)")
                }
                logger.debug("redirect", metadata: ["from": "\(url)", "to": "\(next)", "status": "\(status)"])
                redirects += 1
                url = next
            case 304 where validators.map({ !$0.isEmpty }) ?? false:
                return .notModified(finalURL: url.text, validators: Self.validators(of: response, fallback: validators))
            case 200..<300:
                let download = try await stream(
                    response, from: url, address: address, into: directory, maxInputBytes: maxInputBytes)
                return .downloaded(download)
            default:
                throw PushPrepError(
                    .fetchFailed, "HTTP \(status) \(response.status.reasonPhrase) from \(url)",
                    permanent: RetryPolicy.isPermanent(status: status))
            }
        }
    }

    // MARK: - One request, with retries

    private func requestWithRetries(
        _ url: RemoteURL, validators: Validators?, deadline: ContinuousClock.Instant
    ) async throws(PushPrepError) -> (HTTPClientResponse, IPAddress) {
        var attempt = 1
        while true {
            let outcome: (HTTPClientResponse, IPAddress)
            do {
                outcome = try await request(url, validators: validators, deadline: deadline)
            } catch let failure as TransientFailure {
                guard attempt < retry.maxTries else { throw failure.error }
                try await pause(
                    retry.backoff(beforeTry: attempt + 1), url: url, reason: failure.error.message,
                    deadline: deadline, honouringServer: false)
                attempt += 1
                continue
            } catch let error as PushPrepError {
                throw error
            } catch {
                throw PushPrepError(.fetchFailed, "cannot fetch \(url): \(error)")
            }
            let (response, _) = outcome
            let status = UInt(response.status.code)
            guard RetryPolicy.transientStatuses.contains(status) else { return outcome }
            let reason = "HTTP \(status) \(response.status.reasonPhrase) from \(url)"
            guard attempt < retry.maxTries else {
                throw PushPrepError(.fetchFailed, "\(reason) after \(attempt) tries")
            }
            let retryAfter = RetryAfter.parse(response.headers.first(name: "retry-after"))
            // The body of an error response is not needed; dropping it closes the stream.
            try await pause(
                retryAfter ?? retry.backoff(beforeTry: attempt + 1), url: url, reason: reason, deadline: deadline,
                honouringServer: retryAfter != nil)
            attempt += 1
        }
    }

    /// Sleeps before another try; a wait that would end after the deadline fails at once.
    private func pause(
        _ delay: Duration, url: RemoteURL, reason: String, deadline: ContinuousClock.Instant, honouringServer: Bool
    ) async throws(PushPrepError) {
        if ContinuousClock.now + delay >= deadline {
            throw PushPrepError(
                honouringServer ? .fetchFailed : .timeout,
                honouringServer
                    ? "\(reason); its Retry-After of \(delay) goes past the \(settings.totalTimeout) deadline"
                    : "\(reason); no time left for another try within \(settings.totalTimeout)")
        }
        observer?(.retrying(url: url.text, reason: reason, delay: delay))
        logger.debug("retrying", metadata: ["url": "\(url)", "reason": "\(reason)", "delay": "\(delay)"])
        do {
            try await Task.sleep(for: delay)
        } catch {
            throw PushPrepError(.timeout, "fetching \(url) took longer than \(settings.totalTimeout)")
        }
    }

    /// A failure worth another try.
    private struct TransientFailure: Error {
        let error: PushPrepError
    }

    /// Resolves, checks, and sends one GET over a connection pinned to a checked address. Throws
    /// `PushPrepError` for final failures and ``TransientFailure`` for retryable ones.
    private func request(
        _ url: RemoteURL, validators: Validators?, deadline: ContinuousClock.Instant
    ) async throws -> (HTTPClientResponse, IPAddress) {
        let addresses = try await checkedAddresses(url)
        var request = HTTPClientRequest(url: url.text)
        request.headers.add(name: "User-Agent", value: "pushprep/\(PushPrepVersion.current)")
        request.headers.add(name: "Accept", value: "image/*, video/*, audio/*, */*;q=0.1")
        if let etag = validators?.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = validators?.lastModified {
            request.headers.add(name: "If-Modified-Since", value: lastModified)
        }
        var lastError: PushPrepError?
        for address in addresses {
            let client = try clients.client(for: url, address: address)
            observer?(.connecting(url: url.text, address: address))
            do {
                let remaining = deadline - ContinuousClock.now
                let response = try await client.execute(
                    request, deadline: .now() + TimeAmount(remaining), logger: logger)
                return (response, address)
            } catch {
                let (mapped, transient, connectFailed) = classify(error, url: url, address: address)
                // A refused connection on one address of a name is tried on its next address.
                if connectFailed {
                    lastError = mapped
                    continue
                }
                throw transient ? TransientFailure(error: mapped) : mapped
            }
        }
        throw TransientFailure(
            error: lastError ?? PushPrepError(.fetchFailed, "no address to connect to for \(url.host)"))
    }

    /// The addresses of the URL's host, every one of them allowed, or `blocked_address`.
    private func checkedAddresses(_ url: RemoteURL) async throws(PushPrepError) -> [IPAddress] {
        let addresses = try await addressCheck.resolve(url)
        observer?(.resolved(host: url.host, addresses: addresses))
        if let refusal = addressCheck.refusal(of: url, addresses: addresses) {
            observer?(.refused(url: url.text, address: refusal.address))
            throw refusal.error
        }
        return addresses
    }

    /// Maps a client error to a PushPrepError: whether it is worth another try, and whether the
    /// connection itself could not be made (then the next address is tried).
    func classify(_ error: any Error, url: RemoteURL, address: IPAddress) -> (PushPrepError, Bool, Bool) {
        if let error = error as? PushPrepError { return (error, false, false) }
        let target = "\(url) (\(address))"
        if let failure = NetworkFailure(error) {
            // The library's own text, for whoever debugs; the message is the mapping's sentence.
            logger.debug("fetch failed", metadata: ["url": "\(url)", "address": "\(address)", "error": "\(error)"])
            let message = "cannot fetch \(url): \(failure.connecting(to: url.host, port: url.port))"
            let transport = failure.kind != .tls && failure.kind != .notTLS
            return (PushPrepError(.fetchFailed, message, cause: error), transport, transport)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return (
                    PushPrepError(.timeout, "could not connect to \(target) within \(settings.connectTimeout)"), true,
                    true
                )
            case .readTimeout:
                return (
                    PushPrepError(.timeout, "no response from \(target) within \(settings.readTimeout)"), true, false
                )
            case .deadlineExceeded, .cancelled:
                return (
                    PushPrepError(.timeout, "fetching \(url) took longer than \(settings.totalTimeout)"), false, false
                )
            case .remoteConnectionClosed:
                return (PushPrepError(.fetchFailed, "\(target) closed the connection", cause: error), true, false)
            default:
                return (PushPrepError(.fetchFailed, "cannot fetch \(target): \(error)", cause: error), false, false)
            }
        }
        if error is NIOConnectionError || error is ChannelError || error is IOError {
            return (PushPrepError(.fetchFailed, "cannot connect to \(target): \(error)"), true, true)
        }
        if error is CancellationError {
            return (PushPrepError(.timeout, "fetching \(url) took longer than \(settings.totalTimeout)"), false, false)
        }
        return (PushPrepError(.fetchFailed, "cannot fetch \(target): \(error)"), false, false)
    }
}
