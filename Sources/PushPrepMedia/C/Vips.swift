internal import CVips
internal import CVipsShims
import Foundation
import Logging
package import PushPrepCore
import Synchronization

/// Process-wide libvips setup. libvips must be started once before any image work; doing it
/// lazily from a `static let` makes that exactly once and thread-safe.
package enum VipsRuntime {
    private static let started: Result<Void, PushPrepError> = {
        if cvipsshims_init(CommandLine.arguments.first ?? "pushprep") != 0 {
            return .failure(PushPrepError(.ioError, "libvips failed to start: \(takeVipsError())"))
        }
        cvipsshims_set_log_handler { domain, _, message in
            let text = message.map { String(cString: $0) } ?? ""
            LibraryLog.log(.debug, text, domain: domain.map { String(cString: $0) } ?? "VIPS")
        }
        return .success(())
    }()

    /// Starts libvips if it is not running yet.
    package static func start() throws(PushPrepError) {
        try started.get()
    }

    /// The libvips version, e.g. "8.14.1".
    static var version: String { String(cString: vips_version_string()) }
}

/// Copies libvips' error buffer right after a failing call and clears it. The buffer is
/// process-global, so it must be read once, by the job whose call failed, and never with
/// `vips_error_buffer()` + `vips_error_clear()`, which race between concurrent jobs.
///
/// Successful calls of other jobs can also leave lines in the shared buffer (libheif logs
/// "bad seek" on files it then decodes fine), and those name their source first: a path, or
/// `source` for one read from a descriptor, as every input is. Those lines are therefore
/// dropped, and only the last three lines are kept: the failing call's own messages come last.
func takeVipsError() -> String {
    guard let copy = cvipsshims_error_copy() else { return "unknown libvips error" }
    defer { g_free(copy) }
    let lines = String(cString: copy)
        .split(separator: "\n")
        .map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty && !$0.hasPrefix("/") && !$0.hasPrefix("source: ") }
    return lines.isEmpty ? "unknown libvips error" : lines.suffix(3).joined(separator: "; ")
}

/// The error for a failed libvips call. The code comes from the call, never from the text:
/// the error buffer is shared by every job of the process, so another job's lines can be in
/// it. (Formats libvips cannot decode are refused as `unsupported_type` from their bytes, by
/// ``MediaDetector``, before any call.)
func vipsError(_ code: PushPrepError.Code, _ what: String) -> PushPrepError {
    PushPrepError(code, "\(what): \(takeVipsError())")
}

/// Runs a libvips call that returns 0 on success and turns a failure into a ``PushPrepError``
/// with the given code, reading the error buffer once.
func vipsCall(_ code: PushPrepError.Code, _ what: String, _ body: () -> Int32) throws(PushPrepError) {
    if body() != 0 {
        throw vipsError(code, what)
    }
}

/// Owns one `VipsImage` reference and releases it when it goes away.
///
/// Confined to one job: images are created, used and dropped on the thread that processes one
/// input, so this type is deliberately not `Sendable`.
package final class VipsImageRef {
    let pointer: UnsafeMutablePointer<VipsImage>

    /// Takes ownership of a reference the caller already holds.
    init(owning pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    var format: VipsBandFormat { vips_image_get_format(pointer) }
    var interpretation: VipsInterpretation { vips_image_get_interpretation(pointer) }

    /// An integer metadata field, or nil when absent.
    func int(_ name: String) -> Int? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, name, &value) == 0 else {
            _ = takeVipsError()
            return nil
        }
        return Int(value)
    }

    /// An integer-array metadata field (e.g. GIF frame delays), or nil when absent.
    func intArray(_ name: String) -> [Int]? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var values: UnsafeMutablePointer<Int32>? = nil
        var count: Int32 = 0
        guard vips_image_get_array_int(pointer, name, &values, &count) == 0, let values else {
            _ = takeVipsError()
            return nil
        }
        return (0..<Int(count)).map { Int(values[$0]) }
    }

    /// A string metadata field (e.g. `jpeg-chroma-subsample`), or nil when absent.
    func string(_ name: String) -> String? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var value: UnsafePointer<CChar>? = nil
        guard vips_image_get_string(pointer, name, &value) == 0, let value else {
            _ = takeVipsError()
            return nil
        }
        return String(cString: value)
    }

    /// Whether a metadata field is present.
    func has(_ name: String) -> Bool { vips_image_get_typeof(pointer, name) != 0 }

    /// The names of all metadata fields.
    package func fieldNames() -> [String] {
        guard let names = vips_image_get_fields(pointer) else { return [] }
        defer { g_strfreev(names) }
        var result: [String] = []
        var index = 0
        while let name = names[index] {
            result.append(String(cString: name))
            index += 1
        }
        return result
    }

    func setInt(_ name: String, _ value: Int) {
        vips_image_set_int(pointer, name, Int32(clamping: value))
    }

    func setIntArray(_ name: String, _ values: [Int]) {
        var array = values.map { Int32(clamping: $0) }
        vips_image_set_array_int(pointer, name, &array, Int32(array.count))
    }

    func remove(_ name: String) {
        _ = vips_image_remove(pointer, name)
    }

    /// Runs an operation producing a new image and wraps the result.
    static func make(
        _ code: PushPrepError.Code,
        _ what: String,
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) throws(PushPrepError) -> VipsImageRef {
        var out: UnsafeMutablePointer<VipsImage>? = nil
        let status = body(&out)
        guard status == 0, let out else {
            if let out { g_object_unref(UnsafeMutableRawPointer(out)) }
            throw vipsError(code, what)
        }
        return VipsImageRef(owning: out)
    }

    /// This image converted to `interpretation` (libvips' colourspace); a corrupt input, said
    /// as `what`, when libvips cannot convert it.
    func colourspace(_ interpretation: VipsInterpretation, _ what: String) throws(PushPrepError) -> VipsImageRef {
        try Self.make(.corruptInput, what) { cvipsshims_colourspace(pointer, $0, interpretation) }
    }

    /// This image's bands cast to `format`; a corrupt input, said as `what`, when libvips cannot
    /// cast them.
    func cast(_ format: VipsBandFormat, _ what: String) throws(PushPrepError) -> VipsImageRef {
        try Self.make(.corruptInput, what) { cvipsshims_cast(pointer, $0, format) }
    }
}

/// Owns one `VipsSource` (a readable stream libvips decodes from).
final class VipsSourceRef {
    let pointer: UnsafeMutablePointer<VipsSource>

    /// Reads the open file `descriptor` through a duplicate libvips makes of it (and closes
    /// when the source goes): no path is opened. The duplicate shares the file offset with
    /// `descriptor` and with any other duplicate, so one file gets one source.
    ///
    /// libvips is started first: a source is the first libvips object an image makes, and
    /// creating one otherwise starts libvips implicitly (its class initialiser calls
    /// `vips_init`) without PushPrep's settings, racing with a video's poster on another
    /// thread starting it through ``VipsRuntime`` (a crash in `vips_init`, seen in CI).
    init(duplicating descriptor: Int32) throws(PushPrepError) {
        try VipsRuntime.start()
        guard let source = vips_source_new_from_descriptor(descriptor) else {
            throw PushPrepError(.ioError, "cannot read the input: \(takeVipsError())")
        }
        pointer = source
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }
}

/// Owns a buffer libvips allocated with g_malloc (an encoded image).
func takeVipsBuffer(_ buffer: UnsafeMutableRawPointer?, _ length: Int) -> [UInt8] {
    guard let buffer else { return [] }
    defer { g_free(buffer) }
    return Array(UnsafeRawBufferPointer(start: buffer, count: length))
}
