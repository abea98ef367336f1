import Foundation

/// A small JSON Schema (draft 2020-12) validator for tests.
///
/// It supports exactly the keywords PushPrep's manifest schema uses and throws on any other
/// keyword, so the schema cannot start relying on something this validator silently ignores.
///
/// Supported: `type` (string or array; `integer` is any number with an integral value),
/// `properties`, `required`, `additionalProperties` (boolean or schema), `items`, `enum`,
/// `const`, `pattern`, `minimum`, `maximum`, `minLength`, `maxLength`, `oneOf`, `anyOf`,
/// `allOf`, `if`/`then`/`else`, `$ref` to `#/$defs/NAME`, boolean schemas, and the
/// annotations `$schema`, `$id`, `title`, `description`, `$defs` (ignored).
///
/// Violations are reported as `"#/json/pointer: message"`, the pointer in URI-fragment form
/// (`#` is the document root).
struct JSONSchemaValidator {
    /// A schema the validator refuses, or input that is not JSON.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A parsed JSON value. Booleans and numbers are kept apart (on Linux both arrive as NSNumber).
    indirect enum JSON: Equatable {
        case null, bool(Bool), number(Double), string(String), array([JSON]), object([String: JSON])
    }

    private static let annotations: Set<String> = ["$schema", "$id", "title", "description", "$defs"]
    private static let keywords: Set<String> = [
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "pattern",
        "minimum", "maximum", "minLength", "maxLength", "oneOf", "anyOf", "allOf", "if", "then", "else", "$ref",
    ]
    private static let typeNames: Set<String> = ["null", "boolean", "object", "array", "number", "integer", "string"]

    private let root: JSON
    private let regexes: [String: NSRegularExpression]

    init(schemaData: Data) throws {
        root = try Self.parse(schemaData)
        var regexes: [String: NSRegularExpression] = [:]
        try Self.check(root, at: "#", root: root, regexes: &regexes)
        self.regexes = regexes
    }

    /// Returns the list of violations as "JSON pointer: message" strings; empty when valid.
    func validate(_ instanceData: Data) throws -> [String] {
        errors(of: try Self.parse(instanceData), against: root, at: "#").map { "\($0.pointer): \($0.message)" }
    }

