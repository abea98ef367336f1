import Foundation
import PushPrepTestSupport
import Testing

/// `make bench` draws its summary lines with scripts/bench-chart.py: run it on a summary of every
/// section and on one with values that are no data (it must leave those bars out, not fail).
struct BenchChartTests {
    static let script = TestTools.packageRoot.appendingPathComponent("scripts/bench-chart.py").path

    @Test func drawsEverySectionAndLeavesOutWhatIsNoData() throws {
        let directory = try TestTools.temporaryDirectory()
        defer { TestTools.removeDirectory(directory) }
        let summary = directory.appendingPathComponent("bench.txt")
        try """
        bench images: pushprep_ips=17.65 vipsthumbnail_ips=13.20 ratio=1.34 peak_rss_mb=152.1 bare_ips=19.41 bare_ratio=0.91
        bench video: pushprep_transcode_s=2.47 ffmpeg_s=2.38 ratio=1.03 cpu_ratio=1.01 copy_s=0.10 copy_speedup=10.6
        bench memory: peak_mb=487 limit_mb=500 baseline_mb=75 default_peak_mb=inf verdict=ok
        bench serve: jobs_per_s=5847 files_rps=8031.56 nginx_rps=nan ratio=0.71

        """.write(to: summary, atomically: true, encoding: .utf8)
        let svg = directory.appendingPathComponent("bench.svg").path
        let result = try TestTools.run(
            "python3",
            [Self.script, summary.path, "--out", svg, "--png", directory.appendingPathComponent("b.png").path])
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let drawn = try String(contentsOfFile: svg, encoding: .utf8)
        for label in ["vipsthumbnail", "bare libvips loop", "ffmpeg", "pushprep serve", "--memory-limit"] {
            #expect(drawn.contains(label), "bar \(label)")
        }
        #expect(!drawn.contains("no limit"), "an infinite peak is no bar")
        #expect(!drawn.contains(">nginx<"), "a NaN rate is no bar")
    }
}
