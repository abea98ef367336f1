import NIOCore
import NIOPosix
package import PushPrepCore
import PushPrepRemote

/// Whether `serve` can listen where it was told: the address and port bound (as Hummingbird
/// binds them, `SO_REUSEADDR` on) and released at once, before the queue is opened or created
/// and before any worker starts. A port another process holds is then a one-line error naming
/// the port (``NetworkFailure``), with no queue database, uploads directory or worker left
/// behind. The server binds again when it starts (Hummingbird opens its own socket); a port
/// taken in between fails there, through the same mapping (``APIServer/run()``).
package enum ListenerCheck {
    /// Binds `host`:`port` and releases it; throws `invalid_settings` with the mapping's
    /// sentence when the system refuses. Port 0 (any free port) cannot be taken and is not
    /// checked.
    package static func check(host: String, port: Int) async throws(PushPrepError) {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch {
            throw failure(error, host: host, port: port)
        }
    }

    /// A listener's failure to bind as `invalid_settings` with the mapping's sentence, the
    /// library's text kept as the cause (for the debug log).
    static func failure(_ error: any Error, host: String, port: Int) -> PushPrepError {
        let message =
            NetworkFailure(error)?.listening(on: host, port: port)
            ?? "cannot listen on \(NetworkFailure.endpoint(host: host, port: port)): check --host and --port"
        return PushPrepError(.invalidSettings, message, cause: error)
    }
}
