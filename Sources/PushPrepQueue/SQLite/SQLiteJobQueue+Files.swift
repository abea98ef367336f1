import GRDB
public import PushPrep

/// The files jobs refer to: which uploads an unfinished job still needs (issue 26 §1.8).
extension SQLiteJobQueue {
    public func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String> {
        try await read("list the sources of unfinished jobs") { db in
            Set(try String.fetchAll(db, sql: FilesSQL.unfinishedSources, arguments: [prefix, prefix]))
        }
    }
}

/// The statements of ``SQLiteJobQueue``'s file queries.
enum FilesSQL {
    /// `substr` rather than `LIKE`: a prefix may hold `%` or `_`.
    static let unfinishedSources = """
        SELECT DISTINCT source FROM pushprep_jobs
        WHERE state IN ('queued', 'running') AND substr(source, 1, length(?)) = ?
        """
}
