import TesseraCore

/// A native sign-up, sign-in or password reset between two of its steps.
///
/// The app holds only the continuation token; everything else lives here, in one row
/// found by the token's hash. A step that succeeds replaces the token (so each one works
/// for one step); a step that fails leaves the flow as it was, except for the count of
/// wrong codes.
public struct NativeFlow: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case signUp = "signup"
        case signIn = "signin"
        case passwordReset = "resetpassword"
    }

    /// Where the flow stands; each endpoint accepts the steps it can follow.
    public enum Step: String, Sendable, Codable {
        /// `start` / `initiate` answered; the next call is a challenge.
        case started
        /// A code was sent and not yet entered.
        case codeSent
        /// Sign-in: the app was told to ask for the password.
        case passwordRequested
        /// The code was right (sign-up: more may be needed; reset: the new password is next).
        case verified
        /// Sign-up or reset finished: the token now buys tokens at `/oauth2/v2.0/token`.
        case completed
    }

    /// The code the user must type, as its hash (its entries are counted in the row, in SQL).
    public struct Code: Sendable, Codable, Equatable {
        var hash: String
        var expiresAt: Int64
    }

    package var id: String
    package var kind: Kind
    package var clientID: String
    /// The address the user gave, normalised.
    var email: String
    /// The account the flow is about; nil for sign-up, and for an address without an
    /// account when enumeration protection answers as if it had one.
    var userID: String?
    var step: Step
    /// `challenge_type` as the app sent it to `start` / `initiate`.
    var challengeTypes: [String]
    var language: String
    var code: Code?
    /// When the last code was sent (for the resend interval).
    var codeSentAt: Int64?
    /// Sign-up: the address has an account already and protection is on, so no code was
    /// sent and none will match.
    var accountExists = false
    /// Sign-up: the chosen password's hash.
    var passwordHash: String?
    /// Sign-up: attributes collected so far, as profile claims.
    var attributes: [String: JSONValue] = [:]
    var emailVerified = false
    /// How the user proved who they are, for the tokens' `amr`.
    var amr: [String] = []
    package var createdAt: Int64
    package var expiresAt: Int64
}

/// An answer of the native API that is not a success: the reference API's `error`, an
/// optional `suberror`, and what the app needs to go on (a fresh continuation token, the
/// attributes to ask for).
public struct NativeAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    public var error: String
    public var description: String
    public var suberror: String?
    public var status: Int
    /// The reference API's numeric codes (`error_codes`), where it defines one.
    public var errorCodes: [Int]
    /// Extra members of the answer: `continuation_token`, `required_attributes`, `invalid_attributes`.
    public var extra: [String: JSONValue]

    public init(_ error: String, _ description: String, suberror: String? = nil, status: Int = 400, errorCodes: [Int] = [],
                extra: [String: JSONValue] = [:]) {
        self.error = error
        self.description = description
        self.suberror = suberror
        self.status = status
        self.errorCodes = errorCodes
        self.extra = extra
    }

    package static func invalidRequest(_ description: String, codes: [Int] = []) -> NativeAuthError {
        NativeAuthError("invalid_request", description, errorCodes: codes)
    }

    /// The password hashing queue is full: the app may try again in a few seconds.
    static func busy() -> NativeAuthError {
        NativeAuthError("temporarily_unavailable", "The server is busy. Try again in a few seconds.", status: 503,
                        extra: ["retry_after": 2])
    }

    /// A continuation token past its lifetime: the app must start over.
    static func expiredToken() -> NativeAuthError {
        NativeAuthError("expired_token", "The continuation_token has expired. Start the flow again.", errorCodes: [552_003])
    }

    /// A continuation token that is unknown, already used, or another client's. The
    /// reference answers `invalid_grant` at challenge and token endpoints and
    /// `invalid_request` at the others.
    static func invalidToken(_ error: String) -> NativeAuthError {
        NativeAuthError(error, "The continuation_token is invalid: it was already used, or belongs to another flow or client.",
                        errorCodes: [55200])
    }

    static func invalidOOB(_ description: String) -> NativeAuthError {
        NativeAuthError("invalid_grant", description, suberror: "invalid_oob_value", errorCodes: [50181])
    }

    /// The one answer to a wrong password or an address without an account, when
    /// enumeration protection is on.
    static let invalidCredentials = NativeAuthError("invalid_grant", "The email address or password is incorrect.",
                                                    errorCodes: [50126])

    static func password(_ violation: PasswordPolicy.Violation, policy: PasswordPolicy) -> NativeAuthError {
        NativeAuthError("invalid_grant", PasswordPolicy.explanation(violation, policy: policy), suberror: violation.rawValue,
                        errorCodes: [399_246])
    }

}

/// A successful native step: the JSON members of the answer.
public struct NativeAuthAnswer: Sendable, Equatable {
    public var members: [String: JSONValue]

    init(_ members: [String: JSONValue]) { self.members = members }

    /// The app must continue in a browser, on the hosted pages.
    static let redirect = NativeAuthAnswer(["challenge_type": "redirect"])
}
