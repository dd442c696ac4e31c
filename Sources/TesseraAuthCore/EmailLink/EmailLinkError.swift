import Foundation

/// Why an email-link call failed: a ``Code`` named as Firebase names its `AuthErrorCode`s,
/// and the ``NativeAuthFailure`` with everything the server said (`error`, `suberror`,
/// `correlation_id`).
///
/// ```swift
/// do {
///     let result = try await auth.signIn(withEmail: email, link: link)
/// } catch let error as EmailLinkError where error.code == .invalidEmail {
///     // not the address the link was sent to: ask again (the link stays usable, 5 tries)
/// } catch let error as EmailLinkError where error.code == .expiredActionCode || error.code == .invalidActionCode {
///     // send a new link
/// }
/// ```
public struct EmailLinkError: NativeAuthStepError, Equatable {
    /// What kind of failure this is; new codes may be added, so keep a `default` branch.
    /// A struct over a private enum, as ``AuthError/Code``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidActionCode, expiredActionCode, invalidEmail, credentialAlreadyInUse, userMismatch, invalidUserToken,
                 unauthorizedContinueURI, invalidRequest, tooManyRequests, invalidClient, networkError, cancelled, internalError
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// `invalid_grant` + `invalid_oob_code`: the link is unknown, was used already, belongs
        /// to another app, or saw too many wrong addresses — or the URL is no sign-in link at all.
        public static let invalidActionCode = Code(.invalidActionCode)
        /// `invalid_grant` + `expired_oob_code`: the link's hour is over.
        public static let expiredActionCode = Code(.expiredActionCode)
        /// `invalid_grant` + `invalid_email`: not the address the link was sent to (the link stays
        /// usable for a few more tries); or, when sending, not an email address.
        public static let invalidEmail = Code(.invalidEmail)
        /// `credential_already_in_use`: linking an address another account has; nothing changed.
        public static let credentialAlreadyInUse = Code(.credentialAlreadyInUse)
        /// `user_mismatch`: re-authenticating with a link sent to another address than the
        /// signed-in user's; the link stays unused.
        public static let userMismatch = Code(.userMismatch)
        /// `invalid_token` (HTTP 401): linking or re-authenticating without a valid access token
        /// of this client; sign in again.
        public static let invalidUserToken = Code(.invalidUserToken)
        /// `invalid_request` + `unauthorized_continue_uri`: ``ActionCodeSettings/url`` is not on
        /// a domain registered for the client (Firebase's `unauthorizedDomain`).
        public static let unauthorizedContinueURI = Code(.unauthorizedContinueURI)
        /// Another `invalid_request`: a missing continue URL, an app not registered for the client, ...
        public static let invalidRequest = Code(.invalidRequest)
        /// `slow_down` (HTTP 429): too many links or codes for the address; wait
        /// ``EmailLinkError/retryAfter`` seconds.
        public static let tooManyRequests = Code(.tooManyRequests)
        /// `invalid_client` / `unauthorized_client`: the client is unknown or not first-party.
        public static let invalidClient = Code(.invalidClient)
        /// The request got no answer.
        public static let networkError = Code(.networkError)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Anything else: a server error, an answer that breaks the protocol, an ID token that
        /// failed validation, a provider without email links (see ``EmailLinkError/failure``).
        public static let internalError = Code(.internalError)

        /// The code's name, e.g. `invalidEmail`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The failure with every detail.
    public let failure: NativeAuthFailure

    /// Wraps `failure`, classifying it.
    public init(_ failure: NativeAuthFailure) {
        self.failure = failure
        code = Self.classify(failure)
    }

    /// The code, the server's `error` and `suberror` and the description, for logs.
    public var description: String { "\(code): \(failure.description)" }

    private static func classify(_ failure: NativeAuthFailure) -> Code {
        switch failure.kind {
        case .network: return .networkError
        case .cancelled: return .cancelled
        case .server: break
        default: return .internalError
        }
        switch (failure.error, failure.suberror) {
        case ("invalid_grant", "invalid_oob_code"): return .invalidActionCode
        case ("invalid_grant", "expired_oob_code"): return .expiredActionCode
        case ("invalid_grant", "invalid_email"): return .invalidEmail
        case ("credential_already_in_use", _): return .credentialAlreadyInUse
        case ("user_mismatch", _): return .userMismatch
        case ("invalid_token", _): return .invalidUserToken
        case ("invalid_request", "unauthorized_continue_uri"): return .unauthorizedContinueURI
        case ("invalid_request", _):
            // `/send` refuses an address that isn't one with the native API's 90100 "email parameter ... not valid".
            let description = (failure.errorDescription ?? "").lowercased()
            return failure.errorCodes.first == 90100 && description.contains("email parameter") ? .invalidEmail : .invalidRequest
        case ("slow_down", _): return .tooManyRequests
        case ("invalid_client", _), ("unauthorized_client", _): return .invalidClient
        default: return .internalError
        }
    }

    /// An error of `code` that the SDK found itself.
    init(_ code: Code, failure: NativeAuthFailure) {
        self.code = code
        self.failure = failure
    }

    /// The URL is not a sign-in link; no request was sent.
    static let notSignInLink = EmailLinkError(.invalidActionCode, failure: NativeAuthFailure(
        .invalidResponse, "invalid_oob_code", "The link is not a sign-in link: it has no mode=signIn and oob_code."))
}
