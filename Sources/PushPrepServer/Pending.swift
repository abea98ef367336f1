import PushPrep
import PushPrepCore
import PushPrepQueue

// Temporary until the queue's cursor listing is merged.
extension JobQueue {
    func list(state: JobState?, limit: Int, before: JobID?) async throws(PushPrepError) -> [JobRecord] {
        try await list(state: state, limit: limit).filter { before == nil || $0.id < before! }
    }
}
