import Crypto
public import Foundation
public import PushPrepCore

/// PushPrep's jobs: one input processed with the settings given at enqueue time.
public enum ProcessingJobs {
    /// The spec for processing `source` with `settings`. Local paths are made absolute (the
    /// worker may run elsewhere); the dedup key is the SHA-256 of the source and the settings,
    /// so the same input with the same settings is not queued twice. Settings or numbers out of
    /// range (``ProcessingSettings/validate()``, ``JobSpec/validate()``), or settings that cannot
    /// be encoded, throw `invalid_settings`; a source with control characters, or a URL the
    /// worker would not fetch, throws `invalid_request`: nothing is queued that a worker would
    /// refuse.
    public static func spec(
        source: String, settings: ProcessingSettings, priority: Int = 0, delay: Duration = .zero,
        maxAttempts: Int = 5, timeout: Duration? = nil,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(PushPrepError) -> JobSpec {
        try spec(
            source: source, payload: try payload(settings), priority: priority, delay: delay, maxAttempts: maxAttempts,
            timeout: timeout, currentDirectory: currentDirectory)
    }

    /// One spec per source, as ``spec(source:settings:priority:delay:maxAttempts:timeout:currentDirectory:)``
    /// makes it, with the settings validated and encoded once for all of them.
    public static func specs(
        sources: [String], settings: ProcessingSettings, priority: Int = 0, delay: Duration = .zero,
        maxAttempts: Int = 5, timeout: Duration? = nil,
        currentDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(PushPrepError) -> [JobSpec] {
        let payload = try payload(settings)
        var specs: [JobSpec] = []
        for source in sources {
            specs.append(
                try spec(
                    source: source, payload: payload, priority: priority, delay: delay, maxAttempts: maxAttempts,
                    timeout: timeout, currentDirectory: currentDirectory))
        }
        return specs
    }

    /// The job's payload: `settings`, validated, with `jobs` 1, as JSON with sorted keys (the
    /// dedup key hashes it).
    private static func payload(_ settings: ProcessingSettings) throws(PushPrepError) -> String {
        var settings = settings
        // How many inputs run at once does not change an output; workers decide.
        settings.jobs = 1
        try settings.validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(settings), as: UTF8.self)
        } catch {
            throw PushPrepError(.invalidSettings, "cannot encode the job's settings: \(error)")
        }
    }

    /// The spec for `source` with a payload made by ``payload(_:)``.
    private static func spec(
        source: String, payload: String, priority: Int, delay: Duration, maxAttempts: Int, timeout: Duration?,
        currentDirectory: String
    ) throws(PushPrepError) -> JobSpec {
        try UntrustedText.check(source, field: "a job's source")
        let source = try absoluteSource(source, currentDirectory: currentDirectory)
        let key = SHA256.hash(data: Data("\(source)\n\(payload)".utf8)).hexString
        let spec = JobSpec(
            source: source, payload: payload, dedupKey: key, priority: priority, delay: delay,
            maxAttempts: maxAttempts, timeout: timeout)
        try spec.validate()
        return spec
    }

    /// URLs parsed and stored in their normalised form (``RemoteURL``: the scheme lowercase,
    /// the host in its one canonical spelling, what must be percent-encoded encoded), so that
    /// what is stored, printed and deduplicated is what the worker fetches, never the raw text;
    /// a URL the worker would refuse is `invalid_request` now. Absolute paths as they are;
    /// relative paths resolved against `currentDirectory` and standardized.
    static func absoluteSource(_ source: String, currentDirectory: String) throws(PushPrepError) -> String {
        if InputItem(source: source, path: source).isRemote {
            do {
                return try RemoteURL(source).text
            } catch {
                throw PushPrepError(.invalidRequest, "a job's source: \(error.message)")
            }
        }
        if source.hasPrefix("/") { return source }
        return URL(fileURLWithPath: source, relativeTo: URL(fileURLWithPath: currentDirectory, isDirectory: true))
            .standardizedFileURL.path
    }
}
