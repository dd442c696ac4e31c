import Foundation
@_exported import TesseraAuth
import TesseraAuthCore
import TesseraCore

// Delegate-style adapters with MSAL's protocol and method names, for apps moving from MSAL's
// native auth SDK. Each is a thin wrapper over the async API: the call starts a task on the
// main actor, awaits the async method, and calls exactly one delegate method on the main
// actor. The returned task can be awaited (tests do) or ignored (as with MSAL).
//
// MSAL's optional methods have default implementations here that report the step as an
// error through the delegate's required error method, as MSAL does when they are missing.

/// The parameters of `NativeAuthClient.signUp(parameters:delegate:)`; MSAL's `MSALNativeAuthSignUpParameters`.
public struct NativeAuthSignUpParameters: Sendable, Equatable {
    /// The email address.
    public var username: String
    /// The password, when the app asks for it up front.
    public var password: String?
    /// Profile attributes by name.
    public var attributes: [String: JSONValue]

    /// Parameters for `username`.
    public init(username: String, password: String? = nil, attributes: [String: JSONValue] = [:]) {
        self.username = username
        self.password = password
        self.attributes = attributes
    }
}

/// The parameters of `NativeAuthClient.signIn(parameters:delegate:)`; MSAL's `MSALNativeAuthSignInParameters`.
public struct NativeAuthSignInParameters: Sendable, Equatable {
    /// The email address.
    public var username: String
    /// The password; nil to let the server choose (a code, or a password prompt).
    public var password: String?
    /// The scopes; the client's when nil.
    public var scopes: [String]?

    /// Parameters for `username`.
    public init(username: String, password: String? = nil, scopes: [String]? = nil) {
        self.username = username
        self.password = password
        self.scopes = scopes
    }
}

/// The parameters of `NativeAuthClient.resetPassword(parameters:delegate:)`; MSAL's `MSALNativeAuthResetPasswordParameters`.
public struct NativeAuthResetPasswordParameters: Sendable, Equatable {
    /// The email address.
    public var username: String

    /// Parameters for `username`.
    public init(username: String) { self.username = username }
}

/// MSAL's name for ``NativeAuthSignUpParameters``.
public typealias MSALNativeAuthSignUpParameters = NativeAuthSignUpParameters
/// MSAL's name for ``NativeAuthSignInParameters``.
public typealias MSALNativeAuthSignInParameters = NativeAuthSignInParameters
/// MSAL's name for ``NativeAuthResetPasswordParameters``.
public typealias MSALNativeAuthResetPasswordParameters = NativeAuthResetPasswordParameters
/// MSAL's name for `NativeAuthChannelType`.
public typealias MSALNativeAuthChannelType = NativeAuthChannelType
/// MSAL's name for `AttributeRequirement`.
public typealias MSALNativeAuthRequiredAttribute = AttributeRequirement

/// The error a delegate gets when the flow reached a step whose optional method it lacks.
func unhandled(_ what: String, method: String) -> AuthError {
    AuthError(.configuration, "The flow needs \(what), but the delegate does not implement \(method).")
}

// MARK: - Sign-up

/// Receives the outcome of `NativeAuthClient.signUp(parameters:delegate:)` on the main actor.
@MainActor
public protocol SignUpStartDelegate: AnyObject {
    /// The sign-up could not start.
    func onSignUpStartError(error: SignUpStartError)
    /// A code was sent to `sentTo`; submit it with `newState`.
    func onSignUpCodeRequired(newState: SignUpCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType, codeLength: Int)
    /// Optional: attributes sent at start were refused. Defaults to `onSignUpStartError(error:)`.
    func onSignUpAttributesInvalid(attributeNames: [String])
}

extension SignUpStartDelegate {
    /// Reports the refused attributes through `onSignUpStartError(error:)`.
    public func onSignUpAttributesInvalid(attributeNames: [String]) {
        var failure = AuthError(.invalidAttributes, "Some attributes are not valid: \(attributeNames.joined(separator: ", ")).",
                                oauthError: OAuthError(.invalidGrant, "Some attributes are not valid: \(attributeNames.joined(separator: ", ")).",
                                                       detail: nil))
        failure.suberror = "attribute_validation_failed"
        failure.invalidAttributes = attributeNames
        onSignUpStartError(error: SignUpStartError(failure))
    }
}

