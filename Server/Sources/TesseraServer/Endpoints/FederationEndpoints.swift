import Foundation
import Hummingbird
import TesseraAuthCore
import TesseraCore
import TesseraDomain

/// Sign-in through upstream providers in the browser: the login page's buttons, the
/// providers' callbacks (Apple's is a form POST), the page where an existing account's owner
/// proves it before an identity is linked, the account page's connect/disconnect/delete, and
/// Sign in with Apple's server-to-server notifications.
struct FederationEndpoints {
    let services: Services
    var federation: Federation { services.federation }
    var pages: PageRenderer { services.pages }
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }

    static let notificationsPath = "/federation/apple/notifications"
    /// Binds a federated sign-in to the browser that started it.
    static let browserCookie = "tessera_federation"

    func register(on router: Router<TesseraRequestContext>) {
        router.post("/login/federated/:provider") { request, context in try await start(request, context) }
        router.get("/federation/:provider/callback") { request, context in try await callback(request, context) }
        router.post("/federation/:provider/callback") { request, context in try await callback(request, context) }
        router.post("/federation/link") { request, context in try await link(request, context) }
        router.post("/account/identities/connect/:provider") { request, context in try await connect(request, context) }
        router.post("/account/identities/remove") { request, _ in try await remove(request) }
        router.post("/account/delete") { request, _ in try await deleteAccount(request) }
        router.post(RouterPath(Self.notificationsPath)) { request, _ in try await appleNotification(request) }
    }

    /// The login page's button: remembers the authorization request and goes to the provider.
    func start(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard let interaction = form["interaction"], let (pending, _) = try await services.authorizer.pendingRequest(interaction) else {
            return authorization.expiredPage(request)
        }
        let language = authorization.language(for: request, locales: pending.uiLocales)
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return authorization.expiredPage(request, language: language) }
        guard let upstream = federation.upstreams[context.parameters.get("provider") ?? ""] else {
            return Responses.html(pages.error(language: language, error: OAuthError.invalidRequest("Unknown sign-in provider.")), status: .notFound)
        }
        return try await redirect(to: upstream, interaction: interaction, linkUserID: nil, language: language,
                                  origin: (context.addressKey, pending.clientID))
    }

    /// Sends the browser to `upstream`, once `origin` (the client address and the client the
    /// sign-in is for) may start another sign-in (``WorkLimits``): each start stores a request.
    func redirect(to upstream: Upstream, interaction: String?, linkUserID: String?, language: PageLanguage,
                  origin: (address: String, client: String)) async throws -> Response {
        do {
            try await services.workLimits.admit(.flow, address: origin.address, client: origin.client, now: services.clock.now())
        } catch let outage as DatabaseUnavailable {
            throw outage
        } catch {
            return Responses.html(pages.message(language: language, title: .errorTitle, message: .tooManyStarted), status: .tooManyRequests)
        }
        do {
            let browser = SecureRandom.token()
            let url = try await federation.start(upstream, interaction: interaction, linkUserID: linkUserID, browser: browser)
            var response = Responses.redirect(url.absoluteString, status: .seeOther)
            response.setCookie(Cookie(name: Self.browserCookie, value: browser, maxAge: Int(federation.requestLifetime), path: "/federation",
                                      secure: services.configuration.secureCookies, httpOnly: true, sameSite: .lax))
            return response
        } catch let outage as DatabaseUnavailable {
            throw outage
        } catch {
            services.logger.error("could not start a federated sign-in", metadata: ["provider": "\(upstream.id)", "error": "\(error)"])
            return failurePage(language, cancelled: false, status: .badGateway)
        }
    }

    /// The provider's answer: GET for OpenID providers; Apple's is a cross-site form POST,
    /// which carries no `SameSite=Lax` cookie of ours, so it is turned into a GET of the same
    /// URL — a top-level navigation, which does carry the cookie that binds the request to the
    /// browser that started it.
    func callback(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let language = authorization.language(for: request, locales: [])
        guard let upstream = federation.upstreams[context.parameters.get("provider") ?? ""] else {
            return failurePage(language, cancelled: false, status: .notFound)
        }
        if request.method == .post {
            let form = try await request.formParameters()
            let pairs = ["state", "code", "error", "user"].compactMap { name in form[name].map { (name, $0) } }
            return Responses.redirect(upstream.redirectURI + "?" + RequestParameters.encode(pairs), status: .seeOther)
        }
        let parameters = request.queryParameters
        let outcome: Federation.Outcome
        do {
            outcome = try await federation.callback(upstream, parameters: parameters, browser: request.cookies[Self.browserCookie]?.value)
        } catch .upstreamError(let error) {
            return failurePage(language, cancelled: error == "access_denied" || error == "user_cancelled_authorize", status: .badRequest)
        } catch .identityInUse {
            return Responses.html(pages.message(language: language, title: .errorTitle, message: .identityInUse), status: .conflict)
        } catch .unavailable(let outage) {
            throw outage
        } catch {
            services.logger.info("federated sign-in refused", metadata: ["provider": "\(upstream.id)", "error": "\(error)"])
            return failurePage(language, cancelled: false, status: .badRequest)
        }
        var response = try await respond(outcome, request: request, language: language)
        // The browser got here from the provider's login form: redirects on from here would be
        // checked against the provider's CSP form-action, so the last step is a page.
        if [.found, .seeOther].contains(response.status), let location = response.headers[.location] {
            let cookies = response.headers[values: .setCookie]
            response = Responses.html(pages.continuePage(language: language, url: location))
            response.headers[values: .setCookie] = cookies
        }
        return response
    }

    func respond(_ outcome: Federation.Outcome, request: Request, language: PageLanguage) async throws -> Response {
        switch outcome {
        case .signedIn(let user, let interaction, _):
            return try await signIn(user, interaction: interaction, request: request, language: language)
        case .connected:
            return Responses.redirect("/account", status: .seeOther)
        case .needsProof(let token, let user, let upstream, let interaction):
            return try await linkPage(request, language: language, token: token, user: user, providerName: upstream.settings.name,
                                      interaction: interaction, message: nil, status: .ok)
        }
    }

    /// A browser session for the user, then back into the authorization request.
    func signIn(_ user: User, interaction: String?, request: Request, language: PageLanguage) async throws -> Response {
        if let page = try await SecondFactorPages(services: services).ask(userID: user.id, amr: ["fed"], interaction: interaction,
                                                                          otherwise: .signedIn, request: request, language: language) {
            return page
        }
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: user.id, amr: ["fed"], replacing: request)
        var response: Response
        if let interaction, let (pending, client) = try await services.authorizer.pendingRequest(interaction) {
            let outcome = try await services.authorizer.decide(pending, client: client, session: session, signedInNow: true,
                                                               interaction: interaction)
            if case .respond = outcome { try await services.authorizer.finish(interaction) }
            response = try await authorization.respond(outcome, request: request, locales: pending.uiLocales, afterPost: true,
                                             session: cookie.value)
        } else {
            response = Responses.html(pages.message(language: language, title: .signedInTitle, message: .signedIn))
        }
        response.setCookie(cookie)
        return response
    }

    /// The owner of the account with the upstream's address signs in to link the identity.
    func link(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = authorization.language(for: request, locales: [])
        guard services.csrf.isValid(form["csrf_token"], request: request), let token = form["link_token"],
              let (pending, owner) = try await federation.pendingLink(token: token) else {
            return authorization.expiredPage(request, language: language)
        }
        let name = federation.upstreams[pending.identity.providerID]?.settings.name ?? pending.identity.providerID
        switch try await services.passwordSignIn.signIn(email: owner.email, password: form["password"] ?? "",
                                                        from: .init(address: context.addressKey, device: services.deviceCookies.device(in: request))) {
        case .success(let user):
            guard try await federation.completeLink(pending, token: token, signedIn: user) else {
                return Responses.html(pages.message(language: language, title: .errorTitle, message: .identityInUse), status: .conflict)
            }
            return try await signIn(user, interaction: pending.interaction, request: request, language: language)
        case .failure(let failure):
            return try await linkPage(request, language: language, token: token, user: owner, providerName: name,
                                      interaction: pending.interaction, message: language.text(failure.pageText),
                                      status: failure.status)
        }
    }

    func linkPage(_ request: Request, language: PageLanguage, token: String, user: User, providerName: String, interaction: String?,
                  message: String?, status: HTTPResponse.Status) async throws -> Response {
        let (csrf, cookie) = services.csrf.token(for: request)
        let html = pages.federationLink(language: language, providerName: providerName, email: user.email,
                                        hasPassword: user.passwordHash != nil, linkToken: token, csrf: csrf, message: message)
        // The form's answer may redirect to the client: CSP form-action must allow it.
        var targets: [String] = []
        if let interaction, let (authorization, _) = try await services.authorizer.pendingRequest(interaction) {
            targets.append(authorization.redirectURI)
        }
        var response = Responses.html(html, status: status, formTargets: targets)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func failurePage(_ language: PageLanguage, cancelled: Bool, status: HTTPResponse.Status) -> Response {
        Responses.html(pages.message(language: language, title: .errorTitle, message: cancelled ? .federationCancelled : .federationFailed),
                       status: status)
    }

    // MARK: The account page

    func signedIn(_ request: Request, form: RequestParameters) async throws -> User? {
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return nil }
        return try await BrowserSessions(services: services).signedIn(request)?.user
    }

    func connect(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = authorization.language(for: request, locales: [])
        guard let user = try await signedIn(request, form: form) else { return authorization.expiredPage(request, language: language) }
        guard let upstream = federation.upstreams[context.parameters.get("provider") ?? ""] else {
            return failurePage(language, cancelled: false, status: .notFound)
        }
        if let confirm = try await AccountEndpoint(services: services).confirmItIsYou(request, user: user, reason: .reauthConnect) {
            return confirm
        }
        return try await redirect(to: upstream, interaction: nil, linkUserID: user.id, language: language,
                                  origin: (context.addressKey, "account"))
    }

    func remove(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = authorization.language(for: request, locales: [])
        guard let user = try await signedIn(request, form: form) else { return authorization.expiredPage(request, language: language) }
        guard try await federation.removeIdentities(of: user, providerID: form["provider"] ?? "") else {
            return Responses.html(pages.message(language: language, title: .accountIdentities, message: .accountLastWay), status: .conflict)
        }
        return Responses.redirect("/account", status: .seeOther)
    }

    func deleteAccount(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = authorization.language(for: request, locales: [])
        guard let user = try await signedIn(request, form: form) else { return authorization.expiredPage(request, language: language) }
        guard form["confirm"] == "DELETE" else {
            return Responses.html(pages.message(language: language, title: .accountDelete, message: .accountDeleteMistyped), status: .badRequest)
        }
        if let confirm = try await AccountEndpoint(services: services).confirmItIsYou(request, user: user, reason: .reauthDelete) {
            return confirm
        }
        try await federation.deleteUser(user, by: .user)
        var response = Responses.html(pages.message(language: language, title: .accountDelete, message: .accountDeleted))
        response.setCookie(BrowserSessions(services: services).clearingCookie)
        return response
    }

    // MARK: Sign in with Apple server-to-server notifications

    /// `{"payload": JWS}` signed by Apple; `events` (a JSON string) says what happened to a
    /// user's Apple ID with this app.
    func appleNotification(_ request: Request) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: maxFormBody)
        func refuse(_ why: String) -> Response {
            services.logger.warning("Apple notification refused", metadata: ["reason": "\(why)"])
            return Responses.json((try? CanonicalJSON.encode(["error": "invalid_request", "error_description": why])) ?? Data(), status: .badRequest)
        }
        guard let body = try? JSONDecoder().decode([String: JSONValue].self, from: Data(buffer: buffer)),
              let payload = body["payload"]?.stringValue else { return refuse("the body must be {\"payload\": JWS}") }
        do {
            try await federation.appleNotification(payload: payload)
            return Response(status: .ok)
        } catch .malformed(let why), .notFromApple(let why) {
            return refuse(why)
        } catch .stale {
            return refuse("the notification is too old (iat more than \(Federation.notificationMaxAge) s ago) or has expired")
        } catch .replayed {
            return refuse("the notification was already applied")
        } catch .unavailable {
            // Apple sends a notification again when it is not acknowledged.
            return Outage.oauth()
        }
    }
}
