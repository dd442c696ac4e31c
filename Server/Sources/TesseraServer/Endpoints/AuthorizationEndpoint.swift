import Crypto
import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// The browser-facing routes: the authorization endpoint and the hosted login and consent
/// pages that complete it (RFC 6749 §4.1.1–4.1.2, OpenID Connect Core §3.1.2).
struct AuthorizationEndpoint {
    let services: Services
    var authorizer: Authorizer { services.authorizer }
    var pages: PageRenderer { services.pages }

    func register(on router: Router<TesseraRequestContext>) {
        router.get(RouterPath(Endpoint.authorization.path)) { request, context in try await authorize(request, context) }
        router.post(RouterPath(Endpoint.authorization.path)) { request, context in try await authorize(request, context) }
        router.post("/login") { request, context in try await login(request, context) }
        router.post("/consent") { request, context in try await consent(request, context) }
    }

    func authorize(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let parameters: RequestParameters
        do { parameters = try await request.queryOrFormParameters() } catch let error as OAuthError {
            return errorPage(error, request: request, locales: [])
        }
        let locales = (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init)
        // A pushed request (RFC 9126): only client_id and request_uri count here.
        let pushed = parameters["request_uri"] != nil && !parameters.duplicates.contains("request_uri")
        let validated = if pushed, let requestURI = parameters["request_uri"] {
            try await authorizer.resolve(requestURI: requestURI, clientID: parameters["client_id"])
        } else {
            try await authorizer.validate(parameters)
        }
        switch validated {
        case .failure(.page(let error)):
            services.logger.info("authorization request refused", metadata: ["error": "\(error)"])
            return errorPage(error, request: request, locales: locales)
        case .failure(.redirect(let target, let error)):
            return try await respond(authorizer.respondError(target, error), request: request, locales: locales)
        case .success(let (authorization, client)):
            let session = try await BrowserSessions(services: services).current(request)
            // A pushed request counted as a sign-in started when it was pushed.
            let outcome = try await authorizer.decide(authorization, client: client, session: session, signedInNow: false,
                                                      address: pushed ? nil : context.addressKey)
            return try await respond(outcome, request: request, locales: locales)
        }
    }

    func login(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard let interaction = form["interaction"], let (authorization, client) = try await authorizer.pendingRequest(interaction) else {
            return expiredPage(request)
        }
        let language = language(for: request, locales: authorization.uiLocales)
        guard csrf.isValid(form["csrf_token"], request: request) else { return expiredPage(request, language: language) }
        let email = MailAddress.normalise(form["email"] ?? "")
        let user: User
        switch try await services.passwordSignIn.signIn(email: email, password: form["password"] ?? "",
                                                        from: .init(address: context.addressKey, device: services.deviceCookies.device(in: request))) {
        case .success(let found):
            user = found
        case .failure(let failure):
            return loginPage(authorization, client: client, interaction: interaction, request: request, email: email,
                             message: language.text(failure.pageText), status: failure.status)
        }
        var response = try await signedIn(userID: user.id, amr: ["pwd"], authorization, client: client, interaction: interaction,
                                          request: request)
        response.setCookie(services.deviceCookies.cookie(for: user.id))
        return response
    }

