import Foundation

/// A warning processing gives an attachment. The pipeline carries it typed to the manifest,
/// where it becomes an ``AttachmentWarning``: its stable ``Code`` and its text. A version 3
/// manifest writes both; earlier versions (and the HTTP API) write the text alone, from which a
/// reader of such a manifest recognises the code again (``WarningCode/init(message:)``).
///
/// A message is its code's ``WarningCode/fixedParts`` with the case's values between them: the
/// text is built from the same parts it is recognised by, so the two cannot drift apart.
package enum ProcessingWarning: Sendable, Equatable {
    /// The file's extension names another type than its bytes.
    case extensionMismatch(extension: String, detected: MediaType)
    /// A download's `Content-Type` names another type than its bytes.
    case contentTypeMismatch(contentType: String, detected: MediaType)
    /// An animation too large as a GIF even reduced: its first frame was sent as a still image.
    case animationSentAsStill(goal: String)
    /// An animation sent as a silent MP4 movie, for `reason`.
    case animationSentAsMovie(reason: String)
    /// A sound's reader stopped at a damaged or cut-off place, `after` seconds in.
    case damagedInput(after: String, damage: String)
    /// A sound that ends before the length its header declares.
    case inputShorterThanDeclared(ends: String, declared: String)
    /// Audio packets the decoder could not read, skipped.
    case damagedAudioPacketsSkipped(skipped: Int, sent: Int)
    /// A movie's packets the decoder could not read, skipped.
    case damagedPacketsSkipped(skipped: Int)
    /// A movie's audio track that could not be decoded, left out.
    case audioDropped(reason: String)
    /// A movie whose streams copied as they are are over the limit: transcoded instead.
    case copyTooLarge(bytes: Int, limit: Int)
    /// A movie whose streams could not be copied: transcoded instead.
    case copyFailed(reason: String)
    /// A copied movie starts at the keyframe before `--video-start`, more than a second early.
    case startMovedToKeyframe(keyframe: String, early: String)
    /// `--video-start` past the movie's end (`duration` seconds, when known): started at 0.
    case videoStartPastEnd(start: String, duration: String?)
    /// A platform's rendition (`android`, `web`, `webIcon`) that could not be made, for
    /// `reason`: that platform's push carries no picture, the attachment itself is fine.
    case renditionNotMade(rendition: String, reason: String)

    /// The kind of a warning.
    package typealias Code = WarningCode

    /// The warning's kind.
    package var code: Code {
        switch self {
        case .extensionMismatch: .extensionMismatch
        case .contentTypeMismatch: .contentTypeMismatch
        case .animationSentAsStill: .animationSentAsStill
        case .animationSentAsMovie: .animationSentAsMovie
        case .damagedInput: .damagedInput
        case .inputShorterThanDeclared: .inputShorterThanDeclared
        case .damagedAudioPacketsSkipped: .damagedAudioPacketsSkipped
        case .damagedPacketsSkipped: .damagedPacketsSkipped
        case .audioDropped: .audioDropped
        case .copyTooLarge: .copyTooLarge
        case .copyFailed: .copyFailed
        case .startMovedToKeyframe: .startMovedToKeyframe
        case .videoStartPastEnd: .videoStartPastEnd
        case .renditionNotMade: .renditionNotMade
        }
    }

    /// The values that go between the code's fixed parts.
    private var values: [String] {
        switch self {
        case .extensionMismatch(let ext, let detected): [ext, detected.rawValue, detected.rawValue]
        case .contentTypeMismatch(let contentType, let detected): [contentType, detected.rawValue, detected.rawValue]
        case .animationSentAsStill(let goal): [goal]
        case .animationSentAsMovie(let reason): [reason]
        case .damagedInput(let after, let damage): [after, damage]
        case .inputShorterThanDeclared(let ends, let declared): [ends, declared]
        case .damagedAudioPacketsSkipped(let skipped, let sent): [String(skipped), String(sent)]
        case .damagedPacketsSkipped(let skipped): [String(skipped)]
        case .audioDropped(let reason): [reason]
        case .copyTooLarge(let bytes, let limit): [String(bytes), String(limit)]
        case .copyFailed(let reason): [reason]
        case .startMovedToKeyframe(let keyframe, let early): [keyframe, early]
        case .videoStartPastEnd(let start, let duration): [start, duration.map { " of the \($0) s video" } ?? ""]
        case .renditionNotMade(let rendition, let reason): [rendition, reason]
        }
    }

    /// The text the manifest keeps.
    package var message: String {
        let parts = code.fixedParts
        var text = parts[0]
        for (value, part) in zip(values, parts.dropFirst()) { text += value + part }
        return text
    }

    /// The code of a manifest's warning text; nil for a text this version does not write.
    package static func code(of message: String) -> Code? { Code(message: message) }
}

