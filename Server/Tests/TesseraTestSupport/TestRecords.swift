import TesseraCore
import TesseraDomain
import TesseraSQL

/// The redirect URI of the test clients.
public let testRedirect = "https://app.example.com/callback"

extension SQLStore {
    /// A confidential client (`web` unless told) with ``testRedirect``.
    public func addClient(id: String = "web") async throws -> Client {
        let client = Client(id: id, name: "Web App", secretHash: "unused", authMethod: .clientSecretBasic, redirectURIs: [testRedirect],
                            grantTypes: [GrantType.authorizationCode, GrantType.refreshToken],
                            scopes: ScopeSet(["openid", "profile", "email", "offline_access"]), createdAt: 1)
        try await insert(client)
        return client
    }

    /// A user with a verified address and no password, as the store keeps it.
    public func addUser(email: String, name: String? = nil) async throws -> User {
        let user = User(id: SecureRandom.token(bytes: 16), email: email, emailVerified: true,
                        profile: name.map { ["name": .string($0)] } ?? [:], createdAt: 1, updatedAt: 1)
        try await insert(user)
        return try await self.user(id: user.id) ?? user
    }

    /// A grant of `user` at `web` (``testGrant(_:now:)``) with its first refresh token `token`.
    public func addFamily(_ user: User, token: String, now: Int64) async throws -> Grant {
        let grant = testGrant(user, now: now)
        try await insertGrant(grant, refreshToken: RefreshTokenRecord(tokenHash: token, grantID: grant.id, clientID: "web", expiresAt: now + 100))
        return grant
    }
}

/// A grant of `user` at `web`, made in browser session `sid-1`, for `openid offline_access`, for an hour.
public func testGrant(_ user: User, id: String = SecureRandom.token(), now: Int64) -> Grant {
    Grant(id: id, clientID: "web", userID: user.id, scope: ScopeSet(parsing: "openid offline_access"), authTime: now,
          amr: ["pwd"], sid: "sid-1", createdAt: now, expiresAt: now + 3600)
}

/// An authorization code of `user` for `web`, valid for a minute.
public func testCode(_ user: User, now: Int64) -> AuthorizationCodeRecord {
    AuthorizationCodeRecord(clientID: "web", userID: user.id, redirectURI: testRedirect, scope: ScopeSet(parsing: "openid"),
                            nonce: nil, codeChallenge: nil, authTime: now, amr: ["pwd"], sid: "sid-1", expiresAt: now + 60)
}
