import Hummingbird
import TesseraCore
import TesseraDomain

/// "Forgot your password?" on the hosted login: the same ``PasswordReset`` flow the native
/// API runs (a code proves the address, the new password is checked by the same policy and
/// set at once, every other session and refresh token of the account ends), presented as
/// pages: the address (the login page's), the code, the new password; then the person is
/// signed in and the authorization request goes on.
///
/// With enumeration protection an address without an account gets the same pages and no
/// mail; no code can match.
struct PasswordResetPages {
    let services: Services
    var codePages: LoginCodeEndpoints { LoginCodeEndpoints(services: services) }
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }
    var reset: PasswordReset { services.flows.passwordReset }

    static let startPath = "/login/reset"
    static let verifyPath = "/login/reset/verify"
    static let resendPath = "/login/reset/resend"
    static let passwordPath = "/login/reset/password"

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.startPath)) { request, context in try await codePages.step(request, context, start) }
        router.post(RouterPath(Self.verifyPath)) { request, context in try await codePages.step(request, context, verify) }
        router.post(RouterPath(Self.resendPath)) { request, context in try await codePages.step(request, context, resend) }
        router.post(RouterPath(Self.passwordPath)) { request, context in try await codePages.step(request, context, newPassword) }
    }

    /// The login page's "Forgot your password?": starts a reset for the address typed there.
    func start(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let email = step.form["email"] ?? ""
        do {
            guard case .started(let token) = try await reset.start(username: email, challenges: [.oob, .redirect], caller: step.caller) else {
                throw FlowFailure.unknownFlow
            }
            return try await codePage(step, reset.challenge(token: token, challenges: nil, caller: step.caller))
        } catch let failure as FlowFailure {
            return codePages.loginPage(step, email: email, failure: failure)
        }
    }

    /// The code: right, and the new password is next.
    func verify(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            guard case .verified(let next, _) = try await reset.submitCode(token: token, code: step.form["code"] ?? "", caller: step.caller) else {
                throw FlowFailure.unknownFlow
            }
            return passwordPage(step, token: next, message: nil, status: .ok)
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    /// "Send a new code".
    func resend(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            return try await codePage(step, reset.challenge(token: token, challenges: nil, caller: step.caller))
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    /// The new password: set, then the person is signed in (by the code and the new password).
    func newPassword(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            guard case .resetSubmitted(let completed, _) = try await reset.submitPassword(token: token, password: step.form["password"] ?? "",
                                                                                          caller: step.caller) else {
                throw FlowFailure.unknownFlow
            }
            let signedIn = try await services.flows.signIn.afterCompletedFlow(token: completed, username: nil, caller: step.caller)
            return try await authorization.signedIn(userID: signedIn.userID, amr: signedIn.amr, step.authorization, client: step.client,
                                                    interaction: step.interaction, request: step.request)
        } catch let failure as FlowFailure {
            switch failure {
            case .weakPassword(let violation, _):
                return passwordPage(step, token: token, message: Self.text(violation, step.language), status: .badRequest)
            case .busy, .tooMuchWork:
                return passwordPage(step, token: token, message: LoginCodeEndpoints.text(failure, step.language),
                                    status: LoginCodeEndpoints.status(failure))
            default:
                return startOver(step, failure: failure)
            }
        }
    }

    // MARK: Pages

    static let purpose = PageRenderer.CodePurpose(title: .resetTitle, sentTo: .resetCodeSentTo, submit: .resetContinue,
                                                  verifyAction: verifyPath, resendAction: resendPath)

    func codePage(_ step: LoginCodeEndpoints.Step, _ next: FlowStep) throws -> Response {
        guard case .codeSent(let token, let sent) = next else { throw FlowFailure.unknownFlow }
        return codePage(step, token: token, target: sent.target, message: nil, status: .ok)
    }

    func codePage(_ step: LoginCodeEndpoints.Step, token: String, target: String, message: String?, status: HTTPResponse.Status) -> Response {
        let settings = services.configuration.nativeAuth
        return codePages.page(step, status: status) { csrf in
            services.pages.code(Self.purpose, language: step.language, clientName: step.client.name, interaction: step.interaction, csrf: csrf,
                                flow: token, target: target, codeLength: settings.codeLength,
                                minutes: Int((settings.codeLifetime + 59) / 60), message: message, username: step.form["email"] ?? step.form["username"])
        }
    }

    func passwordPage(_ step: LoginCodeEndpoints.Step, token: String, message: String?, status: HTTPResponse.Status) -> Response {
        codePages.page(step, status: status) { csrf in
            services.pages.newPassword(language: step.language, clientName: step.client.name, interaction: step.interaction, csrf: csrf,
                                       flow: token, email: step.form["username"] ?? "", minimumLength: PasswordPolicy().minimumLength,
                                       message: message)
        }
    }

    /// A failed code step: the code page again while the reset can go on (a wrong or expired
    /// code, a resend too soon), else the login page to start over.
    func failurePage(_ step: LoginCodeEndpoints.Step, token: String, failure: FlowFailure) -> Response {
        guard LoginCodeEndpoints.keepsCodePage(failure) else { return startOver(step, failure: failure) }
        return codePage(step, token: token, target: step.form["target"] ?? "", message: LoginCodeEndpoints.text(failure, step.language),
                        status: LoginCodeEndpoints.status(failure))
    }

    /// The login page, saying why the reset can't go on.
    func startOver(_ step: LoginCodeEndpoints.Step, failure: FlowFailure) -> Response {
        let message: String = switch failure {
        case .unknownFlow, .expiredFlow, .outOfOrder, .wrongFlow: step.language.text(.resetStartOver)
        default: LoginCodeEndpoints.text(failure, step.language)
        }
        return authorization.loginPage(step.authorization, client: step.client, interaction: step.interaction, request: step.request,
                                       email: nil, message: message, status: LoginCodeEndpoints.status(failure))
    }

    /// Why the password was refused, in the person's language.
    static func text(_ violation: PasswordPolicy.Violation, _ language: PageLanguage) -> String {
        let policy = PasswordPolicy()
        return switch violation {
        case .tooShort: language.text(.passwordTooShort).replacingOccurrences(of: "{min}", with: String(policy.minimumLength))
        case .tooLong: language.text(.passwordTooLong).replacingOccurrences(of: "{max}", with: String(policy.maximumLength))
        case .banned: language.text(.passwordBanned)
        case .tooWeak: language.text(.passwordTooWeak)
        }
    }
}
