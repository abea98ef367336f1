import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFileSystem
import PushPrep
import PushPrepCore

/// `GET` and `HEAD /v1/attachments/{file}`: the outputs the embedded workers published into the
/// out directory, as the phones' service extensions download them.
///
/// A name is one path component the workers could have written (`[A-Za-z0-9._-]`, no leading
/// dot, no `..`, an extension of a type PushPrep publishes), so nothing else in the directory
/// (`.staging`, temporaries, a `manifest.json`) is reachable. The file is opened without
/// following a symbolic link and must be a regular file, checked on the opened descriptor; the
/// body streams from a descriptor opened the same way, checked to be the same file. The
/// `ETag` is the file's SHA-256, the manifest's `sha256`; conditional requests, one byte
/// range and `HEAD` are answered as RFC 9110 says. With a signer, only a URL it signed and
/// that has not expired gets anything but `403` (checked before the disk is touched, so an
/// unsigned request cannot even learn whether a file exists).
struct AttachmentRoutes {
    /// The out directory.
    let directory: String
    /// `--sign-attachments`: nil serves every published file to anyone.
    let signer: AttachmentURLSigner?
    let digests: AttachmentDigests

    /// The read size while streaming a body: NIOFileSystem reads a few chunks ahead, so a
    /// response holds about a megabyte at most whatever the file's size.
    static let chunkLength: ByteCount = .kibibytes(128)
    /// Published files never change (a new output is a new name): a year, immutable.
    static let cacheControl = "public, max-age=31536000, immutable"

    func register(on router: Router<APIRequestContext>) {
        router.get("v1/attachments/:file") { request, context in
            try await respond(to: request, context: context, withBody: true)
        }
        router.head("v1/attachments/:file") { request, context in
            // A HEAD answer has no body, a problem's included: its headers are the GET's.
            let response: Response
            do {
                response = try await respond(to: request, context: context, withBody: false)
            } catch {
                response = try RequestIDMiddleware.problem(for: error).response(from: request, context: context)
            }
            // A body of unknown length, so the headers keep the GET's Content-Length (or none).
            return Response(
                status: response.status, headers: response.headers, body: ResponseBody { try await $0.finish(nil) })
        }
    }

    func respond(to request: Request, context: APIRequestContext, withBody: Bool) async throws -> Response {
        let name = context.parameters.get("file") ?? ""
        guard let type = Self.publishedType(of: name) else { throw Self.notFound }
        if let signer {
            let query = request.uri.queryParameters
            if let refusal = signer.refusal(
                file: name, expires: query["expires"].map(String.init), signature: query["signature"].map(String.init))
            {
                throw Problem(.forbidden, .forbidden, refusal)
            }
        }
        let file = try await open(name, context: context) { handle, identity in
            PublishedFile(identity: identity, sha256: try await digests.digest(of: handle, identity: identity))
        }

        let etag = "\"\(file.sha256)\""
        var headers: HTTPFields = [
            .contentType: type.mime, .eTag: etag, .lastModified: HTTPDate.format(file.modified),
            .cacheControl: Self.cacheControl, .acceptRanges: "bytes",
        ]
        if let ifNoneMatch = request.headers[values: .ifNoneMatch].nonEmpty {
            if Self.matches(ifNoneMatch, etag: etag) {
                headers[.contentType] = nil
                // No Content-Length: a 304 has no content, and a length would have to be the
                // 200's (RFC 9110 §8.6); a body of unknown length writes none here.
                return Response(status: .notModified, headers: headers, body: ResponseBody { try await $0.finish(nil) })
            }
        }

        let size = file.identity.size
        var range = ByteRange.whole
        // Range is defined for GET only; If-Range makes it conditional on this very version.
        if request.method == .get, let header = request.headers[.range] {
            if let ifRange = request.headers[.ifRange],
                !Self.ifRangeHolds(ifRange, etag: etag, lastModified: headers[.lastModified] ?? "")
            {
                range = .whole
            } else {
                range = ByteRange.parse(header, size: size)
            }
        }
        switch range {
        case .unsatisfiable:
            var response = try Problem(
                .rangeNotSatisfiable, .invalidRequest,
                "the range \(Self.quoted(request.headers[.range] ?? "")) is not within the \(size) bytes of \(name)"
            ).response(from: request, context: context)
            response.headers[.contentRange] = "bytes */\(size)"
            return response
        case .whole:
            headers[.contentLength] = String(size)
            return Response(
                status: .ok, headers: headers,
                body: withBody ? body(name, file.identity, range: 0..<size, context: context) : ResponseBody())
        case .part(let part):
            headers[.contentLength] = String(part.count)
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
            return Response(
                status: .partialContent, headers: headers,
                body: body(name, file.identity, range: Range(part), context: context))
        }
    }

