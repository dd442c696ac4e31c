import Foundation
import TesseraCore

/// The OpenID Connect client: discovery, the authorization URL, code exchange, ID-token
/// validation, userinfo, refresh, revocation and the logout URL — every exchange with the
/// provider, and nothing of the session (that is ``AuthState``'s).
///
/// Like AppAuth's `OIDAuthorizationService` it holds no user state; it caches the discovery
/// document and the provider's keys, and is safe to share between tasks.
///
/// ```swift
/// let client = OIDCClient(configuration: .init(
///     issuer: URL(string: "https://id.example.com")!,
///     clientID: "my-app",
///     redirectURI: "com.example.app:/callback"))
/// let request = client.makeRequest()
/// let callback = try await userAgent.present(try await client.authorizationURL(for: request),
///                                            redirectURI: request.redirectURI)
/// let tokens = try await client.exchangeCode(from: callback, request: request)
/// ```
public final class OIDCClient: Sendable {
    /// What the client needs to know about itself and its provider.
    public struct Configuration: Sendable {
        /// The issuer identifier; discovery is at `issuer/.well-known/openid-configuration`.
        public var issuer: URL
        /// The client's `client_id`.
        public var clientID: String
        /// The secret of a confidential client, sent with `client_secret_basic` (RFC 6749 §2.3.1).
        /// `nil` for a public client (an app), which proves itself with PKCE only.
        public var clientSecret: String?
        /// The redirect URI requests use unless they name their own.
        public var redirectURI: String
        /// The scopes requests use unless they name their own.
        public var scope: String
        /// Seconds of clock difference tolerated when checking `exp` and `iat`.
        public var clockSkew: TimeInterval
        /// How long the discovery document is reused before it is fetched again.
        public var discoveryLifetime: TimeInterval
        /// Hosts an ``AuthRequest/ssoBaseURL`` may name besides the issuer's.
        public var trustedSSOHosts: Set<String>
        /// The provider's endpoints, when it publishes no discovery document (Sign in with
        /// Apple's documented endpoints, for example); discovery is then never fetched.
        public var metadata: ProviderMetadata?
        /// Sends the secret in the form body (`client_secret_post`) instead of `client_secret_basic`.
        public var secretInBody = false
        /// Makes the client secret for each request, for providers whose secret is a short-lived
        /// signed JWT (Sign in with Apple); used instead of ``clientSecret`` when set.
        public var clientSecretProvider: (@Sendable () throws -> String)?

        /// A configuration; only the issuer, client id and redirect URI are required.
        public init(issuer: URL, clientID: String, clientSecret: String? = nil, redirectURI: String,
                    scope: String = AuthRequest.defaultScope, clockSkew: TimeInterval = 120, discoveryLifetime: TimeInterval = 3600,
                    trustedSSOHosts: Set<String> = []) {
            self.issuer = issuer
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.redirectURI = redirectURI
            self.scope = scope
            self.clockSkew = clockSkew
            self.discoveryLifetime = discoveryLifetime
            self.trustedSSOHosts = trustedSSOHosts
        }

        /// The issuer as a string without a trailing slash: what `iss` values must equal.
        public var issuerIdentifier: String {
            var value = issuer.absoluteString
            while value.hasSuffix("/") { value.removeLast() }
            return value
        }
    }

    /// How `revoke` describes the token (RFC 7009 §2.1).
    public enum TokenTypeHint: String, Sendable {
        /// An access token.
        case accessToken = "access_token"
        /// A refresh token: revoking it ends its whole grant at Tessera.
        case refreshToken = "refresh_token"
        /// A Native SSO device secret: revoking it ends the device session for every app of the group.
        case deviceSecret = "device_secret"
    }

    /// The client's configuration.
    public let configuration: Configuration
    let transport: any HTTPTransport
    let now: @Sendable () -> Date
    private let discovery: DiscoveryCache
    private let keys: KeyCache

