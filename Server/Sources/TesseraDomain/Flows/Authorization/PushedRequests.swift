import Foundation
import TesseraCore

/// Pushed authorization requests (RFC 9126) and hand-off tickets, as the authorization
/// endpoint sees them.
extension Authorizer {
    /// The prefix of every `request_uri` this provider hands out (RFC 9126 §2.2).
    public static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    /// What the pushed authorization request endpoint answers (RFC 9126 §2.2).
    public struct Pushed: Sendable {
        public var requestURI: String
        public var expiresIn: Int64
    }

    /// Validates a pushed request of an authenticated `client` by the authorization
    /// endpoint's own checks and keeps it for `lifetime` seconds. Any error is the client's to
    /// read (RFC 9126 §2.3): nothing is redirected. A push counts as a sign-in started, for
    /// `address` and for the client (``WorkLimits``): anyone can push for a public client.
    public func push(_ parameters: RequestParameters, client: Client, lifetime: Int64, address: String) async throws -> Pushed {
        var parameters = parameters
        switch parameters["client_id"] {
        case nil: parameters = parameters.adding("client_id", client.id)
        case client.id?: break
        default: throw OAuthError.invalidRequest("client_id is not the client that authenticated.")
        }
        if parameters["request_uri"] != nil { throw OAuthError.invalidRequest("request_uri can't be part of a pushed authorization request.") }
        let request: AuthorizationRequest
        switch try await validate(parameters, pushed: true) {
        case .failure(.page(let error)), .failure(.redirect(_, let error)):
            throw error
        case .success(let (validated, _)):
            request = validated
        }
        let now = clock.now()
        do { try await limits.admit(.flow, address: address, client: client.id, now: now) } catch is WorkLimits.Exceeded {
            throw Self.tooManyStartedError
        }
        let uri = Self.requestURIPrefix + SecureRandom.token()
        try await crossApp.insertPushedRequest(uriHash: tokenHash(uri), PushedRequest(
            clientID: client.id, request: try jsonText(request), createdAt: now, expiresAt: now + lifetime))
        return Pushed(requestURI: uri, expiresIn: lifetime)
    }

    /// The pushed request a `request_uri` at the authorization endpoint names, used up: a
    /// request_uri works once (RFC 9126 §4). `clientID` must be the client that pushed it.
    /// Nothing here can be redirected: until the request is found, its redirect URI is unknown.
    public func resolve(requestURI: String, clientID: String?) async throws -> Result<(AuthorizationRequest, Client), AuthorizationFailure> {
        guard let clientID else { return .failure(.page(.invalidRequest("client_id is required with request_uri."))) }
        let unknown = OAuthError(.invalidRequestURI, "The request_uri is unknown, was already used or has expired: push the request again.")
        guard requestURI.hasPrefix(Self.requestURIPrefix),
              let pushed = try await crossApp.pushedRequest(uriHash: tokenHash(requestURI), now: clock.now()) else {
            return .failure(.page(unknown))
        }
        guard pushed.clientID == clientID else {
            return .failure(.page(OAuthError(.invalidRequestURI, "The request_uri was pushed by another client.")))
        }
        guard let taken = try await crossApp.takePushedRequest(uriHash: tokenHash(requestURI), now: clock.now()),
              let (request, client) = try await pushedRequest(taken) else {
            return .failure(.page(unknown))
        }
        return .success((request, client))
    }

    /// The request and its client, while the client still accepts its redirect URI.
    func pushedRequest(_ pushed: PushedRequest) async throws -> (AuthorizationRequest, Client)? {
        guard let request = try? JSONDecoder().decode(AuthorizationRequest.self, from: Data(pushed.request.utf8)),
              let client = try await clients.client(id: pushed.clientID), client.accepts(redirectURI: request.redirectURI) else {
            return nil
        }
        return (request, client)
    }

    /// A request carrying a hand-off ticket: the person the authenticator app handed over is
    /// signed in to this one request without a page, with the sign-in the app made (its time
    /// and methods). When the scopes need consent, the consent page is shown for this request
    /// alone (the sign-in rides in its interaction): the browser's own session is neither
    /// created nor replaced, so a ticket never signs a browser in for other apps. With
    /// `prompt=none` that is `consent_required`, and the ticket is left unused so the app can
    /// go on in a browser.
    func decideHandoff(_ request: AuthorizationRequest, ticketHash: String, client: Client, address: String?) async throws -> AuthorizationOutcome {
        let target = ResponseTarget(redirectURI: request.redirectURI, mode: request.responseMode, state: request.state)
        let now = clock.now()
        let refused = OAuthError(.loginRequired, "The hand-off ticket is not valid: it was used, has expired or is for another app. "
                                    + "Sign in another way.")
        guard let ticket = try await crossApp.handoffTicket(hash: ticketHash, now: now), ticket.clientID == client.id,
              let user = try await users.user(id: ticket.userID) else {
            return respondError(target, refused)
        }
        // The ticket carries the sign-in made in the authenticator app, never a new one.
        let need = try await policy.need(request, client: client,
                                         signIn: InteractionPolicy.SignIn(user: user, authTime: ticket.authTime, amr: ticket.amr))
        if case .signIn(let reason) = need {
            return respondError(target, OAuthError(.loginRequired, reason + " A hand-off ticket can't answer it: sign in another way."))
        }
        if let reason = InteractionPolicy.unmet(need) {
            return respondError(target, OAuthError(InteractionPolicy.unmetAuthenticationRequirements,
                                                   reason + " A hand-off ticket can't answer it: sign in another way."))
        }
        if let refusal = policy.refusal(need, request) { return respondError(target, refusal) }
        guard let used = try await crossApp.takeHandoffTicket(hash: ticketHash, now: now), used.clientID == client.id else {
            return respondError(target, refused)
        }
        await audit.record(.handoffUsed, userID: user.id, clientID: client.id, detail: "handed over by \(used.issuedBy)")
        var continued = request
        continued.handoffTicketHash = nil
        if case .consent(let consent) = need {
            continued.handedOver = HandedOverSignIn(userID: user.id, authTime: used.authTime, amr: used.amr)
            // An interaction of its own, which carries the handed-over sign-in.
            return try await askConsent(continued, client: client, user: user, scopes: consent, interaction: nil, address: address)
        }
        return try await issueCode(continued, by: Authentication(userID: user.id, authTime: used.authTime, amr: used.amr,
                                                                 sid: SecureRandom.token(bytes: 16)), target: target)
    }
}
