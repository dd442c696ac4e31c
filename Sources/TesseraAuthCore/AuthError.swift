import Foundation
import TesseraCore

/// The one error of the SDK, in every flow: something that failed on the app's side, or a
/// refusal the provider answered with (the OAuth endpoints, the native sign-in API, email
/// links, the account API).
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
/// Every refusal of the provider carries what it sent in ``oauthError`` (`error`,
/// `error_description`; RFC 6749 §4.1.2.1, §5.2), and the native API's details in ``suberror``,
/// ``errorCodes``, ``correlationID``. A refusal the SDK recognises gets a code of its own
/// (``Code/invalidCredentials``, ``Code/invalidCode``, ``Code/slowDown``, ``Code/invalidLink``,
/// ...); any other has the code ``Code/oauth``:
///
/// ```swift
/// switch result {
/// case .error(let error) where error.code == .invalidCredentials: show("Wrong address or password")
/// case .error(let error) where error.code == .slowDown: wait(error.retryAfter)
/// case .error(let error): log(error, error.correlationID)   // quote the correlation id to the operator
/// ...
/// }
/// ```
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum so that cases can be added
    /// without breaking anyone's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case network, cancelled, timeout, stateMismatch, issuerMismatch, idTokenInvalid, oauth, invalidResponse,
                 discovery, configuration, storage, notSignedIn, userInfoInvalid
            case browserRequired, stateAlreadyUsed, userNotFound, userAlreadyExists, invalidCredentials, invalidPassword,
                 invalidEmail, invalidCode, invalidAttributes, attributesRequired, flowExpired, slowDown, passwordResetFailed,
                 accountLocked, accountDisabled
            case invalidLink, linkExpired, emailMismatch, emailInUse, userMismatch, invalidToken
            case invalidClaims, insufficientUserAuthentication, lastWayIn, conflict, notFound, invalidPasskey, unsupported
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

        // The native sign-in API (docs/native-auth.md), also met in email links and the account API.

        /// The flow can only go on in the browser: the server answered `challenge_type=redirect`
        /// (the account needs a method the app did not list), native sign-in is off for the
        /// client (`invalid_client` + `nativeauthapi_disabled`), or the second factor needs a page
        /// (`browser_required`: a passkey; `registration_required`: an authenticator app to set
        /// up). Sign in with ``OIDCClient``.
        public static let browserRequired = Code(.browserRequired)
        /// The step's state was used before; nothing was sent. Go on with the state that step returned.
        public static let stateAlreadyUsed = Code(.stateAlreadyUsed)
        /// `user_not_found` (50034): no account has this address (enumeration protection off only).
        public static let userNotFound = Code(.userNotFound)
        /// `user_already_exists`: the address has an account (enumeration protection off only;
        /// with it on, the sign-up looks like it worked and no code matches).
        public static let userAlreadyExists = Code(.userAlreadyExists)
        /// The address or password is wrong (`invalid_grant` with 50126 at sign-in; the account
        /// API's `wrong_password` for the current password).
        public static let invalidCredentials = Code(.invalidCredentials)
        /// The server's policy refuses a new password (`invalid_grant` with a suberror such as
        /// `password_too_short` or `password_banned`; the account API's `password_too_weak`).
        /// ``AuthError/suberror`` or ``AuthError/reason`` says which rule.
        public static let invalidPassword = Code(.invalidPassword)
        /// Not an email address: a sign-up or sign-in `username`, an email link's address, the
        /// account API's `invalid_address` (or the account's own address). No code or link went out.
        public static let invalidEmail = Code(.invalidEmail)
        /// The one-time code is wrong, expired or used up (`invalid_oob_value`; a second
        /// factor's code; the account API's `wrong_code`). The step may be tried again.
        public static let invalidCode = Code(.invalidCode)
        /// Attributes sent at sign-up were refused (`attribute_validation_failed`); their names
        /// are in ``AuthError/invalidAttributes``.
        public static let invalidAttributes = Code(.invalidAttributes)
        /// `attributes_required` where the flow can't ask for them.
        public static let attributesRequired = Code(.attributesRequired)
        /// The flow took too long (`expired_token`; the account API's `expired_change`): start it again.
        public static let flowExpired = Code(.flowExpired)
        /// Too many tries or codes (`slow_down`; the account API's `password_throttled`,
        /// `too_many_codes`): wait ``AuthError/retryAfter`` seconds when given.
        public static let slowDown = Code(.slowDown)
        /// The server could not change the password (`poll_completion` said `failed`).
        public static let passwordResetFailed = Code(.passwordResetFailed)
        /// Too many wrong passwords lately (`invalid_grant` + `user_locked`, 50053): the password
        /// is refused for a few minutes; a code still signs in.
        public static let accountLocked = Code(.accountLocked)
        /// The operator disabled the account (`invalid_grant` + `user_disabled`, 50057).
        public static let accountDisabled = Code(.accountDisabled)

        // Email links (docs/email-link.md).

        /// The link is unknown, used, of another app, saw too many wrong addresses, or is no
        /// sign-in link at all (`invalid_grant` + `invalid_oob_code`): send a new one.
        public static let invalidLink = Code(.invalidLink)
        /// The link's hour is over (`invalid_grant` + `expired_oob_code`): send a new one.
        public static let linkExpired = Code(.linkExpired)
        /// Not the address the link was sent to (`invalid_grant` + `invalid_email`); the link
        /// stays usable for a few more tries.
        public static let emailMismatch = Code(.emailMismatch)
        /// `credential_already_in_use`: another account has the address; nothing changed.
        public static let emailInUse = Code(.emailInUse)
        /// `user_mismatch`: the link was sent to another address than the signed-in user's; it stays unused.
        public static let userMismatch = Code(.userMismatch)
        /// `invalid_token` (HTTP 401, RFC 6750 §3.1): the access token is expired or revoked, or
        /// its account is gone or disabled: sign in again.
        public static let invalidToken = Code(.invalidToken)

        // The account API (docs/account.md).

        /// `invalid_claims`: a claim is unknown, kept by the server, or its value doesn't fit;
        /// ``AuthError/invalidClaims`` has the reason for each. Nothing changed.
        public static let invalidClaims = Code(.invalidClaims)
        /// `insufficient_user_authentication` (RFC 9470 §3): the change needs a sign-in at most
        /// ``AuthError/maxAge`` seconds old. Sign in again with that `max_age`, then retry.
        public static let insufficientUserAuthentication = Code(.insufficientUserAuthentication)
        /// `last_way_in`: removing the password would leave no way to sign in.
        public static let lastWayIn = Code(.lastWayIn)
        /// `conflict`: the account changed meanwhile (another device, an administrator): read it again and retry.
        public static let conflict = Code(.conflict)
        /// `not_found`: the user has no live session of that id.
        public static let notFound = Code(.notFound)
        /// `invalid_passkey`: the server refused the passkey (its challenge, origin, signature…):
        /// ask for new options and try again.
        public static let invalidPasskey = Code(.invalidPasskey)
        /// The provider doesn't offer this (it announces no endpoint for it, e.g. no
        /// `account_api_endpoint`). Hide the feature; nothing was sent.
        public static let unsupported = Code(.unsupported)

        /// The code's name, e.g. `stateMismatch`: stable, fit for logs and analytics.
        public var description: String { base.rawValue }

        /// The code of a refusal the provider sent (`error`, `suberror`, `error_codes`,
        /// `error_description`): one reading for the native API, email links and the account API.
        static func classify(error: String, suberror: String?, errorCodes: [Int], description: String?) -> Code {
            switch (error, suberror ?? "") {
            case ("invalid_client", "nativeauthapi_disabled"), ("invalid_grant", "browser_required"),
                 ("invalid_grant", "registration_required"): return .browserRequired
            case ("invalid_grant", "user_locked"): return .accountLocked
            case ("invalid_grant", "user_disabled"): return .accountDisabled
            case ("user_already_exists", _): return .userAlreadyExists
            case ("user_not_found", _): return .userNotFound
            case ("invalid_grant", "invalid_oob_value"): return .invalidCode
            case ("invalid_grant", "attribute_validation_failed"): return .invalidAttributes
            case ("invalid_grant", "invalid_oob_code"): return .invalidLink
            case ("invalid_grant", "expired_oob_code"): return .linkExpired
            case ("invalid_grant", "invalid_email"): return .emailMismatch
            case ("invalid_grant", let sub) where AuthError.passwordSuberrors.contains(sub): return .invalidPassword
            case ("invalid_grant", _) where errorCodes.contains(50126): return .invalidCredentials
            case (_, _) where errorCodes.first == 50034: return .userNotFound
            case ("invalid_request", _) where errorCodes.first == 90100:
                // The native API's "username parameter is empty or not valid"; /emaillink/send's "email parameter ...".
                let text = (description ?? "").lowercased()
                return text.contains("username parameter") || text.contains("email parameter") ? .invalidEmail : .oauth
            case ("attributes_required", _): return .attributesRequired
            case ("expired_token", _), (AccountAPIError.expiredChange, _): return .flowExpired
            case ("slow_down", _), (AccountAPIError.passwordThrottled, _), (AccountAPIError.tooManyCodes, _): return .slowDown
            case ("credential_already_in_use", _): return .emailInUse
            case ("user_mismatch", _): return .userMismatch
            case ("invalid_token", _): return .invalidToken
            case (AccountAPIError.wrongPassword, _): return .invalidCredentials
            case (AccountAPIError.passwordTooWeak, _): return .invalidPassword
            case (AccountAPIError.invalidAddress, _): return .invalidEmail
            case (AccountAPIError.wrongCode, _): return .invalidCode
            case (AccountAPIError.invalidClaimsCode, _): return .invalidClaims
            case (AccountAPIError.insufficientUserAuthentication, _): return .insufficientUserAuthentication
            case (AccountAPIError.lastWayIn, _): return .lastWayIn
            case (AccountAPIError.conflict, _): return .conflict
            case (AccountAPIError.notFound, _): return .notFound
            case (AccountAPIError.invalidPasskey, _), (_, AccountAPIError.invalidPasskey): return .invalidPasskey
            default: return .oauth
            }
        }
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
    /// The native API's `suberror` (`invalid_oob_value`, `password_too_short`,
    /// `attribute_validation_failed`, `invalid_oob_code`, ...).
    public var suberror: String?
    /// The native API's `error_codes`: the reference API's numeric codes (50126, 90100, ...).
    public var errorCodes: [Int] = []
    /// `correlation_id` of the refusal, or the answer's `x-ms-request-id`: quote it to the operator.
    public var correlationID: String?
    /// The native API's `trace_id`.
    public var traceID: String?
    /// For ``Code/slowDown``: seconds to wait before asking again (`retry_after` or `Retry-After`).
    public var retryAfter: TimeInterval?
    /// For ``Code/invalidAttributes``: the names of the attributes refused.
    public var invalidAttributes: [String] = []
    /// For ``Code/invalidClaims``: the reason each refused claim was refused, by claim name.
    public var invalidClaims: [String: String] = [:]
    /// For ``Code/insufficientUserAuthentication``: the sign-in must be at most this many
    /// seconds old; put it in the new sign-in's ``AuthRequest/maxAge``.
    public var maxAge: Int?
    /// The native API's error answer, for the members a flow goes on with (`continuation_token`,
    /// `required_attributes`).
    var answer: NativeAuthErrorAnswer?

    /// Creates an error; prefer the static factories.
    public init(_ code: Code, _ reason: String, oauthError: OAuthError? = nil, idTokenCheck: IDTokenCheck? = nil,
                httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.oauthError = oauthError
        self.idTokenCheck = idTokenCheck
        self.httpStatus = httpStatus
    }

    /// The code and the reason (or the provider's error, with its suberror and codes), for logs.
    public var description: String {
        if let oauthError {
            var text = "\(code): \(oauthError.code)"
            if let suberror { text += " (\(suberror))" }
            if !errorCodes.isEmpty { text += " \(errorCodes)" }
            return text + (oauthError.errorDescription.map { ": \($0)" } ?? "")
        }
        if let idTokenCheck { return "\(code) (\(idTokenCheck.rawValue)): \(reason)" }
        return "\(code): \(reason)"
    }

    /// The provider's `error` (`invalid_grant`, `user_not_found`, ...) when it refused, else nil.
    public var serverError: String? { oauthError?.code.rawValue }

    /// A refusal of the native API, email links or the account API: its `error`, `suberror`,
    /// `error_codes` and description, classified by ``Code``.
    init(refusal error: String, description: String?, suberror: String? = nil, errorCodes: [Int] = [], httpStatus: Int?) {
        let code = Code.classify(error: error, suberror: suberror, errorCodes: errorCodes, description: description)
        self.init(code, description ?? error, oauthError: OAuthError(OAuthError.Code(rawValue: error), description), httpStatus: httpStatus)
        self.suberror = suberror
        self.errorCodes = errorCodes
    }

    /// The native API's error body (reference API §0 "Error body").
    init(serverError answer: NativeAuthErrorAnswer, status: Int, headers: [String: String], correlationID: String) {
        self.init(refusal: answer.error, description: answer.errorDescription, suberror: answer.suberror,
                  errorCodes: answer.errorCodes ?? [], httpStatus: status)
        self.answer = answer
        self.correlationID = answer.correlationID ?? correlationID
        traceID = answer.traceID
        retryAfter = answer.retryAfter.map(TimeInterval.init) ?? headers["retry-after"].flatMap(TimeInterval.init)
        invalidAttributes = answer.invalidAttributes?.map(\.name) ?? []
    }

    /// Any error thrown inside a flow, as an ``AuthError``.
    init(_ error: any Error) {
        switch error {
        case let error as AuthError: self = error
        case is CancellationError: self.init(.cancelled, "the task was cancelled")
        default: self.init(.invalidResponse, "\(error)")
        }
    }

    /// A step's state used twice.
    static let alreadyUsed = AuthError(.stateAlreadyUsed, "this state was already used for a step; go on with the state that step returned")

    /// The reference API's password suberrors.
    static let passwordSuberrors: Set<String> = ["password_too_weak", "password_too_short", "password_too_long",
                                                 "password_recently_used", "password_banned", "password_is_invalid"]

    /// Whether the server left the flow's continuation token usable, so the step may be tried
    /// again with other input: a wrong code, password or attribute, or `slow_down`.
    var keepsFlow: Bool { [.invalidCode, .invalidPassword, .invalidCredentials, .invalidAttributes, .slowDown].contains(code) }

    /// The continuation token of a refusal that lets the flow go on.
    var continuationToken: String? { answer?.continuationToken }

    /// The attributes an `attributes_required` refusal asks for.
    var requiredAttributes: [AttributeRequirement] {
        answer?.requiredAttributes?.map(AttributeRequirement.init(wire:)) ?? []
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

    /// Whether the token endpoint refused a refresh token or code as invalid, expired or revoked
    /// (`invalid_grant`, RFC 6749 §5.2): the session is over and the user must sign in again.
    public var isInvalidGrant: Bool { code == .oauth && oauthError?.code == .invalidGrant }

    /// Whether the user cancelled the sign-in (closed the browser) or the server said
    /// `access_denied` (RFC 6749 §4.1.2.1).
    public var isCancelledOrDenied: Bool { code == .cancelled || oauthError?.code == .accessDenied }
}
