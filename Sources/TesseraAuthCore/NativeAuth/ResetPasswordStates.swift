import Foundation
import TesseraCore

// The password reset (reference API §3): start → challenge (code) → continue with the code →
// submit the new password → poll_completion → sign-in with the continuation token.

/// What ``NativeAuthClient/resetPassword(username:)`` led to.
public enum ResetPasswordStartResult: Sendable {
    /// A code was sent to the address: `sentTo` is the masked address, `codeLength` its digits.
    case codeRequired(ResetPasswordCodeRequiredState, sentTo: String, channel: NativeAuthChannelType, codeLength: Int)
    /// The reset could not start.
    case error(AuthError)
}

/// What ``ResetPasswordCodeRequiredState/submitCode(_:)`` led to.
public enum ResetPasswordVerifyCodeResult: Sendable {
    /// The code was right: ask for the new password.
    case passwordRequired(ResetPasswordRequiredState)
    /// The code was not accepted; with a wrong code `newState` takes another one or a resend.
    case error(AuthError, newState: ResetPasswordCodeRequiredState?)
}

/// What ``ResetPasswordRequiredState/submitPassword(_:)`` led to.
public enum ResetPasswordResult: Sendable {
    /// The password is changed (every other session of the user ended); sign in with the state.
    case completed(SignInAfterResetPasswordState)
    /// The password was not changed; after a policy error or `password_change_failed`,
    /// `newState` takes another one.
    case error(AuthError, newState: ResetPasswordRequiredState?)
}

/// The reset waits for the code sent to the address.
public final class ResetPasswordCodeRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address whose password is reset.
    public var username: String { context.username }

    /// Sends the code the user typed (`/resetpassword/v1.0/continue`).
    public func submitCode(_ code: String) async -> ResetPasswordVerifyCodeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            let answer = try await context.client.post(.resetContinue, [("continuation_token", continuationToken), ("grant_type", "oob"),
                                                                        ("oob", code)])
            return .passwordRequired(ResetPasswordRequiredState(context: context, continuationToken: try answer.continuationToken()))
        } catch {
            let failure = AuthError(error)
            return .error(failure,
                          newState: failure.keepsFlow ? ResetPasswordCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }

    /// Asks for a new code (`/resetpassword/v1.0/challenge` again).
    public func resendCode() async -> ResendCodeResult<ResetPasswordCodeRequiredState> {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            let code = try await context.client.resetChallenge(continuationToken)
            return .codeRequired(ResetPasswordCodeRequiredState(context: context, continuationToken: code.continuationToken),
                                 sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
        } catch {
            let failure = AuthError(error)
            return .error(failure,
                          newState: failure.keepsFlow ? ResetPasswordCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}

/// The reset waits for the new password.
public final class ResetPasswordRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address whose password is reset.
    public var username: String { context.username }

    /// Sets the new password (`/resetpassword/v1.0/submit`), then waits for the reset to
    /// complete (`poll_completion`, every `poll_interval` seconds, at most
    /// ``NativeAuthClient/Configuration/passwordResetTimeout``).
    public func submitPassword(_ password: String) async -> ResetPasswordResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            return try await context.client.submitNewPassword(continuationToken, password: password, context: context)
        } catch {
            let failure = AuthError(error)
            return .error(failure,
                          newState: failure.keepsFlow ? ResetPasswordRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}

/// The password was reset: the continuation token signs the user in without asking again.
public final class SignInAfterResetPasswordState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address whose password was reset.
    public var username: String { context.username }

    /// Gets tokens (`/oauth2/v2.0/token`, `grant_type=continuation_token`) and validates the ID token.
    ///
    /// - Parameter scopes: what to ask for; the client's scopes when nil. `openid` is always asked for.
    public func signIn(scopes: [String]? = nil) async -> SignInAfterFlowResult {
        await signInAfterFlow(context: context, token: continuationToken, step: step, scopes: scopes)
    }
}