/// Receives the outcome of `SignUpCodeRequiredState.submitCode(code:delegate:)`.
@MainActor
public protocol SignUpVerifyCodeDelegate: AnyObject {
    /// The code was not accepted; `newState` (when not nil) takes another try.
    func onSignUpVerifyCodeError(error: VerifyCodeError, newState: SignUpCodeRequiredState?)
    /// Optional: attributes are needed next.
    func onSignUpAttributesRequired(attributes: [MSALNativeAuthRequiredAttribute], newState: SignUpAttributesRequiredState)
    /// Optional: a password is needed next.
    func onSignUpPasswordRequired(newState: SignUpPasswordRequiredState)
    /// The account exists; sign in with `newState`.
    func onSignUpCompleted(newState: SignInAfterSignUpState)
}

extension SignUpVerifyCodeDelegate {
    /// Reports the step through `onSignUpVerifyCodeError(error:newState:)`.
    public func onSignUpAttributesRequired(attributes: [MSALNativeAuthRequiredAttribute], newState: SignUpAttributesRequiredState) {
        onSignUpVerifyCodeError(error: VerifyCodeError(unhandled("attributes", method: "onSignUpAttributesRequired")), newState: nil)
    }
    /// Reports the step through `onSignUpVerifyCodeError(error:newState:)`.
    public func onSignUpPasswordRequired(newState: SignUpPasswordRequiredState) {
        onSignUpVerifyCodeError(error: VerifyCodeError(unhandled("a password", method: "onSignUpPasswordRequired")), newState: nil)
    }
}

/// Receives the outcome of `SignUpCodeRequiredState.resendCode(delegate:)`.
@MainActor
public protocol SignUpResendCodeDelegate: AnyObject {
    /// No code was sent; `newState` (when not nil) can ask again later.
    func onSignUpResendCodeError(error: ResendCodeError, newState: SignUpCodeRequiredState?)
    /// A new code was sent.
    func onSignUpResendCodeCodeRequired(newState: SignUpCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType,
                                        codeLength: Int)
}

/// Receives the outcome of `SignUpPasswordRequiredState.submitPassword(password:delegate:)`.
@MainActor
public protocol SignUpPasswordRequiredDelegate: AnyObject {
    /// The password was not accepted; `newState` (when not nil) takes another one.
    func onSignUpPasswordRequiredError(error: PasswordRequiredError, newState: SignUpPasswordRequiredState?)
    /// Optional: attributes are needed next.
    func onSignUpAttributesRequired(attributes: [MSALNativeAuthRequiredAttribute], newState: SignUpAttributesRequiredState)
    /// The account exists; sign in with `newState`.
    func onSignUpCompleted(newState: SignInAfterSignUpState)
}

extension SignUpPasswordRequiredDelegate {
    /// Reports the step through `onSignUpPasswordRequiredError(error:newState:)`.
    public func onSignUpAttributesRequired(attributes: [MSALNativeAuthRequiredAttribute], newState: SignUpAttributesRequiredState) {
        onSignUpPasswordRequiredError(error: PasswordRequiredError(unhandled("attributes", method: "onSignUpAttributesRequired")), newState: nil)
    }
}

/// Receives the outcome of `SignUpAttributesRequiredState.submitAttributes(attributes:delegate:)`.
@MainActor
public protocol SignUpAttributesRequiredDelegate: AnyObject {
    /// The attributes could not be sent.
    func onSignUpAttributesRequiredError(error: AttributesRequiredError)
    /// More attributes are needed.
    func onSignUpAttributesRequired(attributes: [MSALNativeAuthRequiredAttribute], newState: SignUpAttributesRequiredState)
    /// Values of these attributes were refused; send corrected ones with `newState`.
    func onSignUpAttributesInvalid(attributeNames: [String], newState: SignUpAttributesRequiredState)
    /// The account exists; sign in with `newState`.
    func onSignUpCompleted(newState: SignInAfterSignUpState)
}

