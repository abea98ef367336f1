import Foundation
package import PushPrepCore
package import PushPrepStorage

/// Where a worker publishes a job's outputs once its lease is confirmed: the one step that
/// differs between an out directory and a bucket, so the handler does not branch on it.
package protocol OutputStore: Sendable {
    /// The folder that holds each attempt's private staging folder.
    var stagingRoot: String { get }

    /// Publishes `attachment`'s file, poster and renditions from `staging`; returns the attachment as the
    /// manifest gives it (its URLs made for this store; `baseURL` is the job's `--base-url`).
    /// Throws `storage_denied` (permanent), `storage_unavailable` or `io_error` (retried).
    func publish(
        _ attachment: Attachment, from staging: String, baseURL: String?
    ) async throws(PushPrepError) -> Attachment
}

/// The out directory: staged in `OUT/.staging/` (the same file system, so that rename(2) can
/// publish), published by atomic rename. URLs were set from the job's base URL when processed.
package struct DirectoryOutputStore: OutputStore {
    /// The out directory.
    package let outputDirectory: String

    /// A store publishing into `outputDirectory`.
    package init(outputDirectory: String) {
        self.outputDirectory = outputDirectory
    }

    package var stagingRoot: String { "\(outputDirectory)/.staging" }

    package func publish(
        _ attachment: Attachment, from staging: String, baseURL: String?
    ) async throws(PushPrepError) -> Attachment {
        try Staging.publish(
            [attachment.file] + attachment.companionFiles.map(\.file), from: staging, to: outputDirectory)
        return attachment
    }
}

/// A bucket: staged in a local folder of the worker's (`stagingRoot`), published with
/// ``S3AttachmentStore`` (HEAD, then a PUT or a multipart upload only when the object is not
/// there yet). A job's `--base-url` names the URLs when it has one, else the worker's `urls`.
package struct BucketOutputStore: OutputStore {
    /// The bucket's store.
    package let store: S3AttachmentStore
    /// The URLs of jobs enqueued without a base URL: presigned or the bucket's.
    package let urls: ObjectURLStyle
    package let stagingRoot: String

    /// A store publishing through `store`, staging under `stagingRoot`.
    package init(store: S3AttachmentStore, urls: ObjectURLStyle, stagingRoot: String) {
        self.store = store
        self.urls = urls
        self.stagingRoot = stagingRoot
    }

    package func publish(
        _ attachment: Attachment, from staging: String, baseURL: String?
    ) async throws(PushPrepError) -> Attachment {
        try await store.publish(attachment, from: staging, urls: baseURL.map { .baseURL($0) } ?? urls)
    }
}
