import Hummingbird
import TesseraCore
import TesseraDomain

/// The token endpoint (RFC 6749 §3.2): authenticates the client, then hands the request
/// to the grant registered for its `grant_type`.
struct TokenEndpoint {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Endpoint.token.path)) { request, context in
            await Self.answer(services) { try await token(request, address: context.addressKey) }
        }
    }

    func token(_ request: Request, address: String) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        let client = try await services.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        guard !parameters.duplicates.contains("grant_type") else { throw OAuthError.invalidRequest("grant_type was sent more than once.") }
        try parameters.requireSingleValues()
        guard let grantType = parameters["grant_type"] else { throw OAuthError.invalidRequest("The grant_type parameter is missing.") }
        guard let grant = services.grants.grant(for: grantType) else {
            throw OAuthError(.unsupportedGrantType, "The grant type '\(grantType)' is not supported.")
        }
        // First-party apps (upstream identity tokens) and Native SSO groups exchange without registering the grant.
        guard client.grantTypes.contains(grantType) || (grantType == GrantType.tokenExchange && TokenExchangeGrant.allows(client)) else {
            guard grantType == GrantType.tokenExchange else {
                throw OAuthError(.unauthorizedClient, "This client is not allowed the grant type '\(grantType)'.")
            }
            throw OAuthError(.unauthorizedClient, "This client is not allowed the grant type '\(grantType)': Native SSO is for the "
                                + "clients of a device SSO group (tessera clients update --device-sso-group), the exchange of an "
                                + "upstream identity token for first-party clients (--first-party).")
        }
        // No language: /token's grants send no mail.
        do {
            return Responses.json(try await services.grants.exchange(grant, TokenRequest(parameters: parameters, client: client,
                                                                                         address: address)))
        } catch let failure as FlowFailure {
            // A native Sign in with Apple that needs a second factor goes on at the native API.
            throw Self.oauthError(NativeAuthWire.error(failure, at: .token))
        }
    }

    /// A native API error in /token's shape: `error`, `error_description`, and the members an
    /// app goes on with (`suberror`, `continuation_token`, RFC 6749 §5.2 allows them).
    static func oauthError(_ error: NativeAuthError) -> OAuthError {
        var oauth = OAuthError(OAuthError.Code(rawValue: error.error), error.description, status: error.status)
        if let suberror = error.suberror { oauth.members["suberror"] = suberror }
        if let token = error.continuationToken { oauth.members["continuation_token"] = token }
        return oauth
    }

    /// Runs an endpoint body and turns any error into an OAuth JSON error; anything that is
    /// not an ``OAuthError`` is logged and answered as `server_error` without its detail.
    static func answer(_ services: Services, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as OAuthError {
            if error.code == .serverError { services.logger.error("request failed", metadata: ["error": "\(error)"]) }
            return Responses.error(error)
        } catch is DatabaseUnavailable {
            return Outage.oauth()
        } catch {
            services.logger.error("request failed", metadata: ["error": "\(error)"])
            return Responses.error(.serverError(detail: "\(error)"))
        }
    }
}

/// Userinfo (OpenID Connect Core §5.3): the claims of the scopes the access token carries.
struct UserinfoEndpoint {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(Endpoint.userinfo.path)) { request, _ in await answer(request) }
        router.post(RouterPath(Endpoint.userinfo.path)) { request, _ in await answer(request) }
    }

    func answer(_ request: Request) async -> Response {
        do {
            var request = request
            var token = request.bearerToken
            if request.method == .post, (request.headers[.contentType] ?? "").lowercased().hasPrefix("application/x-www-form-urlencoded") {
                let form = try await request.formParameters()
                try form.requireSingleValues()
                if let bodyToken = form["access_token"] {
                    // RFC 6750 §2: one method per request.
                    guard token == nil else { throw OAuthError.invalidRequest("Send the access token in one place only.") }
                    token = bodyToken
                }
            }
            guard let token else {
                var response = Responses.json(try CanonicalJSON.encode(["error": "invalid_token", "error_description": "An access token is required."]),
                                              status: .unauthorized)
                response.headers[.wwwAuthenticate] = "Bearer realm=\"tessera\""
                return response
            }
            let validated = try await services.accessTokens.validate(token)
            guard validated.scope.contains(ScopeCatalogue.openid), let grant = validated.grant,
                  let (user, client) = try await services.accounts.owner(of: grant) else {
                throw OAuthError(.insufficientScope, "The access token was not issued with the openid scope.")
            }
            var claims = UserClaims.userinfo(of: user, scopes: validated.scope, requested: grant.claims)
            claims["sub"] = .string(services.tokenIssuer.subject(userID: user.id, client: client))
            return try Responses.json(claims)
        } catch let error as OAuthError where error.code == .invalidToken || error.code == .insufficientScope {
            return Responses.bearerError(error)
        } catch let error as OAuthError {
            return Responses.error(error)
        } catch is DatabaseUnavailable {
            return Outage.oauth()
        } catch {
            services.logger.error("userinfo failed", metadata: ["error": "\(error)"])
            return Responses.error(.serverError(detail: "\(error)"))
        }
    }
}
