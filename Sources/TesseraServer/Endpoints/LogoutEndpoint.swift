import Hummingbird
import TesseraCore
import TesseraDomain

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2–3).
///
/// The provider logs out without asking only when an `id_token_hint` proves the request
/// comes from a client of the current session; otherwise the user confirms on a page
/// (a CSRF-protected form), so a third-party page can't sign anyone out.
struct LogoutEndpoint {
    let provider: Provider

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(Endpoint.endSession.path)) { request, _ in try await logout(request) }
        router.post(RouterPath(Endpoint.endSession.path)) { request, _ in try await logout(request) }
    }

    func logout(_ request: Request) async throws -> Response {
        var request = request
        let pages = provider.pages
        let parameters: RequestParameters
        do { parameters = try await request.queryOrFormParameters() } catch let error as OAuthError {
            return Responses.html(pages.error(language: .en, error: error), status: .badRequest)
        }
        let locales = (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init)
        let language = PageLanguage.negotiate(uiLocales: locales, acceptLanguage: request.headers[.acceptLanguage])
        func refuse(_ message: String) -> Response {
            Responses.html(pages.error(language: language, error: .invalidRequest(message)), status: .badRequest)
        }

        var hint: JWT?
        if let value = parameters["id_token_hint"] {
            guard let jwt = provider.authorizer.idTokenHint(value) else {
                return refuse("id_token_hint is not an ID token issued by this provider.")
            }
            hint = jwt
        }
        var clientID = parameters["client_id"]
        if let hint {
            guard let audience = hint.audience.first else { return refuse("id_token_hint has no audience.") }
            if let clientID, !hint.audience.contains(clientID) { return refuse("client_id does not match id_token_hint.") }
            clientID = audience
        }
        let redirect = parameters["post_logout_redirect_uri"]
        if let redirect {
            guard let clientID, let client = try await provider.clients.client(id: clientID) else {
                return refuse("post_logout_redirect_uri needs id_token_hint or client_id.")
            }
            guard client.postLogoutRedirectURIs.contains(redirect) else {
                return refuse("post_logout_redirect_uri is not registered for this client.")
            }
        }

        let sessions = BrowserSessions(provider: provider)
        let session = try await sessions.current(request)
        let confirmed = request.method == .post && parameters["confirm"] == "yes" && provider.csrf.isValid(parameters["csrf_token"], request: request)
        let hintMatches = session != nil && hint?.claims["sid"]?.stringValue == session?.sid
        // A hint of a Native SSO device session would sign out every app of the vendor on the
        // device: anyone holding such an ID token (expired ones are accepted as hints) could
        // send it. So it ends the device session only from the browser signed in with that very
        // session, or once the person confirms, as for the browser session.
        let endsDeviceSession = hint.map(DeviceSessions.names) ?? false
        if session != nil || endsDeviceSession, !confirmed, !hintMatches {
            let (csrf, cookie) = provider.csrf.token(for: request)
            var response = Responses.html(pages.logout(language: language, csrf: csrf, clientID: clientID,
                                                       postLogoutRedirectURI: redirect, state: parameters["state"],
                                                       idTokenHint: hint == nil ? nil : parameters["id_token_hint"]),
                                          formTargets: redirect.map { [$0] } ?? [])
            if let cookie { response.setCookie(cookie) }
            return response
        }
        if let session { try await provider.sessions.end(session) }
        if let hint { try await provider.deviceSessions.end(signedOutWith: hint) }

        var response: Response
        if let redirect {
            var query: [(String, String)] = []
            if let state = parameters["state"] { query.append(("state", state)) }
            response = Responses.redirect(query.isEmpty ? redirect : appending(query, to: redirect, inFragment: false), status: .seeOther)
        } else {
            response = Responses.html(pages.loggedOut(language: language))
        }
        response.setCookie(sessions.clearingCookie)
        return response
    }
}
