import CSandboxShims
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
        try write(Self.frame(message))
    }

    /// Sends `message` as one frame with `descriptor` attached (SCM_RIGHTS): the receiver gets a
    /// descriptor of the same open file (the same file description, so the same offset).
    package func send(_ message: some Encodable, passing descriptor: Int32) throws(PushPrepError) {
        let frame = try Self.frame(message)
        let sent = frame.withUnsafeBytes { buffer in
            csandboxshims_send_with_descriptor(self.descriptor, buffer.baseAddress!, UInt(buffer.count), descriptor)
        }
        guard sent > 0 else {
            throw PushPrepError(
                .ioError, "cannot pass a descriptor on the decoder channel: \(Self.describe(Int32(-sent)))")
        }
        try write(frame.dropFirst(sent))
    }

    /// `message` as a frame: its length, 4 bytes big-endian, and its JSON.
    private static func frame(_ message: some Encodable) throws(PushPrepError) -> Data {
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
        return withUnsafeBytes(of: length) { Data($0) } + body
    }

    /// Writes `bytes` whole, as they are (the garbage test mode uses it to send what is no frame).
    package func write(_ bytes: Data) throws(PushPrepError) {
        let bytes = Data(bytes)  // indexed from 0, also when it is a slice
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

    /// Reads one frame and decodes it as `type`, waiting at most until `deadline`. A descriptor
    /// sent with it is closed: only ``receiveWithDescriptor(_:deadline:)`` takes one.
    package func receive<Message: Decodable>(
        _ type: Message.Type, deadline: ContinuousClock.Instant
    ) throws(PushPrepError) -> Message {
        let (message, descriptor) = try receiveWithDescriptor(type, deadline: deadline)
        if let descriptor { close(descriptor) }
        return message
    }

    /// Reads one frame and decodes it as `type`, waiting at most until `deadline`, with the one
    /// descriptor sent with it (SCM_RIGHTS), if any; the caller owns it. Any further descriptor
    /// is closed as it arrives, and so is this one when the frame is not valid.
    package func receiveWithDescriptor<Message: Decodable>(
        _ type: Message.Type, deadline: ContinuousClock.Instant
    ) throws(PushPrepError) -> (Message, Int32?) {
        var descriptor: Int32 = -1
        do throws(PushPrepError) {
            let header = try read(4, deadline: deadline, what: "a message's length", descriptor: &descriptor)
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            guard length >= 1, length <= Self.maximumFrame else {
                throw PushPrepError(
                    .ioError, "the decoder sent a frame of \(length) bytes; frames are 1 to \(Self.maximumFrame) bytes")
            }
            let body = try read(
                length, deadline: deadline, what: "a message of \(length) bytes", descriptor: &descriptor)
            guard let message = try? JSONDecoder().decode(Message.self, from: body) else {
                throw PushPrepError(.ioError, "the decoder sent a message that is not a valid \(Message.self)")
            }
            return (message, descriptor >= 0 ? descriptor : nil)
        } catch {
            if descriptor >= 0 { close(descriptor) }
            throw error
        }
    }

    /// Reads exactly `count` bytes, or throws: end of stream, an error, or the deadline.
    /// A descriptor sent with them goes to `descriptor` (when it is still -1).
    private func read(
        _ count: Int, deadline: ContinuousClock.Instant, what: String, descriptor received: inout Int32
    ) throws(PushPrepError) -> Data {
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
            let got = bytes.withUnsafeMutableBytes { buffer in
                csandboxshims_receive_with_descriptor(
                    descriptor, buffer.baseAddress! + offset, UInt(count - offset), &received)
            }
            if got < 0 {
                if got == -Int(EINTR) || got == -Int(EAGAIN) { continue }
                throw PushPrepError(.ioError, "cannot read the decoder channel: \(Self.describe(Int32(-got)))")
            }
            guard got > 0 else {
                throw PushPrepError(.ioError, "the decoder closed its channel before \(what)")
            }
            offset += got
        }
        return bytes
    }

    /// An errno value in words.
    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
