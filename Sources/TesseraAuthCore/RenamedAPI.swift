import Foundation
import TesseraCore

// The SDK spells acronyms as Swift does (`clientID`, `redirectURI`, `ssoBaseURL`,
// `correlationID`). The spellings of Sber ID's SDK and MSAL, which earlier versions used,
// still work here and say what they became.

extension NativeAuthClient.Configuration {
    @available(*, deprecated, renamed: "clientID")
    public var clientId: String { get { clientID } set { clientID = newValue } }
    @available(*, deprecated, renamed: "redirectURI")
    public var redirectUri: String? { get { redirectURI } set { redirectURI = newValue } }

    @available(*, deprecated, renamed: "init(issuer:clientID:challengeTypes:scopes:redirectURI:clockSkew:passwordResetTimeout:)")
    public init(issuer: URL, clientId: String, challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect],
                scopes: [String] = NativeAuthClient.defaultScopes, redirectUri: String? = nil, clockSkew: TimeInterval = 120,
                passwordResetTimeout: TimeInterval = 300) {
        self.init(issuer: issuer, clientID: clientId, challengeTypes: challengeTypes, scopes: scopes, redirectURI: redirectUri,
                  clockSkew: clockSkew, passwordResetTimeout: passwordResetTimeout)
    }
}

extension NativeAuthClient {
    @available(*, deprecated, renamed: "init(issuer:clientID:challengeTypes:scopes:transport:now:)")
    public convenience init(issuer: URL, clientId: String, challengeTypes: [NativeAuthChallengeType] = [.oob, .password, .redirect],
                            scopes: [String] = NativeAuthClient.defaultScopes, transport: any HTTPTransport,
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(issuer: issuer, clientID: clientId, challengeTypes: challengeTypes, scopes: scopes, transport: transport, now: now)
    }
}

extension NativeAuthFailure {
    @available(*, deprecated, renamed: "correlationID")
    public var correlationId: String? { correlationID }
    @available(*, deprecated, renamed: "traceID")
    public var traceId: String? { traceID }
}

extension NativeAuthStepError {
    @available(*, deprecated, renamed: "correlationID")
    public var correlationId: String? { correlationID }
}

extension TokenSet {
    @available(*, deprecated, renamed: "clientID")
    public var clientId: String? { clientID }

    @available(*, deprecated, renamed: "init(accessToken:tokenType:expiresAt:refreshToken:idToken:scope:issuer:clientID:)")
    public init(accessToken: String, tokenType: String = "Bearer", expiresAt: Date? = nil, refreshToken: String? = nil,
                idToken: String? = nil, scope: String? = nil, issuer: String? = nil, clientId: String?) {
        self.init(accessToken: accessToken, tokenType: tokenType, expiresAt: expiresAt, refreshToken: refreshToken, idToken: idToken,
                  scope: scope, issuer: issuer, clientID: clientId)
    }

    @available(*, deprecated, renamed: "init(response:receivedAt:previous:issuer:clientID:)")
    public init(response: TokenResponse, receivedAt: Date, previous: TokenSet? = nil, issuer: String? = nil, clientId: String?) {
        self.init(response: response, receivedAt: receivedAt, previous: previous, issuer: issuer, clientID: clientId)
    }
}

extension EmailLinkAuth {
    @available(*, deprecated, renamed: "init(issuer:clientID:scopes:pendingEmails:transport:now:)")
    public convenience init(issuer: URL, clientId: String, scopes: [String] = NativeAuthClient.defaultScopes,
                            pendingEmails: (any PendingEmailStore)? = nil, transport: any HTTPTransport,
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(issuer: issuer, clientID: clientId, scopes: scopes, pendingEmails: pendingEmails, transport: transport, now: now)
    }
}

extension IDTokenValidator {
    @available(*, deprecated, renamed: "clientID")
    public var clientId: String { clientID }

    @available(*, deprecated, renamed: "init(issuer:clientID:allowedAlgorithms:clockSkew:)")
    public init(issuer: String, clientId: String, allowedAlgorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases),
                clockSkew: TimeInterval = 120) {
        self.init(issuer: issuer, clientID: clientId, allowedAlgorithms: allowedAlgorithms, clockSkew: clockSkew)
    }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension LoopbackRedirectListener {
    @available(*, deprecated, renamed: "redirectURI")
    public var redirectUri: String { redirectURI }
}

extension AuthResponse {
    @available(*, deprecated, renamed: "errorURI")
    public var errorUri: String? { errorURI }
}

