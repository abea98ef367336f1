import AsyncHTTPClient
package import Foundation
package import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
package import PushPrepCore
import PushPrepQueue
package import PushPrepRemote
import Synchronization

/// POSTs one signed webhook and says how it went; it never retries by itself (the dispatcher
/// reports the outcome to the queue, which holds the delivery until it is due again).
///
/// A callback URL is as untrusted as a source URL, so the request takes the remote sources'
/// path: the URL checked by ``RemoteURL``, its host resolved and judged by ``AddressCheck``
/// (loopback and private networks refused unless allowed), the connection pinned to the checked
/// address by ``PinnedClients``. Redirects are not followed (a 3xx is a failed attempt: the
/// receiver must give the URL it means).
///
/// One deadline, ``WebhookSettings/timeout``, covers the whole send: resolving the name,
/// connecting (to each address tried), the request and the response's status line. The status
/// decides the delivery, so the response body is never read: the send ends as soon as the status
/// is known (a body not already received is abandoned with its connection). A receiver that
/// answers and then trickles its body, or never answers, holds a send for no longer than the
/// deadline, which is what lets the dispatcher's claim outlive every send.
package final class WebhookSender: Sendable {
    let settings: WebhookSettings
    let signer: StandardWebhook
    private let check: AddressCheck
    private let clients: PinnedClients
    private let logger: Logger

    /// A sender resolving names with the system resolver. Call ``shutdown()`` when done.
    package convenience init(settings: WebhookSettings, signer: StandardWebhook, logger: Logger) {
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
    package func shutdown() async {
        await clients.shutdown()
    }

    /// Sends `event` to `target`, signed at `date` (this attempt's `webhook-timestamp`), and
    /// returns by ``WebhookSettings/timeout`` after it was called, whatever the receiver or the
    /// resolver does: a send still running then is cancelled and is an attempt to retry.
    package func send(_ event: WebhookEvent, to target: String, at date: Date = Date()) async -> WebhookSendResult {
        let timeout = settings.timeout
        let deadline = ContinuousClock.now + timeout
        let result = await Self.value(before: deadline) {
            await self.attempt(event, to: target, at: date, deadline: deadline)
        }
        return result
            ?? .retry(
                status: nil,
                PushPrepError(.timeout, "no answer from \(WebhookSender.shown(target)) within \(timeout)"))
    }

    /// The send itself, with AsyncHTTPClient's own deadline set to `deadline` as well.
    private func attempt(
        _ event: WebhookEvent, to target: String, at date: Date, deadline: ContinuousClock.Instant
    ) async -> WebhookSendResult {
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

        let remaining = ContinuousClock.now.duration(to: deadline)
        let clientDeadline = NIODeadline.now() + TimeAmount(max(remaining, .zero))
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
                response = try await client.execute(request, deadline: clientDeadline, logger: logger)
            } catch {
                let (mapped, connectFailed) = classify(error, url: url, address: address)
                // A name with several addresses: a connection refused on one is tried on the next.
                if connectFailed {
                    connectFailure = mapped
                    continue
                }
                return .retry(status: nil, mapped)
            }
            // The status decides: the body is not read. Dropping the response cancels a body
            // still on its way (AsyncHTTPClient closes that connection) and keeps a connection
            // whose response had already ended for the next send.
            return Self.verdict(status: Int(response.status.code), reason: response.status.reasonPhrase, url: url)
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

    /// A client error as a `PushPrepError`, and whether no connection could be made.
    private func classify(_ error: any Error, url: RemoteURL, address: IPAddress) -> (PushPrepError, Bool) {
        if let error = error as? PushPrepError { return (error, false) }
        let target = "\(WebhookSender.shown(url)) (\(address))"
        if let failure = NetworkFailure(error) {
            // The library's own text, for whoever debugs; the message is the mapping's sentence.
            logger.debug(
                "webhook send failed",
                metadata: ["url": "\(WebhookSender.shown(url))", "address": "\(address)", "error": "\(error)"])
            let message =
                "cannot send to \(WebhookSender.shown(url)): \(failure.connecting(to: url.host, port: url.port))"
            return (PushPrepError(.fetchFailed, message, cause: error), failure.kind != .tls && failure.kind != .notTLS)
        }
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
package struct WebhookSendResult: Sendable, CustomStringConvertible {
    /// What to do with the delivery.
    package enum Verdict: String, Sendable, Equatable {
        /// The receiver answered 2xx.
        case delivered
        /// Failed for now: try again by the schedule.
        case retry
        /// Failed for good: 410 Gone, a refused address, an unusable URL.
        case failed
    }

    package var verdict: Verdict
    /// The HTTP status, when there was an answer.
    package var status: Int?
    /// Why it was not delivered.
    package var error: PushPrepError?

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

    package var description: String {
        "\(verdict.rawValue)" + (status.map { " (HTTP \($0))" } ?? "") + (error.map { ": \($0)" } ?? "")
    }
}

extension WebhookSender {
    /// A callback URL as messages, logs and the outbox's `last_error` show it: without its query
    /// or fragment, where receivers put tokens (`?token=…`).
    static func shown(_ url: RemoteURL) -> String { shown(url.text) }

    /// The same for URL text as given.
    static func shown(_ text: String) -> String {
        guard let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return text }
        return String(text[..<cut])
    }

    /// Runs `body` in a task of its own and returns its value, or nil once `deadline` passes.
    ///
    /// Unlike a task group, which waits for its children, this returns at the deadline even when
    /// `body` is stuck in something cancellation does not reach (a `getaddrinfo` on the thread
    /// pool): the task is cancelled and left to end by itself, and what it returns is dropped.
    /// Cancelling the caller cancels `body` and does not wait for the deadline either.
    package static func value<T: Sendable>(
        before deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async -> T
    ) async -> T? {
        let race = DeadlineRace<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                race.start(
                    continuation,
                    work: Task { race.finish(await body()) },
                    timer: Task {
                        // An Alarm, not Task.sleep: a cancelled sleep stays scheduled until its
                        // deadline (issue 32); the alarm is freed when the work wins.
                        await Alarm(after: max(.zero, deadline - .now)).wait()
                        race.finish(nil)
                    })
            }
        } onCancel: {
            race.finish(nil)
        }
    }
}

/// The state of one ``WebhookSender/value(before:_:)``: the first of the work, the timer and a
/// cancellation to finish resumes the caller and cancels both tasks.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T?, Never>?
        var tasks: [Task<Void, Never>] = []
        /// What finished before the continuation was handed over (a cancellation that came first).
        var early: T??
    }

    private let state = Mutex(State())

    /// Hands over the caller's continuation and the two tasks; resumes at once when something
    /// finished already.
    func start(_ continuation: CheckedContinuation<T?, Never>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let early = state.withLock { state -> T?? in
            if let early = state.early { return early }
            state.continuation = continuation
            state.tasks = [work, timer]
            return nil
        }
        if let early {
            work.cancel()
            timer.cancel()
            continuation.resume(returning: early)
        }
    }

    /// Resumes the caller with `value` unless something finished first.
    func finish(_ value: T?) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T?, Never>?, [Task<Void, Never>]) in
            guard let continuation = state.continuation else {
                if state.early == nil { state.early = .some(value) }
                return (nil, [])
            }
            state.continuation = nil
            defer { state.tasks = [] }
            return (continuation, state.tasks)
        }
        guard let continuation else { return }
        for task in tasks { task.cancel() }
        continuation.resume(returning: value)
    }
}
