import Foundation
import TesseraCore

/// An authenticator app's signed-in user, proven by an access token issued to the app.
public struct AuthenticatorCaller: Sendable {
    /// The authenticator client.
    public var client: Client
    public var user: User
    /// The grant behind the access token: when and how the user signed in to the app.
    public var grant: Grant

    /// The sign-in the app's token stands for.
    var authentication: Authentication {
        Authentication(userID: user.id, authTime: grant.authTime ?? grant.createdAt, amr: grant.amr,
                       sid: grant.sid ?? SecureRandom.token(bytes: 16))
    }
}

/// A pushed request as an authenticator app shows it before the person decides.
public struct PendingApproval: Sendable {
    public var client: Client
    public var request: AuthorizationRequest
    /// Scopes the person has not allowed this client yet (nil: none): the app must show them.
    public var consentNeeded: ScopeSet?
    /// The app's sign-in is too old for the request (`max_age`, `prompt=login`): sign the
    /// person in again in the app, then approve with the new token.
    public var reauthenticationNeeded: Bool
    public var expiresAt: Int64
}

/// App-to-app authorization: the operator's own app (an authenticator client) receives a
/// partner app's pushed request as a universal link, shows it, and approves or denies it for
/// its signed-in user; and hands that user over to a partner app with a one-minute ticket.
public struct AppApprovals: Sendable {
    let authorizer: Authorizer
    let accessTokens: AccessTokenValidator
    let handoffLifetime: Int64

    package init(authorizer: Authorizer, accessTokens: AccessTokenValidator, handoffLifetime: Int64) {
        self.authorizer = authorizer
        self.accessTokens = accessTokens
        self.handoffLifetime = handoffLifetime
    }

    var crossApp: any CrossAppStore { authorizer.crossApp }
    var clock: WallClock { authorizer.clock }

    /// The authenticator app's user behind a bearer access token: `invalid_token` without a
    /// valid one, `unauthorized_client` when its client is not an authenticator, and
    /// `access_denied` for a disabled account.
    public func caller(bearer token: String?) async throws -> AuthenticatorCaller {
        guard let token else { throw OAuthError(.invalidToken, "The authenticator app's access token is required (Authorization: Bearer).") }
        let validated = try await accessTokens.validate(token)
        guard let grant = validated.grant, let userID = grant.userID else {
            throw OAuthError(.invalidToken, "The access token is not a user's: the authenticator app's signed-in user must approve.")
        }
        guard let client = try await authorizer.clients.client(id: grant.clientID), client.authenticator else {
            throw OAuthError(.unauthorizedClient, "The access token was not issued to an authenticator app (tessera clients add --authenticator).")
        }
        guard let user = try await authorizer.users.user(id: userID), !user.isDisabled else {
            throw OAuthError(.accessDenied, "The account is disabled.")
        }
        return AuthenticatorCaller(client: client, user: user, grant: grant)
    }

    /// What the partner asks for, without using the request up.
    public func pending(requestURI: String, for caller: AuthenticatorCaller) async throws -> PendingApproval {
        let (pushed, request, client) = try await find(requestURI)
        return PendingApproval(client: client, request: request,
                               consentNeeded: try await authorizer.policy.consent(request, client: client, user: caller.user),
                               reauthenticationNeeded: authorizer.policy.reauthentication(request, client: client,
                                                                                           signIn: signIn(caller, pushedAt: pushed.createdAt)) != nil,
                               expiresAt: pushed.expiresAt)
    }

