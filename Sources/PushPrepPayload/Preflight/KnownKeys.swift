import PushPrepJSON

/// The keys each dialect's request defines, level by level: the one table pre-flight's
/// `unknown_key` reads. A key a provider accepts must never be reported, so each table is the
/// union of what the provider documents (current and still-accepted older keys), and only the
/// levels whose members are fixed are checked: free-form maps (FCM `data` and `headers`,
/// `webpush.notification`, OneSignal `data` and `contents`, Braze `extra`, Airship `extra`) and
/// the levels whose keys PushPrep cannot list with certainty (the provider's platform overrides)
/// are left alone.
///
/// In the payload the phone receives (APNs, and every provider's device form) custom keys belong
/// beside `aps`, so only `aps` is checked: its own members (``PayloadChecker/apsKeys``,
/// `unknown_aps_key`) and the members of its `alert` and `sound` dictionaries (here).
enum KnownKeys {
    /// One object of the payload whose members are fixed.
    struct Level {
        /// Where the object is.
        var path: JSONPath
        /// What the object is, for messages: "FCM's message", "the aps alert".
        var name: String
        /// The keys the provider defines in it.
        var keys: Set<String>
        /// Prefixes of keys the provider also defines (Airship's `open::<platform>`).
        var prefixes: [String] = []
        /// What becomes of a key not defined here, when not the provider's doing (`aps`'s
        /// dictionaries: the phone's).
        var ignoredBy: String? = nil

        /// Whether `key` is one the provider defines here.
        func defines(_ key: String) -> Bool {
            keys.contains(key) || prefixes.contains { key.hasPrefix($0) }
        }
    }

    /// The levels of `payload` to check when read as `dialect` (`layout` is its resolved
    /// layout), in payload order: outer levels first. A level the payload does not have is listed
    /// too (a misplaced key's message names where it belongs).
    static func levels(of payload: JSONValue, dialect: PushDialect, layout: PayloadLayout) -> [Level] {
        var levels: [Level] = []
        if !layout.isDeviceForm {
            levels += serverLevels(of: payload, dialect: dialect)
        }
        if let aps = layout.aps {
            levels.append(
                Level(path: aps.appending("alert"), name: "the aps alert", keys: apsAlert, ignoredBy: "iOS ignores it"))
            levels.append(
                Level(path: aps.appending("sound"), name: "the aps sound", keys: apsSound, ignoredBy: "iOS ignores it"))
        }
        return levels
    }

    /// The levels of the provider's REST request.
    private static func serverLevels(of payload: JSONValue, dialect: PushDialect) -> [Level] {
        let root = JSONPath.root
        switch dialect {
        case .apns:
            return []
        case .fcm:
            // A payload without the `message` wrapper is read as the message itself (the layout
            // does the same).
            let wrapped = payload["message"] != nil
            let message = wrapped ? root.appending("message") : root
            var levels: [Level] = []
            if wrapped {
                levels.append(Level(path: root, name: "FCM's request body", keys: FCM.request))
            }
            let android = message.appending("android")
            let apns = message.appending("apns")
            let webpush = message.appending("webpush")
            levels += [
                Level(path: message, name: "FCM's message", keys: FCM.message),
                Level(path: message.appending("notification"), name: "FCM's notification", keys: FCM.notification),
                Level(path: message.appending("fcm_options"), name: "FCM's fcm_options", keys: FCM.fcmOptions),
                Level(path: android, name: "FCM's android", keys: FCM.android),
                Level(
                    path: android.appending("notification"), name: "FCM's android.notification",
                    keys: FCM.androidNotification),
                Level(path: android.appending("fcm_options"), name: "FCM's android.fcm_options", keys: FCM.fcmOptions),
                Level(path: apns, name: "FCM's apns", keys: FCM.apns),
                Level(path: apns.appending("fcm_options"), name: "FCM's apns.fcm_options", keys: FCM.apnsFCMOptions),
                Level(path: webpush, name: "FCM's webpush", keys: FCM.webpush),
                Level(
                    path: webpush.appending("fcm_options"), name: "FCM's webpush.fcm_options",
                    keys: FCM.webpushFCMOptions),
            ]
            return levels
        case .onesignal:
            return [Level(path: root, name: "OneSignal's create-notification body", keys: OneSignal.notification)]
        case .airship:
            return [
                Level(path: root, name: "Airship's push object", keys: Airship.push),
                Level(
                    path: root.appending("notification"), name: "Airship's notification", keys: Airship.notification,
                    prefixes: Airship.notificationPrefixes),
            ]
        case .braze:
            // The layout also reads `apple_push` at the top (a messages object without the
            // request around it): that top level may then hold either's keys.
            if payload["messages"] == nil && payload["apple_push"] != nil {
                return [
                    Level(path: root, name: "Braze's /messages/send body", keys: Braze.request.union(Braze.messages)),
                    Level(path: root.appending("apple_push"), name: "Braze's apple_push", keys: Braze.applePush),
                ]
            }
            let messages = root.appending("messages")
            return [
                Level(path: root, name: "Braze's /messages/send body", keys: Braze.request),
                Level(path: messages, name: "Braze's messages", keys: Braze.messages),
                Level(path: messages.appending("apple_push"), name: "Braze's apple_push", keys: Braze.applePush),
            ]
        }
    }

