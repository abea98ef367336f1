import Foundation
package import NIOCore
package import PushPrepCore

/// One part's headers as `multipart/form-data` uses them (RFC 7578): the field's name, the file
/// name a client sends with a file, and the declared type (never trusted: an upload's type is
/// detected from its bytes).
package struct MultipartPartHeaders: Sendable, Equatable {
    package var name: String
    package var filename: String?
    package var contentType: String?
}

/// A streaming `multipart/form-data` reader (RFC 2046 section 5.1, RFC 7578): fed the body as
/// it arrives, it says where each part starts (its headers) and hands over the part's content
/// in pieces, holding back only the few bytes that may begin a delimiter. A file of any size
/// thus passes through in memory no larger than the chunks it came in; headers are capped.
///
/// Written here rather than taken from multipart-kit 4.7.1, whose `MultipartParser` grows a
/// header without bound (a body of one endless header line fills memory), cannot tell a body
/// cut short from a complete one, and calls back through non-`Sendable` closures.
package struct MultipartReader {
    /// What a piece of the body held, in order.
    package enum Event: Equatable {
        /// A part begins.
        case part(MultipartPartHeaders)
        /// Content of the current part (a view into the buffer fed, not a copy).
        case content(ByteBuffer)
        /// The closing delimiter: the body is complete (anything after it is ignored).
        case end
    }

    private enum State {
        /// Before the first delimiter: ignored text.
        case preamble
        /// Just after a delimiter: `--` closes the body, a line break starts a part.
        case afterDelimiter
        /// A part's header block, up to an empty line.
        case headers
        /// A part's content, up to the next delimiter.
        case content
        /// After the closing delimiter: ignored.
        case epilogue
    }

    /// `CRLF--boundary`: what ends each part's content.
    private let delimiter: [UInt8]
    private let maxHeaderBytes: Int
    private let maxParts: Int
    private var state = State.preamble
    private var parts = 0
    /// Bytes fed and not yet handed over or skipped.
    private var pending: ByteBuffer

    /// A reader for parts separated by `boundary` (1 to 70 characters, RFC 2046), with at most
    /// `maxHeaderBytes` of headers per part and `maxParts` parts.
    package init(boundary: String, maxHeaderBytes: Int = 16 << 10, maxParts: Int = 16) throws(PushPrepError) {
        guard (1...70).contains(boundary.utf8.count),
            boundary.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        else {
            throw PushPrepError(.invalidRequest, "the multipart boundary must be 1 to 70 printable ASCII characters")
        }
        delimiter = Array("\r\n--\(boundary)".utf8)
        self.maxHeaderBytes = maxHeaderBytes
        self.maxParts = maxParts
        // The first delimiter may open the body with no line break before it.
        pending = ByteBuffer(string: "\r\n")
    }

    /// The boundary of a `multipart/form-data` content type, nil for a content type that is not
    /// multipart at all; `invalid_request` for another multipart type or one without a boundary.
    package static func boundary(contentType: String) throws(PushPrepError) -> String? {
        let (type, parameters) = HeaderValue.parse(contentType)
        guard type.hasPrefix("multipart/") else { return nil }
        guard type == "multipart/form-data" else {
            throw PushPrepError(
                .invalidRequest, "uploads take multipart/form-data or the raw file, not \(type)")
        }
        guard let boundary = parameters["boundary"], !boundary.isEmpty else {
            throw PushPrepError(.invalidRequest, "the multipart/form-data content type has no boundary")
        }
        return boundary
    }

    /// Reads `buffer`, the next piece of the body, and returns what it completed.
    package mutating func feed(_ buffer: ByteBuffer) throws(PushPrepError) -> [Event] {
        // The content handed over last time is the caller's by now, so this moves only the
        // held-back tail; when nothing is held back the new buffer is taken as it is.
        if pending.readableBytes == 0 {
            pending = buffer
        } else {
            var buffer = buffer
            pending.discardReadBytes()
            pending.writeBuffer(&buffer)
        }
        var events: [Event] = []
        reading: while true {
            switch state {
            case .preamble:
                switch search(delimiter) {
                case .found(let offset):
                    pending.moveReaderIndex(forwardBy: offset + delimiter.count)
                    state = .afterDelimiter
                case .partial(let offset):
                    pending.moveReaderIndex(forwardBy: offset)
                    break reading
                }
            case .afterDelimiter:
                guard let next = try readAfterDelimiter() else { break reading }
                if next == .end {
                    events.append(.end)
                    state = .epilogue
                } else {
                    state = .headers
                }
            case .headers:
                guard let headers = try readHeaders() else { break reading }
                parts += 1
                guard parts <= maxParts else {
                    throw PushPrepError(.invalidRequest, "the multipart body has more than \(maxParts) parts")
                }
                events.append(.part(headers))
                state = .content
            case .content:
                switch search(delimiter) {
                case .found(let offset):
                    if offset > 0, let slice = pending.readSlice(length: offset) { events.append(.content(slice)) }
                    pending.moveReaderIndex(forwardBy: delimiter.count)
                    state = .afterDelimiter
                case .partial(let offset):
                    if offset > 0, let slice = pending.readSlice(length: offset) { events.append(.content(slice)) }
                    break reading
                }
            case .epilogue:
                pending.moveReaderIndex(to: pending.writerIndex)
                break reading
            }
        }
        return events
    }

    /// Refuses a body that ended before its closing delimiter (a client that went away, or a
    /// truncated request): what was read of its last part must not be taken for the whole.
    package func finish() throws(PushPrepError) {
        guard case .epilogue = state else {
            throw PushPrepError(.invalidRequest, "the multipart body ended before its closing boundary")
        }
    }

    // MARK: Pieces

    private enum AfterDelimiter { case end, part }

    /// `--` (the closing delimiter) or optional spaces and a line break (a part follows); nil
    /// until enough bytes are there.
    private mutating func readAfterDelimiter() throws(PushPrepError) -> AfterDelimiter? {
        let bytes = pending.readableBytesView
        guard bytes.count >= 2 else { return nil }
        var index = bytes.startIndex
        if bytes[index] == UInt8(ascii: "-") && bytes[index + 1] == UInt8(ascii: "-") {
            pending.moveReaderIndex(forwardBy: 2)
            return .end
        }
        // Transport padding (RFC 2046: linear white space) may follow a delimiter.
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
        guard index - bytes.startIndex <= 64 else {
            throw PushPrepError(.invalidRequest, "the multipart body has a malformed boundary line")
        }
        guard index + 1 < bytes.endIndex else { return nil }
        guard bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") else {
            throw PushPrepError(.invalidRequest, "the multipart body has a malformed boundary line")
        }
        pending.moveReaderIndex(forwardBy: index + 2 - bytes.startIndex)
        return .part
    }

    /// The part's headers once its header block is complete, else nil (within the cap).
    private mutating func readHeaders() throws(PushPrepError) -> MultipartPartHeaders? {
        let block: ByteBuffer
        if pending.readableBytesView.starts(with: [13, 10]) {
            // No headers at all: refused below for want of a name.
            block = ByteBuffer()
            pending.moveReaderIndex(forwardBy: 2)
        } else {
            guard case .found(let end) = search(Array("\r\n\r\n".utf8)) else {
                guard pending.readableBytes <= maxHeaderBytes else {
                    throw PushPrepError(
                        .invalidRequest, "a multipart part's headers are longer than \(maxHeaderBytes) bytes")
                }
                return nil
            }
            guard end <= maxHeaderBytes, let slice = pending.readSlice(length: end) else {
                throw PushPrepError(
                    .invalidRequest, "a multipart part's headers are longer than \(maxHeaderBytes) bytes")
            }
            block = slice
            pending.moveReaderIndex(forwardBy: 4)
        }
        return try Self.headers(String(decoding: block.readableBytesView, as: UTF8.self))
    }

    /// Parses a header block: `Content-Disposition: form-data; name="…"` is required.
    static func headers(_ block: String) throws(PushPrepError) -> MultipartPartHeaders {
        var disposition: String?
        var contentType: String?
        for line in block.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":"), let first = line.first, first != " ", first != "\t" else {
                throw PushPrepError(.invalidRequest, "a multipart part has a malformed header line")
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-disposition": disposition = value
            case "content-type": contentType = value
            default: continue
            }
        }
        guard let disposition else {
            throw PushPrepError(.invalidRequest, "a multipart part has no Content-Disposition header")
        }
        let (type, parameters) = HeaderValue.parse(disposition)
        guard type == "form-data", let name = parameters["name"], !name.isEmpty else {
            throw PushPrepError(
                .invalidRequest, "a multipart part's Content-Disposition must be form-data with a name")
        }
        return MultipartPartHeaders(name: name, filename: parameters["filename"], contentType: contentType)
    }

    private enum Search: Equatable {
        /// The needle starts at this offset of the readable bytes.
        case found(Int)
        /// Not there; the bytes from this offset on may begin it (the rest cannot).
        case partial(Int)
    }

    /// Finds `needle` in the readable bytes: `memchr` to its first byte, then a comparison.
    private func search(_ needle: [UInt8]) -> Search {
        pending.withUnsafeReadableBytes { haystack -> Search in
            guard let base = haystack.baseAddress, let first = needle.first else { return .partial(haystack.count) }
            var start = 0
            while start < haystack.count {
                guard let hit = memchr(base + start, Int32(first), haystack.count - start) else {
                    return .partial(haystack.count)
                }
                let offset = base.distance(to: UnsafeRawPointer(hit))
                let available = min(needle.count, haystack.count - offset)
                let matches = needle.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { memcmp(hit, $0, available) == 0 } ?? false
                }
                if matches { return available == needle.count ? .found(offset) : .partial(offset) }
                start = offset + 1
            }
            return .partial(haystack.count)
        }
    }
}

