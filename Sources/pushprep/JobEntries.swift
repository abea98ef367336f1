import Foundation
import PushPrepCore
import PushPrepQueue

/// The manifest entries of finished jobs, as `payload --job` and `jobs show --manifest` read
/// them: a job that does not exist is `job_not_found`; one that has not succeeded (queued,
/// running, failed with its error, cancelled), or whose entry this build cannot read, is
/// `invalid_job_state`. The codes and words `POST /v1/payload`'s `job_ids` answers with.
enum JobEntries {
    /// A succeeded job's manifest entry and the settings it was processed with.
    struct Finished {
        var entry: ManifestEntry
        var settings: ProcessingSettings
    }

    /// The entries of the jobs `ids`, in that order, read from `queue`.
    static func read(_ ids: [JobID], from queue: any JobQueueAdmin) async throws -> [Finished] {
        var finished: [Finished] = []
        for id in ids {
            finished.append(try finishedEntry(id, try await queue.job(id), for: "a payload"))
        }
        return finished
    }

    /// `record`'s entry, or why it has none to send.
    static func finishedEntry(_ id: JobID, _ record: JobRecord?, for use: String) throws(PushPrepError)
        -> Finished
    {
        guard let record else { throw PushPrepError(.jobNotFound, "no job \(id)") }
        guard record.state == .succeeded else {
            let why = record.errorCode.map { " (\($0): \(UntrustedText.escaped(record.errorMessage ?? "")))" } ?? ""
            let state = JobView.stateLabel(record)
            throw PushPrepError(
                .invalidJobState,
                "job \(id) is \(state)\(why); \(use) takes succeeded jobs only"
                    + (record.state == .queued || record.state == .running
                        ? ": wait for it (pushprep jobs show \(id))" : ""))
        }
        guard let entry = record.entry else {
            throw PushPrepError(.invalidJobState, "job \(id) has no manifest entry this PushPrep can read")
        }
        return Finished(entry: entry, settings: record.settings ?? .init())
    }
}
