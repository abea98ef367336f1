import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A small S3-speaking server on 127.0.0.1, port 0, in the test process: one bucket, objects in
/// memory, multipart uploads, and faults scripted per operation.
///
/// It checks what the client cannot fake by signing: the body's SHA-256 against
/// `x-amz-checksum-sha256` (base64) and `x-amz-content-sha256` (hex), the access key id and the
/// region in the `Authorization` header's credential scope (a wrong region is answered as AWS
/// does: `AuthorizationHeaderMalformed` naming the bucket's region, or for HEAD a bare 400 with
/// `x-amz-bucket-region`). It does not recompute the signature: that would test the signer
/// against itself (moto does that, with its own implementation, in the integration tests).
///
/// Checksums as S3 keeps them: an upload created with `x-amz-checksum-algorithm: SHA256` takes
/// each part's `x-amz-checksum-sha256`, requires each part's `ChecksumSHA256` in the Complete
/// list, and answers with the composite checksum (`<base64 of the SHA-256 of the parts' digests>-N`);
/// a PUT's `x-amz-checksum-sha256` is kept; a HEAD with `x-amz-checksum-mode: ENABLED` gives
/// the object's. ``Verification`` makes it as lax as some S3-compatible servers are, and
/// ``Action/corruptBody`` alters a body on the way in.
///
/// Every request is recorded (operation, headers, body bytes and chunks), and the most
/// `UploadPart` requests in flight at once is kept.
final class S3FaultServer: Sendable {
    /// What a request asked for.
    enum Operation: String, Sendable {
        case headObject, putObject, deleteObject, createMultipart, uploadPart, completeMultipart, abortMultipart, other
    }

    /// What the server compares with the body it received.
    enum Verification: Sendable {
        /// `x-amz-content-sha256` and `x-amz-checksum-sha256`, as S3 does.
        case all
        /// Only `x-amz-checksum-sha256`: like the S3-compatible server that stored a part whose
        /// body differed from its signed payload hash.
        case checksumsOnly
        /// Nothing: whatever arrives is stored (its checksums are still computed and reported).
        case nothing
    }

    /// What a scripted fault does to a matching request.
    enum Action: Sendable {
        /// Answers with S3's XML error (a HEAD gets the status and headers only), with a
        /// `Retry-After` header when `retryAfter` is given.
        case error(
            status: Int, code: String, message: String = "scripted", region: String? = nil, retryAfter: String? = nil)
        /// Closes the connection once this many body bytes have arrived.
        case closeAfterBodyBytes(Int)
        /// Does what was asked, then closes the connection instead of answering (a lost answer).
        case loseAnswer
        /// Flips the bits of the body's first byte as it arrives, as a faulty link or proxy
        /// would: the server hashes and stores the altered bytes.
        case corruptBody
    }

    /// A fault for the next `times` requests of `operation` (and of `partNumber`, for parts).
    struct Fault: Sendable {
        var operation: Operation
        var partNumber: Int?
        var times: Int
        var action: Action
    }

    struct Object: Sendable {
        var bytes: [UInt8]?
        var size: Int
        var sha256: [UInt8]
        var headers: [String: String]
        /// How many times an upload stored this key.
        var writes: Int
        /// `x-amz-checksum-sha256` as a HEAD with checksum mode gives it: the base64 SHA-256 of
        /// a PUT sent with one, the composite `…-N` of a multipart upload created for SHA-256.
        var checksum: String? = nil
    }

    struct Upload: Sendable {
        var key: String
        var headers: [String: String]
        /// `x-amz-checksum-algorithm` of the CreateMultipartUpload.
        var checksumAlgorithm: String? = nil
        var parts: [Int: (bytes: [UInt8]?, size: Int, hasher: SHA256Snapshot, etag: String)] = [:]
    }

    /// A part's bytes are hashed as they arrive; the object's SHA-256 is recomputed from the parts
    /// when they are retained, and left empty otherwise.
    struct SHA256Snapshot: Sendable {
        var digest: [UInt8]
    }

    struct Recorded: Sendable {
        var operation: Operation
        var method: String
        var path: String
        var query: [String: String]
        var headers: [String: String]
        var bodyBytes: Int
        var bodyChunks: Int
        var status: Int?
    }

    struct State {
        var objects: [String: Object] = [:]
        var uploads: [String: Upload] = [:]
        var faults: [Fault] = []
        var requests: [Recorded] = []
        var partsInFlight = 0
        var maxPartsInFlight = 0
        var nextUpload = 1
    }

