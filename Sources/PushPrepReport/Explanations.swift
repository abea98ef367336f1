import Foundation
package import PushPrepCore
package import PushPrepPayload

/// A code in plain words: what it means, and what to do about it. The report and the console
/// show both next to the code.
package struct Explanation: Sendable, Equatable {
    /// What happened, in a sentence.
    package var meaning: String
    /// What to do about it, in a sentence.
    package var action: String
}

extension Explanation {
    /// The explanation of a failure code. A code this build does not know (a manifest from a
    /// newer PushPrep) gets a generic one.
    package init(_ code: PushPrepError.Code) {
        guard let topic = FailureTopic(rawValue: code.rawValue) else {
            self.init(
                meaning: "A failure this version of PushPrep does not describe (\(code.rawValue)).",
                action: "Read the message, and the README of the PushPrep that wrote the manifest.")
            return
        }
        self = topic.explanation
    }

    /// The explanation of a pre-flight finding code.
    package init(_ code: PreflightCode) {
        self = PreflightTopic(code).explanation
    }

    /// The explanation of a processing warning's code: the attachment was made, and this is
    /// what it says about the input or the output.
    package init(_ code: ProcessingWarning.Code) {
        switch code {
        case .extensionMismatch:
            self.init(
                meaning:
                    "The file's name ends in the extension of another type than its content; PushPrep went by the content.",
                action:
                    "Nothing for this attachment; rename the source after its real type so other tools read it right.")
        case .contentTypeMismatch:
            self.init(
                meaning:
                    "The server's Content-Type names another type than the bytes it sent; PushPrep went by the bytes.",
                action: "Nothing for this attachment; have the server or bucket send the right Content-Type.")
        case .animationSentAsStill:
            self.init(
                meaning:
                    "The animation does not fit as a GIF even at its smallest size, so only its first frame was sent.",
                action:
                    "To keep the motion, allow a movie (--gif-as-video auto), or send a shorter or smaller animation.")
        case .animationSentAsMovie:
            self.init(
                meaning: "The animation was sent as a silent MP4 movie, which iOS plays in the expanded notification.",
                action:
                    "Nothing, unless you need a GIF: then send a shorter or smaller animation, or set --gif-as-video.")
        case .damagedInput:
            self.init(
                meaning: "The sound is damaged or cut off: the preview stops where the readable audio ends.",
                action: "Check that the source plays to its end; upload it again if it was cut off on the way.")
        case .inputShorterThanDeclared:
            self.init(
                meaning: "The sound ends before the length its header declares: the file is probably truncated.",
                action: "Check that the source plays to its end; upload it again if it was cut off on the way.")
        case .damagedAudioPacketsSkipped:
            self.init(
                meaning:
                    "Some audio packets could not be decoded and were skipped: the preview may have gaps or clicks.",
                action: "Listen to the preview; if it sounds wrong, export or encode the source again.")
        case .damagedPacketsSkipped:
            self.init(
                meaning: "Some of the movie's packets could not be decoded and were skipped: the preview may stutter.",
                action: "Watch the preview; if it looks wrong, export or encode the source again.")
        case .audioDropped:
            self.init(
                meaning: "The movie's sound could not be decoded, so the preview is silent.",
                action:
                    "If the sound matters, encode the movie's audio as AAC (or another common codec) and send it again."
            )
        case .copyTooLarge:
            self.init(
                meaning: "The movie's streams copied as they are would be over the size limit, so it was re-encoded.",
                action: "Nothing; for the faster copy, send a shorter or lower bit-rate H.264 movie.")
        case .copyFailed:
            self.init(
                meaning: "The movie's streams could not be copied as they are, so it was re-encoded instead.",
                action: "Nothing; the message says why the copy failed, if the re-encoding is a surprise.")
        case .startMovedToKeyframe:
            self.init(
                meaning:
                    "A copied movie starts at a keyframe: the preview starts more than a second before --video-start.",
                action:
                    "If the start matters, pick a --video-start at a keyframe, or encode the source with more keyframes."
            )
        case .videoStartPastEnd:
            self.init(
                meaning: "--video-start is at or past the movie's end, so the preview starts at the beginning.",
                action: "Give a --video-start within the movie's length.")
        case .renditionNotMade:
            self.init(
                meaning:
                    "A platform's rendition (Android's big picture, the web image or icon) could not be made, so"
                    + " that platform's push carries no picture; the iOS attachment is not affected.",
                action:
                    "Read the reason: raise --android-max-bytes or lower --android-width, or send that platform's"
                    + " push without a picture.")
        }
    }
}

