import PushPrepCore
import PushPrepJSON
import PushPrepRemote

/// The checks of an attachment's options: the dictionary the service extension hands to
/// `UNNotificationAttachment(identifier:url:options:)` (PushPrep's APNs layout), or Airship's
/// `crop`, `time` and `hidden`, which its SDK turns into that dictionary. A value of the wrong
/// type or out of range makes the attachment fail or its thumbnail come out wrong on the phone.
extension PayloadChecker {
    /// The option names of one spelling.
    private struct OptionNames {
        var typeHint: String?
        var hidden: String
        var time: String
        var clip: String
        /// The clipping rectangle's members: origin, then size.
        var rect: (x: String, y: String, width: String, height: String)

        static let apple = OptionNames(
            typeHint: AttachmentOptionKey.typeHint, hidden: AttachmentOptionKey.thumbnailHidden,
            time: AttachmentOptionKey.thumbnailTime, clip: AttachmentOptionKey.thumbnailClippingRect,
            rect: ("X", "Y", "Width", "Height"))
        static let airship = OptionNames(
            typeHint: nil, hidden: "hidden", time: "time", clip: "crop", rect: ("x", "y", "width", "height"))
    }

    /// Checks every options dictionary of the payload.
    mutating func checkOptions() {
        for reference in layout.attachmentOptions {
            checkOptions(reference)
        }
    }

    private mutating func checkOptions(_ reference: PayloadLayout.OptionsReference) {
        guard let value = payload[reference.path] else { return }
        guard let members = value.objectValue else {
            invalidOption("the attachment options must be a dictionary, got \(value.typeName)", at: reference.path)
            return
        }
        let names = reference.keys == .apple ? OptionNames.apple : OptionNames.airship
        for (key, value) in members {
            let path = reference.path.appending(key)
            switch key {
            case names.typeHint:
                if value.stringValue == nil {
                    invalidOption("the type hint must be a UTI string, got \(value.typeName)", at: path)
                }
            case names.hidden:
                // The phone reads an NSNumber's boolValue: JSON true/false, or 0/1.
                if value.boolValue == nil && value.intValue.map({ $0 == 0 || $0 == 1 }) != true {
                    invalidOption(
                        "whether the thumbnail is hidden must be true or false, got \(value.serialized())", at: path)
                }
            case names.time:
                if !(value.doubleValue.map { $0.isFinite && $0 >= 0 } ?? false) {
                    invalidOption(
                        "the thumbnail time must be a number of seconds (a movie) or a frame number (an animation), at least 0,"
                            + " got \(value.serialized())", at: path)
                }
            case names.clip:
                checkClippingRect(value, at: path, names: names.rect)
            default:
                add(
                    .warning, .unknownAttachmentOption,
                    "\"\(key)\" is not an attachment option \(reference.keys == .apple ? "iOS" : "Airship") defines;"
                        + " it is ignored", at: path)
            }
        }
    }

    /// A normalised rectangle: all four members, numbers, inside the unit square, not empty.
    private mutating func checkClippingRect(
        _ value: JSONValue, at path: JSONPath, names: (x: String, y: String, width: String, height: String)
    ) {
        let required = [names.x, names.y, names.width, names.height]
        let spelled = required.joined(separator: ", ")
        guard let members = value.objectValue else {
            invalidOption("the clipping rectangle must be a dictionary {\(spelled)}, got \(value.typeName)", at: path)
            return
        }
        var values: [Double] = []
        for name in required {
            guard let member = members[name] else {
                invalidOption("the clipping rectangle has no \(name); it needs \(spelled)", at: path)
                return
            }
            guard let number = member.doubleValue, number.isFinite, (0...1).contains(number) else {
                invalidOption(
                    "\(name) must be a number from 0 to 1 (a fraction of the image), got \(member.serialized())",
                    at: path.appending(name))
                return
            }
            values.append(number)
        }
        for (key, _) in members where !required.contains(key) {
            add(
                .warning, .unknownAttachmentOption,
                "\"\(key)\" is not a member of the clipping rectangle (\(spelled)); it is ignored",
                at: path.appending(key))
        }
        let (x, y, width, height) = (values[0], values[1], values[2], values[3])
        // A hair of slack for fractions such as 1/3 + 2/3 written as decimals.
        let slack = 1e-9
        if width <= 0 || height <= 0 {
            invalidOption(
                "the clipping rectangle is empty (\(names.width) \(width), \(names.height) \(height))", at: path)
        } else if x + width > 1 + slack || y + height > 1 + slack {
            invalidOption(
                "the clipping rectangle reaches outside the image (\(names.x) + \(names.width) = \(x + width),"
                    + " \(names.y) + \(names.height) = \(y + height); each must be at most 1)", at: path)
        }
    }

    private mutating func invalidOption(_ message: String, at path: JSONPath) {
        add(.error, .invalidAttachmentOption, message, at: path)
    }
}