    /// The person's decision. Returns where the authenticator app sends the person next: the
    /// partner's redirect URI with the code (or the error), which the app opens.
    ///
    /// A sign-in too old for the request is refused with `login_required` before the request
    /// is used, so the app can sign the person in again and approve with the new token.
    public func decide(requestURI: String, allow: Bool, by caller: AuthenticatorCaller) async throws -> String {
        let (pushed, request, client) = try await find(requestURI)
        let need = try await authorizer.policy.need(request, client: client, signIn: signIn(caller, pushedAt: pushed.createdAt))
        if allow, case .signIn(let reason) = need {
            throw OAuthError(.loginRequired, reason + Self.signInAgain)
        }
        if allow, let reason = InteractionPolicy.unmet(need) {
            throw OAuthError(InteractionPolicy.unmetAuthenticationRequirements, reason + Self.signInAgain)
        }
        guard try await crossApp.takePushedRequest(uriHash: tokenHash(requestURI), now: clock.now()) != nil else {
            throw Self.unknownRequest
        }
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        let outcome: AuthorizationOutcome
        if !allow {
            await authorizer.audit.record(.appDenied, userID: caller.user.id, clientID: client.id, detail: "in \(caller.client.id)")
            outcome = authorizer.respondError(target, OAuthError(.accessDenied, "The user declined in the authenticator app."))
        } else if let refusal = authorizer.policy.refusal(need, request) {
            outcome = authorizer.respondError(target, refusal)
        } else {
            // The person saw the request in the app and allowed it: that is their consent.
            try await authorizer.consents.recordConsent(userID: caller.user.id, clientID: client.id, scopes: request.consentScopes,
                                                        now: clock.now())
            await authorizer.audit.record(.appApproved, userID: caller.user.id, clientID: client.id,
                                          detail: "\(request.consentScopes.description) in \(caller.client.id)")
            var approved = request
            approved.handoffTicketHash = nil
            outcome = try await authorizer.issueCode(approved, by: caller.authentication, target: target)
        }
        guard case .respond(let target, let parameters) = outcome else {
            throw OAuthError.serverError(detail: "an app approval decided something other than a response")
        }
        return RequestParameters.appending(parameters, to: target.redirectURI, inFragment: target.mode == .fragment)
    }

    /// A single-use ticket that signs the caller's user in to `clientID` without a page, for
    /// ``handoffLifetime`` seconds. The partner must exist and may not be an authenticator itself.
    public func handoff(to clientID: String, by caller: AuthenticatorCaller) async throws -> (ticket: String, expiresIn: Int64) {
        guard let partner = try await authorizer.clients.client(id: clientID) else {
            throw OAuthError.invalidRequest("client_id names no registered client.")
        }
        guard !partner.authenticator else {
            throw OAuthError.invalidRequest("client_id names an authenticator app: a hand-off is for the partner apps it opens.")
        }
        guard partner.grantTypes.contains(GrantType.authorizationCode) else {
            throw OAuthError(.unauthorizedClient, "The partner client can't use the authorization code flow, which redeems tickets.")
        }
        let ticket = SecureRandom.token()
        let now = clock.now()
        let authentication = caller.authentication
        try await crossApp.insertHandoffTicket(hash: tokenHash(ticket), HandoffTicket(
            clientID: partner.id, userID: caller.user.id, issuedBy: caller.client.id, authTime: authentication.authTime,
            amr: authentication.amr, expiresAt: now + handoffLifetime), now: now)
        await authorizer.audit.record(.handoffIssued, userID: caller.user.id, clientID: partner.id, detail: "by \(caller.client.id)")
        return (ticket, handoffLifetime)
    }

    static let unknownRequest = OAuthError(.invalidRequestURI, "The request_uri is unknown, was already used or has expired.")

    func find(_ requestURI: String) async throws -> (PushedRequest, AuthorizationRequest, Client) {
        guard requestURI.hasPrefix(Authorizer.requestURIPrefix),
              let pushed = try await crossApp.pushedRequest(uriHash: tokenHash(requestURI), now: clock.now()),
              let (request, client) = try await authorizer.pushedRequest(pushed) else {
            throw Self.unknownRequest
        }
        guard request.responseMode != .formPost else {
            throw OAuthError.invalidRequest("The request asks for response_mode=form_post, which only a browser can deliver: "
                                            + "open the link in the browser instead.")
        }
        return (pushed, request, client)
    }

    /// The app's sign-in, offered for a request: one made after the request was pushed was
    /// made for it (`prompt=login`, `max_age`).
    func signIn(_ caller: AuthenticatorCaller, pushedAt: Int64) -> InteractionPolicy.SignIn {
        InteractionPolicy.SignIn(user: caller.user, authTime: caller.authentication.authTime, amr: caller.authentication.amr,
                                 freshSince: pushedAt)
    }

    static let signInAgain = " Sign the person in again in the app, then approve."
}
