import TesseraCore

/// Native SSO's device sessions (OpenID Connect Native SSO for Mobile Apps 1.0): a sign-in
/// that asked for `device_sso` starts one, its secret goes to the app with the tokens, and
/// the vendor's other apps on the device exchange it for their own. Ending it revokes the
/// grants of every app that joined.
package struct DeviceSessions: Sendable {
    let store: any CrossAppStore
    let families: TokenFamilies
    /// Seconds a device session lasts from its sign-in.
    let lifetime: Int64
    /// Hashes device secrets as ID tokens carry them (`ds_hash`).
    let issuer: TokenIssuer
    let audit: AuditTrail
    let clock: WallClock

    package init(store: any CrossAppStore & StoreTransactions, lifetime: Int64, issuer: TokenIssuer, audit: AuditTrail, clock: WallClock) {
        self.store = store
        self.families = TokenFamilies(store: store)
        self.lifetime = lifetime
        self.issuer = issuer
        self.audit = audit
        self.clock = clock
    }

    /// A new device session for `grant` when its scope has `device_sso` and its client belongs
    /// to a device SSO group: the grant joins it (its `sid` becomes the session's id), and the
    /// secret is returned once, for the token response.
    func start(for grant: inout Grant, client: Client) async throws -> (session: DeviceSession, secret: String)? {
        guard grant.scope.contains(ScopeCatalogue.deviceSSO), let group = client.deviceSSOGroup, let userID = grant.userID else { return nil }
        let now = clock.now()
        var session = DeviceSession(id: SecureRandom.token(bytes: 16), userID: userID, group: group, authTime: grant.authTime ?? now,
                                    amr: grant.amr, createdAt: now, expiresAt: now + lifetime)
        let secret = SecureRandom.token()
        session.dsHash = try issuer.halfHash(secret)
        try await store.insertDeviceSession(secretHash: tokenHash(secret), session)
        grant.sid = session.id
        grant.deviceSessionID = session.id
        return (session, secret)
    }

    /// The live device session a device secret proves.
    func session(secret: String) async throws -> DeviceSession? {
        try await store.deviceSession(secretHash: tokenHash(secret), now: clock.now())
    }

    /// The `ds_hash` of a grant's device session, for the ID tokens a refresh issues, read in the
    /// refresh's transaction; nil for a grant outside one (no read then).
    func dsHash(of grant: Grant, in tx: any CrossAppStore) async throws -> String? {
        guard let id = grant.deviceSessionID else { return nil }
        return try await tx.deviceSession(id: id, now: clock.now())?.dsHash
    }

    /// Ends a device session: every app that joined it loses its tokens.
    package func end(_ id: String, userID: String? = nil) async throws {
        if try await families.endDeviceSession(id: id, now: clock.now()) {
            await audit.record(.deviceSessionEnded, actor: .user, userID: userID, detail: "device session \(id)")
        }
    }

    /// Whether an ID token is one of a device session's (it carries `ds_hash` and `sid`).
    package static func names(_ idToken: JWT) -> Bool {
        idToken.claims["sid"]?.stringValue != nil && idToken.claims["ds_hash"] != nil
    }

    /// Ends the device session an ID token names, when it is one of a device session's:
    /// RP-initiated logout with it, confirmed, signs out every app of the group.
    package func end(signedOutWith idToken: JWT) async throws {
        guard Self.names(idToken), let sid = idToken.claims["sid"]?.stringValue else { return }
        try await end(sid)
    }

    /// Ends the device session a device secret proves (revocation of the secret, RFC 7009) for
    /// a client of its group. True when the secret was a live session's.
    package func end(secret: String, group: String) async throws -> Bool {
        guard let session = try await session(secret: secret), session.group == group else { return false }
        try await end(session.id, userID: session.userID)
        return true
    }
}

