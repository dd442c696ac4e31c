import Foundation
import TesseraCore

/// The authorization endpoint's logic (RFC 6749 §4.1, OpenID Connect Core §3.1.2):
/// validate the request in a fixed order of checks, then decide between signing in,
/// asking consent and issuing a code.
public struct Authorizer: Sendable {
    let issuer: String
    let clients: any ClientStore
    let users: any UserStore
    let consents: any ConsentStore
    let interactions: any InteractionStore
    let grants: any GrantStore
    let keys: KeyRing
    let tokenIssuer: TokenIssuer
    let clock: WallClock
    let codeLifetime: Int64
    let interactionLifetime: Int64
    let limits: WorkLimits
    let audit: AuditTrail
    let crossApp: any CrossAppStore
    /// Whether a known sign-in answers a request, and what else it needs.
    package let policy: InteractionPolicy

    package init(issuer: String, clients: any ClientStore, users: any UserStore, consents: any ConsentStore,
                 interactions: any InteractionStore, grants: any GrantStore, crossApp: any CrossAppStore,
                 factors: any SecondFactorStore & PasskeyStore, keys: KeyRing,
                 tokenIssuer: TokenIssuer, clock: WallClock, codeLifetime: Int64, interactionLifetime: Int64, limits: WorkLimits,
                 audit: AuditTrail) {
        self.audit = audit
        self.crossApp = crossApp
        self.issuer = issuer
        self.clients = clients
        self.users = users
        self.consents = consents
        self.interactions = interactions
        self.grants = grants
        self.keys = keys
        self.tokenIssuer = tokenIssuer
        self.clock = clock
        self.codeLifetime = codeLifetime
        self.interactionLifetime = interactionLifetime
        self.limits = limits
        policy = InteractionPolicy(tokenIssuer: tokenIssuer, consents: consents, secondFactors: SecondFactorPolicy(factors: factors),
                                   clock: clock)
    }

    // MARK: Validation

    /// Validates a request through ``checks``, in order. A failing check's error goes back to
    /// the redirect URI only when the check is redirectable; before the client and its
    /// redirect URI are verified, errors become error pages.
    /// `pushed`: the request came to the pushed authorization request endpoint (RFC 9126).
    public func validate(_ parameters: RequestParameters, pushed: Bool = false) async throws
        -> Result<(AuthorizationRequest, Client), AuthorizationFailure> {
        var draft = AuthorizationDraft(parameters, pushed: pushed)
        for check in Self.checks {
            guard var error = try await check.run(self, &draft) else { continue }
            error.redirectable = check.redirectable && draft.target != nil
            if error.redirectable, let target = draft.target { return .failure(.redirect(target, error)) }
            return .failure(.page(error))
        }
        return .success((try draft.request(), try draft.trusted().client))
    }

    // MARK: Decision

    /// Decides what happens for a valid request given the browser's session.
    /// `signedInNow` is true right after the user signed in for this very request.
    /// `address`: the client address (its throttle key) of a request that has no
    /// interaction yet; a new one counts towards its share of sign-ins started (``WorkLimits``).
    public func decide(_ request: AuthorizationRequest, client: Client, session: BrowserSession?, signedInNow: Bool,
                       interaction: String? = nil, address: String? = nil) async throws -> AuthorizationOutcome {
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        if let ticketHash = request.handoffTicketHash {
            return try await decideHandoff(request, ticketHash: ticketHash, client: client, address: address)
        }
        // A handed-over request waits only for its consent page; no sign-in on the hosted pages resumes it.
        if request.handedOver != nil {
            return .errorPage(OAuthError.invalidRequest("This request was handed over by an app and only awaits consent: go back to the app."))
        }
        var signIn: InteractionPolicy.SignIn?
        if let session, let user = try await users.user(id: session.userID) {
            signIn = InteractionPolicy.SignIn(user: user, authTime: session.authTime, amr: session.amr,
                                              freshSince: signedInNow ? session.authTime : nil)
        }
        let need = try await policy.need(request, client: client, signIn: signIn)
        // A sign-in just made for this request that still doesn't answer it is the wrong user's: no loop back to the login page.
        if let refusal = policy.refusal(need, request, reauthenticate: !signedInNow) { return respondError(target, refusal) }
        switch need {
        case .signIn, .strongerSignIn:
            guard let id = try await interactionID(interaction, request, address: address) else { return tooManyStarted(target) }
            return .login(interaction: id, request, client)
        case .secondFactor(let requirement):
            guard let id = try await interactionID(interaction, request, address: address), let signIn else { return tooManyStarted(target) }
            return .secondFactor(interaction: id, request, client, signIn.user, requirement)
        case .consent(let scopes):
            guard let user = signIn?.user else { return respondError(target, .serverError(detail: "consent without a sign-in")) }
            return try await askConsent(request, client: client, user: user, scopes: scopes, interaction: interaction, address: address)
        case .nothing:
            guard let session else { return respondError(target, .serverError(detail: "no session after login")) }
            return try await issueCode(request, by: session.authentication, target: target)
        }
    }

