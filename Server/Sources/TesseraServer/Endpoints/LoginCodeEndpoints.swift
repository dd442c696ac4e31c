import Hummingbird
import TesseraCore
import TesseraDomain

/// Sign-in by email one-time code on the hosted login ("Email me a code"): the same
/// ``SignIn`` flow the native API runs, presented as pages. The login page starts it with
/// the address; the code page carries the flow's continuation token to the next step; a
/// right code starts a browser session and the authorization request goes on.
///
/// With enumeration protection an address without an account gets the same pages and no
/// mail; no code can match.
package struct LoginCodeEndpoints {
    let services: Services
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }

    package static let startPath = "/login/code"
    package static let verifyPath = "/login/code/verify"
    package static let resendPath = "/login/code/resend"

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.startPath)) { request, context in try await step(request, context, start) }
        router.post(RouterPath(Self.verifyPath)) { request, context in try await step(request, context, verify) }
        router.post(RouterPath(Self.resendPath)) { request, context in try await step(request, context, resend) }
    }

    /// A posted form of the code sign-in, once its authorization request and CSRF token check out.
    struct Step {
        var form: RequestParameters
        var request: Request
        var authorization: AuthorizationRequest
        var client: Client
        var interaction: String
        var language: PageLanguage
        var caller: FlowCaller
    }

    func step(_ request: Request, _ context: TesseraRequestContext, _ body: (Step) async throws -> Response) async throws -> Response {
        var request = request
        let form = try await request.formParameters()
        guard let interaction = form["interaction"], let (pending, client) = try await services.authorizer.pendingRequest(interaction) else {
            return authorization.expiredPage(request)
        }
        let language = authorization.language(for: request, locales: pending.uiLocales)
        guard services.csrf.isValid(form["csrf_token"], request: request) else { return authorization.expiredPage(request, language: language) }
        return try await body(Step(form: form, request: request, authorization: pending, client: client, interaction: interaction,
                                   language: language, caller: FlowCaller(client: client, address: context.addressKey, language: language)))
    }

    /// The login page's "Email me a code": starts a sign-in for the address and sends the code.
    func start(_ step: Step) async throws -> Response {
        let email = step.form["email"] ?? ""
        do {
            guard case .started(let token) = try await services.flows.signIn.initiate(username: email, challenges: [.oob, .redirect],
                                                                                     caller: step.caller) else {
                throw FlowFailure.unknownFlow
            }
            return try await codePage(step, services.flows.signIn.challenge(token: token, challenges: nil, caller: step.caller))
        } catch let failure as FlowFailure {
            return loginPage(step, email: email, failure: failure)
        }
    }

    /// The code.
    func verify(_ step: Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            let signedIn = try await services.flows.signIn.code(token: token, code: step.form["code"] ?? "", caller: step.caller)
            return try await authorization.signedIn(userID: signedIn.userID, amr: signedIn.amr, step.authorization, client: step.client,
                                                    interaction: step.interaction, request: step.request)
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    /// "Send a new code".
    func resend(_ step: Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            return try await codePage(step, services.flows.signIn.challenge(token: token, challenges: nil, caller: step.caller))
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    // MARK: Pages

    func codePage(_ step: Step, _ next: FlowStep) throws -> Response {
        guard case .codeSent(let token, let sent) = next else { throw FlowFailure.unknownFlow }
        return codePage(step, token: token, target: sent.target, codeLength: sent.codeLength, message: nil, status: .ok)
    }

    func codePage(_ step: Step, token: String, target: String, codeLength: Int, message: String?, status: HTTPResponse.Status) -> Response {
        let settings = services.configuration.nativeAuth
        return page(step, status: status) { csrf in
            services.pages.signInCode(language: step.language, clientName: step.client.name, interaction: step.interaction,
                                      csrf: csrf, flow: token, target: target, codeLength: codeLength,
                                      minutes: Int((settings.codeLifetime + 59) / 60), message: message)
        }
    }

    /// A page of a flow (this one, a reset, a sign-up): `html` gets the form's CSRF token; the
    /// page may post to the client's redirect URI (its Content-Security-Policy says so).
    func page(_ step: Step, status: HTTPResponse.Status, _ html: (String) -> String) -> Response {
        page(step.request, status: status, formTarget: step.authorization.redirectURI, html)
    }

    func page(_ request: Request, status: HTTPResponse.Status, formTarget: String, _ html: (String) -> String) -> Response {
        let (csrf, cookie) = services.csrf.token(for: request)
        var response = Responses.html(html(csrf), status: status, formTargets: [formTarget])
        if let cookie { response.setCookie(cookie) }
        return response
    }

    func loginPage(_ step: Step, email: String?, failure: FlowFailure) -> Response {
        authorization.loginPage(step.authorization, client: step.client, interaction: step.interaction, request: step.request,
                                email: email, message: Self.text(failure, step.language), status: Self.status(failure))
    }

    /// A failed code step: the code page again while the flow can go on (a wrong or expired
    /// code, a resend too soon), else the login page to start over.
    func failurePage(_ step: Step, token: String, failure: FlowFailure) -> Response {
        guard Self.keepsCodePage(failure) else { return loginPage(step, email: nil, failure: failure) }
        return codePage(step, token: token, target: step.form["target"] ?? "", codeLength: services.configuration.nativeAuth.codeLength,
                        message: Self.text(failure, step.language), status: Self.status(failure))
    }

    /// Whether a failed code step leaves the flow able to go on, so the code page is shown
    /// again (a wrong or expired code, a new code asked for too soon, a busy server): the code
    /// pages of the sign-in, the password reset and the sign-up all ask this.
    static func keepsCodePage(_ failure: FlowFailure) -> Bool {
        switch failure {
        case .wrongCode, .codeExpired, .tooManyWrongCodes, .resendTooSoon, .tooManyCodes, .busy: true
        default: false
        }
    }

    /// What the person is told, in their language.
    static func text(_ failure: FlowFailure, _ language: PageLanguage) -> String {
        switch failure {
        case .invalidAddress, .missingParameter: language.text(.enterEmail)
        case .accountNotFound: language.text(.noAccount)
        case .wrongCode(let left?) where left > 0: language.text(.codeWrongLeft).replacingOccurrences(of: "{left}", with: String(left))
        case .wrongCode(0?), .tooManyWrongCodes: language.text(.codeUsedUp)
        case .wrongCode: language.text(.codeWrong)
        case .codeExpired: language.text(.codeExpired)
        case .resendTooSoon(_, let wait): language.text(.codeResendWait).replacingOccurrences(of: "{seconds}", with: String(wait))
        case .tooManyCodes: language.text(.codeThrottled)
        case .tooMuchWork: language.text(.tooManyStarted)
        case .busy: language.text(.busy)
        case .accountDisabled: language.text(.accountDisabled)
        default: language.text(.codeStartOver)
        }
    }

    static func status(_ failure: FlowFailure) -> HTTPResponse.Status {
        switch failure {
        case .tooMuchWork, .resendTooSoon, .tooManyCodes: .tooManyRequests
        case .busy: .serviceUnavailable
        default: .badRequest
        }
    }
}