/// The token exchange of Native SSO (RFC 8693, Native SSO §4): an app of the same device SSO
/// group sends the ID token (`subject_token`) and the device secret (`actor_token`) another app
/// of the group received, and gets its own tokens for the same user, without any page.
package struct NativeSSOExchangeGrant: TokenGrant {
    package let grantType = GrantType.tokenExchange
    static let deviceSecretTypes: Set<String> = ["urn:openid:params:token-type:device-secret",
                                                 "urn:x-oath:params:oauth:token-type:device-secret"]
    let sessions: DeviceSessions
    let clients: any ClientStore
    let issuer: TokenIssuer
    let tokens: UserGrantTokens

    package init(sessions: DeviceSessions, clients: any ClientStore, issuer: TokenIssuer, tokens: UserGrantTokens) {
        self.sessions = sessions
        self.clients = clients
        self.issuer = issuer
        self.tokens = tokens
    }

    package func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let parameters = request.parameters, client = request.client
        guard let group = client.deviceSSOGroup else {
            throw OAuthError(.unauthorizedClient, "This client takes no part in Native SSO (register it with a device SSO group).")
        }
        guard let subjectToken = parameters["subject_token"] else { throw OAuthError.invalidRequest("subject_token (the ID token) is required.") }
        guard parameters["subject_token_type"] == UpstreamTokenExchangeGrant.idTokenType else {
            throw OAuthError.invalidRequest("subject_token_type must be \(UpstreamTokenExchangeGrant.idTokenType).")
        }
        guard let deviceSecret = parameters["actor_token"] else { throw OAuthError.invalidRequest("actor_token (the device secret) is required.") }
        if let requested = parameters["requested_token_type"], requested != UpstreamTokenExchangeGrant.accessTokenType {
            throw OAuthError.invalidRequest("requested_token_type can only be \(UpstreamTokenExchangeGrant.accessTokenType).")
        }
        if let audience = parameters["audience"], audience != issuer.issuer {
            throw OAuthError(OAuthError.Code(rawValue: "invalid_target"), "audience must be this provider's issuer, \(issuer.issuer).")
        }
        guard let requested = parameters["scope"] else { throw OAuthError.invalidRequest("The scope parameter is missing.") }
        let scope: ScopeSet
        do { scope = try ScopePolicy.withoutConsent(ScopeSet(parsing: requested), client: client) } catch { throw error.oauthError }

        guard let session = try await sessions.session(secret: deviceSecret) else {
            throw OAuthError.invalidGrant("The device secret is not valid: the device session ended or expired. Sign in again.")
        }
        guard session.group == group else { throw OAuthError.invalidGrant("The device session belongs to another group of apps.") }
        // The ID token must be one of this session's: signed here (expired or not), with its
        // `sid`, the hash of this very secret, and the session's user as its subject.
        guard let idToken = issuer.verifiedIDToken(subjectToken), idToken.claims["sid"]?.stringValue == session.id,
              idToken.claims["ds_hash"]?.stringValue == (try issuer.halfHash(deviceSecret)),
              let audience = idToken.audience.first, let issuedTo = try await clients.client(id: audience),
              idToken.subject == issuer.subject(userID: session.userID, client: issuedTo) else {
            throw OAuthError.invalidGrant("subject_token is not an ID token of this device session.")
        }
        // A device session never upgrades itself: its sign-in's factors are all a sibling gets.
        if client.requireMFA, !AuthenticationContext.satisfies(amr: session.amr, AuthenticationContext.multiFactor) {
            throw OAuthError.invalidGrant("This app requires a second factor and the device session was signed in without one: sign in to "
                                            + "this app (with its second factor) instead.")
        }
        let user = try await UserGrantTokens.account(session.userID, in: tokens.users)
        let now = issuer.clock.now()
        var (grant, refresh) = tokens.mint(client: client, userID: session.userID, scope: scope, authTime: session.authTime,
                                           amr: session.amr, sid: session.id, now: now)
        grant.deviceSessionID = session.id
        try await tokens.grants.insertGrant(grant, refreshToken: refresh?.record)
        var response = try await tokens.response(grant: grant, user: user, client: client, scope: scope, nonce: nil, refreshToken: refresh?.token,
                                                 dsHash: session.dsHash ?? (try issuer.halfHash(deviceSecret)))
        response.issuedTokenType = UpstreamTokenExchangeGrant.accessTokenType
        return response
    }
}

/// `urn:ietf:params:oauth:grant-type:token-exchange` carries two exchanges: Native SSO's
/// (an `actor_token` that is a device secret) and a native Sign in with Apple's (an
/// `upstream_provider`). The actor token's type decides.
package struct TokenExchangeGrant: TokenGrant {
    package let grantType = GrantType.tokenExchange
    let nativeSSO: NativeSSOExchangeGrant
    let upstream: UpstreamTokenExchangeGrant

    package init(nativeSSO: NativeSSOExchangeGrant, upstream: UpstreamTokenExchangeGrant) {
        self.nativeSSO = nativeSSO
        self.upstream = upstream
    }

    package func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        if let type = request.parameters["actor_token_type"] {
            guard NativeSSOExchangeGrant.deviceSecretTypes.contains(type) else {
                throw OAuthError.invalidRequest("actor_token_type must be urn:openid:params:token-type:device-secret (Native SSO).")
            }
            return try await nativeSSO.exchange(request)
        }
        return try await upstream.exchange(request)
    }

    /// Whether `client` may exchange at all: first-party clients (upstream identity tokens) and
    /// members of a device SSO group, without registering the grant type.
    package static func allows(_ client: Client) -> Bool {
        client.firstParty || client.deviceSSOGroup != nil
    }
}