/// Every ``PushPrepError/Code``, as an enum: `Code` is an open struct (a manifest may carry a
/// newer one), so the switch that gives each its words is over this mirror, without a default,
/// and the tests check that the two hold the same codes.
package enum FailureTopic: String, CaseIterable, Sendable {
    case unsupportedType = "unsupported_type"
    case corruptInput = "corrupt_input"
    case inputTooLarge = "input_too_large"
    case tooManyPixels = "too_many_pixels"
    case cannotFit = "cannot_fit"
    case notFound = "not_found"
    case ioError = "io_error"
    case timeout = "timeout"
    case decoderCrashed = "decoder_crashed"
    case resourceExhausted = "resource_exhausted"
    case fetchFailed = "fetch_failed"
    case blockedAddress = "blocked_address"
    case sourceNotAllowed = "source_not_allowed"
    case invalidSettings = "invalid_settings"
    case cancelled = "cancelled"
    case queueUnavailable = "queue_unavailable"
    case jobNotFound = "job_not_found"
    case invalidJobState = "invalid_job_state"
    case idempotencyConflict = "idempotency_conflict"
    case invalidPayload = "invalid_payload"
    case payloadTooLarge = "payload_too_large"
    case storageDenied = "storage_denied"
    case storageUnavailable = "storage_unavailable"
    case invalidRequest = "invalid_request"
    case unauthorized = "unauthorized"
    case forbidden = "forbidden"
    case rateLimited = "rate_limited"
    case queueFull = "queue_full"
    case requestTooLarge = "request_too_large"

    /// The words for the code.
    package var explanation: Explanation {
        switch self {
        case .unsupportedType:
            Explanation(
                meaning: "The file is not an image, movie or sound PushPrep can turn into an attachment.",
                action:
                    "Send a JPEG, PNG, GIF, WebP, HEIC, AVIF, TIFF, BMP, a common movie or sound; check the file is what its name says."
            )
        case .corruptInput:
            Explanation(
                meaning: "The file says it is a supported type but cannot be decoded: truncated, damaged or empty.",
                action: "Re-export or re-download the original and try again.")
        case .inputTooLarge:
            Explanation(
                meaning: "The file is larger than the input size limit.",
                action: "Shrink it before sending, or raise the limit (--max-input-bytes) if the machine can take it.")
        case .tooManyPixels:
            Explanation(
                meaning: "The image has more pixels (all frames counted) than the limit allows.",
                action: "Scale the image or cut frames from the animation, or raise --max-pixels.")
        case .cannotFit:
            Explanation(
                meaning: "No output within Apple's byte limit for the kind could be produced.",
                action: "Shorten the movie or sound, lower its resolution, or send a still image instead.")
        case .notFound:
            Explanation(
                meaning: "The input does not exist at the path given.",
                action: "Check the path (and the working directory) and that the file is readable.")
        case .ioError:
            Explanation(
                meaning: "Reading the input or writing the output failed.",
                action: "Check disk space and permissions of the input and of --out, then run again.")
        case .timeout:
            Explanation(
                meaning: "Processing this input took longer than its deadline.",
                action: "Raise --timeout, or send a smaller or shorter file.")
        case .decoderCrashed:
            Explanation(
                meaning:
                    "The isolated decoder process died while decoding this input, twice, each time on a fresh process: "
                    + "the file is likely crafted or badly damaged.",
                action: "Do not retry it as it is; re-export the file from its source, or report it if it is genuine.")
        case .resourceExhausted:
            Explanation(
                meaning:
                    "Decoding this input needed more memory than its isolated decoder process may use: far more than "
                    + "its header announced, or more than the decoders' limit.",
                action:
                    "Send a smaller file, or re-export it from its source; a genuine one needs a larger memory limit.")
        case .fetchFailed:
            Explanation(
                meaning:
                    "The remote source could not be downloaded (an HTTP error, a broken connection, too many redirects).",
                action: "Open the URL yourself; fix the link or the server, then retry.")
        case .blockedAddress:
            Explanation(
                meaning:
                    "The URL (or a redirect) leads to a private, loopback or reserved address, which PushPrep refuses.",
                action:
                    "Use a URL on a public address. A host on a private network of your own can be allowed with --allow-host; loopback and link-local (cloud metadata) addresses should stay closed."
            )
        case .sourceNotAllowed:
            Explanation(
                meaning:
                    "This worker does not read sources of this kind (a path where only URLs are allowed, or outside --source-root).",
                action: "Send a source the worker accepts, or change its --sources / --source-root.")
        case .invalidSettings:
            Explanation(
                meaning: "A setting is out of range; nothing was processed.",
                action: "Fix the option the message names and run again.")
        case .cancelled:
            Explanation(
                meaning: "The job was cancelled and stopped at its next step.",
                action: "Nothing, unless the cancel was a mistake: then enqueue it again.")
        case .queueUnavailable:
            Explanation(
                meaning: "The job queue's database cannot be opened, migrated or used.",
                action: "Check the queue's path or connection string and that the database is up.")
        case .jobNotFound:
            Explanation(
                meaning: "No job has this id.",
                action: "Check the id; finished jobs may have been pruned.")
        case .invalidJobState:
            Explanation(
                meaning: "The job's state does not allow this (retrying a running job, say).",
                action: "Wait for the job to finish, then try again.")
        case .idempotencyConflict:
            Explanation(
                meaning: "An idempotency key was reused with a different request; the first request's jobs stand.",
                action: "Use a new key for a new request.")
        case .invalidPayload:
            Explanation(
                meaning: "The payload or manifest is not JSON of the expected shape.",
                action: "Validate the JSON and compare it with the README's examples.")
        case .payloadTooLarge:
            Explanation(
                meaning: "The payload would exceed the provider's size limit (APNs 4096 bytes).",
                action: "Shorten the text or custom data, or move data behind a URL.")
        case .storageDenied:
            Explanation(
                meaning: "Object storage refused the upload: wrong key or secret, no permission, the wrong region, "
                    + "or a request the store does not implement (501).",
                action: "Fix the credentials, the bucket policy or the region, or use a store with S3's full API; "
                    + "retrying alone will not help.")
        case .storageUnavailable:
            Explanation(
                meaning: "Object storage could not be reached or did not store the object.",
                action: "Retry later; check the endpoint and that the bucket exists.")
        case .invalidRequest:
            Explanation(
                meaning: "The HTTP request is malformed (a body, field or query the endpoint does not take).",
                action: "Compare the request with the API documentation.")
        case .unauthorized:
            Explanation(
                meaning: "The request carries no API key, or one the server does not know.",
                action: "Send a valid key (Authorization: Bearer …) or log in again.")
        case .forbidden:
            Explanation(
                meaning: "The API key lacks the scope this needs.",
                action: "Use a key with the write scope (or read, for reading).")
        case .rateLimited:
            Explanation(
                meaning: "The API key sent more requests than its rate allows.",
                action: "Wait for Retry-After, then send again more slowly.")
        case .queueFull:
            Explanation(
                meaning: "More jobs are queued than the server accepts.",
                action: "Wait for Retry-After, or add workers.")
        case .requestTooLarge:
            Explanation(
                meaning: "The request's body, headers or URL is larger than the server accepts.",
                action: "Send less at once: split the batch or upload the file by URL.")
        }
    }
}

