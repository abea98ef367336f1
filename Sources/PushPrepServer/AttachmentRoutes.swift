import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import PushPrepCore
import SystemPackage

/// `GET` and `HEAD /v1/attachments/{file}`: the outputs the embedded workers published into the
/// out directory, as the phones' service extensions download them.
///
/// A name is one path component the workers could have written (`[A-Za-z0-9._-]`, no leading
/// dot, no `..`, an extension of a type PushPrep publishes), so nothing else in the directory
/// (`.staging`, temporaries, a `manifest.json`) is reachable. The file is opened without
/// following a symbolic link (`openat` relative to the out directory, held open) and must be a
/// regular file, checked on the opened descriptor. A file up to 2 MiB is read whole, once, into
/// a bounded cache and answered from memory, revalidated with an `fstatat` at most every second
/// (a pruned file is a 404 within that second); a larger one streams from the descriptor the
/// headers were made from, closed when the body ends or the response is dropped. The
/// `ETag` is the file's SHA-256, the manifest's `sha256`; conditional requests, one byte
/// range and `HEAD` are answered as RFC 9110 says. With a signer, only a URL it signed and
/// that has not expired gets anything but `403` (checked before the disk is touched, so an
/// unsigned request cannot even learn whether a file exists).
struct AttachmentRoutes {
    /// The out directory, held open.
    let directory: OutDirectory
    /// `--sign-attachments`: nil serves every published file to anyone.
    let signer: AttachmentURLSigner?
    let digests: AttachmentDigests
    /// Small hot files in memory.
    let cache: AttachmentCache

    init(
        directory: String, signer: AttachmentURLSigner?, digests: AttachmentDigests = AttachmentDigests(),
        cache: AttachmentCache = AttachmentCache()
    ) {
        self.directory = OutDirectory(path: directory)
        self.signer = signer
        self.digests = digests
        self.cache = cache
    }

    /// The read size while streaming a file too large for the cache: one thread-pool hop per
    /// chunk, so a response holds one chunk at a time whatever the file's size.
    static let chunkLength = 256 << 10
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
        let file = try await lookUp(name, context: context)

