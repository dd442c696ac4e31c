import Hummingbird
import TesseraCore

/// Revocation (RFC 7009) and introspection (RFC 7662).
struct TokenManagementEndpoints {
    let provider: Provider

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Endpoint.revocation.path)) { request, _ in
            await TokenEndpoint.answer(provider) { try await revoke(request) }
        }
        router.post(RouterPath(Endpoint.introspection.path)) { request, _ in
            await TokenEndpoint.answer(provider) { try await introspect(request) }
        }
    }

    /// RFC 7009 §2: revoking a refresh token revokes its grant and every token of it;
    /// an access token is revoked alone. Unknown tokens, and tokens of other clients,
    /// get the same 200 so the endpoint reveals nothing.
    func revoke(_ request: Request) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        let client = try await provider.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        guard let token = parameters["token"] else { throw OAuthError.invalidRequest("The token parameter is missing.") }
        let now = provider.clock.now()
        if let (grant, _) = try await provider.store.refreshTokenGrant(tokenHash: tokenHash(token), now: now) {
            if grant.clientID == client.id { try await provider.store.revokeGrant(id: grant.id, now: now) }
        } else if let validated = try? await provider.accessTokens.validate(token), validated.clientID == client.id,
                  let jti = validated.token.jwtID, let expiry = validated.token.expiresAt {
            try await provider.store.revokeAccessToken(jti: jti, expiresAt: expiry)
        }
        var response = Response(status: .ok)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// RFC 7662 §2.2. Only confidential clients may introspect; a refresh token is
    /// active only for the client it was issued to.
    func introspect(_ request: Request) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        let client = try await provider.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        guard !client.isPublic else { throw OAuthError.invalidClient("Public clients cannot use token introspection.") }
        guard let token = parameters["token"] else { throw OAuthError.invalidRequest("The token parameter is missing.") }
        let now = provider.clock.now()
        var answer: [String: JSONValue] = ["active": false]
        if let validated = try? await provider.accessTokens.validate(token) {
            answer = validated.token.claims.filter { ["iss", "sub", "aud", "exp", "iat", "jti", "scope", "client_id", "auth_time"].contains($0.key) }
            answer["active"] = true
            answer["token_type"] = "Bearer"
        } else if let (grant, expiry) = try await provider.store.refreshTokenGrant(tokenHash: tokenHash(token), now: now),
                  grant.clientID == client.id {
            answer = ["active": true, "token_type": "refresh_token", "client_id": .string(grant.clientID),
                      "scope": .string(grant.scope.description), "exp": .int(expiry), "iss": .string(provider.issuer)]
            if let userID = grant.userID, let owner = try await provider.store.client(id: grant.clientID) {
                answer["sub"] = .string(provider.tokenIssuer.subject(userID: userID, client: owner))
            }
        }
        return try Responses.json(answer)
    }
}