/// The words for each ``PreflightCode``: the meaning is the code's own ``PreflightCode/summary``
/// (one text for the README, the CLI and the pages), the action is here, in a switch without a
/// default so that a new code does not build without one.
struct PreflightTopic {
    var code: PreflightCode

    init(_ code: PreflightCode) { self.code = code }

    /// The summary without its Markdown code marks (the README's table reads them; a page shows
    /// them as they are).
    var explanation: Explanation {
        Explanation(meaning: code.summary.replacingOccurrences(of: "`", with: ""), action: action)
    }

    var action: String {
        switch code {
        case .invalidJSON: "Fix the JSON syntax at the line and column the message gives."
        case .notAnObject: "Send a JSON object at the top level."
        case .duplicateKey: "Keep one of the two keys."
        case .missingAPS: "Put the alert and flags inside an \"aps\" dictionary."
        case .apsNotObject: "Make \"aps\" a dictionary."
        case .payloadTooLarge: "Shorten the text or custom data until the payload fits."
        case .missingAlert: "Add an alert with a title or body."
        case .silentPush: "Add an alert, or drop the attachment: a silent push shows nothing."
        case .missingMutableContent: "Set mutable-content to 1 (or the provider's flag to true)."
        case .invalidMutableContent: "Set mutable-content to exactly 1 (or the provider's flag to true)."
        case .pushTypeWithoutExtension: "Send it as an alert push (apns-push-type: alert)."
        case .invalidInterruptionLevel: "Use passive, active, time-sensitive or critical."
        case .criticalNeedsEntitlement: "Make sure the app has the critical-alerts entitlement, or use time-sensitive."
        case .invalidRelevanceScore: "Use a number from 0 to 1."
        case .invalidValue: "Give the key a value of the type Apple documents."
        case .unknownAPSKey: "Move custom keys out of aps, beside it."
        case .unknownKey:
            "Move the key where the message says it belongs (for --merge, nest it the same way: {\"message\": {\"token\": …}}), or correct its spelling."
        case .categoryNoted: "Check that the app registers this category."
        case .noAttachments: "Add the attachment URL under the dialect's key, or ignore this for a text-only push."
        case .attachmentsBeyondFirst:
            "Send one attachment per push (pushprep payload does unless --all), or show the rest in a content extension."
        case .invalidAttachment: "Give each attachment a non-empty URL string."
        case .invalidURL: "Use an absolute https URL with a host."
        case .insecureURL: "Serve the file over https."
        case .unreachableURL:
            "Host the file under a public name: serve --public-url https://media.example.com, or process --base-url."
        case .urlExpired: "Sign a new URL with a later expiry."
        case .urlExpiresSoon: "Sign the URL for longer than the push may wait (days, not hours)."
        case .missingExtension: "End the URL's path in the file's extension (.jpg, .mp4, ...)."
        case .unsupportedExtension:
            "Convert the file to a type iOS accepts (pushprep process does) and use its extension."
        case .providerExtension: "Convert to a type the provider downloads (JPEG, PNG, GIF, MP4, ...)."
        case .typeMismatch: "Make the type hint and the extension name the same type."
        case .unknownTypeHint: "Use a UTI iOS accepts, such as public.jpeg or public.mpeg-4."
        case .invalidAttachmentOption: "Fix the option's value (time at least 0, hidden a boolean, rectangle in 0...1)."
        case .unknownAttachmentOption: "Remove the option or correct its spelling."
        case .fetchFailed: "Open the URL yourself; fix the link or the server."
        case .contentNotAccepted: "Convert the file with pushprep process and point the URL at the output."
        case .contentTooLarge: "Shrink the file below Apple's limit (pushprep process does)."
        case .extensionMismatch: "Rename the file (or convert it) so the extension matches the bytes."
        case .typeHintMismatch: "Correct the declared type to what the bytes are."
        case .contentTypeMismatch: "Configure the server to send the right Content-Type."
        case .redirected: "Point the payload at the final URL."
        case .insecureRedirect: "Make the redirect go to https."
        case .gifMemory: "Send fewer or smaller frames, or a movie instead (pushprep process converts)."
        case .slowDownload: "Send a smaller file: lower resolution or quality, or a still instead of a movie."
        case .slowServer: "Serve the file from a CDN or a faster host."
        case .androidImageInsecure: "Serve the Android image over https (preflight --fix points it at the rendition)."
        case .androidImageType:
            "Point the Android image at a JPEG or PNG: the manifest's android rendition (preflight --fix does)."
        case .androidImageTooLarge:
            "Point the Android image at the manifest's android rendition, which stays under 1 MiB (preflight --fix does)."
        case .androidImageNoContentLength: "Configure the server or CDN to send Content-Length for images."
        case .androidImageSlow: "Send a smaller Android image: the manifest's android rendition (preflight --fix does)."
        case .androidImageAspect:
            "Use the manifest's 2:1 android rendition, cropped where you choose (--crop, --focus)."
        case .webImageAspect: "Use the manifest's 2:1 web rendition (process with --platforms ios,android,web)."
        case .webIconTooSmall:
            "Use the manifest's 192x192 webIcon rendition (process with --platforms ios,android,web)."
        case .fetchSkipped: "Raise --fetch-max-urls or --fetch-max-bytes to check the rest."
        case .findingsTruncated: "Fix the findings listed and check again to see the rest."
        }
    }
}