    /// A sign-in on the hosted pages succeeded: a new browser session, then the request goes
    /// on (consent, or back to the client).
    func signedIn(userID: String, amr: [String], _ authorization: AuthorizationRequest, client: Client, interaction: String,
                  request: Request) async throws -> Response {
        if let page = try await SecondFactorPages(services: services).ask(
            userID: userID, amr: amr, next: .authorization(interaction), client: client, authorization: authorization, request: request,
            language: language(for: request, locales: authorization.uiLocales)) {
            return page
        }
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: userID, amr: amr, replacing: request)
        let outcome = try await authorizer.decide(authorization, client: client, session: session, signedInNow: true, interaction: interaction)
        var response = try await respond(outcome, request: request, locales: authorization.uiLocales, afterPost: true, session: cookie.value)
        response.setCookie(cookie)
        if case .respond = outcome { try await authorizer.finish(interaction) }
        return response
    }

    func consent(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard let interaction = form["interaction"], let (authorization, client) = try await authorizer.pendingRequest(interaction),
              let signIn = authorizer.consentingSignIn(authorization, session: try await BrowserSessions(services: services).current(request)) else {
            return expiredPage(request)
        }
        guard csrf.isValid(form["csrf_token"], request: request) else {
            return expiredPage(request, language: language(for: request, locales: authorization.uiLocales))
        }
        let outcome = try await authorizer.consent(authorization, client: client, by: signIn, allowed: form["decision"] == "allow")
        try await authorizer.finish(interaction)
        return try await respond(outcome, request: request, locales: authorization.uiLocales, afterPost: true)
    }

    // MARK: Rendering

    var csrf: CSRF { services.csrf }

    /// `session`: the session cookie this answer sets, right after a sign-in (its forms are bound to it).
    func respond(_ outcome: AuthorizationOutcome, request: Request, locales: [String], afterPost: Bool = false,
                 session: String? = nil) async throws -> Response {
        switch outcome {
        case .errorPage(let error):
            return errorPage(error, request: request, locales: locales)
        case .respond(let target, let parameters):
            switch target.mode {
            case .query, .fragment:
                return Responses.redirect(appending(parameters, to: target.redirectURI, inFragment: target.mode == .fragment),
                                          status: afterPost ? .seeOther : .found)
            case .formPost:
                let nonce = SecureRandom.token(bytes: 16)
                let html = pages.formPost(language: language(for: request, locales: locales), action: target.redirectURI,
                                          fields: parameters, nonce: nonce)
                return Responses.html(html, scriptNonce: nonce, formTargets: [target.redirectURI])
            }
        case .login(let interaction, let authorization, let client):
            if authorization.prompt.contains("create") {
                return SignUpPages(services: services).firstPage(authorization, client: client, interaction: interaction, request: request,
                                                                 language: language(for: request, locales: authorization.uiLocales),
                                                                 email: nil, message: nil, status: .ok)
            }
            return loginPage(authorization, client: client, interaction: interaction, request: request,
                             email: authorization.loginHint, message: nil, status: .ok)
        case .secondFactor(let interaction, let authorization, let client, let user, let requirement):
            // A session too weak for this request: its person steps up, from what it has.
            let amr = try await BrowserSessions(services: services).current(request)?.amr ?? []
            let pending = PendingSecondFactor(userID: user.id, amr: amr, issuedAt: services.clock.now(), next: .authorization(interaction))
            return try await SecondFactorPages(services: services).page(pending, user: user, requirement: requirement, clientName: client.name,
                                                                        request: request,
                                                                        language: language(for: request, locales: authorization.uiLocales))
        case .consent(let interaction, let authorization, let client, let user, let scopes, let essential):
            let (csrf, cookie) = csrf.token(for: request, session: session)
            let html = pages.consent(language: language(for: request, locales: authorization.uiLocales), clientName: client.name,
                                     interaction: interaction, csrf: csrf, email: user.email, scopes: scopes, essential: essential)
            var response = Responses.html(html, formTargets: [authorization.redirectURI])
            if let cookie { response.setCookie(cookie) }
            return response
        }
    }

    func loginPage(_ authorization: AuthorizationRequest, client: Client, interaction: String, request: Request,
                   email: String?, message: String?, status: HTTPResponse.Status) -> Response {
        let (csrf, cookie) = csrf.token(for: request)
        let language = language(for: request, locales: authorization.uiLocales)
        // Today a passkey is the one way to reach what such a request demands (phr, phrh, mfa).
        let intro = authorization.demandsStrongerSignIn ? language.text(.passkeyRequired) : nil
        let html = pages.login(language: language, clientName: client.name, intro: intro,
                               interaction: interaction, csrf: csrf, email: email, message: message,
                               linkAction: EmailLinkEndpoints.loginPath, codeAction: LoginCodeEndpoints.startPath,
                               resetAction: PasswordResetPages.startPath, signUpAction: SignUpPages.startPath,
                               providers: services.federation.loginProviders, passkeys: .login)
        var response = Responses.html(html, status: status,
                                      formTargets: [authorization.redirectURI] + services.federation.ordered.map(\.authorizationOrigin))
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func errorPage(_ error: OAuthError, request: Request, locales: [String]) -> Response {
        Responses.html(pages.error(language: language(for: request, locales: locales), error: error), status: .badRequest)
    }

    func expiredPage(_ request: Request, language: PageLanguage? = nil) -> Response {
        let language = language ?? self.language(for: request, locales: [])
        let error = OAuthError(.invalidRequest)
        return Responses.html(pages.error(language: language, error: error, intro: language.text(.sessionExpired)), status: .badRequest)
    }

    func language(for request: Request, locales: [String]) -> PageLanguage {
        PageLanguage.negotiate(uiLocales: locales, acceptLanguage: request.headers[.acceptLanguage])
    }
}

