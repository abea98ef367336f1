import Foundation
import Logging
import NIOPosix

extension Processor {
    /// A fetcher for this run's remote inputs, or nil when there are none.
    func makeFetcher(for inputs: [InputItem]) -> RemoteFetcher? {
        guard inputs.contains(where: \.isRemote) else { return nil }
        return RemoteFetcher(settings: remote, logger: logger)
    }

    /// Fetches a remote input into the out directory's cache folder, processes it like a file,
    /// and records the URL's validators; on a 304 the earlier output is reused as it is.
    func processRemote(_ item: InputItem, fetcher: RemoteFetcher, pool: NIOThreadPool) async -> ManifestEntry {
        var logger = self.logger
        logger[metadataKey: "source"] = "\(item.source)"
        let cache = FetchCache(outputDirectory: outputDirectory)
        let settingsKey = FetchCache.settingsKey(settings)
        do throws(PushPrepError) {
            try cache.prepare()
            let cached = cache.record(for: item.source, settingsKey: settingsKey, outputDirectory: outputDirectory)
            let outcome = try await fetcher.fetch(
                item.source, into: cache.directory, maxInputBytes: settings.maxInputBytes,
                validators: cached?.validators)
            switch outcome {
            case .notModified(let finalURL, let validators):
                guard let cached else {
                    throw PushPrepError(.fetchFailed, "HTTP 304 from \(finalURL) to an unconditional request")
                }
                var attachment = cached.attachment
                attachment.url = settings.baseURL.map { URLJoin.join($0, attachment.file) }
                attachment.input.url = finalURL
                attachment.input.status = 304
                attachment.operations = [
                    "revalidated \(finalURL): 304 Not Modified", "reused existing output \(attachment.file)",
                ]
                cache.store(
                    .init(source: item.source, settingsKey: settingsKey, validators: validators, attachment: attachment)
                )
                logger.debug("revalidated", metadata: ["id": "\(attachment.id)"])
                return .ok(attachment)
            case .downloaded(let download):
                defer { unlink(download.path) }
                let local = InputItem(source: item.source, path: download.path)
                let entry: ManifestEntry
                do {
                    entry = try await pool.runIfActive { self.processOne(local) }
                } catch {
                    throw PushPrepError(.ioError, "\(error)")
                }
                guard case .ok(var attachment) = entry else { return entry }
                attachment.input.url = download.finalURL
                attachment.input.status = download.status
                attachment.operations.insert(
                    "fetched \(download.finalURL) (HTTP \(download.status), \(download.size) bytes)", at: 0)
                if let detected = MediaType(rawValue: attachment.input.type) {
                    attachment.warnings += ContentTypeCheck.warnings(
                        contentType: download.contentType, detected: detected)
                }
                cache.store(
                    .init(
                        source: item.source, settingsKey: settingsKey, validators: download.validators,
                        attachment: attachment))
                return .ok(attachment)
            }
        } catch {
            logger.info("failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
            return .failed(Failure(source: item.source, error: error))
        }
    }
}
