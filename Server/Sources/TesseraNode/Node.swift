import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import TesseraCore
import TesseraDomain
import TesseraInfrastructure
import TesseraServer

/// `tessera serve`: a node's listeners, its provider, and the background work, started so that
/// a node whose database is away waits for it instead of exiting.
///
/// The listeners come up at once. Until the provider has started, the public one answers
/// `/health` and `/health/live` with 200, `/health/ready` and everything else with 503 (with
/// `Retry-After`); the management one says why it isn't ready. The provider is started again
/// and again, backing off from half a second to ``maximumBackoff``, with a warning each time
/// naming the reason, until the database answers; then the node serves and says
/// `Tessera is ready` (once the public listener is bound too).
public enum Node {
    /// The longest wait between two attempts to reach the database at start.
    static let maximumBackoff: Duration = .seconds(5)

    /// The application of a node. `provider` is the one the caller started; nil when that first
    /// attempt found the database away (`waitingFor`): the node then starts it itself.
    /// `onReady` runs once, when the provider serves and the public listener is bound.
    public static func application(_ configuration: ServerConfiguration, provider: Provider?, waitingFor: DatabaseUnavailable?,
                                   logger: Logger,
                                   onReady: @escaping @Sendable (Provider, Int) async throws -> Void) throws -> some ApplicationProtocol {
        useUTCAsDefaultTimeZone()
        let state = NodeState(waitingFor: waitingFor?.reason)
        let pages = try PageRenderer(branding: configuration.branding)
        let documents = PublicDocuments()
        let responder = NodeResponder(state: state, pages: pages, keepsTasksOnTheirLoops: Node.tasksRunOnEventLoops)
        var services: [any Service] = [NodeService(configuration: configuration, initial: provider, state: state, documents: documents,
                                                   responder: responder, logger: logger, onReady: onReady)]
        if let port = configuration.metricsPort {
            services.append(NamedService(description: "management listener",
                                         service: managementApplication(configuration: configuration, port: port, logger: logger) {
                                             await state.unreadiness()
                                         }))
        }
        return Application(
            responder: responder,
            server: configuration.connectionLimits.server(documents: documents),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: services,
            onServerRunning: { channel in
                if let (provider, port) = state.bound(port: channel.localAddress?.port ?? configuration.port) {
                    do { try await onReady(provider, port) } catch { logger.error("starting failed", metadata: ["error": "\(error)"]) }
                }
            },
            logger: logger)
    }

    /// A node keeps and shows every time in UTC (tokens in Unix seconds, logs, mail and pages with
    /// an explicit UTC zone): the machine's zone is never read. Hummingbird's `Date` header cache
    /// makes a Gregorian calendar at start, which asks Foundation for the default zone; unset,
    /// Foundation reads `/etc/localtime` and opens that zone through ICU, whose code and data stay
    /// resident (2 MiB of an idle node, docs/performance.md). GMT is Foundation's own, without ICU.
    static func useUTCAsDefaultTimeZone() {
        if let utc = TimeZone(identifier: "GMT") { NSTimeZone.default = utc }
    }

    /// Runs `application` until SIGTERM or SIGINT, then lets the requests under way finish for
    /// `shutdown-timeout`; past it they are cancelled, and a node still not stopped 5 seconds
    /// later exits anyway, saying so: a supervisor never needs SIGKILL.
    public static func run(_ application: some ApplicationProtocol, configuration: ServerConfiguration, logger: Logger) async throws {
        let limit = Duration.seconds(configuration.shutdownTimeout)
        var group = ServiceGroupConfiguration(
            services: [.init(service: application, serviceName: "node"),
                       .init(service: ShutdownWatchdog(limit: limit + .seconds(5), logger: logger), successTerminationBehavior: .ignore,
                             serviceName: "shutdown watchdog")],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = limit
        try await ServiceGroup(configuration: group).run()
    }
}

/// What the node's listeners need to know: the provider once it serves, why not yet, and the
/// public listener's port, so that `onReady` runs once both are there.
final class NodeState: Sendable {
    private struct Value {
        var provider: Provider?
        var responder: RouterResponder<TesseraRequestContext>?
        var waitingFor: String?
        var port: Int?
        var announced = false

        /// The provider and the port, the first time both are there.
        mutating func announce() -> (Provider, Int)? {
            guard !announced, let provider, let port else { return nil }
            announced = true
            return (provider, port)
        }
    }
    private let value: NIOLockedValueBox<Value>

    init(waitingFor: String?) {
        value = NIOLockedValueBox(Value(waitingFor: waitingFor))
    }

    var responder: RouterResponder<TesseraRequestContext>? { value.withLockedValue { $0.responder } }
    var waitingFor: String? { value.withLockedValue { $0.waitingFor } }

    func waiting(for reason: String) {
        value.withLockedValue { $0.waitingFor = reason }
    }

    /// The provider serves from now on; returns what `onReady` needs when the listener is bound already.
    func serve(_ provider: Provider, with responder: RouterResponder<TesseraRequestContext>) -> (Provider, Int)? {
        value.withLockedValue { value in
            value.provider = provider
            value.responder = responder
            value.waitingFor = nil
            return value.announce()
        }
    }

