import TesseraCore

/// "Is this sign-in good enough for this request, and what else does the request need?", for
/// every way a request is answered: the hosted pages with the browser's session
/// (`Authorizer.decide`), a hand-off ticket from an authenticator app
/// (`PushedRequests.decideHandoff`) and an approval in the authenticator app (`AppApprovals`).
/// Each asks here and only words the answer for its own caller. Step-up (a second factor,
/// `acr_values`) is a new need here.
package struct InteractionPolicy: Sendable {
    let tokenIssuer: TokenIssuer
    let consents: any ConsentStore
    /// Whether a sign-in needs a second factor.
    package let secondFactors: SecondFactorPolicy
    let clock: WallClock

    package init(tokenIssuer: TokenIssuer, consents: any ConsentStore, secondFactors: SecondFactorPolicy, clock: WallClock) {
        self.tokenIssuer = tokenIssuer
        self.consents = consents
        self.secondFactors = secondFactors
        self.clock = clock
    }

    /// A sign-in the provider knows, offered to answer a request.
    package struct SignIn: Sendable {
        package var user: User
        package var authTime: Int64
        /// A sign-in made at this time or later was made for this very request: it answers
        /// `prompt=login`, `select_account` and any `max_age`. nil: none was.
        package var freshSince: Int64?
        /// How the person proved it (RFC 8176), for the request's authentication context.
        package var amr: [String]

        package init(user: User, authTime: Int64, amr: [String], freshSince: Int64? = nil) {
            self.user = user
            self.authTime = authTime
            self.amr = amr
            self.freshSince = freshSince
        }

        var isFresh: Bool { freshSince.map { authTime >= $0 } ?? false }
    }

    /// What a request needs before a code is issued, the first of them in this order.
    package enum Need: Sendable, Equatable {
        /// A sign-in (again), and why, in words for `error_description`.
        case signIn(String)
        /// A sign-in with a method that reaches the authentication context the request demands
        /// (an essential `acr`: a passkey for `phr`), and why.
        case strongerSignIn(String)
        /// The session's user gives a second factor (an authenticator app's code, a recovery
        /// code, a passkey), or sets one up first.
        case secondFactor(SecondFactorPolicy.Requirement)
        /// The user's consent to these scopes.
        case consent(ScopeSet)
        /// Nothing: the code may be issued.
        case nothing
    }

    /// The need of another way of signing in or of a second factor, in words: what an answer
    /// that can't ask for either (an app's approval, a hand-off ticket) refuses with
    /// `unmet_authentication_requirements`; nil for another need.
    package static func unmet(_ need: Need) -> String? {
        switch need {
        case .strongerSignIn(let reason): reason
        case .secondFactor(let requirement): requirement.explanation
        default: nil
        }
    }

    package func need(_ request: AuthorizationRequest, client: Client, signIn: SignIn?) async throws -> Need {
        guard let signIn else { return .signIn("The user must sign in.") }
        if let reason = reauthentication(request, client: client, signIn: signIn) { return .signIn(reason) }
        if let reason = unmetContext(request, signIn: signIn) { return .strongerSignIn(reason) }
        if let requirement = try await secondFactors.requirement(user: signIn.user, amr: signIn.amr, client: client, request: request) {
            return .secondFactor(requirement)
        }
        if let scopes = try await consent(request, client: client, user: signIn.user) { return .consent(scopes) }
        return .nothing
    }

    /// Why `signIn` can't answer `request`, or nil when it can (OpenID Connect Core §3.1.2.1):
    /// the account is disabled; the request asks for a new sign-in (`prompt=login` or
    /// `select_account`), for a new account (`prompt=create`, OpenID Connect's "Initiating User
    /// Registration") or for one more recent than `max_age`, and this one was not made for it;
    /// or it is for another user (`id_token_hint`, `claims`).
    package func reauthentication(_ request: AuthorizationRequest, client: Client, signIn: SignIn) -> String? {
        if signIn.user.isDisabled { return "The account is disabled." }
        if !signIn.isFresh {
            if request.prompt.contains("login") || request.prompt.contains("select_account") {
                return "The request asks for a new sign-in (prompt=\(request.prompt.joined(separator: " ")))."
            }
            if request.prompt.contains("create") { return "The request asks to create an account (prompt=create)." }
            if let maxAge = request.maxAge, clock.now() - signIn.authTime >= maxAge {
                return "The sign-in is older than the request's max_age."
            }
        }
        let subject = tokenIssuer.subject(userID: signIn.user.id, client: client)
        if let hinted = request.hintedSubject, hinted != subject {
            return "The request is for another user (id_token_hint) than the one signed in."
        }
        if let demanded = request.demandedSubject, demanded != subject {
            return "The request is for another user (claims) than the one signed in."
        }
        return nil
    }

    /// Why `signIn` doesn't reach the authentication context `request` demands and only another
    /// sign-in (a passkey) can, or nil when it does, a second factor can (`urn:tessera:acr:mfa`:
    /// ``SecondFactorPolicy``) or nothing is demanded (OpenID Connect Core §5.5.1.1: an essential
    /// `acr` claim; the voluntary `acr_values` name the ID token's class, and ask for a second
    /// factor from those who have one).
    package func unmetContext(_ request: AuthorizationRequest, signIn: SignIn) -> String? {
        let demanded = request.demandedContexts
        guard !demanded.isEmpty, !demanded.contains(AuthenticationContext.multiFactor),
              !demanded.contains(where: { AuthenticationContext.satisfies(amr: signIn.amr, $0) }) else { return nil }
        return "The request demands a sign-in reaching acr \(demanded.joined(separator: " or ")), and this one reached "
            + "\(AuthenticationContext.achieved(amr: signIn.amr))."
    }

    /// The scopes the user must consent to, or nil when none (OpenID Connect Core §3.1.2.4).
    ///
    /// Consent is remembered per client, and asked again only for scopes not yet allowed
    /// (all of them with `prompt=consent`). First-party clients skip it, except for
    /// sensitive scopes, which always need the user's explicit consent.
    package func consent(_ request: AuthorizationRequest, client: Client, user: User) async throws -> ScopeSet? {
        let wanted = request.consentScopes
        if request.prompt.contains("consent") { return wanted }
        let consented = try await consents.consentedScopes(userID: user.id, clientID: client.id)
        var missing = wanted.subtracting(consented)
        if client.firstParty {
            missing = ScopeSet(missing.values.filter { ScopeCatalogue.definition($0)?.sensitive == true })
        }
        return missing.isEmpty ? nil : missing
    }

    /// The error for a need the request forbids showing anything for (`prompt=none`), or for a
    /// sign-in that can't be asked for (`reauthenticate: false`); nil when the need may be met.
    package func refusal(_ need: Need, _ request: AuthorizationRequest, reauthenticate: Bool = true) -> OAuthError? {
        switch need {
        case .signIn(let reason) where !reauthenticate || request.prompt.contains("none"):
            return OAuthError(.loginRequired, reason)
        case .strongerSignIn(let reason) where !reauthenticate:
            return OAuthError(Self.unmetAuthenticationRequirements, reason)
        case .strongerSignIn(let reason) where request.prompt.contains("none"):
            return OAuthError(.loginRequired, reason)
        case .secondFactor(let requirement) where !reauthenticate:
            return OAuthError(Self.unmetAuthenticationRequirements, requirement.explanation)
        case .secondFactor(let requirement) where request.prompt.contains("none"):
            return OAuthError(.interactionRequired, requirement.explanation)
        case .consent where request.prompt.contains("none"):
            return OAuthError(.consentRequired, "The user must consent: send the request again without prompt=none.")
        default:
            return nil
        }
    }

    /// OpenID Connect Unmet Authentication Requirements 1.0.
    package static let unmetAuthenticationRequirements = OAuthError.Code(rawValue: "unmet_authentication_requirements")
}
