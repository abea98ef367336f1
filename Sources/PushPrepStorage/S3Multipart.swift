import Crypto
import Foundation
import Logging
import NIOCore
import NIOFileSystem
import NIOHTTP1
import PushPrepCore

/// Multipart uploads, for files above ``S3Configuration/Limits/multipartThreshold``:
/// `CreateMultipartUpload` (with the object's headers and metadata), `UploadPart` for each part,
/// at most ``S3Configuration/Limits/parallelParts`` at once, then `CompleteMultipartUpload` with
/// the ETags in order.
///
/// Each part is streamed from its range of the file, signed with its own payload hash and sent
/// with that hash again as `x-amz-checksum-sha256` (the range is read once to hash it, then
/// again as it is sent): the upload is created with `x-amz-checksum-algorithm: SHA256`, so the
/// server must compare each part's bytes with its checksum and refuse a part that differs
/// (`BadDigest`), even a server that does not compare the signed payload hash with the body.
/// `CompleteMultipartUpload` lists each part's `ChecksumSHA256` beside its ETag (a server that
/// kept other bytes for a part refuses the list), and when the answer gives the object's
/// checksum, the checksum of the parts' checksums (`<base64>-<parts>`, S3's composite checksum),
/// it must be the one computed here. (A composite checksum is not the object's SHA-256, and S3's
/// full-object checksums are CRCs only, so the object's SHA-256 is stored as `x-amz-meta-sha256`.)
///
/// Parts stay billed until the upload is completed or aborted, so any failure, cancellation
/// included, ends with `AbortMultipartUpload`, sent from a task of its own so that it runs even
/// when the caller's task was cancelled. Should the abort itself fail, a warning names the
/// upload id; a bucket lifecycle rule (`AbortIncompleteMultipartUpload`) is the backstop.
extension S3Client {
    /// One part: its number (from 1) and byte range.
    struct Part: Sendable {
        var number: Int
        var range: Range<Int64>
    }

    /// The parts of a file of `size` bytes: ``S3Configuration/Limits/partSize`` each (raised,
    /// in whole MiB, when that would need more than 10,000 parts), the last one shorter.
    static func parts(size: Int, partSize: Int) -> [Part] {
        let mebibyte = 1024 * 1024
        let smallest = (size + S3Configuration.Limits.maximumParts - 1) / S3Configuration.Limits.maximumParts
        let length = max(partSize, (smallest + mebibyte - 1) / mebibyte * mebibyte)
        return stride(from: 0, to: max(size, 1), by: length).enumerated().map { index, start in
            Part(number: index + 1, range: Int64(start)..<Int64(min(start + length, size)))
        }
    }

    func uploadMultipart(
        file path: String, key: String, size: Int, sha256: String, headers: [(name: String, value: String)],
        counter: RequestCounter
    ) async throws(PushPrepError) -> Int {
        let name = "\(configuration.bucket)/\(key)"
        let created = try await send(
            S3Request(
                method: .POST, key: key, query: "uploads=", headers: headers + [("x-amz-checksum-algorithm", "SHA256")],
                operation: "CreateMultipartUpload \(name)", errorMayHide200: true),
            counter: counter)
        guard
            let uploadID = S3XML.fields(of: created.body, root: "InitiateMultipartUploadResult", names: ["UploadId"])?[
                "UploadId"], !uploadID.isEmpty
        else {
            throw PushPrepError(.storageUnavailable, "CreateMultipartUpload \(name): the answer holds no UploadId")
        }
        let upload = Self.queryEncoded(uploadID)
        let parts = Self.parts(size: size, partSize: configuration.limits.partSize)
        do throws(PushPrepError) {
            let sent = try await uploadParts(
                parts, file: path, key: key, upload: upload, operation: name, counter: counter)
            guard !Task.isCancelled else {
                throw PushPrepError(
                    .storageUnavailable, "CompleteMultipartUpload \(name): interrupted (the task was cancelled)")
            }
            var document = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            for (part, uploaded) in zip(parts, sent) {
                document +=
                    "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XML.escaped(uploaded.etag))</ETag>"
                    + "<ChecksumSHA256>\(uploaded.checksum)</ChecksumSHA256></Part>"
            }
            document += "</CompleteMultipartUpload>"
            let body = Array(document.utf8)
            let completed: S3Response
            do throws(PushPrepError) {
                completed = try await send(
                    S3Request(
                        method: .POST, key: key, query: "uploadId=\(upload)",
                        headers: [("Content-Type", "application/xml")], body: .bytes(body),
                        payloadHash: SHA256.hash(data: body).hexString, operation: "CompleteMultipartUpload \(name)",
                        errorMayHide200: true),
                    counter: counter)
            } catch {
                // The answer to a Complete that succeeded may be lost; its retry then finds no such
                // upload. The object itself says whether it was stored.
                if case .found(let object)? = try? await headObject(key, counter: counter),
                    Self.isConfirmed(object.evidence(sha256: sha256, size: size))
                {
                    logger.debug("storage multipart upload completed, its answer lost", metadata: ["key": "\(key)"])
                    return parts.count
                }
                throw error
            }
            do throws(PushPrepError) {
                try Self.checkComposite(completed, parts: sent, operation: "CompleteMultipartUpload \(name)")
            } catch {
                // The object exists, with the right x-amz-meta-sha256 and the wrong bytes: it must
                // not be taken for stored by the next publication's HEAD.
                await deleteObject(key: key, operation: name, counter: counter)
                throw error
            }
        } catch {
            await abort(key: key, upload: upload, operation: name, counter: counter)
            throw error
        }
        return parts.count
    }

