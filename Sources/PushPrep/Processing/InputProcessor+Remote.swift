import Foundation
import Logging
import NIOPosix
import PushPrepCore
import PushPrepMedia
import PushPrepPayload
import PushPrepRemote

extension InputProcessor {
    /// Fetches a remote input into the out directory's cache folder, processes it like a file
    /// (on `pool`), and records the URL's validators; on a 304 the earlier output is reused as
    /// it is. A stop abandons the fetch and removes what it downloaded.
    func processRemote(_ item: InputItem, fetcher: RemoteFetcher, pool: NIOThreadPool) async -> ManifestEntry {
        let cache = FetchCache(outputDirectory: outputDirectory)
        let settingsKey = FetchCache.settingsKey(settings)
        do throws(PushPrepError) {
            try control?.check()
            try cache.prepare()
            let cached = cache.record(for: item.source, settingsKey: settingsKey, outputDirectory: outputDirectory)
            let outcome = try await fetch(
                item.source, with: fetcher, into: cache.directory, validators: cached?.validators)
            switch outcome {
            case .notModified(let finalURL, let validators):
                guard let cached else {
                    throw PushPrepError(.fetchFailed, "HTTP 304 from \(finalURL) to an unconditional request")
                }
                var attachment = cached.attachment
                attachment.setURLs(baseURL: settings.baseURL)
                attachment.input.url = finalURL
                attachment.input.status = 304
                attachment.operations = [
                    "revalidated \(finalURL): 304 Not Modified", "reused existing output \(attachment.file)",
                ]
                cache.store(
                    .init(source: item.source, settingsKey: settingsKey, validators: validators, attachment: attachment)
                )
                logger.debug("revalidated", metadata: ["source": "\(item.source)", "id": "\(attachment.id)"])
                return .ok(attachment)
            case .downloaded(let download):
                defer { unlink(download.path) }
                // The download is PushPrep's own file in the cache folder, not a queued path.
                var processor = self
                processor.sources = .any
                let entry = await processor.onPool(pool, InputItem(source: item.source, path: download.path))
                guard case .ok(var attachment) = entry else { return entry }
                attachment.input.url = download.finalURL
                attachment.input.status = download.status
                attachment.operations.insert(
                    "fetched \(download.finalURL) (HTTP \(download.status), \(download.size) bytes)", at: 0)
                if let detected = MediaType(rawValue: attachment.input.type),
                    let mismatch = ContentTypeCheck.mismatch(contentType: download.contentType, detected: detected)
                {
                    attachment.warnings.append(AttachmentWarning(mismatch.processingWarning))
                }
                cache.store(
                    .init(
                        source: item.source, settingsKey: settingsKey, validators: download.validators,
                        attachment: attachment))
                return .ok(attachment)
            }
        } catch {
            return failed(item, error)
        }
    }

    /// Processes a local file (or `file`, already opened and hashed) on one of `pool`'s threads
    /// (libvips and libav calls block); with ``decoders``, only opens, checks and hashes it there
    /// (as the in-process path reads it) and has them decode it.
    func onPool(_ pool: NIOThreadPool, _ item: InputItem, file: InputFile? = nil) async -> ManifestEntry {
        do {
            guard let decoders, file == nil else {
                return try await pool.runIfActive { self.processOne(item, file: file) }
            }
            let read = try await pool.runIfActive {
                Result { () throws(PushPrepError) in
                    try control?.check()
                    return try InputFile.read(path: item.path, maxBytes: settings.maxInputBytes, policy: sources)
                }
            }
            switch read {
            case .success(let file):
                return await decoders.decode(
                    item, file: file, settings: settings, outputDirectory: outputDirectory, memory: memory,
                    control: control)
            case .failure(let error):
                return failed(item, error)
            }
        } catch {
            return failed(item, PushPrepError(.ioError, "the processing session has been shut down (\(error))"))
        }
    }

    /// Fetches `source`, cancelling the fetch as soon as the control is stopped (or the calling
    /// task is cancelled). After a stop the outcome is dropped, its download removed, and the
    /// stop's error thrown, whatever the fetch ended with.
    private func fetch(
        _ source: String, with fetcher: RemoteFetcher, into directory: String, validators: RemoteFetcher.Validators?
    ) async throws(PushPrepError) -> RemoteFetcher.Outcome {
        let maxInputBytes = settings.maxInputBytes
        let fetch = { @Sendable () async -> Result<RemoteFetcher.Outcome, PushPrepError> in
            do throws(PushPrepError) {
                return .success(
                    try await fetcher.fetch(
                        source, into: directory, maxInputBytes: maxInputBytes, validators: validators))
            } catch {
                return .failure(error)
            }
        }
        let result = if let control { await control.cancellingOnStop(fetch) } else { await fetch() }
        if let reason = control?.reason {
            if case .success(.downloaded(let download)) = result { unlink(download.path) }
            throw reason.error
        }
        return try result.get()
    }
}
