import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PushPrepCore
import PushPrepJSON
import PushPrepPayload
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// `POST /v1/payload` with renditions, against the API running in this process
/// (HummingbirdTesting's router, as ``HostileRequestTests/withRouter(keys:_:_:)`` runs it): the body is the
/// payload `pushprep payload --compact` prints, with each provider's Android keys carrying the
/// Android rendition, and what a platform goes without is said in `PushPrep-Note` headers, one
/// per attachment and platform, as the CLI's lines on standard error.
@Suite(.serialized)
struct PayloadNotesRouteTests {
    static let base = "https://cdn.example.com/push"
    static let imageID = "img-2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f"
    static let audioID = "aud-3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6"
    static let androidID = "and-4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607"

    /// A photo with its Android rendition, as a version 2 manifest entry.
    static let image = #"""
        {"id": "\#(imageID)", "status": "ok", "source": "photo.jpg", "kind": "image",
         "file": "\#(imageID).jpg", "url": "\#(base)/\#(imageID).jpg", "urlExpires": null,
         "uti": "public.jpeg", "mime": "image/jpeg", "bytes": 120000,
         "sha256": "\#(String(repeating: "1f", count: 32))", "width": 1200, "height": 900, "duration": null,
         "frames": 1, "options": {"UNNotificationAttachmentOptionsTypeHintKey": "public.jpeg"},
         "input": {"type": "jpeg", "bytes": 240000, "width": 1200, "height": 900},
         "operations": [], "warnings": [],
         "renditions": {"android": {"id": "\#(androidID)", "file": "\#(androidID).jpg",
           "url": "\#(base)/\#(androidID).jpg", "urlExpires": null, "mime": "image/jpeg", "bytes": 60000,
           "sha256": "\#(String(repeating: "2e", count: 32))", "width": 1024, "height": 512,
           "crop": {"x": 0, "y": 150, "width": 1200, "height": 600}}}}
        """#

    /// A sound, which has no rendition.
    static let audio = #"""
        {"id": "\#(audioID)", "status": "ok", "source": "jingle.wav", "kind": "audio",
         "file": "\#(audioID).m4a", "url": "\#(base)/\#(audioID).m4a", "urlExpires": null,
         "uti": "public.mpeg-4-audio", "mime": "audio/mp4", "bytes": 48000,
         "sha256": "\#(String(repeating: "3d", count: 32))", "width": null, "height": null, "duration": 3.0,
         "frames": null, "options": {"UNNotificationAttachmentOptionsTypeHintKey": "public.mpeg-4-audio"},
         "input": {"type": "wav", "bytes": 529000, "duration": 3.0},
         "operations": [], "warnings": []}
        """#

    /// Posts `body` to `/v1/payload`.
    static func post(_ client: any TestClientProtocol, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/payload", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: body))
    }

    /// What `pushprep payload` builds from the same entries (every one with `all`, as `--all`):
    /// its payload and its notes.
    static func expected(_ entries: [String], _ dialect: PushDialect, all: Bool = false) throws -> BuiltPayload {
        let decoded = try entries.map { try JSONDecoder().decode(ManifestEntry.self, from: Data($0.utf8)) }
        let selection = try PayloadSelection(from: decoded, all: all)
        return try PayloadBuilder.buildWithNotes(
            dialect: dialect, attachments: selection.attachments, content: PayloadContent(title: "T", body: "B"))
    }

    @Test(
        "the body is the payload with the Android rendition in each provider's keys, and no note when nothing is left out"
    )
    func renditionsInTheBody() async throws {
        try await HostileRequestTests.withRouter { client, _ in
            for dialect in PushDialect.allCases {
                let answer = try await Self.post(
                    client,
                    #"{"entries": [\#(Self.image)], "dialect": "\#(dialect.rawValue)", "title": "T", "body": "B"}"#)
                #expect(answer.status == .ok, "\(dialect): \(String(buffer: answer.body))")
                let expected = try Self.expected([Self.image], dialect)
                #expect(String(buffer: answer.body) == expected.payload.serialized(), "\(dialect)")
                #expect(answer.headers[values: .pushPrepNote] == [], "\(dialect)")
                let android = "\(Self.base)/\(Self.androidID).jpg"
                let body = String(buffer: answer.body)
                #expect(body.contains(android) == (dialect != .apns), "\(dialect): \(body)")
            }
            let airship = try await Self.post(
                client, #"{"entries": [\#(Self.image)], "dialect": "airship", "title": "T", "body": "B"}"#)
            let payload = try JSONValue.parse(Array(airship.body.readableBytesView)).value
            #expect(payload["device_types"] == .array([.string("ios"), .string("android")]))
            #expect(
                payload["notification"]?["android"]?["style"]
                    == .object([
                        "type": .string("big_picture"), "big_picture": .string("\(Self.base)/\(Self.androidID).jpg"),
                    ]))
        }
    }

    @Test("attachments on a host no phone reaches (serve without --public-url) get a PushPrep-Note saying so")
    func unreachableHostsInHeaders() async throws {
        try await HostileRequestTests.withRouter { client, _ in
            let local = Self.image.replacingOccurrences(of: Self.base, with: "http://127.0.0.1:8080/v1/attachments")
            let answer = try await Self.post(client, #"{"entries": [\#(local)], "title": "T", "body": "B"}"#)
            #expect(answer.status == .ok)
            let notes = answer.headers[values: .pushPrepNote].filter { $0.hasPrefix("unreachable_url") }
            #expect(notes.count == 1, "one note for the one host: \(notes)")
            #expect(notes.first?.contains("127.0.0.1") == true && notes.first?.contains("--public-url") == true)
            let public_ = try await Self.post(client, #"{"entries": [\#(Self.image)], "title": "T", "body": "B"}"#)
            #expect(public_.headers[values: .pushPrepNote].allSatisfy { !$0.hasPrefix("unreachable_url") })
        }
    }

    @Test("what a platform goes without is a PushPrep-Note header per attachment and platform, as the CLI's lines")
    func notesInHeaders() async throws {
        try await HostileRequestTests.withRouter { client, _ in
            let sound = try await Self.post(
                client, #"{"entries": [\#(Self.audio)], "dialect": "airship", "title": "T", "body": "B"}"#)
            #expect(sound.status == .ok)
            #expect(
                sound.headers[values: .pushPrepNote] == [
                    "android: \(Self.audioID) has no Android rendition (a sound); the Android push carries no image"
                ])
            // Android phones still get the push, with its text.
            #expect(
                try JSONValue.parse(Array(sound.body.readableBytesView)).value["device_types"]
                    == .array([.string("ios"), .string("android")]))

            let both = try await Self.post(
                client,
                #"{"entries": [\#(Self.audio), \#(Self.image)], "dialect": "onesignal", "all": true, "title": "T", "body": "B"}"#
            )
            #expect(both.status == .ok)
            let expected = try Self.expected([Self.audio, Self.image], .onesignal, all: true)
            #expect(both.headers[values: .pushPrepNote] == expected.notes.map(\.description))
            #expect(
                expected.notes.map(\.description) == [
                    "android: \(Self.audioID) has no Android rendition (a sound); the Android push shows"
                        + " \(Self.imageID)'s picture"
                ])
            #expect(String(buffer: both.body) == expected.payload.serialized())

            // APNs reaches iPhones only: no note, whatever the attachments.
            let apns = try await Self.post(
                client, #"{"entries": [\#(Self.audio)], "dialect": "apns", "title": "T", "body": "B"}"#)
            #expect(apns.status == .ok)
            #expect(apns.headers[values: .pushPrepNote] == [])

            // A rendition without a URL is the CLI's invalid_payload, as a problem.
            let unlinked = Self.image.replacingOccurrences(
                of: #""url": "\#(Self.base)/\#(Self.androidID).jpg""#, with: #""url": null"#)
            #expect(unlinked != Self.image)
            let refused = try await Self.post(
                client, #"{"entries": [\#(unlinked)], "dialect": "fcm", "title": "T", "body": "B"}"#)
            #expect(refused.status == .unprocessableContent, "\(String(buffer: refused.body))")
            #expect(try HostileRequestTests.json(refused)["code"] as? String == "invalid_payload")
        }
    }

    @Test(
        "one attachment by default, said in PushPrep-Selection; all and ids choose more; messages name ids and all, not --id"
    )
    func oneByDefault() async throws {
        try await HostileRequestTests.withRouter { client, _ in
            let entries = "[\(Self.image), \(Self.audio)]"
            let first = try await Self.post(client, #"{"entries": \#(entries), "title": "T", "body": "B"}"#)
            #expect(first.status == .ok, "\(String(buffer: first.body))")
            let payload = try JSONValue.parse(Array(first.body.readableBytesView)).value
            #expect(payload["attachments"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [Self.imageID])
            #expect(
                first.headers[values: .pushPrepSelection] == [
                    "took \(Self.imageID), the first of 2 ready attachments; the others: \(Self.audioID);"
                        + " choose with ids, or send every one with all"
                ])
            // The CLI's payload for the same entries, byte for byte.
            let cli = try Self.expected([Self.image, Self.audio], .apns)
            #expect(String(buffer: first.body) == cli.payload.serialized())

            let all = try await Self.post(client, #"{"entries": \#(entries), "all": true, "title": "T", "body": "B"}"#)
            #expect(all.status == .ok)
            #expect(all.headers[values: .pushPrepSelection] == [])
            let both = try JSONValue.parse(Array(all.body.readableBytesView)).value
            #expect(
                both["attachments"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [Self.imageID, Self.audioID])
            let chosen = try await Self.post(
                client, #"{"entries": \#(entries), "ids": ["\#(Self.audioID)"], "title": "T", "body": "B"}"#)
            #expect(chosen.status == .ok && chosen.headers[values: .pushPrepSelection] == [])
            #expect(
                String(buffer: chosen.body).contains(Self.audioID)
                    && !String(buffer: chosen.body).contains(Self.imageID))

            // Refusals in this API's words.
            let airship = try await Self.post(
                client, #"{"entries": \#(entries), "all": true, "dialect": "airship", "title": "T", "body": "B"}"#)
            #expect(airship.status == .unprocessableContent)
            let detail = try HostileRequestTests.json(airship)["detail"] as? String
            #expect(
                detail
                    == "Airship carries one attachment per push, got 2 (\(Self.imageID), \(Self.audioID)): choose one"
                    + " with ids", "\(detail ?? "")")
            let twice = try await Self.post(
                client,
                #"{"entries": \#(entries), "all": true, "ids": ["\#(Self.audioID)"], "title": "T", "body": "B"}"#)
            #expect(twice.status == .unprocessableContent)
            #expect(
                try HostileRequestTests.json(twice)["detail"] as? String
                    == "give ids (the attachments to send) or all (every ready one), not both")
            let wrongType = try await Self.post(client, #"{"entries": \#(entries), "all": "yes", "body": "B"}"#)
            #expect(wrongType.status == .badRequest, "\(String(buffer: wrongType.body))")
        }
    }
}