/// CSRF protection for the hosted forms: a random value in an `HttpOnly; SameSite=Lax` cookie,
/// and in each form a token derived from it and from the browser's session,
/// `HMAC(key, cookie | SHA-256(session cookie))`, which the form must echo.
///
/// A plain double-submit (the form echoes the cookie) fails when an attacker can plant the
/// cookie: a sibling subdomain can set a cookie for the parent domain. Here a planted cookie
/// is useless without the server's key, and a token the attacker obtained in their own
/// browser is bound to their session, not the victim's. With an https issuer the cookie is
/// `__Host-` prefixed, which browsers accept only from this very host, `Secure`, on `/`.
package struct CSRF {
    package let key: SymmetricKey
    package let secure: Bool

    var cookieName: String { secure ? "__Host-tessera_csrf" : "tessera_csrf" }

    /// The token for the forms of a page answering `request`, and the cookie to set if the
    /// browser has none. `session` is the session cookie the browser will send with the form,
    /// when the page is the answer that sets it (right after a sign-in); else the request's.
    package func token(for request: Request, session: String? = nil) -> (String, Cookie?) {
        let binding = session ?? request.cookies[BrowserSessions.cookieName(secure: secure)]?.value
        if let existing = request.cookies[cookieName]?.value, existing.count >= 32 {
            return (formToken(existing, session: binding), nil)
        }
        let value = SecureRandom.token()
        return (formToken(value, session: binding),
                Cookie(name: cookieName, value: value, path: "/", secure: secure, httpOnly: true, sameSite: .lax))
    }

    /// Whether a form's `csrf_token` belongs to this browser's cookie and session.
    package func isValid(_ submitted: String?, request: Request) -> Bool {
        guard let submitted, let cookie = request.cookies[cookieName]?.value, cookie.count >= 32 else { return false }
        let expected = formToken(cookie, session: request.cookies[BrowserSessions.cookieName(secure: secure)]?.value)
        return constantTimeEquals(Array(submitted.utf8), Array(expected.utf8))
    }

    package func formToken(_ cookie: String, session: String?) -> String {
        let binding = (session?.isEmpty ?? true) ? "" : tokenHash(session!)
        let mac = HMAC<SHA256>.authenticationCode(for: Data((cookie + "|" + binding).utf8), using: key)
        return Base64URL.encode(Data(mac))
    }
}

/// Device cookies (OWASP's defence against lockout as a weapon): a browser where a user signed
/// in with their password gets a cookie naming that user, signed by the provider. Later
/// attempts from that browser count against it alone, not against the account's or the
/// address's limits, so an attacker's wrong guesses elsewhere never lock the owner out of a
/// browser they use. The cookie carries no secret of the user's; it says "this browser".
package struct DeviceCookies {
    package let key: SymmetricKey
    package let secure: Bool
    static let lifetime = 180 * 86_400

    var name: String { secure ? "__Host-tessera_device" : "tessera_device" }

    /// The device the request's cookie proves, if its signature holds.
    package func device(in request: Request) -> KnownDevice? {
        guard let value = request.cookies[name]?.value, value.count <= 256 else { return nil }
        let parts = value.split(separator: ".")
        guard parts.count == 3 else { return nil }
        let (user, id) = (String(parts[0]), String(parts[1]))
        guard constantTimeEquals(Array(signature(user: user, id: id).utf8), Array(parts[2].utf8)) else { return nil }
        return KnownDevice(userID: user, id: id)
    }

    /// A new device cookie for `userID`, set when they sign in with their password.
    func cookie(for userID: String) -> Cookie {
        let id = SecureRandom.token(bytes: 16)
        return Cookie(name: name, value: "\(userID).\(id).\(signature(user: userID, id: id))", maxAge: Self.lifetime, path: "/",
                      secure: secure, httpOnly: true, sameSite: .lax)
    }

    func signature(user: String, id: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data("device-cookie|\(user)|\(id)".utf8), using: key)))
    }
}

