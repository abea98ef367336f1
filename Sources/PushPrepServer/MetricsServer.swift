import Hummingbird
package import Logging
package import Prometheus
import PushPrepCore
import ServiceLifecycle

/// Serves the Prometheus registry as text on `GET /metrics` (and `GET /healthz`), as a
/// service of the worker's service group.
package struct MetricsServer: Service {
    let application: Application<RouterResponder<BasicRequestContext>>

    /// Loopback only: the metrics are not authenticated, so exposing them is a choice
    /// (`--metrics-host 0.0.0.0`), as with Sidekiq's and Oban's dashboards.
    package static let defaultHost = "127.0.0.1"

    /// A server for `registry` on `host:port` (port 0 picks a free port; `onListening` reports
    /// the port actually bound).
    package init(
        registry: PrometheusCollectorRegistry, host: String = MetricsServer.defaultHost, port: Int, logger: Logger,
        onListening: (@Sendable (Int) async -> Void)? = nil
    ) {
        let router = Router()
        router.addMetricsRoute(registry: registry)
        router.get("healthz") { _, _ -> String in "ok\n" }
        application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "pushprep"),
            onServerRunning: { channel in await onListening?(channel.localAddress?.port ?? port) },
            logger: logger.with("component", "metrics"))
    }

    package func run() async throws {
        try await application.run()
    }
}

extension RouterMethods {
    /// Routes `GET /metrics` to `registry`'s samples in Prometheus' text format: the one route
    /// both the API (`serve`) and the worker's ``MetricsServer`` (`worker --metrics-port`) serve
    /// them by.
    func addMetricsRoute(registry: PrometheusCollectorRegistry) {
        get("metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }
}