/// The kind of a warning, stable across versions: a version 3 manifest writes it beside the
/// warning's text, and the report and the console show it and explain it by it.
public enum WarningCode: String, CaseIterable, Sendable, Codable {
    case extensionMismatch = "extension_mismatch"
    case contentTypeMismatch = "content_type_mismatch"
    case animationSentAsStill = "animation_sent_as_still"
    case animationSentAsMovie = "animation_sent_as_movie"
    case damagedInput = "damaged_input"
    case inputShorterThanDeclared = "input_shorter_than_declared"
    case damagedAudioPacketsSkipped = "damaged_audio_packets_skipped"
    case damagedPacketsSkipped = "damaged_packets_skipped"
    case audioDropped = "audio_dropped"
    case copyTooLarge = "copy_too_large"
    case copyFailed = "copy_failed"
    case startMovedToKeyframe = "start_moved_to_keyframe"
    case videoStartPastEnd = "video_start_past_end"
    case renditionNotMade = "rendition_not_made"

    /// The text of a message of this kind outside its values, in order: the message starts
    /// with the first part, ends with the last, and holds the others in between.
    package var fixedParts: [String] {
        switch self {
        case .extensionMismatch:
            ["the extension .", " does not match the content, which is ", "; processed as ", ""]
        case .contentTypeMismatch:
            ["the Content-Type ", " does not match the content, which is ", "; processed as ", ""]
        case .animationSentAsStill:
            ["the animation does not fit in ", " even reduced; sent its first frame as a still image"]
        case .animationSentAsMovie: ["sent as a silent MP4 movie: ", ""]
        case .damagedInput: ["the input is damaged or cut off after ", " s (", ")"]
        case .inputShorterThanDeclared:
            ["the input ends at ", " s although its header declares ", " s (truncated?)"]
        case .damagedAudioPacketsSkipped: ["skipped ", " damaged audio packets of ", ""]
        case .damagedPacketsSkipped: ["skipped ", " damaged packets"]
        case .audioDropped: ["dropped the audio track: ", ""]
        case .copyTooLarge:
            ["copying the streams as they are gives ", " bytes, more than ", ": transcoded instead"]
        case .copyFailed: ["could not copy the streams (", "): transcoded instead"]
        case .startMovedToKeyframe:
            ["the preview starts at the keyframe at ", " s, ", " s before --video-start"]
        case .videoStartPastEnd: ["--video-start ", " s is past the end", "; started at 0"]
        case .renditionNotMade: ["no ", " rendition: ", ""]
        }
    }

    /// The code of a warning's text; nil for a text no kind writes (a manifest from an older
    /// PushPrep). Only for reading warnings written as text (manifests before version 3); a
    /// warning made now carries its code.
    package init?(message: String) {
        guard let code = Self.allCases.first(where: { $0.matches(message) }) else { return nil }
        self = code
    }

    /// Whether `message` starts with the first fixed part, ends with the last and holds the
    /// others in order between them.
    package func matches(_ message: String) -> Bool {
        let parts = fixedParts
        guard let first = parts.first, let last = parts.last, message.hasPrefix(first) else { return false }
        var rest = message.dropFirst(first.count)
        for part in parts.dropFirst().dropLast() {
            guard let found = rest.range(of: part) else { return false }
            rest = rest[found.upperBound...]
        }
        return parts.count == 1 ? true : rest.hasSuffix(last)
    }
}