    // MARK: - APNs

    /// The alert dictionary's keys: Apple's "Generating a remote notification" (title, subtitle,
    /// body, launch-image and the localization keys), the older `action-loc-key` and `action`,
    /// `summary-arg` and `summary-arg-count` (iOS 12 to 14), and `sound`, which a Live Activity's
    /// alert carries ("Starting and updating Live Activities with ActivityKit push notifications").
    /// https://developer.apple.com/documentation/usernotifications/generating-a-remote-notification
    static let apsAlert: Set<String> = [
        "title", "subtitle", "body", "launch-image", "title-loc-key", "title-loc-args", "subtitle-loc-key",
        "subtitle-loc-args", "loc-key", "loc-args", "action-loc-key", "action", "summary-arg", "summary-arg-count",
        "sound",
    ]

    /// The sound dictionary of a critical alert: `critical`, `name`, `volume` (same page).
    static let apsSound: Set<String> = ["critical", "name", "volume"]

    // MARK: - FCM

    /// Firebase Cloud Messaging HTTP v1, `projects.messages.send`: the request body and the
    /// `Message` resource with its fixed-member parts (`Notification`, `AndroidConfig`,
    /// `AndroidNotification`, `ApnsConfig`, `ApnsFcmOptions`, `WebpushConfig`,
    /// `WebpushFcmOptions`, `FcmOptions`).
    /// https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages
    /// https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages/send
    /// The API is a Google REST API: its JSON mapping of the protocol buffers accepts each field
    /// by its proto name (`fcm_options`) and by its lowerCamelCase JSON name (`fcmOptions`), so
    /// both spellings are defined (https://protobuf.dev/programming-guides/json/).
    enum FCM {
        static let request = proto(["message", "validate_only"])
        static let message = proto([
            "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition",
        ])
        static let notification = proto(["title", "body", "image"])
        static let fcmOptions = proto(["analytics_label"])
        static let android = proto([
            "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options",
            "direct_boot_ok", "bandwidth_constrained_ok", "restricted_satellite_ok",
        ])
        static let androidNotification = proto([
            "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args",
            "title_loc_key", "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only",
            "notification_priority", "default_sound", "default_vibrate_timings", "default_light_settings",
            "vibrate_timings", "visibility", "notification_count", "light_settings", "image",
            "bypass_proxy_notification", "proxy",
        ])
        static let apns = proto(["headers", "payload", "fcm_options", "live_activity_token"])
        static let apnsFCMOptions = proto(["analytics_label", "image"])
        static let webpush = proto(["headers", "data", "notification", "fcm_options"])
        static let webpushFCMOptions = proto(["link", "analytics_label"])

        /// Each proto field name and its lowerCamelCase JSON name.
        static func proto(_ names: [String]) -> Set<String> {
            Set(names.flatMap { [$0, lowerCamelCase($0)] })
        }

