package import Logging
import Metrics
import PushPrepCore
package import PushPrepQueue
import ServiceLifecycle
import Synchronization

/// Sends the queue's webhook deliveries: claims the due ones, POSTs each through a
/// ``WebhookSender`` with at most ``WebhookSettings/concurrency`` at once and at most
/// ``WebhookSettings/concurrencyPerHost`` to one receiver host, and reports each outcome to the
/// queue, which keeps a delivery until it is delivered or given up.
///
/// The per-host bound is applied by the claim itself (``ReceiverSlots``): a delivery to a host
/// whose slots are busy is left in the queue, unclaimed, and newer deliveries to other hosts are
/// claimed past it, so a slow receiver's backlog never holds a claim or a slot that another
/// receiver's delivery could use.
///
/// Every claim outlives its send (``WebhookSettings/lease``): a send starts within
/// ``WebhookSettings/startAllowance`` of its claim or not at all, and ends by the sender's
/// deadline. A dispatcher that is alive therefore never has a delivery it is sending claimed
/// again, and a receiver that answered 2xx never gets the same delivery twice from it.
///
/// A `Service` for a `ServiceGroup`: on graceful shutdown it claims nothing more and lets the
/// sends in flight finish (each is bounded by the send timeout) and report. A dispatcher that
/// dies instead leaves its claims to expire; another one sends them again after the lease
/// (delivery is at least once, and receivers drop duplicates by `webhook-id`).
package final class WebhookDispatcher: Service {
    let queue: any WebhookOutbox
    let settings: WebhookSettings
    let sender: WebhookSender
    let logger: Logger
    private let metrics = WebhookMetrics()
    /// Sends in flight, in all and per receiver host.
    private let slots = Mutex(SlotCount())

    /// The dispatcher's sends in flight.
    private struct SlotCount {
        var total = 0
        var perHost: [String: Int] = [:]
        /// Sends ended so far, and the claim loop's wait to end at the next one.
        var ended = 0
        var waiter: Alarm?
    }

    /// A claimed delivery and the instant its claim was asked for (its lease ends no earlier
    /// than a lease after it).
    private struct Claimed: Sendable {
        let delivery: WebhookDelivery
        let claimedAt: ContinuousClock.Instant
    }

    /// A dispatcher for `queue`'s webhook deliveries, signing with `signer`. The queue stays the
    /// caller's to close; the sender is this dispatcher's and is shut down when ``run()`` ends.
    package convenience init(
        queue: any WebhookOutbox, settings: WebhookSettings, signer: StandardWebhook, logger: Logger
    ) {
        self.init(
            queue: queue, settings: settings,
            sender: WebhookSender(settings: settings, signer: signer, logger: logger), logger: logger)
    }

    /// A dispatcher sending with `sender`.
    package init(queue: any WebhookOutbox, settings: WebhookSettings, sender: WebhookSender, logger: Logger) {
        self.queue = queue
        self.settings = settings
        self.sender = sender
        self.logger = logger
    }

    /// Dispatches until graceful shutdown or cancellation, then waits for the sends in flight.
    /// Throws `invalid_settings` before anything is claimed.
    package func run() async throws {
        try settings.validate()
        logger.info(
            "webhook dispatcher started",
            metadata: [
                "concurrency": "\(settings.concurrency)", "per_host": "\(settings.slotsPerHost)",
                "timeout": "\(settings.timeout)", "lease": "\(settings.lease)",
                "attempts": "\(settings.schedule.maxAttempts)",
            ])
        let (claims, claimed) = AsyncStream.makeStream(of: Claimed.self)
        let (releases, released) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask {
                // Only the claiming stops on graceful shutdown; the sends below are not cancelled.
                await cancelWhenGracefulShutdown { await self.claimLoop(into: claimed, releases: releases) }
                claimed.finish()
            }
            for await claim in claims {
                group.addTask {
                    await self.deliver(claim)
                    self.release(claim.delivery.receiverHost)
                    released.yield()
                }
            }
        }
        await sender.shutdown()
        logger.info("webhook dispatcher stopped")
    }

    /// Claims due deliveries while there is room, until cancelled: at most the free slots in
    /// all, and per receiver host at most its free slots.
    private func claimLoop(
        into claimed: AsyncStream<Claimed>.Continuation, releases: AsyncStream<Void>
    ) async {
        var slotFreed = releases.makeAsyncIterator()
        while !Task.isCancelled {
            let (free, receivers) = slots.withLock { slots in
                (
                    settings.concurrency - slots.total,
                    ReceiverSlots(
                        free: slots.perHost.mapValues { settings.slotsPerHost - $0 },
                        otherwise: settings.slotsPerHost)
                )
            }
            if free <= 0 {
                // Returns nil once cancelled.
                guard await slotFreed.next() != nil else { return }
                continue
            }
            let claimedAt = ContinuousClock.now
            let endedBefore = slots.withLock { $0.ended }
            let deliveries: [WebhookDelivery]
            do {
                deliveries = try await queue.claimDeliveries(
                    limit: min(settings.batchSize, free), lease: settings.lease, slots: receivers)
            } catch {
                logger.warning("cannot claim webhook deliveries", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: settings.idleInterval)
                continue
            }
            // Claimed even as a shutdown began: they are leased to this dispatcher, so send them.
            for delivery in deliveries {
                slots.withLock { slots in
                    slots.total += 1
                    slots.perHost[delivery.receiverHost, default: 0] += 1
                }
                claimed.yield(Claimed(delivery: delivery, claimedAt: claimedAt))
            }
            if deliveries.isEmpty { await idle(unlessEndedSince: endedBefore) }
        }
    }

    /// Waits the idle interval, or until a send ends: a claim that found nothing because every
    /// receiver with due deliveries had its slots taken looks again as soon as one is freed (with
    /// a 1 s wait instead, one busy receiver got 4 deliveries a second). Returns at once when a
    /// send ended since `endedBefore`, before the wait began.
    private func idle(unlessEndedSince endedBefore: Int) async {
        let alarm = Alarm(after: settings.idleInterval)
        let wait = slots.withLock { slots -> Bool in
            guard slots.ended == endedBefore else { return false }
            slots.waiter = alarm
            return true
        }
        guard wait else { return }
        await alarm.wait()
        slots.withLock { $0.waiter = nil }
    }

    /// Frees the slot of a send to `host` that ended.
    private func release(_ host: String) {
        let waiter = slots.withLock { slots -> Alarm? in
            slots.total -= 1
            let left = slots.perHost[host, default: 1] - 1
            slots.perHost[host] = left > 0 ? left : nil
            slots.ended += 1
            defer { slots.waiter = nil }
            return slots.waiter
        }
        waiter?.ring()
    }

    /// Sends one claimed delivery and reports how it went.
    private func deliver(_ claim: Claimed) async {
        let delivery = claim.delivery
        var logger = self.logger
        logger[metadataKey: "delivery"] = "\(delivery.id)"
        logger[metadataKey: "webhook_id"] = "\(delivery.webhookID)"
        logger[metadataKey: "job"] = "\(delivery.jobID)"
        logger[metadataKey: "event"] = "\(delivery.event)"
        logger[metadataKey: "attempt"] = "\(delivery.attempts)"

        // A send started later could still be running when the claim ends, and the delivery be
        // claimed and sent again meanwhile: leave it to the next claim instead.
        let waited = claim.claimedAt.duration(to: .now)
        guard waited <= settings.startAllowance else {
            logger.warning(
                "webhook not sent: its claim is too old to cover a send", metadata: ["waited": "\(waited)"])
            metrics.record(nil)
            return
        }

        let outcome: DeliveryOutcome
        do {
            let event = try WebhookEvent(delivery, renderer: settings.renderer)
            let result = await sender.send(event, to: delivery.url)
            outcome = Self.outcome(of: result, attempt: delivery.attempts, schedule: settings.schedule)
        } catch {
            outcome = .failed(status: nil, error: error.message)
        }

        let applied: Bool
        do {
            applied = try await queue.finishDelivery(delivery.id, attempt: delivery.attempts, outcome: outcome)
        } catch {
            // The claim expires and the delivery is sent again: at least once.
            logger.warning("cannot record a webhook outcome", metadata: ["error": "\(error)"])
            metrics.record(nil)
            return
        }
        metrics.record(applied ? outcome : nil)
        switch outcome {
        case .delivered(let status):
            logger.info("webhook delivered", metadata: ["status": "\(status)"])
        case .retry(let status, let error, let after):
            logger.notice(
                "webhook not delivered, will retry",
                metadata: ["status": "\(status.map(String.init) ?? "none")", "error": "\(error)", "after": "\(after)"])
        case .failed(let status, let error):
            logger.warning(
                "webhook given up",
                metadata: ["status": "\(status.map(String.init) ?? "none")", "error": "\(error)"])
        }
        if !applied {
            logger.notice("webhook outcome not recorded: the claim was superseded")
        }
    }

    /// The queue's outcome of a send that was claim `attempt`: a retry turns into `failed` once
    /// the schedule has no wait left after it.
    package static func outcome(of result: WebhookSendResult, attempt: Int, schedule: WebhookRetrySchedule)
        -> DeliveryOutcome
    {
        let message = result.error?.message ?? "not delivered"
        switch result.verdict {
        case .delivered:
            return .delivered(status: result.status ?? 200)
        case .failed:
            return .failed(status: result.status, error: message)
        case .retry:
            guard let delay = schedule.delay(afterAttempt: attempt) else {
                return .failed(status: result.status, error: "\(message) (given up after \(attempt) attempts)")
            }
            return .retry(status: result.status, error: message, after: delay)
        }
    }
}

