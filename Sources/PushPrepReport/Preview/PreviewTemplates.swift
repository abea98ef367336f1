import Mustache

/// The preview's Mustache template, kept in the source (no resource bundle to find at run time)
/// and parsed once.
enum PreviewTemplates {
    /// The notification: banner, then expanded view. `{{…}}` escapes for HTML; nothing here is
    /// rendered unescaped.
    static let notification = """
        <div class="notification" data-kind="{{kind}}">\
        <div class="banner">\
        <div class="banner-icon" aria-hidden="true"></div>\
        <div class="banner-text">\
        <div class="banner-head"><span class="banner-app">{{appName}}</span>\
        <span class="banner-time">now</span></div>\
        <div class="banner-title">{{title}}</div>\
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
        {{#caption}}<p class="expanded-caption">{{caption}}</p>{{/caption}}\
        </div>{{/expanded}}\
        </div>
        """

    private static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        do {
            try library.register(notification, named: "notification")
        } catch {
            // The template is a constant of this file; the tests render it.
            preconditionFailure("the preview template does not parse: \(error)")
        }
        return library
    }()

    /// The notification's HTML for `view`.
    static func render(_ view: PreviewView) -> String {
        library.render(view, withTemplate: "notification") ?? ""
    }
}
