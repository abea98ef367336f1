package import Foundation
import Logging
package import PushPrepCore

/// Publishes processed attachments to a bucket: each ready attachment's file and its poster go
/// under the store's prefix with ``S3Client/publish(file:key:contentType:sha256:)`` (HEAD first,
/// nothing sent when the object is already stored with the same SHA-256), and the attachment
/// comes back with the URLs the manifest gives phones.
///
/// The outputs are read from a local folder (a staging folder the caller removes afterwards):
/// the processing pipeline writes files, and an upload streams one.
package struct S3AttachmentStore: Sendable {
    /// The client, for the bucket and with the key.
    package let client: S3Client
    /// The bucket and key prefix.
    package let location: S3Location
    /// The signing time of presigned URLs (tests fix it).
    let now: @Sendable () -> Date

    /// A store writing through `client` under `location`'s prefix.
    package init(client: S3Client, location: S3Location, now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.location = location
        self.now = now
    }

    /// Publishes `attachment`'s file, poster and renditions from `directory` and returns the attachment
    /// with its URLs made as `urls` says and what was done appended to its operations
    /// (`stored KEY` or `already stored KEY`).
    ///
    /// Throws the client's errors (`storage_denied`, `storage_unavailable`, `io_error`): the
    /// caller turns them into a failed entry or a retried job. An object is visible only once
    /// whole (a PUT, or a multipart upload completed); a failed upload leaves none.
    package func publish(
        _ attachment: Attachment, from directory: String, urls: ObjectURLStyle
    ) async throws(PushPrepError) -> Attachment {
        var published = attachment
        var files = [(name: attachment.file, type: attachment.mime, sha256: attachment.sha256)]
        if let poster = attachment.poster {
            let path = "\(directory)/\(poster.file)"
            files.append((poster.file, MediaType.jpeg.mime, try InputFile.read(path: path, maxBytes: .max).sha256))
        }
        for (_, rendition) in attachment.renditions.all {
            files.append((rendition.file, rendition.mime, rendition.sha256))
        }
        for file in files {
            let key = try location.key(forFile: file.name)
            let publication = try await client.publish(
                file: "\(directory)/\(file.name)", key: key, contentType: file.type, sha256: file.sha256)
            switch publication.outcome {
            case .stored:
                let parts = publication.parts > 0 ? " in \(publication.parts) parts" : ""
                published.operations.append("stored \(key)\(parts)")
            case .alreadyStored:
                published.operations.append("already stored \(key) (same SHA-256)")
            }
        }
        try setURLs(of: &published, urls)
        return published
    }

    /// `attachment` (an entry of a manifest `process --store` wrote for this location) with the
    /// URLs made as `urls` says, now: what `payload --store` gives phones, so a presigned URL's
    /// lifetime starts when the push is built. Nothing is uploaded; a `HEAD` first checks that
    /// the file, its poster and its renditions are stored, the file and the renditions (whose
    /// URLs the Android and web keys carry) with the manifest's size and SHA-256 as
    /// ``S3Client/ObjectInfo/evidence(sha256:size:)`` decides (the server's whole-object
    /// checksum, else `x-amz-meta-sha256`, else the size alone, with a warning).
    ///
    /// Throws `invalid_payload` when an object is missing or holds other bytes (the manifest
    /// does not describe this store: another prefix, or the objects expired, or something else
    /// wrote the key), and the client's `storage_denied` or `storage_unavailable`.
    package func located(_ attachment: Attachment, urls: ObjectURLStyle) async throws(PushPrepError) -> Attachment {
        var files = [(name: attachment.file, expected: Optional((sha256: attachment.sha256, bytes: attachment.bytes)))]
        if let poster = attachment.poster { files.append((poster.file, nil)) }
        for (_, rendition) in attachment.renditions.all {
            files.append((rendition.file, (sha256: rendition.sha256, bytes: rendition.bytes)))
        }
        for file in files {
            let key = try location.key(forFile: file.name)
            guard let info = try await client.head(key) else {
                throw PushPrepError(
                    .invalidPayload,
                    "\(attachment.id): no object \(key) in the bucket \(location.bucket): the manifest was written for "
                        + "another store or prefix, or the object has expired (process the source again to store it)")
            }
            guard let expected = file.expected else { continue }
            switch info.evidence(sha256: expected.sha256, size: expected.bytes) {
            case .confirmed:
                break
            case .sizeOnly:
                client.logger.warning(
                    "storage object's SHA-256 cannot be confirmed, only its size",
                    metadata: ["key": "\(key)", "bytes": "\(info.size)"])
            case .mismatch(let found):
                throw PushPrepError(
                    .invalidPayload,
                    "\(attachment.id): the object \(key) holds other bytes than the manifest's entry: expected "
                        + "\(expected.bytes) bytes with SHA-256 \(expected.sha256), found \(found)")
            }
        }
        var located = attachment
        try setURLs(of: &located, urls)
        return located
    }

    /// Gives `attachment` and its poster their URLs: the base URL joined with the key, a
    /// presigned GET (with its expiry recorded), or the bucket's object URL. The one place
    /// that makes an object's URL: publication and `payload --store` both use it.
    package func setURLs(of attachment: inout Attachment, _ urls: ObjectURLStyle) throws(PushPrepError) {
        let address = client.configuration.address
        switch urls {
        case .baseURL(let base):
            try attachment.setURLs(expires: nil) { (name: String) throws(PushPrepError) -> String? in
                URLJoin.join(base, S3BucketAddress.encodedKey(try location.key(forFile: name)))
            }
        case .bucket:
            try attachment.setURLs(expires: nil) { (name: String) throws(PushPrepError) -> String? in
                address.objectURL(key: try location.key(forFile: name)).absoluteString
            }
        case .presigned(let seconds):
            // Whole seconds: the signature's X-Amz-Date has no fraction, nor has the manifest's time.
            let date = Date(timeIntervalSince1970: now().timeIntervalSince1970.rounded(.down))
            let signer = client.configuration.signer
            try attachment.setURLs(expires: date.addingTimeInterval(TimeInterval(seconds))) {
                (name: String) throws(PushPrepError) -> String? in
                let object = address.objectURL(key: try location.key(forFile: name))
                return try signer.presignedURL(method: "GET", url: object, expires: seconds, date: date).absoluteString
            }
        }
    }

    /// Publishes every ready entry of `manifest` from `directory`, `concurrency` at a time; an
    /// entry whose publication fails becomes a failed entry with the storage error's code and
    /// message (so the run's exit status says so, as for any failed input).
    package func publish(
        _ manifest: Manifest, from directory: String, urls: ObjectURLStyle, concurrency: Int
    ) async -> Manifest {
        var entries = manifest.attachments
        await withTaskGroup(of: (Int, ManifestEntry).self) { group in
            var next = 0
            func submit() {
                while next < entries.count, entries[next].attachment == nil { next += 1 }
                guard next < entries.count, let attachment = entries[next].attachment else { return }
                let index = next
                next += 1
                group.addTask {
                    // The entry is bound before the tuple is built: `(index, .ok(try await …))`
                    // lost its index in release builds (Swift 6.3's optimiser; every entry came
                    // back for index 0, issue 26 §0). `make lint` refuses that shape.
                    let entry: ManifestEntry
                    do throws(PushPrepError) {
                        entry = .ok(try await publish(attachment, from: directory, urls: urls))
                    } catch {
                        entry = .failed(Failure(source: attachment.source, error: error))
                    }
                    return (index, entry)
                }
            }
            for _ in 0..<max(1, concurrency) { submit() }
            for await (index, entry) in group {
                entries[index] = entry
                submit()
            }
        }
        var published = manifest
        published.attachments = entries
        return published
    }

}

/// Which URL the manifest gives an object in a bucket (issue 14 §3).
package enum ObjectURLStyle: Sendable, Equatable {
    /// `--base-url` joined with the object's key: a CDN or a public bucket in front.
    case baseURL(String)
    /// A SigV4 presigned GET, valid for this many seconds (1 to 604,800), for a private bucket.
    case presigned(seconds: Int)
    /// The bucket's own object URL, virtual-hosted or path style as configured.
    case bucket

    /// `--presign`'s value in seconds: a number with an optional unit, `s`, `m`, `h` or `d`
    /// (`3600`, `3600s`, `90m`, `24h`, `7d`); throws `invalid_settings` for anything else, and
    /// for more than 7 days (AWS refuses a longer presigned URL) or less than a second.
    package static func presignSeconds(parsing text: String) throws(PushPrepError) -> Int {
        try DurationText.seconds(
            parsing: text, option: "--presign", in: SigV4Signer.presignedExpiry,
            limit: "AWS's limit for a presigned URL is 7 days, 604800 s")
    }
}
