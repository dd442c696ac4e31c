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

    package init(issuer: String, clients: any ClientStore, users: any UserStore, consents: any ConsentStore,
                 interactions: any InteractionStore, grants: any GrantStore, keys: KeyRing, tokenIssuer: TokenIssuer,
                 clock: WallClock, codeLifetime: Int64, interactionLifetime: Int64, limits: WorkLimits) {
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
    }

    static let knownPrompts: Set<String> = ["none", "login", "consent", "select_account"]
    /// Parameters that must not repeat (RFC 6749 §3.1).
    static let singleParameters = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                   "code_challenge", "code_challenge_method", "prompt", "max_age", "login_hint",
                                   "id_token_hint", "ui_locales", "request", "request_uri", "claims"]
    /// The longest value, in bytes, of each parameter a request keeps while the user signs in;
    /// a longer one is refused (`invalid_request`) rather than stored, and a too long `state`
    /// is not sent back.
    static let maximumLengths: KeyValuePairs<String, Int> = [
        "state": 2048, "nonce": 512, "scope": 2048, "claims": 8192, "login_hint": 320, "id_token_hint": 8192,
        "ui_locales": 256, "prompt": 64, "max_age": 20, "response_type": 64, "response_mode": 32,
        "code_challenge": 128, "code_challenge_method": 16,
    ]

    // MARK: Validation

    /// Validates a request. Failures before the redirect URI is trusted become error pages.
    public func validate(_ parameters: RequestParameters) async throws -> Result<(AuthorizationRequest, Client), AuthorizationFailure> {
        // 1. The client and its redirect URI: until both check out, nothing is redirected.
        guard let clientID = parameters["client_id"] else {
            return .failure(.page(OAuthError.invalidRequest("The client_id parameter is missing.")))
        }
        if parameters.duplicates.contains("client_id") || parameters.duplicates.contains("redirect_uri") {
            return .failure(.page(OAuthError.invalidRequest("client_id and redirect_uri must be sent once.")))
        }
        guard let client = try await clients.client(id: clientID) else {
            return .failure(.page(OAuthError(.invalidRequest, "The client_id is not registered here.", detail: "unknown client \(clientID)")))
        }
        guard let redirectURI = parameters["redirect_uri"] else {
            return .failure(.page(OAuthError.invalidRequest("The redirect_uri parameter is missing.")))
        }
        guard client.accepts(redirectURI: redirectURI) else {
            return .failure(.page(OAuthError.invalidRequest("The redirect_uri is not registered for this client.",
                                                            detail: "unregistered redirect_uri \(redirectURI)")))
        }

        // 2. From here on errors go back to the client.
        let modeValue = parameters["response_mode"]
        let mode = modeValue.flatMap(ResponseMode.init(rawValue:)) ?? .query
        let oversized = Self.maximumLengths.first { name, limit in (parameters[name]?.utf8.count ?? 0) > limit }
        let echoState = !parameters.duplicates.contains("state") && oversized?.key != "state"
        let target = ResponseTarget(redirectURI: redirectURI, mode: mode, state: echoState ? parameters["state"] : nil)
        func fail(_ error: OAuthError) -> Result<(AuthorizationRequest, Client), AuthorizationFailure> {
            .failure(.redirect(target, error))
        }
        if let (name, limit) = oversized {
            return fail(.invalidRequest("The \(name) parameter is longer than \(limit) bytes."))
        }
        if let name = parameters.firstDuplicate(among: Self.singleParameters) {
            return fail(.invalidRequest("The \(name) parameter was sent more than once."))
        }
        if let modeValue, ResponseMode(rawValue: modeValue) == nil {
            return fail(.invalidRequest("response_mode must be query, fragment or form_post."))
        }
        if parameters["request"] != nil {
            return fail(OAuthError(.requestNotSupported, "Request objects are not supported."))
        }
        if parameters["request_uri"] != nil {
            return fail(OAuthError(.requestURINotSupported, "request_uri is not supported."))
        }
        guard let responseType = parameters["response_type"] else {
            return fail(.invalidRequest("The response_type parameter is missing."))
        }
        guard responseType == "code" else {
            return fail(OAuthError(.unsupportedResponseType, "Only response_type=code is supported."))
        }
        guard client.grantTypes.contains(GrantType.authorizationCode) else {
            return fail(OAuthError(.unauthorizedClient, "This client may not use the authorization code flow."))
        }

        // 3. Scope: a scope the client may not ask for is refused; an unknown one is ignored (OpenID Connect Core §3.1.2.1).
        var granted: [String] = []
        for scope in ScopeSet(parsing: parameters["scope"]).values {
            if client.scopes.contains(scope) {
                granted.append(scope)
            } else if ScopeCatalogue.definition(scope) != nil {
                return fail(OAuthError(.invalidScope, "This client is not allowed the scope '\(scope)'."))
            }
        }
        let scope = ScopeSet(granted)

        // 4. PKCE (RFC 7636 §4.4.1): S256 only; required for public clients.
        let challenge = parameters["code_challenge"]
        if let method = parameters["code_challenge_method"] {
            guard method == "S256" else {
                return fail(.invalidRequest("code_challenge_method must be S256; plain is not allowed."))
            }
            guard challenge != nil else { return fail(.invalidRequest("code_challenge_method was sent without code_challenge.")) }
        }
        if let challenge {
            guard parameters["code_challenge_method"] == "S256" else {
                return fail(.invalidRequest("code_challenge_method=S256 is required with code_challenge (plain is not allowed)."))
            }
            guard PKCE.isValidChallenge(challenge) else {
                return fail(.invalidRequest("code_challenge must be 43 base64url characters (S256)."))
            }
        } else if client.isPublic {
            return fail(.invalidRequest("PKCE is required for public clients: send code_challenge with code_challenge_method=S256."))
        }

        // 5. OpenID Connect parameters.
        let prompt = (parameters["prompt"] ?? "").split(separator: " ").map(String.init)
        if let unknown = prompt.first(where: { !Self.knownPrompts.contains($0) }) {
            return fail(.invalidRequest("Unsupported prompt value '\(unknown)'."))
        }
        if prompt.contains("none") && prompt.count > 1 {
            return fail(.invalidRequest("prompt=none cannot be combined with other values."))
        }
        var maxAge: Int64?
        if let value = parameters["max_age"] {
            guard let seconds = Int64(value), seconds >= 0 else { return fail(.invalidRequest("max_age must be a non-negative integer.")) }
            maxAge = seconds
        }
        var hintedSubject: String?
        if let hint = parameters["id_token_hint"] {
            guard let subject = verifiedHintSubject(hint, clientID: client.id) else {
                return fail(.invalidRequest("id_token_hint is not an ID token this provider issued to this client."))
            }
            hintedSubject = subject
        }
        // 6. The claims parameter (OpenID Connect Core §5.5): only claims a scope the client
        // is allowed covers; consent is asked for those scopes.
        var claims: ClaimsRequest?
        var claimScopes: [String] = []
        if let text = parameters["claims"] {
            let parsed: ClaimsRequest
            do { parsed = try ClaimsRequest(parsing: text) } catch let error as OAuthError { return fail(error) }
            let coverable = ScopeCatalogue.claims(for: client.scopes.values)
            let narrowed = parsed.filtered { $0 == "sub" || coverable.contains($0) }
            for claim in narrowed.allClaims.sorted() where claim != "sub" && !ScopeCatalogue.claims(for: scope.values).contains(claim) {
                if let covering = client.scopes.values.first(where: { ScopeCatalogue.definition($0)?.claims.contains(claim) == true }) {
                    claimScopes.append(covering)
                }
            }
            claims = narrowed.isEmpty ? nil : narrowed
        }
        let locales = (parameters["ui_locales"] ?? "").split(separator: " ").map(String.init)
        let request = AuthorizationRequest(
            clientID: client.id, redirectURI: redirectURI, responseMode: mode, state: target.state, nonce: parameters["nonce"],
            scope: scope, claims: claims, claimScopes: ScopeSet(claimScopes), codeChallenge: challenge, prompt: prompt, maxAge: maxAge, loginHint: parameters["login_hint"],
            hintedSubject: hintedSubject, uiLocales: locales)
        return .success((request, client))
    }

    /// The `sub` of an ID token this provider signed for `clientID`; expiry doesn't matter for a hint.
    func verifiedHintSubject(_ token: String, clientID: String) -> String? {
        guard let jwt = try? JWT(parsing: token), (try? keys.verify(jwt)) != nil, jwt.issuer == issuer,
              jwt.audience.contains(clientID), jwt.type != "at+jwt" else { return nil }
        return jwt.subject
    }

    // MARK: Decision

    /// Decides what happens for a valid request given the browser's session.
    /// `signedInNow` is true right after the user signed in for this very request.
    /// `address`: the client address (its throttle key) of a request that has no
    /// interaction yet; a new one counts towards its share of sign-ins started (``WorkLimits``).
    public func decide(_ request: AuthorizationRequest, client: Client, session: BrowserSession?, signedInNow: Bool,
                       interaction: String? = nil, address: String? = nil) async throws -> AuthorizationOutcome {
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        let now = clock.now()
        let promptNone = request.prompt.contains("none")

        var user: User?
        if let session { user = try await users.user(id: session.userID) }
        var needsLogin = user == nil
        if let session, let user, !signedInNow {
            if request.prompt.contains("login") || request.prompt.contains("select_account") { needsLogin = true }
            if let maxAge = request.maxAge, now - session.authTime >= maxAge { needsLogin = true }
            let subject = tokenIssuer.subject(userID: user.id, client: client)
            if let hinted = request.hintedSubject, hinted != subject { needsLogin = true }
            if let demanded = request.demandedSubject, demanded != subject { needsLogin = true }
        }
        if needsLogin {
            if promptNone { return respondError(target, OAuthError(.loginRequired, "The user must sign in.")) }
            guard let id = try await interactionID(interaction, request, address: address) else { return tooManyStarted(target) }
            return .login(interaction: id, request, client)
        }
        guard let session, let user else { return respondError(target, .serverError(detail: "no session after login")) }

        if let demanded = request.demandedSubject, demanded != tokenIssuer.subject(userID: user.id, client: client) {
            return respondError(target, OAuthError(.loginRequired, "The signed-in user is not the one the claims parameter names."))
        }
        if let ask = try await scopesNeedingConsent(request, client: client, user: user) {
            if promptNone { return respondError(target, OAuthError(.consentRequired, "The user must consent.")) }
            let essential = Set(ask.values.filter { scope in
                ScopeCatalogue.definition(scope)?.claims.contains { request.claims?.essentialClaims.contains($0) == true } == true
            })
            guard let id = try await interactionID(interaction, request, address: address) else { return tooManyStarted(target) }
            return .consent(interaction: id, request, client, user, scopes: ask,
                            essential: essential)
        }
        return try await issueCode(request, session: session, target: target)
    }

    /// The scopes the consent page must ask for, or nil when none (OpenID Connect Core §3.1.2.4).
    ///
    /// Consent is remembered per client, and asked again only for scopes not yet allowed
    /// (all of them with `prompt=consent`). First-party clients skip it, except for
    /// sensitive scopes, which always need the user's explicit consent.
    func scopesNeedingConsent(_ request: AuthorizationRequest, client: Client, user: User) async throws -> ScopeSet? {
        let wanted = request.consentScopes
        let isSensitive = { (scope: String) in ScopeCatalogue.definition(scope)?.sensitive == true }
        if request.prompt.contains("consent") { return wanted }
        let consented = try await consents.consentedScopes(userID: user.id, clientID: client.id)
        var missing = wanted.subtracting(consented)
        if client.firstParty { missing = ScopeSet(missing.values.filter(isSensitive)) }
        return missing.isEmpty ? nil : missing
    }

    /// Records the user's consent and issues the code.
    public func consent(_ request: AuthorizationRequest, client: Client, session: BrowserSession, allowed: Bool) async throws -> AuthorizationOutcome {
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        guard allowed else { return respondError(target, OAuthError(.accessDenied, "The user declined the request.")) }
        try await consents.recordConsent(userID: session.userID, clientID: client.id, scopes: request.consentScopes, now: clock.now())
        return try await issueCode(request, session: session, target: target)
    }

    func issueCode(_ request: AuthorizationRequest, session: BrowserSession, target: ResponseTarget) async throws -> AuthorizationOutcome {
        let code = SecureRandom.token()
        let now = clock.now()
        try await grants.insertCode(codeHash: tokenHash(code), AuthorizationCodeRecord(
            clientID: request.clientID, userID: session.userID, redirectURI: request.redirectURI, scope: request.scope,
            claims: request.claims, nonce: request.nonce, codeChallenge: request.codeChallenge, authTime: session.authTime, amr: session.amr,
            sid: session.sid, expiresAt: now + codeLifetime), now: now)
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
            do { try limits.admit(.flow, address: address, client: request.clientID, now: now) } catch { return nil }
        }
        let id = SecureRandom.token()
        try await interactions.insertInteraction(idHash: tokenHash(id), request: try jsonText(request), now: now,
                                                 expiresAt: now + interactionLifetime)
        return id
    }

    /// The answer when the request's address or client has started too many sign-ins.
    func tooManyStarted(_ target: ResponseTarget) -> AuthorizationOutcome {
        respondError(target, OAuthError(.temporarilyUnavailable, "Too many sign-ins were started from this network or for this client. Try again in a minute."))
    }

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
