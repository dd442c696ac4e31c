import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// The second factor on the hosted pages (``SecondFactorPolicy``): after every first factor
/// (a password, an emailed code or link, an upstream provider, on the login page, the account
/// page or the console) and for a session a request finds too weak, the person gives an
/// authenticator app's code, a recovery code or a passkey before a session is made; one who
/// has none and must give one sets up an authenticator app on the way, and sees its recovery
/// codes once.
///
/// Between the two factors the browser holds the sign-in sealed in a cookie that lives five
/// minutes (``PendingSecondFactor``): no session exists yet, so nothing of the account can be
/// reached with the first factor alone.
struct SecondFactorPages {
    let services: Services

    static let verifyPath = "/login/second-factor"
    static let passkeyOptionsPath = "/login/second-factor/passkey/options"
    static let passkeyPath = "/login/second-factor/passkey"
    static let setupPath = "/login/second-factor/setup"
    static let continuePath = "/login/second-factor/continue"

    var cookieName: String { services.configuration.secureCookies ? "__Host-tessera_2fa" : "tessera_2fa" }
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.verifyPath)) { request, context in try await step(request, context, verify) }
        router.post(RouterPath(Self.passkeyOptionsPath)) { request, context in
            if let refused = try await PasskeyEndpoints(services: services).admitChallenge(context) { return refused }
            return try await passkeyOptions(request, context)
        }
        router.post(RouterPath(Self.passkeyPath)) { request, context in try await step(request, context, passkey) }
        router.post(RouterPath(Self.setupPath)) { request, context in try await step(request, context, setUp) }
        router.post(RouterPath(Self.continuePath)) { request, context in try await continueAfterSetup(request) }
    }

    // MARK: Asking

    /// After a first factor by `userID` with methods `amr`: the second-factor page when the
    /// sign-in needs one, else nil (the caller makes the session). `client` and
    /// `authorization`: what the person signs in to, when it is an app.
    func ask(userID: String, amr: [String], next: PendingSecondFactor.Continuation, client: Client? = nil,
             authorization: AuthorizationRequest? = nil, request: Request, language: PageLanguage) async throws -> Response? {
        guard let user = try await services.accounts.user(id: userID),
              let requirement = try await services.authorizer.policy.secondFactors.requirement(user: user, amr: amr, client: client,
                                                                                               request: authorization) else {
            return nil
        }
        let pending = PendingSecondFactor(userID: user.id, amr: amr, issuedAt: services.clock.now(), next: next)
        return try await page(pending, user: user, requirement: requirement, clientName: client?.name, request: request, language: language)
    }

    /// After a first factor on a page that may belong to an authorization request
    /// (`interaction`): as ``ask``, going back into the request, else to `otherwise`.
    func ask(userID: String, amr: [String], interaction: String?, otherwise: PendingSecondFactor.Continuation, request: Request,
             language: PageLanguage) async throws -> Response? {
        if let interaction, let (pending, client) = try await services.authorizer.pendingRequest(interaction) {
            return try await ask(userID: userID, amr: amr, next: .authorization(interaction), client: client, authorization: pending,
                                 request: request, language: authorization.language(for: request, locales: pending.uiLocales))
        }
        return try await ask(userID: userID, amr: amr, next: otherwise, request: request, language: language)
    }

    /// The page of a waiting sign-in, with the cookie that carries it; `message`: why the last
    /// try was refused.
    func page(_ pending: PendingSecondFactor, user: User, requirement: SecondFactorPolicy.Requirement, clientName: String?,
              request: Request, language: PageLanguage, message: String? = nil,
              status: HTTPResponse.Status = .ok) async throws -> Response {
        var enrolment: SecondFactors.Enrolment?
        if requirement.mustEnrol {
            enrolment = try await services.secondFactors.pendingTOTP(for: user)
            if enrolment == nil {
                do { enrolment = try await services.secondFactors.startTOTP(for: user) } catch .unavailable(let error) { throw error } catch {}
            }
        }
        let (csrf, cookie) = services.csrf.token(for: request)
        let html = services.pages.secondFactor(language: language, clientName: clientName, intro: Self.intro(requirement, language),
                                               csrf: csrf, codeForm: requirement.authenticatorApp, passkey: requirement.passkey,
                                               enrolment: enrolment.map { TOTPSetup($0, action: Self.setupPath) }, message: message)
        var response = Responses.html(html, status: status, formTargets: try await formTargets(pending.next))
        if let cookie { response.setCookie(cookie) }
        response.setCookie(try pendingCookie(pending))
        return response
    }

    /// Where the page's forms may end up (the CSP's `form-action` covers the redirects after a
    /// post): the client's redirect URI, or an app's continue URL.
    func formTargets(_ next: PendingSecondFactor.Continuation) async throws -> [String] {
        switch next {
        case .authorization(let interaction): (try await services.authorizer.pendingRequest(interaction)).map { [$0.0.redirectURI] } ?? []
        case .location(let location): location.hasPrefix("/") ? [] : [location]
        case .signedIn: []
        }
    }

    static func intro(_ requirement: SecondFactorPolicy.Requirement, _ language: PageLanguage) -> String {
        if requirement.mustEnrol { return language.text(requirement.reason == .clientRequires ? .twoStepAppRequires : .twoStepRequestRequires) }
        return switch (requirement.authenticatorApp, requirement.passkey) {
        case (true, true): language.text(.twoStepIntroAppOrPasskey)
        case (true, false): language.text(.twoStepIntroApp)
        default: language.text(.twoStepIntroPasskey)
        }
    }

    func pendingCookie(_ pending: PendingSecondFactor) throws -> Cookie {
        Cookie(name: cookieName, value: try services.secondFactors.seal(pending), maxAge: Int(PendingSecondFactor.lifetime), path: "/",
               secure: services.configuration.secureCookies, httpOnly: true, sameSite: .lax)
    }

    var clearingCookie: Cookie {
        Cookie(name: cookieName, value: "", maxAge: 0, path: "/", secure: services.configuration.secureCookies, httpOnly: true, sameSite: .lax)
    }

    // MARK: Answering

    /// A post of the second-factor page: its waiting sign-in and person.
    struct Step {
        var request: Request
        var form: RequestParameters
        var pending: PendingSecondFactor
        var user: User
        var requirement: SecondFactorPolicy.Requirement
        var language: PageLanguage
        var clientName: String?
        var address: String
    }

    /// Runs `body` for a post of the second-factor page with its CSRF token and a waiting
    /// sign-in still young enough; otherwise the page saying it expired.
    func step(_ request: Request, _ context: TesseraRequestContext, _ body: (Step) async throws -> Response) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let pending = services.secondFactors.pending(request.cookies[cookieName]?.value)
        var locales: [String] = [], clientName: String?, client: Client?, authorizationRequest: AuthorizationRequest?
        if case .authorization(let interaction)? = pending?.next, let (found, foundClient) = try await services.authorizer.pendingRequest(interaction) {
            (locales, clientName, client, authorizationRequest) = (found.uiLocales, foundClient.name, foundClient, found)
        }
        let language = authorization.language(for: request, locales: locales)
        guard services.csrf.isValid(form["csrf_token"], request: request), let pending, pending.sessionID == nil,
              let user = try await services.accounts.user(id: pending.userID), !user.isDisabled else {
            return expired(language)
        }
        // Asked again: what the person has may have changed (a passkey blocked meanwhile).
        let requirement = try await services.authorizer.policy.secondFactors.requirement(user: user, amr: pending.amr, client: client,
                                                                                         request: authorizationRequest)
            ?? SecondFactorPolicy.Requirement(reason: .turnedOn, authenticatorApp: true, passkey: false)
        return try await body(Step(request: request, form: form, pending: pending, user: user, requirement: requirement,
                                   language: language, clientName: clientName, address: context.addressKey))
    }

    func expired(_ language: PageLanguage) -> Response {
        var response = Responses.html(services.pages.error(language: language, error: OAuthError(.invalidRequest),
                                                           intro: language.text(.twoStepExpired)), status: .badRequest)
        response.setCookie(clearingCookie)
        return response
    }

    func refused(_ step: Step, _ message: String, _ status: HTTPResponse.Status) async throws -> Response {
        try await page(step.pending, user: step.user, requirement: step.requirement, clientName: step.clientName, request: step.request,
                       language: step.language, message: message, status: status)
    }

    /// The authenticator app's code, or a recovery code.
    func verify(_ step: Step) async throws -> Response {
        guard step.requirement.authenticatorApp else { return try await refused(step, step.language.text(.twoStepWrongCode), .badRequest) }
        let methods: [String]
        do {
            methods = try await services.secondFactors.verify(step.user, code: step.form["code"] ?? "", from: .init(
                signIn: step.pending.id, device: services.deviceCookies.device(in: step.request)))
        } catch .throttled {
            return try await refused(step, step.language.text(.twoStepThrottled), .tooManyRequests)
        } catch .unavailable(let error) {
            throw error
        } catch {
            await services.audit.record(.signInFailed, userID: step.user.id, email: step.user.email, ip: step.address, detail: "second factor")
            return try await refused(step, step.language.text(.twoStepWrongCode), .unauthorized)
        }
        await services.audit.record(.signIn, userID: step.user.id, email: step.user.email, ip: step.address, detail: "second factor")
        return try await complete(step.pending, methods: methods, request: step.request, language: step.language)
    }

    /// The options of a passkey given as the second factor, bound to the waiting sign-in.
    func passkeyOptions(_ request: Request, _ context: TesseraRequestContext) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard services.csrf.isValid(form["csrf_token"], request: request),
              let pending = services.secondFactors.pending(request.cookies[cookieName]?.value), pending.sessionID == nil else {
            return PasskeyEndpoints.refusal(.badRequest, "invalid_request", authorization.language(for: request, locales: []).text(.twoStepExpired))
        }
        return try Responses.json(try await services.passkeys.requestOptions(binding: Self.binding(pending)))
    }

    static func binding(_ pending: PendingSecondFactor) -> String { "second-factor:" + tokenHash(pending.id) }

    /// A passkey of the same person as the second factor.
    func passkey(_ step: Step) async throws -> Response {
        do {
            let signedIn = try await services.passkeys.signIn(try PasskeyEndpoints.assertion(step.form), binding: Self.binding(step.pending))
            guard signedIn.user.id == step.user.id else {
                return try await refused(step, step.language.text(.twoStepOtherPasskey), .unauthorized)
            }
            await services.audit.record(.signIn, userID: step.user.id, email: step.user.email, ip: step.address, detail: "second factor: passkey")
            return try await complete(step.pending, methods: signedIn.amr, request: step.request, language: step.language)
        } catch let failure as PasskeyFailure {
            try PasskeyEndpoints.rethrowUnavailable(failure)
            return try await refused(step, PasskeyEndpoints.text(failure, step.language), PasskeyEndpoints.status(failure))
        }
    }

    /// An authenticator app set up on the way: its first code is the second factor. The
    /// session is made now and the recovery codes shown; "Continue" goes on.
    func setUp(_ step: Step) async throws -> Response {
        let codes: [String]
        do {
            codes = try await services.secondFactors.confirmTOTP(for: step.user, code: step.form["code"] ?? "")
        } catch .unavailable(let error) {
            throw error
        } catch {
            return try await refused(step, step.language.text(.twoStepWrongCode), .badRequest)
        }
        let amr = SecondFactorPolicy.combined(step.pending.amr, ["otp"])
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: step.user.id, amr: amr, replacing: step.request)
        var pending = step.pending
        pending.sessionID = session.sid
        let (csrf, csrfCookie) = services.csrf.token(for: step.request, session: cookie.value)
        var response = Responses.html(services.pages.recoveryCodes(language: step.language, codes: codes, csrf: csrf,
                                                                   continueAction: Self.continuePath),
                                      formTargets: try await formTargets(pending.next))
        response.setCookie(cookie)
        if let csrfCookie { response.setCookie(csrfCookie) }
        response.setCookie(try pendingCookie(pending))
        return response
    }

    /// "Continue" under the recovery codes of an app set up on the way (and the passkey offer
    /// after a sign-up).
    func continueAfterSetup(_ request: Request) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        let language = authorization.language(for: request, locales: [])
        guard services.csrf.isValid(form["csrf_token"], request: request), let (pending, session) = try await continuing(request) else {
            return expired(language)
        }
        return try await finish(pending, session: session, request: request, language: language)
    }

    /// The waiting sign-in whose session exists (``PendingSecondFactor/sessionID``), with that
    /// session; nil when the browser has neither, or they don't match.
    func continuing(_ request: Request) async throws -> (PendingSecondFactor, BrowserSession)? {
        guard let pending = services.secondFactors.pending(request.cookies[cookieName]?.value),
              let session = try await BrowserSessions(services: services).current(request), pending.sessionID == session.sid else {
            return nil
        }
        return (pending, session)
    }

    /// The page between the session and the app is done: where the sign-in was going.
    func finish(_ pending: PendingSecondFactor, session: BrowserSession, request: Request, language: PageLanguage) async throws -> Response {
        var response = try await proceed(pending.next, session: session, sessionCookie: nil, request: request, language: language)
        response.setCookie(clearingCookie)
        return response
    }

    /// The second factor was given: the session, then where the sign-in was going.
    func complete(_ pending: PendingSecondFactor, methods: [String], request: Request, language: PageLanguage) async throws -> Response {
        let amr = SecondFactorPolicy.combined(pending.amr, methods)
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: pending.userID, amr: amr, replacing: request)
        var response = try await proceed(pending.next, session: session, sessionCookie: cookie.value, request: request, language: language)
        response.setCookie(cookie)
        response.setCookie(clearingCookie)
        return response
    }

    func proceed(_ next: PendingSecondFactor.Continuation, session: BrowserSession, sessionCookie: String?, request: Request,
                 language: PageLanguage) async throws -> Response {
        switch next {
        case .authorization(let interaction):
            guard let (pending, client) = try await services.authorizer.pendingRequest(interaction) else {
                return authorization.expiredPage(request, language: language)
            }
            let outcome = try await services.authorizer.decide(pending, client: client, session: session, signedInNow: true,
                                                               interaction: interaction)
            if case .respond = outcome { try await services.authorizer.finish(interaction) }
            return try await authorization.respond(outcome, request: request, locales: pending.uiLocales, afterPost: true,
                                                   session: sessionCookie)
        case .location(let location):
            return Responses.redirect(location, status: .seeOther)
        case .signedIn:
            return Responses.html(services.pages.message(language: language, title: .signedInTitle, message: .signedIn))
        }
    }
}

