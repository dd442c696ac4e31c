import Foundation
import TesseraAuth
import TesseraAuthCore

/// Why an email-link call failed, with a ``Code`` named as Firebase names its `AuthErrorCode`s:
/// a view over the SDK's one error, ``EmailLinkError/underlying`` (an `AuthError`).
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
public struct EmailLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; new codes may be added, so keep a `default` branch.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidActionCode, expiredActionCode, invalidEmail, credentialAlreadyInUse, userMismatch, invalidUserToken,
                 unauthorizedContinueURI, invalidRequest, tooManyRequests, invalidClient, networkError, cancelled, internalError
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The link is unknown, was used already, belongs to another app, or saw too many wrong
        /// addresses — or the URL is no sign-in link at all (`AuthError.Code.invalidLink`).
        public static let invalidActionCode = Code(.invalidActionCode)
        /// The link's hour is over (`AuthError.Code.linkExpired`).
        public static let expiredActionCode = Code(.expiredActionCode)
        /// Not the address the link was sent to (the link stays usable for a few more tries),
        /// or, when sending, not an email address (`.emailMismatch`, `.invalidEmail`).
        public static let invalidEmail = Code(.invalidEmail)
        /// Linking an address another account has; nothing changed (`.emailInUse`).
        public static let credentialAlreadyInUse = Code(.credentialAlreadyInUse)
        /// Re-authenticating with a link sent to another address than the signed-in user's; the
        /// link stays unused (`.userMismatch`).
        public static let userMismatch = Code(.userMismatch)
        /// Linking or re-authenticating without a valid access token of this client; sign in
        /// again (`.invalidToken`, `.notSignedIn`).
        public static let invalidUserToken = Code(.invalidUserToken)
        /// ``ActionCodeSettings/url`` is not on a domain registered for the client (Firebase's
        /// `unauthorizedDomain`; `invalid_request` + `unauthorized_continue_uri`).
        public static let unauthorizedContinueURI = Code(.unauthorizedContinueURI)
        /// Another `invalid_request`: a missing continue URL, an app not registered for the client, ...
        public static let invalidRequest = Code(.invalidRequest)
        /// Too many links or codes for the address; wait ``EmailLinkError/retryAfter`` seconds (`.slowDown`).
        public static let tooManyRequests = Code(.tooManyRequests)
        /// `invalid_client` / `unauthorized_client`: the client is unknown or not first-party.
        public static let invalidClient = Code(.invalidClient)
        /// The request got no answer.
        public static let networkError = Code(.networkError)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Anything else: a server error, an answer that breaks the protocol, an ID token that
        /// failed validation, a provider without email links (see ``EmailLinkError/underlying``).
        public static let internalError = Code(.internalError)

        /// The code's name, e.g. `invalidEmail`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The SDK's error, with everything the server said.
    public let underlying: AuthError

    /// A view of `error`.
    public init(_ error: AuthError) {
        underlying = error
        code = Self.classify(error)
    }

    /// The server's `error` (`invalid_grant`, ...), or the SDK's code.
    public var error: String { underlying.serverError ?? underlying.code.description }
    /// The server's `error_description`, or what failed on the app's side.
    public var errorDescription: String? { underlying.oauthError?.errorDescription ?? underlying.reason }
    /// The server's `suberror`.
    public var suberror: String? { underlying.suberror }
    /// The correlation id to quote to the operator.
    public var correlationID: String? { underlying.correlationID }
    /// Seconds to wait after ``Code/tooManyRequests``.
    public var retryAfter: TimeInterval? { underlying.retryAfter }
    /// The code and the underlying error, for logs.
    public var description: String { "\(code): \(underlying.description)" }

    private static func classify(_ error: AuthError) -> Code {
        switch error.code {
        case .invalidLink: return .invalidActionCode
        case .linkExpired: return .expiredActionCode
        case .emailMismatch, .invalidEmail: return .invalidEmail
        case .emailInUse: return .credentialAlreadyInUse
        case .userMismatch: return .userMismatch
        case .invalidToken, .notSignedIn: return .invalidUserToken
        case .slowDown: return .tooManyRequests
        case .network: return .networkError
        case .cancelled: return .cancelled
        case .oauth:
            switch (error.serverError, error.suberror) {
            case ("invalid_request", "unauthorized_continue_uri"): return .unauthorizedContinueURI
            case ("invalid_request", _): return .invalidRequest
            case ("invalid_client", _), ("unauthorized_client", _): return .invalidClient
            default: return .internalError
            }
        default: return .internalError
        }
    }
}