extension AuthRequest {
    @available(*, deprecated, renamed: "clientID")
    public var clientId: String { get { clientID } set { clientID = newValue } }
    @available(*, deprecated, renamed: "redirectURI")
    public var redirectUri: String { get { redirectURI } set { redirectURI = newValue } }
    @available(*, deprecated, renamed: "ssoBaseURL")
    public var ssoBaseUrl: String? { get { ssoBaseURL } set { ssoBaseURL = newValue } }

    @available(*, deprecated, renamed: "init(clientID:scope:redirectURI:state:nonce:codeVerifier:ssoBaseURL:additionalParameters:)")
    public init(clientId: String, scope: String = AuthRequest.defaultScope, redirectUri: String,
                state: String = AuthUtils.generateState(), nonce: String? = AuthUtils.generateNonce(),
                codeVerifier: String = AuthUtils.createVerifier(), ssoBaseUrl: String? = nil,
                additionalParameters: [String: String] = [:]) {
        self.init(clientID: clientId, scope: scope, redirectURI: redirectUri, state: state, nonce: nonce, codeVerifier: codeVerifier,
                  ssoBaseURL: ssoBaseUrl, additionalParameters: additionalParameters)
    }

    @available(*, deprecated, renamed: "init(clientID:scope:state:nonce:ssoBaseURL:redirectURI:codeChallenge:codeChallengeMethod:codeVerifier:)")
    public init(clientId: String, scope: String, state: String, nonce: String?, ssoBaseUrl: String? = nil, redirectUri: String,
                codeChallenge: String?, codeChallengeMethod: String?, codeVerifier: String? = nil) {
        self.init(clientID: clientId, scope: scope, state: state, nonce: nonce, ssoBaseURL: ssoBaseUrl, redirectURI: redirectUri,
                  codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod, codeVerifier: codeVerifier)
    }
}

extension AuthState {
    @available(*, deprecated, renamed: "endSessionURL(postLogoutRedirectURI:state:)")
    public func endSessionURL(postLogoutRedirectUri: String?, state: String? = nil) async throws -> URL {
        try await endSessionURL(postLogoutRedirectURI: postLogoutRedirectUri, state: state)
    }
}

extension OIDCClient.Configuration {
    @available(*, deprecated, renamed: "clientID")
    public var clientId: String { get { clientID } set { clientID = newValue } }
    @available(*, deprecated, renamed: "redirectURI")
    public var redirectUri: String { get { redirectURI } set { redirectURI = newValue } }

    @available(*, deprecated, renamed: "init(issuer:clientID:clientSecret:redirectURI:scope:clockSkew:discoveryLifetime:trustedSSOHosts:)")
    public init(issuer: URL, clientId: String, clientSecret: String? = nil, redirectUri: String,
                scope: String = AuthRequest.defaultScope, clockSkew: TimeInterval = 120, discoveryLifetime: TimeInterval = 3600,
                trustedSSOHosts: Set<String> = []) {
        self.init(issuer: issuer, clientID: clientId, clientSecret: clientSecret, redirectURI: redirectUri, scope: scope,
                  clockSkew: clockSkew, discoveryLifetime: discoveryLifetime, trustedSSOHosts: trustedSSOHosts)
    }
}

extension OIDCClient {
    @available(*, deprecated, renamed: "makeRequest(scope:redirectURI:ssoBaseURL:additionalParameters:)")
    public func makeRequest(scope: String? = nil, redirectUri: String?, ssoBaseUrl: String? = nil,
                            additionalParameters: [String: String] = [:]) -> AuthRequest {
        makeRequest(scope: scope, redirectURI: redirectUri, ssoBaseURL: ssoBaseUrl, additionalParameters: additionalParameters)
    }

    @available(*, deprecated, renamed: "redeemCode(_:redirectURI:codeVerifier:nonce:scope:)")
    public func redeemCode(_ code: String, redirectUri: String?, codeVerifier: String?, nonce: String?,
                           scope requested: String) async throws -> AuthorizationResult {
        try await redeemCode(code, redirectURI: redirectUri, codeVerifier: codeVerifier, nonce: nonce, scope: requested)
    }

    @available(*, deprecated, renamed: "endSessionURL(idTokenHint:postLogoutRedirectURI:state:uiLocales:)")
    public func endSessionURL(idTokenHint: String?, postLogoutRedirectUri: String?, state: String? = nil,
                              uiLocales: String? = nil) async throws -> URL {
        try await endSessionURL(idTokenHint: idTokenHint, postLogoutRedirectURI: postLogoutRedirectUri, state: state, uiLocales: uiLocales)
    }
}
