internal import CFFmpeg
internal import CFFmpegShims
import Foundation
package import PushPrepCore

extension MediaInput {
    /// The demuxer's fuzzing entry (`make fuzz`'s `demux` target and the regression corpus): the
    /// bytes as an anonymous in-memory file, opened as every input is (the descriptor-only custom
    /// I/O, the whitelists, the limits) under a 2-second deadline, then described by
    /// ``MediaProbe`` as the pipelines read it.
    package static func fuzzDemux(_ bytes: [UInt8]) throws(PushPrepError) {
        let fd = cffmpegshims_memfd("pushprep-fuzz")
        guard fd >= 0 else { throw PushPrepError.system("memfd_create") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw PushPrepError(.ioError, "cannot write the in-memory file") }
        let input = try MediaInput(
            path: "/proc/self/fd/\(fd)", maxPixels: ProcessingSettings().maxPixels, deadline: MediaDeadline(seconds: 2))
        let probe = MediaProbe(input)
        precondition(probe.streamCount <= Int(MediaInput.maxStreams), "more streams than the limit")
        _ = probe.isMP4Family
    }
}
