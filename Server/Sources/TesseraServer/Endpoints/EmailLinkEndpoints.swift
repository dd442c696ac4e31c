import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// Email-link sign-in over HTTP: the app API (`/emaillink/v1.0/send`, `/complete`, in the
/// native API's style), the link itself (`/emaillink/v1.0/signin`, a hosted page when it
/// opens in a browser), "email me a link" on the login page, and the association files
/// that make the link open the app.
package struct EmailLinkEndpoints {
    let services: Services
    var links: EmailLinks { services.emailLinks }
    var pages: PageRenderer { services.pages }
    var native: NativeAuthEndpoints { NativeAuthEndpoints(services: services) }

    static let loginPath = "/login/emaillink"
    /// Marks the browser that asked for a link, so that opening it there needs no retyping.
    package static let deviceCookie = "tessera_link_device"

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(TesseraPath.emailLinkSend)) { request, context in
            await native.answer(request, context, at: nil) { parameters, caller in try await send(parameters, caller: caller) }
        }
        router.post(RouterPath(TesseraPath.emailLinkComplete)) { request, context in
            await native.answer(request, context, at: nil) { parameters, caller in try await complete(parameters, caller: caller, request: request) }
        }
        router.get(RouterPath(EmailLinks.linkPath)) { request, _ in try await open(request) }
        router.post(RouterPath(EmailLinks.linkPath)) { request, _ in try await confirm(request) }
        router.post(RouterPath(Self.loginPath)) { request, context in try await loginLink(request, context) }
        router.get("/.well-known/apple-app-site-association") { _, _ in try await appleAssociation() }
        router.get("/.well-known/assetlinks.json") { _, _ in try await androidAssetLinks() }
    }

    // MARK: The app API

    /// `/emaillink/v1.0/send`: `email`, `continue_url`, `handle_code_in_app`, `ios_bundle_id`,
    /// `android_package_name`, `android_install_app`, `android_minimum_version`, `ui_locales`.
    func send(_ parameters: RequestParameters, caller: FlowCaller) async throws -> Response {
        let email = MailAddress.normalise(try NativeAuthWire.required(parameters, "email"))
        guard MailAddress.isPlausible(email) else {
            throw NativeAuthError("invalid_request", "The email parameter is empty or not valid: it must be an email address.",
                                  suberror: "invalid_email", errorCodes: [90100])
        }
        var request = EmailLinks.SendRequest(email: email, continueURL: parameters["continue_url"], iosBundleID: parameters["ios_bundle_id"],
                                             androidPackageName: parameters["android_package_name"],
                                             androidMinimumVersion: parameters["android_package_name"] == nil ? nil : parameters["android_minimum_version"],
                                             language: caller.language)
        request.handleInApp = try flag(parameters, "handle_code_in_app")
        request.androidInstallApp = try flag(parameters, "android_install_app")
        do { try await links.send(request, from: caller.client, clientAddress: caller.address) } catch let problem as EmailLinks.SettingsProblem {
            throw Self.error(for: problem)
        }
        return Responses.json(try CanonicalJSON.encode(EmailLinkSendAnswer(email: email, expiresIn: links.lifetime)))
    }

    /// `/emaillink/v1.0/complete`: `email` and `oob_code` (or the whole `link`), `scope`;
    /// `operation` `link` or `reauthenticate` with the signed-in user's bearer access token.
    func complete(_ parameters: RequestParameters, caller: FlowCaller, request: Request) async throws -> Response {
        let email = try NativeAuthWire.required(parameters, "email")
        let code = try oobCode(parameters)
        let scope = try ScopePolicy.flowScope(parameters["scope"], client: caller.client)
        guard let record = try await links.link(code: code, for: caller.client.id) else {
            throw Self.invalidCode
        }
        let operation: EmailLinkOperation
        switch parameters["operation"] ?? "signIn" {
        case "signIn": operation = .signIn(newUser: links.newUser(language: record.language))
        case "link": operation = .link(userID: try await signedInUser(request, client: caller.client))
        case "reauthenticate": operation = .reauthenticate(userID: try await signedInUser(request, client: caller.client))
        case let other: throw NativeAuthError.invalidRequest("operation must be signIn, link or reauthenticate, not '\(other)'.")
        }
        let outcome: EmailLinkRedemption
        do { outcome = try await links.redeem(code: code, email: email, operation: operation) } catch .unavailable(let outage) {
            throw outage
        } catch {
            throw Self.error(for: error)
        }
        let user: User, isNew: Bool
        switch outcome {
        case .signedIn(let signedIn, let new, _): (user, isNew) = (signedIn, new)
        case .linked(let linked): (user, isNew) = (linked, false)
        case .reauthenticated(let same): (user, isNew) = (same, false)
        default: throw Self.invalidCode
        }
        // A second factor, when the person or the app wants one, goes on at the native API (mfa_required).
        try await services.flows.signIn.requireSecondFactor(SignedIn(userID: user.id, amr: ["email"]), caller: caller)
        var tokens = try await services.userTokens.issue(userID: user.id, amr: ["email"], scope: scope, client: caller.client)
        tokens.isNewUser = isNew
        tokens.email = user.email
        return Responses.json(try CanonicalJSON.encode(tokens))
    }

    static let invalidCode = NativeAuthError("invalid_grant", "The link is not valid: it was already used, or belongs to another app.",
                                             suberror: "invalid_oob_code")

    static func error(for problem: EmailLinks.Problem) -> NativeAuthError {
        switch problem {
        case .unusable(let expired):
            expired ? NativeAuthError("invalid_grant", "The link has expired. Ask for a new one.", suberror: "expired_oob_code") : invalidCode
        case .emailMismatch(let left):
            NativeAuthError("invalid_grant", "The email address is not the one the link was sent to."
                                + (left > 0 ? " \(left) attempt\(left == 1 ? "" : "s") left." : " The link no longer works."),
                            suberror: "invalid_email")
        case .credentialInUse:
            NativeAuthError("credential_already_in_use", "This email address belongs to another account; nothing was changed.")
        case .userMismatch:
            NativeAuthError("user_mismatch", "The link was sent to another address than the signed-in user's.")
        case .unavailable:
            NativeAuthWire.unavailable
        }
    }

    static func error(for problem: EmailLinks.SettingsProblem) -> NativeAuthError {
        switch problem {
        case .continueURLNotAllowed:
            NativeAuthError("invalid_request", "continue_url must be an https URL on a domain registered for this client "
                                + "(a redirect URI's host or a --link-domain).", suberror: "unauthorized_continue_uri")
        case .continueURLRequired:
            NativeAuthError.invalidRequest("continue_url is required when handle_code_in_app is true: it is where the link "
                                           + "goes when the app isn't installed.")
        case .unknownIOSApp(let bundle):
            NativeAuthError.invalidRequest("ios_bundle_id '\(bundle)' is not an iOS app registered for this client (--ios-app).")
        case .unknownAndroidApp(let package):
            NativeAuthError.invalidRequest("android_package_name '\(package)' is not an Android app registered for this client (--android-app).")
        }
    }

    /// `oob_code`, or the one inside `link` (the URL the app was opened with).
    func oobCode(_ parameters: RequestParameters) throws -> String {
        if let code = parameters["oob_code"] { return code }
        // The code is in the link's query, or in its fragment when a web app put it there.
        guard let link = parameters["link"], let components = URLComponents(string: link) else {
            throw NativeAuthError.invalidRequest("Send the oob_code parameter, or the link the app was opened with as link.")
        }
        let items = (components.queryItems ?? []) + (URLComponents(string: "?" + (components.fragment ?? ""))?.queryItems ?? [])
        guard let code = items.first(where: { $0.name == "oob_code" })?.value else {
            throw NativeAuthError.invalidRequest("The link has no oob_code: send the link the app was opened with, or oob_code.")
        }
        if let mode = items.first(where: { $0.name == "mode" })?.value, mode != "signIn" {
            throw NativeAuthError.invalidRequest("The link is not a sign-in link (mode=\(mode)).")
        }
        return code
    }

    /// The user of the request's bearer access token, which must have been issued to this client.
    func signedInUser(_ request: Request, client: Client) async throws -> String {
        guard let token = request.bearerToken else {
            throw NativeAuthError("invalid_token", "This operation needs the signed-in user's access token (Authorization: Bearer).", status: 401)
        }
        do {
            let validated = try await services.accessTokens.validate(token)
            guard let grant = validated.grant, grant.clientID == client.id, let userID = grant.userID else {
                throw OAuthError(.invalidToken, "The access token was not issued to this client for a user.")
            }
            return userID
        } catch let error as OAuthError {
            throw NativeAuthError("invalid_token", error.errorDescription ?? "The access token is not valid.", status: 401)
        }
    }

    func flag(_ parameters: RequestParameters, _ name: String) throws -> Bool {
        switch parameters[name]?.lowercased() {
        case nil, "false", "0": return false
        case "true", "1": return true
        case let other?: throw NativeAuthError.invalidRequest("\(name) must be true or false, not '\(other)'.")
        }
    }

    // MARK: The link in a browser

    /// GET of the link. It never signs in by itself (mail scanners open links): it sends an
    /// app's link on to its `continue_url`, or shows a page whose button completes it.
    func open(_ request: Request) async throws -> Response {
        let language = language(request)
        guard let code = request.queryParameters["oob_code"], let record = try await links.usableLink(code: code) else {
            return invalidLinkPage(language)
        }
        if record.handleInApp, let continueURL = record.continueURL {
            // The app isn't installed (or this isn't the phone): its web fallback finishes the sign-in.
            let parameters = [("mode", "signIn"), ("oob_code", code), ("lang", record.language)]
            return Responses.redirect(appending(parameters, to: continueURL, inFragment: false), status: .seeOther)
        }
        return try await confirmPage(request, code: code, record: record, language: language, message: nil, status: .ok)
    }

    /// POST of the link page: checks the address (asked for on another device), signs in and
    /// resumes the authorization request the link came from.
    func confirm(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return expiredPage(language) }
        guard let code = form["oob_code"], let record = try await links.usableLink(code: code) else { return invalidLinkPage(language) }
        let sameDevice = isSameDevice(request, record: record)
        var email: String?
        if !sameDevice {
            guard let typed = form["email"], !typed.trimmingCharacters(in: .whitespaces).isEmpty else {
                return try await confirmPage(request, code: code, record: record, language: language, message: language.text(.enterEmail),
                                   status: .badRequest)
            }
            email = typed
        }
        let outcome: EmailLinkRedemption
        do {
            outcome = try await links.redeem(code: code, email: email, operation: .signIn(newUser: links.newUser(language: record.language)))
        } catch .emailMismatch(let left) {
            guard left > 0 else { return invalidLinkPage(language) }
            return try await confirmPage(request, code: code, record: record, language: language, message: language.text(.linkEmailMismatch),
                               status: .badRequest)
        } catch .unavailable(let outage) {
            throw outage
        } catch {
            return invalidLinkPage(language)
        }
        guard case .signedIn(let user, _, _) = outcome else { return invalidLinkPage(language) }
        if var page = try await SecondFactorPages(services: services).ask(
            userID: user.id, amr: ["email"], interaction: record.interaction,
            otherwise: record.continueURL.map { .location($0) } ?? .signedIn, request: request, language: language) {
            page.setCookie(deviceCookie("", maxAge: 0))
            return page
        }
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: user.id, amr: ["email"], replacing: request)
        var response = try await afterSignIn(record: record, session: session, cookie: cookie.value, request: request, language: language)
        response.setCookie(cookie)
        response.setCookie(deviceCookie("", maxAge: 0))
        return response
    }

    /// Where the browser goes once signed in: back into the authorization request, to the
    /// app's `continue_url`, or to a page that says it's done.
    func afterSignIn(record: EmailLinkRecord, session: BrowserSession, cookie: String, request: Request,
                     language: PageLanguage) async throws -> Response {
        let authorization = AuthorizationEndpoint(services: services)
        if let interaction = record.interaction, let (pending, client) = try await services.authorizer.pendingRequest(interaction) {
            let outcome = try await services.authorizer.decide(pending, client: client, session: session, signedInNow: true,
                                                               interaction: interaction)
            if case .respond = outcome { try await services.authorizer.finish(interaction) }
            return try await authorization.respond(outcome, request: request, locales: pending.uiLocales, afterPost: true, session: cookie)
        }
        if record.interaction == nil, let continueURL = record.continueURL {
            return Responses.redirect(continueURL, status: .seeOther)
        }
        return Responses.html(pages.message(language: language, title: .signedInTitle, message: .signedIn))
    }

    /// "Email me a link" on the hosted login page: the link resumes this authorization request.
    func loginLink(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let authorization = AuthorizationEndpoint(services: services)
        guard let interaction = form["interaction"], let (pending, client) = try await services.authorizer.pendingRequest(interaction) else {
            return authorization.expiredPage(request)
        }
        let language = authorization.language(for: request, locales: pending.uiLocales)
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return authorization.expiredPage(request, language: language) }
        let email = MailAddress.normalise(form["email"] ?? "")
        guard MailAddress.isPlausible(email) else {
            return authorization.loginPage(pending, client: client, interaction: interaction, request: request, email: form["email"],
                                           message: language.text(.enterEmail), status: .badRequest)
        }
        let device = SecureRandom.token()
        let sendRequest = EmailLinks.SendRequest(email: email, language: language, interaction: interaction, deviceHash: tokenHash(device))
        do {
            try await links.send(sendRequest, clientID: client.id, clientAddress: context.addressKey)
        } catch FlowFailure.tooManyCodes {
            return authorization.loginPage(pending, client: client, interaction: interaction, request: request, email: email,
                                           message: language.text(.linkSendThrottled), status: .tooManyRequests)
        }
        var response = Responses.html(pages.emailLinkSent(language: language, email: email, minutes: Int((links.lifetime + 59) / 60)))
        response.setCookie(deviceCookie(device, maxAge: Int(links.lifetime)))
        return response
    }

    func confirmPage(_ request: Request, code: String, record: EmailLinkRecord, language: PageLanguage, message: String?,
                     status: HTTPResponse.Status) async throws -> Response {
        let (csrf, cookie) = services.csrf.token(for: request)
        let html = pages.emailLinkConfirm(language: language, action: EmailLinks.linkPath, oobCode: code, csrf: csrf,
                                          email: isSameDevice(request, record: record) ? record.email : nil, message: message)
        // The form's answer redirects to the app: CSP form-action must allow where it goes.
        var targets: [String] = record.continueURL.map { [$0] } ?? []
        if let interaction = record.interaction, let (pending, _) = try await services.authorizer.pendingRequest(interaction) {
            targets.append(pending.redirectURI)
        }
        var response = Responses.html(html, status: status, formTargets: targets)
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func isSameDevice(_ request: Request, record: EmailLinkRecord) -> Bool {
        guard let expected = record.deviceHash, let value = request.cookies[Self.deviceCookie]?.value, !value.isEmpty else { return false }
        return constantTimeEquals(Array(tokenHash(value).utf8), Array(expected.utf8))
    }

    func deviceCookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(name: Self.deviceCookie, value: value, maxAge: maxAge, path: "/", secure: services.configuration.secureCookies,
               httpOnly: true, sameSite: .lax)
    }

    func invalidLinkPage(_ language: PageLanguage) -> Response {
        Responses.html(pages.message(language: language, title: .linkInvalidTitle, message: .linkInvalid), status: .badRequest)
    }

    func expiredPage(_ language: PageLanguage) -> Response {
        Responses.html(pages.message(language: language, title: .linkInvalidTitle, message: .sessionExpired), status: .badRequest)
    }

    func language(_ request: Request) -> PageLanguage {
        let lang = request.queryParameters["lang"].map { [$0] } ?? []
        return PageLanguage.negotiate(uiLocales: lang, acceptLanguage: request.headers[.acceptLanguage])
    }

    // MARK: Association files

    /// Apple's universal links: every registered iOS app opens the sign-in links; first-party
    /// apps share the issuer's credentials.
    func appleAssociation() async throws -> Response {
        let (authenticators, others, credentials) = try await services.clients.appleAppIDs()
        let emailLinks: JSONValue = .object(["/": .string("/emaillink/*"), "comment": "Tessera email sign-in links"])
        var details: [JSONValue] = []
        if !authenticators.isEmpty {
            // First: iOS takes the first entry that matches an app. A partner's request link opens
            // the authenticator app, and the browser (the hosted login) where it is not installed.
            details.append(.object([
                "appIDs": .array(authenticators.map(JSONValue.string)),
                "components": .array([
                    .object(["/": .string(Endpoint.authorization.path), "?": .object(["request_uri": "*"]),
                             "comment": "Partner apps' sign-in requests, approved in the authenticator app"]),
                    emailLinks,
                ]),
            ]))
        }
        if !others.isEmpty {
            details.append(.object([
                "appIDs": .array(others.map(JSONValue.string)),
                "components": .array([emailLinks]),
            ]))
        }
        let document: JSONValue = .object([
            "applinks": .object(["details": .array(details)]),
            "webcredentials": .object(["apps": .array(credentials.map(JSONValue.string))]),
        ])
        return DiscoveryEndpoint.publicJSON(try CanonicalJSON.encode(document))
    }

    /// Android's app links (Digital Asset Links), for first-party apps only.
    func androidAssetLinks() async throws -> Response {
        let apps = try await services.clients.firstPartyAndroidApps()
        let statements: [JSONValue] = apps.map { app in
            .object([
                "relation": .array(["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"]),
                "target": .object(["namespace": "android_app", "package_name": .string(app.packageName),
                                   "sha256_cert_fingerprints": .array(app.certificateFingerprints.map(JSONValue.string))]),
            ])
        }
        return DiscoveryEndpoint.publicJSON(try CanonicalJSON.encode(JSONValue.array(statements)))
    }
}