/// An authenticator app being set up, as a page shows it: the QR code, the secret to type,
/// and where its first code goes.
struct TOTPSetup {
    var qr: String
    var secret: String
    var action: String

    init(_ enrolment: SecondFactors.Enrolment, action: String) {
        // An otpauth URI is ~120 characters: always within a QR code's reach.
        qr = (try? QRCode(enrolment.uri).svg(moduleSize: 4, quietZone: 4, title: "QR code")) ?? ""
        // Groups of four, as authenticator apps show and take them.
        secret = stride(from: 0, to: enrolment.secret.count, by: 4).map { start in
            let from = enrolment.secret.index(enrolment.secret.startIndex, offsetBy: start)
            return String(enrolment.secret[from..<(enrolment.secret.index(from, offsetBy: 4, limitedBy: enrolment.secret.endIndex)
                ?? enrolment.secret.endIndex)])
        }.joined(separator: " ")
        self.action = action
    }
}

extension TOTPSetup {
    /// What the `totpsetup` partial reads.
    func values(_ language: PageLanguage, error: String?) -> [String: Any] {
        ["setupAction": action, "setupQR": qr, "setupSecret": secret, "setupScan": language.text(.twoStepSetupScan),
         "setupType": language.text(.twoStepSetupType), "setupSecretLabel": language.text(.twoStepSetupSecret),
         "setupCodeLabel": language.text(.twoStepSetupCode), "setupSubmit": language.text(.twoStepSetupSubmit), "setupError": error ?? ""]
    }
}
