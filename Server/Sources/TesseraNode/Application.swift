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
/// node's turn — in two loops, because a purge of millions of rows paces itself over minutes
/// and a key rotation must not wait for it.
struct MaintenanceService: Service {
    let provider: Provider

    func run() async throws {
        let metrics = provider.configuration.metricsPort != nil
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await repeatRounds {
                    try await provider.keys.reload()
                    if metrics { Signals.outboxDepth(try await provider.store.outboxDepth()) }
                }
            }
            // A stopping node doesn't wait for a purge: one of a large backlog paces itself over
            // minutes, and the next purge (an hour later, on whichever node) goes on from there.
            group.addTask { await repeatRounds { _ = try await cancelWhenGracefulShutdown { try await provider.purgeExpiredIfDue() } } }
        }
    }

    /// Runs `round` every `keyReloadInterval` seconds until shutdown; a failed round is logged
    /// (an unavailable database by the database itself) and the next one tries again.
    private func repeatRounds(_ round: () async throws -> Void) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: .seconds(provider.configuration.keyReloadInterval))
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            do {
                try await round()
            } catch is DatabaseUnavailable {
                // Logged by the database; the next round tries again.
            } catch is CancellationError {
                // The node is stopping.
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
