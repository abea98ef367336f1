public import Foundation

/// The record of one run: what was produced from each input, ready for a push payload.
/// Written as `manifest.json`; its JSON Schema is `schema/manifest.schema.json`.
public struct Manifest: Sendable, Codable, Equatable {
    /// The manifest format version: 2 since attachments carry ``Attachment/renditions``; a
    /// version 1 manifest (none) still reads. Version 3 (``structuredVersion``, written on
    /// request) writes each warning as `{code, message}` instead of its text.
    public var version: Int = Manifest.currentVersion
    /// The program that wrote it.
    public var generator: Generator
    /// The effective settings of the run.
    public var settings: ProcessingSettings
    /// One entry per input, in input order.
    public var attachments: [ManifestEntry]

    /// Name and version of the writer.
    public struct Generator: Sendable, Codable, Equatable {
        public var name: String
        public var version: String
    }

    /// The version this PushPrep writes unless asked for another.
    public static let currentVersion = 2
    /// The version whose warnings are structured (``AttachmentWarning``): `{code, message}`.
    public static let structuredVersion = 3
    /// The versions this PushPrep writes: `--manifest-version` takes one of these.
    public static let writableVersions = currentVersion...structuredVersion
    /// The versions this PushPrep reads.
    public static let readableVersions = 1...structuredVersion

    /// Creates a manifest written by this version of PushPrep, of format `version` (one of
    /// ``writableVersions``).
    public init(settings: ProcessingSettings, attachments: [ManifestEntry], version: Int = Manifest.currentVersion) {
        self.version = version
        self.generator = Generator(name: "pushprep", version: PushPrepVersion.current)
        self.settings = settings
        self.attachments = attachments
    }

    /// The manifest as pretty-printed JSON with sorted keys (stable diffs, stable hashes), its
    /// entries in the form of its ``version``.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.manifestVersion] = version
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }
}

/// The version of PushPrep.
public enum PushPrepVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}

/// One input's outcome: a ready attachment or a failure.
public enum ManifestEntry: Sendable, Codable, Equatable {
    case ok(Attachment)
    case failed(Failure)

    /// The source as given.
    public var source: String {
        switch self {
        case .ok(let attachment): attachment.source
        case .failed(let failure): failure.source
        }
    }

    /// The attachment, when the input succeeded.
    public var attachment: Attachment? {
        if case .ok(let attachment) = self { return attachment }
        return nil
    }

    /// The failure, when the input failed.
    public var failure: Failure? {
        if case .failed(let failure) = self { return failure }
        return nil
    }

    private enum StatusKey: String, CodingKey { case status }

    public init(from decoder: any Decoder) throws {
        let status = try decoder.container(keyedBy: StatusKey.self).decode(String.self, forKey: .status)
        switch status {
        case "ok": self = .ok(try Attachment(from: decoder))
        case "failed": self = .failed(try Failure(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .status,
                in: try decoder.container(keyedBy: StatusKey.self),
                debugDescription: "status must be ok or failed, got \(status)"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .ok(let attachment): try attachment.encode(to: encoder)
        case .failed(let failure): try failure.encode(to: encoder)
        }
    }
}

extension CodingUserInfoKey {
    /// The manifest version an encoder writes entries for (an `Int`); absent, the entries take
    /// the form of ``Manifest/currentVersion``, which is also the HTTP API's.
    public static let manifestVersion = CodingUserInfoKey(rawValue: "pushprep.manifestVersion")!
}
