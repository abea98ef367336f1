import Foundation
import Hummingbird
import PushPrepQueue

/// `GET /`: the jobs by state, the queue's depth, the last hour's activity and the workers alive.
extension ConsoleRoutes {
    /// How recently a worker must have been seen to count as alive: its heartbeats come every
    /// third of its lease (20 s by default), so this covers leases up to 6 minutes.
    static let aliveWithin: TimeInterval = 120

    /// The overview, as of now.
    func overview(_ visit: ConsoleVisit) async throws -> Response {
        let now = Date()
        let stats = try await queue.stats()
        let activity = ConsoleActivity(
            buckets: try await queue.activity(since: now - 3600, bucket: .seconds(60)), end: now)
        let workers = try await queue.workers(seenSince: now - Self.aliveWithin)
        let view = ConsoleOverviewView(
            counts: JobState.allCases.map { .init(state: $0.rawValue, count: stats.byState[$0] ?? 0) },
            ready: stats.ready, scheduled: stats.scheduled, expiredLeases: stats.expiredLeases,
            oldestReady: stats.oldestReadyAge.map { ConsoleFormat.age(seconds: $0) } ?? "no job is waiting",
            pendingDeliveries: stats.pendingDeliveries.map(String.init),
            finishedLastHour: activity.succeeded + activity.failed, succeededLastHour: activity.succeeded,
            failedLastHour: activity.failed, activityChart: activity.svg(), activityLegend: activity.legend,
            workers: workers.map { worker in
                .init(
                    name: worker.id, host: worker.host, concurrency: worker.concurrency,
                    busy: "\(worker.runningJobs.count) of \(worker.concurrency)",
                    seen: ConsoleFormat.age(seconds: now.timeIntervalSince(worker.lastSeenAt)) + " ago",
                    jobs: worker.runningJobs.sorted())
            },
            workersNote: "seen in the last \(Int(Self.aliveWithin / 60)) minutes")
        return html("overview", page(visit, title: "Overview", view))
    }
}

/// What the overview's template reads, in the page's order.
struct ConsoleOverviewView {
    /// A state and how many jobs are in it.
    struct Count {
        var state: String
        var count: Int
    }

    /// A worker alive: its name and host, its slots, how many are busy, when it was last seen,
    /// and the jobs it runs.
    struct Worker {
        var name, host: String
        var concurrency: Int
        var busy, seen: String
        var jobs: [JobID]
    }

    var counts: [Count]
    var ready, scheduled, expiredLeases: Int
    /// How long the oldest ready job has waited, in words.
    var oldestReady: String
    /// The webhooks waiting to be sent, when the queue counts them (text, so that 0 shows).
    var pendingDeliveries: String?
    var finishedLastHour, succeededLastHour, failedLastHour: Int
    /// The inline `<svg>` of ``ConsoleActivity/svg()`` and its legend (numbers and fixed words).
    var activityChart, activityLegend: String
    var workers: [Worker]
    var workersNote: String
}
