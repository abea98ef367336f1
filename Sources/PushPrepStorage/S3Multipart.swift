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
/// Each part is streamed from its range of the file and signed with its own payload hash (the
/// range is read once to hash it, then again as it is sent), so the server checks every part's
/// bytes. (`x-amz-checksum-sha256` cannot cover the whole object here: S3 keeps a checksum of the
/// parts' checksums for multipart objects, and its full-object checksums are CRCs only; the
/// object's SHA-256 is still stored as `x-amz-meta-sha256`.)
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
                method: .POST, key: key, query: "uploads=", headers: headers,
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
            let etags = try await uploadParts(
                parts, file: path, key: key, upload: upload, operation: name, counter: counter)
            guard !Task.isCancelled else {
                throw PushPrepError(
                    .storageUnavailable, "CompleteMultipartUpload \(name): interrupted (the task was cancelled)")
            }
            var document = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            for (part, etag) in zip(parts, etags) {
                document += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(S3XML.escaped(etag))</ETag></Part>"
            }
            document += "</CompleteMultipartUpload>"
            let body = Array(document.utf8)
            do throws(PushPrepError) {
                _ = try await send(
                    S3Request(
                        method: .POST, key: key, query: "uploadId=\(upload)",
                        headers: [("Content-Type", "application/xml")], body: .bytes(body),
                        payloadHash: SHA256.hash(data: body).hexString, operation: "CompleteMultipartUpload \(name)",
                        errorMayHide200: true),
                    counter: counter)
            } catch {
                // The answer to a Complete that succeeded may be lost; its retry then finds no such
                // upload. The object itself says whether it was stored.
                if case .found(let object)? = try? await headObject(key, counter: counter), object.sha256 == sha256 {
                    logger.debug("storage multipart upload completed, its answer lost", metadata: ["key": "\(key)"])
                    return parts.count
                }
                throw error
            }
        } catch {
            await abort(key: key, upload: upload, operation: name, counter: counter)
            throw error
        }
        return parts.count
    }

    /// Uploads every part, a bounded number at a time; the ETags in part order. On the first
    /// failure the other parts are cancelled and that failure is thrown.
    private func uploadParts(
        _ parts: [Part], file path: String, key: String, upload: String, operation: String, counter: RequestCounter
    ) async throws(PushPrepError) -> [String] {
        let parallel = configuration.limits.parallelParts
        let result: Result<[String], PushPrepError> = await withTaskGroup(
            of: (Int, Result<String, PushPrepError>).self
        ) { group in
            var next = 0
            func start(_ part: Part) {
                group.addTask {
                    do throws(PushPrepError) {
                        let etag = try await self.uploadPart(
                            part, file: path, key: key, upload: upload, operation: operation, counter: counter)
                        return (part.number, .success(etag))
                    } catch {
                        return (part.number, .failure(error))
                    }
                }
            }
            while next < min(parallel, parts.count) {
                start(parts[next])
                next += 1
            }
            var etags = [String?](repeating: nil, count: parts.count)
            var failure: PushPrepError?
            while let (number, outcome) = await group.next() {
                switch outcome {
                case .success(let etag):
                    etags[number - 1] = etag
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
            return .success(etags.compactMap { $0 })
        }
        return try result.get()
    }

    private func uploadPart(
        _ part: Part, file path: String, key: String, upload: String, operation: String, counter: RequestCounter
    ) async throws(PushPrepError) -> String {
        let name = "UploadPart \(part.number) of \(operation)"
        let hash = try await Self.sha256(of: path, range: part.range, operation: name)
        let response = try await send(
            S3Request(
                method: .PUT, key: key, query: "partNumber=\(part.number)&uploadId=\(upload)",
                body: .file(path: path, range: part.range), payloadHash: hash, operation: name),
            counter: counter)
        guard let etag = response.headers.first(name: "etag"), !etag.isEmpty else {
            throw PushPrepError(.storageUnavailable, "\(name): the answer has no ETag")
        }
        return etag
    }

    /// Aborts the upload from a task of its own (the caller's may be cancelled), so that no part
    /// stays stored and billed. A 404 means it is already gone.
    private func abort(key: String, upload: String, operation: String, counter: RequestCounter) async {
        let request = S3Request(
            method: .DELETE, key: key, query: "uploadId=\(upload)", operation: "AbortMultipartUpload \(operation)",
            acceptedStatuses: [404])
        let outcome = await Task { () async -> PushPrepError? in
            do throws(PushPrepError) {
                _ = try await self.send(request, counter: counter)
                return nil
            } catch {
                return error
            }
        }.value
        if let outcome {
            logger.warning(
                "storage multipart upload not aborted; its parts stay stored until a lifecycle rule removes them",
                metadata: ["upload": "\(upload)", "error": "\(outcome.message)"])
        } else {
            logger.debug("storage multipart upload aborted", metadata: ["operation": "\(operation)"])
        }
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
