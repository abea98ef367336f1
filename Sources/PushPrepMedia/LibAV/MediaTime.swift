internal import CFFmpeg
internal import CFFmpegShims
import PushPrepCore

/// Arithmetic on timestamps that come from a file. A demuxer hands over whatever 64-bit values
/// the file holds (a fragmented MP4's `tfdt`, a start time close to 2^63 µs), so every sum,
/// difference and seconds→ticks conversion here reports overflow instead of trapping: an absurd
/// timestamp fails that one input with `corrupt_input`, never the process and every job in it.
package enum MediaTime {
    /// `a + b`.
    static func sum(_ a: Int64, _ b: Int64) throws(PushPrepError) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw outOfRange("\(a) + \(b)") }
        return value
    }

    /// `a - b`.
    static func difference(_ a: Int64, _ b: Int64) throws(PushPrepError) -> Int64 {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        guard !overflow else { throw outOfRange("\(a) - \(b)") }
        return value
    }

    /// `seconds` in units of `timeBase`, rounded to the nearest.
    static func ticks(_ seconds: Double, in timeBase: AVRational) throws(PushPrepError) -> Int64 {
        guard timeBase.num > 0, timeBase.den > 0 else {
            throw PushPrepError(.corruptInput, "the media has an invalid time base \(timeBase.num)/\(timeBase.den)")
        }
        return try integer(seconds * Double(timeBase.den) / Double(timeBase.num), "\(seconds) s")
    }

    /// `seconds` in AV_TIME_BASE units (microseconds), as `avformat_seek_file` takes them.
    static func microseconds(_ seconds: Double) throws(PushPrepError) -> Int64 {
        try integer(seconds * Double(cffmpegshims_time_base()), "\(seconds) s")
    }

    /// `value` rounded, when it is finite and an Int64 holds it.
    static func integer(_ value: Double, _ what: @autoclosure () -> String) throws(PushPrepError) -> Int64 {
        guard let result = Int64(exactly: value.rounded()) else { throw outOfRange(what()) }
        return result
    }

    private static func outOfRange(_ what: String) -> PushPrepError {
        PushPrepError(.corruptInput, "the media's timestamps are out of range (\(what) overflows 64 bits)")
    }
}
