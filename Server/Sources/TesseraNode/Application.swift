import Hummingbird
import Logging
import ServiceLifecycle
import TesseraCore
import TesseraDomain
import TesseraServer

/// Builds the HTTP application around a started ``Provider``: used by `tessera serve`
/// and by the tests alike.
public func buildApplication(provider: Provider, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
    throws -> some ApplicationProtocol {
    try Node.application(provider.configuration, provider: provider, waitingFor: nil, logger: provider.logger) { _, port in
        await onRunning(port)
    }
}

/// Background work of a running provider: re-reads signing keys every few seconds (to pick
/// up a rotation made by another node or the CLI) and purges expired rows when it is this
/// node's turn.
struct MaintenanceService: Service {
    let provider: Provider

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: .seconds(provider.configuration.keyReloadInterval))
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            do {
                try await provider.keys.reload()
                try await provider.purgeExpiredIfDue()
                if provider.configuration.metricsPort != nil {
                    Signals.outboxDepth(try await provider.store.outboxDepth())
                }
            } catch is DatabaseUnavailable {
                // Logged by the database; the next round tries again.
            } catch {
                provider.logger.error("maintenance failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Every route of a started provider, its readiness included.
public func buildRouter(provider: Provider) throws -> Router<TesseraRequestContext> {
    try buildRouter(services: provider.services, readiness: { await provider.unreadiness() })
}
