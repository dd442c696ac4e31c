import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TesseraCore
import TesseraDomain

/// Builds the HTTP application around a started ``Provider``: used by `tessera serve`
/// and by the tests alike.
public func buildApplication(provider: Provider, onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
    throws -> some ApplicationProtocol {
    try Node.application(provider.configuration, provider: provider, waitingFor: nil, logger: provider.logger) { _, port in
        await onRunning(port)
    }
}

/// Every route of the provider.
public func buildRouter(provider: Provider) throws -> Router<TesseraRequestContext> {
    let router = Router(context: TesseraRequestContext.self)
    router.add(middleware: RequestLogMiddleware(logger: provider.logger))
    if provider.configuration.metricsPort != nil {
        _ = MetricsExport.registry
        router.add(middleware: MetricsMiddleware())
    }
    router.add(middleware: SecurityHeadersMiddleware(strictTransportSecurity: provider.configuration.secureCookies))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: provider.configuration.trustedProxies))
    router.add(middleware: OutageMiddleware(pages: provider.pages))
    try DiscoveryEndpoint(provider: provider).register(on: router, provider: provider)
    AuthorizationEndpoint(provider: provider).register(on: router)
    CrossAppEndpoints(provider: provider).register(on: router)
    TokenEndpoint(provider: provider).register(on: router)
    UserinfoEndpoint(provider: provider).register(on: router)
    TokenManagementEndpoints(provider: provider).register(on: router)
    LogoutEndpoint(provider: provider).register(on: router)
    AccountEndpoint(provider: provider).register(on: router)
    NativeAuthEndpoints(provider: provider).register(on: router)
    EmailLinkEndpoints(provider: provider).register(on: router)
    LoginCodeEndpoints(provider: provider).register(on: router)
    FederationEndpoints(provider: provider).register(on: router)
    AdminAPI(provider: provider).register(on: router)
    AdminConsole(provider: provider).register(on: router)
    if provider.configuration.dev { DevEndpoints(provider: provider).register(on: router) }
    router.get(RouterPath(Templates.stylesheetPath)) { _, _ in Templates.stylesheetResponse() }
    HealthEndpoints(readiness: { await provider.unreadiness() }).register(on: router)
    return router
}

/// Headers every response carries; with an https issuer, HSTS too (RFC 6797), so a browser
/// that once reached the provider never again talks to it in clear text.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = TesseraRequestContext
    /// A year, without `includeSubDomains`: the provider's host doesn't decide for its siblings.
    static let hstsValue = "max-age=31536000"
    let strictTransportSecurity: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            response = Response(status: error.status, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"not_found"}"#)))
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.referrerPolicy] == nil { response.headers[.referrerPolicy] = "no-referrer" }
        if strictTransportSecurity { response.headers[.strictTransportSecurity] = Self.hstsValue }
        return response
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