    /// The validator for `schema/manifest.schema.json`, found by walking up from this file to the
    /// directory that holds `Package.swift`.
    static func projectSchema(filePath: String = #filePath) throws -> JSONSchemaValidator {
        var dir = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
                let url = dir.appendingPathComponent("schema/manifest.schema.json")
                return try JSONSchemaValidator(schemaData: Data(contentsOf: url))
            }
            dir = dir.deletingLastPathComponent()
        }
        throw Failure(description: "no Package.swift above \(filePath)")
    }

    // MARK: Parsing

    static func parse(_ data: Data) throws -> JSON {
        do {
            return try convert(JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "not JSON: \(error)")
        }
    }

    private static func convert(_ value: Any) throws -> JSON {
        switch value {
        case is NSNull: return .null
        case let s as String: return .string(s)
        // Test NSNumber before Bool or Int: on Linux `1 as Any is Bool` is true.
        // JSONSerialization makes booleans NSNumbers of C type "c" (char); numbers are "q", "d", ...
        case let n as NSNumber:
            return String(cString: n.objCType) == "c" ? .bool(n.boolValue) : .number(n.doubleValue)
        case let a as [Any]: return .array(try a.map(convert))
        case let o as [String: Any]: return .object(try o.mapValues(convert))
        default: throw Failure(description: "unexpected JSON value of type \(type(of: value))")
        }
    }

    // MARK: Schema check (once, at init)

    private static func check(
        _ schema: JSON, at path: String, root: JSON, regexes: inout [String: NSRegularExpression]
    ) throws {
        func fail(_ message: String) -> Failure { Failure(description: "schema \(path): \(message)") }
        if case .bool = schema { return }
        guard case .object(let keys) = schema else { throw fail("a schema must be an object or a boolean") }
        for (key, value) in keys.sorted(by: { $0.key < $1.key }) {
            let sub = "\(path)/\(escape(key))"
            switch (key, value) {
            case _ where annotations.contains(key) && key != "$defs", ("enum", .array), ("const", _):
                break
            case ("$defs", .object(let defs)), ("properties", .object(let defs)):
                for (name, def) in defs { try check(def, at: "\(sub)/\(escape(name))", root: root, regexes: &regexes) }
            case ("additionalProperties", _), ("items", _), ("if", _), ("then", _), ("else", _):
                try check(value, at: sub, root: root, regexes: &regexes)
            case ("allOf", .array(let list)), ("anyOf", .array(let list)), ("oneOf", .array(let list)):
                guard !list.isEmpty else { throw fail("\(key) must not be empty") }
                for (i, s) in list.enumerated() { try check(s, at: "\(sub)/\(i)", root: root, regexes: &regexes) }
            case ("type", .string(let name)) where typeNames.contains(name):
                break
            case ("type", .array(let names)) where names.allSatisfy({ typeNames.contains($0.stringValue ?? "") }):
                break
            case ("required", .array(let names)) where names.allSatisfy({ $0.stringValue != nil }):
                break
            case ("minimum", .number), ("maximum", .number), ("minLength", .number), ("maxLength", .number):
                break
            case ("pattern", .string(let pattern)):
                do { regexes[pattern] = try NSRegularExpression(pattern: pattern) } catch {
                    throw fail("bad pattern \(pattern)")
                }
            case ("$ref", .string(let ref)):
                guard resolve(ref, in: root) != nil else { throw fail("unresolvable $ref \(ref)") }
            default:
                throw keywords.contains(key) || annotations.contains(key)
                    ? fail("bad value for \(key)") : fail("unsupported keyword \(key)")
            }
        }
    }

    private static func resolve(_ ref: String, in root: JSON) -> JSON? {
        let prefix = "#/$defs/"
        guard ref.hasPrefix(prefix), case .object(let top) = root, case .object(let defs)? = top["$defs"] else {
            return nil
        }
        return defs[String(ref.dropFirst(prefix.count))]
    }

    private static func escape(_ token: String) -> String {
        token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    // MARK: Validation

    private struct Violation {
        let pointer: String
        let message: String
    }

    private func errors(of value: JSON, against schema: JSON, at pointer: String) -> [Violation] {
        guard case .object(let s) = schema else {
            return schema == .bool(false) ? [Violation(pointer: pointer, message: "not allowed")] : []
        }
        var out: [Violation] = []
        func report(_ message: String) { out.append(Violation(pointer: pointer, message: message)) }

        if let type = s["type"] {
            let allowed = type.stringValue.map { [$0] } ?? (type.arrayValue ?? []).compactMap(\.stringValue)
            if !allowed.contains(where: { value.hasType($0) }) {
                report("expected \(allowed.joined(separator: " or ")), got \(value.typeName)")
                return out  // the remaining keywords would only repeat the type mismatch
            }
        }
        if let const = s["const"], value != const { report("must be \(const.text)") }
        if let options = s["enum"]?.arrayValue, !options.contains(value) {
            report("must be one of \(options.map(\.text).joined(separator: ", "))")
        }
        if let ref = s["$ref"]?.stringValue, let target = Self.resolve(ref, in: root) {
            out += errors(of: value, against: target, at: pointer)
        }

        switch value {
        case .string(let string):
            let length = string.unicodeScalars.count
            if let min = s["minLength"]?.numberValue, Double(length) < min { report("shorter than \(Int(min))") }
            if let max = s["maxLength"]?.numberValue, Double(length) > max { report("longer than \(Int(max))") }
            if let pattern = s["pattern"]?.stringValue, let regex = regexes[pattern],
                regex.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) == nil
            {
                report("\(JSON.string(string).text) does not match \(pattern)")
            }
        case .number(let number):
            if let min = s["minimum"]?.numberValue, number < min { report("\(number.text) is less than \(min.text)") }
            if let max = s["maximum"]?.numberValue, number > max {
                report("\(number.text) is greater than \(max.text)")
            }
        case .array(let items):
            if let itemSchema = s["items"] {
                for (i, item) in items.enumerated() {
                    out += errors(of: item, against: itemSchema, at: "\(pointer)/\(i)")
                }
            }
        case .object(let object):
            let properties = s["properties"]?.objectValue ?? [:]
            for name in (s["required"]?.arrayValue ?? []).compactMap(\.stringValue) where object[name] == nil {
                report("missing required property \"\(name)\"")
            }
            for (name, item) in object.sorted(by: { $0.key < $1.key }) {
                let child = "\(pointer)/\(Self.escape(name))"
                if let propertySchema = properties[name] {
                    out += errors(of: item, against: propertySchema, at: child)
                } else if let additional = s["additionalProperties"] {
                    out +=
                        additional == .bool(false)
                        ? [Violation(pointer: child, message: "additional property not allowed")]
                        : errors(of: item, against: additional, at: child)
                }
            }
        case .null, .bool:
            break
        }

        for sub in s["allOf"]?.arrayValue ?? [] { out += errors(of: value, against: sub, at: pointer) }
        if let branches = s["anyOf"]?.arrayValue {
            let results = branches.map { errors(of: value, against: $0, at: pointer) }
            if !results.contains(where: \.isEmpty) {
                report("matches none of the anyOf schemas; closest one's errors follow")
                out += results.min(by: { $0.count < $1.count }) ?? []
            }
        }
        if let branches = s["oneOf"]?.arrayValue {
            let results = branches.map { errors(of: value, against: $0, at: pointer) }
            let matching = results.indices.filter { results[$0].isEmpty }
            if matching.isEmpty {
                report("matches none of the oneOf schemas; closest one's errors follow")
                out += results.min(by: { $0.count < $1.count }) ?? []
            } else if matching.count > 1 {
                report("matches oneOf schemas \(matching.map(String.init)) but must match exactly one")
            }
        }
        if let condition = s["if"] {
            let branch = errors(of: value, against: condition, at: pointer).isEmpty ? s["then"] : s["else"]
            if let branch { out += errors(of: value, against: branch, at: pointer) }
        }
        return out
    }
}

extension JSONSchemaValidator.JSON {
    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var numberValue: Double? { if case .number(let n) = self { n } else { nil } }
    var arrayValue: [Self]? { if case .array(let a) = self { a } else { nil } }
    var objectValue: [String: Self]? { if case .object(let o) = self { o } else { nil } }

    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let n): n.rounded() == n && n.isFinite ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    func hasType(_ name: String) -> Bool {
        name == typeName || (name == "number" && typeName == "integer")
    }

    /// Compact JSON text for messages.
    var text: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .number(let n): n.text
        case .string(let s): "\"\(s)\""
        case .array(let a): "[\(a.map(\.text).joined(separator: ","))]"
        case .object(let o):
            "{\(o.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value.text)" }.joined(separator: ","))}"
        }
    }
}

extension Double {
    fileprivate var text: String {
        rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}
