import Foundation
import Hummingbird
import PushPrepCore
import PushPrepQueue

/// The webhook deliveries, so a client can see what was sent and what was given up:
/// `GET /v1/jobs/{id}/deliveries` and `GET /v1/deliveries?state=failed`.
struct DeliveryRoutes {
    let queue: any JobQueueAdmin & WebhookOutbox

    func register(on router: some RouterMethods<APIRequestContext>) {
        router.get("v1/jobs/:id/deliveries") { _, context in
            let id = try JobRoutes.id(context)
            guard try await queue.job(id) != nil else { throw JobRoutes.notFound(id) }
            return try json(Deliveries(deliveries: try await queue.deliveries(job: id).map(DeliveryResource.init)))
        }
        router.get("v1/deliveries") { request, _ in
            let state = try ListQuery.state(request, as: DeliveryState.self)
            let limit = try ListQuery.limit(request)
            return try json(
                Deliveries(
                    deliveries: try await queue.listDeliveries(state: state, limit: limit).map(DeliveryResource.init)))
        }
    }

    struct Deliveries: Encodable {
        var deliveries: [DeliveryResource]
    }
}

/// One webhook delivery as the API shows it; absent values as null (``ExplicitNull``): one shape
/// whatever the state.
struct DeliveryResource: Encodable {
    var id: Int64
    /// The `webhook-id` every attempt of this delivery carries.
    var webhookID: String
    var jobID: JobID
    var url: String
    var event: String
    /// `pending`, `delivered` or `failed` (given up).
    var state: DeliveryState
    var attempts: Int
    @ExplicitNull var nextAttemptAt: Date?
    @ExplicitNull var lastStatus: Int?
    @ExplicitNull var lastError: String?
    var createdAt: Date
    @ExplicitNull var deliveredAt: Date?

    init(_ delivery: WebhookDelivery) {
        id = delivery.id
        webhookID = delivery.webhookID
        jobID = delivery.jobID
        url = delivery.url
        event = delivery.event
        state = delivery.state
        attempts = delivery.attempts
        nextAttemptAt = delivery.nextAttemptAt
        lastStatus = delivery.lastStatus
        lastError = delivery.lastError
        createdAt = delivery.createdAt
        deliveredAt = delivery.deliveredAt
    }

    enum CodingKeys: String, CodingKey {
        case id, url, event, state, attempts
        case webhookID = "webhook_id"
        case jobID = "job_id"
        case nextAttemptAt = "next_attempt_at"
        case lastStatus = "last_status"
        case lastError = "last_error"
        case createdAt = "created_at"
        case deliveredAt = "delivered_at"
    }
}
