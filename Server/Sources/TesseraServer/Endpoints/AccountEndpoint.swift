import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// The user's own page at the provider: which apps they allowed to see what, and a
/// button to take each permission back (which also ends that app's refresh tokens).
struct AccountEndpoint {
    let services: Services

    func register(on router: Router<TesseraRequestContext>) {
        router.get("/account") { request, _ in try await account(request) }
        router.post("/account/login") { request, context in try await login(request, context) }
        router.post("/account/consents/revoke") { request, _ in try await revoke(request) }
        router.post("/account/reauth") { request, context in try await reauthenticate(request, context) }
        router.post("/account/reauth/link") { request, context in try await reauthenticationLink(request, context) }
        router.post("/account/login/link") { request, context in try await loginLink(request, context) }
        registerForms(on: router)
    }

    /// A form of the account page came without a valid CSRF token or session: it expired.
    func expiredPage(_ language: PageLanguage) -> Response {
        Responses.html(services.pages.error(language: language, error: OAuthError(.invalidRequest), intro: language.text(.sessionExpired)),
                       status: .badRequest)
    }

    func language(_ request: Request) -> PageLanguage {
        PageLanguage.negotiate(uiLocales: request.queryParameters["ui_locales"].map { [$0] } ?? [],
                               acceptLanguage: request.headers[.acceptLanguage])
    }

    func account(_ request: Request, message: String? = nil) async throws -> Response {
        let language = language(request)
        guard let (session, user) = try await BrowserSessions(services: services).signedIn(request) else {
            let (csrf, cookie) = services.csrf.token(for: request)
            var response = Responses.html(services.pages.login(language: language, action: "/account/login", clientName: nil,
                                                               interaction: nil, csrf: csrf, email: nil, message: message,
                                                               linkAction: "/account/login/link", passkeys: .account),
                                          status: message == nil ? .ok : .unauthorized)
            if let cookie { response.setCookie(cookie) }
            return response
        }
        let notice = request.uri.queryParameters["done"].flatMap { Self.notices[String($0)] }.map(language.text)
        return try await page(request, user, session: session, notice: notice)
    }

    func login(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request) else {
            return expiredPage(language)
        }
        switch try await BrowserSessions(services: services).signIn(form: form, request: request, context: context, then: "/account") {
        case .success(let response):
            return response
        case .failure(let failure):
            var response = try await account(request, message: language.text(failure.pageText))
            response.status = failure.status
            return response
        }
    }

    // MARK: Confirming it's you

    /// Nil when the browser's sign-in is recent enough for a sensitive change; otherwise the
    /// page that asks the user to sign in again (a stolen or forgotten session can't do it).
    func confirmItIsYou(_ request: Request, user: User, reason: PageLanguage.Key) async throws -> Response? {
        if let session = try await BrowserSessions(services: services).current(request),
           session.isRecent(now: services.clock.now(), within: services.configuration.reauthenticateAfter) { return nil }
        return reauthenticationPage(request, user: user, reason: reason, message: nil, status: .ok)
    }

    func reauthenticationPage(_ request: Request, user: User, reason: PageLanguage.Key?, message: String?,
                              status: HTTPResponse.Status) -> Response {
        let language = language(request)
        let (csrf, cookie) = services.csrf.token(for: request)
        var response = Responses.html(services.pages.reauthenticate(language: language, reason: reason, csrf: csrf,
                                                                    email: user.email, message: message), status: status)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// Runs `body` for a form post of the confirmation page with the session's user, or
    /// answers that the session expired (no session, or a form without a valid CSRF token).
    func confirmationPost(_ request: Request, _ body: (Request, User, RequestParameters, PageLanguage) async throws -> Response)
        async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request),
              let (_, user) = try await BrowserSessions(services: services).signedIn(request) else {
            return expiredPage(language)
        }
        return try await body(request, user, form, language)
    }

    /// The password again: a new session (a fresh `auth_time`), then back to the account page.
    func reauthenticate(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        try await confirmationPost(request) { request, user, form, language in
            // The account is the session's, whatever the form says.
            let origin = PasswordSignIn.Origin(address: context.addressKey, device: services.deviceCookies.device(in: request))
            switch try await services.passwordSignIn.signIn(email: user.email, password: form["password"] ?? "", from: origin) {
            case .success(let signedIn):
                if let page = try await SecondFactorPages(services: services).ask(userID: signedIn.id, amr: ["pwd"], next: .location("/account"),
                                                                                  request: request, language: language) {
                    return page
                }
                let (_, cookie) = try await BrowserSessions(services: services).create(userID: signedIn.id, amr: ["pwd"], replacing: request)
                var response = Responses.redirect("/account", status: .seeOther)
                response.setCookie(cookie)
                return response
            case .failure(let failure):
                // The address is the account's own: only the password can be wrong.
                let text = failure == .badCredentials ? language.text(.wrongPassword) : language.text(failure.pageText)
                return reauthenticationPage(request, user: user, reason: nil, message: text, status: failure.status)
            }
        }
    }

    /// A sign-in link to the account's address, which comes back to the account page.
    func reauthenticationLink(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        try await confirmationPost(request) { request, user, _, language in
            try await sendLink(to: user.email, context: context, language: language) {
                reauthenticationPage(request, user: user, reason: nil, message: language.text(.linkSendThrottled), status: .tooManyRequests)
            }
        }
    }

    /// "Email me a sign-in link" on the account page's own sign-in form, for people without a
    /// password (they signed up with a code, a link or a provider): the link signs them in and
    /// comes back here. As on the hosted login, an address without an account gets a link that
    /// creates it, so the answer tells nobody which addresses have accounts.
    func loginLink(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request) else {
            return expiredPage(language)
        }
        let email = MailAddress.normalise(form["email"] ?? "")
        guard MailAddress.isPlausible(email) else { return try await account(request, message: language.text(.enterEmail)) }
        return try await sendLink(to: email, context: context, language: language) {
            var page = try await account(request, message: language.text(.linkSendThrottled))
            page.status = .tooManyRequests
            return page
        }
    }

    /// Mails a sign-in link to `email` that comes back to the account page, and answers "check
    /// your email" with the cookie that recognises this browser when the link is opened here;
    /// `throttled` answers when too many links went to the address or from the network.
    func sendLink(to email: String, context: TesseraRequestContext, language: PageLanguage,
                  throttled: () async throws -> Response) async throws -> Response {
        let device = SecureRandom.token()
        let links = services.emailLinks
        let link = EmailLinks.SendRequest(email: email, continueURL: services.issuer + "/account", language: language,
                                          deviceHash: tokenHash(device))
        do {
            try await links.send(link, clientID: EmailLinks.accountClientID, clientAddress: context.addressKey)
        } catch FlowFailure.tooManyCodes {
            return try await throttled()
        }
        var response = Responses.html(services.pages.emailLinkSent(language: language, email: email, minutes: Int((links.lifetime + 59) / 60)))
        response.setCookie(EmailLinkEndpoints(services: services).deviceCookie(device, maxAge: Int(links.lifetime)))
        return response
    }

    func revoke(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard services.csrf.isValid(form["csrf_token"], request: request),
              let session = try await BrowserSessions(services: services).current(request), let clientID = form["client_id"] else {
            let language = language(request)
            return expiredPage(language)
        }
        try await services.accounts.withdrawConsent(userID: session.userID, clientID: clientID)
        return Responses.redirect("/account", status: .seeOther)
    }
}

/// One app on the account page.
struct AccountPageApp {
    var clientID: String
    var name: String
    /// `text` and, for sensitive scopes, `sensitive` (the tag).
    var scopes: [[String: Any]]
}