    /// - Parameters:
    ///   - configuration: the provider's issuer, the client's ID, redirect URI and scopes.
    ///   - transport: how HTTP is sent (`TesseraAuth`'s initialiser without it uses `URLSessionTransport`).
    ///   - now: the clock, injectable so expiry can be tested without waiting.
    public init(configuration: Configuration, transport: any HTTPTransport,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.transport = transport
        self.now = now
        discovery = DiscoveryCache()
        keys = KeyCache()
    }

    // MARK: Discovery (OpenID Connect Discovery §4, RFC 8414 §3)

    /// The provider's metadata, fetched once and reused for ``Configuration/discoveryLifetime``;
    /// concurrent callers share one fetch. The document's `issuer` must be exactly the configured
    /// issuer (Discovery §4.3), or this throws ``AuthError/Code/issuerMismatch``.
    public func discover(forceRefresh: Bool = false) async throws -> ProviderMetadata {
        if let metadata = configuration.metadata { return metadata }
        return try await discovery.metadata(forceRefresh: forceRefresh, now: now(), lifetime: configuration.discoveryLifetime) {
            try await self.fetchMetadata()
        }
    }

    private func fetchMetadata() async throws -> ProviderMetadata {
        let issuer = configuration.issuerIdentifier
        guard let url = URL(string: issuer + "/.well-known/openid-configuration") else {
            throw AuthError(.configuration, "issuer '\(issuer)' is not a URL")
        }
        try AuthRequest.checkEndpoint(url, name: "issuer")
        let response = try await transport.send(HTTPTransportRequest(url: url, headers: ["Accept": "application/json"]))
        guard response.status == 200 else {
            throw AuthError(.discovery, "discovery at \(url) answered HTTP \(response.status)", httpStatus: response.status)
        }
        let metadata: ProviderMetadata
        do { metadata = try JSONDecoder().decode(ProviderMetadata.self, from: response.body) } catch {
            throw AuthError(.discovery, "the discovery document at \(url) is not valid metadata: \(error)")
        }
        guard metadata.issuer == issuer else {
            throw AuthError(.issuerMismatch, "discovery names issuer '\(metadata.issuer)', expected '\(issuer)' (OpenID Connect Discovery §4.3)")
        }
        return metadata
    }

    // MARK: Authorization request (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2)

    /// A new request with this client's id, redirect URI and scopes and fresh `state`, `nonce`
    /// and PKCE verifier.
    public func makeRequest(scope: String? = nil, redirectURI: String? = nil, ssoBaseURL: String? = nil,
                            additionalParameters: [String: String] = [:]) -> AuthRequest {
        AuthRequest(clientID: configuration.clientID, scope: scope ?? configuration.scope,
                    redirectURI: redirectURI ?? configuration.redirectURI, ssoBaseURL: ssoBaseURL,
                    additionalParameters: additionalParameters)
    }

    /// The URL to open in the browser for `request`, from the discovered `authorization_endpoint`
    /// (or the request's ``AuthRequest/ssoBaseURL`` when it names a trusted host).
    public func authorizationURL(for request: AuthRequest) async throws -> URL {
        try request.authorizationURL(metadata: try await discover(), trustedSSOHosts: configuration.trustedSSOHosts)
    }

    /// Reads and validates the redirect for `request`: redirect URI, `iss` (required when the
    /// provider announces RFC 9207 support), `state`, then error or code.
    public func response(from url: URL, for request: AuthRequest) async throws -> AuthResponse {
        let metadata = try await discover()
        return try AuthResponse(url: url, request: request, expectedIssuer: metadata.issuer,
                                requireIssuer: metadata.authorizationResponseIssParameterSupported == true)
    }

    /// Runs the whole browser part: opens the authorization URL with `userAgent`, validates the
    /// redirect and redeems the code. Returns validated tokens.
    public func authorize(_ request: AuthRequest, using userAgent: any ExternalUserAgent) async throws -> AuthorizationResult {
        let url = try await authorizationURL(for: request)
        let callback = try await userAgent.present(url, redirectURI: request.redirectURI)
        return try await exchangeCode(from: callback, request: request)
    }

