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
        public static let invalidRequest: Code = "invalid_request"
        public static let invalidClient: Code = "invalid_client"
        public static let invalidGrant: Code = "invalid_grant"
        public static let unauthorizedClient: Code = "unauthorized_client"
        public static let unsupportedGrantType: Code = "unsupported_grant_type"
        public static let unsupportedResponseType: Code = "unsupported_response_type"
        public static let invalidScope: Code = "invalid_scope"
        public static let accessDenied: Code = "access_denied"
        public static let serverError: Code = "server_error"
        public static let temporarilyUnavailable: Code = "temporarily_unavailable"
        // RFC 7009 §2.2.1
        public static let unsupportedTokenType: Code = "unsupported_token_type"
        // RFC 6750 §3.1
        public static let invalidToken: Code = "invalid_token"
        public static let insufficientScope: Code = "insufficient_scope"
        // OpenID Connect Core §3.1.2.6
        public static let interactionRequired: Code = "interaction_required"
        public static let loginRequired: Code = "login_required"
        public static let accountSelectionRequired: Code = "account_selection_required"
        public static let consentRequired: Code = "consent_required"
        public static let invalidRequestURI: Code = "invalid_request_uri"
        public static let invalidRequestObject: Code = "invalid_request_object"
        public static let requestNotSupported: Code = "request_not_supported"
        public static let requestURINotSupported: Code = "request_uri_not_supported"
        public static let registrationNotSupported: Code = "registration_not_supported"
    }

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

    public static func invalidRequest(_ description: String, detail: String? = nil) -> OAuthError {
        OAuthError(.invalidRequest, description, detail: detail)
    }
    public static func invalidGrant(_ description: String, detail: String? = nil) -> OAuthError {
        OAuthError(.invalidGrant, description, detail: detail)
    }
    public static func invalidClient(_ description: String = "Client authentication failed.", detail: String? = nil) -> OAuthError {
        OAuthError(.invalidClient, description, detail: detail)
    }
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
