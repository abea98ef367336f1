internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// Reads one stream's packets in order, with the deadline checked between packets and
/// truncation tolerated: a container that stops making sense part-way (a cut-off file) ends
/// the reading like the end of the file, and the reason is kept for a warning. Running out of
/// time, memory or I/O still fails.
struct AudioPacketReader {
    /// Why reading stopped before the end of the file, when it did.
    private(set) var damage: String?
    /// Packets of the stream handed over.
    private(set) var packets = 0

    private let input: MediaInput
    private let streamIndex: Int32
    private let packet: MediaPacket

    init(input: MediaInput, stream: UnsafeMutablePointer<AVStream>) throws(PushPrepError) {
        self.input = input
        streamIndex = stream.pointee.index
        packet = try MediaPacket()
    }

    /// Calls `body` with each packet of the stream (unreferenced afterwards) until it returns
    /// false or the input ends.
    mutating func forEach(_ body: (UnsafeMutablePointer<AVPacket>) throws(PushPrepError) -> Bool)
        throws(PushPrepError)
    {
        while true {
            let more: Bool
            do {
                more = try input.read(into: packet.pointer, during: "reading the audio")
            } catch {
                guard error.code == .corruptInput, !input.deadline.fired else { throw error }
                damage = error.message
                return
            }
            guard more else { return }
            defer { av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            packets += 1
            guard try body(packet.pointer) else { return }
        }
    }
}
