import Crypto
package import Foundation
package import PushPrepCore
import PushPrepQueue

/// Signs webhook requests the way the Standard Webhooks specification says
/// (https://www.standardwebhooks.com), so receivers verify them with any of its libraries.
///
/// Each request carries `webhook-id` (the message's id, the same on every retry, for the
/// receiver to drop duplicates), `webhook-timestamp` (Unix seconds of this attempt, for the
/// receiver to refuse replays) and `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of
/// `{id}.{timestamp}.{body}` under the secret. With several secrets (a rotation in progress)
/// the request is signed with each, the signatures separated by spaces, so receivers holding
/// either the old or the new secret accept it.
package struct StandardWebhook: Sendable {
    /// The secrets, in the order their signatures are written.
    package let secrets: [WebhookSecret]

    /// A signer with at least one secret; throws `invalid_settings` for none.
    package init(secrets: [WebhookSecret]) throws(PushPrepError) {
        guard !secrets.isEmpty else { throw PushPrepError(.invalidSettings, "no webhook secret given") }
        self.secrets = secrets
    }

    /// A signer with the secrets of `--webhook-secret-file`: one secret per line (`whsec_` and
    /// base64, or bare base64), blank lines and surrounding white space ignored. The file is read
    /// through ``InputFile`` within ``maxSecretFileBytes``, so a path such as `/dev/zero` is
    /// refused instead of filling memory. Throws `invalid_settings`, never naming a secret.
    package init(secretFile path: String) throws(PushPrepError) {
        let contents: [UInt8]
        do {
            contents = try InputFile.read(path: path, maxBytes: Self.maxSecretFileBytes) { _ in true }.contents ?? []
        } catch  where error.code == .corruptInput {
            throw PushPrepError(.invalidSettings, "the webhook secret file \(path) is empty")
        } catch {
            throw PushPrepError(.invalidSettings, "cannot read the webhook secret file \(path): \(error.message)")
        }
        guard let text = String(validating: contents, as: UTF8.self) else {
            throw PushPrepError(.invalidSettings, "the webhook secret file \(path) is not UTF-8 text")
        }
        var secrets: [WebhookSecret] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            do {
                secrets.append(try WebhookSecret(trimmed))
            } catch {
                throw PushPrepError(.invalidSettings, "\(path), line \(index + 1): \(error.message)")
            }
        }
        guard !secrets.isEmpty else {
            throw PushPrepError(.invalidSettings, "the webhook secret file \(path) holds no secret")
        }
        try self.init(secrets: secrets)
    }

    /// The largest secret file read: a few secrets of at most a few hundred bytes each.
    package static let maxSecretFileBytes = 4096

    /// The `webhook-signature` value for one request: `v1,<base64>` per secret, space-separated.
    package func signature(messageID: String, timestamp: Int64, body: [UInt8]) -> String {
        let prefix = Data("\(messageID).\(timestamp).".utf8)
        return secrets.map { secret in
            var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.bytes))
            hmac.update(data: prefix)
            hmac.update(data: body)
            return "v1," + Data(hmac.finalize()).base64EncodedString()
        }.joined(separator: " ")
    }

    /// The three headers of one attempt, in the spec's order: `webhook-id`, `webhook-timestamp`
    /// (`at`, in whole Unix seconds) and `webhook-signature`.
    package func headers(messageID: String, at date: Date, body: [UInt8]) -> [(name: String, value: String)] {
        let timestamp = Int64(date.timeIntervalSince1970.rounded(.down))
        return [
            ("webhook-id", messageID),
            ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", signature(messageID: messageID, timestamp: timestamp, body: body)),
        ]
    }
}

/// One webhook signing secret. Its description never shows the key, so a secret that ends up in
/// a log or an error message gives nothing away.
package struct WebhookSecret: Sendable, CustomStringConvertible {
    /// The key, decoded. Bytes rather than a `SymmetricKey`, which is not `Sendable`.
    let bytes: [UInt8]

    /// The shortest key accepted, decoded: the spec asks for 24 to 64 random bytes.
    package static let minimumBytes = 24

    /// Parses `whsec_<base64>` or bare base64; throws `invalid_settings` for text that is not
    /// base64 or decodes to fewer than ``minimumBytes`` bytes.
    package init(_ text: String) throws(PushPrepError) {
        let encoded = text.hasPrefix("whsec_") ? String(text.dropFirst("whsec_".count)) : text
        guard let bytes = Data(base64Encoded: encoded), !bytes.isEmpty else {
            throw PushPrepError(.invalidSettings, "a webhook secret must be whsec_ followed by base64, or base64")
        }
        guard bytes.count >= Self.minimumBytes else {
            throw PushPrepError(
                .invalidSettings,
                "a webhook secret must hold at least \(Self.minimumBytes) bytes, this one decodes to \(bytes.count)"
                    + " (make one with: echo whsec_$(openssl rand -base64 32))")
        }
        self.bytes = Array(bytes)
    }

    package var description: String { "WebhookSecret(\(bytes.count) bytes)" }
}
