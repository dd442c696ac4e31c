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
        return try Responses.json(ApprovalAnswer(redirectTo: location))
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
