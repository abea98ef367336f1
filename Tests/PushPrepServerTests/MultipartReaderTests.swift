import NIOCore
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The streaming `multipart/form-data` reader: the same parts whatever the chunks the body
/// arrives in, content that looks like a delimiter kept as content, and bodies it must refuse.
struct MultipartReaderTests {
    /// What a body read whole comes to: each part's headers and its content joined.
    struct Part: Equatable {
        var headers: MultipartPartHeaders
        var content: [UInt8]
    }

    /// Feeds `body` in chunks of the given sizes (cycled) and collects the parts; also checks
    /// that no content piece outlives its part and the body ends.
    static func read(_ body: [UInt8], boundary: String, chunks: [Int]) throws -> [Part] {
        var reader = try MultipartReader(boundary: boundary)
        var parts: [Part] = []
        var ended = false
        var offset = 0
        var turn = 0
        while offset < body.count {
            let size = min(chunks[turn % chunks.count], body.count - offset)
            turn += 1
            for event in try reader.feed(ByteBuffer(bytes: body[offset..<offset + size])) {
                switch event {
                case .part(let headers):
                    parts.append(Part(headers: headers, content: []))
                case .content(let bytes):
                    #expect(!parts.isEmpty && !ended)
                    parts[parts.count - 1].content += bytes.readableBytesView
                case .end:
                    ended = true
                }
            }
            offset += size
        }
        try reader.finish()
        #expect(ended)
        return parts
    }

    /// A file whose bytes hold CRs, LFs, `--`, the boundary without its line break and a
    /// delimiter cut one byte short: none of it ends the part.
    static let trickyFile: [UInt8] =
        Array("\r\n\r\n--\r\n-".utf8) + Array("--XyZ".utf8) + [0xFF, 0xD8, 0xFF, 0x0D] + Array("\r\n--Xy".utf8)
        + Array(repeating: 0x0D, count: 40) + Array("\r\n--XyY".utf8) + (0..<255).map { UInt8($0) }

    static func body(file: [UInt8], boundary: String = "XyZ") -> [UInt8] {
        Array("preamble to ignore\r\n--\(boundary)\r\n".utf8)
            + Array("Content-Disposition: form-data; name=\"settings\"\r\n\r\n{\"width\":320}".utf8)
            + Array("\r\n--\(boundary)\r\n".utf8)
            + Array(
                "Content-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8)
            + file + Array("\r\n--\(boundary)--\r\nepilogue\r\n".utf8)
    }

    @Test func partsAreTheSameWhateverTheChunks() throws {
        let body = Self.body(file: Self.trickyFile)
        let expected = [
            Part(headers: MultipartPartHeaders(name: "settings"), content: Array("{\"width\":320}".utf8)),
            Part(
                headers: MultipartPartHeaders(name: "file", filename: "a \"b\".jpg", contentType: "image/jpeg"),
                content: Self.trickyFile),
        ]
        #expect(try Self.read(body, boundary: "XyZ", chunks: [body.count]) == expected)
        for size in 1...12 {
            #expect(try Self.read(body, boundary: "XyZ", chunks: [size]) == expected, "chunks of \(size)")
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<50 {
            let sizes = (0..<8).map { _ in Int(random.next() % 97) + 1 }
            #expect(try Self.read(body, boundary: "XyZ", chunks: sizes) == expected, "chunks \(sizes)")
        }
    }

    /// A body that opens with its first delimiter (no preamble, no line break before it), a
    /// part with transport padding after its delimiter, and an empty part.
    @Test func noPreambleAndPaddedDelimiters() throws {
        let body = Array(
            "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--b  \r\nContent-Disposition: form-data; name=\"c\"\r\n\r\nx\r\n--b--"
                .utf8)
        let parts = try Self.read(body, boundary: "b", chunks: [3])
        #expect(parts.map(\.headers.name) == ["a", "c"])
        #expect(parts.map(\.content) == [[], Array("x".utf8)])
    }

    /// Content passes through: a megabyte fed in one buffer comes out in pieces that together
    /// are the file, with no more than a delimiter's length held back between feeds.
    @Test func contentIsHandedOverAsItArrives() throws {
        var reader = try MultipartReader(boundary: "XyZ")
        let head = Array("--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".utf8)
        _ = try reader.feed(ByteBuffer(bytes: head))
        let chunk = [UInt8](repeating: 0x0D, count: 1 << 20)
        var passed = 0
        for _ in 0..<4 {
            for case .content(let bytes) in try reader.feed(ByteBuffer(bytes: chunk)) { passed += bytes.readableBytes }
        }
        #expect(passed >= 4 * chunk.count - 8)
        #expect(throws: PushPrepError.self) { try reader.finish() }
    }

    @Test func malformedBodiesAreRefused() throws {
        let cut = Array(Self.body(file: Self.trickyFile).dropLast(14))
        #expect(throws: PushPrepError.self) { try Self.read(cut, boundary: "XyZ", chunks: [64]) }
        let noName = Array("--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--".utf8)
        #expect(throws: PushPrepError.self) { try Self.read(noName, boundary: "b", chunks: [64]) }
        let noDisposition = Array("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--".utf8)
        #expect(throws: PushPrepError.self) { try Self.read(noDisposition, boundary: "b", chunks: [64]) }
        let badLine = Array("--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--bjunk\r\n".utf8)
        #expect(throws: PushPrepError.self) { try Self.read(badLine, boundary: "b", chunks: [64]) }
        // An endless header never fills memory: refused past the cap.
        var reader = try MultipartReader(boundary: "b", maxHeaderBytes: 1000)
        _ = try reader.feed(ByteBuffer(string: "--b\r\nX-Long: "))
        #expect(throws: PushPrepError.self) {
            for _ in 0..<10 { _ = try reader.feed(ByteBuffer(repeating: UInt8(ascii: "a"), count: 500)) }
        }
        #expect(throws: PushPrepError.self) { try MultipartReader(boundary: "") }
        #expect(throws: PushPrepError.self) { try MultipartReader(boundary: String(repeating: "a", count: 71)) }
    }

    @Test func boundaryFromTheContentType() throws {
        #expect(try MultipartReader.boundary(contentType: "multipart/form-data; boundary=abc") == "abc")
        #expect(
            try MultipartReader.boundary(contentType: "Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b;c\"")
                == "a b;c")
        #expect(try MultipartReader.boundary(contentType: "image/jpeg") == nil)
        #expect(try MultipartReader.boundary(contentType: "") == nil)
        #expect(throws: PushPrepError.self) { try MultipartReader.boundary(contentType: "multipart/mixed; boundary=a") }
        #expect(throws: PushPrepError.self) { try MultipartReader.boundary(contentType: "multipart/form-data") }
    }
}
