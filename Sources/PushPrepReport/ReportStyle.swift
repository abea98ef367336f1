/// The stylesheet of everything PushPrepReport draws: the notification preview, the batch
/// report and the pre-flight page. The report inlines it (under a hash in its CSP); the console
/// serves it as a file. Plain CSS: the system font stack, a phone-like banner, colours with at
/// least 4.5:1 contrast on their backgrounds, and a single column on narrow screens.
///
/// The iOS notification (`.notification`, `.banner`, `.expanded`) is drawn after iOS 17 and 18,
/// in CSS pixels for points. Where its numbers come from:
/// - Apple's Human Interface Guidelines, "Notifications"
///   (developer.apple.com/design/human-interface-guidelines/notifications): the anatomy, i.e. the
///   app's icon, a title and a body, no app-name line (the app's name stands in for a missing
///   title), and the expanded view with the rich content on top of the same card.
/// - Apple's Human Interface Guidelines, "Typography", the iOS Dynamic Type sizes at the default
///   (Large) setting: the title and body at 15 pt on a 20 pt line (Subheadline's size; the title
///   semibold), the time at 13 pt on 18 pt (Footnote).
/// - Apple publishes no numbers for the notification's card in its guidelines; its design
///   resources (the iOS 17 UI kit for Figma, developer.apple.com/design/resources) hold the
///   drawn card. The values here follow that kit as read out by a public recreation that states
///   them (github.com/nish261/fakernoti, README: corner radius 22, icon 38 × 38, padding 12, 9
///   between the icon and the text): the card's corner radius 22 pt, insets 12 pt, 9 pt between
///   the icon, the text and the thumbnail, the icon 38 pt with a 9 pt corner, the thumbnail 38 pt
///   with an 8 pt corner. That recreation draws the lock screen's text at 16/14 px; the sizes
///   here stay the HIG's Dynamic Type ones above. They were not checked against a device's own
///   screenshot here (no device or simulator on this Linux machine). Change them here, in one
///   place, if a side-by-side screenshot disagrees.
package enum ReportStyle {
    package static let css = """
        :root{--ink:#1c1c1e;--muted:#545458;--paper:#f2f2f7;--card:#fff;--line:#d1d1d6;\
        --ok:#1b6e2d;--bad:#b3261e;--warn:#8a5300;--accent:#0a5cc2;--bar:#0a5cc2;--limit:#b3261e}
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%}
        body{margin:0;font:16px/1.45 -apple-system,BlinkMacSystemFont,"SF Pro Text","Segoe UI",Roboto,\
        "Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--paper)}
        main{max-width:72rem;margin:0 auto;padding:1rem}
        h1{font-size:1.5rem;margin:.5rem 0 1rem}
        h2{font-size:1.15rem;margin:0 0 .5rem;overflow-wrap:anywhere}
        h3{font-size:1rem;margin:.75rem 0 .25rem}
        code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
        table{border-collapse:collapse}
        th,td{text-align:left;padding:.2rem .6rem .2rem 0;vertical-align:top}
        .muted{color:var(--muted)}
        .notification{width:100%;max-width:22rem;font:15px/20px -apple-system,BlinkMacSystemFont,"SF Pro Text",\
        "Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
        .banner,.expanded{border-radius:22px;background:rgba(245,245,247,.96);box-shadow:0 1px 3px rgba(0,0,0,.25);\
        color:#000}
        .banner{display:flex;align-items:center;gap:9px;padding:12px}
        .banner-icon{flex:none;width:38px;height:38px;border-radius:9px;\
        background:linear-gradient(135deg,#4a8ff5,#1c5fc9)}
        .banner-text{flex:1;min-width:0}
        .banner-head{display:flex;align-items:baseline;gap:8px}
        .banner-title,.expanded-title{flex:1;min-width:0;font-weight:600;overflow:hidden;text-overflow:ellipsis;\
        white-space:nowrap}
        .banner-time{flex:none;font-size:13px;line-height:18px;color:rgba(60,60,67,.75)}
        .banner-body,.expanded-body{overflow-wrap:anywhere}
        .banner-body{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:4;overflow:hidden}
        .banner-body:empty,.expanded-body:empty{display:none}
        .banner-thumb{flex:none;position:relative;width:38px;height:38px;border-radius:8px;overflow:hidden;\
        background:#c7c7cc;display:flex;align-items:center;justify-content:center}
        .banner-thumb svg{position:absolute;inset:0;width:100%;height:100%;display:block}
        .thumb-glyph{color:#3a3a3c;font-size:18px}
        .expanded{margin-top:.5rem;overflow:hidden}
        .expanded-media{position:relative;background:#000}
        .expanded-media img{display:block;width:100%;height:auto}
        .expanded-text{display:flex;align-items:flex-start;gap:9px;padding:12px}
        .play-badge{position:absolute;left:50%;top:50%;width:54px;height:54px;margin:-27px 0 0 -27px;\
        border-radius:50%;background:rgba(0,0,0,.6);color:#fff;font-size:24px;line-height:54px;\
        text-align:center}
        .expanded-placeholder{min-height:8rem;display:flex;flex-direction:column;align-items:center;\
        justify-content:center;gap:.6rem;padding:.75rem;text-align:center;background:#e5e5ea;color:#3a3a3c;\
        overflow-wrap:anywhere}
        .expanded-placeholder .play-badge{position:static;flex:none;margin:0}
        .expanded-placeholder.movie{background:#2c2c2e;color:#f2f2f7}
        .audio-bar{display:flex;align-items:center;gap:.6rem;padding:.8rem .9rem;border-bottom:1px solid #d1d1d6}
        .audio-play{color:var(--accent)}
        .audio-track{flex:1;height:4px;border-radius:2px;background:#c7c7cc}
        .audio-duration{font-variant-numeric:tabular-nums;color:#3c3c43}
        .expanded-caption{margin:.35rem 0 0;font-size:13px;line-height:18px;color:var(--muted)}
        .platform-label{margin:0 0 .3rem;font-size:13px;font-weight:600;color:var(--muted)}
        .preview{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start;min-width:0}
        .platform-column,.platform-notification{flex:1 1 16rem;max-width:22rem;min-width:0}
        .platform-notification{font:14px/1.4 Roboto,"Segoe UI",-apple-system,BlinkMacSystemFont,"Helvetica Neue",\
        Arial,sans-serif}
        .android-collapsed,.android-expanded,.web-card{background:#fff;color:#1f1f1f;border-radius:1.25rem;\
        padding:.75rem .9rem;box-shadow:0 1px 3px rgba(0,0,0,.25)}
        .android-collapsed{display:flex;align-items:center;gap:.75rem}
        .android-expanded{margin-top:.5rem}
        .android-text,.web-text{flex:1;min-width:0}
        .android-head{display:flex;align-items:center;gap:.35rem;font-size:12px;color:#444746}
        .android-app-icon{flex:none;width:16px;height:16px;border-radius:50%;background:#0b57d0}
        .android-app{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .android-time::before{content:"· "}
        .android-title,.web-title{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .android-body{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#444746}
        .android-body-expanded{white-space:normal;overflow-wrap:anywhere}
        .android-title:empty,.android-body:empty,.web-title:empty,.web-body:empty{display:none}
        .android-large-icon{flex:none;display:block;width:40px;height:40px;border-radius:8px;object-fit:cover}
        .platform-picture{display:block;width:100%;height:auto;aspect-ratio:2/1;object-fit:cover;\
        margin-top:.6rem;border-radius:.75rem;background:#e3e3e3}
        .platform-no-picture{margin:.6rem 0 0;padding:.5rem .6rem;border-radius:.5rem;background:#eef0f3;\
        color:#444746;font-size:13px}
        .web-row{display:flex;align-items:flex-start;gap:.75rem}
        .web-icon{flex:none;display:block;width:40px;height:40px;border-radius:4px;object-fit:cover}
        .web-icon-none{background:#dadce0}
        .web-origin{font-size:12px;color:#444746;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .web-body{color:#1f1f1f;overflow-wrap:anywhere}
        .web-image{border-radius:.25rem}
        .platform-caption{margin:.35rem 0 0;font-size:13px;color:var(--muted)}
        .platform-part{margin-bottom:1rem}
        .platform-part>h3{margin-top:0}
        .platform-image{margin:.1rem 0 .5rem;font-size:.9rem}
        #summary{background:var(--card);border-radius:.75rem;padding:1rem;margin-bottom:1rem}
        .counts{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:0 0 .75rem;padding:0;list-style:none}
        .counts b{font-size:1.25rem}
        #size-chart{display:block;width:100%;max-width:30rem;height:auto}
        #size-chart text{font:13px -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;fill:var(--ink)}
        .chart-key{margin:.5rem 0 0;padding:0;list-style:none;font-size:.9rem;columns:18rem auto;column-gap:1.5rem}
        .chart-key li{margin:.15rem 0;overflow-wrap:anywhere;break-inside:avoid}
        .operations li,.problems li{overflow-wrap:anywhere}
        .chart-key-number{display:inline-block;min-width:1.6rem;font-weight:600;font-variant-numeric:tabular-nums}
        .inputs{display:grid;gap:1rem}
        article.input{display:grid;grid-template-columns:fit-content(45rem) minmax(0,1fr);gap:1rem;\
        background:var(--card);border-radius:.75rem;padding:1rem;border-left:.35rem solid var(--ok)}
        article.input[data-status=failed]{border-left-color:var(--bad);grid-template-columns:minmax(0,1fr)}
        article.input>h2{grid-column:1/-1}
        .status{font-weight:600}
        .status-ok{color:var(--ok)}
        .status-failed{color:var(--bad)}
        .sizes td,.sizes th{font-variant-numeric:tabular-nums}
        .limit-bar{display:block;width:100%;height:.6rem;margin:.4rem 0 .1rem;border-radius:.3rem}
        .limit-track{fill:#e5e5ea}
        .limit-used{fill:var(--bar)}
        .limit-text{margin:.1rem 0 .5rem;font-size:.9rem;color:var(--muted)}
        .chart-track{fill:#e5e5ea}
        .chart-grid{stroke:#aeaeb2;stroke-width:1}
        .chart-tick{fill:var(--bar)}
        .chart-limit{stroke:var(--limit);stroke-width:2}
        #size-chart .chart-scale{font-size:11px;fill:var(--muted)}
        .meaning,.advice{display:block}
        .meaning{color:var(--muted)}
        .details{min-width:0}
        .sizes caption{text-align:left}
        .problems{margin:.25rem 0;padding-left:1.1rem}
        .problems li{margin:.3rem 0}
        .problem-code{font-weight:600}
        .severity-error,.problem-failure{color:var(--bad)}
        .severity-warning,.problem-warning{color:var(--warn)}
        .severity-info{color:var(--muted)}
        .preflight{display:grid;grid-template-columns:fit-content(45rem) minmax(0,1fr);gap:1rem;\
        background:var(--card);border-radius:.75rem;padding:1rem}
        .findings-part h3,.findings-part h4{margin:0 0 .25rem}
        .findings{margin:0 0 .75rem;padding-left:1.1rem}
        li.finding{margin:.35rem 0;overflow-wrap:anywhere}
        .finding-places{margin:.2rem 0;padding-left:1.1rem}
        .image-url{overflow-wrap:anywhere}
        @media (max-width:40rem){article.input,.preflight{grid-template-columns:1fr}main{padding:.5rem}}
        @media (prefers-color-scheme:dark){:root{--ink:#f2f2f7;--muted:#aeaeb2;--paper:#000;--card:#1c1c1e;\
        --line:#3a3a3c;--ok:#5ed47a;--bad:#ff8a80;--warn:#ffc46b;--accent:#6cb2ff;--bar:#6cb2ff;\
        --limit:#ff8a80}\
        .banner,.expanded{background:rgba(44,44,46,.96);color:#fff}.banner-time{color:rgba(235,235,245,.7)}\
        .expanded-placeholder{background:#2c2c2e;color:#e5e5ea}.audio-duration{color:#d1d1d6}\
        .limit-track,.chart-track{fill:#3a3a3c}\
        .android-collapsed,.android-expanded,.web-card{background:#2d2f31;color:#e3e3e3}\
        .android-head,.android-body,.web-origin{color:#c4c7c5}.web-body{color:#e3e3e3}\
        .platform-no-picture{background:#3c4043;color:#e3e3e3}}

        """
}
