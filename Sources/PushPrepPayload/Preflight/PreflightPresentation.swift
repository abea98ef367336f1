package import PushPrepCore
import PushPrepJSON

/// What the phone would show for a payload: the alert's title and body and each attachment's
/// URL and thumbnail options, read with the dialect's keys. The notification preview of
/// `preflight --report` and the console's pre-flight page draws from it.
package struct PreflightPresentation: Sendable, Equatable {
    /// The alert's title, and the JSON Pointer it was read from.
    package var title: String?
    package var titlePointer: String?
    /// The alert's body, and the JSON Pointer it was read from.
    package var body: String?
    package var bodyPointer: String?
    /// Where the alert is (or would be): the first of the dialect's alert places present, else
    /// its first place.
    package var alertPointer: String?
    /// Every attachment, in payload order (as ``PreflightReport/attachments``).
    package var attachments: [Attachment] = []

    /// One attachment's URL and the options that shape its thumbnail.
    package struct Attachment: Sendable, Equatable {
        /// The JSON Pointer of its URL (as ``PreflightAttachment/pointer``).
        package var pointer: String
        package var url: String
        /// The JSON Pointer of its options dictionary, when it has one.
        package var optionsPointer: String?
        /// The type the payload declares, where it declares a UTI or an extension PushPrep knows.
        package var declaredType: MediaType?
        /// `ThumbnailTime`: seconds into a movie, or a frame number of an animation.
        package var thumbnailTime: Double?
        /// `ThumbnailHidden`.
        package var thumbnailHidden: Bool?
        /// `ThumbnailClippingRect` (Airship's `crop`), unchecked.
        package var clip: Rect?

        /// The frame of an animation `thumbnailTime` names (its whole part), before clamping to
        /// the frames there are; 0 when absent, negative, or too large for a frame number (a
        /// payload's 1e300 must not trap in the conversion to `Int`). A report's picture and its
        /// caption both take this frame.
        package var thumbnailFrame: Int {
            let time = thumbnailTime ?? 0
            return time.isFinite && time > 0 && time < 1_000_000 ? Int(time.rounded(.down)) : 0
        }
    }

    /// A normalised rectangle as the payload gives it.
    package struct Rect: Sendable, Equatable {
        package var x: Double
        package var y: Double
        package var width: Double
        package var height: Double
    }
}

extension Preflight {
    /// The presentation of a payload as `options` read it (dialect, push type); nil when the
    /// bytes are not a JSON object.
    package static func presentation(of bytes: [UInt8], options: PreflightOptions) -> PreflightPresentation? {
        guard let document = try? JSONValue.parse(bytes), document.value.objectValue != nil else { return nil }
        let payload = document.value
        let dialect = options.dialect ?? PushDialect.detect(payload)
        let layout = PayloadLayout.resolve(payload, dialect: dialect, pushType: options.pushType)
        var presentation = PreflightPresentation()
        presentation.alertPointer = (layout.alert.first { payload[$0] != nil } ?? layout.alert.first)?.pointer
        presentation.readAlert(payload, at: layout.alert, dialect: dialect)
        presentation.attachments = layout.attachments.map { reference in
            var attachment = PreflightPresentation.Attachment(pointer: reference.path.pointer, url: reference.url)
            attachment.declaredType =
                reference.declaredTypes.lazy.compactMap { declared in
                    MediaType.allCases.first { declared.names($0) }
                }.first
            // The options dictionary beside the URL (PushPrep's `attachments[i].options`) or
            // above it (Airship's `media_attachment.options`, shared by its URLs).
            let options = layout.attachmentOptions.first { options in
                guard let owner = options.path.parent?.pointer else { return false }
                return reference.path.pointer.hasPrefix(owner + "/")
            }
            if let options { attachment.readOptions(payload, at: options) }
            return attachment
        }
        return presentation
    }
}

extension PreflightPresentation {
    /// The title and body from the first of the dialect's alert places that has each: an alert
    /// string is the body; an alert dictionary has `title` and `body`; Airship's `ios.title` is a
    /// title; OneSignal's `headings` and `contents` are dictionaries of language to text.
    fileprivate mutating func readAlert(_ payload: JSONValue, at places: [JSONPath], dialect: PushDialect) {
        for place in places {
            guard let value = payload[place] else { continue }
            let key = place.lastKey
            if dialect == .onesignal, key == "headings" || key == "contents", let text = Self.localized(value) {
                if key == "headings" {
                    setTitle(text, at: place)
                } else {
                    setBody(text, at: place)
                }
            } else if let text = value.stringValue {
                if key == "title" { setTitle(text, at: place) } else { setBody(text, at: place) }
            } else if value.objectValue != nil {
                if let text = value["title"]?.stringValue { setTitle(text, at: place.appending("title")) }
                if let text = value["body"]?.stringValue { setBody(text, at: place.appending("body")) }
            }
        }
    }

    private mutating func setTitle(_ text: String, at path: JSONPath) {
        guard title == nil else { return }
        title = text
        titlePointer = path.pointer
    }

    private mutating func setBody(_ text: String, at path: JSONPath) {
        guard body == nil else { return }
        body = text
        bodyPointer = path.pointer
    }

    /// A dictionary of language to text: English, else the first language.
    private static func localized(_ value: JSONValue) -> String? {
        guard let languages = value.objectValue else { return value.stringValue }
        return languages["en"]?.stringValue ?? languages.lazy.compactMap { $0.value.stringValue }.first
    }
}

extension PreflightPresentation.Attachment {
    /// Reads the thumbnail options with the spelling `reference` uses; a value of the wrong type
    /// is left out (pre-flight's findings report it).
    fileprivate mutating func readOptions(_ payload: JSONValue, at reference: PayloadLayout.OptionsReference) {
        guard let options = payload[reference.path], options.objectValue != nil else { return }
        optionsPointer = reference.path.pointer
        let apple = reference.keys == .apple
        let hidden = options[apple ? AttachmentOptionKey.thumbnailHidden : "hidden"]
        thumbnailHidden = hidden?.boolValue ?? hidden?.intValue.flatMap { $0 == 0 || $0 == 1 ? $0 == 1 : nil }
        thumbnailTime = options[apple ? AttachmentOptionKey.thumbnailTime : "time"]?.doubleValue
        let rect = options[apple ? AttachmentOptionKey.thumbnailClippingRect : "crop"]
        let names = apple ? ["X", "Y", "Width", "Height"] : ["x", "y", "width", "height"]
        let numbers = names.compactMap { rect?[$0]?.doubleValue }
        if numbers.count == 4 {
            clip = PreflightPresentation.Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        }
    }
}

extension PushPrepCore.Attachment {
    /// The page of a processed animation its `ThumbnailTime` names, as the batch report pictures
    /// and captions it: the time's whole part, at most the last of ``frames`` (a time past the
    /// end takes the last frame); 0 when absent, negative or not finite. Bounded before the
    /// conversion to `Int`: 1e300, or a frame count near `Int.max`, from a hand-edited manifest
    /// must not trap. (A payload's time is read as ``PreflightPresentation/Attachment/thumbnailFrame``.)
    package var thumbnailFrame: Int {
        let last = max(1, frames ?? 1) - 1
        guard let time = options.thumbnailTime, time.isFinite, time > 0 else { return 0 }
        return min(last, Int(min(time, 1e9).rounded(.down)))
    }
}
