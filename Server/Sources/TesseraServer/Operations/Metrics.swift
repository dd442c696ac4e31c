import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import TesseraDomain

/// The process's metrics: swift-metrics bootstrapped once with a Prometheus registry, the
/// first time a server with a management listener is built.
package enum MetricsExport {
    package static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Request latency in seconds, from 1 ms to 10 s.
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
                                                   .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                                                   .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]
        MetricsSystem.bootstrap(factory)
        return registry
    }()
}

/// Starts recording metrics (once per process). Called before the provider starts, so that
/// what is created at start (the database's timers) records too.
public func bootstrapMetrics() {
    _ = MetricsExport.registry
}

/// The management listener (`--metrics-port`): `GET /metrics` in Prometheus's text format,
/// and the two health paths, on an address of its own (loopback unless `--metrics-host`).
package func managementApplication(configuration: ServerConfiguration, port: Int, logger: Logger,
                           readiness: @escaping @Sendable () async -> String?) -> some ApplicationProtocol {
    let registry = MetricsExport.registry
    let router = Router()
    router.get("/metrics") { _, _ in
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16_384)
        registry.emit(into: &buffer)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }
    HealthEndpoints(readiness: readiness, tellsReason: true).register(on: router)
    return Application(router: router, configuration: .init(address: .hostname(configuration.metricsHost, port: port), serverName: nil),
                       logger: logger)
}