    /// What the handler learns from opening a published file.
    struct PublishedFile {
        var identity: FileIdentity
        var sha256: String
        var modified: Date {
            Date(
                timeIntervalSince1970: TimeInterval(identity.modifiedSeconds) + TimeInterval(
                    identity.modifiedNanoseconds) / 1e9)
        }
    }

    /// Opens `name` relative to the out directory's descriptor (openat), without following a
    /// symbolic link (O_NOFOLLOW) and non-blocking (so a FIFO planted there cannot hang a
    /// thread-pool thread, as opening by path would), checks through the descriptor that it is
    /// a regular file, and runs `body` on it. Anything else, or no such file, is a 404.
    private func open<Result: Sendable>(
        _ name: String, context: APIRequestContext,
        _ body: (ReadFileHandle, FileIdentity) async throws -> Result
    ) async throws -> Result {
        do {
            return try await FileSystem.shared.withDirectoryHandle(atPath: FilePath(directory)) { folder in
                try await folder.withFileHandle(
                    forReadingAt: FilePath(name),
                    options: OpenOptions.Read(followSymbolicLinks: false, closeOnExec: true)
                ) { handle in
                    guard let identity = try await handle.withUnsafeDescriptor(FileIdentity.ofRegularFile) else {
                        throw Self.notFound
                    }
                    return try await body(handle, identity)
                }
            }
        } catch let error as FileSystemError {
            if error.code != .notFound {
                // A symbolic link (ELOOP), a permission problem: not something to show a phone.
                context.logger.notice(
                    "attachment not served", metadata: ["file": "\(name)", "error": "\(error.code)"])
            }
            throw Self.notFound
        }
    }

    /// A body streaming `range` of the file `name` from disk, in ``chunkLength`` reads off the
    /// event loops. The file is opened again (the handler's descriptor is closed by then) the
    /// same careful way, and must still be the file the headers describe.
    private func body(_ name: String, _ identity: FileIdentity, range: Range<Int64>, context: APIRequestContext)
        -> ResponseBody
    {
        ResponseBody(contentLength: range.count) { writer in
            try await open(name, context: context) { handle, opened in
                guard opened == identity else {
                    throw PushPrepError(.ioError, "the attachment changed while it was being served")
                }
                for try await chunk in handle.readChunks(in: range, chunkLength: Self.chunkLength) {
                    try await writer.write(chunk)
                }
            }
            try await writer.finish(nil)
        }
    }

    static var notFound: Problem { Problem(.notFound, .notFound, "no such attachment") }

    /// The type of a name the workers publish (`img-….jpg`, `vid-….mp4`, `vid-…-poster.jpg`,
    /// `aud-….m4a`), or nil for any other name: one path component of `[A-Za-z0-9._-]`, not
    /// starting with a dot, without `..`, whose extension is one PushPrep writes.
    static func publishedType(of name: String) -> PushPrepCore.MediaType? {
        let bytes = name.utf8
        guard (3...255).contains(bytes.count), bytes.first != UInt8(ascii: "."), !name.contains(".."),
            bytes.allSatisfy(isNameByte), let dot = name.lastIndex(of: ".")
        else { return nil }
        let ext = name[name.index(after: dot)...]
        return PushPrepCore.MediaType.allCases.first { $0.fileExtension == ext }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Whether an `If-None-Match` (its field lines) names `etag`: `*`, or one of its entity tags
    /// by the weak comparison (a `W/` prefix ignored on either side).
    static func matches(_ lines: [String], etag: String) -> Bool {
        let ours = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for line in lines {
            for item in line.split(separator: ",") {
                let tag = item.trimmingASCIISpaces
                if tag == "*" { return true }
                if (tag.hasPrefix("W/") ? tag.dropFirst(2) : tag) == ours { return true }
            }
        }
        return false
    }

    /// Whether `If-Range` still names this version: an entity tag by the strong comparison (a
    /// weak tag never does), or exactly the `Last-Modified` date sent.
    static func ifRangeHolds(_ value: String, etag: String, lastModified: String) -> Bool {
        let value = value.trimmingASCIISpaces
        if value.hasPrefix("\"") || value.hasPrefix("W/") { return value == etag }
        return value == lastModified
    }

    /// A client's header value in a message: at most 64 visible ASCII characters.
    private static func quoted(_ value: String) -> String {
        String(reflecting: String(value.prefix(64).filter { $0.isASCII && !$0.isNewline }))
    }
}

extension Array {
    /// Nil when empty.
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}

/// Dates in HTTP headers (`Last-Modified`): the IMF-fixdate of RFC 9110 §5.6.7,
/// `Sun, 06 Nov 1994 08:49:37 GMT`, always in English and UTC.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        let day = days[((parts.weekday ?? 1) - 1 + 7) % 7]
        let month = months[((parts.month ?? 1) - 1 + 12) % 12]
        return
            "\(day), \(two(parts.day)) \(month) \(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }
}