/// A header value with parameters (`form-data; name="file"; filename="a b.jpg"`,
/// `multipart/form-data; boundary=xyz`): the lowercased value and its parameters by lowercased
/// name, quoted strings unquoted (RFC 9110 section 5.6.6).
enum HeaderValue {
    static func parse(_ text: String) -> (value: String, parameters: [String: String]) {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func skipSpaces() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        }
        func token(until stops: Set<Unicode.Scalar>) -> String {
            var result = String.UnicodeScalarView()
            while index < scalars.count, !stops.contains(scalars[index]) {
                result.append(scalars[index])
                index += 1
            }
            return String(result).trimmingCharacters(in: .whitespaces)
        }
        let value = token(until: [";"]).lowercased()
        var parameters: [String: String] = [:]
        while index < scalars.count {
            index += 1  // the ";"
            skipSpaces()
            let name = token(until: ["=", ";"]).lowercased()
            guard index < scalars.count, scalars[index] == "=" else { continue }
            index += 1
            skipSpaces()
            var parameter: String
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                var quoted = String.UnicodeScalarView()
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                    quoted.append(scalars[index])
                    index += 1
                }
                index += 1  // the closing quote
                parameter = String(quoted)
                _ = token(until: [";"])
            } else {
                parameter = token(until: [";"])
            }
            if !name.isEmpty && parameters[name] == nil { parameters[name] = parameter }
        }
        return (value, parameters)
    }
}
