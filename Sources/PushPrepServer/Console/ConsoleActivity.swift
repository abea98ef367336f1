import Foundation
import PushPrepQueue

/// Counts by minute over the last hour, and their chart.
struct ConsoleActivity {
    /// Finished jobs per minute, oldest minute first (60 entries).
    var succeededByMinute = [Int](repeating: 0, count: 60)
    var failedByMinute = [Int](repeating: 0, count: 60)
    /// The end of the newest minute drawn: the time axis' `now`.
    var end: Date

    /// From the queue's per-minute buckets (oldest first); the newest 60 are drawn, the newest
    /// ending at `end` (the time axis counts back from it).
    init(buckets: [ActivityBucket], end: Date = Date()) {
        self.end = end
        let recent = buckets.suffix(60)
        let offset = 60 - recent.count
        for (index, bucket) in recent.enumerated() {
            succeededByMinute[offset + index] = bucket.succeeded
            failedByMinute[offset + index] = bucket.failed
        }
    }

    var succeeded: Int { succeededByMinute.reduce(0, +) }
    var failed: Int { failedByMinute.reduce(0, +) }

    /// The count axis' top: the busiest minute rounded up to an even number (so that its middle
    /// tick is a whole count), at least 2.
    var scaleTop: Int {
        let peak = zip(succeededByMinute, failedByMinute).map { $0 + $1 }.max() ?? 0
        return max(2, peak + peak % 2)
    }

    /// A stacked bar per minute (succeeded below, failed above) as inline SVG, built from
    /// numbers and fixed words only, with a count axis (0, half, top; "jobs per minute") and a
    /// time axis (UTC times of every quarter hour, then "now"); `role="img"` with a title and a
    /// description for screen readers. Its legend is HTML beside it (``legend``), readable at a
    /// phone's width where the SVG's text scales down. The view box is narrow (360 units) so
    /// that 12-unit labels stay near 12 px on a 390 px screen.
    func svg() -> String {
        let width = 360.0
        let height = 170.0
        let left = 34.0
        let right = 350.0
        let top = 24.0
        let bottom = 140.0
        let scale = Double(scaleTop)
        let barWidth = (right - left) / 60
        var bars = ""
        for minute in 0..<60 {
            let x = left + Double(minute) * barWidth
            let okHeight = Double(succeededByMinute[minute]) / scale * (bottom - top)
            let badHeight = Double(failedByMinute[minute]) / scale * (bottom - top)
            let label =
                "minute \(minute - 60): \(succeededByMinute[minute]) succeeded, \(failedByMinute[minute]) failed"
            if okHeight > 0 {
                bars +=
                    "<rect class=\"succeeded\" x=\"\(f(x + 0.5))\" y=\"\(f(bottom - okHeight))\" width=\"\(f(barWidth - 1))\" height=\"\(f(okHeight))\"><title>\(label)</title></rect>"
            }
            if badHeight > 0 {
                bars +=
                    "<rect class=\"failed\" x=\"\(f(x + 0.5))\" y=\"\(f(bottom - okHeight - badHeight))\" width=\"\(f(barWidth - 1))\" height=\"\(f(badHeight))\"><title>\(label)</title></rect>"
            }
        }
        var axes =
            "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(bottom))\" x2=\"\(f(right))\" y2=\"\(f(bottom))\"/>"
            + "<line class=\"axis\" x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(bottom))\"/>"
        for count in [0, scaleTop / 2, scaleTop] {
            let y = bottom - Double(count) / scale * (bottom - top)
            axes +=
                "<line class=\"tick\" x1=\"\(f(left - 4))\" y1=\"\(f(y))\" x2=\"\(f(right))\" y2=\"\(f(y))\"/>"
                + "<text class=\"count-label\" x=\"\(f(left - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\">\(count)</text>"
        }
        for quarter in 0...4 {
            let minutesAgo = 60 - quarter * 15
            let x = left + Double(quarter * 15) * barWidth
            let anchor = quarter == 0 ? "start" : quarter == 4 ? "end" : "middle"
            let words = quarter == 4 ? "now" : Self.clock(end - Double(minutesAgo * 60))
            axes +=
                "<line class=\"axis\" x1=\"\(f(x))\" y1=\"\(f(bottom))\" x2=\"\(f(x))\" y2=\"\(f(bottom + 4))\"/>"
                + "<text class=\"time-label\" x=\"\(f(x))\" y=\"\(f(bottom + 16))\" text-anchor=\"\(anchor)\">\(words)</text>"
        }
        axes +=
            "<text class=\"axis-title\" x=\"0\" y=\"12\">jobs finished per minute</text>"
            + "<text class=\"axis-title\" x=\"\(f(right))\" y=\"\(f(height - 2))\" text-anchor=\"end\">time (UTC), one bar a minute</text>"
        return """
            <svg id="activity-chart" class="chart" viewBox="0 0 \(f(width)) \(f(height))" role="img" aria-labelledby="activity-title activity-desc" xmlns="http://www.w3.org/2000/svg">\
            <title id="activity-title">Jobs finished per minute over the last hour</title>\
            <desc id="activity-desc">\(succeeded) succeeded and \(failed) failed; the count axis goes to \(scaleTop) a minute.</desc>\
            \(axes)\(bars)</svg>
            """
    }

    /// The chart's key: a swatch of each bar's colour (the same classes as the bars) and what it
    /// counts, with the hour's totals.
    var legend: String {
        """
        <ul class="legend" id="activity-legend" aria-label="Key to the chart">\
        <li data-series="succeeded"><span class="swatch succeeded" aria-hidden="true"></span>succeeded (\(succeeded))</li>\
        <li data-series="failed"><span class="swatch failed" aria-hidden="true"></span>failed or dead (\(failed))</li>\
        </ul>
        """
    }

    /// `23:45`, in UTC.
    static func clock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
