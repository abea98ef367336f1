import Foundation
import NIOHTTP1
import PushPrepCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An error answer from an S3 server, read from its status, its `x-amz-bucket-region` header and
/// its XML body (`<Error><Code>…</Code><Message>…</Message><Region>…</Region>…</Error>`), and
/// the decision that follows: try again, or fail with which stable code.
///
/// The codes (see ``PushPrepError/Code/storageDenied`` and ``PushPrepError/Code/storageUnavailable``):
/// - `storage_denied`, not retried: 501 or `NotImplemented` (the server does not implement the
///   request; it will not later: the store must change, so a queued job fails at once);
/// - retried: other 5xx, 429, `SlowDown`, `RequestTimeout`, `InternalError` (the server's trouble; a
///   later try usually succeeds), ending as `storage_unavailable` when the tries run out;
/// - `storage_denied`, not retried: 403, `SignatureDoesNotMatch`, `InvalidAccessKeyId`,
///   `AccessDenied`, expired or invalid tokens, and the wrong region (`AuthorizationHeaderMalformed`,
///   a 301 redirect), naming the region the server says is right; any other 4xx too (the store
///   refuses the request as sent, and would again);
/// - `storage_unavailable`, not retried: `NoSuchBucket` and other 404s, `NoSuchUpload`;
/// - `io_error`: `BadDigest`, `XAmzContentSHA256Mismatch`: the bytes the server received are not
///   the ones whose SHA-256 was given (the file changed while it was uploaded, or the bytes were
///   altered on the way: nothing is stored either way).
struct S3ErrorResponse: Sendable, Equatable {
    /// The HTTP status.
    let status: Int
    /// S3's error code (`SlowDown`, `NoSuchBucket`, …), when the body had one.
    let code: String?
    /// S3's message, shortened and without control characters.
    let message: String?
    /// The bucket's region, from `<Region>` or `x-amz-bucket-region`, when it looks like one.
    let region: String?

    /// The most of an error body read: S3's are a few hundred bytes.
    static let maximumBodyBytes = 64 * 1024

    private static let retryableCodes: Set<String> = [
        "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "OperationAborted",
    ]
    private static let digestCodes: Set<String> = ["BadDigest", "XAmzContentSHA256Mismatch", "InvalidDigest"]
    private static let unavailableCodes: Set<String> = ["NoSuchBucket", "NoSuchUpload"]

    init(status: Int, code: String?, message: String?, region: String?) {
        self.status = status
        self.code = code
        self.message = message
        self.region = region
    }

