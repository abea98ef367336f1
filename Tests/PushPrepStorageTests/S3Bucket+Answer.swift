import Crypto
import Foundation
import PushPrepTestSupport
import Synchronization

#if canImport(FoundationXML)
    import FoundationXML
#endif

extension S3Bucket {
    /// An answer: status, headers and body.
    struct Answer {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    /// S3's XML error.
    private func error(
        _ status: Int, _ code: String, _ message: String, region: String? = nil, extra: [(String, String)] = []
    ) -> Answer {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(message)</Message>"
        if let region { xml += "<Region>\(region)</Region>" }
        xml += "<RequestId>TEST</RequestId></Error>"
        return Answer(status: status, headers: [("Content-Type", "application/xml")] + extra, body: Array(xml.utf8))
    }

    /// What S3 answers `request` (or the scripted error), storing what it asks to store.
    func answer(_ request: TestServer<S3Bucket>.Request, exchange: Exchange) -> Answer {
        let operation = exchange.operation
        let query = request.query
        let path = URLComponents(string: request.uri)?.percentEncodedPath ?? request.uri
        if case .error(let status, let code, let message, let region, let retryAfter) = exchange.fault {
            return error(
                status, code, message, region: region,
                extra: (region.map { [("x-amz-bucket-region", $0)] } ?? [])
                    + (retryAfter.map { [("Retry-After", $0)] } ?? []))
        }
        // The credential scope: AKID/yyyymmdd/region/s3/aws4_request.
        let authorization = request.headers["authorization"] ?? ""
        let prefix = "AWS4-HMAC-SHA256 Credential="
        guard authorization.hasPrefix(prefix) else { return error(403, "AccessDenied", "no SigV4 Authorization") }
        let scope = authorization.dropFirst(prefix.count).prefix { $0 != "," }.split(separator: "/")
        guard scope.count == 5, scope[0] == settings.accessKeyID else {
            return error(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        }
        guard scope[2] == settings.region else {
            return error(
                400, "AuthorizationHeaderMalformed",
                "The authorization header is malformed; the region '\(scope[2])' is wrong; expecting '\(settings.region)'",
                region: settings.region, extra: [("x-amz-bucket-region", settings.region)])
        }
        guard request.headers["x-amz-date"] != nil,
            let payloadHash = request.headers["x-amz-content-sha256"]
        else { return error(400, "InvalidRequest", "x-amz-date and x-amz-content-sha256 are required") }
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.first == settings.bucket else {
            return error(404, "NoSuchBucket", "The specified bucket does not exist")
        }
        let key = parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : ""
        let digest = Array(exchange.hasher.finalize())
        if settings.verification == .all, payloadHash != "UNSIGNED-PAYLOAD",
            payloadHash != digest.map({ String(format: "%02x", $0) }).joined()
        {
            return error(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match")
        }
        let sentChecksum = request.headers["x-amz-checksum-sha256"]
        if settings.verification != .nothing, let sentChecksum, sentChecksum != Data(digest).base64EncodedString() {
            return error(400, "BadDigest", "The SHA256 you specified did not match the calculated checksum.")
        }
        let checksumMode = request.headers["x-amz-checksum-mode"] == "ENABLED"
        let checksumAlgorithm = request.headers["x-amz-checksum-algorithm"]
        let kept = ["content-type", "cache-control", "x-amz-meta-sha256", "content-disposition"]
        var stored: [String: String] = [:]
        for name in kept { if let value = request.headers[name] { stored[name] = value } }
        let bytes = request.body
        let received = request.bodyBytes
        let retained = settings.retainBodies ? bytes : nil
        return state.withLock { state -> Answer in
            switch operation {
            case .headObject:
                guard let object = state.objects[key] else { return Answer(status: 404) }
                var headers = [("Content-Length", "\(object.size)"), ("ETag", "\"etag\"")]
                for (name, value) in object.headers { headers.append((name, value)) }
                if checksumMode, let checksum = object.checksum { headers.append(("x-amz-checksum-sha256", checksum)) }
                return Answer(status: 200, headers: headers)
            case .deleteObject:
                state.objects[key] = nil
                return Answer(status: 204)
            case .putObject:
                let writes = (state.objects[key]?.writes ?? 0) + 1
                state.objects[key] = Object(
                    bytes: retained, size: received, sha256: digest, headers: stored, writes: writes,
                    checksum: sentChecksum.map { _ in Data(digest).base64EncodedString() })
                return Answer(status: 200, headers: [("ETag", "\"\(Data(digest.prefix(16)).base64EncodedString())\"")])
            case .createMultipart:
                let id = "upload-\(state.nextUpload)~/+="
                state.nextUpload += 1
                state.uploads[id] = Upload(
                    key: key, headers: stored, checksumAlgorithm: checksumAlgorithm)
                let xml =
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult><Bucket>\(settings.bucket)"
                    + "</Bucket><Key>\(key)</Key><UploadId>\(id)</UploadId></InitiateMultipartUploadResult>"
                return Answer(status: 200, headers: [("Content-Type", "application/xml")], body: Array(xml.utf8))
            case .uploadPart:
                guard let id = query["uploadId"], state.uploads[id] != nil,
                    let number = query["partNumber"].flatMap({ Int($0) })
                else { return error(404, "NoSuchUpload", "The specified upload does not exist.") }
                let etag = "\"part-\(number)-\(digest.prefix(4).map { String(format: "%02x", $0) }.joined())\""
                state.uploads[id]?.parts[number] = (
                    retained, received, digest, etag
                )
                return Answer(status: 200, headers: [("ETag", etag)])
            case .completeMultipart:
                guard let id = query["uploadId"], let upload = state.uploads[id] else {
                    return error(404, "NoSuchUpload", "The specified upload does not exist.")
                }
                let listed = PartList.parse(bytes)
                guard !listed.isEmpty, listed.map(\.number) == listed.map(\.number).sorted(),
                    listed.allSatisfy({ upload.parts[$0.number]?.etag == $0.etag })
                else { return error(400, "InvalidPart", "One or more of the specified parts could not be found.") }
                // With a checksum algorithm, S3 requires each part's checksum, equal to the one it
                // computed for the part's bytes; the object's is the composite of them.
                var composite: String?
                if upload.checksumAlgorithm == "SHA256" {
                    let digests = listed.compactMap { upload.parts[$0.number]?.digest }
                    guard
                        settings.verification == .nothing
                            || zip(listed, digests).allSatisfy({ $0.checksum == Data($1).base64EncodedString() })
                    else {
                        return error(
                            400, "InvalidPart",
                            "One or more of the specified parts could not be found. The part may not have been "
                                + "uploaded, or the specified entity tag or checksum may not match the part's.")
                    }
                    composite =
                        "\(Data(SHA256.hash(data: digests.flatMap { $0 })).base64EncodedString())-\(listed.count)"
                }
                var whole: [UInt8]? = settings.retainBodies ? [] : nil
                var size = 0
                for entry in listed {
                    guard let part = upload.parts[entry.number] else { continue }
                    size += part.size
                    if let partBytes = part.bytes { whole? += partBytes }
                }
                let writes = (state.objects[upload.key]?.writes ?? 0) + 1
                state.objects[upload.key] = Object(
                    bytes: whole, size: size, sha256: whole.map { Array(SHA256.hash(data: $0)) } ?? [],
                    headers: upload.headers, writes: writes, checksum: composite)
                state.uploads[id] = nil
                let xml =
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult><Key>\(upload.key)"
                    + "</Key><ETag>\"multi-\(listed.count)\"</ETag>"
                    + (composite.map { "<ChecksumSHA256>\($0)</ChecksumSHA256>" } ?? "")
                    + "</CompleteMultipartUploadResult>"
                return Answer(status: 200, headers: [("Content-Type", "application/xml")], body: Array(xml.utf8))
            case .abortMultipart:
                guard let id = query["uploadId"], state.uploads.removeValue(forKey: id) != nil else {
                    return error(404, "NoSuchUpload", "The specified upload does not exist.")
                }
                return Answer(status: 204)
            case .other:
                return error(405, "MethodNotAllowed", "not in this test server")
            }
        }
    }
}

/// The `<Part><PartNumber>…</PartNumber><ETag>…</ETag><ChecksumSHA256>…</ChecksumSHA256></Part>`
/// list of a CompleteMultipartUpload body.
private final class PartList: NSObject, XMLParserDelegate {
    struct Entry {
        var number: Int
        var etag: String
        var checksum: String?
    }

    private var entries: [Entry] = []
    private var text = ""
    private var number: Int?
    private var etag: String?
    private var checksum: String?

    static func parse(_ bytes: [UInt8]) -> [Entry] {
        let list = PartList()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = list
        guard parser.parse() else { return [] }
        return list.entries
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) { text = "" }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        switch elementName {
        case "PartNumber": number = Int(text)
        case "ETag": etag = text
        case "ChecksumSHA256": checksum = text
        case "Part":
            if let number, let etag { entries.append(Entry(number: number, etag: etag, checksum: checksum)) }
            number = nil
            etag = nil
            checksum = nil
        default: break
        }
    }
}
