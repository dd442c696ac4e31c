import Foundation
import TesseraAuth
import TesseraAuthCore

// MSAL native auth's error types, one per step, as views over the one error of TesseraAuth:
// each wraps an `AuthError` and offers MSAL's predicates. `TesseraAuth`'s results carry the
// `AuthError` itself; the delegates of this module hand these out.

/// What every step's error offers: the server's error and the predicates common to all steps.
public protocol NativeAuthStepError: Error, Sendable, CustomStringConvertible {
    /// The failure with every detail.
    var failure: AuthError { get }
}

extension NativeAuthStepError {
    /// The server's `error`, or the SDK's own code (`AuthError.Code`'s name).
    public var error: String { failure.serverError ?? failure.code.description }
    /// `error_description`.
    public var errorDescription: String? { failure.oauthError?.errorDescription ?? failure.reason }
    /// `error_codes`.
    public var errorCodes: [Int] { failure.errorCodes }
    /// `suberror`.
    public var suberror: String? { failure.suberror }
    /// The correlation id to quote to the operator.
    public var correlationID: String? { failure.correlationID }
    /// Continue in the browser (`AuthError.Code.browserRequired`).
    public var isBrowserRequired: Bool { failure.code == .browserRequired }
    /// The flow expired (`expired_token`): start again.
    public var isFlowExpired: Bool { failure.code == .flowExpired }
    /// `slow_down`: wait ``retryAfter`` seconds.
    public var isSlowDown: Bool { failure.code == .slowDown }
    /// Seconds to wait after `slow_down`.
    public var retryAfter: TimeInterval? { failure.retryAfter }
    /// The state value was used before; no request was sent.
    public var isStateAlreadyUsed: Bool { failure.code == .stateAlreadyUsed }
    /// The request got no answer.
    public var isNetworkError: Bool { failure.code == .network }
    /// The failure, for logs.
    public var description: String { failure.description }
}

/// Why `NativeAuthClient.signUp(username:password:attributes:)` failed.
public struct SignUpStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// The address already has an account (enumeration protection off).
    public var isUserAlreadyExists: Bool { failure.code == .userAlreadyExists }
    /// The password breaks the server's policy; ``NativeAuthStepError/suberror`` says how.
    public var isInvalidPassword: Bool { failure.code == .invalidPassword || failure.code == .invalidCredentials }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.code == .invalidEmail }
    /// Attributes sent were refused; their names are in ``invalidAttributes``.
    public var isAttributesInvalid: Bool { failure.code == .invalidAttributes }
    /// The names of the refused attributes.
    public var invalidAttributes: [String] { failure.invalidAttributes }
}

/// Why `NativeAuthClient.signIn(username:password:scopes:)` failed.
public struct SignInStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// No account has this address (enumeration protection off).
    public var isUserNotFound: Bool { failure.code == .userNotFound }
    /// The wrong password (50126).
    public var isInvalidPassword: Bool { failure.code == .invalidPassword || failure.code == .invalidCredentials }
    /// MSAL's name for a wrong address or password (50126).
    public var isInvalidCredentials: Bool { failure.code == .invalidCredentials }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.code == .invalidEmail }
}

/// Why `NativeAuthClient.resetPassword(username:)` failed.
public struct ResetPasswordStartError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// No account has this address (enumeration protection off).
    public var isUserNotFound: Bool { failure.code == .userNotFound }
    /// The username is not an email address.
    public var isInvalidUsername: Bool { failure.code == .invalidEmail }
}

/// Why a `submitCode` failed.
public struct VerifyCodeError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// The code is wrong, expired or used up (`invalid_oob_value`); the error's `newState`
    /// takes another try or a resend.
    public var isInvalidCode: Bool { failure.code == .invalidCode }
}

/// Why a `resendCode` failed.
public struct ResendCodeError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
}

/// Why a `submitPassword` failed.
public struct PasswordRequiredError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// A password the server refuses: its policy (sign-up, reset) or the wrong one (sign-in).
    public var isInvalidPassword: Bool { failure.code == .invalidPassword || failure.code == .invalidCredentials }
    /// The password reset failed on the server (`password_change_failed`).
    public var isPasswordResetFailed: Bool { failure.code == .passwordResetFailed }
    /// The password reset did not complete in time (`password_reset_timeout`).
    public var isPasswordResetTimeout: Bool { failure.code == .timeout }
}

/// Why a `submitAttributes` failed.
public struct AttributesRequiredError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
}

/// Why the sign-in after a sign-up or password reset failed.
public struct SignInAfterFlowError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
}

/// MSAL's name for the error of `SignInAfterSignUpState.signIn(scopes:)`.
public typealias SignInAfterSignUpError = SignInAfterFlowError
/// MSAL's name for the error of `SignInAfterResetPasswordState.signIn(scopes:)`.
public typealias SignInAfterResetPasswordError = SignInAfterFlowError

/// Why a second-factor step failed.
public struct MFAError: NativeAuthStepError, Equatable {
    /// The failure with every detail.
    public let failure: AuthError
    /// Wraps `failure`.
    public init(_ failure: AuthError) { self.failure = failure }
    /// The code is wrong or already used (`invalid_oob_value`); `newState` takes another.
    public var isInvalidChallenge: Bool { failure.code == .invalidCode }
}