    /// A part the server accepted: its ETag and the base64 SHA-256 it was sent with.
    struct UploadedPart: Sendable {
        var etag: String
        var checksum: String
    }

    /// S3's composite checksum of a multipart object: the base64 SHA-256 of the parts' SHA-256
    /// digests one after the other, then `-` and the number of parts.
    static func compositeChecksum(_ parts: [UploadedPart]) -> String {
        var hasher = SHA256()
        for part in parts { hasher.update(data: Data(base64Encoded: part.checksum) ?? Data()) }
        return "\(Data(hasher.finalize()).base64EncodedString())-\(parts.count)"
    }

    /// Refuses a `CompleteMultipartUpload` answer whose `<ChecksumSHA256>` is not the composite
    /// checksum of the parts as sent (a server that gives none is not checked here: it compared
    /// each part's checksum already).
    static func checkComposite(
        _ response: S3Response, parts: [UploadedPart], operation: String
    ) throws(PushPrepError) {
        guard
            let given = S3XML.fields(
                of: response.body, root: "CompleteMultipartUploadResult", names: ["ChecksumSHA256"])?["ChecksumSHA256"],
            !given.isEmpty
        else { return }
        let expected = compositeChecksum(parts)
        // Some servers give the composite checksum without its `-N`.
        guard given == expected || "\(given)-\(parts.count)" == expected else {
            throw PushPrepError(
                .storageUnavailable,
                "\(operation): the stored object's checksum is \(given.prefix(96)), not \(expected) (the parts' SHA-256 "
                    + "checksums): the server holds other bytes than were sent")
        }
    }

    /// Uploads every part, a bounded number at a time; the parts as sent, in part order. On
    /// the first failure the other parts are cancelled and that failure is thrown.
    private func uploadParts(
        _ parts: [Part], file path: String, key: String, upload: String, operation: String, counter: RequestCounter
    ) async throws(PushPrepError) -> [UploadedPart] {
        let parallel = configuration.limits.parallelParts
        let result: Result<[UploadedPart], PushPrepError> = await withTaskGroup(
            of: (Int, Result<UploadedPart, PushPrepError>).self
        ) { group in
            var next = 0
            func start(_ part: Part) {
                group.addTask {
                    do throws(PushPrepError) {
                        let uploaded = try await self.uploadPart(
                            part, file: path, key: key, upload: upload, operation: operation, counter: counter)
                        return (part.number, .success(uploaded))
                    } catch {
                        return (part.number, .failure(error))
                    }
                }
            }
            while next < min(parallel, parts.count) {
                start(parts[next])
                next += 1
            }
            var uploaded = [UploadedPart?](repeating: nil, count: parts.count)
            var failure: PushPrepError?
            while let (number, outcome) = await group.next() {
                switch outcome {
                case .success(let part):
                    uploaded[number - 1] = part
                    if failure == nil, next < parts.count {
                        start(parts[next])
                        next += 1
                    }
                case .failure(let error):
                    // The first failure is the cause; the cancelled parts' errors are its echoes.
                    if failure == nil {
                        failure = error
                        group.cancelAll()
                    }
                }
            }
            if let failure { return .failure(failure) }
            return .success(uploaded.compactMap { $0 })
        }
        return try result.get()
    }