    let bucket: String
    let region: String
    let accessKeyID: String
    /// Keep the bytes of stored objects (off for the memory test: only sizes and hashes).
    let retainBodies: Bool
    /// How long an `UploadPart` answer is held once its body is in, so that parallel parts overlap.
    let partDelay: TimeAmount
    /// What the server checks the bodies against.
    let verification: Verification
    let state = Mutex(State())
    private let channel: Mutex<(any Channel)?> = Mutex(nil)
    let port: Int

    private init(
        bucket: String, region: String, accessKeyID: String, retainBodies: Bool, partDelay: TimeAmount,
        verification: Verification, channel: any Channel
    ) {
        self.verification = verification
        self.bucket = bucket
        self.region = region
        self.accessKeyID = accessKeyID
        self.retainBodies = retainBodies
        self.partDelay = partDelay
        self.port = channel.localAddress?.port ?? 0
        self.channel.withLock { $0 = channel }
    }

    static func start(
        bucket: String = "media", region: String = "eu-west-3", accessKeyID: String = "AKIDTESTKEY",
        retainBodies: Bool = true, partDelay: TimeAmount = .zero, verification: Verification = .all
    ) async throws -> S3FaultServer {
        let boxRef = BoxRef()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(S3Handler(server: boxRef))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = S3FaultServer(
            bucket: bucket, region: region, accessKeyID: accessKeyID, retainBodies: retainBodies,
            partDelay: partDelay, verification: verification, channel: channel)
        boxRef.box.withLock { $0 = server }
        return server
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func inject(_ fault: Fault) { state.withLock { $0.faults.append(fault) } }
    func object(_ key: String) -> Object? { state.withLock { $0.objects[key] } }
    /// Stores `bytes` under `key` as another client would: with `headers` (lowercase names)
    /// and no checksum unless `checksum` is given.
    func put(_ key: String, bytes: [UInt8], headers: [String: String] = [:], checksum: String? = nil) {
        state.withLock { state in
            state.objects[key] = Object(
                bytes: bytes, size: bytes.count, sha256: Array(SHA256.hash(data: bytes)), headers: headers,
                writes: (state.objects[key]?.writes ?? 0) + 1, checksum: checksum)
        }
    }
    var requests: [Recorded] { state.withLock { $0.requests } }
    var openUploads: Int { state.withLock { $0.uploads.count } }
    var maxPartsInFlight: Int { state.withLock { $0.maxPartsInFlight } }
    func requests(_ operation: Operation) -> [Recorded] { requests.filter { $0.operation == operation } }

    func shutdown() async {
        let open = channel.withLock { channel in
            defer { channel = nil }
            return channel
        }
        try? await open?.close()
    }
}

/// The server, set once it is bound (the handlers are made before it exists).
final class BoxRef: Sendable {
    let box = Mutex<S3FaultServer?>(nil)
    var server: S3FaultServer? { box.withLock { $0 } }
}

private final class S3Handler: ChannelInboundHandler, @unchecked Sendable {
    // One instance per connection, used only on that connection's event loop.
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let ref: BoxRef
    private var head: HTTPRequestHead?
    private var hasher = SHA256()
    private var bytes: [UInt8] = []
    private var received = 0
    private var chunks = 0
    private var fault: S3FaultServer.Action?
    private var closed = false
    private var operation = S3FaultServer.Operation.other

    init(server: BoxRef) { ref = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let server = ref.server else { return context.close(promise: nil) }
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            hasher = SHA256()
            bytes = []
            received = 0
            chunks = 0
            closed = false
            let (operation, _, query) = classify(head, server: server)
            self.operation = operation
            let part = query["partNumber"].flatMap { Int($0) }
            fault = server.state.withLock { state in
                if operation == .uploadPart {
                    state.partsInFlight += 1
                    state.maxPartsInFlight = max(state.maxPartsInFlight, state.partsInFlight)
                }
                guard
                    let index = state.faults.firstIndex(where: {
                        $0.operation == operation && $0.times > 0 && ($0.partNumber == nil || $0.partNumber == part)
                    })
                else { return nil }
                state.faults[index].times -= 1
                return state.faults[index].action
            }
        case .body(var buffer):
            guard !closed else { return }
            if case .corruptBody = fault, received == 0, buffer.readableBytes > 0,
                let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self)
            {
                buffer.setInteger(~first, at: buffer.readerIndex)
            }
            chunks += 1
            received += buffer.readableBytes
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            // Object bytes may be dropped (the memory test); a CompleteMultipartUpload list is always read.
            if server.retainBodies || (operation != .putObject && operation != .uploadPart),
                let more = buffer.readBytes(length: buffer.readableBytes)
            {
                bytes += more
            }
            if case .closeAfterBodyBytes(let limit) = fault, received >= limit {
                closed = true
                finish(server, status: nil)
                context.close(promise: nil)
            }
        case .end:
            guard let head, !closed else { return }
            self.head = nil
            respond(to: head, server: server, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let server = ref.server, head != nil, !closed {
            closed = true
            finish(server, status: nil)
        }
        context.fireChannelInactive()
    }

