import Foundation
import TesseraCore

/// Why a native sign-in step failed: the server's error as it sent it (`error`, `suberror`,
/// `error_codes`, `correlation_id`), or a failure on the app's side (no network, an answer
/// that breaks the protocol, a state value used twice).
///
/// The step results carry it wrapped in a type named after the step (``SignUpStartError``,
/// ``VerifyCodeError``, ...), whose predicates are MSAL's; this type has them all.
public struct NativeAuthFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct over a private enum so that cases can be added.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case server, browserRequired, stateAlreadyUsed, network, cancelled, invalidResponse, discovery, idTokenInvalid,
                 passwordResetFailed, timeout
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server answered with an error; ``NativeAuthFailure/error`` is its `error`.
        public static let server = Kind(.server)
        /// The server answered `challenge_type=redirect`: this flow can only continue in the
        /// browser (e.g. the account needs a method the app did not list).
        public static let browserRequired = Kind(.browserRequired)
        /// The state value was used before; no request was sent. Continue with the state the
        /// earlier call returned.
        public static let stateAlreadyUsed = Kind(.stateAlreadyUsed)
        /// The request got no HTTP answer.
        public static let network = Kind(.network)
        /// The task was cancelled.
        public static let cancelled = Kind(.cancelled)
        /// The answer broke the protocol (not JSON, a member missing).
        public static let invalidResponse = Kind(.invalidResponse)
        /// Discovery failed or the provider has no native sign-in API.
        public static let discovery = Kind(.discovery)
        /// The ID token failed validation; see ``NativeAuthFailure/underlying``.
        public static let idTokenInvalid = Kind(.idTokenInvalid)
        /// `poll_completion` said the password change failed (`password_change_failed`).
        public static let passwordResetFailed = Kind(.passwordResetFailed)
        /// The password reset did not complete within the configured time (`password_reset_timeout`).
        public static let timeout = Kind(.timeout)

        /// The kind's name.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public var kind: Kind
    /// The server's `error` (`invalid_grant`, `user_already_exists`, ...), or for failures on
    /// the app's side the SDK's own code (`redirect`, `state_already_used`, `network`, ...).
    public var error: String
    /// `error_description`, or what went wrong on the app's side (not localised).
    public var errorDescription: String?
    /// `error_codes`: the reference API's numeric codes (50126, 90100, ...).
    public var errorCodes: [Int]
    /// `suberror` (`invalid_oob_value`, `password_too_short`, `attribute_validation_failed`, ...).
    public var suberror: String?
    /// `correlation_id` of the error, or the `x-ms-request-id` of the answer: quote it to the operator.
    public var correlationID: String?
    /// `trace_id`.
    public var traceID: String?
    /// The HTTP status of the answer, when there was one.
    public var httpStatus: Int?
    /// For `slow_down`: seconds to wait before asking again (`retry_after`, or `Retry-After`).
    public var retryAfter: TimeInterval?
    /// For `attribute_validation_failed`: the names of the attributes refused.
    public var invalidAttributes: [String]
    /// The SDK error behind a network, discovery or ID-token failure.
    public var underlying: AuthError?
    /// The server's error answer, for the members the SDK reads on (continuation_token, required_attributes).
    var answer: NativeAuthErrorAnswer?

    /// A failure of `kind` with `error` and `description`.
    public init(_ kind: Kind, _ error: String, _ description: String?, errorCodes: [Int] = [], suberror: String? = nil,
                underlying: AuthError? = nil) {
        self.kind = kind
        self.error = error
        self.errorDescription = description
        self.errorCodes = errorCodes
        self.suberror = suberror
        self.invalidAttributes = []
        self.underlying = underlying
        self.answer = nil
    }

    /// The server's error body (reference API §0 "Error body").
    init(serverError answer: NativeAuthErrorAnswer, status: Int, headers: [String: String], correlationID: String) {
        self.init(.server, answer.error, answer.errorDescription, errorCodes: answer.errorCodes ?? [], suberror: answer.suberror)
        self.answer = answer
        httpStatus = status
        self.correlationID = answer.correlationID ?? correlationID
        traceID = answer.traceID
        retryAfter = answer.retryAfter.map(TimeInterval.init) ?? headers["retry-after"].flatMap(TimeInterval.init)
        invalidAttributes = answer.invalidAttributes?.map(\.name) ?? []
    }

    /// Any error thrown inside a step, as a failure.
    init(_ error: any Error) {
        switch error {
        case let failure as NativeAuthFailure:
            self = failure
        case let error as AuthError:
            let kind: Kind = switch error.code {
            case .network: .network
            case .cancelled: .cancelled
            case .idTokenInvalid: .idTokenInvalid
            case .discovery, .issuerMismatch, .configuration: .discovery
            default: .invalidResponse
            }
            self.init(kind, kind.description, error.reason, underlying: error)
            httpStatus = error.httpStatus
        case is CancellationError:
            self.init(.cancelled, "cancelled", "The task was cancelled.")
        default:
            self.init(.invalidResponse, "unexpected_error", "\(error)")
        }
    }

    static func invalidResponse(_ description: String) -> NativeAuthFailure {
        NativeAuthFailure(.invalidResponse, "invalid_response_body", description)
    }

    static let alreadyUsed = NativeAuthFailure(.stateAlreadyUsed, "state_already_used",
                                               "This state was already used for a step; continue with the state that step returned.")

    /// The `error`, `suberror` and description, for logs.
    public var description: String {
        var text = error
        if let suberror { text += " (\(suberror))" }
        if !errorCodes.isEmpty { text += " \(errorCodes)" }
        if let errorDescription { text += ": \(errorDescription)" }
        return text
    }

    // MARK: MSAL's predicates (reference API §6)

    /// `challenge_type=redirect`, or native sign-in is not enabled for this client
    /// (`invalid_client` + `nativeauthapi_disabled`): run the browser flow with ``NativeAuthClient/oidc``.
    public var isBrowserRequired: Bool {
        kind == .browserRequired || (error == "invalid_client" && suberror == "nativeauthapi_disabled")
    }
    /// `user_already_exists`: the address has an account (only when the server's enumeration
    /// protection is off; with it on, the sign-up looks like it worked and no code matches).
    public var isUserAlreadyExists: Bool { error == "user_already_exists" }
    /// `user_not_found` (50034): no account has this address (enumeration protection off only).
    public var isUserNotFound: Bool { error == "user_not_found" || (kind == .server && errorCodes.first == 50034) }
    /// `invalid_request` with 90100 and "username parameter is empty or not valid": not an email address.
    public var isInvalidUsername: Bool {
        error == "invalid_request" && errorCodes.first == 90100
            && (errorDescription ?? "").lowercased().contains("username parameter is empty or not valid")
    }
    /// A password the server refuses: a policy suberror (`password_too_short`, `password_too_weak`,
    /// `password_banned`, ...) or, at sign-in, the wrong password (`invalid_grant` with 50126).
    public var isInvalidPassword: Bool {
        error == "invalid_grant" && (Self.passwordSuberrors.contains(suberror ?? "") || errorCodes.contains(50126))
    }
    /// The wrong email address or password at sign-in (`invalid_grant` with 50126).
    public var isInvalidCredentials: Bool { error == "invalid_grant" && errorCodes.contains(50126) }
    /// `invalid_grant` + `invalid_oob_value`: the code is wrong, expired or used up.
    public var isInvalidCode: Bool { error == "invalid_grant" && suberror == "invalid_oob_value" }
    /// `invalid_grant` + `attribute_validation_failed`; the names are in ``invalidAttributes``.
    public var isAttributesInvalid: Bool { error == "invalid_grant" && suberror == "attribute_validation_failed" }
    /// `attributes_required` seen where it can't be handled.
    public var isAttributesRequired: Bool { error == "attributes_required" }
    /// `expired_token`: the flow took too long; start it again.
    public var isFlowExpired: Bool { error == "expired_token" }
    /// `slow_down`: too many codes; wait ``retryAfter`` seconds.
    public var isSlowDown: Bool { error == "slow_down" }
    /// The state value was used before (no request was sent).
    public var isStateAlreadyUsed: Bool { kind == .stateAlreadyUsed }
    /// The request got no answer.
    public var isNetworkError: Bool { kind == .network }

    /// The reference API's password suberrors.
    static let passwordSuberrors: Set<String> = ["password_too_weak", "password_too_short", "password_too_long",
                                                 "password_recently_used", "password_banned", "password_is_invalid"]

    /// Whether the server left the continuation token usable, so the step may be tried again
    /// with other input: a wrong code, password or attribute, or `slow_down`.
    var keepsFlow: Bool { isInvalidCode || isInvalidPassword || isAttributesInvalid || isSlowDown }

    var continuationToken: String? { answer?.continuationToken }

    var requiredAttributes: [AttributeRequirement] {
        answer?.requiredAttributes?.map(AttributeRequirement.init(wire:)) ?? []
    }
}

