import Foundation
import TesseraCore

/// A request to the token endpoint (RFC 6749 §4.1.3, §6): the form the app posts to redeem an
/// authorization code or a refresh token, and what the answer's ID token is checked against.
///
/// The token half of the request/response pairs (AppAuth's `OIDTokenRequest`); its answer is
/// TesseraCore's `TokenResponse` (RFC 6749 §5.1). ``OIDCClient/perform(_:)`` posts it with the
/// client's authentication and returns that answer as sent;
/// ``OIDCClient/token(_:)`` also validates the ID token and returns an ``AuthorizationResult``.
///
/// ```swift
/// let response = try await client.response(from: callbackURL, for: authRequest)   // state and iss checked
/// let result = try await client.token(try TokenRequest(exchanging: response, for: authRequest))
/// ```
///
/// Client authentication (`client_id`, `client_secret`, the `Authorization` header) is not part of
/// the request: the ``OIDCClient`` that performs it adds its own (RFC 6749 §2.3).
public struct TokenRequest: Sendable, Equatable {
    /// `grant_type` (RFC 6749 §4.1.3, §6), e.g. `GrantType.authorizationCode` (`authorization_code`)
    /// or `GrantType.refreshToken` (`refresh_token`).
    public var grantType: String
    /// `code`: the authorization code to redeem (RFC 6749 §4.1.3); nil for other grants.
    public var code: String?
    /// `redirect_uri`: the authorization request's redirect URI, which the provider compares with
    /// the one the code was issued for (RFC 6749 §4.1.3); nil when that request had none (a native
    /// Sign in with Apple code) or for other grants.
    public var redirectURI: String?
    /// `code_verifier`: the PKCE verifier of the authorization request (RFC 7636 §4.5); nil when
    /// the request used no PKCE or for other grants.
    public var codeVerifier: String?
    /// `refresh_token`: the refresh token to redeem (RFC 6749 §6); nil for other grants.
    public var refreshToken: String?
    /// `scope`, space-separated: for a refresh, scopes narrower than the grant's (RFC 6749 §6); nil
    /// sends none, which keeps the grant's scopes. The authorization-code factories leave it nil
    /// (RFC 6749 §4.1.3 has no `scope`).
    public var scope: String?
    /// Any other parameter, sent after the standard ones in name order. A name that is one of the
    /// parameters above, or of the client's authentication (`client_id`, `client_secret`,
    /// `client_assertion`, `client_assertion_type`), is not sent from here.
    public var additionalParameters: [String: String]

    /// The authorization request's `nonce`, which the answer's ID token must carry (OpenID Connect
    /// Core §3.1.3.7 item 11). Not sent. nil checks no nonce (a refresh, or a code whose request
    /// had none).
    public var nonce: String?
    /// The scopes the authorization request asked for. Not sent: when the answer names no `scope`
    /// (RFC 6749 §5.1: then it is the requested one) and this contains `openid`, an
    /// authorization-code answer without an ID token is refused (OpenID Connect Core §3.1.3.3).
    /// nil requires no ID token.
    public var requestedScope: String?
    /// The ID token a refreshed one must match (OpenID Connect Core §12.2: the same `iss`, `sub`,
    /// `aud` and `auth_time`), as a compact JWS. Not sent. nil for a grant that is not a refresh,
    /// or when the session has no ID token.
    public var originalIDToken: String?

    /// A request of any grant, every value chosen by the caller.
    ///
    /// - Parameters:
    ///   - grantType: `grant_type`, e.g. `GrantType.authorizationCode`.
    ///   - code: `code`; nil sends none.
    ///   - redirectURI: `redirect_uri`; nil sends none.
    ///   - codeVerifier: `code_verifier`; nil sends none.
    ///   - refreshToken: `refresh_token`; nil sends none.
    ///   - scope: `scope`; nil sends none.
    ///   - nonce: checked in the answer's ID token, not sent; nil checks none.
    ///   - requestedScope: the authorization request's scopes, not sent (see ``requestedScope``).
    ///   - originalIDToken: the ID token a refreshed one must match, not sent (OpenID Connect Core §12.2).
    ///   - additionalParameters: other parameters (see ``additionalParameters``).
    public init(grantType: String, code: String? = nil, redirectURI: String? = nil, codeVerifier: String? = nil,
                refreshToken: String? = nil, scope: String? = nil, nonce: String? = nil, requestedScope: String? = nil,
                originalIDToken: String? = nil, additionalParameters: [String: String] = [:]) {
        self.grantType = grantType
        self.code = code
        self.redirectURI = redirectURI
        self.codeVerifier = codeVerifier
        self.refreshToken = refreshToken
        self.scope = scope
        self.nonce = nonce
        self.requestedScope = requestedScope
        self.originalIDToken = originalIDToken
        self.additionalParameters = additionalParameters
    }

