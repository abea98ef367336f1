import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue
@testable import PushPrepWorker

/// What a worker's out directory store publishes: every file a job wrote for the attachment
/// (the file, a movie's poster, the renditions), each moved out of the job's staging folder.
struct OutputStoreTests {
    @Test func directoryStorePublishesTheRenditionsWithTheAttachment() async throws {
        let out = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(out) }
        let store = DirectoryOutputStore(outputDirectory: out.path)
        let staging = "\(store.stagingRoot)/worker-1-1"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let names = ["vid-1.mp4", "vid-1-poster.jpg", "and-1.jpg", "web-1.jpg", "wic-1.png"]
        for name in names { try Data(name.utf8).write(to: URL(fileURLWithPath: "\(staging)/\(name)")) }
        func rendition(_ id: String, _ ext: String) -> Rendition {
            Rendition(
                id: id, file: "\(id).\(ext)", mime: ext == "png" ? "image/png" : "image/jpeg", bytes: 9, sha256: "00",
                width: 2, height: 1, crop: CropRectangle(x: 0, y: 0, width: 2, height: 1))
        }
        var movie = Attachment(
            id: "vid-1", source: "clip.mov", kind: .video, file: "vid-1.mp4", uti: "public.mpeg-4", mime: "video/mp4",
            bytes: 9, sha256: "00", width: 2, height: 1, duration: 1, frames: 25,
            options: AttachmentOptions(typeHint: "public.mpeg-4"),
            input: InputInfo(type: "mov", bytes: 9, width: 2, height: 1, duration: 1), operations: [], warnings: [],
            poster: Attachment.Poster(file: "vid-1-poster.jpg", width: 2, height: 1))
        movie.renditions = Renditions(
            android: rendition("and-1", "jpg"), web: rendition("web-1", "jpg"), webIcon: rendition("wic-1", "png"))
        let published = try await store.publish(movie, from: staging, baseURL: nil)
        #expect(published == movie)
        for name in names {
            #expect(FileManager.default.fileExists(atPath: "\(out.path)/\(name)"), "\(name) is not published")
            #expect(!FileManager.default.fileExists(atPath: "\(staging)/\(name)"), "\(name) is left in staging")
        }
    }
}