/// Receives the outcome of `SignInAfterSignUpState.signIn(scopes:delegate:)`.
@MainActor
public protocol SignInAfterSignUpDelegate: AnyObject {
    /// No tokens.
    func onSignInAfterSignUpError(error: SignInAfterSignUpError)
    /// Signed in.
    func onSignInCompleted(result: AuthorizationResult)
    /// Optional: the first factor was right and a second is needed (`MFARequiredState`).
    func onSignInMFARequired(newState: MFARequiredState)
}

extension SignInAfterSignUpDelegate {
    /// Reports the step as an error: an app that turns on two-step verification implements it.
    public func onSignInMFARequired(newState: MFARequiredState) {
        onSignInAfterSignUpError(error: SignInAfterFlowError(unhandled("a second factor", method: "onSignInMFARequired")))
    }
}

// MARK: - Sign-in

/// Receives the outcome of `NativeAuthClient.signIn(parameters:delegate:)`.
@MainActor
public protocol SignInStartDelegate: AnyObject {
    /// The sign-in failed.
    func onSignInStartError(error: SignInStartError)
    /// Optional: a code was sent to `sentTo`.
    func onSignInCodeRequired(newState: SignInCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType, codeLength: Int)
    /// Optional: the account's password is needed.
    func onSignInPasswordRequired(newState: SignInPasswordRequiredState)
    /// Optional: signed in.
    func onSignInCompleted(result: AuthorizationResult)
    /// Optional: the first factor was right and a second is needed (`MFARequiredState`).
    func onSignInMFARequired(newState: MFARequiredState)
}

extension SignInStartDelegate {
    /// Reports the step as an error: an app that turns on two-step verification implements it.
    public func onSignInMFARequired(newState: MFARequiredState) {
        onSignInStartError(error: SignInStartError(unhandled("a second factor", method: "onSignInMFARequired")))
    }
}

extension SignInStartDelegate {
    /// Reports the step through `onSignInStartError(error:)`.
    public func onSignInCodeRequired(newState: SignInCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType,
                                     codeLength: Int) {
        onSignInStartError(error: SignInStartError(unhandled("a code", method: "onSignInCodeRequired")))
    }
    /// Reports the step through `onSignInStartError(error:)`.
    public func onSignInPasswordRequired(newState: SignInPasswordRequiredState) {
        onSignInStartError(error: SignInStartError(unhandled("a password", method: "onSignInPasswordRequired")))
    }
    /// Reports the step through `onSignInStartError(error:)`.
    public func onSignInCompleted(result: AuthorizationResult) {
        onSignInStartError(error: SignInStartError(unhandled("nothing more", method: "onSignInCompleted")))
    }
}

/// Receives the outcome of `SignInCodeRequiredState.submitCode(code:delegate:)`.
@MainActor
public protocol SignInVerifyCodeDelegate: AnyObject {
    /// The code was not accepted; `newState` (when not nil) takes another try.
    func onSignInVerifyCodeError(error: VerifyCodeError, newState: SignInCodeRequiredState?)
    /// Signed in.
    func onSignInCompleted(result: AuthorizationResult)
    /// Optional: the first factor was right and a second is needed (`MFARequiredState`).
    func onSignInMFARequired(newState: MFARequiredState)
}

extension SignInVerifyCodeDelegate {
    /// Reports the step as an error: an app that turns on two-step verification implements it.
    public func onSignInMFARequired(newState: MFARequiredState) {
        onSignInVerifyCodeError(error: VerifyCodeError(unhandled("a second factor", method: "onSignInMFARequired")), newState: nil)
    }
}

/// Receives the outcome of `SignInCodeRequiredState.resendCode(delegate:)`.
@MainActor
public protocol SignInResendCodeDelegate: AnyObject {
    /// No code was sent; `newState` (when not nil) can ask again later.
    func onSignInResendCodeError(error: ResendCodeError, newState: SignInCodeRequiredState?)
    /// A new code was sent.
    func onSignInResendCodeCodeRequired(newState: SignInCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType,
                                        codeLength: Int)
}

