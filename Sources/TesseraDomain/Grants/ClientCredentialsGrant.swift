import TesseraCore

/// `client_credentials` (RFC 6749 §4.4): a confidential client acting for itself.
/// No refresh token and no ID token; the access token's `sub` is the client id.
public struct ClientCredentialsGrant: TokenGrant {
    public let grantType = GrantType.clientCredentials
    let issuer: TokenIssuer

    package init(issuer: TokenIssuer) {
        self.issuer = issuer
    }

    public func exchange(_ parameters: RequestParameters, client: Client) async throws -> TokenResponse {
        guard !client.isPublic else {
            throw OAuthError(.unauthorizedClient, "Public clients cannot use the client_credentials grant.")
        }
        var scope = client.scopes.subtracting(ScopeSet([ScopeCatalogue.openid, ScopeCatalogue.offlineAccess]))
        if let requested = parameters["scope"].map({ ScopeSet(parsing: $0) }) {
            if requested.contains(ScopeCatalogue.openid) || requested.contains(ScopeCatalogue.offlineAccess) {
                throw OAuthError(.invalidScope, "openid and offline_access need a user; client_credentials has none.")
            }
            guard requested.isSubset(of: client.scopes) else {
                throw OAuthError(.invalidScope, "The client is not allowed the scope \(requested.subtracting(client.scopes)).")
            }
            scope = requested
        }
        let access = try issuer.accessToken(subject: client.id, clientID: client.id, scope: scope, grantID: nil, authTime: nil, amr: [])
        return TokenResponse(accessToken: access.token, expiresIn: Int(issuer.accessTokenLifetime),
                             scope: scope.isEmpty ? nil : scope.description)
    }
}
