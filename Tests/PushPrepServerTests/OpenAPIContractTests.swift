import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PushPrepCore
import PushPrepQueue
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The OpenAPI document is the contract: these tests hold it and the code to each other.
struct OpenAPIContractTests {
    static let documentURL = TestTools.packageRoot.appendingPathComponent("Sources/PushPrepServer/openapi.json")

    static func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: documentURL)) as? [String: Any])
    }

    /// Every route the server registers is in the document, and every documented operation is
    /// a route (HEAD is documented where it is a route of its own: the attachments).
    @Test func routesAndDocumentAgree() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let queue = try SQLiteJobQueue(path: dir.appendingPathComponent("q.db").path, logger: Logger(label: "test"))
        let configuration = ServerConfiguration(attachmentsDirectory: dir.path, uploadsDirectory: dir.path)
        let router = APIServer.router(
            configuration: configuration, queue: queue, publicURL: PublicURL(configured: nil), registry: nil,
            readiness: {})
        var routed = Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
        routed.insert("GET /metrics")  // registered only with a metrics registry
        // The console's HTML pages are for browsers, not part of the API's contract.
        let console = Router(context: APIRequestContext.self)
        ConsoleRoutes(
            queue: queue, configuration: configuration,
            renderer: JobRenderer(configuration: configuration, publicURL: PublicURL(configured: nil)),
            publicURL: PublicURL(configured: nil), sessions: ConsoleSessions(secret: nil, keys: nil),
            names: ServerNames(configuration), failures: AuthFailureLimiter(limit: 1, window: .seconds(1))
        ).register(on: console)
        routed.subtract(console.routes.map { "\($0.method.rawValue) \($0.path)" })
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, item) in paths {
            for method in item.keys where method != "parameters" {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        #expect(routed.subtracting(documented).isEmpty, "routes missing from the document")
        #expect(documented.subtracting(routed).isEmpty, "documented operations with no route")
    }

    /// The document's settings are the declared settings, with the same bounds: each bound is
    /// accepted by the settings' own validation, and one step past it refused.
    @Test func settingsSchemaMatchesTheDeclarations() throws {
        let schemas = try #require((try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let properties = try #require(
            (schemas["Settings"] as? [String: Any])?["properties"] as? [String: [String: Any]])
        #expect(Set(properties.keys) == Set(ProcessingSettings.Declared.all.map(\.key)))
        for (key, schema) in properties {
            func accepts(_ value: Any) throws -> Bool {
                let data = try JSONSerialization.data(withJSONObject: [key: value])
                guard let settings = try? JSONDecoder().decode(ProcessingSettings.self, from: data) else {
                    return false
                }
                return (try? settings.validate()) != nil
            }
            let step: Double = schema["type"] as? String == "integer" ? 1 : 0.001
            if let minimum = schema["minimum"] as? Double {
                #expect(try accepts(minimum), "\(key) minimum \(minimum)")
                #expect(!(try accepts(minimum - step)), "\(key) below its minimum")
            }
            if let minimum = schema["exclusiveMinimum"] as? Double {
                #expect(!(try accepts(minimum)), "\(key) exclusive minimum \(minimum)")
                #expect(try accepts(minimum + step), "\(key) just above its exclusive minimum")
            }
            if let maximum = schema["maximum"] as? Double {
                #expect(try accepts(maximum), "\(key) maximum \(maximum)")
                #expect(!(try accepts(maximum + step)), "\(key) above its maximum")
            }
            if let values = schema["enum"] as? [String] {
                for value in values { #expect(try accepts(value), "\(key) \(value)") }
                #expect(!(try accepts("sometimes")), "\(key) outside its enum")
            }
        }
    }

    /// The manifest schemas inside the document are those of `schema/manifest.schema.json`.
    @Test func manifestSchemasAreTheManifestsOwn() throws {
        let manifest = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: TestTools.packageRoot.appendingPathComponent("schema/manifest.schema.json")))
                as? [String: Any])
        let definitions = try #require(manifest["$defs"] as? [String: Any])
        let schemas = try #require((try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
        for (name, definition) in definitions {
            let mine = try JSONSerialization.data(withJSONObject: definition, options: [.sortedKeys])
            let theirs = try JSONSerialization.data(
                withJSONObject: try #require(schemas["Manifest.\(name)"], "Manifest.\(name) is missing"),
                options: [.sortedKeys])
            let rewritten = String(decoding: mine, as: UTF8.self).replacingOccurrences(
                of: "#\\/$defs\\/", with: "#\\/components\\/schemas\\/Manifest.")
            #expect(rewritten == String(decoding: theirs, as: UTF8.self), "Manifest.\(name)")
        }
    }

    /// The server serves the document byte for byte.
    @Test func servedDocumentIsTheFile() async throws {
        let dir = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(dir) }
        let server = try await InProcessServe.start(["--workers", "0"], in: dir)
        let served = try await APITestClient(baseURL: server.baseURL).get("/openapi.json")
        #expect(served.status == 200)
        #expect(served.body == Array(try Data(contentsOf: Self.documentURL)))
    }

    /// Issue 28: the API's own property names are snake_case, everywhere in the document (its
    /// schemas, inline request bodies and query parameters), except inside the embedded
    /// documents shared with the CLI, which keep the manifest's camelCase: the `Manifest.*`
    /// schemas (a job's `attachment`) and `Settings`. A `$ref` is not followed (it names a
    /// schema judged by its own name).
    @Test func apiOwnNamesAreSnakeCase() throws {
        let document = try Self.document()
        var offenders: [String] = []
        func isSnakeCase(_ name: String) -> Bool {
            name.wholeMatch(of: /[a-z][a-z0-9]*(_[a-z0-9]+)*/) != nil
        }
        func walk(_ node: Any, _ path: String) {
            if let object = node as? [String: Any] {
                if let properties = object["properties"] as? [String: Any] {
                    offenders += properties.keys.filter { !isSnakeCase($0) }.map { "\(path)/properties/\($0)" }
                }
                if let place = object["in"] as? String, place != "header", let name = object["name"] as? String,
                    !isSnakeCase(name)
                {
                    offenders.append("\(path): parameter \(name)")
                }
                for (key, value) in object where key != "$ref" { walk(value, "\(path)/\(key)") }
            } else if let array = node as? [Any] {
                for (index, value) in array.enumerated() { walk(value, "\(path)/\(index)") }
            }
        }
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        for (name, schema) in schemas where !name.hasPrefix("Manifest.") && name != "Settings" {
            walk(schema, "#/components/schemas/\(name)")
        }
        walk(try #require(document["paths"]), "#/paths")
        #expect(offenders.isEmpty, "\(offenders.sorted())")
        // The exclusions are what the document says they are: embedded camelCase documents.
        let settings = try #require(schemas["Settings"] as? [String: Any])
        #expect((settings["description"] as? String)?.contains("camelCase") == true)
    }

    /// A job as the API writes it has exactly the `Job` schema's members (so `source_name`, the
    /// upload's own file name, is documented), each of them snake_case.
    @Test func jobMembersAreTheSchemas() throws {
        let created = Date(timeIntervalSince1970: 1_780_000_000)
        let record = JobRecord(
            id: 7, state: .queued, source: "/srv/uploads/0123.bmp", payload: "{}", dedupKey: nil, priority: 0,
            attempt: 0, maxAttempts: 5, timeoutSeconds: nil, runAt: created, createdAt: created, updatedAt: created,
            finishedAt: nil, leaseOwner: nil, leaseToken: 0, leaseExpiresAt: nil, cancelRequested: false,
            errorCode: nil, errorMessage: nil, result: nil, metadata: #"{"pushprep:source_name":"a.bmp","k":1}"#)
        let written = try #require(
            try JSONSerialization.jsonObject(with: APICoding.encoder().encode(JobResource(record))) as? [String: Any])
        #expect(written["source_name"] as? String == "a.bmp")
        #expect((written["metadata"] as? [String: Any])?.keys.sorted() == ["k"])
        let schemas = try #require((try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let job = try #require(schemas["Job"] as? [String: Any])
        let properties = try #require(job["properties"] as? [String: Any])
        #expect(Set(written.keys) == Set(properties.keys))
        #expect(Set(try #require(job["required"] as? [String])) == Set(properties.keys))
    }
}
