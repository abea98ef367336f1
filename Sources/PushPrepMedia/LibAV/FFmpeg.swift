internal import CFFmpeg
internal import CFFmpegShims
import Foundation
import Logging
package import PushPrepCore
import Synchronization

/// Process-wide FFmpeg setup: libav's log goes to swift-log, and no single allocation may
/// exceed a cap (a hostile header cannot ask for gigabytes in one go).
enum FFmpegRuntime {
    /// The largest single allocation libav may make. 1 GiB is far above what a 4K frame needs.
    static let maxAllocation = 1 << 30

    private static let started: Void = {
        av_max_alloc(maxAllocation)
        cffmpegshims_set_log_callback(
            { level, line in
                guard let line else { return }
                let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !text.isEmpty else { return }
                // libav's errors are about one input and are reported as its failure; as log
                // lines they are detail for whoever debugs.
                LibraryLog.log(level <= AV_LOG_WARNING ? .debug : .trace, text, domain: "libav")
            },
            AV_LOG_VERBOSE
        )
    }()

    static func start() { _ = started }

    /// FFmpeg's library versions, e.g. "libavformat 59.27.100".
    static var versions: String {
        func text(_ version: UInt32) -> String { "\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)" }
        return "libavformat \(text(avformat_version())), libavcodec \(text(avcodec_version()))"
    }
}

/// A libav error code's text.
func avErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(code, &buffer, buffer.count)
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// Turns a negative libav return code into a ``PushPrepError``: an interrupted call is a
/// `timeout` (or `cancelled`) when the deadline fired, invalid data is `corrupt_input`, and so on.
func avError(
    _ status: Int32, _ what: String, deadline: MediaDeadline?, default code: PushPrepError.Code = .corruptInput
)
    -> PushPrepError
{
    if let deadline, deadline.fired {
        return deadline.error(what)
    }
    if status == cffmpegshims_error_enomem() {
        return PushPrepError(.inputTooLarge, "\(what): the input needs more memory than allowed")
    }
    if status == cffmpegshims_error_decoder_not_found() {
        return PushPrepError(.unsupportedType, "\(what): no decoder for this codec")
    }
    return PushPrepError(code, "\(what): \(avErrorText(status))")
}

/// Calls a libav function returning a negative AVERROR on failure.
@discardableResult
func avCall(
    _ what: String, deadline: MediaDeadline?, default code: PushPrepError.Code = .corruptInput,
    _ body: () -> Int32
) throws(PushPrepError) -> Int32 {
    let status = body()
    if status < 0 { throw avError(status, what, deadline: deadline, default: code) }
    return status
}

/// A per-input deadline checked by libav's interrupt callback and between pipeline steps,
/// which also fires as soon as the job's ``ProcessingControl`` is stopped.
///
/// Owns the C struct the callback reads, at a stable address for the object's lifetime.
/// Confined to one job, except for the stop, which may arrive from any thread.
package final class MediaDeadline {
    /// The C struct. A class of its own so that a stop arriving from another thread while the
    /// deadline goes away still writes to live memory.
    private final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<cffmpegshims_deadline>

        init(deadlineMicroseconds: Int64) {
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: cffmpegshims_deadline(deadline_us: deadlineMicroseconds, cancelled: 0, fired: 0))
        }

        deinit {
            pointer.deallocate()
        }

        /// Sets the C flag atomically; thread-safe.
        func cancel() { cffmpegshims_deadline_cancel(pointer) }
    }

    private let storage: Storage
    let seconds: Double
    private let control: ProcessingControl?
    private let observation: ProcessingControl.Observation?

    /// A deadline `seconds` from now (none when 0), that also fires when `control` is stopped.
    package init(seconds: Double, control: ProcessingControl? = nil) {
        self.seconds = seconds
        let deadline = seconds > 0 ? cffmpegshims_now_us() + Int64(seconds * 1_000_000) : 0
        let storage = Storage(deadlineMicroseconds: deadline)
        self.storage = storage
        self.control = control
        observation = control?.onStop { storage.cancel() }
    }

    deinit {
        if let observation { control?.removeObserver(observation) }
    }

    /// The C struct, for `cffmpegshims_interrupt_callback` and `cffmpegshims_open_input`.
    var pointer: UnsafeMutablePointer<cffmpegshims_deadline> { storage.pointer }

    /// Whether the interrupt callback or ``check(_:)`` stopped a call because of this deadline.
    var fired: Bool { pointer.pointee.fired != 0 }

    /// Moves the deadline `duration` later (when there is one): the time an input waited for
    /// memory before decoding is not its own processing time. Call it from the job's thread,
    /// between libav calls.
    package func postpone(by duration: Duration) {
        let microseconds = duration.wholeMicroseconds
        guard microseconds > 0, pointer.pointee.deadline_us > 0 else { return }
        pointer.pointee.deadline_us += microseconds
    }

    /// Throws once the deadline has passed or the job was stopped (checked between steps).
    package func check(_ step: String) throws(PushPrepError) {
        let limit = pointer.pointee.deadline_us
        if cffmpegshims_deadline_is_cancelled(pointer) != 0 || (limit > 0 && cffmpegshims_now_us() > limit) {
            pointer.pointee.fired = 1
            throw error(step)
        }
    }

    /// Why `what` was stopped: the job's stop (`cancelled`, or the job's own `timeout`) when
    /// its control was stopped, else this deadline's `timeout`.
    func error(_ what: String) -> PushPrepError {
        if let reason = control?.reason { return reason.error }
        return PushPrepError(.timeout, "\(what): gave up after \(seconds) s (--timeout)")
    }
}