    private func classify(
        _ head: HTTPRequestHead, server: S3FaultServer
    ) -> (S3FaultServer.Operation, String, [String: String]) {
        let components = URLComponents(string: head.uri)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let path = components?.percentEncodedPath ?? head.uri
        let operation: S3FaultServer.Operation
        switch (head.method, query["uploads"] != nil, query["uploadId"] != nil) {
        case (.HEAD, _, _): operation = .headObject
        case (.PUT, _, true): operation = .uploadPart
        case (.PUT, _, false): operation = .putObject
        case (.DELETE, _, false): operation = .deleteObject
        case (.POST, true, _): operation = .createMultipart
        case (.POST, _, true): operation = .completeMultipart
        case (.DELETE, _, true): operation = .abortMultipart
        default: operation = .other
        }
        return (operation, path, query)
    }

    /// Records the request; for parts, one fewer in flight.
    private func finish(_ server: S3FaultServer, status: Int?) {
        guard let head else { return }
        let (operation, path, query) = classify(head, server: server)
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let record = S3FaultServer.Recorded(
            operation: operation, method: head.method.rawValue, path: path, query: query, headers: headers,
            bodyBytes: received, bodyChunks: chunks, status: status)
        server.state.withLock { state in
            state.requests.append(record)
            if operation == .uploadPart { state.partsInFlight -= 1 }
        }
    }

    private func respond(to head: HTTPRequestHead, server: S3FaultServer, context: ChannelHandlerContext) {
        let (operation, path, query) = classify(head, server: server)
        let answer = answer(head, operation: operation, path: path, query: query, server: server)
        finishRecorded(server, head: head, status: answer.status)
        if case .loseAnswer = fault {
            if operation == .uploadPart { server.state.withLock { $0.partsInFlight -= 1 } }
            context.close(promise: nil)
            return
        }
        let send = { [self] in
            var response = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status))
            for (name, value) in answer.headers { response.headers.add(name: name, value: value) }
            let body = head.method == .HEAD ? [] : answer.body
            response.headers.replaceOrAdd(
                name: "Content-Length",
                value: head.method == .HEAD
                    ? answer.headers.first { $0.0 == "Content-Length" }?.1 ?? "0" : "\(body.count)")
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if !body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        if operation == .uploadPart, server.partDelay > .zero {
            let bound = NIOLoopBound(send, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: server.partDelay) {
                bound.value()
                server.state.withLock { $0.partsInFlight -= 1 }
            }
        } else {
            send()
            if operation == .uploadPart { server.state.withLock { $0.partsInFlight -= 1 } }
        }
    }

    private func finishRecorded(_ server: S3FaultServer, head: HTTPRequestHead, status: Int) {
        let (operation, path, query) = classify(head, server: server)
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let record = S3FaultServer.Recorded(
            operation: operation, method: head.method.rawValue, path: path, query: query, headers: headers,
            bodyBytes: received, bodyChunks: chunks, status: status)
        server.state.withLock { $0.requests.append(record) }
    }

    private struct Answer {
        var status: Int
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    private func error(
        _ status: Int, _ code: String, _ message: String, region: String? = nil, extra: [(String, String)] = []
    ) -> Answer {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(message)</Message>"
        if let region { xml += "<Region>\(region)</Region>" }
        xml += "<RequestId>TEST</RequestId></Error>"
        return Answer(status: status, headers: [("Content-Type", "application/xml")] + extra, body: Array(xml.utf8))
    }

