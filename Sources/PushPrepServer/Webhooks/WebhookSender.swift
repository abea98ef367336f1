import AsyncHTTPClient
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import PushPrep
import PushPrepQueue
import PushPrepRemote

/// POSTs one signed webhook and says how it went; it never retries by itself (the dispatcher
/// reports the outcome to the queue, which holds the delivery until it is due again).
///
/// A callback URL is as untrusted as a source URL, so the request takes the remote sources'
/// path: the URL checked by ``RemoteURL``, its host resolved and judged by ``AddressCheck``
/// (loopback and private networks refused unless allowed), the connection pinned to the checked
/// address by ``PinnedClients``. Redirects are not followed (a 3xx is a failed attempt: the
/// receiver must give the URL it means). The response body is read up to
/// ``WebhookSettings/maxResponseBytes`` and dropped.
public final class WebhookSender: Sendable {
    let settings: WebhookSettings
    let signer: StandardWebhook
    private let check: AddressCheck
    private let clients: PinnedClients
    private let logger: Logger

    /// A sender resolving names with the system resolver. Call ``shutdown()`` when done.
    public convenience init(settings: WebhookSettings, signer: StandardWebhook, logger: Logger) {
        self.init(settings: settings, signer: signer, resolver: SystemHostResolver(), logger: logger)
    }

    /// A sender resolving names with `resolver`.
    package init(settings: WebhookSettings, signer: StandardWebhook, resolver: any HostResolver, logger: Logger) {
        self.settings = settings
        self.signer = signer
        self.check = AddressCheck(settings: settings.remoteSettings, resolver: resolver)
        self.clients = PinnedClients(
            connectTimeout: settings.connectTimeout, readTimeout: settings.timeout, logger: logger)
        self.logger = logger
    }

    /// Closes every connection; sends after this are failed attempts to retry.
    public func shutdown() async {
        await clients.shutdown()
    }

    /// Sends `event` to `target`, signed at `date` (this attempt's `webhook-timestamp`).
    public func send(_ event: WebhookEvent, to target: String, at date: Date = Date()) async -> WebhookSendResult {
        let url: RemoteURL
        do {
            url = try RemoteURL(target)
        } catch {
            return .failed(
                status: nil, PushPrepError(.invalidSettings, "the callback URL cannot be used: \(error.message)"))
        }
        let addresses: [IPAddress]
        do {
            addresses = try await check.resolve(url)
        } catch {
            // DNS may come back: worth another attempt.
            return .retry(status: nil, error)
        }
        if let refusal = check.refusal(of: url, addresses: addresses) {
            // The same name would be refused again; no connection is opened.
            return .failed(status: nil, refusal.error)
        }

        var request = HTTPClientRequest(url: url.text)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "pushprep/\(PushPrepVersion.current)")
        for (name, value) in signer.headers(messageID: event.messageID, at: date, body: event.body) {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: event.body))

        let deadline = NIODeadline.now() + TimeAmount(settings.timeout)
        var connectFailure: PushPrepError?
        for address in addresses {
            let client: HTTPClient
            do {
                client = try clients.client(for: url, address: address)
            } catch {
                return .retry(status: nil, error)
            }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: deadline, logger: logger)
            } catch {
                let (mapped, connectFailed) = classify(error, url: url, address: address)
                // A name with several addresses: a connection refused on one is tried on the next.
                if connectFailed {
                    connectFailure = mapped
                    continue
                }
                return .retry(status: nil, mapped)
            }
            let status = Int(response.status.code)
            await drain(response.body)
            return Self.verdict(status: status, reason: response.status.reasonPhrase, url: url)
        }
        return .retry(
            status: nil, connectFailure ?? PushPrepError(.fetchFailed, "no address to connect to for \(url.host)"))
    }

    /// 2xx delivered; 410 Gone failed for good (the receiver says the URL is no more, as the
    /// spec lets it); anything else, redirects included, another attempt later.
    static func verdict(status: Int, reason: String, url: RemoteURL) -> WebhookSendResult {
        switch status {
        case 200..<300:
            return .delivered(status: status)
        case 410:
            return .failed(
                status: status,
                PushPrepError(.fetchFailed, "HTTP 410 \(reason) from \(WebhookSender.shown(url)): given up"))
        default:
            return .retry(
                status: status, PushPrepError(.fetchFailed, "HTTP \(status) \(reason) from \(WebhookSender.shown(url))")
            )
        }
    }

    /// Reads at most ``WebhookSettings/maxResponseBytes`` of a response body and drops it; a
    /// failure while reading changes nothing (the status has been received).
    private func drain(_ body: HTTPClientResponse.Body) async {
        var read = 0
        do {
            for try await chunk in body {
                read += chunk.readableBytes
                if read >= settings.maxResponseBytes { break }
            }
        } catch {
            logger.debug("webhook response body not read to its end", metadata: ["error": "\(error)"])
        }
    }

    /// A client error as a `PushPrepError`, and whether no connection could be made.
    private func classify(_ error: any Error, url: RemoteURL, address: IPAddress) -> (PushPrepError, Bool) {
        if let error = error as? PushPrepError { return (error, false) }
        let target = "\(WebhookSender.shown(url)) (\(address))"
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return (
                    PushPrepError(.timeout, "could not connect to \(target) within \(settings.connectTimeout)"), true
                )
            case .readTimeout, .deadlineExceeded:
                return (PushPrepError(.timeout, "no answer from \(target) within \(settings.timeout)"), false)
            case .cancelled:
                return (PushPrepError(.cancelled, "the request to \(target) was cancelled"), false)
            default:
                return (PushPrepError(.fetchFailed, "cannot send to \(target): \(error)", cause: error), false)
            }
        }
        if error is NIOConnectionError || error is ChannelError || error is IOError {
            return (PushPrepError(.fetchFailed, "cannot connect to \(target): \(error)"), true)
        }
        if error is CancellationError {
            return (PushPrepError(.cancelled, "the request to \(target) was cancelled"), false)
        }
        return (PushPrepError(.fetchFailed, "cannot send to \(target): \(error)"), false)
    }
}

/// How one send went.
public struct WebhookSendResult: Sendable, CustomStringConvertible {
    /// What to do with the delivery.
    public enum Verdict: String, Sendable, Equatable {
        /// The receiver answered 2xx.
        case delivered
        /// Failed for now: try again by the schedule.
        case retry
        /// Failed for good: 410 Gone, a refused address, an unusable URL.
        case failed
    }

    public var verdict: Verdict
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// Why it was not delivered.
    public var error: PushPrepError?

    /// A result, as the sender makes them.
    package init(verdict: Verdict, status: Int?, error: PushPrepError? = nil) {
        self.verdict = verdict
        self.status = status
        self.error = error
    }

    static func delivered(status: Int) -> Self { Self(verdict: .delivered, status: status, error: nil) }
    static func retry(status: Int?, _ error: PushPrepError) -> Self {
        Self(verdict: .retry, status: status, error: error)
    }
    static func failed(status: Int?, _ error: PushPrepError) -> Self {
        Self(verdict: .failed, status: status, error: error)
    }

    public var description: String {
        "\(verdict.rawValue)" + (status.map { " (HTTP \($0))" } ?? "") + (error.map { ": \($0)" } ?? "")
    }
}

extension WebhookSender {
    /// A callback URL as messages, logs and the outbox's `last_error` show it: without its query
    /// or fragment, where receivers put tokens (`?token=…`).
    static func shown(_ url: RemoteURL) -> String {
        guard let cut = url.text.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url.text }
        return String(url.text[..<cut])
    }
}