    // MARK: Token endpoint (RFC 6749 §4.1.3, §6)

    /// Validates the redirect `url` for `request` and redeems its code.
    public func exchangeCode(from url: URL, request: AuthRequest) async throws -> AuthorizationResult {
        try await exchangeCode(try await response(from: url, for: request), request: request)
    }

    /// Redeems the code of a validated response with the request's PKCE verifier, then validates
    /// the ID token against the request's nonce (OpenID Connect Core §3.1.3): ``token(_:)`` with
    /// ``TokenRequest/init(exchanging:for:)``.
    public func exchangeCode(_ response: AuthResponse, request: AuthRequest) async throws -> AuthorizationResult {
        try await token(try TokenRequest(exchanging: response, for: request))
    }

    /// Redeems an authorization code obtained some other way (a native app's Sign in with Apple
    /// code has no redirect URI), validating the ID token against `nonce`: ``token(_:)`` with
    /// ``TokenRequest/init(code:redirectURI:codeVerifier:nonce:requestedScope:additionalParameters:)``.
    /// An ID token is required when `requested` (or the answer's `scope`) contains `openid`.
    public func redeemCode(_ code: String, redirectURI: String?, codeVerifier: String?, nonce: String?,
                           scope requested: String) async throws -> AuthorizationResult {
        try await token(TokenRequest(code: code, redirectURI: redirectURI, codeVerifier: codeVerifier, nonce: nonce,
                                     requestedScope: requested))
    }

    /// Exchanges a refresh token for new tokens (RFC 6749 §6), validating a new ID token against
    /// `originalIDToken` (OpenID Connect Core §12.2).
    ///
    /// This sends the refresh token every time it is called. Tessera rotates refresh tokens and
    /// treats a second use as theft (revoking the whole session), so apps should refresh through
    /// ``AuthState``, which makes concurrent callers share one request.
    ///
    /// ``perform(_:)`` with ``TokenRequest/init(refreshing:scope:)``; what the answer leaves out
    /// (a refresh token that wasn't rotated, the ID token, the scope) is kept from `tokens`.
    public func refresh(_ tokens: TokenSet, scope: String? = nil) async throws -> TokenSet {
        let request = try TokenRequest(refreshing: tokens, scope: scope)
        let receivedAt = now()
        let response = try await perform(request)
        _ = try await validatedIDToken(of: response, for: request)
        return TokenSet(response: response, receivedAt: receivedAt, previous: tokens, issuer: configuration.issuerIdentifier,
                        clientID: configuration.clientID)
    }

    /// Posts `request` to the discovered `token_endpoint` with this client's authentication
    /// (RFC 6749 §2.3.1: `client_secret_basic` with a secret, `client_secret_post` when
    /// ``Configuration/secretInBody``, otherwise `client_id` in the form) and returns the answer
    /// as sent (RFC 6749 §5.1). Nothing in it is validated beyond its shape: use ``token(_:)`` for
    /// a checked ID token.
    ///
    /// - Throws: ``AuthError`` ``AuthError/Code/oauth`` with the provider's error (RFC 6749 §5.2);
    ///   ``AuthError/Code/invalidResponse`` for an answer that isn't JSON or whose `token_type`
    ///   isn't `Bearer` (RFC 6750); ``AuthError/Code/configuration`` for a token endpoint that isn't
    ///   `https` (or `http` on loopback); ``AuthError/Code/discovery``, ``AuthError/Code/network``.
    public func perform(_ request: TokenRequest) async throws -> TokenResponse {
        try await tokenRequest(request.parameters.map { ($0.name, $0.value) })
    }

