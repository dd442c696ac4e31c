import Hummingbird
import TesseraCore
import TesseraDomain

/// Revocation (RFC 7009) and introspection (RFC 7662).
struct TokenManagementEndpoints {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Endpoint.revocation.path)) { request, _ in
            await TokenEndpoint.answer(services) { try await revoke(request) }
        }
        router.post(RouterPath(Endpoint.introspection.path)) { request, _ in
            await TokenEndpoint.answer(services) { try await introspect(request) }
        }
    }

    /// RFC 7009 §2; unknown tokens, and tokens of other clients, get the same 200.
    func revoke(_ request: Request) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        try parameters.requireSingleValues()
        let client = try await services.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        guard let token = parameters["token"] else { throw OAuthError.invalidRequest("The token parameter is missing.") }
        try await services.tokenIntrospection.revoke(token, by: client)
        var response = Response(status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// RFC 7662 §2.2 (who may introspect what: ``TokenIntrospection``).
    func introspect(_ request: Request) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        try parameters.requireSingleValues()
        let client = try await services.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        return try Responses.json(try await services.tokenIntrospection.introspect(parameters["token"], by: client))
    }
}
