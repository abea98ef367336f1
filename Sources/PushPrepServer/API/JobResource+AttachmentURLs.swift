package import PushPrepCore

extension JobResource {
    /// This job with its attachment (when it succeeded) changed by `transform`: how a server
    /// gives rendered URLs something the stored manifest entry must not hold, such as a
    /// signature that expires (`--sign-attachments`). The record and ``init(_:)`` are unchanged;
    /// a failed entry or a job without a result is returned as it is.
    package func transformingAttachment(_ transform: (inout Attachment) -> Void) -> JobResource {
        guard case .ok(var attachment) = attachment else { return self }
        transform(&attachment)
        var resource = self
        resource.attachment = .ok(attachment)
        return resource
    }
}
