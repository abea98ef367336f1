import Foundation
import Hummingbird
import PushPrepCore
import PushPrepJSON

/// A request body that names, in words, what each of its top-level fields must be (`sources`:
/// "an array of URLs"), for the message when a field has another JSON type. Bodies without
/// it are described from the Swift type the decoder expected.
protocol DescribedFields {
    /// Field name to what it must be, as the message says it ("an integer").
    static var fieldTypes: [String: String] { get }
}

/// A JSON request body whose members are its `CodingKeys`, and those it reads from the parsed
/// document apart from decoding: the keys it takes (``keys``, what ``RequestBody/decode(_:from:)``
/// refuses others by) follow from the type, so a field added to it is taken without a second list.
protocol KeyedRequestBody: Decodable {
    /// The body's decoded members.
    associatedtype CodingKeys: CodingKey & CaseIterable
    /// Members read from the parsed document rather than decoded; none unless said.
    static var documentKeys: Set<String> { get }
}

extension KeyedRequestBody {
    static var documentKeys: Set<String> { [] }

    /// Every member the body may have.
    static var keys: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)).union(documentKeys) }
}

/// Reading a JSON request body: capped, strict, and with errors that say what to fix.
enum RequestBody {
    /// The body's bytes, refused with 413 beyond `maxBytes` (read no further than that).
    static func collect(_ request: Request, maxBytes: Int) async throws -> [UInt8] {
        var request = request
        return try await collect(&request, maxBytes: maxBytes)
    }

    /// The body's bytes, as ``collect(_:maxBytes:)``, left in `request` as its collected body:
    /// what Hummingbird's `consumeWithCancellationOnInboundClose` needs to go on watching the
    /// connection after the body (a body read through a copy of the request leaves the stream
    /// past its end, and that watch then traps when the client closes).
    static func collect(_ request: inout Request, maxBytes: Int) async throws -> [UInt8] {
        do {
            return Array(buffer: try await request.collectBody(upTo: maxBytes))
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw Problem(.contentTooLarge, .requestTooLarge, "the request body is larger than \(maxBytes) bytes")
        }
    }

    /// Decodes `bytes` as `Value` after a strict parse (``JSONValue/parse(_:)``: no
    /// duplicate keys, no trailing garbage) that also checks the top-level object has only the
    /// body's ``KeyedRequestBody/keys``. Every failure is `invalid_request` naming the field.
    static func decode<Value: KeyedRequestBody>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        let allowedKeys = Value.keys
        let document: JSONDocument
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw Problem(.badRequest, .invalidRequest, "the body is not JSON: \(error.message)")
        }
        guard let object = document.value.objectValue else {
            throw Problem(.badRequest, .invalidRequest, "the body must be a JSON object")
        }
        if let duplicate = document.duplicateKeys.first {
            throw Problem(.badRequest, .invalidRequest, "the key \(duplicate.pointer) appears more than once")
        }
        if let unknown = object.keys.first(where: { !allowedKeys.contains($0) }) {
            throw Problem(
                .badRequest, .invalidRequest,
                "unknown field \(unknown); this endpoint takes \(allowedKeys.sorted().joined(separator: ", "))")
        }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(bytes))
        } catch let error as PushPrepError {
            throw Problem(.unprocessableContent, error.code, error.message)
        } catch let error as DecodingError {
            let fields = (Value.self as? any DescribedFields.Type)?.fieldTypes ?? [:]
            throw Problem(.badRequest, .invalidRequest, describe(error, fields: fields))
        } catch {
            throw Problem(.badRequest, .invalidRequest, "the body cannot be read: \(error)")
        }
    }

    /// A decoding error in words: the field's path and what was wrong; a top-level field's
    /// expected type as `fields` words it, any other from the type the decoder expected.
    static func describe(_ error: DecodingError, fields: [String: String] = [:]) -> String {
        func expected(_ type: Any.Type, _ codingPath: [any CodingKey]) -> String {
            if codingPath.count == 1, let words = fields[codingPath[0].stringValue] { return words }
            return describe(type)
        }
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty
                ? "the body"
                : codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
                    .trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(expected(type, context.codingPath))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(expected(type, context.codingPath)), not null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is required"
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "the body cannot be read"
        }
    }

    /// The JSON type a decoder expected, in words. The decoder names the container it wanted
    /// (`[Any]` for any array, `[String: Any]` for any object), not the field's Swift type.
    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is UInt32.Type:
            return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [String].Type: return "an array of strings"
        default:
            let name = String(reflecting: type)
            if name.hasPrefix("Swift.Array<") { return "an array" }
            if name.hasPrefix("Swift.Dictionary<") { return "an object" }
            return "a value of the type the API's OpenAPI document gives"
        }
    }
}

/// The query parameters the listing endpoints share: a state filter and a page size.
enum ListQuery {
    /// `?state=`: one of `State`'s cases, or nil when absent or empty.
    static func state<State: RawRepresentable & CaseIterable>(_ request: Request, as _: State.Type) throws -> State?
    where State.RawValue == String {
        guard let text = request.uri.queryParameters["state"], !text.isEmpty else { return nil }
        guard let state = State(rawValue: String(text)) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "state must be one of \(State.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return state
    }

    /// `?limit=`: 1...500, 50 when absent.
    static func limit(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return 50 }
        guard let limit = Int(text), (1...500).contains(limit) else {
            throw Problem(.badRequest, .invalidRequest, "limit must be an integer in 1...500")
        }
        return limit
    }
}

/// Durations in query parameters: `20s`, `1500ms`, `2m`, or plain seconds (`20`, `0.5`).
enum QueryDuration {
    static func parse(_ text: String, name: String, range: ClosedRange<Double>) throws -> Duration {
        var number = Substring(text)
        var scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
            scale = 0.001
        } else if number.hasSuffix("s") {
            number = number.dropLast()
        } else if number.hasSuffix("m") {
            number = number.dropLast()
            scale = 60
        }
        guard let value = Double(number), value.isFinite, range.contains(value * scale) else {
            throw Problem(
                .badRequest, .invalidRequest,
                "\(name) must be a duration such as 20s or 500ms, within \(Int(range.lowerBound))...\(Int(range.upperBound)) seconds"
            )
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }
}
