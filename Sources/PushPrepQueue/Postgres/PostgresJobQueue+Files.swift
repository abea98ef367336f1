import Logging
import PostgresNIO
public import PushPrep

/// The files jobs refer to: which uploads an unfinished job still needs (issue 26 §1.8).
extension PostgresJobQueue {
    public func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String> {
        try await perform("list the sources of unfinished jobs") {
            let rows = try await client.query(Self.query(PostgresFilesSQL.unfinishedSources, prefix), logger: logger)
            var sources: Set<String> = []
            for try await source in rows.decode(String.self) { sources.insert(source) }
            return sources
        }
    }
}

/// The statements of ``PostgresJobQueue``'s file queries.
enum PostgresFilesSQL {
    /// `left` rather than `LIKE`: a prefix may hold `%` or `_`.
    static let unfinishedSources = """
        SELECT DISTINCT source FROM pushprep_jobs
        WHERE state IN ('queued', 'running') AND left(source, length($1)) = $1
        """
}
