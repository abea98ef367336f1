import PushPrepTestSupport

@testable import PushPrepPayload

/// Airship: the push object and the payload its SDK receives.
extension PreflightTableTests {
    static let airshipCases: [PreflightCase] = [
        PreflightCase(
            "airship: a big_picture style over http that is a GIF", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}},"android":{"style":{"type":"big_picture","big_picture":"http://cdn.example.com/push/a.gif"}}}"#
            ),
            [
                .error(.androidImageInsecure, "/notification/android/style/big_picture"),
                .warning(.androidImageType, "/notification/android/style/big_picture"),
            ]),
        PreflightCase(
            "airship: web image and icon (an object with url, or a bare string) with good URLs", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}},"web":{"image":{"url":"\#(jpg)"},"icon":"https://cdn.example.com/push/i.png"}}"#
            ), []),
        PreflightCase(
            "airship: big_picture in another style is not shown", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}},"android":{"style":{"type":"big_text","big_text":"T","big_picture":"http://cdn.example.com/push/a.gif"}}}"#
            ), []),
        PreflightCase(
            "airship: valid push object", .airship,
            airship(
                #"{"alert":"B","ios":{"title":"T","subtitle":"S","mutable_content":true,"media_attachment":{"url":"\#(mp4)","options":{"time":1.5,"hidden":false},"content":{"title":"T","body":"B"}}}}"#
            ), []),
        PreflightCase(
            "airship: valid with category, interruption level and relevance", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"category":"NEWS","interruption_level":"time-sensitive","relevance_score":0.5,"thread_id":"t"}}"#
            ), [.info(.categoryNoted, "/notification/ios/category")]),
        PreflightCase(
            "airship: mutable_content left to Airship", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: the iOS title alone is an alert", .airship,
            airship(#"{"ios":{"title":"T","media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: the iOS alert override alone is an alert", .airship,
            airship(#"{"ios":{"alert":"B","media_attachment":{"url":"\#(jpg)"}}}"#), []),
        PreflightCase(
            "airship: mutable_content false", .airship,
            airship(#"{"alert":"B","ios":{"mutable_content":false,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.invalidMutableContent, "/notification/ios/mutable_content")]),
        PreflightCase(
            "airship: mutable_content 1", .airship,
            airship(#"{"alert":"B","ios":{"mutable_content":1,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.invalidMutableContent, "/notification/ios/mutable_content")]),
        PreflightCase(
            "airship: no alert", .airship, airship(#"{"ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.missingAlert, "/notification/ios/alert")]),
        PreflightCase(
            "airship: silent", .airship,
            airship(#"{"ios":{"content_available":true,"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.silentPush, "/notification/ios/content_available")]),
        PreflightCase(
            "airship: http URL", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"http://cdn.example.com/a.jpg"}}}"#),
            [.error(.insecureURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: http URL with an ATS exception", .airship, allowHTTP: true,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"http://cdn.example.com/a.jpg"}}}"#),
            [.warning(.insecureURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: no extension", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/media/42/"}}}"#),
            [.error(.missingExtension, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: WebP", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/a.webp"}}}"#),
            [.error(.unsupportedExtension, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: any extension iOS takes (.m2v)", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"https://cdn.example.com/a.m2v"}}}"#), []),
        PreflightCase(
            "airship: not a URL", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"/push/a.jpg"}}}"#),
            [.error(.invalidURL, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: a url that is not a string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":5}}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: media_attachment without url", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"options":{"time":1}}}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment/url")]),
        PreflightCase(
            "airship: media_attachment a bare URL string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":"\#(jpg)"}}"#),
            [.error(.invalidAttachment, "/notification/ios/media_attachment")]),
        PreflightCase(
            "airship: every media option, valid", .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(mp4)","options":{"time":2,"hidden":true,"crop":{"x":0.25,"y":0.25,"width":0.5,"height":0.5}}}}}"#
            ), []),
        PreflightCase(
            "airship: media options of the wrong types, an incomplete crop and an option Airship does not define",
            .airship,
            airship(
                #"{"alert":"B","ios":{"media_attachment":{"url":"\#(mp4)","options":{"time":"soon","hidden":"no","crop":{"x":0,"y":0,"width":1},"zoom":2}}}}"#
            ),
            [
                .error(.invalidAttachmentOption, "/notification/ios/media_attachment/options/time"),
                .error(.invalidAttachmentOption, "/notification/ios/media_attachment/options/hidden"),
                .error(.invalidAttachmentOption, "/notification/ios/media_attachment/options/crop"),
                .warning(.unknownAttachmentOption, "/notification/ios/media_attachment/options/zoom"),
            ]),
        PreflightCase(
            "airship device payload: two URLs share one options dictionary, checked once", .airship,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""com.urbanairship.media_attachment":{"url":["\#(jpg)","\#(mp4)"],"options":{"crop":{"x":0.5,"y":0,"width":0.75,"height":1}}}"#
            ),
            [.error(.invalidAttachmentOption, "/com.urbanairship.media_attachment/options/crop")]),
        PreflightCase(
            "airship: an invalid interruption level", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"interruption_level":"urgent"}}"#),
            [.error(.invalidInterruptionLevel, "/notification/ios/interruption_level")]),
        PreflightCase(
            "airship: critical", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"interruption_level":"critical"}}"#),
            [.info(.criticalNeedsEntitlement, "/notification/ios/interruption_level")]),
        PreflightCase(
            "airship: relevance score 1.5", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"relevance_score":1.5}}"#),
            [.error(.invalidRelevanceScore, "/notification/ios/relevance_score")]),
        PreflightCase(
            "airship: relevance score \"0.5\"", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"relevance_score":"0.5"}}"#),
            [.error(.invalidRelevanceScore, "/notification/ios/relevance_score")]),
        PreflightCase(
            "airship: a category that is not a string", .airship,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"},"category":7}}"#),
            [.error(.invalidValue, "/notification/ios/category")]),
        PreflightCase(
            "airship: alert repeated", .airship, counted: .wholeTextWithout(#""alert":"A","#),
            airship(#"{"alert":"A","alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.warning(.duplicateKey, "/notification/alert")]),
        PreflightCase(
            "airship: a 4097-byte push object", .airship,
            padded(airship(#"{"alert":"PAD","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#), to: 4097),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "airship: attachments on a background push", .airship, pushType: .background,
            airship(#"{"alert":"B","ios":{"media_attachment":{"url":"\#(jpg)"}}}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "airship: no attachment", .airship, airship(#"{"alert":"B"}"#), [.info(.noAttachments, "")]),
        PreflightCase(
            "airship device: valid", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":["\#(jpg)"]}"#),
            []),
        PreflightCase(
            "airship device: a url string instead of an array", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":"\#(jpg)"}"#), []
        ),
        PreflightCase(
            "airship device: mutable-content missing", .airship,
            device(#"{"alert":"B"}"#, #""com.urbanairship.media_attachment":{"url":["\#(jpg)"]}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "airship device: http URL", .airship,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""com.urbanairship.media_attachment":{"url":["http://cdn.example.com/a.jpg"]}"#),
            [.error(.insecureURL, "/com.urbanairship.media_attachment/url/0")]),
        PreflightCase(
            "airship device: WebP", .airship,
            device(
                #"{"alert":"B","mutable-content":1}"#,
                #""com.urbanairship.media_attachment":{"url":["https://cdn.example.com/a.webp"]}"#),
            [.error(.unsupportedExtension, "/com.urbanairship.media_attachment/url/0")]),
        PreflightCase(
            "airship device: a url that is not a string", .airship,
            device(#"{"alert":"B","mutable-content":1}"#, #""com.urbanairship.media_attachment":{"url":[5]}"#),
            [.error(.invalidAttachment, "/com.urbanairship.media_attachment/url/0")]),
        // The push object's and the notification object's own keys (open::<platform> included).
        PreflightCase(
            "airship: keys Airship does not define in the push object and the notification", .airship,
            #"{"audience":"all","device_types":["ios"],"named_user":"u1","notification":{"alert":"B","apns":{},"open::toaster":{"alert":"x"},"ios":{"media_attachment":{"url":"\#(jpg)"}}}}"#,
            [.warning(.unknownKey, "/named_user"), .warning(.unknownKey, "/notification/apns")]),
    ]
}