/// An attribute the sign-up still needs (`required_attributes`; MSAL's
/// `MSALNativeAuthRequiredAttribute`).
public struct AttributeRequirement: Sendable, Equatable, Hashable {
    /// The attribute's name, as ``SignUpAttributesRequiredState/submitAttributes(_:)`` takes it.
    public var name: String
    /// `string`, `boolean`, `integer` or `date`.
    public var type: String
    /// Whether the sign-up can't finish without it.
    public var required: Bool
    /// A regular expression the whole value must match (`options.regex`).
    public var regex: String?

    /// An attribute requirement from its parts.
    public init(name: String, type: String = "string", required: Bool = true, regex: String? = nil) {
        self.name = name
        self.type = type
        self.required = required
        self.regex = regex
    }

    init(wire attribute: NativeAuthAttribute) {
        self.init(name: attribute.name, type: attribute.type, required: attribute.required, regex: attribute.options?.regex)
    }
}

/// What every step's error offers: the server's error and the predicates common to all steps.
public protocol NativeAuthStepError: Error, Sendable, CustomStringConvertible {
    /// The failure with every detail.
    var failure: NativeAuthFailure { get }
}

extension NativeAuthStepError {
    /// The server's `error`, or the SDK's own code.
    public var error: String { failure.error }
    /// `error_description`.
    public var errorDescription: String? { failure.errorDescription }
    /// `error_codes`.
    public var errorCodes: [Int] { failure.errorCodes }
    /// `suberror`.
    public var suberror: String? { failure.suberror }
    /// The correlation id to quote to the operator.
    public var correlationID: String? { failure.correlationID }
    /// Continue in the browser (``NativeAuthFailure/isBrowserRequired``).
    public var isBrowserRequired: Bool { failure.isBrowserRequired }
    /// The flow expired (`expired_token`): start again.
    public var isFlowExpired: Bool { failure.isFlowExpired }
    /// `slow_down`: wait ``retryAfter`` seconds.
    public var isSlowDown: Bool { failure.isSlowDown }
    /// Seconds to wait after `slow_down`.
    public var retryAfter: TimeInterval? { failure.retryAfter }
    /// The state value was used before; no request was sent.
    public var isStateAlreadyUsed: Bool { failure.isStateAlreadyUsed }
    /// The request got no answer.
    public var isNetworkError: Bool { failure.isNetworkError }
    /// The failure, for logs.
    public var description: String { failure.description }
}

