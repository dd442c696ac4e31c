import TesseraCore

/// Why an account API call failed: the server's refusal as it sent it (``apiError``: `error`,
/// `error_description`, `invalid_claims`, `max_age`), or a failure on the app's side (no
/// network, no account API at the provider, a signed-out session).
///
/// Match on ``code``; new codes may be added, so keep a `default` branch:
///
/// ```swift
/// do {
///     try await account.updateProfile(["address": .object(["locality": "Berlin", "country": "DE"])])
/// } catch let error as AccountError where error.code == .insufficientUserAuthentication {
///     // sign in again with max_age = error.maxAge, then retry with the new tokens
/// } catch let error as AccountError where error.code == .invalidClaims {
///     show(error.invalidClaims)                       // ["birthdate": "must be a date (YYYY-MM-DD)"]
/// }
/// ```
public struct AccountError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum, as ``AuthError/Code``, so
    /// that cases can be added without breaking anyone's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidClaims, insufficientUserAuthentication, wrongPassword, passwordThrottled, passwordTooWeak, lastWayIn,
                 conflict, notFound, invalidAddress, tooManyCodes, wrongCode, expiredChange, invalidPasskey, invalidToken, insufficientScope, invalidRequest, temporarilyUnavailable, refused,
                 unsupported, notSignedIn, network, cancelled, discovery, invalidResponse
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// `invalid_claims` (HTTP 400): a claim is unknown, maintained by the server, or its value
        /// doesn't fit; ``AccountError/invalidClaims`` has the reason for each. Nothing changed.
        public static let invalidClaims = Code(.invalidClaims)
        /// `insufficient_user_authentication` (HTTP 401, RFC 9470 §3): the change needs a sign-in
        /// at most ``AccountError/maxAge`` seconds old. Sign the user in again (`max_age`) and
        /// retry with the new access token. Nothing changed.
        public static let insufficientUserAuthentication = Code(.insufficientUserAuthentication)
        /// `wrong_password` (HTTP 403): the current password is wrong.
        public static let wrongPassword = Code(.wrongPassword)
        /// `password_throttled` (HTTP 429): too many wrong passwords lately; try again later.
        public static let passwordThrottled = Code(.passwordThrottled)
        /// `password_too_weak` (HTTP 400): the server's policy refuses the new password; the
        /// reason, fit to show, is ``AccountError/reason``.
        public static let passwordTooWeak = Code(.passwordTooWeak)
        /// `last_way_in` (HTTP 409): removing the password would leave no way to sign in.
        public static let lastWayIn = Code(.lastWayIn)
        /// `conflict` (HTTP 409): the account changed meanwhile (another device, an administrator):
        /// read it again and retry.
        public static let conflict = Code(.conflict)
        /// `not_found` (HTTP 404): the user has no live session of that id.
        public static let notFound = Code(.notFound)
        /// `invalid_address` (HTTP 400): the new address is not an email address, or is the
        /// account's own. No code was sent.
        public static let invalidAddress = Code(.invalidAddress)
        /// `too_many_codes` (HTTP 429): too many codes went to that address or from the user's
        /// network in the last hour; try again later. No code was sent.
        public static let tooManyCodes = Code(.tooManyCodes)
        /// `wrong_code` (HTTP 400): the code doesn't match; ``AccountError/reason`` says how many
        /// tries are left before the change ends. Nothing changed.
        public static let wrongCode = Code(.wrongCode)
        /// `expired_change` (HTTP 400): the address change is unknown, used, expired, or its code
        /// was tried too often (or the address got an account of its own meanwhile): start again.
        public static let expiredChange = Code(.expiredChange)
        /// `invalid_passkey` (HTTP 400): the server refused the passkey (its challenge, origin,
        /// signature…): ask for new options and try again.
        public static let invalidPasskey = Code(.invalidPasskey)
        /// `invalid_token` (HTTP 401, RFC 6750 §3.1): the access token is expired, revoked, or its
        /// account is gone or disabled; sign in again.
        public static let invalidToken = Code(.invalidToken)
        /// `insufficient_scope` (HTTP 403, RFC 6750 §3.1): the token is not of a first-party app:
        /// only the operator's own apps may use the account API.
        public static let insufficientScope = Code(.insufficientScope)
        /// `invalid_request` (HTTP 400): the request is malformed (a bug in the app or the SDK).
        public static let invalidRequest = Code(.invalidRequest)
        /// `temporarily_unavailable` (HTTP 503): the server or its database is busy; retry shortly.
        public static let temporarilyUnavailable = Code(.temporarilyUnavailable)
        /// Another refusal of the server; ``AccountError/apiError`` has its `error`.
        public static let refused = Code(.refused)
        /// The provider announces no `account_api_endpoint`: it has no account API (or predates
        /// it). Hide the account screens; nothing was sent.
        public static let unsupported = Code(.unsupported)
        /// There is no access token to call with: the session is signed out, or its refresh
        /// token was refused (``AccountError/underlying`` says which).
        public static let notSignedIn = Code(.notSignedIn)
        /// The request got no HTTP answer.
        public static let network = Code(.network)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The discovery document could not be fetched or is not the provider's.
        public static let discovery = Code(.discovery)
        /// The answer is not what the account API sends (wrong status, not JSON, members missing).
        public static let invalidResponse = Code(.invalidResponse)

        /// The code's name, e.g. `insufficientUserAuthentication`.
        public var description: String { base.rawValue }

        /// The code of a refusal's wire `error`.
        init(wire error: String) {
            self = switch error {
            case AccountAPIError.invalidClaimsCode: .invalidClaims
            case AccountAPIError.insufficientUserAuthentication: .insufficientUserAuthentication
            case AccountAPIError.wrongPassword: .wrongPassword
            case AccountAPIError.passwordThrottled: .passwordThrottled
            case AccountAPIError.passwordTooWeak: .passwordTooWeak
            case AccountAPIError.lastWayIn: .lastWayIn
            case AccountAPIError.conflict: .conflict
            case AccountAPIError.notFound: .notFound
            case AccountAPIError.invalidAddress: .invalidAddress
            case AccountAPIError.tooManyCodes: .tooManyCodes
            case AccountAPIError.wrongCode: .wrongCode
            case AccountAPIError.expiredChange: .expiredChange
            case AccountAPIError.invalidPasskey: .invalidPasskey
            case OAuthError.Code.invalidToken.rawValue: .invalidToken
            case OAuthError.Code.insufficientScope.rawValue: .insufficientScope
            case OAuthError.Code.invalidRequest.rawValue: .invalidRequest
            case OAuthError.Code.temporarilyUnavailable.rawValue: .temporarilyUnavailable
            default: .refused
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong: the server's `error_description` (English, fit for a developer; for
    /// ``Code/passwordTooWeak`` fit to show), or what failed on the app's side.
    public var reason: String
    /// The server's refusal as it sent it, when it sent one.
    public var apiError: AccountAPIError?
    /// The SDK error behind a network, discovery or signed-out failure.
    public var underlying: AuthError?
    /// The HTTP status of the answer, when there was one.
    public var httpStatus: Int?

    /// An error of `code`; the account API's refusals come with the server's ``apiError``.
    public init(_ code: Code, _ reason: String, apiError: AccountAPIError? = nil, underlying: AuthError? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.apiError = apiError
        self.underlying = underlying
        self.httpStatus = httpStatus
    }

    /// The server's refusal `apiError`, answered with HTTP `status`.
    public init(refusal apiError: AccountAPIError, httpStatus: Int) {
        self.init(Code(wire: apiError.error), apiError.errorDescription ?? apiError.error, apiError: apiError, httpStatus: httpStatus)
    }

    /// A failure of the SDK underneath (transport, discovery, the session's tokens).
    init(_ error: AuthError) {
        let code: Code = switch error.code {
        case .network, .timeout: .network
        case .cancelled: .cancelled
        case .notSignedIn: .notSignedIn
        case .discovery, .issuerMismatch, .configuration: .discovery
        // The session's refresh token was refused (RFC 6749 §5.2): the session is over.
        case .oauth where error.isInvalidGrant: .notSignedIn
        default: .invalidResponse
        }
        self.init(code, error.reason, underlying: error, httpStatus: error.httpStatus)
    }

    /// For ``Code/invalidClaims``: the reason each refused claim was refused, by claim name.
    public var invalidClaims: [String: String] { apiError?.invalidClaims ?? [:] }

    /// For ``Code/insufficientUserAuthentication``: the sign-in must be at most this many
    /// seconds old; put it in the new sign-in's ``AuthRequest/maxAge``.
    public var maxAge: Int? { apiError?.maxAge.map { Int($0) } }

    /// The code and the reason (with the wire `error` of a refusal), for logs.
    public var description: String {
        if let apiError { return "\(code) (\(apiError.error)): \(reason)" }
        return "\(code): \(reason)"
    }
}
