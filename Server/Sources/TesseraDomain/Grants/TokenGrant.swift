import TesseraCore

/// One `grant_type` at the token endpoint (RFC 6749 §4). Adding a grant is adding one
/// type that conforms and registering it in ``TokenEndpointGrants``.
public protocol TokenGrant: Sendable {
    var grantType: String { get }
    /// Exchanges an authenticated client's request for tokens.
    func exchange(_ request: TokenRequest) async throws -> TokenResponse
}

/// A request at a token endpoint, once its client is known (authenticated, or named by a
/// public client).
public struct TokenRequest: Sendable {
    public var parameters: RequestParameters
    public var client: Client
    /// The client address (its throttle key).
    public var address: String
    /// The language of anything the flow sends the user.
    public var language: PageLanguage

    public init(parameters: RequestParameters, client: Client, address: String, language: PageLanguage = .en) {
        self.parameters = parameters
        self.client = client
        self.address = address
        self.language = language
    }
}

/// The grants the token endpoint dispatches to, keyed by `grant_type`.
public struct TokenEndpointGrants: Sendable {
    let grants: [String: any TokenGrant]

    public init(_ grants: [any TokenGrant]) {
        self.grants = Dictionary(uniqueKeysWithValues: grants.map { ($0.grantType, $0) })
    }

    public var supported: [String] { grants.keys.sorted() }

    public func grant(for type: String) -> (any TokenGrant)? { grants[type] }

    /// Runs `grant`, counting the tokens it hands out.
    public func exchange(_ grant: any TokenGrant, _ request: TokenRequest) async throws -> TokenResponse {
        let response = try await grant.exchange(request)
        Signals.tokensIssued(grant: grant.grantType)
        return response
    }
}

/// Which of a user's claims a token or userinfo answer carries (OpenID Connect Core §5.4, §5.5).
/// A claim the user doesn't have is omitted, never null.
package enum UserClaims {
    /// Scopes whose claims the ID token carries by themselves: OpenID Connect's own. The
    /// rest of the catalogue goes to userinfo, or to the ID token when `claims` asks.
    static let idTokenScopes: Set<String> = ["profile", "email", "address", "phone"]

    static func idToken(of user: User, scopes: ScopeSet, requested: ClaimsRequest?) -> [String: JSONValue] {
        let names = ScopeCatalogue.claims(for: scopes.values.filter(idTokenScopes.contains))
            .union((requested?.idToken ?? [:]).keys)
        return pick(names, from: user)
    }

    package static func userinfo(of user: User, scopes: ScopeSet, requested: ClaimsRequest?) -> [String: JSONValue] {
        let names = ScopeCatalogue.claims(for: scopes.values).union((requested?.userinfo ?? [:]).keys)
        return pick(names, from: user)
    }

    static func pick(_ names: Set<String>, from user: User) -> [String: JSONValue] {
        let all = user.claims
        var claims: [String: JSONValue] = [:]
        for name in names where name != "sub" {
            if let value = all[name], value != .null { claims[name] = value }
        }
        return claims
    }
}

