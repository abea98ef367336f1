import Crypto
import Foundation
package import PushPrepCore

/// What PushPrep remembers about URLs it fetched into an out directory, so that the next run
/// revalidates (`If-None-Match` / `If-Modified-Since`) instead of downloading again, and reuses
/// the output on a 304.
///
/// One small JSON file per URL under `<out>/.pushprep-cache/`, written atomically, so concurrent
/// jobs never contend for one file and a crash never leaves half a record.
package struct FetchCache: Sendable {
    /// One URL's record.
    package struct Record: Sendable, Codable, Equatable {
        /// The URL as given.
        var source: String
        /// The effective settings the output was made with; another value means reprocess.
        var settingsKey: String
        /// The validators the server sent.
        package var validators: RemoteFetcher.Validators
        /// The attachment made from the download.
        package var attachment: Attachment

        /// Every field.
        package init(
            source: String, settingsKey: String, validators: RemoteFetcher.Validators, attachment: Attachment
        ) {
            self.source = source
            self.settingsKey = settingsKey
            self.validators = validators
            self.attachment = attachment
        }
    }

    /// The cache directory's name inside the out directory.
    package static let directoryName = ".pushprep-cache"

    /// `<out>/.pushprep-cache`.
    package let directory: String

    package init(outputDirectory: String) {
        directory = "\(outputDirectory)/\(Self.directoryName)"
    }

    /// Creates the directory when missing and removes temporaries of dead processes.
    package func prepare() throws(PushPrepError) {
        try Directories.create(directory)
        AtomicFile.removeStaleTemporaries(in: directory)
    }

    /// The record for `source` made with `settingsKey`, when its output is still there intact.
    package func record(for source: String, settingsKey: String, outputDirectory: String) -> Record? {
        guard let data = FileManager.default.contents(atPath: path(for: source)),
            let record = try? JSONDecoder().decode(Record.self, from: data),
            record.source == source, record.settingsKey == settingsKey, !record.validators.isEmpty
        else { return nil }
        let output = "\(outputDirectory)/\(record.attachment.file)"
        guard let bytes = FileManager.default.contents(atPath: output), bytes.count == record.attachment.bytes,
            SHA256.hash(data: bytes).hexString == record.attachment.sha256
        else { return nil }
        return record
    }

    /// Stores `record` atomically. A record that cannot be written only costs a download later.
    package func store(_ record: Record) {
        guard !record.validators.isEmpty else {
            unlink(path(for: record.source))
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(record) else { return }
        _ = try? AtomicFile.write(Array(data), to: path(for: record.source), reuseIdentical: false)
    }

    private func path(for source: String) -> String {
        "\(directory)/\(SHA256.hash(data: Array(source.utf8)).hexString).json"
    }

    /// A key over every setting that can change an output: the settings as written in the
    /// manifest, without those that change neither the bytes nor the entry (`jobs`, `baseURL`).
    package static func settingsKey(_ settings: ProcessingSettings) -> String {
        var settings = settings
        settings.jobs = 1
        settings.baseURL = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(settings)) ?? Data()
        return "pipeline=\(ProcessingSettings.pipelineVersion);" + String(decoding: data, as: UTF8.self)
    }
}