    /// Performs `request` (``perform(_:)``) and validates the answer's ID token (OpenID Connect
    /// Core §3.1.3.7) against the request's ``TokenRequest/nonce``, and for a refresh against its
    /// ``TokenRequest/originalIDToken`` (§12.2). For the authorization-code grant an answer without
    /// an ID token is refused when `openid` was granted: the answer's `scope`, or else the
    /// request's ``TokenRequest/requestedScope`` (§3.1.3.3).
    ///
    /// The result's tokens are the answer's alone; ``refresh(_:scope:)`` also keeps what a refresh
    /// answer leaves out (RFC 6749 §6).
    ///
    /// - Throws: what ``perform(_:)`` throws; ``AuthError/Code/idTokenInvalid`` with the failed
    ///   check; ``AuthError/Code/invalidResponse`` for a missing ID token.
    public func token(_ request: TokenRequest) async throws -> AuthorizationResult {
        let receivedAt = now()
        let response = try await perform(request)
        let idToken = try await validatedIDToken(of: response, for: request)
        let tokens = TokenSet(response: response, receivedAt: receivedAt, issuer: configuration.issuerIdentifier,
                              clientID: configuration.clientID)
        return AuthorizationResult(tokens: tokens, idToken: idToken)
    }

    /// The answer's ID token, validated for `request`; nil when there is none and none is due.
    private func validatedIDToken(of response: TokenResponse, for request: TokenRequest) async throws -> IDToken? {
        if let raw = response.idToken {
            let original = try request.originalIDToken.map(IDToken.init(parsing:))
            return try await validateIDToken(raw, nonce: request.nonce, accessToken: response.accessToken, original: original)
        }
        if request.grantType == GrantType.authorizationCode,
           ScopeSet(parsing: response.scope ?? request.requestedScope ?? "").contains("openid") {
            throw AuthError.invalidResponse("the token response has no id_token although openid was granted (OpenID Connect Core §3.1.3.3)")
        }
        return nil
    }

    /// Posts a form to the token endpoint with this client's authentication and decodes the answer
    /// (RFC 6749 §5.1, errors §5.2).
    func tokenRequest(_ parameters: [(String, String)]) async throws -> TokenResponse {
        let metadata = try await discover()
        let data = try await post(to: metadata.tokenEndpoint, parameters, name: "token endpoint")
        let token: TokenResponse
        do { token = try JSONDecoder().decode(TokenResponse.self, from: data) } catch {
            throw AuthError.invalidResponse("the token response is not valid JSON: \(error)")
        }
        guard token.tokenType.lowercased() == "bearer" else {
            throw AuthError.invalidResponse("token_type '\(token.tokenType)' is not Bearer")
        }
        return token
    }

    /// A form POST with client authentication: `client_secret_basic` for a confidential client,
    /// `client_id` in the body for a public one (RFC 6749 §2.3.1, §3.2.1).
    func post(to endpoint: String, _ parameters: [(String, String)], name: String, success: Int = 200) async throws -> Data {
        guard let url = URL(string: endpoint) else { throw AuthError(.discovery, "the \(name) '\(endpoint)' is not a URL") }
        try AuthRequest.checkEndpoint(url, name: name)
        var parameters = parameters
        var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        if let secret = try configuration.clientSecretProvider?() ?? configuration.clientSecret {
            if configuration.secretInBody {
                parameters += [("client_id", configuration.clientID), ("client_secret", secret)]
            } else {
                let pair = FormEncoding.escape(configuration.clientID) + ":" + FormEncoding.escape(secret)
                headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
            }
        } else {
            parameters.append(("client_id", configuration.clientID))
        }
        let response = try await transport.send(HTTPTransportRequest(method: "POST", url: url, headers: headers,
                                                                     body: Data(FormEncoding.encode(parameters).utf8)))
        guard response.status == success else { throw Self.protocolError(response, name: name) }
        return response.body
    }

