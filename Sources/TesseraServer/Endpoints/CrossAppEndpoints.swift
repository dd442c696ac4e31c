import Hummingbird
import TesseraCore
import TesseraDomain

/// Cross-app sign-in over HTTP: pushed authorization requests (RFC 9126) for any client, and
/// the endpoints of an authenticator app (the operator's own app): reading a partner's pushed
/// request, approving or denying it, and asking for a hand-off ticket. Every answer is JSON,
/// errors as OAuth errors (RFC 6749 §5.2; bearer errors as RFC 6750 §3).
struct CrossAppEndpoints {
    let services: Services
    var approvals: AppApprovals { services.appApprovals }

    func register(on router: Router<TesseraRequestContext>) {
        router.post(RouterPath(TesseraPath.pushedAuthorizationRequest)) { request, context in
            await TokenEndpoint.answer(services) { try await push(request, address: context.addressKey) }
        }
        router.post(RouterPath(TesseraPath.authorizationDetails)) { request, _ in
            await answer(request) { form, caller in try await details(form, caller: caller, request: request) }
        }
        router.post(RouterPath(TesseraPath.authorizationApproval)) { request, _ in
            await answer(request) { form, caller in try await approve(form, caller: caller) }
        }
        router.post(RouterPath(TesseraPath.handoff)) { request, _ in
            await answer(request) { form, caller in try await handoff(form, caller: caller) }
        }
    }

    /// RFC 9126 §2: the client authenticates as at the token endpoint; the request is checked
    /// as the authorization endpoint would, and kept for `pushed-request-lifetime`.
    func push(_ request: Request, address: String) async throws -> Response {
        var request = request
        let parameters = try await request.formParameters()
        let client = try await services.clientAuthenticator.authenticate(basic: try request.basicCredentials(), parameters: parameters)
        let pushed = try await services.authorizer.push(parameters, client: client, lifetime: services.configuration.pushedRequestLifetime,
                                                        address: address)
        return try Responses.json(PushedRequestAnswer(requestURI: pushed.requestURI, expiresIn: pushed.expiresIn), status: .created)
    }

    /// What the partner's pushed request asks for, in the request's language (`ui_locales`) or
    /// the app's (`Accept-Language`).
    func details(_ form: RequestParameters, caller: AuthenticatorCaller, request: Request) async throws -> Response {
        let pending = try await approvals.pending(requestURI: try Self.required(form, "request_uri"), for: caller)
        let language = PageLanguage.negotiate(uiLocales: pending.request.uiLocales, acceptLanguage: request.headers[.acceptLanguage])
        let consent = pending.consentNeeded ?? ScopeSet([String]())
        // Every scope asked for, the catalogue's and the client's own API scopes alike: the
        // person approves what the partner gets, all of it.
        let scopes = pending.request.consentScopes.values.map { name in
            AuthorizationDetailsAnswer.Scope(scope: name, description: language.describe(scope: name),
                                             sensitive: ScopeCatalogue.definition(name)?.sensitive ?? (name == Administrator.scope),
                                             consentRequired: consent.contains(name))
        }
        let answer = AuthorizationDetailsAnswer(
            clientID: pending.client.id, clientName: pending.client.name, scope: pending.request.scope.description, scopes: scopes,
            redirectURI: pending.request.redirectURI, prompt: pending.request.prompt.isEmpty ? nil : pending.request.prompt.joined(separator: " "),
            maxAge: pending.request.maxAge, loginHint: pending.request.loginHint, consentRequired: pending.consentNeeded != nil,
            reauthenticationRequired: pending.reauthenticationNeeded, expiresIn: max(0, pending.expiresAt - services.clock.now()),
            userEmail: caller.user.email, language: language.rawValue)
        return try Responses.json(answer)
    }

    /// `decision=allow` or `decision=deny`; the answer is where the app sends the person.
    func approve(_ form: RequestParameters, caller: AuthenticatorCaller) async throws -> Response {
        let requestURI = try Self.required(form, "request_uri")
        let allow: Bool
        switch try Self.required(form, "decision") {
        case "allow": allow = true
        case "deny": allow = false
        case let other: throw OAuthError.invalidRequest("decision must be allow or deny, not '\(other)'.")
        }
        let location = try await approvals.decide(requestURI: requestURI, allow: allow, by: caller)
        return try Responses.json(["redirect_to": location])
    }

    /// `client_id` of the partner app; the ticket goes into the deep link that opens it.
    func handoff(_ form: RequestParameters, caller: AuthenticatorCaller) async throws -> Response {
        let (ticket, expiresIn) = try await approvals.handoff(to: try Self.required(form, "client_id"), by: caller)
        return try Responses.json(HandoffAnswer(handoffTicket: ticket, expiresIn: expiresIn))
    }

    static func required(_ form: RequestParameters, _ name: String) throws -> String {
        guard let value = form[name] else { throw OAuthError.invalidRequest("The \(name) parameter is missing.") }
        return value
    }

    /// Parses the form, finds the authenticator app's user from the bearer token, and turns
    /// errors into OAuth JSON (bearer errors with their challenge).
    func answer(_ request: Request, _ body: (RequestParameters, AuthenticatorCaller) async throws -> Response) async -> Response {
        await TokenEndpoint.answer(services) {
            var request = request
            let form = try await request.formParameters()
            try form.requireSingleValues()
            let caller: AuthenticatorCaller
            do { caller = try await approvals.caller(bearer: request.bearerToken) } catch let error as OAuthError {
                let forbidden = error.code == .unauthorizedClient || error.code == .accessDenied
                return Responses.bearerError(forbidden ? OAuthError(error.code, error.errorDescription, status: 403) : error)
            }
            return try await body(form, caller)
        }
    }
}

/// RFC 9126 §2.2.
struct PushedRequestAnswer: Encodable {
    let requestURI: String
    let expiresIn: Int64

    enum CodingKeys: String, CodingKey {
        case requestURI = "request_uri"
        case expiresIn = "expires_in"
    }
}

/// `POST /authorize/v1.0/details`.
struct AuthorizationDetailsAnswer: Encodable {
    struct Scope: Encodable {
        let scope: String
        let description: String
        let sensitive: Bool
        let consentRequired: Bool

        enum CodingKeys: String, CodingKey {
            case scope, description, sensitive
            case consentRequired = "consent_required"
        }
    }

    let clientID: String
    let clientName: String
    let scope: String
    let scopes: [Scope]
    let redirectURI: String
    let prompt: String?
    let maxAge: Int64?
    let loginHint: String?
    let consentRequired: Bool
    let reauthenticationRequired: Bool
    let expiresIn: Int64
    let userEmail: String
    let language: String

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id"
        case clientName = "client_name"
        case scope, scopes, prompt, language
        case redirectURI = "redirect_uri"
        case maxAge = "max_age"
        case loginHint = "login_hint"
        case consentRequired = "consent_required"
        case reauthenticationRequired = "reauthentication_required"
        case expiresIn = "expires_in"
        case userEmail = "user_email"
    }
}

/// `POST /authorize/v1.0/handoff`.
struct HandoffAnswer: Encodable {
    let handoffTicket: String
    let expiresIn: Int64

    enum CodingKeys: String, CodingKey {
        case handoffTicket = "handoff_ticket"
        case expiresIn = "expires_in"
    }
}