    /// The authorization-code grant (RFC 6749 §4.1.3) for a code obtained some other way than an
    /// ``AuthResponse`` (a native app's Sign in with Apple code has no redirect URI).
    ///
    /// - Parameters:
    ///   - code: `code`.
    ///   - redirectURI: `redirect_uri` of the authorization request; nil sends none.
    ///   - codeVerifier: the PKCE `code_verifier` (RFC 7636 §4.5); nil sends none.
    ///   - nonce: the authorization request's `nonce`, checked in the ID token; nil checks none.
    ///   - requestedScope: the authorization request's scopes, not sent (see ``requestedScope``).
    ///   - additionalParameters: other parameters (see ``additionalParameters``).
    public init(code: String, redirectURI: String?, codeVerifier: String?, nonce: String?, requestedScope: String? = nil,
                additionalParameters: [String: String] = [:]) {
        self.init(grantType: GrantType.authorizationCode, code: code, redirectURI: redirectURI, codeVerifier: codeVerifier,
                  nonce: nonce, requestedScope: requestedScope, additionalParameters: additionalParameters)
    }

    /// The authorization-code grant for the code of `response`, with the redirect URI, PKCE
    /// verifier, nonce and scopes of `request` (RFC 6749 §4.1.3, RFC 7636 §4.5, OpenID Connect
    /// Core §3.1.3.7).
    ///
    /// `response` must already be checked against `request` (``AuthResponse/init(url:request:expectedIssuer:requireIssuer:)``
    /// or ``OIDCClient/response(from:for:)``): this reads its code, it doesn't check its `state`.
    ///
    /// - Throws: ``AuthError`` ``AuthError/Code/oauth`` with the provider's error when the response
    ///   carries an `error` (RFC 6749 §4.1.2.1), ``AuthError/Code/invalidResponse`` when it has no `code`.
    public init(exchanging response: AuthResponse, for request: AuthRequest) throws {
        if let error = response.oauthError { throw AuthError.oauth(error) }
        guard let code = response.authCode else { throw AuthError.invalidResponse("the response has no code") }
        self.init(code: code, redirectURI: request.redirectURI, codeVerifier: request.codeVerifier, nonce: request.nonce,
                  requestedScope: request.scope)
    }

    /// The refresh grant (RFC 6749 §6) for the refresh token of `tokens`, whose ID token the
    /// refreshed one must match (OpenID Connect Core §12.2).
    ///
    /// - Parameters:
    ///   - tokens: the session's tokens; their refresh token is sent, their ID token kept as ``originalIDToken``.
    ///   - scope: scopes narrower than the grant's; nil keeps the grant's.
    /// - Throws: ``AuthError`` ``AuthError/Code/notSignedIn`` when `tokens` has no refresh token.
    public init(refreshing tokens: TokenSet, scope: String? = nil) throws {
        guard let refreshToken = tokens.refreshToken else { throw AuthError(.notSignedIn, "there is no refresh token") }
        self.init(grantType: GrantType.refreshToken, refreshToken: refreshToken, scope: scope, originalIDToken: tokens.idToken)
    }

    /// The names ``additionalParameters`` can't take: the standard ones and the client's authentication.
    static let reservedNames: Set<String> = [
        "grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope",
        "client_id", "client_secret", "client_assertion", "client_assertion_type",
    ]

    /// The form, in a stable order: `grant_type`, `code`, `redirect_uri`, `code_verifier`,
    /// `refresh_token`, `scope` (each when set), then ``additionalParameters`` by name
    /// (RFC 6749 §4.1.3, §6; RFC 7636 §4.5). Without the client's authentication, which
    /// ``OIDCClient/perform(_:)`` adds, and without ``nonce``, ``requestedScope`` and ``originalIDToken``.
    public var parameters: [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = [(name: "grant_type", value: grantType)]
        if let code { pairs.append((name: "code", value: code)) }
        if let redirectURI { pairs.append((name: "redirect_uri", value: redirectURI)) }
        if let codeVerifier { pairs.append((name: "code_verifier", value: codeVerifier)) }
        if let refreshToken { pairs.append((name: "refresh_token", value: refreshToken)) }
        if let scope { pairs.append((name: "scope", value: scope)) }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) where !Self.reservedNames.contains(name) {
            pairs.append((name: name, value: value))
        }
        return pairs
    }
}
