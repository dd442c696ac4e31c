import Foundation
import TesseraCore

extension OIDCClient {
    // MARK: Hand-off (seamless sign-in from the authenticator app)

    /// Signs in the person an authenticator app handed over in `deepLink` (its `handoff_ticket`),
    /// without any page when the provider needs none: the authorization request goes over HTTP
    /// with `prompt=none`, and its redirect is read here. When the person must consent first, the
    /// same ticket (left unused by the provider) is opened with `userAgent`, which shows only the
    /// consent page. Returns nil when the link carries no ticket.
    ///
    /// Throws ``AuthError`` with OAuth `login_required` for a ticket that is used, expired or
    /// for another app: sign the person in the usual way.
    public func signIn(handoffFrom deepLink: URL, request: AuthRequest? = nil,
                       using userAgent: any ExternalUserAgent) async throws -> AuthorizationResult? {
        guard let ticket = HandoffLink.ticket(in: deepLink) else { return nil }
        var request = request ?? makeRequest()
        request.handoffTicket = ticket
        if let result = try await silentAuthorize(request) { return result }
        return try await authorize(request, using: userAgent)
    }

    /// The authorization request sent over HTTP with `prompt=none`, its redirect read without a
    /// browser. Nil when the provider answers `consent_required`, `login_required` or
    /// `interaction_required`: the request needs a page.
    public func silentAuthorize(_ request: AuthRequest) async throws -> AuthorizationResult? {
        var silent = request
        silent.prompt = "none"
        let url = try await authorizationURL(for: silent)
        var outgoing = HTTPTransportRequest(url: url, headers: ["Accept": "text/html"])
        outgoing.followsRedirects = false
        let answer = try await transport.send(outgoing)
        guard (300..<400).contains(answer.status), let location = answer.headers["location"],
              let redirect = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw AuthError.invalidResponse("the authorization endpoint answered HTTP \(answer.status) instead of a redirect",
                                            httpStatus: answer.status)
        }
        // A hand-off ticket the provider refused is the caller's to know; otherwise a sign-in needs a page too.
        var needsPage: [OAuthError.Code] = [.consentRequired, .interactionRequired]
        if request.handoffTicket == nil { needsPage.append(.loginRequired) }
        do {
            let response = try await self.response(from: redirect, for: silent)
            if let error = response.oauthError, needsPage.contains(error.code) { return nil }
            return try await exchangeCode(response, request: silent)
        } catch let error as AuthError where error.oauthError.map({ needsPage.contains($0.code) }) == true {
            return nil
        }
    }

    // MARK: Native SSO (OpenID Connect Native SSO for Mobile Apps 1.0)

    /// The token-exchange types of Native SSO.
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let deviceSecretType = "urn:openid:params:token-type:device-secret"

    /// Signs this app in from the device session another app of the vendor shared
    /// (``TokenSet/deviceSession``, read from the store the apps share): the ID token and the
    /// device secret are exchanged for this app's own tokens, without any page (RFC 8693).
    /// The result keeps the device secret, so this app can share the session further.
    public func signIn(deviceSession: TokenSet, scope requested: String? = nil) async throws -> AuthorizationResult {
        guard let idToken = deviceSession.idToken, let secret = deviceSession.deviceSecret else {
            throw AuthError(.notSignedIn, "the shared device session has no ID token and device secret")
        }
        if let issuer = deviceSession.issuer, issuer != configuration.issuerIdentifier {
            throw AuthError(.configuration, "the shared device session is of issuer \(issuer), not \(configuration.issuerIdentifier)")
        }
        let scope = requested ?? configuration.scope
        let metadata = try await discover()
        let receivedAt = now()
        var token = try await tokenRequest([
            ("grant_type", GrantType.tokenExchange), ("subject_token", idToken), ("subject_token_type", Self.idTokenType),
            ("actor_token", secret), ("actor_token_type", Self.deviceSecretType), ("scope", scope), ("audience", metadata.issuer),
        ])
        token.deviceSecret = token.deviceSecret ?? secret
        var validated: IDToken?
        if let raw = token.idToken { validated = try await validateIDToken(raw, nonce: nil, accessToken: token.accessToken) }
        let tokens = TokenSet(response: token, receivedAt: receivedAt, issuer: configuration.issuerIdentifier,
                              clientID: configuration.clientID)
        return AuthorizationResult(tokens: tokens, idToken: validated)
    }

    /// Ends the device session: every app that signed in from it loses its tokens. Any app of the
    /// group may do it (signing out "on this device").
    public func endDeviceSession(_ deviceSession: TokenSet) async throws {
        guard let secret = deviceSession.deviceSecret else { return }
        try await revoke(secret, typeHint: .deviceSecret)
    }
}

extension AuthState {
    /// Saves the session's device session (Native SSO) to `shared`, the store the vendor's apps
    /// share (a `KeychainTokenStore` with their keychain access group; a ``FileTokenStore`` on
    /// Linux and in macOS command-line programs).
    ///
    /// - Throws: ``AuthError/Code/notSignedIn`` when nobody is signed in;
    ///   ``AuthError/Code/configuration`` when the sign-in brought no device secret: its request did
    ///   not ask for the `device_sso` scope, or the client is in no device SSO group.
    public func shareDeviceSession(in shared: any TokenStore) async throws {
        guard let tokens else { throw AuthError(.notSignedIn, "nobody is signed in: there is no device session to share") }
        guard let session = tokens.deviceSession else {
            throw AuthError(.configuration, "the sign-in brought no device secret to share: ask for the device_sso scope "
                                + "(makeRequest(scope: \"openid … device_sso\")), with a client the operator registered in a device "
                                + "SSO group (--device-sso-group)")
        }
        try await shared.save(session)
    }

    /// Signs in from the device session in `shared`, if another app of the vendor left one there;
    /// nil when there is none.
    public func signIn(fromDeviceSessionIn shared: any TokenStore, scope: String? = nil) async throws -> AuthUser? {
        guard let session = try await shared.load(), session.deviceSecret != nil else { return nil }
        return try await adopt(try await client.signIn(deviceSession: session, scope: scope))
    }

    /// Signs out of every app of the vendor on this device: ends the device session at the
    /// provider, forgets the shared copy, and signs this app out.
    public func signOutEverywhereOnDevice(shared: any TokenStore) async throws {
        if let session = try await shared.load() ?? tokens?.deviceSession {
            try await client.endDeviceSession(session)
        }
        try await shared.remove()
        try await signOut()
    }
}
