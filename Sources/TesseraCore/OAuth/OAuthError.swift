/// An OAuth 2.0 / OpenID Connect protocol error, shared by the server and the SDK.
///
/// `code` is the wire string (`error`), `errorDescription` the client-visible
/// `error_description`. `detail` is for logs only and never leaves the server.
/// `status` and `redirectable` say how the server answers with it: an error may
/// be redirected to a client only after its `client_id` and `redirect_uri` were
/// verified (RFC 6749 §4.1.2.1).
public struct OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An error code. Unknown codes round-trip unchanged.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }

        // RFC 6749 §4.1.2.1 (authorization endpoint) and §5.2 (token endpoint).
        /// `invalid_request` (RFC 6749 §4.1.2.1, §5.2): a parameter is missing, invalid or repeated, or the
        /// request is otherwise malformed.
        public static let invalidRequest: Code = "invalid_request"
        /// `invalid_client` (RFC 6749 §5.2): client authentication failed; answered with 401.
        public static let invalidClient: Code = "invalid_client"
        /// `invalid_grant` (RFC 6749 §5.2): the code, refresh token or credentials are invalid, expired or revoked.
        public static let invalidGrant: Code = "invalid_grant"
        /// `unauthorized_client` (RFC 6749 §4.1.2.1, §5.2): the client may not use this response type or grant type.
        public static let unauthorizedClient: Code = "unauthorized_client"
        /// `unsupported_grant_type` (RFC 6749 §5.2): the server does not support the `grant_type`.
        public static let unsupportedGrantType: Code = "unsupported_grant_type"
        /// `unsupported_response_type` (RFC 6749 §4.1.2.1): the server does not support the `response_type`.
        public static let unsupportedResponseType: Code = "unsupported_response_type"
        /// `invalid_scope` (RFC 6749 §4.1.2.1, §5.2): a requested scope is invalid, unknown, or beyond what
        /// was granted.
        public static let invalidScope: Code = "invalid_scope"
        /// `access_denied` (RFC 6749 §4.1.2.1): the user or the server refused the request; answered with 403.
        public static let accessDenied: Code = "access_denied"
        /// `server_error` (RFC 6749 §4.1.2.1): the server met an unexpected condition; answered with 500.
        public static let serverError: Code = "server_error"
        /// `temporarily_unavailable` (RFC 6749 §4.1.2.1): the server is overloaded or down for maintenance;
        /// answered with 503.
        public static let temporarilyUnavailable: Code = "temporarily_unavailable"
        // RFC 7009 §2.2.1
        /// `unsupported_token_type` (RFC 7009 §2.2.1): the server can't revoke tokens of the given type.
        public static let unsupportedTokenType: Code = "unsupported_token_type"
        // RFC 6750 §3.1
        /// `invalid_token` (RFC 6750 §3.1): the access token is expired, revoked, malformed or otherwise
        /// invalid; answered with 401.
        public static let invalidToken: Code = "invalid_token"
        /// `insufficient_scope` (RFC 6750 §3.1): the access token lacks a scope the request needs; answered with 403.
        public static let insufficientScope: Code = "insufficient_scope"
        // OpenID Connect Core §3.1.2.6
        /// `interaction_required` (OpenID Connect Core §3.1.2.6): the request needs the user to interact,
        /// which `prompt=none` forbids.
        public static let interactionRequired: Code = "interaction_required"
        /// `login_required` (OpenID Connect Core §3.1.2.6): the request needs the user to sign in (again).
        public static let loginRequired: Code = "login_required"
        /// `account_selection_required` (OpenID Connect Core §3.1.2.6): the user must choose an account,
        /// which `prompt=none` forbids.
        public static let accountSelectionRequired: Code = "account_selection_required"
        /// `consent_required` (OpenID Connect Core §3.1.2.6): the request needs the user's consent, which
        /// `prompt=none` forbids.
        public static let consentRequired: Code = "consent_required"
        /// `invalid_request_uri` (OpenID Connect Core §3.1.2.6): the `request_uri` is invalid, expired or
        /// can't be resolved.
        public static let invalidRequestURI: Code = "invalid_request_uri"
        /// `invalid_request_object` (OpenID Connect Core §3.1.2.6): the request object is invalid.
        public static let invalidRequestObject: Code = "invalid_request_object"
        /// `request_not_supported` (OpenID Connect Core §3.1.2.6): the server does not accept the `request` parameter.
        public static let requestNotSupported: Code = "request_not_supported"
        /// `request_uri_not_supported` (OpenID Connect Core §3.1.2.6): the server does not accept the
        /// `request_uri` parameter.
        public static let requestURINotSupported: Code = "request_uri_not_supported"
        /// `registration_not_supported` (OpenID Connect Core §3.1.2.6): the server does not accept the
        /// `registration` parameter.
        public static let registrationNotSupported: Code = "registration_not_supported"
    }

    /// `error` (RFC 6749 §5.2): the error code.
    public var code: Code
    /// `error_description`: safe to show to the client.
    public var errorDescription: String?
    /// Log-only context.
    public var detail: String?
    /// HTTP status the server answers with (400 unless stated).
    public var status: Int
    /// Whether the server may send this error to the client's redirect URI.
    public var redirectable: Bool
    /// Members the answer carries besides `error` and `error_description` (RFC 6749 §5.2
    /// allows them): `suberror` and `continuation_token` of a second factor that is next.
    public var members: [String: String] = [:]

    /// Makes an error; a nil `status` takes the code's usual one (401, 403, 500, 503, else 400).
    public init(_ code: Code, _ errorDescription: String? = nil, detail: String? = nil, status: Int? = nil, redirectable: Bool = true) {
        self.code = code
        self.errorDescription = errorDescription
        self.detail = detail
        self.status = status ?? Self.defaultStatus(for: code)
        self.redirectable = redirectable
    }

    public var description: String {
        var text = code.rawValue
        if let errorDescription { text += ": \(errorDescription)" }
        if let detail { text += " (\(detail))" }
        return text
    }

    static func defaultStatus(for code: Code) -> Int {
        switch code {
        case .invalidClient, .invalidToken: 401
        case .insufficientScope, .accessDenied: 403
        case .serverError: 500
        case .temporarilyUnavailable: 503
        default: 400
        }
    }

    /// An `invalid_request` error: `description` for the client, `detail` for the logs.
    public static func invalidRequest(_ description: String, detail: String? = nil) -> OAuthError {
        OAuthError(.invalidRequest, description, detail: detail)
    }
    /// An `invalid_grant` error: `description` for the client, `detail` for the logs.
    public static func invalidGrant(_ description: String, detail: String? = nil) -> OAuthError {
        OAuthError(.invalidGrant, description, detail: detail)
    }
    /// An `invalid_client` error (401): `description` for the client, `detail` for the logs.
    public static func invalidClient(_ description: String = "Client authentication failed.", detail: String? = nil) -> OAuthError {
        OAuthError(.invalidClient, description, detail: detail)
    }
    /// A `server_error` (500) with a generic description for the client and `detail` for the logs.
    public static func serverError(detail: String) -> OAuthError {
        OAuthError(.serverError, "The server could not complete the request.", detail: detail)
    }

    /// The JSON body of an error response (RFC 6749 §5.2).
    public var responseBody: [String: String] {
        var body = members
        body["error"] = code.rawValue
        if let errorDescription { body["error_description"] = errorDescription }
        return body
    }
}
