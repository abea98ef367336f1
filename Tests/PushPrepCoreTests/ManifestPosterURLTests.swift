import Foundation
import Testing

@testable import PushPrepCore

/// A movie's poster carries its own URL; a manifest written before it did still gives one.
struct ManifestPosterURLTests {
    private func attachment(poster: String) throws -> PushPrepCore.Attachment {
        let json = """
            {"id":"vid-1","status":"ok","source":"a.mov","kind":"video","file":"vid-1.mp4",
             "url":"https://cdn.example.com/p/vid-1.mp4?sig=1","uti":"public.mpeg-4","mime":"video/mp4",
             "bytes":10,"sha256":"\(String(repeating: "0", count: 64))","width":2,"height":2,"duration":1,
             "frames":1,"options":{"UNNotificationAttachmentOptionsTypeHintKey":"public.mpeg-4"},
             "input":{"type":"mp4","bytes":10,"width":2,"height":2,"duration":1},"operations":[],"warnings":[],
             "poster":\(poster)}
            """
        return try JSONDecoder().decode(PushPrepCore.Attachment.self, from: Data(json.utf8))
    }

    @Test("an older manifest's poster, without a url, gets the movie's URL with its name")
    func olderManifest() throws {
        let movie = try attachment(poster: #"{"file":"vid-1-poster.jpg","width":2,"height":2}"#)
        #expect(movie.poster?.url == nil)
        #expect(movie.posterURL == "https://cdn.example.com/p/vid-1-poster.jpg?sig=1")
    }

    @Test("a poster's own url wins, and is written as null when there is none")
    func ownURL() throws {
        var movie = try attachment(
            poster: #"{"file":"vid-1-poster.jpg","url":"https://other/x.jpg","width":2,"height":2}"#)
        #expect(movie.posterURL == "https://other/x.jpg")
        movie.setURLs(baseURL: nil)
        #expect(movie.url == nil && movie.poster?.url == nil && movie.posterURL == nil)
        let written = String(decoding: try JSONEncoder().encode(movie.poster), as: UTF8.self)
        #expect(written.contains(#""url":null"#), "\(written)")
        movie.setURLs(baseURL: "https://cdn.example.com/q/")
        #expect(movie.poster?.url == "https://cdn.example.com/q/vid-1-poster.jpg")
        #expect(movie.url == "https://cdn.example.com/q/vid-1.mp4")
    }
}
