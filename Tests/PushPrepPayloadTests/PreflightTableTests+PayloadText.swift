import Foundation
import PushPrepTestSupport

// MARK: - Payload text

/// The building blocks the tables' payloads are written with.
extension PreflightTableTests {
    static let jpg = "https://cdn.example.com/push/a.jpg"
    static let mp4 = "https://cdn.example.com/push/b.mp4"
    static let m4a = "https://cdn.example.com/push/c.m4a"
    static let hint = "UNNotificationAttachmentOptionsTypeHintKey"
    static let thumbTime = "UNNotificationAttachmentOptionsThumbnailTimeKey"
    static let hidden = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
    static let clip = "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
    /// PushPrep's APNs attachment entry for `jpg`, with its type.
    static let jpgEntry = #"{"id":"a","url":"\#(jpg)","type":"public.jpeg"}"#

    /// An APNs payload: `aps`, then PushPrep's `attachments`.
    static func apns(_ aps: String, attachments: String = "[\(PreflightTableTests.jpgEntry)]") -> String {
        #"{"aps":\#(aps),"attachments":\#(attachments)}"#
    }

    /// A OneSignal `POST /notifications` body: the app id, then `members`.
    static func oneSignal(_ members: String) -> String {
        #"{"app_id":"5eb5a37e-b458-11e3-ac11-000c2940e62c",\#(members)}"#
    }

    /// An Airship push object with this `notification`.
    static func airship(_ notification: String) -> String {
        #"{"audience":"all","device_types":["ios"],"notification":\#(notification)}"#
    }

    /// A Braze `/messages/send` body with this `apple_push`.
    static func braze(_ applePush: String) -> String {
        #"{"external_user_ids":["u1"],"messages":{"apple_push":\#(applePush)}}"#
    }

    /// An FCM HTTP v1 request: `message` with a token, then `members`.
    static func fcm(_ members: String) -> String {
        #"{"message":{"token":"t0k3n",\#(members)}}"#
    }

    /// FCM's `apns` member with this `aps` and an image.
    static func fcmAPNs(_ aps: String, image: String = PreflightTableTests.jpg) -> String {
        #""apns":{"payload":{"aps":\#(aps)},"fcm_options":{"image":"\#(image)"}}"#
    }

    /// An APNs payload as the phone receives it: `aps`, then the provider SDK's keys.
    static func device(_ aps: String, _ rest: String) -> String {
        #"{"aps":\#(aps),\#(rest)}"#
    }

    /// `template` with `PAD` replaced by as many `x` as make its UTF-8 exactly `bytes` long.
    static func padded(_ template: String, to bytes: Int) -> String {
        let fill = bytes - (template.utf8.count - "PAD".utf8.count)
        precondition(fill >= 0, "the template is longer than \(bytes) bytes")
        return template.replacingOccurrences(of: "PAD", with: String(repeating: "x", count: fill))
    }

    /// `count` letters, to pad a string value.
    static func pad(_ count: Int) -> String { String(repeating: "x", count: count) }
}
