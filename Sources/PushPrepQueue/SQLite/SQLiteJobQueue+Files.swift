public import Foundation
import GRDB
public import PushPrepCore

/// The files jobs refer to: which uploads an unfinished job still needs (issue 26 §1.8).
extension SQLiteJobQueue {
    public func unfinishedSources(withPrefix prefix: String) async throws(PushPrepError) -> Set<String> {
        try await read("list the sources of unfinished jobs") { db in
            Set(try String.fetchAll(db, sql: FilesSQL.unfinishedSources, arguments: [prefix, prefix]))
        }
    }

    public func pruneReturningFiles(finishedBefore before: Date) async throws(PushPrepError) -> [PrunedJob] {
        try await write("prune finished jobs") { db in
            let cutoff = before.timeIntervalSince1970
            let pruned = try Row.fetchAll(db, sql: FilesSQL.pruned, arguments: [cutoff]).map { row in
                PrunedJob(source: row[0], result: row[1])
            }
            try db.execute(sql: SQL.prune, arguments: [cutoff])
            try db.execute(sql: SQL.pruneDeliveries, arguments: [cutoff])
            return pruned
        }
    }

    public func namedInResults(_ texts: [String]) async throws(PushPrepError) -> Set<String> {
        try await read("look for files named by jobs") { db in
            var named: Set<String> = []
            for text in texts where try Bool.fetchOne(db, sql: FilesSQL.named, arguments: [text]) == true {
                named.insert(text)
            }
            return named
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

    /// The jobs ``SQL.prune`` deletes (read in the same write transaction, just before).
    static let pruned = """
        SELECT source, result FROM pushprep_jobs
        WHERE state IN ('succeeded', 'failed', 'dead', 'cancelled') AND finished_at < ?
        """

    /// Whether any job's result holds the text.
    static let named = "SELECT EXISTS (SELECT 1 FROM pushprep_jobs WHERE instr(result, ?) > 0)"
}
