import Foundation
import TesseraCore

/// Native Sign in with Apple as an RFC 8693 token exchange: an iOS app that signed the user
/// in with AuthenticationServices sends Apple's identity token (`subject_token`, type
/// `urn:ietf:params:oauth:token-type:id_token`), `upstream_provider`, Apple's
/// `authorization_code`, the raw `nonce` it hashed into the request, and the `user` JSON
/// Apple gave it the first time; it gets Tessera's own tokens. With `link_token` (an access
/// token of the signed-in user, issued to the same client) the identity is linked to that
/// account instead. Only first-party clients may use it (docs/federation.md).
package struct UpstreamTokenExchangeGrant: TokenGrant {
    package let grantType = GrantType.tokenExchange
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    let federation: Federation
    let tokens: UserGrantTokens
    let accessTokens: AccessTokenValidator
    /// A sign-in that needs a second factor goes on at the native API.
    let signIn: SignIn

    package init(federation: Federation, tokens: UserGrantTokens, accessTokens: AccessTokenValidator, signIn: SignIn) {
        self.federation = federation
        self.tokens = tokens
        self.accessTokens = accessTokens
        self.signIn = signIn
    }

    package func exchange(_ request: TokenRequest) async throws -> TokenResponse {
        let parameters = request.parameters, client = request.client
        guard client.firstParty else {
            throw OAuthError(.unauthorizedClient, "Only first-party clients may exchange upstream identity tokens.")
        }
        guard let subjectToken = parameters["subject_token"] else { throw OAuthError.invalidRequest("subject_token is required.") }
        guard parameters["subject_token_type"] == Self.idTokenType else {
            throw OAuthError.invalidRequest("subject_token_type must be \(Self.idTokenType).")
        }
        if let requested = parameters["requested_token_type"], requested != Self.accessTokenType {
            throw OAuthError.invalidRequest("requested_token_type can only be \(Self.accessTokenType).")
        }
        guard let providerID = parameters["upstream_provider"], let upstream = federation.upstreams[providerID], upstream.isApple else {
            throw OAuthError.invalidRequest("upstream_provider must name a configured Sign in with Apple provider.")
        }
        guard let requested = parameters["scope"] else { throw OAuthError.invalidRequest("The scope parameter is missing.") }
        let scope: ScopeSet
        do { scope = try ScopePolicy.withoutConsent(ScopeSet(parsing: requested), client: client) } catch { throw error.oauthError }
        var linkUserID: String?
        if let linkToken = parameters["link_token"] {
            let validated = try? await accessTokens.validate(linkToken)
            guard let grant = validated?.grant, grant.clientID == client.id, let userID = grant.userID else {
                throw OAuthError.invalidGrant("link_token is not a valid access token of this client's signed-in user.")
            }
            linkUserID = userID
        }
        guard let rawNonce = parameters["nonce"], !rawNonce.isEmpty else {
            throw OAuthError.invalidRequest("nonce is required: the raw nonce whose SHA-256 the app put in its Sign in with Apple request.")
        }
        let outcome: Federation.Outcome
        do {
            outcome = try await federation.nativeApple(upstream, identityToken: subjectToken, authorizationCode: parameters["authorization_code"],
                                                       rawNonce: rawNonce, user: parameters["user"], linkUserID: linkUserID)
        } catch .identityInUse {
            throw OAuthError.invalidGrant("This Apple ID is already connected to another account.")
        } catch .invalidResponse(let why) {
            throw OAuthError.invalidGrant("The Sign in with Apple result is not valid: \(why)")
        } catch .unavailable(let outage) {
            throw outage
        } catch {
            throw OAuthError.invalidGrant("The Sign in with Apple result is not valid.")
        }
        switch outcome {
        case .signedIn(let user, _, let isNew):
            try await secondFactor(of: user, request)
            return try await tokens(for: user, scope: scope, client: client, isNewUser: isNew)
        case .connected(let user):
            return try await tokens(for: user, scope: scope, client: client, isNewUser: false)
        case .needsProof:
            throw OAuthError(OAuthError.Code(rawValue: "account_exists"), "An account with this Apple ID's email address exists. Sign in to "
                                + "it, then send this exchange again with link_token (the access token) to connect Apple.")
        }
    }

    /// A person with two-step verification, or an app requiring it, gives the second factor at
    /// the native API: ``FlowFailure/secondFactorRequired(token:)`` carries the continuation
    /// token, and the token endpoint words it (docs/two-step.md).
    func secondFactor(of user: User, _ request: TokenRequest) async throws {
        try await signIn.requireSecondFactor(SignedIn(userID: user.id, amr: ["fed"]), caller: request.caller)
    }

    func tokens(for user: User, scope: ScopeSet, client: Client, isNewUser: Bool) async throws -> TokenResponse {
        var response = try await tokens.issue(userID: user.id, amr: ["fed"], scope: scope, client: client)
        response.issuedTokenType = Self.accessTokenType
        response.isNewUser = isNewUser
        return response
    }
}
