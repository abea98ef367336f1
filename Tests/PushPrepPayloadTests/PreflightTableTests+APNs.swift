import PushPrepTestSupport

@testable import PushPrepPayload

/// APNs payloads, valid and broken in each way pre-flight checks.
extension PreflightTableTests {
    static let apnsCases: [PreflightCase] = [
        PreflightCase(
            "apns: valid, with the type hint in options", .apns,
            apns(
                #"{"alert":{"title":"T","subtitle":"S","body":"B"},"mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"\#(jpg)","type":"public.jpeg","options":{"\#(hint)":"public.jpeg"}}]"#),
            []),
        PreflightCase(
            "apns: image, video and audio with every presentation key; the category is noted, the two beyond the first warned",
            .apns,
            apns(
                #"{"alert":"B","badge":3,"sound":"default","thread-id":"t","category":"NEWS","interruption-level":"time-sensitive","relevance-score":0.25,"mutable-content":1}"#,
                attachments:
                    #"[\#(jpgEntry),{"id":"b","url":"\#(mp4)","type":"public.mpeg-4"},{"id":"c","url":"\#(m4a)","type":"public.mpeg-4-audio"}]"#
            ),
            [.warning(.attachmentsBeyondFirst, "/attachments/1"), .info(.categoryNoted, "/aps/category")]),
        PreflightCase(
            "apns: content-available beside an alert is not silent", .apns,
            apns(#"{"alert":"B","content-available":1,"mutable-content":1}"#), []),
        PreflightCase(
            "apns: relevance scores 0 and 1 are in range, passive is a level", .apns,
            apns(#"{"alert":"B","mutable-content":1,"relevance-score":1,"interruption-level":"passive"}"#), []),
        PreflightCase(
            "apns: an upper-case extension is accepted", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"https://cdn.example.com/push/A.JPG","type":"public.jpeg"}]"#), []),
        PreflightCase(
            "apns: mutable-content missing", .apns, apns(#"{"alert":"B"}"#),
            [.error(.missingMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content as the string \"1\"", .apns, apns(#"{"alert":"B","mutable-content":"1"}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content 0", .apns, apns(#"{"alert":"B","mutable-content":0}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: mutable-content true", .apns, apns(#"{"alert":"B","mutable-content":true}"#),
            [.error(.invalidMutableContent, "/aps/mutable-content")]),
        PreflightCase(
            "apns: no alert", .apns, apns(#"{"mutable-content":1}"#), [.error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: an alert without text", .apns, apns(#"{"alert":{"title":"","body":""},"mutable-content":1}"#),
            [.error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: an alert that is a number", .apns, apns(#"{"alert":5,"mutable-content":1}"#),
            [.error(.invalidValue, "/aps/alert"), .error(.missingAlert, "/aps/alert")]),
        PreflightCase(
            "apns: silent push", .apns, apns(#"{"content-available":1,"mutable-content":1}"#),
            [.error(.silentPush, "/aps/content-available")]),
        PreflightCase(
            "apns: http URL", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"http://cdn.example.com/a.jpg"}]"#),
            [.error(.insecureURL, "/attachments/0/url")]),
        PreflightCase(
            "apns: http URL with an ATS exception", .apns, allowHTTP: true,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"http://cdn.example.com/a.jpg"}]"#),
            [.warning(.insecureURL, "/attachments/0/url")]),
        PreflightCase(
            "apns: no extension (the query does not count)", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"https://cdn.example.com/media/42?format=jpg"}]"#),
            [.error(.missingExtension, "/attachments/0/url")]),
        PreflightCase(
            "apns: WebP, HEIC and an unknown extension", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"url":"https://cdn.example.com/a.webp"},{"url":"https://cdn.example.com/b.heic"},{"url":"https://cdn.example.com/c.php"}]"#
            ),
            [
                .warning(.attachmentsBeyondFirst, "/attachments/1"),
                .error(.unsupportedExtension, "/attachments/0/url"),
                .error(.unsupportedExtension, "/attachments/1/url"),
                .error(.unsupportedExtension, "/attachments/2/url"),
            ]),
        PreflightCase(
            "apns: type and type hint disagree with the extension", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"https://cdn.example.com/a.png","type":"public.jpeg","options":{"\#(hint)":"public.jpeg"}}]"#
            ),
            [
                .error(.typeMismatch, "/attachments/0/type"),
                .error(.typeMismatch, "/attachments/0/options/\(hint)"),
            ]),
        PreflightCase(
            "apns: only the type hint disagrees", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(mp4)","type":"public.mpeg-4","options":{"\#(hint)":"public.mpeg-4-audio"}}]"#
            ),
            [.error(.typeMismatch, "/attachments/0/options/\(hint)")]),
        PreflightCase(
            "apns: a type and a type hint iOS does not accept", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(jpg)","type":"org.webmproject.webp","options":{"\#(hint)":"public.heic"}}]"#),
            [
                .warning(.unknownTypeHint, "/attachments/0/type"),
                .warning(.unknownTypeHint, "/attachments/0/options/\(hint)"),
            ]),
        PreflightCase(
            "apns: not URLs: no scheme, ftp, credentials", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"url":"a.jpg"},{"url":"ftp://cdn.example.com/b.jpg"},{"url":"https://user:pw@cdn.example.com/c.jpg"}]"#
            ),
            [
                .warning(.attachmentsBeyondFirst, "/attachments/1"),
                .error(.invalidURL, "/attachments/0/url"), .error(.invalidURL, "/attachments/1/url"),
                .error(.invalidURL, "/attachments/2/url"),
            ]),
        PreflightCase(
            "apns: attachment entries without a usable url", .apns,
            apns(#"{"alert":"B","mutable-content":1}"#, attachments: #"[{"id":"a"},{"url":5},{"url":""},"x"]"#),
            [
                .error(.invalidAttachment, "/attachments/0/url"), .error(.invalidAttachment, "/attachments/1/url"),
                .error(.invalidAttachment, "/attachments/2/url"), .error(.invalidAttachment, "/attachments/3"),
            ]),
        PreflightCase(
            "apns: attachments not an array", .apns,
            apns(#"{"alert":"B","mutable-content":1}"#, attachments: #"{"url":"\#(jpg)"}"#),
            [.error(.invalidAttachment, "/attachments")]),
        PreflightCase(
            "apns: an invalid interruption level", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"loud"}"#),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "apns: OneSignal's spelling of time-sensitive", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"time_sensitive"}"#),
            [.error(.invalidInterruptionLevel, "/aps/interruption-level")]),
        PreflightCase(
            "apns: critical needs the entitlement", .apns,
            apns(#"{"alert":"B","mutable-content":1,"interruption-level":"critical"}"#),
            [.info(.criticalNeedsEntitlement, "/aps/interruption-level")]),
        PreflightCase(
            "apns: relevance score 1.5", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":1.5}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: relevance score \"0.5\"", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":"0.5"}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: relevance score -0.1", .apns, apns(#"{"alert":"B","mutable-content":1,"relevance-score":-0.1}"#),
            [.error(.invalidRelevanceScore, "/aps/relevance-score")]),
        PreflightCase(
            "apns: custom keys inside aps, escaped in the pointer", .apns,
            apns(#"{"alert":"B","mutable-content":1,"image-url":"x","a/b~c":1}"#),
            [.warning(.unknownAPSKey, "/aps/image-url"), .warning(.unknownAPSKey, "/aps/a~1b~0c")]),
        PreflightCase(
            "apns: a category that is not a string", .apns, apns(#"{"alert":"B","mutable-content":1,"category":5}"#),
            [.error(.invalidValue, "/aps/category")]),
        PreflightCase(
            "apns: badge, sound and thread-id of the wrong type", .apns,
            apns(#"{"alert":"B","mutable-content":1,"badge":"3","sound":1,"thread-id":[]}"#),
            [
                .error(.invalidValue, "/aps/badge"), .error(.invalidValue, "/aps/sound"),
                .error(.invalidValue, "/aps/thread-id"),
            ]),
        PreflightCase(
            "apns: a key repeated inside aps", .apns, counted: .wholeTextWithout(#""alert":"A","#),
            apns(#"{"alert":"A","alert":"B","mutable-content":1}"#), [.warning(.duplicateKey, "/aps/alert")]),
        PreflightCase(
            "apns: attachments repeated: the last one is read", .apns,
            counted: .wholeTextWithout(#""attachments":[{"url":"http://cdn.example.com/a.jpg"}],"#),
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[{"url":"http://cdn.example.com/a.jpg"}],"attachments":[\#(jpgEntry)]}"#,
            [.warning(.duplicateKey, "/attachments")]),
        PreflightCase(
            "apns: 4096 bytes fit", .apns, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4096),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 4097 bytes do not", .apns, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4097),
            [.error(.payloadTooLarge, ""), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: 4097 bytes with an attachment do not", .apns,
            padded(apns(#"{"alert":"PAD","mutable-content":1}"#), to: 4097), [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "apns: bytes, not characters, count", .apns,
            apns(#"{"alert":"\#(String(repeating: "é", count: 2048))","mutable-content":1}"#),
            [.error(.payloadTooLarge, "")]),
        PreflightCase(
            "apns: 4097 bytes fit a VoIP push", .apns, pushType: .voip, padded(#"{"aps":{"alert":"PAD"}}"#, to: 4097),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 5120 bytes fit a VoIP push", .apns, pushType: .voip, padded(#"{"aps":{"alert":"PAD"}}"#, to: 5120),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: 5121 bytes do not fit a VoIP push", .apns, pushType: .voip,
            padded(#"{"aps":{"alert":"PAD"}}"#, to: 5121), [.error(.payloadTooLarge, ""), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: attachments on a background push", .apns, pushType: .background,
            apns(#"{"alert":"B","mutable-content":1}"#), [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "apns: attachments on a VoIP push", .apns, pushType: .voip, apns(#"{"alert":"B","mutable-content":1}"#),
            [.error(.pushTypeWithoutExtension, "")]),
        PreflightCase(
            "apns: no attachments", .apns, #"{"aps":{"alert":"B"},"deeplink":"app://x"}"#, [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: an empty attachments array", .apns, apns(#"{"alert":"B","mutable-content":1}"#, attachments: "[]"),
            [.info(.noAttachments, "")]),
        PreflightCase(
            "apns: no aps", .apns, #"{"attachments":[\#(jpgEntry)]}"#,
            [
                .error(.missingAPS, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: every attachment option, valid; hidden as 0 or 1 is a boolean to the phone", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(jpg)","options":{"\#(hint)":"public.jpeg","\#(thumbTime)":0,"\#(hidden)":true,"\#(clip)":{"X":0.25,"Y":0,"Width":0.75,"Height":1}}},{"id":"b","url":"\#(mp4)","options":{"\#(thumbTime)":2.5,"\#(hidden)":0,"\#(clip)":{"X":0,"Y":0.3333333333,"Width":1,"Height":0.6666666667}}}]"#
            ), [.warning(.attachmentsBeyondFirst, "/attachments/1")]),
        PreflightCase(
            "apns: options of the wrong types", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"\#(jpg)","options":{"\#(hint)":5,"\#(thumbTime)":"2","\#(hidden)":"yes","\#(clip)":[0,0,1,1]}}]"#
            ),
            [
                .error(.invalidAttachmentOption, "/attachments/0/options/\(hint)"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(thumbTime)"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(hidden)"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(clip)"),
            ]),
        PreflightCase(
            "apns: an entry without a usable URL still has its options checked", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":5,"options":{"\#(thumbTime)":"soon"}}]"#),
            [
                .error(.invalidAttachment, "/attachments/0/url"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(thumbTime)"),
            ]),
        PreflightCase(
            "apns: options not a dictionary", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments: #"[{"id":"a","url":"\#(jpg)","type":"public.jpeg","options":"public.jpeg"}]"#),
            [.error(.invalidAttachmentOption, "/attachments/0/options")]),
        PreflightCase(
            "apns: a negative thumbnail time, hidden 2, and an option iOS does not define", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"b","url":"\#(mp4)","options":{"\#(thumbTime)":-1,"\#(hidden)":2,"ThumbnailSize":"small"}}]"#
            ),
            [
                .error(.invalidAttachmentOption, "/attachments/0/options/\(thumbTime)"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(hidden)"),
                .warning(.unknownAttachmentOption, "/attachments/0/options/ThumbnailSize"),
            ]),
        PreflightCase(
            "apns: clipping rectangles outside the image, out of range, incomplete, empty, with a stray member",
            .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"url":"\#(jpg)","options":{"\#(clip)":{"X":0.6,"Y":0,"Width":0.5,"Height":1}}},{"url":"\#(jpg)","options":{"\#(clip)":{"X":0,"Y":0,"Width":1.5,"Height":1}}},{"url":"\#(jpg)","options":{"\#(clip)":{"X":0,"Y":0,"Width":1}}},{"url":"\#(jpg)","options":{"\#(clip)":{"X":0,"Y":0,"Width":0,"Height":1,"x":0}}}]"#
            ),
            [
                .warning(.attachmentsBeyondFirst, "/attachments/1"),
                .error(.invalidAttachmentOption, "/attachments/0/options/\(clip)"),
                .error(.invalidAttachmentOption, "/attachments/1/options/\(clip)/Width"),
                .error(.invalidAttachmentOption, "/attachments/2/options/\(clip)"),
                .error(.invalidAttachmentOption, "/attachments/3/options/\(clip)"),
                .warning(.unknownAttachmentOption, "/attachments/3/options/\(clip)/x"),
            ]),
        PreflightCase(
            "apns: no aps and no attachments", .apns, explicitOnly: true, #"{"deeplink":"app://x"}"#,
            [.error(.missingAPS, "/aps"), .info(.noAttachments, "")]),
        PreflightCase(
            "apns: aps a string", .apns, apns(#""alert""#),
            [
                .error(.apsNotObject, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: aps an array", .apns, apns(#"[{"alert":"B"}]"#),
            [
                .error(.apsNotObject, "/aps"), .error(.missingAlert, "/aps/alert"),
                .error(.missingMutableContent, "/aps/mutable-content"),
            ]),
        PreflightCase(
            "apns: read as FCM, PushPrep's attachments are not FCM's keys", .fcm, explicitOnly: true,
            apns(#"{"alert":"B","mutable-content":1}"#), [.info(.noAttachments, "")]),
        // Custom keys beside aps are the app's; aps's alert and sound dictionaries are Apple's.
        PreflightCase(
            "apns: custom top-level keys are the app's own", .apns,
            #"{"aps":{"alert":"B","mutable-content":1},"attachments":[\#(jpgEntry)],"token":"abc","deeplink":"app://x"}"#,
            []),
        PreflightCase(
            "apns: a key Apple does not define in the alert or the sound dictionary", .apns,
            apns(
                #"{"alert":{"title":"T","bodyy":"B","launch-image":"l.png","loc-key":"K"},"sound":{"name":"a.caf","volume":0.5,"critical":1,"loud":1},"mutable-content":1}"#
            ),
            [.warning(.unknownKey, "/aps/alert/bodyy"), .warning(.unknownKey, "/aps/sound/loud")]),
        // Hosts a phone cannot reach (issue 28): the serve default's loopback URLs and their kin.
        PreflightCase(
            "apns: attachment hosts a phone cannot reach", .apns,
            apns(
                #"{"alert":"B","mutable-content":1}"#,
                attachments:
                    #"[{"id":"a","url":"https://127.0.0.1:8080/v1/attachments/a.jpg"},{"id":"b","url":"https://192.168.1.20/b.jpg"},{"id":"c","url":"https://[fe80::1]/c.jpg"},{"id":"d","url":"https://169.254.169.254/d.jpg"},{"id":"e","url":"https://8.8.8.8/e.jpg"},{"id":"f","url":"https://localhost/f.jpg"},{"id":"g","url":"https://printer.local./g.jpg"},{"id":"h","url":"https://[::1]/h.jpg"},{"id":"i","url":"https://media.example.com/i.jpg"},{"id":"j","url":"https://localhost.example.com/j.jpg"}]"#
            ),
            // Ten attachments in one push: only the first shows without a content extension.
            (0...7).map { .error(.unreachableURL, "/attachments/\($0)/url") }
                + [.warning(.attachmentsBeyondFirst, "/attachments/1")]),
        PreflightCase(
            "apns: an unreachable http URL is both insecure and unreachable", .apns,
            apns(#"{"alert":"B","mutable-content":1}"#, attachments: #"[{"id":"a","url":"http://10.0.0.7/a.jpg"}]"#),
            [.error(.insecureURL, "/attachments/0/url"), .error(.unreachableURL, "/attachments/0/url")]),
    ]
}
