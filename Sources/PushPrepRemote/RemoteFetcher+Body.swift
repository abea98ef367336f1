import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PushPrepCore
import SystemPackage

/// The response body, streamed into a temporary file under the download caps.
extension RemoteFetcher {
    /// Streams `response`'s body into a new temporary file in `directory`, hashing it and
    /// enforcing the `Content-Length` and streamed-size caps for the detected kind.
    func stream(
        _ response: HTTPClientResponse, from url: RemoteURL, address: IPAddress, into directory: String,
        maxInputBytes: Int
    ) async throws(PushPrepError) -> Download {
        var cap = min(settings.largestDownloadCap, maxInputBytes)
        let declared = response.headers.first(name: "content-length").flatMap { Int($0) }
        if let declared, declared > cap {
            throw PushPrepError(
                .inputTooLarge, "\(url) is \(declared) bytes (Content-Length), over the limit of \(cap) bytes")
        }
        let path = Self.temporaryPath(in: directory, extension: url.pathExtension)
        let file = try TemporaryWriter(path: path)
        var hasher = SHA256()
        var prefix: [UInt8] = []
        var total = 0
        var kindKnown = false
        do {
            for try await buffer in response.body {
                total += buffer.readableBytes
                if prefix.count < MediaDetector.prefixLength {
                    prefix.append(
                        contentsOf: buffer.readableBytesView.prefix(MediaDetector.prefixLength - prefix.count))
                }
                if !kindKnown && prefix.count >= MediaDetector.prefixLength {
                    kindKnown = true
                    cap = min(settings.downloadCap(for: MediaDetector.detect(prefix)?.kind), maxInputBytes)
                    if let declared, declared > cap {
                        throw PushPrepError(
                            .inputTooLarge,
                            "\(url) is \(declared) bytes (Content-Length), over the limit of \(cap) bytes")
                    }
                }
                guard total <= cap else {
                    throw PushPrepError(
                        .inputTooLarge, "\(url) sent more than the limit of \(cap) bytes; the download was stopped")
                }
                try buffer.withUnsafeReadableBytes { raw throws(PushPrepError) in
                    hasher.update(bufferPointer: raw)
                    try file.write(raw)
                }
            }
            if !kindKnown {
                cap = min(settings.downloadCap(for: MediaDetector.detect(prefix)?.kind), maxInputBytes)
                guard total <= cap else {
                    throw PushPrepError(.inputTooLarge, "\(url) is \(total) bytes, over the limit of \(cap) bytes")
                }
            }
            try file.close()
        } catch {
            file.discard()
            let mapped: PushPrepError
            if let error = error as? PushPrepError {
                mapped = error
            } else {
                mapped = classify(error, url: url, address: address).0
            }
            throw mapped
        }
        return Download(
            path: path,
            size: total,
            sha256: hasher.finalize().hexString,
            prefix: prefix,
            finalURL: url.text,
            status: Int(response.status.code),
            contentType: response.headers.first(name: "content-type"),
            contentLength: declared,
            validators: Self.validators(of: response, fallback: nil)
        )
    }

    static func validators(of response: HTTPClientResponse, fallback: Validators?) -> Validators {
        let fresh = Validators(
            etag: response.headers.first(name: "etag"), lastModified: response.headers.first(name: "last-modified"))
        return fresh.isEmpty ? (fallback ?? fresh) : fresh
    }

    /// A temporary name that ``AtomicFile/removeStaleTemporaries(in:)`` recognises, ending in
    /// the URL's extension so that the extension check sees what the URL said.
    static func temporaryPath(in directory: String, extension ext: String) -> String {
        AtomicFile.temporaryPath(in: directory, name: ext.isEmpty ? "download" : "download.\(ext)")
    }
}

/// A file written chunk by chunk and removed unless closed successfully.
private final class TemporaryWriter {
    private let path: String
    private var file: SystemPackage.FileDescriptor?

    init(path: String) throws(PushPrepError) {
        self.path = path
        file = try systemCall("cannot create \(path)") {
            try SystemPackage.FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: .ownerReadWrite)
        }
    }

    /// Writes to the page cache; these writes are short and never wait on the network, so they
    /// run inline on the fetching task.
    func write(_ buffer: UnsafeRawBufferPointer) throws(PushPrepError) {
        guard let file else { throw PushPrepError(.ioError, "cannot write \(path): already closed") }
        _ = try systemCall("cannot write \(path)") { try file.writeAll(buffer) }
    }

    func close() throws(PushPrepError) {
        guard let file else { return }
        self.file = nil
        do throws(PushPrepError) {
            try systemCall("cannot write \(path)") { try file.close() }
        } catch {
            unlink(path)
            throw error
        }
    }

    func discard() {
        try? file?.close()
        file = nil
        unlink(path)
    }
}
