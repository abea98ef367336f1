public import Foundation
import Logging
import PostgresNIO
public import PushPrepCore

/// The files jobs refer to: which uploads an unfinished job still needs (issue 26 §1.8).
extension PostgresJobQueue {
    public func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String> {
        try await perform("list the sources of unfinished jobs") { [self] in
            let rows = try await client.query(Self.query(PostgresFilesSQL.unfinishedSources, prefix), logger: logger)
            var sources: Set<String> = []
            for try await source in rows.decode(String.self) { sources.insert(source) }
            return sources
        }
    }

    public func pruneReturningFiles(finishedBefore before: Date) async throws(PushPrepError) -> [PrunedJob] {
        try await perform("prune finished jobs", deadline: nil) { [self] in
            let rows = try await client.query(Self.query(PostgresFilesSQL.prune, before), logger: logger)
            var pruned: [PrunedJob] = []
            for try await (source, result) in rows.decode((String, String?).self) {
                pruned.append(PrunedJob(source: source, result: result))
            }
            return pruned
        }
    }

    public func namedInResults(_ texts: [String]) async throws(PushPrepError) -> Set<String> {
        guard !texts.isEmpty else { return [] }
        return try await perform("look for files named by jobs") { [self] in
            let rows = try await client.query(Self.query(PostgresFilesSQL.named, texts), logger: logger)
            var named: Set<String> = []
            for try await text in rows.decode(String.self) { named.insert(text) }
            return named
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

    /// ``PostgresSQL/prune`` returning the pruned jobs' sources and results.
    static let prune = """
        WITH pruned AS (
            DELETE FROM pushprep_jobs
            WHERE state IN ('succeeded', 'failed', 'dead', 'cancelled') AND finished_at < $1
            RETURNING source, result
        ), settled AS (
            DELETE FROM pushprep_webhook_deliveries WHERE state <> 'pending' AND created_at < $1
        )
        SELECT source, result FROM pruned
        """

    /// The texts some job's result holds.
    static let named = """
        SELECT text FROM unnest($1::text[]) AS text
        WHERE EXISTS (SELECT 1 FROM pushprep_jobs WHERE strpos(result, text) > 0)
        """
}