/// Issues the tokens of a user grant: access token, ID token when `openid` was
/// granted, refresh token when one was minted.
package struct UserGrantTokens: Sendable {
    let issuer: TokenIssuer
    let users: any UserStore
    let grants: any GrantStore
    /// Native SSO: a sign-in asking for `device_sso` starts a device session.
    let deviceSessions: DeviceSessions?
    let clock: WallClock

    package init(issuer: TokenIssuer, users: any UserStore, grants: any GrantStore, deviceSessions: DeviceSessions? = nil,
                 clock: WallClock) {
        self.issuer = issuer
        self.users = users
        self.grants = grants
        self.deviceSessions = deviceSessions
        self.clock = clock
    }

    /// A new grant for a user who signed in just now, without a browser session (a native
    /// flow, an email link, a native Apple sign-in), stored, and its tokens. With `device_sso`
    /// in the scope of a client in a device SSO group, a device session starts (Native SSO).
    package func issue(userID: String, amr: [String], scope: ScopeSet, client: Client) async throws -> TokenResponse {
        let user = try await Self.account(userID, in: users)
        let now = clock.now()
        var (grant, refresh) = mint(client: client, userID: userID, scope: scope, authTime: now, amr: amr,
                                    sid: SecureRandom.token(bytes: 16), now: now)
        let device = try await deviceSessions?.start(for: &grant, client: client)
        try await grants.insertGrant(grant, refreshToken: refresh?.record)
        return try await response(grant: grant, user: user, client: client, scope: scope, nonce: nil, refreshToken: refresh?.token,
                                  dsHash: device?.session.dsHash, deviceSecret: device?.secret)
    }

    /// A new grant of `client` for a user who just signed in, and its refresh token when the
    /// client gets one (``issuesRefreshToken(client:scope:)``). Every user grant starts here;
    /// the caller stores both in the write that consumes what the user proved (a code, a flow).
    func mint(client: Client, userID: String, scope: ScopeSet, claims: ClaimsRequest? = nil, authTime: Int64, amr: [String],
              sid: String, now: Int64) -> (grant: Grant, refresh: (token: String, record: RefreshTokenRecord)?) {
        let grant = Grant(id: SecureRandom.token(bytes: 16), clientID: client.id, userID: userID, scope: scope, claims: claims,
                          authTime: authTime, amr: amr, sid: sid, createdAt: now, expiresAt: now + issuer.refreshTokenLifetime)
        let refresh = issuesRefreshToken(client: client, scope: scope)
            ? issuer.refreshToken(grantID: grant.id, clientID: client.id, notAfter: grant.expiresAt) : nil
        return (grant, refresh)
    }

    /// The account tokens are issued for, which must exist and be enabled. Every grant reads it
    /// before (or in) the write that spends what the client presented, never after: the answer
    /// is then made without the database, and a database lost in between cannot turn a spent
    /// code or rotated token into a 503 whose retry is refused.
    static func account(_ userID: String?, in users: any UserStore) async throws -> User {
        guard let userID, let user = try await users.user(id: userID) else {
            throw OAuthError.invalidGrant("The user of this grant no longer exists.")
        }
        guard !user.isDisabled else { throw OAuthError.invalidGrant("The account is disabled.") }
        return user
    }

    /// The tokens of `grant` for `user` (read by ``account(_:in:)``). Native SSO: `dsHash`, the
    /// hash of the grant's device secret, goes into the ID token (`ds_hash`); `deviceSecret`, a
    /// new device session's secret, into the response.
    ///
    /// Signed on ``SigningThreads``, not on the request's event loop, which stays free for its
    /// other requests: the grants that get here (the code exchange, Native SSO, the native and
    /// email-link sign-ins) are rarer than refreshes and were not measured otherwise. The common
    /// refresh on PostgreSQL signs on its loop, where its answer came (``RefreshTokenGrant``).
    func response(grant: Grant, user: User, client: Client, scope: ScopeSet, nonce: String?, refreshToken: String?,
                  dsHash: String? = nil, deviceSecret: String? = nil) async throws -> TokenResponse {
        try await withTaskExecutorPreference(SigningThreads.executor) {
            try signedResponse(grant: grant, user: user, client: client, scope: scope, nonce: nonce, refreshToken: refreshToken,
                               dsHash: dsHash, deviceSecret: deviceSecret)
        }
    }

    /// The tokens of `grant` for `user`, signed on the calling thread: for a caller already on
    /// ``SigningThreads`` (``response(grant:user:client:scope:nonce:refreshToken:dsHash:deviceSecret:)``,
    /// ``RefreshTokenGrant``'s rotation in a transaction).
    func signedResponse(grant: Grant, user: User, client: Client, scope: ScopeSet, nonce: String?, refreshToken: String?,
                        dsHash: String? = nil, deviceSecret: String? = nil) throws -> TokenResponse {
        let subject = issuer.subject(userID: user.id, client: client)
        let access = try issuer.accessToken(subject: subject, clientID: client.id, scope: scope, grantID: grant.id,
                                            authTime: grant.authTime, amr: grant.amr)
        var idToken: String?
        if scope.contains(ScopeCatalogue.openid) {
            var claims = UserClaims.idToken(of: user, scopes: scope, requested: grant.claims)
            if let dsHash { claims["ds_hash"] = .string(dsHash) }
            if let asked = grant.claims?.idToken?["acr"] {
                claims["acr"] = .string(AuthenticationContext.achieved(amr: grant.amr, requested: asked?.stringValues ?? []))
            }
            idToken = try issuer.idToken(subject: subject, client: client, nonce: nonce, authTime: grant.authTime, amr: grant.amr,
                                         sid: grant.sid, accessToken: access.token, extraClaims: claims)
        }
        var response = TokenResponse(accessToken: access.token, expiresIn: Int(issuer.accessTokenLifetime), refreshToken: refreshToken,
                                     idToken: idToken, scope: scope.description)
        response.deviceSecret = deviceSecret
        return response
    }
}

/// Whether a refresh token goes with a new grant: the client must be allowed the
/// refresh_token grant, and either `offline_access` was granted or the request was
/// plain OAuth (no `openid`), where offline access is the client's own policy.
func issuesRefreshToken(client: Client, scope: ScopeSet) -> Bool {
    client.grantTypes.contains(GrantType.refreshToken)
        && (scope.contains(ScopeCatalogue.offlineAccess) || !scope.contains(ScopeCatalogue.openid))
}
