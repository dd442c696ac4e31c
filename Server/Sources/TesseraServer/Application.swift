import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TesseraCore
import TesseraDomain

/// Every route of the provider; `readiness` says why the node should not be sent requests
/// (nil when it is ready), for `/health/ready`.
public func buildRouter(services: Services, readiness: @escaping @Sendable () async -> String?) throws -> Router<TesseraRequestContext> {
    let router = Router(context: TesseraRequestContext.self)
    router.add(middleware: RequestLogMiddleware(logger: services.logger))
    if services.configuration.metricsPort != nil {
        _ = MetricsExport.registry
        router.add(middleware: MetricsMiddleware())
    }
    router.add(middleware: SecurityHeadersMiddleware(strictTransportSecurity: services.configuration.secureCookies))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: services.configuration.trustedProxies))
    router.add(middleware: OutageMiddleware(pages: services.pages))
    try DiscoveryEndpoint(services: services).register(on: router, services: services)
    AuthorizationEndpoint(services: services).register(on: router)
    CrossAppEndpoints(services: services).register(on: router)
    TokenEndpoint(services: services).register(on: router)
    UserinfoEndpoint(services: services).register(on: router)
    TokenManagementEndpoints(services: services).register(on: router)
    LogoutEndpoint(services: services).register(on: router)
    AccountEndpoint(services: services).register(on: router)
    AccountAPI(services: services).register(on: router)
    NativeAuthEndpoints(services: services).register(on: router)
    EmailLinkEndpoints(services: services).register(on: router)
    LoginCodeEndpoints(services: services).register(on: router)
    PasswordResetPages(services: services).register(on: router)
    SignUpPages(services: services).register(on: router)
    FederationEndpoints(services: services).register(on: router)
    AdminAPI(services: services).register(on: router)
    AdminConsole(services: services).register(on: router)
    if services.configuration.dev { DevEndpoints(services: services).register(on: router) }
    router.get(RouterPath(Templates.stylesheetPath)) { _, _ in Templates.stylesheetResponse() }
    router.get(RouterPath(Templates.passkeysScriptPath)) { _, _ in Templates.passkeysScriptResponse() }
    PasskeyEndpoints(services: services).register(on: router)
    SecondFactorPages(services: services).register(on: router)
    services.pages.brand.register(on: router)
    HealthEndpoints(readiness: readiness).register(on: router)
    return router
}

/// Headers every response carries; with an https issuer, HSTS too (RFC 6797), so a browser
/// that once reached the provider never again talks to it in clear text.
package struct SecurityHeadersMiddleware: RouterMiddleware {
    package typealias Context = TesseraRequestContext
    /// A year, without `includeSubDomains`: the provider's host doesn't decide for its siblings.
    package static let hstsValue = "max-age=31536000"
    package let strictTransportSecurity: Bool

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
