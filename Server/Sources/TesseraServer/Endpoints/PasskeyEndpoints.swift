import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// Passkeys on the hosted pages (``Passkeys``): signing in with one on the login page (the
/// button and the browser's suggestions in the address field), and adding, renaming and
/// removing them on the account page.
///
/// Each ceremony is two posts from the page's script (`/assets/passkeys.js`): the options
/// (JSON, with a new challenge), then the form with what the authenticator answered
/// (`credential`, WebAuthn's JSON), answered like every other form of the page. Both carry the
/// page's CSRF token.
struct PasskeyEndpoints {
    let services: Services
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }
    var account: AccountEndpoint { AccountEndpoint(services: services) }

    static let loginOptionsPath = "/login/passkey/options"
    static let loginPath = "/login/passkey"
    static let accountLoginOptionsPath = "/account/login/passkey/options"
    static let accountLoginPath = "/account/login/passkey"
    static let registrationOptionsPath = "/account/passkeys/options"
    static let registrationPath = "/account/passkeys"
    static let renamePath = "/account/passkeys/rename"
    static let removePath = "/account/passkeys/remove"

    /// What a sign-in challenge from the account page's own sign-in form is bound to.
    static let accountBinding = "account"

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.loginOptionsPath)) { request, context in
            if let refused = try await admitChallenge(context) { return refused }
            return try await loginOptions(request)
        }
        router.post(RouterPath(Self.loginPath)) { request, context in try await login(request, context) }
        router.post(RouterPath(Self.accountLoginOptionsPath)) { request, context in
            if let refused = try await admitChallenge(context) { return refused }
            return try await accountLoginOptions(request)
        }
        router.post(RouterPath(Self.accountLoginPath)) { request, _ in try await accountLogin(request) }
        router.post(RouterPath(Self.registrationOptionsPath)) { request, context in
            if let refused = try await admitChallenge(context) { return refused }
            return try await registrationOptions(request)
        }
        router.post(RouterPath(Self.registrationPath)) { request, context in
            try await account.form(request, context, registerPasskey)
        }
        router.post(RouterPath(Self.renamePath)) { request, context in try await account.form(request, context, renamePasskey) }
        router.post(RouterPath(Self.removePath)) { request, context in try await account.form(request, context, removePasskey) }
    }

    /// The JSON answer of an options request that can't be served: `error` and what to tell the person.
    static func refusal(_ status: HTTPResponse.Status, _ code: String, _ description: String, location: String? = nil) -> Response {
        var body: [String: String] = ["error": code, "error_description": description]
        if let location { body["location"] = location }
        return Responses.json((try? CanonicalJSON.encode(body)) ?? Data(), status: status)
    }

    /// Each challenge is a stored row until it expires: asking for one counts as a sign-in
    /// started from the client address (``WorkLimits``), so nobody can fill the table. Nil
    /// when admitted, else the `slow_down` answer.
    func admitChallenge(_ context: TesseraRequestContext) async throws -> Response? {
        do {
            try await services.workLimits.admit(.flow, address: context.addressKey, client: "hosted-pages", now: services.clock.now())
            return nil
        } catch let exceeded as WorkLimits.Exceeded {
            var response = Self.refusal(.tooManyRequests, "slow_down",
                                        "Too many passkey requests from this network: try again in \(exceeded.retryAfter) s.")
            response.headers[.retryAfter] = String(exceeded.retryAfter)
            return response
        }
    }

    // MARK: Signing in on the login page

    /// The options for a sign-in from the login page of an authorization request.
    func loginOptions(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = account.language(request)
        guard let interaction = form["interaction"], try await services.authorizer.pendingRequest(interaction) != nil,
              services.csrf.isValid(form["csrf_token"], request: request) else {
            return Self.refusal(.badRequest, "invalid_request", language.text(.sessionExpired))
        }
        return try Responses.json(try await services.passkeys.requestOptions(binding: tokenHash(interaction)))
    }

    /// The passkey's answer: a browser session, and the authorization request goes on.
    func login(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        try await LoginCodeEndpoints(services: services).step(request, context) { step in
            do {
                let signedIn = try await services.passkeys.signIn(try Self.assertion(step.form), binding: tokenHash(step.interaction))
                await services.audit.record(.signIn, userID: signedIn.user.id, clientID: step.client.id, email: signedIn.user.email,
                                            ip: context.addressKey, detail: "passkey")
                return try await authorization.signedIn(userID: signedIn.user.id, amr: signedIn.amr, step.authorization, client: step.client,
                                                        interaction: step.interaction, request: step.request)
            } catch let failure as PasskeyFailure {
                try Self.rethrowUnavailable(failure)
                services.logger.info("passkey sign-in refused", metadata: ["reason": "\(failure)"])
                return authorization.loginPage(step.authorization, client: step.client, interaction: step.interaction, request: step.request,
                                               email: nil, message: Self.text(failure, step.language), status: Self.status(failure))
            }
        }
    }

    // MARK: Signing in on the account page

    func accountLoginOptions(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard services.csrf.isValid(form["csrf_token"], request: request) else {
            return Self.refusal(.badRequest, "invalid_request", account.language(request).text(.sessionExpired))
        }
        return try Responses.json(try await services.passkeys.requestOptions(binding: Self.accountBinding))
    }

    func accountLogin(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = account.language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return account.expiredPage(language) }
        do {
            let signedIn = try await services.passkeys.signIn(try Self.assertion(form), binding: Self.accountBinding)
            await services.audit.record(.signIn, userID: signedIn.user.id, email: signedIn.user.email, ip: RequestOrigin.address,
                                        detail: "passkey (account page)")
            if let page = try await SecondFactorPages(services: services).ask(userID: signedIn.user.id, amr: signedIn.amr,
                                                                              next: .location("/account"), request: request,
                                                                              language: language) {
                return page
            }
            let (_, cookie) = try await BrowserSessions(services: services).create(userID: signedIn.user.id, amr: signedIn.amr,
                                                                                   replacing: request)
            var response = Responses.redirect("/account", status: .seeOther)
            response.setCookie(cookie)
            return response
        } catch let failure as PasskeyFailure {
            try Self.rethrowUnavailable(failure)
            services.logger.info("passkey sign-in refused", metadata: ["reason": "\(failure)"])
            var response = try await account.account(request, message: Self.text(failure, language))
            response.status = Self.status(failure)
            return response
        }
    }

    // MARK: The account page's passkeys

    /// The options for adding a passkey to the signed-in account; a sign-in that isn't recent
    /// is sent to confirm it's them first (a stolen session must not add its own way in).
    func registrationOptions(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = account.language(request)
        guard services.csrf.isValid(form["csrf_token"], request: request),
              let (session, user) = try await BrowserSessions(services: services).signedIn(request) else {
            return Self.refusal(.unauthorized, "login_required", language.text(.sessionExpired))
        }
        guard session.isRecent(now: services.clock.now(), within: services.configuration.reauthenticateAfter) else {
            return Self.refusal(.forbidden, "recent_sign_in_required", language.text(.reauthPasskey), location: "/account/confirm?reason=passkey")
        }
        return try Responses.json(try await services.passkeys.creationOptions(for: user))
    }

    func registerPasskey(_ request: Request, _ signedIn: AccountEndpoint.SignedIn) async throws -> Response {
        guard signedIn.recentSignIn else {
            return account.reauthenticationPage(request, user: signedIn.user, reason: .reauthPasskey, message: nil, status: .ok)
        }
        do {
            let registration = try JSONDecoder().decode(PasskeyRegistration.self, from: Data((signedIn.form["credential"] ?? "").utf8))
            let name = signedIn.form["name"].flatMap { $0.isEmpty ? nil : $0 }
                ?? AccountEndpoint.deviceSummary(request.headers[.userAgent]).map { signedIn.language.text(.passkeyOn) + " " + $0 }
            _ = try await services.passkeys.register(registration, for: signedIn.user, name: name)
            return account.done("passkey-added")
        } catch let failure as PasskeyFailure {
            try Self.rethrowUnavailable(failure)
            services.logger.info("passkey registration refused", metadata: ["reason": "\(failure)"])
            return try await account.page(request, signedIn.user, session: signedIn.session,
                                          passkeyError: Self.text(failure, signedIn.language), status: Self.status(failure))
        } catch is DecodingError {
            return try await account.page(request, signedIn.user, session: signedIn.session,
                                          passkeyError: signedIn.language.text(.passkeyFailed), status: .badRequest)
        }
    }

    func renamePasskey(_ request: Request, _ signedIn: AccountEndpoint.SignedIn) async throws -> Response {
        do {
            guard try await services.passkeys.rename(signedIn.form["id"] ?? "", of: signedIn.user, to: signedIn.form["name"] ?? "") else {
                return account.done("passkey-gone")
            }
            return account.done("passkey-renamed")
        } catch {
            try Self.rethrowUnavailable(error)
            return try await account.page(request, signedIn.user, session: signedIn.session,
                                          passkeyError: signedIn.language.text(.passkeyNameInvalid), status: .badRequest)
        }
    }

    func removePasskey(_ request: Request, _ signedIn: AccountEndpoint.SignedIn) async throws -> Response {
        do {
            guard try await services.passkeys.remove(signedIn.form["id"] ?? "", of: signedIn.user) else { return account.done("passkey-gone") }
            return account.done("passkey-removed")
        } catch {
            try Self.rethrowUnavailable(error)
            return try await account.page(request, signedIn.user, session: signedIn.session,
                                          passkeyError: signedIn.language.text(.passkeyLastWay), status: .conflict)
        }
    }

    // MARK: Words

    static func assertion(_ form: RequestParameters) throws(PasskeyFailure) -> PasskeyAssertion {
        do {
            return try JSONDecoder().decode(PasskeyAssertion.self, from: Data((form["credential"] ?? "").utf8))
        } catch {
            throw .invalid("the credential field is not WebAuthn's AuthenticationResponseJSON: \(error)")
        }
    }

    /// A store that can't be reached is the server's answer (503), not the person's mistake.
    static func rethrowUnavailable(_ error: any Error) throws {
        if case PasskeyFailure.unavailable(let underlying)? = error as? PasskeyFailure { throw underlying }
    }

    static func text(_ failure: PasskeyFailure, _ language: PageLanguage) -> String {
        switch failure {
        case .challengeExpired: language.text(.passkeyExpired)
        case .unknownPasskey: language.text(.passkeyUnknown)
        case .suspended: language.text(.passkeySuspended)
        case .accountDisabled: language.text(.accountDisabled)
        case .alreadyRegistered: language.text(.passkeyExists)
        case .tooMany: language.text(.passkeyTooMany)
        case .invalidName: language.text(.passkeyNameInvalid)
        case .lastWayIn: language.text(.passkeyLastWay)
        case .invalid, .unavailable: language.text(.passkeyFailed)
        }
    }

    static func status(_ failure: PasskeyFailure) -> HTTPResponse.Status {
        switch failure {
        case .accountDisabled, .suspended: .forbidden
        case .unknownPasskey, .invalid: .unauthorized
        case .alreadyRegistered, .tooMany, .lastWayIn: .conflict
        case .unavailable: .serviceUnavailable
        default: .badRequest
        }
    }
}
