import Foundation
import PushPrepCore
import Testing

@testable import PushPrepReport

/// Processing warnings: each kind's text is recognised as its code again, the texts are the ones
/// manifests already hold, and every code has words.
@Suite struct WarningCodeTests {
    /// A warning of each kind, with values as processing gives them (a switch without a default:
    /// a new kind does not compile until it is here).
    static func sample(_ code: ProcessingWarning.Code) -> ProcessingWarning {
        switch code {
        case .extensionMismatch: .extensionMismatch(extension: "jpg", detected: .png)
        case .contentTypeMismatch: .contentTypeMismatch(contentType: "image/png", detected: .jpeg)
        case .animationSentAsStill: .animationSentAsStill(goal: "10000000 bytes")
        case .animationSentAsMovie: .animationSentAsMovie(reason: "--gif-as-video always")
        case .damagedInput: .damagedInput(after: "2.5", damage: "invalid data found when processing input")
        case .inputShorterThanDeclared: .inputShorterThanDeclared(ends: "2", declared: "3.5")
        case .damagedAudioPacketsSkipped: .damagedAudioPacketsSkipped(skipped: 3, sent: 120)
        case .damagedPacketsSkipped: .damagedPacketsSkipped(skipped: 4)
        case .audioDropped: .audioDropped(reason: "no decoder for the audio codec opus")
        case .copyTooLarge: .copyTooLarge(bytes: 60_000_000, limit: 50_000_000)
        case .copyFailed: .copyFailed(reason: "skipped 2 damaged packets")
        case .startMovedToKeyframe: .startMovedToKeyframe(keyframe: "4.0", early: "1.5")
        case .videoStartPastEnd: .videoStartPastEnd(start: "30.0", duration: "2.0")
        case .renditionNotMade:
            .renditionNotMade(rendition: "android", reason: "no jpeg fits in 50000 bytes (smallest: 61234 at 160 px)")
        }
    }

    @Test(arguments: ProcessingWarning.Code.allCases)
    func everyKindIsRecognisedAsItsOwnCode(_ code: ProcessingWarning.Code) {
        let warning = Self.sample(code)
        #expect(warning.code == code)
        #expect(ProcessingWarning.Code(message: warning.message) == code, "\(warning.message)")
        #expect(ProcessingWarning.code(of: warning.message) == code)
        let matching = ProcessingWarning.Code.allCases.filter { $0.matches(warning.message) }
        #expect(matching == [code], "\(warning.message) matches \(matching)")
    }

    /// The texts the sites wrote before they were built here, byte for byte: manifests already
    /// hold them, and tests and users match them.
    @Test func textsAreTheOnesManifestsHold() {
        let expected: [(ProcessingWarning, String)] = [
            (
                Self.sample(.extensionMismatch),
                "the extension .jpg does not match the content, which is png; processed as png"
            ),
            (
                Self.sample(.contentTypeMismatch),
                "the Content-Type image/png does not match the content, which is jpeg; processed as jpeg"
            ),
            (
                Self.sample(.animationSentAsStill),
                "the animation does not fit in 10000000 bytes even reduced; sent its first frame as a still image"
            ),
            (Self.sample(.animationSentAsMovie), "sent as a silent MP4 movie: --gif-as-video always"),
            (
                Self.sample(.damagedInput),
                "the input is damaged or cut off after 2.5 s (invalid data found when processing input)"
            ),
            (
                Self.sample(.inputShorterThanDeclared),
                "the input ends at 2 s although its header declares 3.5 s (truncated?)"
            ),
            (Self.sample(.damagedAudioPacketsSkipped), "skipped 3 damaged audio packets of 120"),
            (Self.sample(.damagedPacketsSkipped), "skipped 4 damaged packets"),
            (Self.sample(.audioDropped), "dropped the audio track: no decoder for the audio codec opus"),
            (
                Self.sample(.copyTooLarge),
                "copying the streams as they are gives 60000000 bytes, more than 50000000: transcoded instead"
            ),
            (Self.sample(.copyFailed), "could not copy the streams (skipped 2 damaged packets): transcoded instead"),
            (
                Self.sample(.startMovedToKeyframe),
                "the preview starts at the keyframe at 4.0 s, 1.5 s before --video-start"
            ),
            (Self.sample(.videoStartPastEnd), "--video-start 30.0 s is past the end of the 2.0 s video; started at 0"),
            (
                Self.sample(.renditionNotMade),
                "no android rendition: no jpeg fits in 50000 bytes (smallest: 61234 at 160 px)"
            ),
            (.videoStartPastEnd(start: "30.0", duration: nil), "--video-start 30.0 s is past the end; started at 0"),
        ]
        #expect(Set(expected.map(\.0.code)) == Set(ProcessingWarning.Code.allCases))
        for (warning, text) in expected { #expect(warning.message == text) }
        #expect(ProcessingWarning.Code(message: expected.last?.1 ?? "") == .videoStartPastEnd)
    }

    @Test func aTextNoKindWritesHasNoCode() {
        for text in ["", "skipped", "resized because it was large", "the extension .jpg", "sent as a silent GIF: x"] {
            #expect(ProcessingWarning.Code(message: text) == nil, "\(text)")
        }
        let old = ReportPageView.Problem(warning: AttachmentWarning(message: "a warning from an older PushPrep"))
        #expect(old.code == nil && old.meaning == nil && old.action == nil)
        #expect(old.message == "a warning from an older PushPrep")
    }

    @Test func everyWarningCodeHasItsOwnWords() {
        let words = ProcessingWarning.Code.allCases.map { Explanation($0) }
        #expect(words.allSatisfy { !$0.meaning.isEmpty && !$0.action.isEmpty })
        #expect(Set(words.map(\.meaning)).count == words.count, "each kind says what it means in its own words")
        let known = ReportPageView.Problem(warning: AttachmentWarning(message: Self.sample(.audioDropped).message))
        #expect(known.code == "audio_dropped" && known.meaning == Explanation(.audioDropped).meaning)
        #expect(known.action == Explanation(.audioDropped).action)
    }
}
