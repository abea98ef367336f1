import Dispatch
package import Foundation

/// Shared helpers for tests that work on real files: temporary directories, running external
/// programs (`vips`, `ffmpeg`, the built `pushprep`), and building JPEGs with chosen EXIF.
///
/// Tests that need an external program should be gated with a trait, so that a machine
/// without it skips them with a reason instead of failing:
///
///     @Test(.enabled(if: TestTools.programAvailable("vips"), "needs the vips command-line tool"))
package enum TestTools {
    /// A failure of a helper: a program that is missing, failed or hung.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) { self.description = description }
    }

    // MARK: - Temporary directories

    /// Creates a new, empty, uniquely named directory under the system temporary directory
    /// (`pushprep-tests-<uuid>`). The caller removes it, usually with
    /// `defer { TestTools.removeDirectory(dir) }`, or uses ``withTemporaryDirectory(_:)``.
    package static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pushprep-tests-\(UUID().uuidString.lowercased())", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    /// Removes a directory made by ``temporaryDirectory()`` and everything in it; ignores errors.
    package static func removeDirectory(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    /// Runs `body` with a fresh temporary directory that is removed afterwards, even on error.
    package static func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = try temporaryDirectory()
        defer { removeDirectory(directory) }
        return try body(directory)
    }

    /// The directory that holds `Package.swift`: Tests/PushPrepTestSupport/TestTools.swift, three up.
    package static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Debian's Python, where `make deps` installs what the tests need from it (python3-jsonschema).
    package static let python = "/usr/bin/python3"

    // MARK: - Programs

    /// The absolute path of an executable named `name` found on `PATH` (or `name` itself when
    /// it contains a slash and is executable), else nil.
    package static func programPath(_ name: String) -> String? {
        let fm = FileManager.default
        if name.contains("/") { return fm.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(name)"
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                fm.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }

    /// Whether an executable named `name` is on `PATH`.
    package static func programAvailable(_ name: String) -> Bool { programPath(name) != nil }

    /// Runs a program (a name looked up on `PATH`, or a path) and waits for it.
    ///
    /// Standard output and error are captured through temporary files, so a chatty program can
    /// never block on a full pipe; standard input is `stdin`, else the file `stdinFile` (which may
    /// be a device such as `/dev/zero`), else empty. The run is bounded:
    /// after `timeout` the program is killed and this throws, so a hung tool fails its test
    /// instead of hanging the suite. A non-zero exit status is returned, not thrown. `environment`,
    /// when given, is the whole environment of the program (a test that must not inherit `HOME`).
    @discardableResult
    package static func run(
        _ program: String, _ arguments: [String], stdin: Data? = nil, stdinFile: URL? = nil,
        currentDirectory: URL? = nil, environment: [String: String]? = nil, timeout: Duration = .seconds(120)
    ) throws -> (status: Int32, stdout: Data, stderr: Data) {
        guard let executable = programPath(program) else {
            throw Failure(description: "\(program) is not installed (not found on PATH)")
        }
        let scratch = try temporaryDirectory()
        defer { removeDirectory(scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        if let environment { process.environment = environment }
        process.standardOutput = outHandle
        process.standardError = errHandle
        var inHandle: FileHandle?
        if let stdin {
            let inURL = scratch.appendingPathComponent("stdin")
            try stdin.write(to: inURL)
            inHandle = try FileHandle(forReadingFrom: inURL)
            process.standardInput = inHandle
        } else if let stdinFile {
            inHandle = try FileHandle(forReadingFrom: stdinFile)
            process.standardInput = inHandle
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { try? inHandle?.close() }

        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        if finished.wait(timeout: .now() + seconds) == .timedOut {
            process.terminate()
            _ = finished.wait(timeout: .now() + 5)
            throw Failure(
                description: "\(program) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        process.waitUntilExit()
        let stdout = (try? Data(contentsOf: outURL)) ?? Data()
        let stderr = (try? Data(contentsOf: errURL)) ?? Data()
        return (process.terminationStatus, stdout, stderr)
    }

    /// ``run(_:_:stdin:stdinFile:currentDirectory:environment:timeout:)`` from an async test: the
    /// wait happens on a thread of its own, never on one of Swift concurrency's few threads.
    package static func runAsync(
        _ program: String, _ arguments: [String], timeout: Duration = .seconds(120)
    ) async throws -> (status: Int32, stdout: Data, stderr: Data) {
        try await ChildProcessTools.blocking { try run(program, arguments, timeout: timeout) }
    }

    /// Runs a program and throws, with its standard error, unless it exits with status 0.
    @discardableResult
    package static func runChecked(_ program: String, _ arguments: [String]) throws -> Data {
        let result = try run(program, arguments)
        guard result.status == 0 else {
            throw Failure(
                description: "\(program) \(arguments.joined(separator: " ")) exited with \(result.status): "
                    + String(decoding: result.stderr, as: UTF8.self))
        }
        return result.stdout
    }

    /// Runs the `vips` command-line tool (e.g. `vips("black", out, "64", "48")`); throws with
    /// its standard error on failure.
    package static func vips(_ args: String...) throws {
        try runChecked("vips", args)
    }

    /// Runs `ffmpeg -y -v error -nostdin ARGS…`; throws with its standard error on failure.
    package static func ffmpeg(_ args: String...) throws {
        try runChecked("ffmpeg", ["-y", "-v", "error", "-nostdin"] + args)
    }

    /// Whether `ffmpeg` is installed and has an encoder of this name (`libx264`, `aac`, …).
    package static func ffmpegCanEncode(_ encoder: String) -> Bool { ffmpegEncoders.contains(encoder) }

    /// Whether `ffmpeg` is installed and can write this container format (`mp4`, `webm`, …).
    package static func ffmpegCanMux(_ format: String) -> Bool { ffmpegMuxers.contains(format) }

    /// Whether `vips` is installed and has this operation (`heifsave`, `webpsave`, `magicksave`, …).
    package static func vipsHasOperation(_ name: String) -> Bool { vipsOperations.contains(name) }

    private static let ffmpegEncoders: Set<String> = ffmpegList("-encoders")
    private static let ffmpegMuxers: Set<String> = ffmpegList("-muxers")
    private static let vipsOperations: Set<String> = {
        guard let result = try? run("vips", ["-l"], timeout: .seconds(30)), result.status == 0 else { return [] }
        // Lines look like "  VipsForeignSaveHeifFile (heifsave), save image in HEIF format …".
        var names: Set<String> = []
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
            guard let open = line.firstIndex(of: "("), let close = line[open...].firstIndex(of: ")") else { continue }
            names.insert(String(line[line.index(after: open)..<close]))
        }
        return names
    }()

    /// The names in the second column of `ffmpeg -encoders` / `-muxers` (after the legend).
    private static func ffmpegList(_ option: String) -> Set<String> {
        guard let result = try? run("ffmpeg", ["-hide_banner", option], timeout: .seconds(30)), result.status == 0
        else { return [] }
        var names: Set<String> = []
        var pastLegend = false
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("--") {
                pastLegend = true
                continue
            }
            guard pastLegend else { continue }
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 2 else { continue }
            // A muxer may list several names: "E mov,mp4,m4a,3gp,…".
            for name in columns[1].split(separator: ",") { names.insert(String(name)) }
        }
        return names
    }

    // MARK: - The built CLI

    /// The environment variable naming the `pushprep` the end-to-end tests run instead of the one
    /// built beside them: `make test` runs the CLI, queue and server suites a second time with it
    /// set to the release build, so that a defect only the optimiser shows fails a test.
    package static let binaryVariable = "PUSHPREP_BINARY"

    /// True when the tests run a `pushprep` named by ``binaryVariable`` (the release pass).
    package static var runsNamedBinary: Bool {
        ProcessInfo.processInfo.environment[binaryVariable].map { !$0.isEmpty } ?? false
    }

    /// The `pushprep` executable the end-to-end tests run, or nil when none is found: the one
    /// ``binaryVariable`` names when it is set (nil when that is not an executable, so the test
    /// fails rather than silently running another build); otherwise the one built next to the test
    /// bundle, then the package's `.build/debug` and `.build/<triple>/debug`.
    package static func pushprepBinary() -> URL? {
        let fm = FileManager.default
        if let named = ProcessInfo.processInfo.environment[binaryVariable], !named.isEmpty {
            let url = URL(fileURLWithPath: named)
            return fm.isExecutableFile(atPath: url.path) ? url : nil
        }
        var candidates: [URL] = []
        if let first = CommandLine.arguments.first {
            let here = URL(fileURLWithPath: first).deletingLastPathComponent()
            candidates.append(here.appendingPathComponent("pushprep"))
            // On Darwin the test binary sits inside PushPrepPackageTests.xctest/Contents/MacOS.
            candidates.append(
                here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("pushprep"))
        }
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("pushprep"))
        }
        let root = packageRoot
        candidates.append(root.appendingPathComponent(".build/debug/pushprep"))
        if let triples = try? fm.contentsOfDirectory(atPath: root.appendingPathComponent(".build").path) {
            for triple in triples.sorted() where triple.contains("-") {
                candidates.append(root.appendingPathComponent(".build/\(triple)/debug/pushprep"))
            }
        }
        return candidates.first { fm.isExecutableFile(atPath: $0.path) }
    }

    // MARK: - JPEG with EXIF

    /// Returns `jpeg` with its EXIF replaced by a minimal little-endian EXIF block holding
    /// orientation `orientation` and, when `gps` is set, a GPS IFD with latitude
    /// 48°51'30" N and longitude 2°17'40" E (so that metadata stripping can be checked).
    ///
    /// Any APP1 EXIF segment among the leading marker segments is removed first, so the result
    /// has exactly one; the new APP1 segment goes right after the SOI marker. `jpeg` must start
    /// with SOI (FF D8).
    package static func jpegWithEXIF(_ jpeg: Data, orientation: Int, gps: Bool) -> Data {
        let bytes = [UInt8](jpeg)
        precondition(bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8, "not a JPEG")
        precondition((1...8).contains(orientation), "EXIF orientation is 1...8")

        // Copy the leading marker segments except APP1 EXIF; stop at SOS or anything unusual.
        var head: [UInt8] = []
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA || marker == 0xD9 || (0xD0...0xD7).contains(marker) || marker == 0x01 { break }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { break }
            let segment = bytes[offset..<(offset + 2 + length)]
            let isExif = marker == 0xE1 && length >= 8 && Array(bytes[(offset + 4)..<(offset + 10)]) == exifHeader
            if !isExif { head += segment }
            offset += 2 + length
        }

        let tiff = exifTIFF(orientation: orientation, gps: gps)
        let payload = exifHeader + tiff
        let length = payload.count + 2
        precondition(length <= 0xFFFF)
        let app1: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Data([0xFF, 0xD8] + app1 + head + bytes[offset...])
    }

    private static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]

    /// A little-endian TIFF structure: IFD0 with Orientation (and a GPS IFD pointer), and the
    /// GPS IFD. Offsets are from the start of the TIFF header.
    private static func exifTIFF(orientation: Int, gps: Bool) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        // type: 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL; `value` is the 4-byte field.
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        func ifdSize(_ entries: Int) -> Int { 2 + 12 * entries + 4 }

        let ifd0Offset = 8
        let ifd0Entries = gps ? 2 : 1
        let gpsOffset = ifd0Offset + ifdSize(ifd0Entries)
        var out: [UInt8] = [0x49, 0x49] + u16(42) + u32(ifd0Offset)
        out += u16(ifd0Entries)
        out += entry(0x0112, 3, 1, u16(orientation))  // Orientation
        if gps { out += entry(0x8825, 4, 1, u32(gpsOffset)) }  // GPSInfo IFD pointer
        out += u32(0)  // no IFD1
        guard gps else { return out }

        let gpsEntries = 5
        let latitudeOffset = gpsOffset + ifdSize(gpsEntries)
        let longitudeOffset = latitudeOffset + 24
        out += u16(gpsEntries)
        out += entry(0x0000, 1, 4, [2, 2, 0, 0])  // GPSVersionID
        out += entry(0x0001, 2, 2, Array("N".utf8) + [0])  // GPSLatitudeRef
        out += entry(0x0002, 5, 3, u32(latitudeOffset))  // GPSLatitude
        out += entry(0x0003, 2, 2, Array("E".utf8) + [0])  // GPSLongitudeRef
        out += entry(0x0004, 5, 3, u32(longitudeOffset))  // GPSLongitude
        out += u32(0)
        func rationals(_ values: [(Int, Int)]) -> [UInt8] { values.flatMap { u32($0.0) + u32($0.1) } }
        out += rationals([(48, 1), (51, 1), (30, 1)])
        out += rationals([(2, 1), (17, 1), (40, 1)])
        return out
    }
}
