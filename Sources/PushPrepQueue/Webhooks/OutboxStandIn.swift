public import Foundation
public import PushPrep

// A stand-in for the queue's webhook outbox until it is merged: the types as the brief gives
// them, and the two methods the dispatcher calls. Deleted when `JobQueue` has them.

public enum DeliveryState: String, Sendable, Codable, CaseIterable { case pending, delivered, failed }

public struct WebhookDelivery: Sendable, Equatable {
    public var id: Int64
    public var jobID: JobID
    public var url: String
    public var event: String
    public var job: JobRecord
    public var state: DeliveryState
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var deliveredAt: Date?

    public init(
        id: Int64, jobID: JobID, url: String, event: String, job: JobRecord, state: DeliveryState, attempts: Int,
        nextAttemptAt: Date?, lastStatus: Int?, lastError: String?, createdAt: Date, deliveredAt: Date?
    ) {
        self.id = id
        self.jobID = jobID
        self.url = url
        self.event = event
        self.job = job
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }
}

public enum DeliveryOutcome: Sendable, Equatable {
    case delivered(status: Int)
    case retry(status: Int?, error: String, after: Duration)
    case failed(status: Int?, error: String)
}

public protocol WebhookOutbox: Sendable {
    func claimDeliveries(limit: Int, lease: Duration) async throws(PushPrepError) -> [WebhookDelivery]
    func finishDelivery(_ id: Int64, attempt: Int, outcome: DeliveryOutcome) async throws(PushPrepError) -> Bool
}
