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
    private func classify(_ error: any Error, url: RemoteURL, address: IPAddress) -> (PushPrepError, Bool, Bool) {
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

    // MARK: - Body

    private func stream(
        _ response: HTTPClientResponse, from url: RemoteURL, address: IPAddress, into directory: String,
        maxInputBytes: Int
    ) async throws(PushPrepError) -> Download {
        var cap = min(settings.largestDownloadCap, maxInputBytes)
        let declared = response.headers.first(name: "content-length").flatMap { Int($0) }
        if let declared, declared > cap {
            throw PushPrepError(
                .inputTooLarge, "\(url) is \(declared) bytes (Content-Length), over the limit of \(cap) bytes")
        }
        let path = Self.temporaryPath(in: directory, extension: url.pathExtension)
        let file = try TemporaryWriter(path: path)
        var hasher = SHA256()
        var prefix: [UInt8] = []
        var total = 0
        var kindKnown = false
        do {
            for try await buffer in response.body {
                total += buffer.readableBytes
                if prefix.count < MediaDetector.prefixLength {
                    prefix.append(
                        contentsOf: buffer.readableBytesView.prefix(MediaDetector.prefixLength - prefix.count))
                }
                if !kindKnown && prefix.count >= MediaDetector.prefixLength {
                    kindKnown = true
                    cap = min(settings.downloadCap(for: MediaDetector.detect(prefix)?.kind), maxInputBytes)
                    if let declared, declared > cap {
                        throw PushPrepError(
                            .inputTooLarge,
                            "\(url) is \(declared) bytes (Content-Length), over the limit of \(cap) bytes")
                    }
                }
                guard total <= cap else {
                    throw PushPrepError(
                        .inputTooLarge, "\(url) sent more than the limit of \(cap) bytes; the download was stopped")
                }
                try buffer.withUnsafeReadableBytes { raw throws(PushPrepError) in
                    hasher.update(bufferPointer: raw)
                    try file.write(raw)
                }
            }
            if !kindKnown {
                cap = min(settings.downloadCap(for: MediaDetector.detect(prefix)?.kind), maxInputBytes)
                guard total <= cap else {
                    throw PushPrepError(.inputTooLarge, "\(url) is \(total) bytes, over the limit of \(cap) bytes")
                }
            }
            try file.close()
        } catch {
            file.discard()
            let mapped: PushPrepError
            if let error = error as? PushPrepError {
                mapped = error
            } else {
                mapped = classify(error, url: url, address: address).0
            }
            throw mapped
        }
        return Download(
            path: path,
            size: total,
            sha256: hasher.finalize().hexString,
            prefix: prefix,
            finalURL: url.text,
            status: Int(response.status.code),
            contentType: response.headers.first(name: "content-type"),
            contentLength: declared,
            validators: Self.validators(of: response, fallback: nil)
        )
    }

    private static func validators(of response: HTTPClientResponse, fallback: Validators?) -> Validators {
        let fresh = Validators(
            etag: response.headers.first(name: "etag"), lastModified: response.headers.first(name: "last-modified"))
        return fresh.isEmpty ? (fallback ?? fresh) : fresh
    }

    /// A temporary name that ``AtomicFile/removeStaleTemporaries(in:)`` recognises, ending in
    /// the URL's extension so that the extension check sees what the URL said.
    static func temporaryPath(in directory: String, extension ext: String) -> String {
        AtomicFile.temporaryPath(in: directory, name: ext.isEmpty ? "download" : "download.\(ext)")
    }

    // MARK: - Deadline

    /// Runs `body`, cancelling it when `deadline` passes (then `timeout`), so that a server
    /// that trickles bytes just fast enough to beat the idle timeout still cannot hold a job.
    ///
    /// The deadline is an ``Alarm``, not a raced `Task.sleep`: a cancelled sleep stays scheduled,
    /// with its task, until `deadline` (swiftlang/swift#60441), so every fetch kept memory for the
    /// whole `--fetch-timeout` (120 s by default) after it ended.
    static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, timeout: Duration, source: String,
        _ body: @escaping @Sendable () async throws(PushPrepError) -> T
    ) async throws(PushPrepError) -> T {
        let result: Result<T, PushPrepError>? = await withTaskGroup(of: Result<T, PushPrepError>?.self) { group in
            group.addTask {
                do throws(PushPrepError) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                await Alarm(after: ContinuousClock.now.duration(to: deadline)).wait()
                return nil
            }
            var first = await group.next() ?? nil
            group.cancelAll()
            if first == nil {
                // The deadline passed first. A body that still finishes as it is cancelled is
                // used (its temporary file must not leak); a failure becomes the timeout.
                if case .success(let value)?? = await group.next() { first = .success(value) }
            }
            return first
        }
        guard let result else {
            throw PushPrepError(.timeout, "fetching \(source) took longer than \(timeout)")
        }
        return try result.get()
    }
}

/// A file written chunk by chunk and removed unless closed successfully.
private final class TemporaryWriter {
    private let path: String
    private var file: SystemPackage.FileDescriptor?

    init(path: String) throws(PushPrepError) {
        self.path = path
        file = try systemCall("cannot create \(path)") {
            try SystemPackage.FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: .ownerReadWrite)
        }
    }

    /// Writes to the page cache; these writes are short and never wait on the network, so they
    /// run inline on the fetching task.
    func write(_ buffer: UnsafeRawBufferPointer) throws(PushPrepError) {
        guard let file else { throw PushPrepError(.ioError, "cannot write \(path): already closed") }
        _ = try systemCall("cannot write \(path)") { try file.writeAll(buffer) }
    }

    func close() throws(PushPrepError) {
        guard let file else { return }
        self.file = nil
        do throws(PushPrepError) {
            try systemCall("cannot write \(path)") { try file.close() }
        } catch {
            unlink(path)
            throw error
        }
    }

    func discard() {
        try? file?.close()
        file = nil
        unlink(path)
    }
}
