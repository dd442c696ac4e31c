import Foundation
@_exported import TesseraAuth
import TesseraAuthCore

// The Sber ID SDK's names (seed 000) for TesseraAuth's calls, for teams moving from it: a thin
// layer that only forwards, so the behaviour is TesseraAuth's and tested there.

extension OIDCClient {
    /// Sber ID's `auth(withSberId:)`: sign-in through the operator's authenticator app, in the
    /// browser when it isn't installed —
    /// `signInThroughAuthenticatorApp(_:opener:appRedirect:browser:)`.
    ///
    /// - Parameters:
    ///   - request: the sign-in request, pushed first.
    ///   - opener: opens the request's link in the authenticator app only.
    ///   - appRedirect: waits for the redirect the authenticator app sends back.
    ///   - webFallback: the browser when no app claims the link; nil throws `AuthError`
    ///     `.cancelled` instead (``autoAuth(_:opener:appRedirect:)`` returns nil).
    public func auth(with request: AuthRequest, opener: any AppLinkOpener, appRedirect: @Sendable () async throws -> URL,
                     webFallback: (any ExternalUserAgent)?) async throws -> AuthorizationResult {
        if let webFallback {
            return try await signInThroughAuthenticatorApp(request, opener: opener, appRedirect: appRedirect, browser: webFallback)
        }
        guard let result = try await signInThroughAuthenticatorAppIfInstalled(request, opener: opener, appRedirect: appRedirect) else {
            throw AuthError(.cancelled, "the authenticator app is not installed")
        }
        return result
    }

    /// Sber ID's `autoAuth`: the sign-in the app starts by itself, without a web fallback (it
    /// means "no browser", not "automatic"); nil when the authenticator app isn't installed —
    /// `signInThroughAuthenticatorAppIfInstalled(_:opener:appRedirect:)`.
    ///
    /// - Parameters:
    ///   - request: the sign-in request, pushed first.
    ///   - opener: opens the request's link in the authenticator app only.
    ///   - appRedirect: waits for the redirect the authenticator app sends back.
    public func autoAuth(_ request: AuthRequest, opener: any AppLinkOpener,
                         appRedirect: @Sendable () async throws -> URL) async throws -> AuthorizationResult? {
        try await signInThroughAuthenticatorAppIfInstalled(request, opener: opener, appRedirect: appRedirect)
    }
}

/// Sber ID's `SIDUtils` / `SBKUtils`: PKCE values, random `state` and `nonce`, and the values
/// a seamless sign-in's deep link carries — forwarding to `PKCE`, `SecureRandom` and
/// `HandoffLink`.
public enum AuthUtils {
    /// A new PKCE `code_verifier` (RFC 7636 §4.1): `PKCE.createVerifier()`.
    public static func createVerifier() -> String { PKCE.createVerifier() }

    /// The S256 `code_challenge` of `verifier` (RFC 7636 §4.2): `PKCE.createChallenge(_:)`.
    public static func createChallenge(_ verifier: String) -> String { PKCE.createChallenge(verifier) }

    /// A fresh `state` of 256 random bits: `SecureRandom.token(bytes: 32)`.
    public static func generateState() -> String { SecureRandom.token(bytes: 32) }

    /// A fresh `nonce` of 256 random bits: `SecureRandom.token(bytes: 32)`.
    public static func generateNonce() -> String { SecureRandom.token(bytes: 32) }

    /// Sber ID's `getSSOUrlStringFrom(_:)`: the SSO base URL a deep link carries —
    /// `HandoffLink.ssoBaseURL(in:parameterNames:)`.
    ///
    /// - Parameters:
    ///   - url: the deep link.
    ///   - parameterNames: the members that may carry the URL, tried in order.
    public static func getSSOUrlStringFrom(_ url: URL?,
                                           parameterNames: [String] = ["ssoBaseUrl", "sso_base_url", "sberIDRedirect"]) -> String? {
        HandoffLink.ssoBaseURL(in: url, parameterNames: parameterNames)
    }