    private func answer(
        _ head: HTTPRequestHead, operation: S3FaultServer.Operation, path: String, query: [String: String],
        server: S3FaultServer
    ) -> Answer {
        if case .error(let status, let code, let message, let region, let retryAfter) = fault {
            return error(
                status, code, message, region: region,
                extra: (region.map { [("x-amz-bucket-region", $0)] } ?? [])
                    + (retryAfter.map { [("Retry-After", $0)] } ?? []))
        }
        // The credential scope: AKID/yyyymmdd/region/s3/aws4_request.
        let authorization = head.headers.first(name: "authorization") ?? ""
        let prefix = "AWS4-HMAC-SHA256 Credential="
        guard authorization.hasPrefix(prefix) else { return error(403, "AccessDenied", "no SigV4 Authorization") }
        let scope = authorization.dropFirst(prefix.count).prefix { $0 != "," }.split(separator: "/")
        guard scope.count == 5, scope[0] == server.accessKeyID else {
            return error(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        }
        guard scope[2] == server.region else {
            return error(
                400, "AuthorizationHeaderMalformed",
                "The authorization header is malformed; the region '\(scope[2])' is wrong; expecting '\(server.region)'",
                region: server.region, extra: [("x-amz-bucket-region", server.region)])
        }
        guard head.headers.first(name: "x-amz-date") != nil,
            let payloadHash = head.headers.first(name: "x-amz-content-sha256")
        else { return error(400, "InvalidRequest", "x-amz-date and x-amz-content-sha256 are required") }
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.first == server.bucket else {
            return error(404, "NoSuchBucket", "The specified bucket does not exist")
        }
        let key = parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : ""
        let digest = Array(hasher.finalize())
        if server.verification == .all, payloadHash != "UNSIGNED-PAYLOAD",
            payloadHash != digest.map({ String(format: "%02x", $0) }).joined()
        {
            return error(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match")
        }
        let sentChecksum = head.headers.first(name: "x-amz-checksum-sha256")
        if server.verification != .nothing, let sentChecksum, sentChecksum != Data(digest).base64EncodedString() {
            return error(400, "BadDigest", "The SHA256 you specified did not match the calculated checksum.")
        }
        let checksumMode = head.headers.first(name: "x-amz-checksum-mode") == "ENABLED"
        let checksumAlgorithm = head.headers.first(name: "x-amz-checksum-algorithm")
        let kept = ["content-type", "cache-control", "x-amz-meta-sha256", "content-disposition"]
        var stored: [String: String] = [:]
        for name in kept { if let value = head.headers.first(name: name) { stored[name] = value } }
        let retained = server.retainBodies ? bytes : nil
        return server.state.withLock { state -> Answer in
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
                state.objects[key] = S3FaultServer.Object(
                    bytes: retained, size: received, sha256: digest, headers: stored, writes: writes,
                    checksum: sentChecksum.map { _ in Data(digest).base64EncodedString() })
                return Answer(status: 200, headers: [("ETag", "\"\(Data(digest.prefix(16)).base64EncodedString())\"")])
            case .createMultipart:
                let id = "upload-\(state.nextUpload)~/+="
                state.nextUpload += 1
                state.uploads[id] = S3FaultServer.Upload(
                    key: key, headers: stored, checksumAlgorithm: checksumAlgorithm)
                let xml =
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult><Bucket>\(server.bucket)"
                    + "</Bucket><Key>\(key)</Key><UploadId>\(id)</UploadId></InitiateMultipartUploadResult>"
                return Answer(status: 200, headers: [("Content-Type", "application/xml")], body: Array(xml.utf8))
            case .uploadPart:
                guard let id = query["uploadId"], state.uploads[id] != nil,
                    let number = query["partNumber"].flatMap({ Int($0) })
                else { return error(404, "NoSuchUpload", "The specified upload does not exist.") }
                let etag = "\"part-\(number)-\(digest.prefix(4).map { String(format: "%02x", $0) }.joined())\""
                state.uploads[id]?.parts[number] = (
                    retained, received, S3FaultServer.SHA256Snapshot(digest: digest), etag
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
                    let digests = listed.compactMap { upload.parts[$0.number]?.hasher.digest }
                    guard
                        server.verification == .nothing
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
                var whole: [UInt8]? = server.retainBodies ? [] : nil
                var size = 0
                for entry in listed {
                    guard let part = upload.parts[entry.number] else { continue }
                    size += part.size
                    if let partBytes = part.bytes { whole? += partBytes }
                }
                let writes = (state.objects[upload.key]?.writes ?? 0) + 1
                state.objects[upload.key] = S3FaultServer.Object(
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