/// Receives the outcome of `SignInPasswordRequiredState.submitPassword(password:delegate:)`.
@MainActor
public protocol SignInPasswordRequiredDelegate: AnyObject {
    /// The password was not accepted; `newState` (when not nil) takes another one.
    func onSignInPasswordRequiredError(error: PasswordRequiredError, newState: SignInPasswordRequiredState?)
    /// Signed in.
    func onSignInCompleted(result: AuthorizationResult)
    /// Optional: the first factor was right and a second is needed (`MFARequiredState`).
    func onSignInMFARequired(newState: MFARequiredState)
}

extension SignInPasswordRequiredDelegate {
    /// Reports the step as an error: an app that turns on two-step verification implements it.
    public func onSignInMFARequired(newState: MFARequiredState) {
        onSignInPasswordRequiredError(error: PasswordRequiredError(unhandled("a second factor", method: "onSignInMFARequired")), newState: nil)
    }
}

// MARK: - Password reset

/// Receives the outcome of `NativeAuthClient.resetPassword(parameters:delegate:)`.
@MainActor
public protocol ResetPasswordStartDelegate: AnyObject {
    /// The reset could not start.
    func onResetPasswordStartError(error: ResetPasswordStartError)
    /// A code was sent to `sentTo`.
    func onResetPasswordCodeRequired(newState: ResetPasswordCodeRequiredState, sentTo: String, channelTargetType: MSALNativeAuthChannelType,
                                     codeLength: Int)
}

/// Receives the outcome of `ResetPasswordCodeRequiredState.submitCode(code:delegate:)`.
@MainActor
public protocol ResetPasswordVerifyCodeDelegate: AnyObject {
    /// The code was not accepted; `newState` (when not nil) takes another try.
    func onResetPasswordVerifyCodeError(error: VerifyCodeError, newState: ResetPasswordCodeRequiredState?)
    /// The code was right: ask for the new password.
    func onPasswordRequired(newState: ResetPasswordRequiredState)
}

/// Receives the outcome of `ResetPasswordCodeRequiredState.resendCode(delegate:)`.
@MainActor
public protocol ResetPasswordResendCodeDelegate: AnyObject {
    /// No code was sent; `newState` (when not nil) can ask again later.
    func onResetPasswordResendCodeError(error: ResendCodeError, newState: ResetPasswordCodeRequiredState?)
    /// A new code was sent.
    func onResetPasswordResendCodeRequired(newState: ResetPasswordCodeRequiredState, sentTo: String,
                                           channelTargetType: MSALNativeAuthChannelType, codeLength: Int)
}

/// Receives the outcome of `ResetPasswordRequiredState.submitPassword(password:delegate:)`.
@MainActor
public protocol ResetPasswordRequiredDelegate: AnyObject {
    /// The password was not changed; `newState` (when not nil) takes another one.
    func onResetPasswordRequiredError(error: PasswordRequiredError, newState: ResetPasswordRequiredState?)
    /// The password is changed; sign in with `newState`.
    func onResetPasswordCompleted(newState: SignInAfterResetPasswordState)
}

/// Receives the outcome of `SignInAfterResetPasswordState.signIn(scopes:delegate:)`.
@MainActor
public protocol SignInAfterResetPasswordDelegate: AnyObject {
    /// No tokens.
    func onSignInAfterResetPasswordError(error: SignInAfterResetPasswordError)
    /// Signed in.
    func onSignInCompleted(result: AuthorizationResult)
    /// Optional: the first factor was right and a second is needed (`MFARequiredState`).
    func onSignInMFARequired(newState: MFARequiredState)
}

extension SignInAfterResetPasswordDelegate {
    /// Reports the step as an error: an app that turns on two-step verification implements it.
    public func onSignInMFARequired(newState: MFARequiredState) {
        onSignInAfterResetPasswordError(error: SignInAfterFlowError(unhandled("a second factor", method: "onSignInMFARequired")))
    }
}