    /// Sends one part with its SHA-256 twice: as the signed payload hash and as
    /// `x-amz-checksum-sha256`, the checksum the upload was created for, which every server that
    /// takes it compares with the bytes it received. A server that answers with another checksum
    /// kept other bytes: `storage_unavailable`.
    private func uploadPart(
        _ part: Part, file path: String, key: String, upload: String, operation: String, counter: RequestCounter
    ) async throws(PushPrepError) -> UploadedPart {
        let name = "UploadPart \(part.number) of \(operation)"
        let hash = try await Self.sha256(of: path, range: part.range, operation: name)
        guard let digest = Self.digestBytes(hex: hash) else {
            throw PushPrepError(.ioError, "\(name): the part's SHA-256 could not be computed")
        }
        let checksum = Data(digest).base64EncodedString()
        let response = try await send(
            S3Request(
                method: .PUT, key: key, query: "partNumber=\(part.number)&uploadId=\(upload)",
                headers: [("x-amz-checksum-sha256", checksum)], body: .file(path: path, range: part.range),
                payloadHash: hash, operation: name),
            counter: counter)
        guard let etag = response.headers.first(name: "etag"), !etag.isEmpty else {
            throw PushPrepError(.storageUnavailable, "\(name): the answer has no ETag")
        }
        if let echoed = response.headers.first(name: "x-amz-checksum-sha256"), !echoed.isEmpty, echoed != checksum {
            throw PushPrepError(
                .storageUnavailable,
                "\(name): the server computed the checksum \(echoed.prefix(96)) for the part, not \(checksum): it received other "
                    + "bytes than were sent")
        }
        return UploadedPart(etag: etag, checksum: checksum)
    }

    /// Aborts the upload from a task of its own (the caller's may be cancelled), so that no part
    /// stays stored and billed. A 404 means it is already gone.
    private func abort(key: String, upload: String, operation: String, counter: RequestCounter) async {
        let request = S3Request(
            method: .DELETE, key: key, query: "uploadId=\(upload)", operation: "AbortMultipartUpload \(operation)",
            acceptedStatuses: [404])
        if let outcome = await sendDetached(request, counter: counter) {
            logger.warning(
                "storage multipart upload not aborted; its parts stay stored until a lifecycle rule removes them",
                metadata: ["upload": "\(upload)", "error": "\(outcome.message)"])
        } else {
            logger.debug("storage multipart upload aborted", metadata: ["operation": "\(operation)"])
        }
    }

    /// Deletes an object that was stored wrong, from a task of its own as ``abort(key:upload:operation:counter:)``
    /// does; a failure is a warning naming the key.
    private func deleteObject(key: String, operation: String, counter: RequestCounter) async {
        let request = S3Request(
            method: .DELETE, key: key, operation: "DeleteObject \(operation)", acceptedStatuses: [404])
        if let outcome = await sendDetached(request, counter: counter) {
            logger.warning(
                "storage object stored with other bytes could not be deleted",
                metadata: ["key": "\(key)", "error": "\(outcome.message)"])
        }
    }

    /// Sends a clean-up request from a task of its own, so that it goes out even when the caller's
    /// task is cancelled (the reason it cleans up); the error, or nil once it was answered.
    private func sendDetached(_ request: S3Request, counter: RequestCounter) async -> PushPrepError? {
        await Task { () async -> PushPrepError? in
            do throws(PushPrepError) {
                _ = try await self.send(request, counter: counter)
                return nil
            } catch {
                return error
            }
        }.value
    }

    /// The hex SHA-256 of a range of the file, read in chunks.
    static func sha256(of path: String, range: Range<Int64>, operation: String) async throws(PushPrepError) -> String {
        do {
            return try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                var hasher = SHA256()
                for try await chunk in handle.readChunks(in: range, chunkLength: chunkLength) {
                    chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                }
                return hasher.finalize().hexString
            }
        } catch let error as FileSystemError {
            throw PushPrepError(.ioError, "\(operation): cannot read \(path): \(error.message)")
        } catch {
            throw PushPrepError(.storageUnavailable, "\(operation): interrupted while reading \(path)")
        }
    }

    /// An upload id as a query value: RFC 3986 unreserved characters kept, the rest `%XX`.
    static func queryEncoded(_ text: String) -> String {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
