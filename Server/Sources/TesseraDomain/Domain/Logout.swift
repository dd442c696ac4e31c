import TesseraCore

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2–3): what a logout request
/// may name, and whether the person must confirm it.
///
/// The provider signs out without asking only when an `id_token_hint` proves the request comes
/// from a client of the current session; otherwise the person confirms (the endpoint's
/// CSRF-protected form), so a third-party page can't sign anyone out.
package struct Logout: Sendable {
    let tokenIssuer: TokenIssuer
    let clients: any ClientStore
    let sessions: Sessions
    let deviceSessions: DeviceSessions

    package init(tokenIssuer: TokenIssuer, clients: any ClientStore, sessions: Sessions, deviceSessions: DeviceSessions) {
        self.tokenIssuer = tokenIssuer
        self.clients = clients
        self.sessions = sessions
        self.deviceSessions = deviceSessions
    }

    /// A logout request's parameters, and whether the person confirmed it (a valid form post).
    package struct Request: Sendable {
        package var idTokenHint: String?
        package var clientID: String?
        package var postLogoutRedirectURI: String?
        package var confirmed: Bool

        package init(idTokenHint: String?, clientID: String?, postLogoutRedirectURI: String?, confirmed: Bool) {
            self.idTokenHint = idTokenHint
            self.clientID = clientID
            self.postLogoutRedirectURI = postLogoutRedirectURI
            self.confirmed = confirmed
        }
    }

    package enum Outcome: Sendable, Equatable {
        /// Ask the person first; nothing has ended. `clientID`: the client the request names
        /// (or its hint's audience).
        case confirm(clientID: String?)
        /// Signed out: to `redirect` (a registered post-logout redirect URI), or the provider's page.
        case signedOut(redirect: String?)
    }

    /// Checks the request, then signs out (the browser's `session`, and the Native SSO device
    /// session a hint names) or says the person must confirm. Throws `invalid_request` for a
    /// request naming what it may not.
    package func perform(_ request: Request, session: BrowserSession?) async throws -> Outcome {
        var hint: JWT?
        if let value = request.idTokenHint {
            guard let jwt = tokenIssuer.verifiedIDToken(value) else {
                throw OAuthError.invalidRequest("id_token_hint is not an ID token issued by this provider.")
            }
            hint = jwt
        }
        var clientID = request.clientID
        if let hint {
            guard let audience = hint.audience.first else { throw OAuthError.invalidRequest("id_token_hint has no audience.") }
            if let clientID, !hint.audience.contains(clientID) { throw OAuthError.invalidRequest("client_id does not match id_token_hint.") }
            clientID = audience
        }
        if let redirect = request.postLogoutRedirectURI {
            guard let clientID, let client = try await clients.client(id: clientID) else {
                throw OAuthError.invalidRequest("post_logout_redirect_uri needs id_token_hint or client_id.")
            }
            guard client.postLogoutRedirectURIs.contains(redirect) else {
                throw OAuthError.invalidRequest("post_logout_redirect_uri is not registered for this client.")
            }
        }
        let hintMatches = session != nil && hint?.claims["sid"]?.stringValue == session?.sid
        // A hint of a Native SSO device session would sign out every app of the vendor on the
        // device: anyone holding such an ID token (expired ones are accepted as hints) could
        // send it. So it ends the device session only from the browser signed in with that very
        // session, or once the person confirms, as for the browser session.
        let endsDeviceSession = hint.map(DeviceSessions.names) ?? false
        if session != nil || endsDeviceSession, !request.confirmed, !hintMatches {
            return .confirm(clientID: clientID)
        }
        if let session { try await sessions.end(session) }
        if let hint { try await deviceSessions.end(signedOutWith: hint) }
        return .signedOut(redirect: request.postLogoutRedirectURI)
    }
}
