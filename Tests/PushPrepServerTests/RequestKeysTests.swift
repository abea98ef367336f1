import Foundation
import PushPrepTestSupport
import Testing

@testable import PushPrepServer

/// The members a JSON request body takes (what ``RequestBody`` refuses others by) follow from
/// its type's `CodingKeys` and are those the OpenAPI document gives its request body.
struct RequestKeysTests {
    /// Every property name the schema at `path`'s `POST` body names: its own, its `allOf` and
    /// `oneOf` branches', and those of the schemas it refers to.
    static func documentedKeys(_ path: String) throws -> Set<String> {
        let document = try OpenAPIContractTests.document()
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let operation = try #require(((document["paths"] as? [String: Any])?[path] as? [String: Any])?["post"])
        let body = try #require(
            ((((operation as? [String: Any])?["requestBody"] as? [String: Any])?["content"] as? [String: Any])?[
                "application/json"] as? [String: Any])?["schema"] as? [String: Any])
        func keys(_ schema: [String: Any]) -> Set<String> {
            var found = Set((schema["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
            if let ref = schema["$ref"] as? String,
                let named = schemas[String(ref.dropFirst("#/components/schemas/".count))] as? [String: Any]
            {
                found.formUnion(keys(named))
            }
            for branches in ["allOf", "oneOf", "anyOf"] {
                for branch in schema[branches] as? [[String: Any]] ?? [] { found.formUnion(keys(branch)) }
            }
            return found
        }
        return keys(body)
    }

    @Test func createRequestTakesTheDocumentedMembers() throws {
        #expect(JobRoutes.CreateRequest.keys == (try Self.documentedKeys("/v1/jobs")))
        #expect(JobRoutes.CreateRequest.keys == (try Self.documentedKeys("/v1/process")))
        #expect(
            JobRoutes.CreateRequest.keys == [
                "sources", "settings", "priority", "callback_url", "metadata", "max_attempts", "delay_seconds",
                "timeout_seconds",
            ])
    }

    @Test func payloadRequestTakesTheDocumentedMembers() throws {
        #expect(PayloadRoutes.PayloadRequest.keys == (try Self.documentedKeys("/v1/payload")))
    }

    @Test func preflightRequestTakesTheDocumentedMembers() throws {
        #expect(PayloadRoutes.PreflightRequest.keys == (try Self.documentedKeys("/v1/preflight")))
    }
}