/// Why ``NativeAuthClient/signUp(username:password:attributes:)`` failed.
public struct SignUpStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
    /// The address already has an account (enumeration protection off).
    public var isUserAlreadyExists: Bool { failure.isUserAlreadyExists }
    /// The password breaks the server's policy; ``NativeAuthStepError/suberror`` says how.
    public var isInvalidPassword: Bool { failure.isInvalidPassword }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.isInvalidUsername }
    /// Attributes sent were refused; their names are in ``invalidAttributes``.
    public var isAttributesInvalid: Bool { failure.isAttributesInvalid }
    /// The names of the refused attributes.
    public var invalidAttributes: [String] { failure.invalidAttributes }
}

/// Why ``NativeAuthClient/signIn(username:password:scopes:)`` failed.
public struct SignInStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
    /// No account has this address (enumeration protection off).
    public var isUserNotFound: Bool { failure.isUserNotFound }
    /// The wrong password (50126).
    public var isInvalidPassword: Bool { failure.isInvalidPassword }
    /// MSAL's name for a wrong address or password (50126).
    public var isInvalidCredentials: Bool { failure.isInvalidCredentials }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.isInvalidUsername }
}

/// Why ``NativeAuthClient/resetPassword(username:)`` failed.
public struct ResetPasswordStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
    /// No account has this address (enumeration protection off).
    public var isUserNotFound: Bool { failure.isUserNotFound }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.isInvalidUsername }
}

/// Why a `submitCode` failed.
public struct VerifyCodeError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
    /// The code is wrong, expired or used up (`invalid_oob_value`); the error's `newState`
    /// takes another try or a resend.
    public var isInvalidCode: Bool { failure.isInvalidCode }
}

/// Why a `resendCode` failed.
public struct ResendCodeError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
}

/// Why a `submitPassword` failed.
public struct PasswordRequiredError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
    /// A password the server refuses: its policy (sign-up, reset) or the wrong one (sign-in).
    public var isInvalidPassword: Bool { failure.isInvalidPassword }
    /// The password reset failed on the server (`password_change_failed`).
    public var isPasswordResetFailed: Bool { failure.kind == .passwordResetFailed }
    /// The password reset did not complete in time (`password_reset_timeout`).
    public var isPasswordResetTimeout: Bool { failure.kind == .timeout }
}

/// Why a `submitAttributes` failed.
public struct AttributesRequiredError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
}

/// Why the sign-in after a sign-up or password reset failed.
public struct SignInAfterFlowError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: NativeAuthFailure
    /// Wraps `failure`.
    public init(_ failure: NativeAuthFailure) { self.failure = failure }
}

/// MSAL's name for the error of ``SignInAfterSignUpState/signIn(scopes:)``.
public typealias SignInAfterSignUpError = SignInAfterFlowError
/// MSAL's name for the error of ``SignInAfterResetPasswordState/signIn(scopes:)``.
public typealias SignInAfterResetPasswordError = SignInAfterFlowError