    /// The error of a non-200 answer: the provider's `error` JSON when there is one (RFC 6749 §5.2).
    static func protocolError(_ response: HTTPTransportResponse, name: String) -> AuthError {
        if let body = try? JSONDecoder().decode([String: JSONValue].self, from: response.body),
           let code = body["error"]?.stringValue {
            return .oauth(OAuthError(OAuthError.Code(rawValue: code), body["error_description"]?.stringValue, status: response.status),
                          httpStatus: response.status)
        }
        if let challenge = response.headers["www-authenticate"], let code = Self.bearerError(challenge) {
            return .oauth(OAuthError(OAuthError.Code(rawValue: code), nil, status: response.status), httpStatus: response.status)
        }
        return .invalidResponse("the \(name) answered HTTP \(response.status)", httpStatus: response.status)
    }

    /// The `error` of a `WWW-Authenticate: Bearer ...` challenge (RFC 6750 §3).
    static func bearerError(_ challenge: String) -> String? {
        guard let range = challenge.range(of: "error=\"") else { return nil }
        let rest = challenge[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    // MARK: ID token (OpenID Connect Core §3.1.3.7)

    /// Validates an ID token against the provider's JWKS. When the token names a `kid` the cached
    /// keys lack (the provider rotated its keys), the JWKS is fetched again once.
    public func validateIDToken(_ raw: String, nonce: String?, accessToken: String? = nil, original: IDToken? = nil) async throws -> IDToken {
        let metadata = try await discover()
        let supported = Set((metadata.idTokenSigningAlgValuesSupported ?? ["RS256"]).compactMap(JWSAlgorithm.init(rawValue:)))
        let validator = IDTokenValidator(issuer: metadata.issuer, clientID: configuration.clientID, allowedAlgorithms: supported,
                                         clockSkew: configuration.clockSkew)
        let current = try await verificationKeys(metadata, forceRefresh: false)
        do {
            return try validator.validate(raw, keys: current.keys, nonce: nonce, accessToken: accessToken, original: original, now: now())
        } catch let error as AuthError where error.idTokenCheck == .unknownKey && !current.fresh {
            let refetched = try await verificationKeys(metadata, forceRefresh: true)
            return try validator.validate(raw, keys: refetched.keys, nonce: nonce, accessToken: accessToken, original: original, now: now())
        }
    }

    /// Verifies the signature of any JWT the provider signed (Sign in with Apple's server-to-server
    /// notifications, for example) against its JWKS, fetched again once for an unknown `kid`.
    /// Only the signature is checked: the caller checks the claims.
    public func verifySignature(_ raw: String) async throws -> JWT {
        let jwt = try JWT(parsing: raw)
        let metadata = try await discover()
        let current = try await verificationKeys(metadata, forceRefresh: false)
        do {
            try jwt.verify(with: current.keys)
        } catch JOSEError.unknownKey where !current.fresh {
            try jwt.verify(with: try await verificationKeys(metadata, forceRefresh: true).keys)
        }
        return jwt
    }

    /// The provider's signature keys; `fresh` says whether they were fetched by this call.
    private func verificationKeys(_ metadata: ProviderMetadata, forceRefresh: Bool) async throws -> (keys: [JWSVerificationKey], fresh: Bool) {
        try await keys.keys(forceRefresh: forceRefresh) {
            guard let url = URL(string: metadata.jwksURI) else { throw AuthError(.discovery, "jwks_uri '\(metadata.jwksURI)' is not a URL") }
            try AuthRequest.checkEndpoint(url, name: "jwks_uri")
            let response = try await self.transport.send(HTTPTransportRequest(url: url, headers: ["Accept": "application/json"]))
            guard response.status == 200 else {
                throw AuthError.invalidResponse("the JWKS at \(url) answered HTTP \(response.status)", httpStatus: response.status)
            }
            let set: JWKSet
            do { set = try JWKSet.parse(response.body) } catch {
                throw AuthError.invalidResponse("the JWKS at \(url) is not a JWK Set")
            }
            // Keys for encryption, or of types the SDK can't use, are skipped rather than failing the set.
            return set.keys.filter { $0.use == nil || $0.use == "sig" }.compactMap { try? JWSVerificationKey(jwk: $0) }
        }
    }

    // MARK: Userinfo (OpenID Connect Core §5.3)

    /// The user's claims from the userinfo endpoint. With `expectedSubject` (the ID token's `sub`)
    /// a different `sub` throws ``AuthError/Code/userInfoInvalid`` (§5.3.2: the answer may be substituted).
    public func userInfo(accessToken: String, expectedSubject: String? = nil) async throws -> UserInfo {
        let metadata = try await discover()
        guard let endpoint = metadata.userinfoEndpoint, let url = URL(string: endpoint) else {
            throw AuthError(.discovery, "the provider has no userinfo_endpoint")
        }
        try AuthRequest.checkEndpoint(url, name: "userinfo endpoint")
        let response = try await transport.send(HTTPTransportRequest(url: url, headers: ["Authorization": "Bearer \(accessToken)",
                                                                                         "Accept": "application/json"]))
        guard response.status == 200 else { throw Self.protocolError(response, name: "userinfo endpoint") }
        guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: response.body) else {
            throw AuthError.invalidResponse("the userinfo answer is not a JSON object")
        }
        let info = UserInfo(claims: claims)
        guard let subject = info.subject else { throw AuthError(.userInfoInvalid, "the userinfo answer has no sub") }
        if let expectedSubject, subject != expectedSubject {
            throw AuthError(.userInfoInvalid, "the userinfo answer is for another user than the ID token")
        }
        return info
    }

    // MARK: Revocation (RFC 7009) and logout (RP-Initiated Logout 1.0)

    /// Revokes a token (RFC 7009 §2.1). Revoking a refresh token at Tessera ends its whole grant,
    /// access tokens included. An unknown token is not an error (§2.2).
    public func revoke(_ token: String, typeHint: TokenTypeHint? = nil) async throws {
        let metadata = try await discover()
        guard let endpoint = metadata.revocationEndpoint else { throw AuthError(.discovery, "the provider has no revocation_endpoint") }
        var parameters = [("token", token)]
        if let typeHint { parameters.append(("token_type_hint", typeHint.rawValue)) }
        _ = try await post(to: endpoint, parameters, name: "revocation endpoint")
    }

    /// A logout request (RP-Initiated Logout 1.0 §2) with this client's `client_id` and, when
    /// `postLogoutRedirectURI` is set and `state` is nil, a fresh `state`.
    ///
    /// - Parameters:
    ///   - idTokenHint: the session's ID token (`id_token_hint`), so the provider can log out without
    ///     asking; nil sends none.
    ///   - postLogoutRedirectURI: where the browser comes back (`post_logout_redirect_uri`),
    ///     registered for the client; nil: it stays on the provider's page.
    ///   - state: `state`; nil makes a fresh one when there is a `postLogoutRedirectURI`.
    ///   - uiLocales: the logout page's languages (`ui_locales`), e.g. `"ru en"`; nil sends none.
    public func makeEndSessionRequest(idTokenHint: String?, postLogoutRedirectURI: String? = nil, state: String? = nil,
                                      uiLocales: String? = nil) -> EndSessionRequest {
        EndSessionRequest(idTokenHint: idTokenHint, postLogoutRedirectURI: postLogoutRedirectURI, state: state,
                          uiLocales: uiLocales, clientID: configuration.clientID)
    }

    /// The logout URL for `request` at the discovered `end_session_endpoint` (RP-Initiated Logout
    /// 1.0 §2); see ``EndSessionRequest/url(metadata:)``.
    public func endSessionURL(for request: EndSessionRequest) async throws -> URL {
        try request.url(metadata: try await discover())
    }

    /// Ends the provider's session in the browser: opens the logout URL of `request` with
    /// `userAgent`, waits for the redirect to its ``EndSessionRequest/postLogoutRedirectURI`` and
    /// checks it (RP-Initiated Logout 1.0 §2, §3). The app's own tokens are untouched: revoke them
    /// (``AuthState/signOut()``) as well.
    ///
    /// - Throws: ``AuthError/Code/configuration`` before opening anything when `request` has no
    ///   post-logout redirect URI (nothing would come back); what the user agent throws
    ///   (``AuthError/Code/cancelled``, ``AuthError/Code/timeout``); what
    ///   ``EndSessionResponse/init(url:request:)`` throws (``AuthError/Code/stateMismatch``).
    public func endSession(_ request: EndSessionRequest, using userAgent: any ExternalUserAgent) async throws -> EndSessionResponse {
        guard let redirectURI = request.postLogoutRedirectURI else {
            throw AuthError(.configuration, "a logout in the browser needs a post_logout_redirect_uri to come back to")
        }
        let url = try await endSessionURL(for: request)
        let callback = try await userAgent.present(url, redirectURI: redirectURI)
        return try EndSessionResponse(url: callback, request: request)
    }

    /// The provider's logout URL (RP-Initiated Logout 1.0 §2): open it in the browser to end the
    /// provider's session too. `idTokenHint` lets the provider log out without asking; the
    /// post-logout redirect URI must be registered for the client. `state` is sent only when given
    /// (``makeEndSessionRequest(idTokenHint:postLogoutRedirectURI:state:uiLocales:)`` makes one).
    public func endSessionURL(idTokenHint: String?, postLogoutRedirectURI: String? = nil, state: String? = nil,
                              uiLocales: String? = nil) async throws -> URL {
        var request = makeEndSessionRequest(idTokenHint: idTokenHint, postLogoutRedirectURI: postLogoutRedirectURI,
                                            uiLocales: uiLocales)
        request.state = state
        return try await endSessionURL(for: request)
    }
}

/// What a completed sign-in returns: the tokens and the validated ID token.
public struct AuthorizationResult: Sendable, Equatable {
    /// The tokens, ready to store.
    public var tokens: TokenSet
    /// The validated ID token, when `openid` was granted.
    public var idToken: IDToken?

