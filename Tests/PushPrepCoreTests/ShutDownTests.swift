import Synchronization
import Testing

@testable import PushPrepCore

/// ``withShutDown(_:shutDown:_:)``: the resource is shut down exactly once, after the work,
/// whether the work returned (its value passed on) or threw (its error passed on).
struct ShutDownTests {
    /// A resource that counts its shutdowns and whether work ran on it afterwards.
    final class Resource: Sendable {
        let shutdowns = Mutex(0)
        let usedAfterShutdown = Mutex(false)

        func use() {
            if shutdowns.withLock({ $0 }) > 0 { usedAfterShutdown.withLock { $0 = true } }
        }

        func shutdown() async { shutdowns.withLock { $0 += 1 } }
    }

    @Test func workThatReturnsGivesItsValueAfterOneShutdown() async throws {
        let resource = Resource()
        let value = await withShutDown(resource, shutDown: { await $0.shutdown() }) { resource in
            resource.use()
            return 42
        }
        #expect(value == 42)
        #expect(resource.shutdowns.withLock { $0 } == 1)
        #expect(!resource.usedAfterShutdown.withLock { $0 })
    }

    @Test func workThatThrowsPassesItsErrorOnAfterOneShutdown() async throws {
        let resource = Resource()
        let error = await #expect(throws: PushPrepError.self) {
            try await withShutDown(resource, shutDown: { await $0.shutdown() }) {
                (resource: Resource) async throws(PushPrepError) -> Int in
                resource.use()
                throw PushPrepError(.storageUnavailable, "no answer")
            }
        }
        #expect(error?.code == .storageUnavailable)
        #expect(resource.shutdowns.withLock { $0 } == 1)
        #expect(!resource.usedAfterShutdown.withLock { $0 })
    }
}
