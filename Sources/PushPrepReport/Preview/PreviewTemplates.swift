import Mustache

/// The preview's Mustache template, kept in the source (no resource bundle to find at run time)
/// and parsed once.
enum PreviewTemplates {
    /// The notification as iOS 17 and 18 draw it: the banner (the app's icon at the left, the
    /// title in bold with the time, the body, and the attachment's thumbnail at the right), then
    /// the expanded view (the attachment on top of the same card, the icon, title and body
    /// below). No app-name line: iOS shows the app's name only in place of a missing title.
    /// PushPrep's own notes on the picture (which frame it is) go under the card, not in it.
    /// `{{…}}` escapes for HTML; nothing here is rendered unescaped.
    static let notification = """
        <div class="notification" data-kind="{{kind}}">\
        <div class="banner">\
        <span class="banner-icon" role="img" aria-label="{{appName}}"></span>\
        <div class="banner-text">\
        <div class="banner-head"><span class="banner-title">{{heading}}</span>\
        <span class="banner-time">now</span></div>\
        <div class="banner-body">{{body}}</div>\
        </div>\
        {{#thumb}}<div class="banner-thumb" role="img" aria-label="{{label}}">\
        {{#image}}<svg viewBox="0 0 100 100" preserveAspectRatio="none" aria-hidden="true">\
        <image href="{{source}}" x="{{x}}" y="{{y}}" width="{{width}}" height="{{height}}" \
        preserveAspectRatio="none"/></svg>{{/image}}\
        {{#glyph}}<span class="thumb-glyph" aria-hidden="true">{{glyph}}</span>{{/glyph}}\
        </div>{{/thumb}}\
        </div>\
        {{#expanded}}<div class="expanded">\
        {{#picture}}<div class="expanded-media{{#movie}} movie{{/movie}}">\
        <img src="{{source}}" width="{{width}}" height="{{height}}" alt="{{alt}}">\
        {{#movie}}<span class="play-badge" role="img" aria-label="Plays as a movie">▶</span>{{/movie}}\
        </div>{{/picture}}\
        {{#audio}}<div class="audio-bar" role="img" aria-label="{{label}}">\
        <span class="audio-play" aria-hidden="true">▶</span><span class="audio-track" aria-hidden="true"></span>\
        <span class="audio-duration">{{duration}}</span></div>{{/audio}}\
        {{#placeholder}}<div class="expanded-placeholder{{#movie}} movie{{/movie}}">\
        {{#movie}}<span class="play-badge" role="img" aria-label="Plays as a movie">▶</span>{{/movie}}\
        <span class="placeholder-text">{{placeholder}}</span></div>{{/placeholder}}\
        <div class="expanded-text">\
        <span class="banner-icon expanded-icon" aria-hidden="true"></span>\
        <div class="banner-text">\
        <div class="banner-head"><span class="expanded-title">{{heading}}</span>\
        <span class="banner-time">now</span></div>\
        <div class="expanded-body">{{body}}</div>\
        </div></div></div>\
        {{#caption}}<p class="expanded-caption">{{caption}}</p>{{/caption}}{{/expanded}}\
        </div>
        """

    /// Another platform's notification (``PlatformPreview``): Android's collapsed view with the
    /// large icon and its expanded `BigPictureStyle`, or Chrome's web push with its icon and
    /// image. `{{…}}` escapes; nothing here is rendered unescaped.
    static let platform = """
        <div class="platform-notification {{platform}}-notification" data-platform="{{platform}}" \
        data-has-picture="{{hasPicture}}">\
        <p class="platform-label">{{label}}</p>\
        {{#android}}<div class="android-collapsed">\
        <div class="android-text">\
        <div class="android-head"><span class="android-app-icon" aria-hidden="true"></span>\
        <span class="android-app">{{appName}}</span><span class="android-time">now</span></div>\
        <div class="android-title">{{title}}</div>\
        <div class="android-body">{{body}}</div>\
        </div>\
        {{#picture}}<img class="android-large-icon" src="{{thumbnailSource}}" width="40" height="40" \
        alt="Large icon: the big picture, cropped square">{{/picture}}\
        </div>\
        <div class="android-expanded">\
        <div class="android-head"><span class="android-app-icon" aria-hidden="true"></span>\
        <span class="android-app">{{appName}}</span><span class="android-time">now</span></div>\
        <div class="android-title">{{title}}</div>\
        <div class="android-body android-body-expanded">{{body}}</div>\
        {{#picture}}<img class="android-big-picture platform-picture" src="{{source}}" width="{{width}}" \
        height="{{height}}" alt="{{alt}}">{{/picture}}\
        {{#note}}<p class="platform-no-picture">{{note}}</p>{{/note}}\
        </div>{{/android}}\
        {{#web}}<div class="web-card">\
        <div class="web-row">\
        {{#icon}}<img class="web-icon" src="{{thumbnailSource}}" width="40" height="40" alt="{{alt}}">{{/icon}}\
        {{^icon}}<span class="web-icon web-icon-none" aria-hidden="true"></span>{{/icon}}\
        <div class="web-text">\
        <div class="web-title">{{title}}</div>\
        <div class="web-origin">{{appName}}</div>\
        <div class="web-body">{{body}}</div>\
        </div></div>\
        {{#picture}}<img class="web-image platform-picture" src="{{source}}" width="{{width}}" height="{{height}}" \
        alt="{{alt}}">{{/picture}}\
        {{#note}}<p class="platform-no-picture">{{note}}</p>{{/note}}\
        </div>{{/web}}\
        {{#caption}}<p class="platform-caption">{{caption}}</p>{{/caption}}\
        </div>
        """

    private static let library = MustacheLibrary.constant(
        ["notification": notification, "platform": platform], what: "the preview template")

    /// The notification's HTML for `view`.
    static func render(_ view: PreviewView) -> String {
        library.render(view, withTemplate: "notification") ?? ""
    }

    /// Another platform's notification's HTML for `view`.
    static func render(_ view: PlatformPreviewView) -> String {
        library.render(view, withTemplate: "platform") ?? ""
    }
}
