import ArgumentParser
import PushPrepCommandLine
import PushPrepCore
import PushPrepServer

/// `serve`'s signed attachment URLs: with an out directory, `GET /v1/attachments/{file}`
/// answers only URLs this server signed (HMAC-SHA256, like imgproxy's), and the jobs the API
/// shows carry such URLs.
struct AttachmentSigningOptions: ParsableArguments {
    @Flag(help: "Serve attachments only by signed, expiring URLs (needs --out and --attachment-key-file).")
    var signAttachments = false

    @Option(
        name: .customLong("attachment-key-file"),
        help: ArgumentHelp(
            "The signing secret: the file's bytes, at least 32 (one trailing newline ignored).", valueName: "file"))
    var keyFile: String?

    @Option(
        name: .customLong("attachment-url-ttl"),
        help: "How long a signed attachment URL works from when the API shows the job (7d, 24h, 90m, 3600s).")
    var ttl: String = "7d"

    /// The TTL in seconds, or a usage error.
    var ttlSeconds: Int {
        get throws {
            try asUsageError {
                try DurationText.seconds(
                    parsing: ttl, option: "--attachment-url-ttl", in: AttachmentURLSigner.ttlSeconds)
            }
        }
    }

    /// Checks the options belong together; `directory` says whether the server has an out
    /// directory (a bucket's URLs are its own to sign: `--presign`).
    func validate(directory: Bool) throws {
        _ = try ttlSeconds
        guard signAttachments else {
            if keyFile != nil { throw ValidationError("--attachment-key-file needs --sign-attachments") }
            return
        }
        guard directory else {
            throw ValidationError("--sign-attachments needs an out directory (--out); a bucket's URLs use --presign")
        }
        guard keyFile != nil else { throw ValidationError("--sign-attachments needs --attachment-key-file") }
    }

    /// The signer, with the key read from its file; nil without `--sign-attachments`.
    func signer() throws -> AttachmentURLSigner? {
        guard signAttachments, let keyFile else { return nil }
        let ttlSeconds = try ttlSeconds
        return try asUsageError { try AttachmentURLSigner(keyFile: keyFile, ttlSeconds: ttlSeconds) }
    }
}
