import Foundation
import Hummingbird
import TesseraCore
import TesseraDomain

/// Sign-up on the hosted pages, reached from the login page's "Create an account" and from
/// `/authorize?prompt=create` (OpenID Connect's "Initiating User Registration"): the same
/// ``SignUp`` flow the native API runs, presented as pages. The address, then the code that
/// proves it, then the password when the policy asks for one, then each page of the
/// configured attributes; the account is created by the last step, or not at all; the person
/// is then signed in and the authorization request goes on (consent, if needed, then back to
/// the client with a code).
///
/// With enumeration protection an address that has an account goes through the same pages,
/// gets an "account exists" notice instead of a code, and no code matches.
struct SignUpPages {
    let services: Services
    var codePages: LoginCodeEndpoints { LoginCodeEndpoints(services: services) }
    var authorization: AuthorizationEndpoint { AuthorizationEndpoint(services: services) }
    var signUp: SignUp { services.flows.signUp }

    static let startPath = "/signup"
    static let verifyPath = "/signup/verify"
    static let resendPath = "/signup/resend"
    static let passwordPath = "/signup/password"
    static let attributesPath = "/signup/attributes"
    static let signInPath = "/signup/signin"
    /// The attribute fields' names: `attribute_given_name`, apart from the form's own fields.
    static let fieldPrefix = "attribute_"

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(Self.startPath)) { request, context in try await codePages.step(request, context, start) }
        router.post(RouterPath(Self.verifyPath)) { request, context in try await codePages.step(request, context, verify) }
        router.post(RouterPath(Self.resendPath)) { request, context in try await codePages.step(request, context, resend) }
        router.post(RouterPath(Self.passwordPath)) { request, context in try await codePages.step(request, context, password) }
        router.post(RouterPath(Self.attributesPath)) { request, context in try await codePages.step(request, context, attributes) }
        router.post(RouterPath(Self.passkeyPath)) { request, context in try await codePages.step(request, context, addPasskey) }
        router.post(RouterPath(Self.signInPath)) { request, context in
            try await codePages.step(request, context) { step in
                authorization.loginPage(step.authorization, client: step.client, interaction: step.interaction, request: step.request,
                                        email: nil, message: nil, status: .ok)
            }
        }
    }

    /// The address (from the login page's "Create an account", or this page): without one,
    /// the sign-up page asks for it; with one, the code goes out.
    func start(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let email = step.form["email"]?.trimmingCharacters(in: .whitespaces) ?? ""
        // From the login page: the sign-up page, with what was typed there.
        guard step.form["signup"] != nil else { return signUpPage(step, email: email.isEmpty ? nil : email, message: nil, status: .ok) }
        do {
            guard case .started(let token) = try await signUp.start(username: email, challenges: [.oob, .password, .redirect], password: nil,
                                                                      attributes: nil, caller: step.caller) else {
                throw FlowFailure.unknownFlow
            }
            return try await next(step, signUp.challenge(token: token, challenges: nil, caller: step.caller))
        } catch let failure as FlowFailure {
            return signUpPage(step, email: email, message: Self.text(failure, step.language), status: LoginCodeEndpoints.status(failure))
        }
    }

    func verify(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            return try await next(step, signUp.submitCode(token: token, code: step.form["code"] ?? "", caller: step.caller))
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    func resend(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            return try await next(step, signUp.challenge(token: token, challenges: [.oob], caller: step.caller))
        } catch let failure as FlowFailure {
            return failurePage(step, token: token, failure: failure)
        }
    }

    func password(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        do {
            return try await next(step, signUp.submitPassword(token: token, password: step.form["password"] ?? "", caller: step.caller))
        } catch let failure as FlowFailure {
            switch failure {
            case .weakPassword(let violation, _):
                return passwordPage(step, token: token, message: PasswordResetPages.text(violation, step.language), status: .badRequest)
            case .busy:
                return passwordPage(step, token: token, message: LoginCodeEndpoints.text(failure, step.language), status: .serviceUnavailable)
            default:
                return startOver(step, failure)
            }
        }
    }

    /// A page of attributes: the fields typed (empty ones are not sent), each problem shown
    /// next to its field.
    func attributes(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let token = step.form["flow"] ?? ""
        let page = Int(step.form["page"] ?? "") ?? 1
        var sent: [String: JSONValue] = [:]
        for attribute in attributesOf(page: page) {
            let value = step.form[Self.fieldPrefix + attribute.name]?.trimmingCharacters(in: .whitespaces) ?? ""
            if attribute.type == "boolean" {
                sent[attribute.name] = .string(value == "true" ? "true" : "false")
            } else if !value.isEmpty {
                sent[attribute.name] = .string(value)
            }
        }
        do {
            return try await next(step, signUp.submitAttributes(token: token, attributes: sent, caller: step.caller))
        } catch let failure as FlowFailure {
            switch failure {
            case .invalidAttributes(let problems):
                var errors: [String: String] = [:]
                for problem in problems {
                    errors[problem.name] = step.language.text(.attributeInvalid).replacingOccurrences(of: "{reason}", with: problem.reason)
                }
                return attributesPage(step, token: token, page: page, errors: errors, status: .badRequest)
            default:
                return startOver(step, failure)
            }
        }
    }

    // MARK: What comes next

    /// The page for the flow's next step, or the signed-in person's way back to the client.
    func next(_ step: LoginCodeEndpoints.Step, _ next: FlowStep) async throws -> Response {
        switch next {
        case .codeSent(let token, let sent):
            return codePage(step, token: token, target: sent.target, message: nil, status: .ok)
        case .passwordRequired(let token), .passwordRequested(let token):
            return passwordPage(step, token: token, message: nil, status: .ok)
        case .attributesRequired(let token, let missing):
            // Fields the person left empty that are required come back as "fill this in".
            var errors: [String: String] = [:]
            if step.request.uri.path == Self.attributesPath, let page = missing.first?.page, String(page) == step.form["page"] {
                for attribute in missing { errors[attribute.name] = step.language.text(.attributeRequired) }
            }
            return attributesPage(step, token: token, page: missing.first?.page ?? 1, errors: errors, status: errors.isEmpty ? .ok : .badRequest)
        case .completed(let token, _):
            let signedIn = try await services.flows.signIn.afterCompletedFlow(token: token, username: nil, caller: step.caller)
            return try await signedUp(signedIn, step)
        default:
            throw FlowFailure.unknownFlow
        }
    }

    // MARK: A passkey, offered once

    static let passkeyPath = "/signup/passkey"

    /// The new account is signed in; before going back to the app, a passkey is offered once
    /// (the page's "Not now" goes on without one). A sign-in that needs a second factor (the
    /// client requires it) goes to that step instead.
    func signedUp(_ signedIn: SignedIn, _ step: LoginCodeEndpoints.Step) async throws -> Response {
        if let page = try await SecondFactorPages(services: services).ask(
            userID: signedIn.userID, amr: signedIn.amr, next: .authorization(step.interaction), client: step.client,
            authorization: step.authorization, request: step.request, language: step.language) {
            return page
        }
        let (session, cookie) = try await BrowserSessions(services: services).create(userID: signedIn.userID, amr: signedIn.amr,
                                                                                   replacing: step.request)
        // The page stands between the session and the app: its way on is bound to this session.
        var pending = PendingSecondFactor(userID: signedIn.userID, amr: signedIn.amr, issuedAt: services.clock.now(),
                                          next: .authorization(step.interaction))
        pending.sessionID = session.sid
        var response = offerPage(step, sessionCookie: cookie.value, message: nil, status: .ok)
        response.setCookie(cookie)
        response.setCookie(try SecondFactorPages(services: services).pendingCookie(pending))
        return response
    }

    func offerPage(_ step: LoginCodeEndpoints.Step, sessionCookie: String?, message: String?, status: HTTPResponse.Status) -> Response {
        let (csrf, csrfCookie) = services.csrf.token(for: step.request, session: sessionCookie)
        var response = Responses.html(services.pages.passkeyOffer(language: step.language, clientName: step.client.name,
                                                                 interaction: step.interaction, csrf: csrf, message: message),
                                      status: status, formTargets: [step.authorization.redirectURI])
        if let csrfCookie { response.setCookie(csrfCookie) }
        return response
    }

    /// The passkey the page's script made: added, then back to the app.
    func addPasskey(_ step: LoginCodeEndpoints.Step) async throws -> Response {
        let pages = SecondFactorPages(services: services)
        guard let (pending, session) = try await pages.continuing(step.request), let user = try await services.accounts.user(of: session),
              case .authorization(step.interaction) = pending.next else {
            return authorization.expiredPage(step.request, language: step.language)
        }
        do {
            let registration = try JSONDecoder().decode(PasskeyRegistration.self, from: Data((step.form["credential"] ?? "").utf8))
            let name = AccountEndpoint.deviceSummary(step.request.headers[.userAgent]).map { step.language.text(.passkeyOn) + " " + $0 }
            _ = try await services.passkeys.register(registration, for: user, name: name)
        } catch let failure as PasskeyFailure {
            try PasskeyEndpoints.rethrowUnavailable(failure)
            return offerPage(step, sessionCookie: nil, message: PasskeyEndpoints.text(failure, step.language), status: PasskeyEndpoints.status(failure))
        } catch {
            return offerPage(step, sessionCookie: nil, message: step.language.text(.passkeyFailed), status: .badRequest)
        }
        return try await pages.finish(pending, session: session, request: step.request, language: step.language)
    }

    // MARK: Pages

    static let purpose = PageRenderer.CodePurpose(title: .signUpCodeTitle, sentTo: .signUpCodeSentTo, submit: .resetContinue,
                                                  verifyAction: verifyPath, resendAction: resendPath)

    func signUpPage(_ step: LoginCodeEndpoints.Step, email: String?, message: String?, status: HTTPResponse.Status) -> Response {
        firstPage(step.authorization, client: step.client, interaction: step.interaction, request: step.request, language: step.language,
                  email: email, message: message, status: status)
    }

    /// The sign-up page (`prompt=create` shows it in place of the login page), the address
    /// filled in from `login_hint`.
    func firstPage(_ authorization: AuthorizationRequest, client: Client, interaction: String, request: Request, language: PageLanguage,
                   email: String?, message: String?, status: HTTPResponse.Status) -> Response {
        codePages.page(request, status: status, formTarget: authorization.redirectURI) { csrf in
            services.pages.signUp(language: language, clientName: client.name, interaction: interaction, csrf: csrf,
                                  email: email ?? authorization.loginHint, message: message)
        }
    }

    func codePage(_ step: LoginCodeEndpoints.Step, token: String, target: String, message: String?, status: HTTPResponse.Status) -> Response {
        let settings = services.configuration.nativeAuth
        return codePages.page(step, status: status) { csrf in
            services.pages.code(Self.purpose, language: step.language, clientName: step.client.name, interaction: step.interaction, csrf: csrf,
                                flow: token, target: target, codeLength: settings.codeLength,
                                minutes: Int((settings.codeLifetime + 59) / 60), message: message,
                                username: step.form["email"] ?? step.form["username"])
        }
    }

    func passwordPage(_ step: LoginCodeEndpoints.Step, token: String, message: String?, status: HTTPResponse.Status) -> Response {
        codePages.page(step, status: status) { csrf in
            services.pages.newPassword(language: step.language, clientName: step.client.name, interaction: step.interaction, csrf: csrf,
                                       flow: token, email: step.form["username"] ?? "", minimumLength: PasswordPolicy().minimumLength,
                                       message: message, signUp: true)
        }
    }

    /// The configured attributes of one page, in their order.
    func attributesOf(page: Int) -> [SignUpAttribute] {
        services.configuration.nativeAuth.signUpAttributes.attributes.filter { $0.page == page }
    }

    func attributesPage(_ step: LoginCodeEndpoints.Step, token: String, page number: Int, errors: [String: String],
                        status: HTTPResponse.Status) -> Response {
        let fields = attributesOf(page: number).map { attribute in
            PageRenderer.AttributeField(
                name: attribute.name, label: step.language.label(attribute),
                type: ["boolean": "checkbox", "date": "date", "integer": "number"][attribute.type] ?? "text", required: attribute.required,
                value: step.form[Self.fieldPrefix + attribute.name] ?? "", error: errors[attribute.name])
        }
        return codePages.page(step, status: status) { csrf in
            services.pages.signUpAttributes(language: step.language, clientName: step.client.name, interaction: step.interaction, csrf: csrf,
                                            flow: token, page: number, fields: fields,
                                            message: errors.isEmpty ? nil : step.language.text(.formHasErrors))
        }
    }

    /// A failed code step: the code page again while the sign-up can go on, else the sign-up
    /// page to start over.
    func failurePage(_ step: LoginCodeEndpoints.Step, token: String, failure: FlowFailure) -> Response {
        guard LoginCodeEndpoints.keepsCodePage(failure) else { return startOver(step, failure) }
        return codePage(step, token: token, target: step.form["target"] ?? "", message: LoginCodeEndpoints.text(failure, step.language),
                        status: LoginCodeEndpoints.status(failure))
    }

    /// The sign-up page again, saying why the sign-up can't go on.
    func startOver(_ step: LoginCodeEndpoints.Step, _ failure: FlowFailure) -> Response {
        let message: String = switch failure {
        case .unknownFlow, .expiredFlow, .outOfOrder, .wrongFlow, .addressAlreadyVerified, .addressNotVerified, .codeNotSent:
            step.language.text(.signUpStartOver)
        default: Self.text(failure, step.language)
        }
        return signUpPage(step, email: nil, message: message, status: LoginCodeEndpoints.status(failure))
    }

    static func text(_ failure: FlowFailure, _ language: PageLanguage) -> String {
        switch failure {
        case .accountExists: language.text(.accountExists)
        default: LoginCodeEndpoints.text(failure, language)
        }
    }
}
