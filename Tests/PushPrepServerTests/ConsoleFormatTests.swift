import Testing

@testable import PushPrepServer

/// The console's ages and durations, from dates the queue holds.
struct ConsoleFormatTests {
    /// Ordinary ages in their unit; an age from a date far off (a damaged row) is written as the
    /// longest age instead of trapping in the conversion to an integer.
    @Test func agesStayWithinRange() {
        #expect(ConsoleFormat.age(seconds: 42) == "42 s")
        #expect(ConsoleFormat.age(seconds: 2 * 86_400 + 5) == "2 d")
        #expect(ConsoleFormat.age(seconds: -.infinity) == "0 s")
        #expect(ConsoleFormat.age(seconds: 1e300) == "11574074 d")
        #expect(ConsoleFormat.duration(seconds: 1e300) == "11574074 d")
    }
}
