import Hummingbird
import TesseraCore
import TesseraDomain

/// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2–3): the parameters, the
/// confirmation form and the answer; what a request may do is ``Logout``.
struct LogoutEndpoint {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(Endpoint.endSession.path)) { request, _ in try await logout(request) }
        router.post(RouterPath(Endpoint.endSession.path)) { request, _ in try await logout(request) }
    }

    func logout(_ request: Request) async throws -> Response {
        var request = request
        let pages = services.pages
        let parameters: RequestParameters
        do { parameters = try await request.queryOrFormParameters() } catch let error as OAuthError {
            return Responses.html(pages.error(language: .en, error: error), status: .badRequest)
        }
        let locales = (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init)
        let language = PageLanguage.negotiate(uiLocales: locales, acceptLanguage: request.headers[.acceptLanguage])
        let redirect = parameters["post_logout_redirect_uri"]
        let sessions = BrowserSessions(services: services)
        let session = try await sessions.current(request)
        let confirmed = request.method == .post && parameters["confirm"] == "yes" && services.csrf.isValid(parameters["csrf_token"], request: request)
        let outcome: Logout.Outcome
        do {
            outcome = try await services.logout.perform(Logout.Request(idTokenHint: parameters["id_token_hint"], clientID: parameters["client_id"],
                                                                       postLogoutRedirectURI: redirect, confirmed: confirmed),
                                                        session: session)
        } catch let error as OAuthError where error.code == .invalidRequest {
            return Responses.html(pages.error(language: language, error: error), status: .badRequest)
        }
        if case .confirm(let clientID) = outcome {
            let (csrf, cookie) = services.csrf.token(for: request)
            var response = Responses.html(pages.logout(language: language, csrf: csrf, clientID: clientID,
                                                       postLogoutRedirectURI: redirect, state: parameters["state"],
                                                       idTokenHint: parameters["id_token_hint"]),
                                          formTargets: redirect.map { [$0] } ?? [])
            if let cookie { response.setCookie(cookie) }
            return response
        }

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
