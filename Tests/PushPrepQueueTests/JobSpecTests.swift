import Foundation
import PushPrepCore
import PushPrepTestSupport
import Testing

@testable import PushPrepQueue

/// Numbers on their way into the queue: seconds, job specs, stored timeouts.
@Suite struct JobSpecTests {
    /// The one conversion of outside seconds: finite and in range, or `invalid_settings`.
    @Test func checkedSecondsRefuseNonFiniteAndOutOfRange() throws {
        for value in [Double.infinity, -.infinity, .nan, 1e300, 1e13, -1, 86_400.5] {
            let error = #expect(throws: PushPrepError.self) {
                try Duration.seconds(checking: value, in: 0...86_400, "--lease")
            }
            #expect(error?.code == .invalidSettings)
            #expect(error?.message.hasPrefix("--lease must be a number of seconds in 0...86400") == true)
        }
        #expect(try Duration.seconds(checking: 1.5, in: 0...86_400, "x") == .milliseconds(1500))
        #expect(try Duration.seconds(checking: 86_400, in: 0...86_400, "x") == .seconds(86_400))
    }

    /// Specs out of range are refused before anything is written, and `ProcessingJobs.spec`
    /// refuses settings a worker would refuse instead of queueing them.
    @Test func specsOutOfRangeAreRefused() throws {
        let fine = JobSpec(source: "/a.jpg", payload: "{}")
        try fine.validate()
        for spec in [
            JobSpec(source: "/a.jpg", payload: "{}", delay: .seconds(2_592_001)),
            JobSpec(source: "/a.jpg", payload: "{}", delay: .seconds(-1)),
            JobSpec(source: "/a.jpg", payload: "{}", timeout: .milliseconds(999)),
            JobSpec(source: "/a.jpg", payload: "{}", timeout: .seconds(86_401)),
            JobSpec(source: "/a.jpg", payload: "{}", priority: 1001),
            JobSpec(source: "/a.jpg", payload: "{}", maxAttempts: 101),
        ] {
            #expect(throws: PushPrepError.self) { try spec.validate() }
        }
        var settings = ProcessingSettings()
        settings.videoStart = 1e13
        let error = #expect(throws: PushPrepError.self) {
            try ProcessingJobs.spec(source: "/a.mov", settings: settings)
        }
        #expect(error?.code == .invalidSettings)
        #expect(throws: PushPrepError.self) {
            try ProcessingJobs.spec(source: "/a.jpg", settings: ProcessingSettings(), delay: .seconds(1e9))
        }
        // JSON cannot hold an infinity: the settings were once queued as `{}`, the defaults.
        settings.videoStart = .infinity
        let infinite = #expect(throws: PushPrepError.self) {
            try ProcessingJobs.spec(source: "/a.mov", settings: settings)
        }
        #expect(infinite?.code == .invalidSettings)
    }

    /// `enqueue` makes the specs of all its inputs with one call: the settings are validated
    /// and encoded once, and each spec is the one `spec(source:settings:)` makes.
    @Test func specsForManySources() throws {
        var settings = ProcessingSettings()
        settings.quality = 70
        let sources = ["/a.jpg", "b.mov", "https://cdn.example.com/c.png"]
        let specs = try ProcessingJobs.specs(
            sources: sources, settings: settings, priority: 3, currentDirectory: "/in")
        let one = try sources.map {
            try ProcessingJobs.spec(source: $0, settings: settings, priority: 3, currentDirectory: "/in")
        }
        #expect(specs == one)
        #expect(specs.map(\.source) == ["/a.jpg", "/in/b.mov", "https://cdn.example.com/c.png"])
        #expect(Set(specs.map(\.payload)).count == 1 && specs[0].payload.contains(#""quality":70"#))
        settings.quality = 0
        let error = #expect(throws: PushPrepError.self) {
            try ProcessingJobs.specs(sources: sources, settings: settings)
        }
        #expect(error?.message == "--quality must be between 1 and 100, got 0")
    }

    /// A row's timeout becomes a duration only when it is finite and in range; otherwise the
    /// job carries why, for the worker to fail it.
    @Test func claimedJobsChecksItsStoredTimeout() {
        func job(_ seconds: Double?) -> ClaimedJob {
            ClaimedJob(
                lease: Lease(id: 1, token: 1), source: "/a", payload: "{}", attempt: 1, maxAttempts: 5,
                timeoutSeconds: seconds)
        }
        #expect(job(nil).timeout == nil && job(nil).invalidSettings == nil)
        #expect(job(2.5).timeout == .milliseconds(2500) && job(2.5).invalidSettings == nil)
        for bad in [Double.infinity, .nan, 1e300, -5, 0] {
            #expect(job(bad).timeout == nil)
            #expect(job(bad).invalidSettings?.contains("timeout") == true, "\(bad)")
        }
    }
}
