import PushPrepTestSupport

@testable import PushPrepPayload

/// Braze: `/messages/send`, a bare `apple_push`, and the payload its SDK receives.
extension PreflightTableTests {
    /// Braze counts `alert` + `extra`: `"B"` is 3 bytes, `{"title":"T","body":"B"}` 24.
    static let brazeAlert = #"{"title":"T","body":"B"}"#
    static let brazeCases: [PreflightCase] = [
        PreflightCase(
            "braze: the Android big picture (extra.appboy_image_url) over http", .braze,
            counted: .bytes(24, limit: 1912),
            #"{"external_user_ids":["u1"],"messages":{"apple_push":{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg"},"android_push":{"alert":"B","title":"T","extra":{"appboy_image_url":"http://cdn.example.com/push/a.jpg"}}}}"#,
            [.error(.androidImageInsecure, "/messages/android_push/extra/appboy_image_url")]),
        PreflightCase(
            "braze: the Android big picture is a movie", .braze, counted: .bytes(24, limit: 1912),
            #"{"external_user_ids":["u1"],"messages":{"apple_push":{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg"},"android_push":{"alert":"B","title":"T","extra":{"appboy_image_url":"\#(mp4)"}}}}"#,
            [.error(.androidImageType, "/messages/android_push/extra/appboy_image_url")]),
        PreflightCase(
            "braze: valid /messages/send body", .braze, counted: .bytes(24, limit: 1912),
            braze(#"{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":true}"#),
            []),
        PreflightCase(
            "braze: valid apple_push at the top", .braze, counted: .bytes(3, limit: 1912),
            #"{"apple_push":{"alert":"B","asset_url":"\#(mp4)","asset_file_type":"mp4","mutable_content":true}}"#, []),
        PreflightCase(
            "braze: valid audio with category, interruption level, relevance and extra", .braze,
            counted: .bytes(3 + #"{"k":"v"}"#.utf8.count, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"\#(m4a)","asset_file_type":"m4a","category":"NEWS","interruption_level":"time-sensitive","relevance_score":0.5,"extra":{"k":"v"}}"#
            ), [.info(.categoryNoted, "/messages/apple_push/category")]),
        PreflightCase(
            "braze: valid .aif, Braze's spelling of AIFF", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.aif","asset_file_type":"aif"}"#), []),
        PreflightCase(
            "braze: mutable_content left to Braze", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#), []),
        PreflightCase(
            "braze: mutable_content false", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":false}"#),
            [.error(.invalidMutableContent, "/messages/apple_push/mutable_content")]),
        PreflightCase(
            "braze: mutable_content 1", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","mutable_content":1}"#),
            [.error(.invalidMutableContent, "/messages/apple_push/mutable_content")]),
        PreflightCase(
            "braze: no alert", .braze, counted: .bytes(0, limit: 1912),
            braze(#"{"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.missingAlert, "/messages/apple_push/alert")]),
        PreflightCase(
            "braze: no alert, apple_push at the top", .braze, counted: .bytes(0, limit: 1912),
            #"{"apple_push":{"asset_url":"\#(jpg)","asset_file_type":"jpg"}}"#,
            [.error(.missingAlert, "/apple_push/alert")]),
        PreflightCase(
            "braze: silent", .braze, counted: .bytes(0, limit: 1912),
            braze(#"{"content-available":true,"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.silentPush, "/messages/apple_push/content-available")]),
        PreflightCase(
            "braze: http URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.error(.insecureURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: http URL with an ATS exception", .braze, allowHTTP: true, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.warning(.insecureURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: no extension", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/media/42","asset_file_type":"jpg"}"#),
            [.error(.missingExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: WebP", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.webp","asset_file_type":"jpg"}"#),
            [.error(.unsupportedExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: .aiff, which iOS takes and Braze does not", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https://cdn.example.com/a.aiff","asset_file_type":"aif"}"#),
            [.error(.providerExtension, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: asset_file_type disagrees with the URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"png"}"#),
            [.error(.typeMismatch, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type jpeg, not Braze's jpg", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpeg"}"#),
            [.error(.providerExtension, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type webp", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"webp"}"#),
            [
                .error(.providerExtension, "/messages/apple_push/asset_file_type"),
                .warning(.unknownTypeHint, "/messages/apple_push/asset_file_type"),
            ]),
        PreflightCase(
            "braze: asset_file_type missing", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)"}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_file_type not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":1}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_file_type")]),
        PreflightCase(
            "braze: asset_url not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":{"url":"\#(jpg)"},"asset_file_type":"jpg"}"#),
            [.error(.invalidAttachment, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: not a URL", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"https//cdn.example.com/a.jpg","asset_file_type":"jpg"}"#),
            [.error(.invalidURL, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: OneSignal's spelling of time-sensitive", .braze, counted: .bytes(3, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","interruption_level":"time_sensitive"}"#),
            [.error(.invalidInterruptionLevel, "/messages/apple_push/interruption_level")]),
        PreflightCase(
            "braze: critical", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","interruption_level":"critical"}"#),
            [.info(.criticalNeedsEntitlement, "/messages/apple_push/interruption_level")]),
        PreflightCase(
            "braze: relevance score 1.5", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","relevance_score":1.5}"#),
            [.error(.invalidRelevanceScore, "/messages/apple_push/relevance_score")]),
        PreflightCase(
            "braze: relevance score \"0.5\"", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","relevance_score":"0.5"}"#),
            [.error(.invalidRelevanceScore, "/messages/apple_push/relevance_score")]),
        PreflightCase(
            "braze: a category that is not a string", .braze, counted: .bytes(3, limit: 1912),
            braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg","category":{}}"#),
            [.error(.invalidValue, "/messages/apple_push/category")]),
        PreflightCase(
            "braze: asset_url repeated: the last one is read", .braze, counted: .bytes(3, limit: 1912),
            braze(
                #"{"alert":"B","asset_url":"http://cdn.example.com/a.jpg","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#
            ),
            [.warning(.duplicateKey, "/messages/apple_push/asset_url")]),
        PreflightCase(
            "braze: alert + extra of 1912 bytes fit", .braze, counted: .bytes(1912, limit: 1912),
            braze(#"{"alert":"\#(pad(1912 - 11))","extra":{"k":"v"},"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            []),
        PreflightCase(
            "braze: alert + extra of 1913 bytes do not", .braze, counted: .bytes(1913, limit: 1912),
            braze(#"{"alert":"\#(pad(1913 - 11))","extra":{"k":"v"},"asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.payloadTooLarge, "/messages/apple_push")]),
        PreflightCase(
            "braze: alert of 1913 bytes, apple_push at the top", .braze, counted: .bytes(1913, limit: 1912),
            #"{"apple_push":{"alert":"\#(pad(1911))","asset_url":"\#(jpg)","asset_file_type":"jpg"}}"#,
            [.error(.payloadTooLarge, "/apple_push")]),
        PreflightCase(
            "braze: attachments on a background push", .braze, pushType: .background,
            counted: .bytes(3, limit: 1912), braze(#"{"alert":"B","asset_url":"\#(jpg)","asset_file_type":"jpg"}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "braze: no attachment", .braze, counted: .bytes(3, limit: 1912), braze(#"{"alert":"B"}"#),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "braze device: valid", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpg"}}"#), []),
        PreflightCase(
            "braze device: type disagrees with the URL", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"gif"}}"#),
            [.error(.typeMismatch, "/ab/att/type")]),
        PreflightCase(
            "braze device: type jpeg", .braze,
            device(#"{"alert":"B","mutable-content":1}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpeg"}}"#),
            [.error(.providerExtension, "/ab/att/type")]),
        PreflightCase(
            "braze device: .aiff", .braze,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""ab":{"att":{"url":"https://cdn.example.com/a.aiff","type":"aif"}}"#),
            [.error(.providerExtension, "/ab/att/url")]),
        PreflightCase(
            "braze device: mutable-content missing", .braze,
            device(#"{"alert":"B"}"#, #""ab":{"att":{"url":"\#(jpg)","type":"jpg"}}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "braze device: http URL", .braze,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""ab":{"att":{"url":"http://cdn.example.com/a.jpg","type":"jpg"}}"#
            ),
            [.error(.insecureURL, "/ab/att/url")]),
        PreflightCase(
            "braze device: critical", .braze,
            device(
                #"{"alert":"B","mutable-content":1,"interruption-level":"critical"}"#,
                #""ab":{"att":{"url":"\#(mp4)","type":"mp4"}}"#),
            [.info(.criticalNeedsEntitlement, "/aps/interruption-level")]),
        // The request's, messages' and apple_push's own keys.
        PreflightCase(
            "braze: keys Braze does not define in the request, messages and apple_push", .braze,
            counted: .bytes(24, limit: 1912),
            #"{"segment":"s1","external_user_ids":["u1"],"messages":{"ios_push":{},"apple_push":{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg","asset_type":"jpg","apns_priority":10}}}"#,
            [
                .warning(.unknownKey, "/segment"), .warning(.unknownKey, "/messages/ios_push"),
                .warning(.unknownKey, "/messages/apple_push/asset_type"),
            ]),
        PreflightCase(
            "braze: apple_push without messages takes the request's keys beside it", .braze,
            counted: .bytes(24, limit: 1912),
            #"{"external_user_ids":["u1"],"apple_push":{"alert":\#(brazeAlert),"asset_url":"\#(jpg)","asset_file_type":"jpg","assetUrl":"x"}}"#,
            [.warning(.unknownKey, "/apple_push/assetUrl")]),
    ]
}