    /// The hand-off ticket of the deep link that opened the app: `HandoffLink.ticket(in:)`.
    public static func ssoTicket(from url: URL?) -> String? { HandoffLink.ticket(in: url) }
}

extension AuthRequest {
    /// Sber ID's `clientId`: ``AuthRequest/clientID``.
    public var clientId: String { get { clientID } set { clientID = newValue } }
    /// Sber ID's `redirectUri`: ``AuthRequest/redirectURI``.
    public var redirectUri: String { get { redirectURI } set { redirectURI = newValue } }
    /// Sber ID's `ssoBaseUrl`: ``AuthRequest/ssoBaseURL``.
    public var ssoBaseUrl: String? { get { ssoBaseURL } set { ssoBaseURL = newValue } }

    /// Sber ID's `SBKAuthRequest(clientId:scope:redirectUri:…)`: a request with fresh `state`,
    /// `nonce` and PKCE verifier — `init(clientID:scope:redirectURI:state:nonce:codeVerifier:ssoBaseURL:additionalParameters:)`.
    ///
    /// - Parameters:
    ///   - clientId: the app's client ID.
    ///   - scope: the scopes, space-separated.
    ///   - redirectUri: where the provider sends the answer.
    ///   - state: the request's `state`; random by default.
    ///   - nonce: the ID token's expected `nonce`; random by default.
    ///   - codeVerifier: the PKCE verifier; random by default.
    ///   - ssoBaseUrl: the SSO base URL of a seamless sign-in.
    ///   - additionalParameters: any other parameter, sent as is.
    public init(clientId: String, scope: String = AuthRequest.defaultScope, redirectUri: String,
                state: String = AuthUtils.generateState(), nonce: String? = AuthUtils.generateNonce(),
                codeVerifier: String = AuthUtils.createVerifier(), ssoBaseUrl: String? = nil,
                additionalParameters: [String: String] = [:]) {
        self.init(clientID: clientId, scope: scope, redirectURI: redirectUri, state: state, nonce: nonce, codeVerifier: codeVerifier,
                  ssoBaseURL: ssoBaseUrl, additionalParameters: additionalParameters)
    }

    /// Sber ID's `SIDAuthRequest(clientID:scope:state:nonce:ssoBaseURL:redirectURI:codeChallenge:codeChallengeMethod:)`:
    /// every value chosen by the app — `init(clientID:scope:state:nonce:ssoBaseURL:redirectURI:codeChallenge:codeChallengeMethod:codeVerifier:)`.
    ///
    /// - Parameters:
    ///   - clientId: the app's client ID.
    ///   - scope: the scopes, space-separated.
    ///   - state: the request's `state`.
    ///   - nonce: the ID token's expected `nonce`.
    ///   - ssoBaseUrl: the SSO base URL of a seamless sign-in.
    ///   - redirectUri: where the provider sends the answer.
    ///   - codeChallenge: the PKCE challenge.
    ///   - codeChallengeMethod: `S256`.
    ///   - codeVerifier: the verifier, when the SDK should redeem the code.
    public init(clientId: String, scope: String, state: String, nonce: String?, ssoBaseUrl: String? = nil, redirectUri: String,
                codeChallenge: String?, codeChallengeMethod: String?, codeVerifier: String? = nil) {
        self.init(clientID: clientId, scope: scope, state: state, nonce: nonce, ssoBaseURL: ssoBaseUrl, redirectURI: redirectUri,
                  codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod, codeVerifier: codeVerifier)
    }
}

extension AuthorizationResult {
    /// Sber ID's `appToken` "for seamless sign-in": the Native SSO device secret
    /// (`tokens.deviceSecret`), present when the sign-in asked for `device_sso`.
    public var appToken: String? { tokens.deviceSecret }
}

extension LoginButton.Brand {
    /// Sber ID's: "Сбер ID" in Russian texts, "Sber ID" in English ones, on Sber's green.
    public static let sberID = LoginButton.Brand(russianName: "Сбер ID", englishName: "Sber ID",
                                                 color: LoginButton.Color(red: 0x21, green: 0xA0, blue: 0x38))
}
