import TesseraCore

/// An error of the SDK: something that failed on the app's side of a flow, or a protocol
/// error the provider answered with.
///
/// Match on ``code``; new codes may be added, so keep a `default` branch:
///
/// ```swift
/// do {
///     let response = try AuthResponse(url: callbackURL, request: request)
/// } catch let error as AuthError where error.code == .stateMismatch {
///     // a forged or stale redirect: ignore it
/// }
/// ```
///
/// A protocol error (`error=access_denied` on the redirect, `invalid_grant` from the token
/// endpoint, ...) has the code ``Code/oauth`` and carries the provider's `OAuthError` in
/// ``oauthError``, whose `code` is the wire string (RFC 6749 §4.1.2.1, §5.2).
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum so that cases can be added
    /// without breaking anyone's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case network, cancelled, timeout, stateMismatch, issuerMismatch, idTokenInvalid, oauth, invalidResponse,
                 discovery, configuration, storage, notSignedIn, userInfoInvalid
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The request never got an HTTP answer (no connection, TLS failure, ...).
        public static let network = Code(.network)
        /// The user closed the browser, or the task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Nothing came back in time, e.g. no browser redirect reached the loopback listener.
        public static let timeout = Code(.timeout)
        /// The redirect's `state` is not the request's: a forged or stale response (RFC 6749 §10.12).
        public static let stateMismatch = Code(.stateMismatch)
        /// The redirect's `iss`, or the discovered issuer, is not the expected issuer
        /// (RFC 9207 §2.4, OpenID Connect Discovery §4.3): a mix-up attack or a misconfiguration.
        public static let issuerMismatch = Code(.issuerMismatch)
        /// The ID token failed validation (OpenID Connect Core §3.1.3.7); ``AuthError/idTokenCheck`` says which check.
        public static let idTokenInvalid = Code(.idTokenInvalid)
        /// The provider answered with a protocol error; see ``AuthError/oauthError``.
        public static let oauth = Code(.oauth)
        /// The provider's answer could not be understood (wrong status, not JSON, missing members).
        public static let invalidResponse = Code(.invalidResponse)
        /// The discovery document is missing, malformed or lacks a needed endpoint.
        public static let discovery = Code(.discovery)
        /// The SDK was used in a way that cannot work (a relative redirect URI, no endpoint to build from, ...).
        public static let configuration = Code(.configuration)
        /// Tokens could not be read from or written to their ``TokenStore``.
        public static let storage = Code(.storage)
        /// The session has no token for the operation (no refresh token, signed out).
        public static let notSignedIn = Code(.notSignedIn)
        /// The userinfo answer is not for the signed-in user (OpenID Connect Core §5.3.2).
        public static let userInfoInvalid = Code(.userInfoInvalid)

        /// The code's name, e.g. `stateMismatch`.
        public var description: String { base.rawValue }
    }

    /// Which rule of ID-token validation failed (OpenID Connect Core §3.1.3.7, §3.1.3.8).
    public enum IDTokenCheck: String, Sendable, Hashable {
        /// Not a compact JWS with a JSON claim set, or a required claim is missing.
        case format
        /// The `alg` is not one the provider announced or the SDK supports (`none` never is).
        case algorithm
        /// No key in the provider's JWKS has the token's `kid`, even after fetching it again.
        case unknownKey
        /// The signature does not verify.
        case signature
        /// `iss` is not the provider's issuer.
        case issuer
        /// `aud` does not contain the client id.
        case audience
        /// `azp` is missing with several audiences, or is not the client id.
        case authorizedParty
        /// `exp` has passed (beyond the allowed clock skew).
        case expired
        /// `iat` lies in the future (beyond the allowed clock skew).
        case issuedAt
        /// `nonce` is not the one of the authorization request.
        case nonce
        /// `at_hash` does not match the access token (§3.1.3.8).
        case accessTokenHash
        /// A refreshed ID token names another user or issuer than the original (§12.2).
        case subject
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, for logs and developers (not localised).
    public var reason: String
    /// The provider's protocol error when ``code`` is ``Code/oauth``.
    public var oauthError: OAuthError?
    /// The failed rule when ``code`` is ``Code/idTokenInvalid``.
    public var idTokenCheck: IDTokenCheck?
    /// The HTTP status of the answer that caused this error, when there was one.
    public var httpStatus: Int?

    /// Creates an error; prefer the static factories.
    public init(_ code: Code, _ reason: String, oauthError: OAuthError? = nil, idTokenCheck: IDTokenCheck? = nil,
                httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.oauthError = oauthError
        self.idTokenCheck = idTokenCheck
        self.httpStatus = httpStatus
    }

    /// The code and the reason (or the provider's error), for logs.
    public var description: String {
        if let oauthError { return "\(code): \(oauthError.code)" + (oauthError.errorDescription.map { ": \($0)" } ?? "") }
        if let idTokenCheck { return "\(code) (\(idTokenCheck.rawValue)): \(reason)" }
        return "\(code): \(reason)"
    }

    /// A protocol error the provider answered with.
    public static func oauth(_ error: OAuthError, httpStatus: Int? = nil) -> AuthError {
        AuthError(.oauth, error.errorDescription ?? error.code.rawValue, oauthError: error, httpStatus: httpStatus)
    }

    /// An ID token that failed `check`.
    public static func idTokenInvalid(_ check: IDTokenCheck, _ reason: String) -> AuthError {
        AuthError(.idTokenInvalid, reason, idTokenCheck: check)
    }

    /// A transport failure.
    public static func network(_ reason: String) -> AuthError { AuthError(.network, reason) }

    /// An answer that isn't what the protocol says it should be.
    public static func invalidResponse(_ reason: String, httpStatus: Int? = nil) -> AuthError {
        AuthError(.invalidResponse, reason, httpStatus: httpStatus)
    }

    /// Whether the provider refused a refresh token or code as invalid, expired or revoked
    /// (`invalid_grant`, RFC 6749 §5.2): the session is over and the user must sign in again.
    public var isInvalidGrant: Bool { oauthError?.code == .invalidGrant }

    /// Whether the user cancelled the sign-in (closed the browser) or the server said
    /// `access_denied` (RFC 6749 §4.1.2.1).
    public var isCancelledOrDenied: Bool { code == .cancelled || oauthError?.code == .accessDenied }
}