        /// `fcm_options` → `fcmOptions`.
        static func lowerCamelCase(_ name: String) -> String {
            let parts = name.split(separator: "_")
            return (parts.first.map(String.init) ?? "")
                + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }
                .joined()
        }
    }

    // MARK: - OneSignal

    /// OneSignal's create-notification body (`POST /notifications`, push, email and SMS share
    /// it): the properties of OneSignal's own OpenAPI description (api.onesignal.com, as its
    /// generated clients carry it: OneSignal/onesignal-go-api `model_notification.go`), the
    /// current reference page, and the older targeting keys it documented before
    /// (`include_player_ids`, `include_external_user_ids`, `channel_for_external_user_ids`,
    /// `tags`, `app_ids`), kept so that a request OneSignal may still take is never reported.
    /// https://documentation.onesignal.com/reference/push-notification
    enum OneSignal {
        static let notification: Set<String> = [
            // Targeting.
            "app_id", "included_segments", "excluded_segments", "filters", "include_aliases", "target_channel",
            "include_subscription_ids", "include_player_ids", "include_external_user_ids",
            "channel_for_external_user_ids", "include_email_tokens", "include_phone_numbers", "include_ios_tokens",
            "include_wp_wns_uris", "include_amazon_reg_ids", "include_chrome_reg_ids", "include_chrome_web_reg_ids",
            "include_android_reg_ids", "include_unsubscribed", "email_to", "tags", "app_ids",
            // Platforms.
            "isIos", "isAndroid", "isHuawei", "isAnyWeb", "isChromeWeb", "isFirefox", "isSafari", "isWP_WNS", "isAdm",
            "isChrome",
            // Identity and idempotency.
            "id", "name", "external_id", "idempotency_key", "aggregation", "value",
            // Content.
            "contents", "headings", "subtitle", "template_id", "custom_data", "data", "content_available",
            "mutable_content", "target_content_identifier", "url", "web_url", "app_url", "huawei_msg_type",
            // Attachments and images.
            "ios_attachments", "big_picture", "global_image", "huawei_big_picture", "adm_big_picture",
            "chrome_big_picture", "chrome_web_image", "small_icon", "huawei_small_icon", "large_icon",
            "huawei_large_icon", "adm_small_icon", "adm_large_icon", "chrome_web_icon", "chrome_web_badge",
            "firefox_icon", "chrome_icon",
            // Buttons, channels, appearance.
            "buttons", "web_buttons", "ios_category", "android_channel_id", "huawei_channel_id",
            "existing_android_channel_id", "huawei_existing_channel_id", "android_background_layout", "ios_sound",
            "android_sound", "huawei_sound", "adm_sound", "wp_wns_sound", "android_led_color", "huawei_led_color",
            "android_accent_color", "huawei_accent_color", "android_visibility", "huawei_visibility", "ios_badgeType",
            "ios_badgeCount", "huawei_badge_class", "huawei_badge_add_num", "huawei_badge_set_num", "huawei_category",
            "huawei_bi_tag",
            // Delivery.
            "collapse_id", "web_push_topic", "apns_alert", "send_after", "delayed_option", "delivery_time_of_day",
            "ttl", "priority", "apns_push_type_override", "throttle_rate_per_minute", "enable_frequency_cap",
            // Grouping.
            "android_group", "android_group_message", "adm_group", "adm_group_message", "thread_id", "summary_arg",
            "summary_arg_count", "ios_relevance_score", "ios_interruption_level",
            // Email and SMS.
            "email_subject", "email_body", "email_from_name", "email_from_address", "email_reply_to_address",
            "email_preheader", "disable_email_click_tracking", "email_bcc", "email_sender_domain", "sms_from",
            "sms_media_urls",
        ]
    }

    // MARK: - Airship

    /// Airship's push object (`POST /api/push`) and its `notification` object, whose members are
    /// the alert, the actions and one override per platform (`open::<platform>` for open
    /// channels). https://docs.airship.com/developer/rest-api/ua/schemas/push/
    /// https://docs.airship.com/developer/rest-api/ua/schemas/platform-overrides/
    enum Airship {
        static let push: Set<String> = [
            "audience", "device_types", "notification", "options", "campaigns", "message", "in_app", "localizations",
            "global_attributes", "orchestration",
        ]
        static let notification: Set<String> = [
            "alert", "actions", "interactive", "ios", "android", "amazon", "web", "wns", "email", "sms", "mms",
        ]
        static let notificationPrefixes = ["open::"]
    }

    // MARK: - Braze

    /// Braze's `/messages/send` body (with `api_key`, which Braze still reads from the body), its
    /// `messages` object (one messaging object per channel) and the `apple_push` object.
    /// https://www.braze.com/docs/api/endpoints/messaging/send_messages/post_send_messages/
    /// https://www.braze.com/docs/api/objects_filters/messaging/apple_object/
    enum Braze {
        static let request: Set<String> = [
            "api_key", "broadcast", "external_user_ids", "user_aliases", "segment_id", "audience", "campaign_id",
            "send_id", "override_frequency_capping", "recipient_subscription_state", "messages",
        ]
        static let messages: Set<String> = [
            "apple_push", "android_push", "kindle_push", "web_push", "windows_phone8_push", "windows_universal_push",
            "email", "content_card", "sms", "webhook", "whats_app", "line", "kakao",
        ]
        static let applePush: Set<String> = [
            "badge", "alert", "sound", "extra", "content-available", "interruption_level", "relevance_score", "expiry",
            "custom_uri", "use_webview", "message_variation_id", "notification_group_thread_id", "asset_url",
            "asset_file_type", "collapse_id", "mutable_content", "send_to_most_recent_device_only", "category",
            "buttons", "apns_priority",
        ]
    }
}