    /// Reads a response; a body that is not S3's error XML leaves code and message empty.
    init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        let fields = S3XML.fields(of: body, root: "Error", names: ["Code", "Message", "Region"])
        self.status = status
        code = fields?["Code"].flatMap(Self.token)
        message = fields?["Message"].map(Self.printable)
        region = (fields?["Region"] ?? headers.first(name: "x-amz-bucket-region")).flatMap(Self.regionName)
    }

    /// Worth another try: the server's own trouble, or it asking to slow down. Not a request
    /// the server does not implement (501, `NotImplemented`): every try gets the same answer.
    var isRetryable: Bool {
        if isNotImplemented { return false }
        return status >= 500 || status == 429 || code.map(Self.retryableCodes.contains) ?? false
    }

    /// The server does not implement the request (an S3-compatible store without this
    /// operation or header): permanent.
    var isNotImplemented: Bool { status == 501 || code == "NotImplemented" }

    /// The error to report for `operation` (`PUT bucket/key`), a request signed for
    /// `signedRegion`, sent to `server` (`host:port`, named in the messages that tell what to do).
    func error(operation: String, signedRegion: String, server: String = "the storage server") -> PushPrepError {
        var detail = "HTTP \(status)"
        if let code { detail += " \(code)" }
        if let message, !message.isEmpty { detail += ": \(message)" }
        if isNotImplemented {
            return PushPrepError(
                .storageDenied,
                "\(operation): \(server) does not implement this request (\(detail)): use a store with S3's full "
                    + "API for this operation, or publish to an out directory (--out)")
        }
        if let code, Self.digestCodes.contains(code) {
            return PushPrepError(
                .ioError,
                "\(operation): the bytes the server received do not match the SHA-256 given for them (the file "
                    + "changed while it was sent, or the bytes were altered on the way): \(detail)"
            )
        }
        if isRetryable {
            return PushPrepError(.storageUnavailable, "\(operation): \(detail)")
        }
        if let region, region != signedRegion,
            status == 301 || status == 400 || status == 403 || code == "AuthorizationHeaderMalformed"
                || code == "PermanentRedirect" || code == "IllegalLocationConstraintException"
        {
            return PushPrepError(
                .storageDenied,
                "\(operation): the bucket is in region \(region), not \(signedRegion) (set the region to \(region)): "
                    + detail)
        }
        if status == 404 || code.map(Self.unavailableCodes.contains) ?? false {
            let what = code == "NoSuchBucket" || code == nil ? "the bucket does not exist or cannot be found" : "gone"
            return PushPrepError(.storageUnavailable, "\(operation): \(what): \(detail)")
        }
        return PushPrepError(.storageDenied, "\(operation): refused: \(detail)")
    }

    /// An S3 error code is a word; anything else is not quoted.
    private static func token(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 64,
            trimmed.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII })
        else { return nil }
        return trimmed
    }

    /// A region name (`eu-west-3`, `auto`): quoted in a message and suggested as a setting, so
    /// only lowercase letters, digits and dashes.
    private static func regionName(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 32,
            trimmed.utf8.allSatisfy({
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "-")
            })
        else { return nil }
        return trimmed
    }

    /// At most 300 characters, control characters as spaces: the text lands in one log line.
    private static func printable(_ text: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 })
        )
        .trimmingCharacters(in: .whitespaces)
        return cleaned.count > 300 ? String(cleaned.prefix(300)) + "…" : cleaned
    }
}

/// The little XML S3 answers with: the text of a few named elements under a known root.
///
/// Foundation's `XMLParser`, with external entities never resolved (no file or network is read
/// because of a body), on bodies the caller has already bounded.
enum S3XML {
    /// The text of the first element of each of `names`, if the document's root is `root`; nil
    /// when the bytes are not XML or the root is another element.
    static func fields(of body: [UInt8], root: String, names: Set<String>) -> [String: String]? {
        guard !body.isEmpty else { return nil }
        let parser = XMLParser(data: Data(body))
        parser.shouldResolveExternalEntities = false
        let collector = Collector(names: names)
        parser.delegate = collector
        guard parser.parse(), collector.root == root else { return nil }
        return collector.values
    }

    /// The name of the document's root element (`Error`, `CompleteMultipartUploadResult`).
    static func root(of body: [UInt8]) -> String? {
        guard !body.isEmpty else { return nil }
        let parser = XMLParser(data: Data(body))
        parser.shouldResolveExternalEntities = false
        let collector = Collector(names: [])
        parser.delegate = collector
        _ = parser.parse()
        return collector.root
    }

    /// `&`, `<`, `>`, `"` and `'` escaped (``Markup``), for text PushPrep writes into a request
    /// body.
    static func escaped(_ text: String) -> String {
        Markup.escape(text, apostrophe: "&apos;")
    }

    /// Used by one parser on one thread, then read.
    private final class Collector: NSObject, XMLParserDelegate {
        let names: Set<String>
        var root: String?
        var values: [String: String] = [:]
        private var current: String?
        private var text = ""

        init(names: Set<String>) { self.names = names }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if root == nil { root = elementName }
            if names.contains(elementName), values[elementName] == nil {
                current = elementName
                text = ""
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if current != nil, text.count < 4096 { text += string }
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            if elementName == current {
                values[elementName] = text
                current = nil
            }
        }
    }
}
