/// Runs `body` with `resource`, then `shutDown` on it however `body` ends (its result returned,
/// its error rethrown): for the clients and sessions that hold connections or threads and must be
/// shut down before they are released (`S3Client`, `PreflightSession`).
package func withShutDown<Resource, Value, Failure: Error>(
    _ resource: Resource, shutDown: (Resource) async -> Void,
    _ body: (Resource) async throws(Failure) -> Value
) async throws(Failure) -> Value {
    do {
        let result = try await body(resource)
        await shutDown(resource)
        return result
    } catch {
        await shutDown(resource)
        throw error
    }
}
