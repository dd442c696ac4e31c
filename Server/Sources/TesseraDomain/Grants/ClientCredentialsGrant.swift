import TesseraCore

/// `client_credentials` (RFC 6749 §4.4): a confidential client acting for itself.
/// No refresh token and no ID token; the access token's `sub` is the client id.
public struct ClientCredentialsGrant: TokenGrant {
    public let grantType = GrantType.clientCredentials
    let issuer: TokenIssuer

    package init(issuer: TokenIssuer) {
        self.issuer = issuer
    }

    public func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let parameters = request.parameters, client = request.client
        guard !client.isPublic else {
            throw OAuthError(.unauthorizedClient, "Public clients cannot use the client_credentials grant.")
        }
        let scope: ScopeSet
        do { scope = try ScopePolicy.clientCredentials(parameters["scope"].map { ScopeSet(parsing: $0) }, client: client) } catch {
            throw error.oauthError
        }
        let access = try issuer.accessToken(subject: client.id, clientID: client.id, scope: scope, grantID: nil, authTime: nil, amr: [])
        return TokenResponse(accessToken: access.token, expiresIn: Int(issuer.accessTokenLifetime),
                             scope: scope.isEmpty ? nil : scope.description)
    }
}