/// The dispatcher's metrics: `pushprep_webhook_deliveries_total{outcome}`, one per send, by
/// `delivered`, `retry`, `failed`, or `dropped` (the outcome could not be recorded, the claim
/// had been superseded, or the send could not start within its claim's start allowance).
struct WebhookMetrics: Sendable {
    let delivered = Counter(label: "pushprep_webhook_deliveries_total", dimensions: [("outcome", "delivered")])
    let retry = Counter(label: "pushprep_webhook_deliveries_total", dimensions: [("outcome", "retry")])
    let failed = Counter(label: "pushprep_webhook_deliveries_total", dimensions: [("outcome", "failed")])
    let dropped = Counter(label: "pushprep_webhook_deliveries_total", dimensions: [("outcome", "dropped")])

    func record(_ outcome: DeliveryOutcome?) {
        switch outcome {
        case .delivered: delivered.increment()
        case .retry: retry.increment()
        case .failed: failed.increment()
        case nil: dropped.increment()
        }
    }
}

/// The dispatcher as a service of `pushprep serve`'s group: opens the queue at `queueURL`,
/// dispatches until graceful shutdown, and closes the queue.
package struct WebhookService: Service, CustomStringConvertible {
    let queueURL: QueueURL
    let settings: WebhookSettings
    let signer: StandardWebhook
    let logger: Logger

    package init(queueURL: QueueURL, settings: WebhookSettings, signer: StandardWebhook, logger: Logger) {
        self.queueURL = queueURL
        self.settings = settings
        self.signer = signer
        self.logger = logger
    }

    package func run() async throws {
        try await JobQueues.withBackend(queueURL, logger: logger) { queue in
            try await WebhookDispatcher(queue: queue, settings: settings, signer: signer, logger: logger).run()
        }
    }

    /// Never the secrets.
    package var description: String { "WebhookService(\(queueURL))" }
}
