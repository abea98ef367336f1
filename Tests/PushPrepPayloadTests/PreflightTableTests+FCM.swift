import PushPrepTestSupport

@testable import PushPrepPayload

/// Firebase Cloud Messaging: the HTTP v1 message and the payload the phone receives.
extension PreflightTableTests {
    static let fcmCases: [PreflightCase] = [
        PreflightCase(
            "fcm: an Android image over http", .fcm,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"http://cdn.example.com/push/a.jpg"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.error(.androidImageInsecure, "/message/android/notification/image")]),
        PreflightCase(
            "fcm: an Android image over http with --allow-http", .fcm, allowHTTP: true,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"http://cdn.example.com/push/a.jpg"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.warning(.androidImageInsecure, "/message/android/notification/image")]),
        PreflightCase(
            "fcm: android.notification.image is what Android shows, not notification.image", .fcm,
            fcm(
                #""notification":{"body":"B","image":"http://cdn.example.com/push/a.jpg"},"android":{"notification":{"image":"\#(jpg)"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.error(.insecureURL, "/message/notification/image")]),
        PreflightCase(
            "fcm: an Android image that is a movie", .fcm,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"\#(mp4)"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.error(.androidImageType, "/message/android/notification/image")]),
        PreflightCase(
            "fcm: an Android image that is a GIF (first frame only)", .fcm,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"https://cdn.example.com/push/a.gif"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.warning(.androidImageType, "/message/android/notification/image")]),
        PreflightCase(
            "fcm: an Android image BitmapFactory does not decode (HEIC)", .fcm,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"https://cdn.example.com/push/a.heic"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.error(.androidImageType, "/message/android/notification/image")]),
        PreflightCase(
            "fcm: web push image and icon with good URLs", .fcm,
            fcm(
                #""notification":{"body":"B"},"webpush":{"notification":{"image":"\#(jpg)","icon":"https://cdn.example.com/push/i.png"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), []),
        PreflightCase(
            "fcm: valid message", .fcm,
            fcm(#""notification":{"title":"T","body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), []),
        PreflightCase(
            "fcm: valid with an aps alert, sound and category", .fcm,
            fcm(
                #""notification":{"title":"T","body":"B"},\#(fcmAPNs(#"{"alert":{"subtitle":"S"},"sound":"default","category":"NEWS","mutable-content":1}"#))"#
            ), [.info(.categoryNoted, "/message/apns/payload/aps/category")]),
        PreflightCase(
            "fcm: valid notification.image", .fcm,
            fcm(#""notification":{"body":"B","image":"\#(jpg)"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#), []),
        PreflightCase(
            "fcm: valid without the message wrapper", .fcm,
            #"{"token":"t0k3n","notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))}"#, []),
        PreflightCase(
            "fcm: an aps alert instead of notification", .fcm, fcm(fcmAPNs(#"{"alert":"B","mutable-content":1}"#)),
            []),
        PreflightCase(
            "fcm: an alert push type header", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"alert"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ), []),
        PreflightCase(
            "fcm: mutable-content missing", .fcm,
            fcm(#""notification":{"body":"B"},"apns":{"fcm_options":{"image":"\#(jpg)"}}"#),
            [.error(.missingMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content missing without the message wrapper", .fcm,
            #"{"token":"t0k3n","notification":{"body":"B"},\#(fcmAPNs(#"{"sound":"default"}"#))}"#,
            [.error(.missingMutableContent, "/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content true", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":true}"#))"#),
            [.error(.invalidMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: mutable-content \"1\"", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":"1"}"#))"#),
            [.error(.invalidMutableContent, "/message/apns/payload/aps/mutable-content")]),
        PreflightCase(
            "fcm: no notification and no alert", .fcm, fcm(fcmAPNs(#"{"mutable-content":1}"#)),
            [.error(.missingAlert, "/message/notification")]),
        PreflightCase(
            "fcm: a notification with only an image", .fcm,
            fcm(#""notification":{"image":"\#(jpg)"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#),
            [.error(.missingAlert, "/message/notification")]),
        PreflightCase(
            "fcm: silent", .fcm, fcm(fcmAPNs(#"{"content-available":1,"mutable-content":1}"#)),
            [.error(.silentPush, "/message/apns/payload/aps/content-available")]),
        PreflightCase(
            "fcm: http URL", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "http://cdn.example.com/a.jpg"))"#
            ),
            [.error(.insecureURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: http URL with an ATS exception", .fcm, allowHTTP: true,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "http://cdn.example.com/a.jpg"))"#
            ),
            [.warning(.insecureURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: http notification.image", .fcm,
            fcm(
                #""notification":{"body":"B","image":"http://cdn.example.com/a.png"},"apns":{"payload":{"aps":{"mutable-content":1}}}"#
            ),
            // Android shows notification.image too (there is no android.notification.image).
            [
                .error(.insecureURL, "/message/notification/image"),
                .error(.androidImageInsecure, "/message/notification/image"),
            ]),
        PreflightCase(
            "fcm: no extension", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "https://cdn.example.com/i/42"))"#
            ),
            [.error(.missingExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: WebP", .fcm,
            fcm(
                #""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "https://cdn.example.com/a.webp"))"#
            ),
            [.error(.unsupportedExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: a movie in the image key", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: mp4))"#),
            [.error(.providerExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: a sound in the image key", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: m4a))"#),
            [.error(.providerExtension, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: not a URL", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#, image: "gs://bucket/a.jpg"))"#),
            [.error(.invalidURL, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: an image that is not a string", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":5}}"#
            ),
            [.error(.invalidAttachment, "/message/apns/fcm_options/image")]),
        PreflightCase(
            "fcm: an invalid interruption level", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"interruption-level":"Active"}"#))"#),
            [.error(.invalidInterruptionLevel, "/message/apns/payload/aps/interruption-level")]),
        PreflightCase(
            "fcm: critical", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"interruption-level":"critical"}"#))"#),
            [.info(.criticalNeedsEntitlement, "/message/apns/payload/aps/interruption-level")]),
        PreflightCase(
            "fcm: relevance score 1.5", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"relevance-score":1.5}"#))"#),
            [.error(.invalidRelevanceScore, "/message/apns/payload/aps/relevance-score")]),
        PreflightCase(
            "fcm: relevance score \"0.5\"", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"relevance-score":"0.5"}"#))"#),
            [.error(.invalidRelevanceScore, "/message/apns/payload/aps/relevance-score")]),
        PreflightCase(
            "fcm: a custom key inside aps", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"image":"x"}"#))"#),
            [.warning(.unknownAPSKey, "/message/apns/payload/aps/image")]),
        PreflightCase(
            "fcm: a category that is not a string", .fcm,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1,"category":true}"#))"#),
            [.error(.invalidValue, "/message/apns/payload/aps/category")]),
        PreflightCase(
            "fcm: aps not a dictionary", .fcm, fcm(#""notification":{"body":"B"},\#(fcmAPNs(#""mutable-content""#))"#),
            [
                .error(.apsNotObject, "/message/apns/payload/aps"),
                .error(.missingMutableContent, "/message/apns/payload/aps/mutable-content"),
            ]),
        PreflightCase(
            "fcm: token repeated", .fcm, counted: .wholeTextWithout(#""token":"again","#),
            fcm(#""token":"again","notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#),
            [.warning(.duplicateKey, "/message/token")]),
        PreflightCase(
            "fcm: a 4096-byte message fits", .fcm,
            padded(fcm(#""notification":{"body":"PAD"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), to: 4096), []),
        PreflightCase(
            "fcm: a 4097-byte message does not", .fcm,
            padded(fcm(#""notification":{"body":"PAD"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "fcm: attachments on a background push", .fcm, pushType: .background,
            fcm(#""notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "fcm: apns-push-type background in the message", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"background"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ),
            [.error(.pushTypeWithoutExtension, "/message/apns/headers/apns-push-type")]),
        PreflightCase(
            "fcm: apns-push-type voip in the message", .fcm,
            fcm(
                #""notification":{"body":"B"},"apns":{"headers":{"apns-push-type":"voip"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"\#(jpg)"}}"#
            ),
            [.error(.pushTypeWithoutExtension, "/message/apns/headers/apns-push-type")]),
        PreflightCase(
            "fcm: no attachment", .fcm, fcm(#""notification":{"body":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "fcm device: valid", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"\#(jpg)"}"#), []),
        PreflightCase(
            "fcm device: a movie", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"\#(mp4)"}"#),
            [.error(.providerExtension, "/fcm_options/image")]),
        PreflightCase(
            "fcm device: mutable-content missing", .fcm,
            device(#"{"alert":"B"}"#, #""fcm_options":{"image":"\#(jpg)"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "fcm device: http URL", .fcm,
            device(#"{"alert":"B","mutable-content":1}"#, #""fcm_options":{"image":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/fcm_options/image")]),
        // Keys FCM does not define where they sit (`unknown_key`); camelCase JSON names and the
        // free-form maps (data, headers, webpush.notification) are FCM's own.
        PreflightCase(
            "fcm: a token beside message (a --merge at the wrong level)", .fcm,
            #"{"message":{"notification":{"body":"B"},\#(fcmAPNs(#"{"mutable-content":1}"#))},"token":"abc"}"#,
            [.warning(.unknownKey, "/token")]),
        PreflightCase(
            "fcm: camelCase names and free-form maps are FCM's", .fcm,
            fcm(
                #""validateOnly":false,"fcmOptions":{"analyticsLabel":"x"},"data":{"any":"thing"},"notification":{"body":"B"},"android":{"ttl":"60s","directBootOk":true,"notification":{"channelId":"news","clickAction":"OPEN"}},"webpush":{"headers":{"Urgency":"high"},"notification":{"requireInteraction":true,"badge":"https://cdn.example.com/b.png"},"fcmOptions":{"link":"https://example.com"}},"apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"mutable-content":1},"deeplink":"x"},"fcm_options":{"image":"\#(jpg)","analyticsLabel":"y"}}"#
            ), [.warning(.unknownKey, "/message/validateOnly")]),
        PreflightCase(
            "fcm: keys FCM does not define in message, notification, android, apns and the aps alert", .fcm,
            fcm(
                #""to":"legacy","notification":{"body":"B","imageUrl":"\#(jpg)"},"android":{"notification":{"image":"\#(jpg)"},"icon":"x"},"apns":{"payload":{"aps":{"alert":{"title":"T","image":"x"},"mutable-content":1}},"fcm_options":{"image":"\#(jpg)","link":"https://example.com"}}"#
            ),
            [
                .warning(.unknownKey, "/message/to"), .warning(.unknownKey, "/message/notification/imageUrl"),
                .warning(.unknownKey, "/message/android/icon"),
                .warning(.unknownKey, "/message/apns/fcm_options/link"),
                .warning(.unknownKey, "/message/apns/payload/aps/alert/image"),
            ]),
        PreflightCase(
            "fcm device: custom keys beside aps are the app's", .fcm,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""fcm_options":{"image":"\#(jpg)"},"gcm.message_id":"1","token":"x""#), []),
        PreflightCase(
            "fcm: the iOS, Android and web images on hosts a phone cannot reach (the shared image once)", .fcm,
            fcm(
                #""notification":{"body":"B","image":"https://127.0.0.1/a.jpg"},"webpush":{"notification":{"image":"https://172.16.0.9/w.jpg","icon":"https://localhost/i.png"}},"apns":{"payload":{"aps":{"mutable-content":1}}}"#
            ),
            [
                .error(.unreachableURL, "/message/notification/image"),
                .error(.unreachableURL, "/message/webpush/notification/image"),
                .error(.unreachableURL, "/message/webpush/notification/icon"),
            ]),
        PreflightCase(
            "fcm: an Android image on a private address", .fcm,
            fcm(
                #""notification":{"body":"B"},"android":{"notification":{"image":"https://10.1.2.3/a.jpg"}},\#(fcmAPNs(#"{"mutable-content":1}"#))"#
            ), [.error(.unreachableURL, "/message/android/notification/image")]),
    ]
}