    /// The public listener is bound; returns what `onReady` needs when the provider serves already.
    func bound(port: Int) -> (Provider, Int)? {
        value.withLockedValue { value in
            value.port = port
            return value.announce()
        }
    }

    /// Why the node should not be sent requests (nil: it should).
    func unreadiness() async -> String? {
        let (provider, waitingFor) = value.withLockedValue { ($0.provider, $0.waitingFor) }
        if let provider { return await provider.unreadiness() }
        return "waiting for the database: \(waitingFor ?? "starting")"
    }
}

/// The public listener's responder: the provider's routes once it serves; until then health
/// answers and 503 for everything else.
struct NodeResponder: HTTPResponder {
    typealias Context = TesseraRequestContext
    let state: NodeState
    let pages: PageRenderer
    /// Whether a request's task is held to its connection's loop (``EventLoopTaskExecutor``), as
    /// it is whenever the tasks run on the event loops. With PostgreSQL a task resumed by a
    /// database answer would stay on the loop of the pool's connection, and every request's
    /// signing piled up on that one loop (84 % of the server's time on one of two). With SQLite,
    /// whose thread hands a task back to whichever loop of the group comes next, the two loops'
    /// shares of the refreshes' signing drifted apart, and one waited while the other had work:
    /// held, a refresh load keeps 1.74 cores busy instead of 1.65, 9 % more refreshes a second
    /// (A/B, three pairs; client_credentials, which reads no database, the same within noise).
    let keepsTasksOnTheirLoops: Bool

    func respond(to request: Request, context: Context) async throws -> Response {
        guard let responder = state.responder else { return HealthEndpoints.beforeServing(request, pages: pages) }
        guard keepsTasksOnTheirLoops else { return try await responder.respond(to: request, context: context) }
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(context.eventLoop)) {
            try await responder.respond(to: request, context: context)
        }
    }
}

/// Starts the provider (waiting for the database if it must), installs its routes, runs the
/// background work (signing-key reloads, purges, mail delivery) until shutdown, and closes the
/// database last — after the public listener's requests have finished.
struct NodeService: Service, CustomStringConvertible {
    let description = "provider"
    let configuration: ServerConfiguration
    let initial: Provider?
    let state: NodeState
    /// The documents the listener answers on its event loops, published when the provider serves.
    let documents: PublicDocuments
    /// The listener's responder, which the documents' handler also hands token requests to.
    let responder: NodeResponder
    let logger: Logger
    let onReady: @Sendable (Provider, Int) async throws -> Void

    func run() async throws {
        let started: Provider? = if let initial { initial } else { try await waitForDatabase() }
        guard let provider = started else { return }
        try documents.publish(services: provider.services)
        let router = try buildRouter(services: provider.services, readiness: { await provider.unreadiness() }).buildResponder()
        let serving = state.serve(provider, with: router)
        let responder = self.responder
        documents.route(to: { request, context in try await responder.respond(to: request, context: context) }, logger: logger)
        if let (provider, port) = serving {
            try await onReady(provider, port)
        }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await MaintenanceService(provider: provider).run() }
                group.addTask { try await MailDeliveryService(delivery: provider.services.mailDelivery).run() }
                try await group.waitForAll()
            }
        } catch {
            await provider.shutdown()
            throw error
        }
        await provider.shutdown()
    }

    /// Starts the provider once the database answers; nil when the node is stopped first.
    private func waitForDatabase() async throws -> Provider? {
        var delay: Duration = .milliseconds(500)
        var reason = state.waitingFor ?? "not tried yet"
        while true {
            logger.warning("waiting for the database", metadata: [
                "database": "\(configuration.database)", "reason": .string(reason), "next_try_in": "\(delay)",
            ])
            let wait = delay
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            if Task.isShuttingDownGracefully || Task.isCancelled { return nil }
            do {
                let provider = try await Provider.start(configuration, logger: logger)
                logger.notice("the database answers: the node starts serving", metadata: ["database": "\(configuration.database)"])
                return provider
            } catch let error as DatabaseUnavailable {
                reason = error.reason
                state.waiting(for: reason)
                delay = min(delay * 2, Node.maximumBackoff)
            }
        }
    }
}

/// A service under a name of its own. A service group names each of its services by describing
/// it, which for a struct walks every stored property by reflection, the configuration's
/// included, and looks up each property's type's conformances: a twentieth of a node's start
/// (measured with `perf`), for a name only its debug logs show.
struct NamedService<Wrapped: Service>: Service, CustomStringConvertible {
    let description: String
    let service: Wrapped

    func run() async throws { try await service.run() }
}

/// The last resort of a stopping node: once shutdown has begun, a node still running after
/// `limit` logs why and exits, rather than waiting for SIGKILL.
struct ShutdownWatchdog: Service {
    let limit: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        guard !Task.isCancelled else { return }
        let (limit, logger) = (limit, logger)
        let thread = Thread {
            Thread.sleep(forTimeInterval: Double(limit.components.seconds))
            logger.error("stopping took longer than shutdown-timeout and 5 s more: exiting with requests still under way")
            exit(1)
        }
        thread.name = "tessera shutdown watchdog"
        thread.start()
    }
}
