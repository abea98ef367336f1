package import Foundation

extension MotoS3Server {
    /// The whole environment of a `pushprep` process storing to this server as an operator's
    /// would: the key in `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (the secret replaced by
    /// `secret`, to see a refusal) and `PATH`; no `HOME`, so no `~/.aws` of the test machine is
    /// read.
    package func pushprepEnvironment(secret: String? = nil) async throws -> [String: String] {
        var environment = try await self.environment
        if let secret { environment["AWS_SECRET_ACCESS_KEY"] = secret }
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return environment
    }
}
