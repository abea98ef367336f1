package import Foundation
package import PushPrepCore

/// One end of a decoder process's channel (a socketpair): messages framed as a 4-byte
/// big-endian length and that many bytes of JSON. Every frame read is checked before it is
/// trusted: its length (1 ... ``maximumFrame``), that it arrives whole before the deadline, and
/// that it decodes as the expected message type; anything else is an error, and the decoder
/// that sent it is to be treated as crashed.
///
/// Blocking: the decoder process calls it on its main thread; the parent only through
/// ``DecoderProcess``, which runs it on a thread of its own.
package struct DecoderChannel: Sendable {
    /// The largest frame either side accepts: a manifest entry with its operations and warnings
    /// fits many times over; a decoder cannot make its parent buffer more.
    package static let maximumFrame = 1 << 20

    /// The socket's descriptor (not owned: whoever made the channel closes it).
    package let descriptor: Int32

    /// A channel on `descriptor`.
    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Sends `message` as one frame.
    package func send(_ message: some Encodable) throws(PushPrepError) {
        let body: Data
        do {
            body = try JSONEncoder().encode(message)
        } catch {
            throw PushPrepError(.ioError, "cannot encode a decoder message: \(error)")
        }
        guard body.count <= Self.maximumFrame else {
            throw PushPrepError(.ioError, "a decoder message of \(body.count) bytes is over \(Self.maximumFrame)")
        }
        let length = UInt32(body.count).bigEndian
        try write(withUnsafeBytes(of: length) { Data($0) } + body)
    }

    /// Writes `bytes` whole, as they are (the garbage test mode uses it to send what is no frame).
    package func write(_ bytes: Data) throws(PushPrepError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw PushPrepError(.ioError, "cannot write to the decoder channel: \(Self.describe(errno))")
            }
            offset += written
        }
    }

    /// Reads one frame and decodes it as `type`, waiting at most until `deadline`.
    package func receive<Message: Decodable>(
        _ type: Message.Type, deadline: ContinuousClock.Instant
    ) throws(PushPrepError) -> Message {
        let header = try read(4, deadline: deadline, what: "a message's length")
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length >= 1, length <= Self.maximumFrame else {
            throw PushPrepError(
                .ioError, "the decoder sent a frame of \(length) bytes; frames are 1 to \(Self.maximumFrame) bytes")
        }
        let body = try read(length, deadline: deadline, what: "a message of \(length) bytes")
        do {
            return try JSONDecoder().decode(Message.self, from: body)
        } catch {
            throw PushPrepError(.ioError, "the decoder sent a message that is not a valid \(Message.self)")
        }
    }

    /// Reads exactly `count` bytes, or throws: end of stream, an error, or the deadline.
    private func read(_ count: Int, deadline: ContinuousClock.Instant, what: String) throws(PushPrepError) -> Data {
        var bytes = Data(count: count)
        var offset = 0
        while offset < count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                throw PushPrepError(.ioError, "the decoder did not send \(what) in time")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno != EINTR {
                throw PushPrepError(.ioError, "cannot wait for the decoder channel: \(Self.describe(errno))")
            }
            guard ready > 0 else { continue }
            let received = bytes.withUnsafeMutableBytes { buffer in
                recv(descriptor, buffer.baseAddress! + offset, count - offset, 0)
            }
            if received < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw PushPrepError(.ioError, "cannot read the decoder channel: \(Self.describe(errno))")
            }
            guard received > 0 else {
                throw PushPrepError(.ioError, "the decoder closed its channel before \(what)")
            }
            offset += received
        }
        return bytes
    }

    /// An errno value in words.
    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
