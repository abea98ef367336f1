import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushPrepCore
import PushPrepQueue
import PushPrepRemote
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// Issue 28 §2, against the API in this process (HummingbirdTesting's router, no socket):
/// callback URLs judged at submit time by the webhooks' own address policy, type
/// mismatches in words, and an upload's own file name as its job's display name. Every
/// address here is a literal: nothing is resolved outside this machine.
@Suite(.serialized)
struct SubmitChecksTests {
    /// Runs `body` with a client of the API on a SQLite queue in a temporary directory, a server
    /// that takes callbacks (as with `--webhook-secret-file`) and uploads.
    static func withServer(
        _ configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, URL) async throws -> Void
    ) async throws {
        try await HostileRequestTests.withRouter({
            $0.acceptsCallbacks = true
            configure(&$0)
        }) { client, dir in try await body(client, dir) }
    }

    static func post(_ client: any TestClientProtocol, _ path: String, _ body: String) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
    }

    static func create(_ client: any TestClientProtocol, callback: String) async throws -> TestResponse {
        try await post(
            client, "/v1/jobs", #"{"sources": ["https://media.example.com/a.jpg"], "callback_url": "\#(callback)"}"#)
    }

    static func jobCount(_ client: any TestClientProtocol) async throws -> Int {
        let listed = try await client.execute(uri: "/v1/jobs", method: .get)
        return (try HostileRequestTests.json(listed)["jobs"] as? [Any])?.count ?? -1
    }

    // MARK: Callback URLs

    /// Metadata, loopback, private, link-local and unspecified callback URLs are `422
    /// blocked_address` when submitted (jobs, uploads, synchronous processing), and only the
    /// private network's refusal suggests an opt-in.
    @Test func callbackURLsAreJudgedAtSubmit() async throws {
        try await Self.withServer { client, dir in
            let closed = [
                "http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:9/hook", "http://[::1]/hook",
                "http://[fe80::1]/hook", "http://0.0.0.0/hook", "http://[::ffff:169.254.169.254]/x",
            ]
            for url in closed {
                let answer = try await Self.create(client, callback: url)
                #expect(answer.status == .unprocessableContent, "\(url)")
                let problem = try HostileRequestTests.json(answer)
                #expect(problem["code"] as? String == "blocked_address", "\(url): \(problem)")
                let detail = try #require(problem["detail"] as? String)
                #expect(detail.hasPrefix("callback_url: "), "\(detail)")
                #expect(!detail.contains("--allow"), "never suggested: \(detail)")
            }
            let privateAnswer = try await Self.create(client, callback: "http://10.0.0.7/hook")
            #expect(privateAnswer.status == .unprocessableContent)
            let privateDetail = try #require(try HostileRequestTests.json(privateAnswer)["detail"] as? String)
            #expect(privateDetail.contains("--allow-host 10.0.0.7"), "\(privateDetail)")

            let process = try await Self.post(
                client, "/v1/process",
                #"{"sources": ["https://media.example.com/a.jpg"], "callback_url": "http://169.254.169.254/x"}"#)
            #expect(process.status == .unprocessableContent)
            #expect(try HostileRequestTests.json(process)["code"] as? String == "blocked_address")

            let upload = try await client.execute(
                uri: "/v1/uploads?callback_url=http%3A%2F%2F169.254.169.254%2Fx", method: .post,
                headers: [.contentType: "image/bmp"], body: ByteBuffer(bytes: TinyBMP.bytes(1)))
            #expect(upload.status == .unprocessableContent)
            #expect(try HostileRequestTests.json(upload)["code"] as? String == "blocked_address")

            #expect(try await Self.jobCount(client) == 0, "nothing was queued")
            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: dir.appendingPathComponent("uploads").path)
            #expect(leftovers.isEmpty, "\(leftovers)")

            let scheme = try await Self.create(client, callback: "ftp://203.0.114.5/hook")
            #expect(scheme.status == .unprocessableContent)
            #expect(try HostileRequestTests.json(scheme)["code"] as? String == "invalid_request")

            let fine = try await Self.create(client, callback: "https://203.0.114.5/hook")
            #expect(fine.status == .accepted, "a public address is taken")
        }
    }

    /// `--allow-private-networks` and `--allow-host` count at submit as at delivery: loopback
    /// and private addresses pass with them, link-local never does by the policy.
    @Test func callbackChecksHonourTheOptIns() async throws {
        try await Self.withServer({ $0.remote.allowPrivateNetworks = true }) { client, _ in
            #expect(try await Self.create(client, callback: "http://127.0.0.1:9/hook").status == .accepted)
            #expect(try await Self.create(client, callback: "http://10.0.0.7/hook").status == .accepted)
            let metadata = try await Self.create(client, callback: "http://169.254.169.254/x")
            #expect(metadata.status == .unprocessableContent)
            let detail = try #require(try HostileRequestTests.json(metadata)["detail"] as? String)
            #expect(!detail.contains("--allow"), "\(detail)")
        }
        let allowHost: (inout ServerConfiguration) -> Void = { $0.remote.allowedHosts = ["127.0.0.1"] }
        try await Self.withServer(allowHost) { client, _ in
            let allowed = try await Self.create(client, callback: "http://127.0.0.1:9/hook")
            #expect(allowed.status == .accepted)
            let other = try await Self.create(client, callback: "http://127.0.0.2/hook")
            #expect(other.status == .unprocessableContent)
        }
    }

    // MARK: Type mismatches

    /// Every field of a create request given the wrong JSON type is named with what it must be,
    /// in words; nested settings and the other endpoints' fields too, never "of another type".
    @Test func typeMismatchesNameTheExpectedType() async throws {
        #expect(Set(JobRoutes.CreateRequest.fieldTypes.keys) == JobRoutes.CreateRequest.keys)
        try await Self.withServer { client, _ in
            let sourcesAnswer = try await Self.post(client, "/v1/jobs", #"{"sources":"http://x/a.jpg"}"#)
            #expect(sourcesAnswer.status == .badRequest)
            #expect(
                try HostileRequestTests.json(sourcesAnswer)["detail"] as? String == "sources must be an array of URLs")
            for (field, words) in JobRoutes.CreateRequest.fieldTypes where field != "sources" {
                // A value of another JSON type than the field takes.
                let wrong = field == "callback_url" ? "5" : (field == "metadata" ? "5" : #"[true]"#)
                let answer = try await Self.post(
                    client, "/v1/jobs", #"{"sources": ["https://media.example.com/a.jpg"], "\#(field)": \#(wrong)}"#)
                #expect(answer.status == .badRequest, "\(field)")
                let detail = try HostileRequestTests.json(answer)["detail"] as? String
                if field == "metadata" {
                    #expect(detail == "metadata must be a JSON object", "\(field)")
                } else {
                    #expect(detail == "\(field) must be \(words)", "\(field)")
                }
            }
            let nested = try await Self.post(
                client, "/v1/jobs", #"{"sources": ["https://media.example.com/a.jpg"], "settings": {"width": "wide"}}"#)
            let nestedDetail = try #require(try HostileRequestTests.json(nested)["detail"] as? String)
            #expect(nestedDetail.contains("must be") && !nestedDetail.contains("another type"), "\(nestedDetail)")
            let preflight = try await Self.post(client, "/v1/preflight", #"{"payload": {"aps": {}}, "fetch": "yes"}"#)
            #expect(try HostileRequestTests.json(preflight)["detail"] as? String == "fetch must be true or false")
            let payload = try await Self.post(client, "/v1/payload", #"{"job_ids": 3}"#)
            #expect(try HostileRequestTests.json(payload)["detail"] as? String == "job_ids must be an array")
        }
    }

    // MARK: Upload names

    /// An upload's own file name, cut to its last component, is its job's `source_name` in the
    /// 202, in `GET /v1/jobs/{id}` and on the console, while `source` stays the stored path and
    /// the client's metadata comes back as sent, without the name.
    @Test func uploadsKeepTheirFileName() async throws {
        try await Self.withServer { client, _ in
            let boundary = "----pushprep-name"
            var form = ByteBuffer(
                string:
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"campaign\":\"spring\"}\r\n"
                    + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photos/Beach Day.bmp\"\r\n"
                    + "Content-Type: image/bmp\r\n\r\n")
            form.writeBytes(TinyBMP.bytes(2))
            form.writeString("\r\n--\(boundary)--\r\n")
            let created = try await client.execute(
                uri: "/v1/uploads", method: .post, headers: [.contentType: "multipart/form-data; boundary=\(boundary)"],
                body: form)
            #expect(created.status == .accepted, "\(String(buffer: created.body))")
            let job = try #require((try HostileRequestTests.json(created)["jobs"] as? [[String: Any]])?.first)
            #expect(job["source_name"] as? String == "Beach Day.bmp")
            #expect((job["source"] as? String)?.hasSuffix(".bmp") == true)
            let id = try #require(job["id"] as? Int)

            let shown = try HostileRequestTests.json(try await client.execute(uri: "/v1/jobs/\(id)", method: .get))
            #expect(shown["source_name"] as? String == "Beach Day.bmp")
            #expect((shown["source"] as? String)?.contains("/uploads/") == true)
            let metadata = try #require(shown["metadata"] as? [String: Any])
            #expect(metadata.count == 1 && metadata["campaign"] as? String == "spring", "\(metadata)")

            let page = try await client.execute(uri: "/jobs/\(id)", method: .get)
            #expect(String(buffer: page.body).contains("Beach Day.bmp"))
            let list = try await client.execute(uri: "/jobs", method: .get)
            #expect(String(buffer: list.body).contains("Beach Day.bmp"))

            let url = try HostileRequestTests.json(
                try await Self.post(client, "/v1/jobs", #"{"sources": ["https://media.example.com/a.jpg"]}"#))
            let urlJob = try #require((url["jobs"] as? [[String: Any]])?.first)
            #expect(urlJob["source_name"] is NSNull, "a URL is its own name")

            let reserved = try await Self.post(
                client, "/v1/jobs",
                #"{"sources": ["https://media.example.com/b.jpg"], "metadata": {"pushprep:source_name": "x"}}"#)
            #expect(reserved.status == .badRequest)
        }
    }

    /// The name as kept: no directories of either separator, no control or format characters,
    /// at most 255 bytes.
    @Test func uploadNamesAreSanitised() {
        #expect(UploadName.sanitized("C:\\Users\\me\\clip.mov") == "clip.mov")
        #expect(UploadName.sanitized("../../etc/passwd") == "passwd")
        #expect(UploadName.sanitized("a\u{202E}vom.exe") == "avom.exe")
        #expect(UploadName.sanitized("dir/") == nil)
        #expect(UploadName.sanitized("..") == nil)
        let long = String(repeating: "é", count: 200) + ".jpg"
        let kept = UploadName.sanitized(long)
        #expect((kept?.utf8.count ?? 0) <= 255 && kept?.hasPrefix("éé") == true)
    }
}
