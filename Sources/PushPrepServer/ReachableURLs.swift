import PushPrepCore
import PushPrepRemote

extension JobRenderer {
    /// The warning `serve` logs once it is listening when the attachment URLs it hands out
    /// (``attachmentBaseURL``: `--base-url`, else `--public-url` or the bound address joined with
    /// `/v1/attachments`) name a host a phone cannot reach (``PhoneReachability``: loopback,
    /// private, link-local, a bare IP, `localhost`, `.local`), saying which option to set; nil
    /// when they are reachable or the server hands out none of its own (an S3 store).
    var unreachableAttachmentsWarning: String? {
        guard let base = attachmentBaseURL, let url = try? RemoteURL(base),
            let reason = PhoneReachability.reason(host: url.host)
        else { return nil }
        let option =
            configuration.baseURL != nil
            ? "--base-url to a URL prefix phones reach" : "--public-url to the https URL phones reach this server at"
        return "attachment URLs will be \(base)/…, which phones cannot download: \(url.host) is \(reason);"
            + " set \(option) (e.g. https://push.example.com)"
    }
}