extension PasswordSignIn.Failure {
    /// What a hosted page says about a failed sign-in.
    var pageText: PageLanguage.Key {
        switch self {
        case .badCredentials: .badCredentials
        case .throttled: .throttled
        case .busy: .busy
        case .disabled: .accountDisabled
        }
    }

    var status: HTTPResponse.Status {
        switch self {
        case .badCredentials: .unauthorized
        case .throttled: .tooManyRequests
        case .busy: .serviceUnavailable
        case .disabled: .forbidden
        }
    }
}

/// The provider's browser session cookie. With an https issuer it is `__Host-` prefixed:
/// browsers then take it only from this very host, `Secure`, on `/`, so neither a sibling
/// subdomain nor a plain-http page can plant or overwrite it (session fixation).
package struct BrowserSessions {
    package static func cookieName(secure: Bool) -> String { secure ? "__Host-tessera_session" : "tessera_session" }
    let services: Services
    var cookieName: String { Self.cookieName(secure: services.configuration.secureCookies) }

    func current(_ request: Request) async throws -> BrowserSession? {
        guard let value = request.cookies[cookieName]?.value, !value.isEmpty else { return nil }
        return try await services.sessions.session(token: value)
    }

    /// The browser's session and its user, when it is signed in.
    func signedIn(_ request: Request) async throws -> (session: BrowserSession, user: User)? {
        guard let session = try await current(request), let user = try await services.accounts.user(of: session) else { return nil }
        return (session, user)
    }

    /// A new session for a browser that just signed in. The session the browser had before
    /// (its cookie, if any) ends: one browser, one live session row, and a cookie value that
    /// leaked before the sign-in is worth nothing after it.
    func create(userID: String, amr: [String], replacing request: Request) async throws -> (BrowserSession, Cookie) {
        let device = SessionDevice(userAgent: request.headers[.userAgent], address: RequestOrigin.address)
        let (session, token) = try await services.sessions.start(userID: userID, amr: amr, device: device,
                                                                  replacing: request.cookies[cookieName]?.value)
        return (session, cookie(token, maxAge: Int(services.configuration.sessionLifetime)))
    }

    /// A sign-in by a form of the provider's own pages (the account page, the admin console):
    /// on success a redirect to `destination` setting the session and device cookies.
    func signIn(form: RequestParameters, request: Request, context: TesseraRequestContext,
                then destination: String) async throws -> Result<Response, PasswordSignIn.Failure> {
        let origin = PasswordSignIn.Origin(address: context.addressKey, device: services.deviceCookies.device(in: request))
        switch try await services.passwordSignIn.signIn(email: form["email"] ?? "", password: form["password"] ?? "", from: origin) {
        case .success(let user):
            let language = PageLanguage.negotiate(uiLocales: [], acceptLanguage: request.headers[.acceptLanguage])
            if var page = try await SecondFactorPages(services: services).ask(userID: user.id, amr: ["pwd"], next: .location(destination),
                                                                              request: request, language: language) {
                page.setCookie(services.deviceCookies.cookie(for: user.id))
                return .success(page)
            }
            let (_, cookie) = try await create(userID: user.id, amr: ["pwd"], replacing: request)
            var response = Responses.redirect(destination, status: .seeOther)
            response.setCookie(cookie)
            response.setCookie(services.deviceCookies.cookie(for: user.id))
            return .success(response)
        case .failure(let failure):
            return .failure(failure)
        }
    }

    func cookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(name: cookieName, value: value, maxAge: maxAge, path: "/", secure: services.configuration.secureCookies,
               httpOnly: true, sameSite: .lax)
    }

    /// A cookie that removes the session cookie.
    var clearingCookie: Cookie { cookie("", maxAge: 0) }
}
