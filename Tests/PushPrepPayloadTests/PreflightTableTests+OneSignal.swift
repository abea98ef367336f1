import PushPrepTestSupport

@testable import PushPrepPayload

/// OneSignal: the REST body and the payload its SDK receives.
extension PreflightTableTests {
    static let oneSignalCases: [PreflightCase] = [
        PreflightCase(
            "onesignal: big_picture over http", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"big_picture":"http://cdn.example.com/push/a.jpg""#
            ), [.error(.androidImageInsecure, "/big_picture")]),
        PreflightCase(
            "onesignal: big_picture that is a sound", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"big_picture":"\#(m4a)""#),
            [.error(.androidImageType, "/big_picture")]),
        PreflightCase(
            "onesignal: big_picture, chrome_web_image and chrome_web_icon with good URLs", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"big_picture":"\#(jpg)","chrome_web_image":"\#(jpg)","chrome_web_icon":"https://cdn.example.com/push/i.png""#
            ), []),
        PreflightCase(
            "onesignal: valid REST body with image, video and audio", .onesignal,
            oneSignal(
                #""include_subscription_ids":["s1"],"headings":{"en":"T"},"subtitle":{"en":"S"},"contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)","vid":"\#(mp4)","aud":"\#(m4a)"},"mutable_content":true"#
            ), []),
        PreflightCase(
            "onesignal: valid with category, interruption level and relevance", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_category":"NEWS","ios_interruption_level":"time_sensitive","ios_relevance_score":0.5,"thread_id":"t","ios_sound":"default""#
            ), [.info(.categoryNoted, "/ios_category")]),
        PreflightCase(
            "onesignal: mutable_content left to OneSignal", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#), []),
        PreflightCase(
            "onesignal: mutable_content false", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":false"#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: mutable_content 1 (APNs' spelling)", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":1"#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: mutable_content \"true\"", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"mutable_content":"true""#),
            [.error(.invalidMutableContent, "/mutable_content")]),
        PreflightCase(
            "onesignal: no contents", .onesignal, oneSignal(#""ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.missingAlert, "/contents")]),
        PreflightCase(
            "onesignal: empty contents", .onesignal,
            oneSignal(#""contents":{"en":""},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.missingAlert, "/contents")]
        ),
        PreflightCase(
            "onesignal: silent", .onesignal,
            oneSignal(#""content_available":true,"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.silentPush, "/content_available")]),
        PreflightCase(
            "onesignal: http URL, the id escaped in the pointer", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"a/b~c":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/ios_attachments/a~1b~0c")]),
        PreflightCase(
            "onesignal: http URL with an ATS exception", .onesignal, allowHTTP: true,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"http://cdn.example.com/a.jpg"}"#),
            [.warning(.insecureURL, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: no extension", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"https://cdn.example.com/media/42"}"#),
            [.error(.missingExtension, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: WebP", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"https://cdn.example.com/a.webp"}"#),
            [.error(.unsupportedExtension, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: .aif and .m2v, which iOS takes and OneSignal's SDK does not", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"aud":"https://cdn.example.com/a.aif","vid":"https://cdn.example.com/b.m2v"}"#
            ),
            [.error(.providerExtension, "/ios_attachments/aud"), .error(.providerExtension, "/ios_attachments/vid")]),
        PreflightCase(
            "onesignal: not a URL", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"cdn.example.com/a.jpg"}"#),
            [.error(.invalidURL, "/ios_attachments/img")]),
        PreflightCase(
            "onesignal: ios_attachments an array", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":["\#(jpg)"]"#),
            [.error(.invalidAttachment, "/ios_attachments")]),
        PreflightCase(
            "onesignal: ios_attachments values that are not URL strings", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":5,"vid":""}"#),
            [.error(.invalidAttachment, "/ios_attachments/img"), .error(.invalidAttachment, "/ios_attachments/vid")]),
        PreflightCase(
            "onesignal: APNs' spelling of time-sensitive", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_interruption_level":"time-sensitive""#),
            [.error(.invalidInterruptionLevel, "/ios_interruption_level")]),
        PreflightCase(
            "onesignal: critical", .onesignal,
            oneSignal(
                #""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_interruption_level":"critical""#),
            [.info(.criticalNeedsEntitlement, "/ios_interruption_level")]),
        PreflightCase(
            "onesignal: relevance score 1.5", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_relevance_score":1.5"#),
            [.error(.invalidRelevanceScore, "/ios_relevance_score")]),
        PreflightCase(
            "onesignal: relevance score \"0.5\"", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_relevance_score":"0.5""#),
            [.error(.invalidRelevanceScore, "/ios_relevance_score")]),
        PreflightCase(
            "onesignal: a category that is not a string", .onesignal,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"},"ios_category":["NEWS"]"#),
            [.error(.invalidValue, "/ios_category")]),
        PreflightCase(
            "onesignal: contents repeated", .onesignal, counted: .wholeTextWithout(#""contents":{"en":"A"},"#),
            oneSignal(#""contents":{"en":"A"},"contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.warning(.duplicateKey, "/contents")]),
        PreflightCase(
            "onesignal: a 4096-byte body fits", .onesignal,
            padded(oneSignal(#""contents":{"en":"PAD"},"ios_attachments":{"img":"\#(jpg)"}"#), to: 4096), []),
        PreflightCase(
            "onesignal: a 4097-byte body does not", .onesignal,
            padded(oneSignal(#""contents":{"en":"PAD"},"ios_attachments":{"img":"\#(jpg)"}"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "onesignal: attachments on a background push", .onesignal, pushType: .background,
            oneSignal(#""contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "onesignal: no attachments", .onesignal, oneSignal(#""contents":{"en":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "onesignal device: valid", .onesignal,
            device(#"{"alert":{"body":"B"},"mutable-content":1}"#, #""att":{"img":"\#(jpg)"},"custom":{"i":"5f1c"}"#),
            []),
        PreflightCase(
            "onesignal device: mutable-content missing", .onesignal,
            device(#"{"alert":{"body":"B"}}"#, #""att":{"img":"\#(jpg)"},"custom":{"i":"5f1c"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "onesignal device: mutable-content true", .onesignal,
            device(#"{"alert":{"body":"B"},"mutable-content":true}"#, #""att":{"img":"\#(jpg)"}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "onesignal device: silent", .onesignal,
            device(#"{"content-available":1,"mutable-content":1}"#, #""att":{"img":"\#(jpg)"}"#),
            [.error(.silentPush, "/aps/content-available")]),
        PreflightCase(
            "onesignal device: http URL", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":{"img":"http://cdn.example.com/a.jpg"}"#),
            [.error(.insecureURL, "/att/img")]),
        PreflightCase(
            "onesignal device: .aif", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":{"aud":"https://cdn.example.com/a.aif"}"#),
            [.error(.providerExtension, "/att/aud")]),
        PreflightCase(
            "onesignal device: the phone's spelling of the interruption level", .onesignal,
            device(
                #"{"alert":"B","mutable-content":1,"interruption-level":"time_sensitive"}"#, #""att":{"img":"\#(jpg)"}"#
            ),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "onesignal device: a custom key inside aps", .onesignal,
            device(#"{"alert":"B","mutable-content":1,"att":{}}"#, #""att":{"img":"\#(jpg)"}"#),
            [.warning(.unknownAPSKey, "/aps/att")]),
        PreflightCase(
            "onesignal device: att a string", .onesignal,
            device(#"{"alert":"B","mutable-content":1}"#, #""att":"\#(jpg)""#), [.error(.invalidAttachment, "/att")]),
        PreflightCase(
            "onesignal device: no attachment", .onesignal,
            device(#"{"alert":"B"}"#, #""custom":{"i":"5f1c"}"#), [.info(.noAttachments, "")]),
        // The create-notification body's own keys; everything else is unknown_key.
        PreflightCase(
            "onesignal: targeting, platforms and appearance keys OneSignal defines", .onesignal,
            oneSignal(
                #""include_aliases":{"external_id":["u1"]},"target_channel":"push","isIos":true,"ios_badgeType":"Increase","ios_badgeCount":1,"data":{"any":"thing"},"contents":{"en":"B","fr":"B"},"ios_attachments":{"img":"\#(jpg)"}"#
            ), []),
        PreflightCase(
            "onesignal: a key OneSignal does not define", .onesignal,
            oneSignal(#""include_player_id":["p1"],"contents":{"en":"B"},"ios_attachments":{"img":"\#(jpg)"}"#),
            [.warning(.unknownKey, "/include_player_id")]),
    ]
}
