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
}