// MARK: - Entry points

extension NativeAuthClient {
    /// MSAL's `signUp(parameters:delegate:)`: `signUp(username:password:attributes:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func signUp(parameters: NativeAuthSignUpParameters, delegate: any SignUpStartDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.signUp(username: parameters.username, password: parameters.password, attributes: parameters.attributes) {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onSignUpCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .error(let error) where error.code == .invalidAttributes:
                delegate.onSignUpAttributesInvalid(attributeNames: error.invalidAttributes)
            case .error(let error):
                delegate.onSignUpStartError(error: SignUpStartError(error))
            case .attributesRequired, .passwordRequired, .completed:
                delegate.onSignUpStartError(error: SignUpStartError(unhandled("a step other than a code", method: "SignUpStartDelegate")))
            }
        }
    }

    /// MSAL's `signIn(parameters:delegate:)`: `signIn(username:password:scopes:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func signIn(parameters: NativeAuthSignInParameters, delegate: any SignInStartDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.signIn(username: parameters.username, password: parameters.password, scopes: parameters.scopes) {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onSignInCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .passwordRequired(let state): delegate.onSignInPasswordRequired(newState: state)
            case .completed(let result): delegate.onSignInCompleted(result: result)
            case .mfaRequired(let state): delegate.onSignInMFARequired(newState: state)
            case .error(let error): delegate.onSignInStartError(error: SignInStartError(error))
            }
        }
    }

    /// MSAL's `resetPassword(parameters:delegate:)`: `resetPassword(username:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func resetPassword(parameters: NativeAuthResetPasswordParameters, delegate: any ResetPasswordStartDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.resetPassword(username: parameters.username) {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onResetPasswordCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .error(let error): delegate.onResetPasswordStartError(error: ResetPasswordStartError(error))
            }
        }
    }
}

extension SignUpCodeRequiredState {
    /// MSAL's `submitCode(code:delegate:)`: `submitCode(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitCode(code: String, delegate: any SignUpVerifyCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitCode(code) {
            case .completed(let state): delegate.onSignUpCompleted(newState: state)
            case .attributesRequired(let state, let attributes): delegate.onSignUpAttributesRequired(attributes: attributes, newState: state)
            case .passwordRequired(let state): delegate.onSignUpPasswordRequired(newState: state)
            case .error(let error, let state): delegate.onSignUpVerifyCodeError(error: VerifyCodeError(error), newState: state)
            }
        }
    }

    /// MSAL's `resendCode(delegate:)`: `resendCode()` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func resendCode(delegate: any SignUpResendCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.resendCode() {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onSignUpResendCodeCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .error(let error, let state): delegate.onSignUpResendCodeError(error: ResendCodeError(error), newState: state)
            }
        }
    }
}

extension SignUpPasswordRequiredState {
    /// MSAL's `submitPassword(password:delegate:)`: `submitPassword(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitPassword(password: String, delegate: any SignUpPasswordRequiredDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitPassword(password) {
            case .completed(let state): delegate.onSignUpCompleted(newState: state)
            case .attributesRequired(let state, let attributes): delegate.onSignUpAttributesRequired(attributes: attributes, newState: state)
            case .error(let error, let state): delegate.onSignUpPasswordRequiredError(error: PasswordRequiredError(error), newState: state)
            }
        }
    }
}

extension SignUpAttributesRequiredState {
    /// MSAL's `submitAttributes(attributes:delegate:)`: `submitAttributes(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitAttributes(attributes: [String: JSONValue], delegate: any SignUpAttributesRequiredDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitAttributes(attributes) {
            case .completed(let state): delegate.onSignUpCompleted(newState: state)
            case .attributesRequired(let state, let attributes): delegate.onSignUpAttributesRequired(attributes: attributes, newState: state)
            case .attributesInvalid(let state, let names): delegate.onSignUpAttributesInvalid(attributeNames: names, newState: state)
            case .error(let error, _): delegate.onSignUpAttributesRequiredError(error: AttributesRequiredError(error))
            }
        }
    }
}