    /// Whether the provider said this sign-in created the account (`is_new_user` of the token
    /// answer: the first email link of an address does).
    public var isNewUser: Bool

    /// A result of `tokens` and their validated `idToken`.
    public init(tokens: TokenSet, idToken: IDToken?, isNewUser: Bool = false) {
        self.tokens = tokens
        self.idToken = idToken
        self.isNewUser = isNewUser
    }

    /// The signed-in user, from the ID token.
    public var user: AuthUser? { AuthUser(idToken: idToken) }
}

/// The discovery document and one in-flight fetch shared by concurrent callers.
private actor DiscoveryCache {
    var metadata: ProviderMetadata?
    var fetchedAt = Date.distantPast
    var inFlight: Task<ProviderMetadata, any Error>?

    func metadata(forceRefresh: Bool, now: Date, lifetime: TimeInterval,
                  fetch: @escaping @Sendable () async throws -> ProviderMetadata) async throws -> ProviderMetadata {
        if !forceRefresh, let metadata, now.timeIntervalSince(fetchedAt) < lifetime { return metadata }
        if let inFlight { return try await inFlight.value }
        let task = Task { try await fetch() }
        inFlight = task
        defer { inFlight = nil }
        let fetched = try await task.value
        metadata = fetched
        fetchedAt = now
        return fetched
    }
}

/// The provider's verification keys and one in-flight JWKS fetch shared by concurrent callers.
private actor KeyCache {
    var cached: [JWSVerificationKey]?
    var inFlight: Task<[JWSVerificationKey], any Error>?

    func keys(forceRefresh: Bool,
              fetch: @escaping @Sendable () async throws -> [JWSVerificationKey]) async throws -> (keys: [JWSVerificationKey], fresh: Bool) {
        if !forceRefresh, let cached { return (cached, false) }
        if let inFlight { return (try await inFlight.value, true) }
        let task = Task { try await fetch() }
        inFlight = task
        defer { inFlight = nil }
        let keys = try await task.value
        cached = keys
        return (keys, true)
    }
}
