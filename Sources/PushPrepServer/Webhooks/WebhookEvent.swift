import Foundation
package import PushPrepCore
package import PushPrepQueue

/// One webhook message, rendered: its stable id and the exact bytes POSTed.
///
/// The body is `{"data": <JobResource>, "timestamp": …, "type": …}` (the Standard Webhooks
/// envelope), encoded with ``APICoding/encoder()``, whose sorted keys make it deterministic. It is rendered only from the job as it
/// ended, which the outbox keeps unchanged, and its `timestamp` is the job's `finished_at`, not
/// the time of sending: every retry, from any process, sends the same bytes under the same id,
/// so a receiver can drop duplicates and a signature over them stays meaningful.
package struct WebhookEvent: Sendable, Equatable {
    /// `webhook-id`: the delivery's ``WebhookDelivery/webhookID``, stored with it, so the same
    /// on every retry and unique across databases.
    package let messageID: String
    /// `job.succeeded`, `job.failed`, `job.dead` or `job.cancelled`.
    package let type: String
    /// The request body.
    package let body: [UInt8]

    /// The event of a delivery from the outbox: its stored id, its type and its job as it ended.
    package init(_ delivery: WebhookDelivery, renderer: JobRenderer? = nil) throws(PushPrepError) {
        try self.init(messageID: delivery.webhookID, type: delivery.event, job: delivery.job, renderer: renderer)
    }

    /// Renders the event `type` with `webhook-id` `messageID` about `job` (the job as it ended),
    /// as `renderer` shows jobs (signed attachment URLs, expiring from the job's end, so that
    /// every retry sends the same bytes); without one, as stored.
    package init(messageID: String, type: String, job: JobRecord, renderer: JobRenderer? = nil) throws(PushPrepError) {
        self.messageID = messageID
        self.type = type
        let ended = job.finishedAt ?? job.updatedAt
        let envelope = Envelope(
            type: type, timestamp: ended, data: renderer?.resource(job, now: ended) ?? JobResource(job))
        do {
            body = Array(try APICoding.encoder().encode(envelope))
        } catch {
            throw PushPrepError(.invalidPayload, "cannot encode the \(type) event of job \(job.id): \(error)")
        }
    }

    /// The envelope (its keys come out sorted, as every object of ``APICoding/encoder()``).
    private struct Envelope: Encodable {
        let type: String
        let timestamp: Date
        let data: JobResource
    }
}