    /// The consent page for `scopes`, within the request's interaction.
    func askConsent(_ request: AuthorizationRequest, client: Client, user: User, scopes: ScopeSet, interaction: String?,
                    address: String?) async throws -> AuthorizationOutcome {
        let essential = Set(scopes.values.filter { scope in
            ScopeCatalogue.definition(scope)?.claims.contains { request.claims?.essentialClaims.contains($0) == true } == true
        })
        guard let id = try await interactionID(interaction, request, address: address) else {
            return tooManyStarted(ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state))
        }
        return .consent(interaction: id, request, client, user, scopes: scopes, essential: essential)
    }

    /// The sign-in a consent to `request` is given under: the one a hand-off ticket carried
    /// into the request, else the browser's session; nil when there is neither.
    public func consentingSignIn(_ request: AuthorizationRequest, session: BrowserSession?) -> Authentication? {
        if let handedOver = request.handedOver {
            return Authentication(userID: handedOver.userID, authTime: handedOver.authTime, amr: handedOver.amr,
                                  sid: SecureRandom.token(bytes: 16))
        }
        return session?.authentication
    }

    /// Records the user's consent and issues the code.
    public func consent(_ request: AuthorizationRequest, client: Client, by authentication: Authentication,
                        allowed: Bool) async throws -> AuthorizationOutcome {
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        guard allowed else { return respondError(target, OAuthError(.accessDenied, "The user declined the request.")) }
        try await consents.recordConsent(userID: authentication.userID, clientID: client.id, scopes: request.consentScopes, now: clock.now())
        await audit.record(.consentGiven, userID: authentication.userID, clientID: client.id, detail: request.consentScopes.description)
        return try await issueCode(request, by: authentication, target: target)
    }

    func issueCode(_ request: AuthorizationRequest, by authentication: Authentication, target: ResponseTarget) async throws -> AuthorizationOutcome {
        let code = SecureRandom.token()
        let now = clock.now()
        try await grants.insertCode(codeHash: tokenHash(code), AuthorizationCodeRecord(
            clientID: request.clientID, userID: authentication.userID, redirectURI: request.redirectURI, scope: request.scope,
            claims: request.claims, nonce: request.nonce, codeChallenge: request.codeChallenge, authTime: authentication.authTime,
            amr: authentication.amr, sid: authentication.sid, expiresAt: now + codeLifetime), now: now)
        var parameters = [("code", code)]
        if let state = request.state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return .respond(target, parameters)
    }

    /// An error response for the client (RFC 6749 §4.1.2.1), with `iss` (RFC 9207).
    public func respondError(_ target: ResponseTarget, _ error: OAuthError) -> AuthorizationOutcome {
        var parameters = [("error", error.code.rawValue)]
        if let description = error.errorDescription { parameters.append(("error_description", description)) }
        if let state = target.state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return .respond(target, parameters)
    }

    /// The interaction that keeps `request` while the hosted pages complete it: `existing`,
    /// or a new one — nil when `address` or the client has started too many sign-ins.
    func interactionID(_ existing: String?, _ request: AuthorizationRequest, address: String?) async throws -> String? {
        if let existing { return existing }
        let now = clock.now()
        if let address {
            do { try await limits.admit(.flow, address: address, client: request.clientID, now: now) } catch is WorkLimits.Exceeded { return nil }
        }
        let id = SecureRandom.token()
        try await interactions.insertInteraction(idHash: tokenHash(id), request: try jsonText(request), now: now,
                                                 expiresAt: now + interactionLifetime)
        return id
    }

    /// The answer when the request's address or client has started too many sign-ins.
    func tooManyStarted(_ target: ResponseTarget) -> AuthorizationOutcome {
        respondError(target, Self.tooManyStartedError)
    }

    static let tooManyStartedError = OAuthError(.temporarilyUnavailable, "Too many sign-ins were started from this network or for "
                                                    + "this client. Try again in a minute.", status: 429)

    /// The pending request behind an interaction id from a hosted page form.
    public func pendingRequest(_ interaction: String) async throws -> (AuthorizationRequest, Client)? {
        guard let text = try await interactions.interaction(idHash: tokenHash(interaction), now: clock.now()),
              let request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(text.utf8)),
              let client = try await clients.client(id: request.clientID),
              client.accepts(redirectURI: request.redirectURI) else { return nil }
        return (request, client)
    }

    public func finish(_ interaction: String) async throws {
        try await interactions.deleteInteraction(idHash: tokenHash(interaction))
    }
}

/// Why an authorization request failed, and so where the error goes.
public enum AuthorizationFailure: Error, Sendable {
    case page(OAuthError)
    case redirect(ResponseTarget, OAuthError)
}
