import CVips
import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepMedia

/// libvips' process-wide setup: only the allow-listed loaders may ever run.
@Suite(.enabled(if: TestTools.programPath("vips") != nil, "needs the vips program to write fixtures"))
struct VipsRuntimeTests {
    @Test(
        "loaders outside the allow-list are blocked even when called directly",
        arguments: [
            (
                "svg",
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"64\" height=\"64\"><rect width=\"64\" height=\"64\"/></svg>"
            ),
            ("ppm", "P3\n2 1\n255\n255 0 0 0 255 0\n"),
            ("csv", "1,2,3\n4,5,6\n"),
            ("mat", "2 2\n1 2\n3 4\n"),
        ]
    )
    func blockedLoaders(fileExtension: String, content: String) throws {
        try VipsRuntime.start()
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("input.\(fileExtension)").path
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
        // The vips program (not blocked) can read it, so the file itself is fine...
        if fileExtension == "ppm" || fileExtension == "csv" {
            #expect(try TestTools.run("vipsheader", [path]).status == 0)
        }
        // ...but PushPrep's libvips refuses to run the loader.
        #expect(throws: PushPrepError.self) { _ = try ImageHeaderReader.open(ImageSource(path: path)) }
    }

    @Test("a libvips .v file, whose loader is blocked, is refused")
    func nativeFormatBlocked() throws {
        try VipsRuntime.start()
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let path = directory.appendingPathComponent("x.v").path
        try TestTools.vips("black", path, "8", "8")
        #expect(throws: PushPrepError.self) { _ = try ImageHeaderReader.open(ImageSource(path: path)) }
        #expect(throws: PushPrepError.self) {
            _ = try MediaDetector.require(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        }
    }

    @Test("allowed loaders still work")
    func allowedLoaders() throws {
        try VipsRuntime.start()
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        try TestTools.vips("black", directory.appendingPathComponent("x.v").path, "8", "4", "--bands", "3")
        for ext in ["jpg", "png", "gif", "webp", "tif"] {
            let path = directory.appendingPathComponent("x.\(ext)").path
            try TestTools.vips("copy", directory.appendingPathComponent("x.v").path, path)
            let image = try ImageHeaderReader.open(ImageSource(path: path))
            #expect(image.width == 8 && image.height == 4, "\(ext)")
        }
    }

    /// In a fresh process (an exit test), an image's first libvips object, its source, starts
    /// libvips through ``VipsRuntime``, with PushPrep's settings. Before the fix it started
    /// libvips implicitly (with the default operation cache of 100), and a video's poster
    /// starting it on another thread at the same time crashed in `vips_init`.
    @Test("an image's source starts libvips with PushPrep's settings, in a process that had not started it")
    func sourceStartsRuntime() async {
        await #expect(processExitsWith: .success) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("vips-start-\(getpid())").path
            FileManager.default.createFile(atPath: path, contents: Data("not decoded".utf8))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { exit(2) }
            _ = try? ImageSource(descriptor: descriptor)
            close(descriptor)
            exit(vips_cache_get_max() == 0 && vips_cache_get_max_files() == 0 ? 0 : 1)
        }
    }
}