        let etag = "\"\(file.sha256)\""
        var headers: HTTPFields = [
            .contentType: type.mime, .eTag: etag, .lastModified: file.lastModified,
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
                body: withBody ? body(file, range: 0..<size) : ResponseBody())
        case .part(let part):
            headers[.contentLength] = String(part.count)
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"
            return Response(
                status: .partialContent, headers: headers,
                body: body(file, range: Range(part)))
        }
    }

    /// What the handler learns of a published file: its bytes when they are in memory, else
    /// the file open to stream them from.
    struct PublishedFile {
        var identity: FileIdentity
        var sha256: String
        var lastModified: String
        var content: Content

        enum Content {
            case memory(ByteBuffer)
            case disk(OpenedAttachment)
        }

        init(_ entry: AttachmentCache.Entry) {
            self.init(
                identity: entry.identity, sha256: entry.sha256, lastModified: entry.lastModified,
                content: .memory(entry.bytes))
        }

        init(identity: FileIdentity, sha256: String, lastModified: String, content: Content) {
            self.identity = identity
            self.sha256 = sha256
            self.lastModified = lastModified
            self.content = content
        }
    }

    /// What one thread-pool hop found for a name.
    private enum Found: Sendable {
        case cached(AttachmentCache.Entry)
        /// Too large for the cache: open, its digest still to be had.
        case large(OpenedAttachment)
        case missing(Errno?)
    }

    /// The published file `name`: from the cache when it was checked within the interval (no
    /// system call at all), else in one thread-pool hop that revalidates the cached entry with
    /// an `fstatat`, or opens the file (``OpenedAttachment/open(_:in:)``) and reads a small
    /// one whole into the cache. No such file, or one that is not a regular file, is a 404.
    private func lookUp(_ name: String, context: APIRequestContext) async throws -> PublishedFile {
        let now = NIODeadline.now().uptimeNanoseconds
        if let entry = cache.fresh(name, now: now) { return PublishedFile(entry) }
        let (cache, directory, digests) = (self.cache, self.directory, self.digests)
        let found = try await NIOThreadPool.singleton.runIfActive {
            Self.find(name, now: now, cache: cache, directory: directory, digests: digests)
        }
        switch found {
        case .cached(let entry):
            return PublishedFile(entry)
        case .large(let opened):
            let sha256 = try await digests.digest(of: opened.identity) {
                try await NIOThreadPool.singleton.runIfActive {
                    try AttachmentDigests.hash(opened.descriptor, size: opened.identity.size)
                }
            }
            return PublishedFile(
                identity: opened.identity, sha256: sha256, lastModified: HTTPDate.format(opened.identity.modified),
                content: .disk(opened))
        case .missing(let errno):
            if let errno, errno != .noSuchFileOrDirectory {
                // A symbolic link (ELOOP), a permission problem: not something to show a phone.
                context.logger.notice("attachment not served", metadata: ["file": "\(name)", "error": "\(errno)"])
            }
            throw Self.notFound
        }
    }

    /// The blocking part of ``lookUp(_:context:)``, on a thread-pool thread.
    private static func find(
        _ name: String, now: UInt64, cache: AttachmentCache, directory: OutDirectory, digests: AttachmentDigests
    ) -> Found {
        do {
            let folder = try directory.handle(now: now)
            if let stale = cache.stale(name) {
                let status = try? Stat(FilePath(name), relativeTo: folder.descriptor, flags: .symlinkNoFollow)
                if let status, FileIdentity(regularFile: status) == stale.identity {
                    cache.confirm(name, identity: stale.identity, now: now)
                    return .cached(stale)
                }
                cache.remove(name)
            }
            guard let opened = try OpenedAttachment.open(name, in: folder) else { return .missing(nil) }
            let identity = opened.identity
            guard identity.size <= Int64(cache.maxFileBytes) else { return .large(opened) }
            let bytes = try opened.read(at: 0, count: Int(identity.size))
            guard bytes.readableBytes == Int(identity.size) else { return .missing(.ioError) }
            let sha256 = digests.known(identity) ?? AttachmentDigests.hash(bytes)
            digests.remember(identity, digest: sha256)
            let entry = AttachmentCache.Entry(
                identity: identity, sha256: sha256, lastModified: HTTPDate.format(identity.modified), bytes: bytes)
            cache.insert(name, entry, now: now)
            return .cached(entry)
        } catch {
            return .missing(error as? Errno ?? .ioError)
        }
    }

    /// The body of `range` of `file`: a slice of its bytes in memory, or read from its open
    /// descriptor in ``chunkLength`` reads off the event loops (the descriptor closes when the
    /// body is done with, streamed or dropped).
    private func body(_ file: PublishedFile, range: Range<Int64>) -> ResponseBody {
        switch file.content {
        case .memory(let bytes):
            let slice =
                bytes.getSlice(at: bytes.readerIndex + Int(range.lowerBound), length: range.count) ?? ByteBuffer()
            return ResponseBody(byteBuffer: slice)
        case .disk(let opened):
            return ResponseBody(contentLength: range.count) { writer in
                var offset = range.lowerBound
                while offset < range.upperBound {
                    let count = Int(min(Int64(Self.chunkLength), range.upperBound - offset))
                    let start = offset
                    let chunk = try await NIOThreadPool.singleton.runIfActive {
                        try opened.read(at: start, count: count)
                    }
                    guard chunk.readableBytes > 0 else {
                        throw PushPrepError(.ioError, "the attachment got shorter while it was being served")
                    }
                    offset += Int64(chunk.readableBytes)
                    try await writer.write(chunk)
                }
                try await writer.finish(nil)
            }
        }
    }

    static var notFound: Problem { Problem(.notFound, .notFound, "no such attachment") }

    /// The type of a name the workers publish (`img-….jpg`, `vid-….mp4`, `vid-…-poster.jpg`,
    /// `aud-….m4a`, `and-….jpg`, `web-….png`, `wic-….jpg`), or nil for any other name: one path component of `[A-Za-z0-9._-]`, not
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