extension SignInAfterSignUpState {
    /// MSAL's `signIn(delegate:)`: `signIn(scopes:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func signIn(scopes: [String]? = nil, delegate: any SignInAfterSignUpDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.signIn(scopes: scopes) {
            case .completed(let result): delegate.onSignInCompleted(result: result)
            case .mfaRequired(let state): delegate.onSignInMFARequired(newState: state)
            case .error(let error): delegate.onSignInAfterSignUpError(error: SignInAfterFlowError(error))
            }
        }
    }
}

extension SignInCodeRequiredState {
    /// MSAL's `submitCode(code:delegate:)`: `submitCode(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitCode(code: String, delegate: any SignInVerifyCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitCode(code) {
            case .completed(let result): delegate.onSignInCompleted(result: result)
            case .mfaRequired(let state): delegate.onSignInMFARequired(newState: state)
            case .error(let error, let state): delegate.onSignInVerifyCodeError(error: VerifyCodeError(error), newState: state)
            }
        }
    }

    /// MSAL's `resendCode(delegate:)`: `resendCode()` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func resendCode(delegate: any SignInResendCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.resendCode() {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onSignInResendCodeCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .error(let error, let state): delegate.onSignInResendCodeError(error: ResendCodeError(error), newState: state)
            }
        }
    }
}

extension SignInPasswordRequiredState {
    /// MSAL's `submitPassword(password:delegate:)`: `submitPassword(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitPassword(password: String, delegate: any SignInPasswordRequiredDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitPassword(password) {
            case .completed(let result): delegate.onSignInCompleted(result: result)
            case .mfaRequired(let state): delegate.onSignInMFARequired(newState: state)
            case .error(let error, let state): delegate.onSignInPasswordRequiredError(error: PasswordRequiredError(error), newState: state)
            }
        }
    }
}

extension ResetPasswordCodeRequiredState {
    /// MSAL's `submitCode(code:delegate:)`: `submitCode(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitCode(code: String, delegate: any ResetPasswordVerifyCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitCode(code) {
            case .passwordRequired(let state): delegate.onPasswordRequired(newState: state)
            case .error(let error, let state): delegate.onResetPasswordVerifyCodeError(error: VerifyCodeError(error), newState: state)
            }
        }
    }

    /// MSAL's `resendCode(delegate:)`: `resendCode()` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func resendCode(delegate: any ResetPasswordResendCodeDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.resendCode() {
            case .codeRequired(let state, let sentTo, let channel, let codeLength):
                delegate.onResetPasswordResendCodeRequired(newState: state, sentTo: sentTo, channelTargetType: channel, codeLength: codeLength)
            case .error(let error, let state): delegate.onResetPasswordResendCodeError(error: ResendCodeError(error), newState: state)
            }
        }
    }
}

extension ResetPasswordRequiredState {
    /// MSAL's `submitPassword(password:delegate:)`: `submitPassword(_:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func submitPassword(password: String, delegate: any ResetPasswordRequiredDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.submitPassword(password) {
            case .completed(let state): delegate.onResetPasswordCompleted(newState: state)
            case .error(let error, let state): delegate.onResetPasswordRequiredError(error: PasswordRequiredError(error), newState: state)
            }
        }
    }
}

extension SignInAfterResetPasswordState {
    /// MSAL's `signIn(delegate:)`: `signIn(scopes:)` reported to `delegate` on the main actor.
    @MainActor @discardableResult
    public func signIn(scopes: [String]? = nil, delegate: any SignInAfterResetPasswordDelegate) -> Task<Void, Never> {
        Task { @MainActor in
            switch await self.signIn(scopes: scopes) {
            case .completed(let result): delegate.onSignInCompleted(result: result)
            case .mfaRequired(let state): delegate.onSignInMFARequired(newState: state)
            case .error(let error): delegate.onSignInAfterResetPasswordError(error: SignInAfterFlowError(error))
            }
        }
    }
}
