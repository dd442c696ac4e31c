import Foundation
import TesseraCore

// The sign-in flow (reference API §2): initiate → challenge (password or code) → token.

/// What ``NativeAuthClient/signIn(username:password:scopes:)`` led to.
public enum SignInStartResult: Sendable {
    /// A code was sent to the address: `sentTo` is the masked address, `codeLength` its digits.
    case codeRequired(SignInCodeRequiredState, sentTo: String, channel: NativeAuthChannelType, codeLength: Int)
    /// The account has a password and the app was given none: ask for it.
    case passwordRequired(SignInPasswordRequiredState)
    /// Signed in: validated tokens and the user.
    case completed(AuthorizationResult)
    /// The password was right and a second factor is needed (docs/two-step.md).
    case mfaRequired(MFARequiredState)
    /// The sign-in failed.
    case error(AuthError)
}

/// What ``SignInCodeRequiredState/submitCode(_:)`` led to.
public enum SignInVerifyCodeResult: Sendable {
    /// Signed in: validated tokens and the user.
    case completed(AuthorizationResult)
    /// The code was right and a second factor is needed (docs/two-step.md).
    case mfaRequired(MFARequiredState)
    /// The code was not accepted; with a wrong code `newState` takes another one or a resend.
    case error(AuthError, newState: SignInCodeRequiredState?)
}

/// What ``SignInPasswordRequiredState/submitPassword(_:)`` led to.
public enum SignInPasswordResult: Sendable {
    /// Signed in: validated tokens and the user.
    case completed(AuthorizationResult)
    /// The password was right and a second factor is needed (docs/two-step.md).
    case mfaRequired(MFARequiredState)
    /// The password was not accepted; with a wrong password `newState` takes another one.
    case error(AuthError, newState: SignInPasswordRequiredState?)
}

/// The sign-in waits for the code sent to the address.
public final class SignInCodeRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address signing in.
    public var username: String { context.username }

    /// Sends the code the user typed (`/oauth2/v2.0/token`, `grant_type=oob`).
    public func submitCode(_ code: String) async -> SignInVerifyCodeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            return .completed(try await context.client.token(grant: "oob", continuationToken: continuationToken,
                                                             extra: [("oob", code)], context: context))
        } catch {
            let failure = AuthError(error)
            if let next = failure.mfaRequired(context) { return .mfaRequired(next) }
            return .error(failure,
                          newState: failure.keepsFlow ? SignInCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }

    /// Asks for a new code (`/oauth2/v2.0/challenge` again); the previous code stops working.
    public func resendCode() async -> ResendCodeResult<SignInCodeRequiredState> {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        let client = context.client
        do {
            let answer = try await client.post(.signInChallenge, [("continuation_token", continuationToken),
                                                                  ("challenge_type", client.challengeTypeList([.oob]))])
            guard answer.challengeType == "oob" else {
                throw AuthError.invalidResponse("the server answered a resend with challenge_type '\(answer.challengeType ?? "")'")
            }
            let code = try CodeSent(answer)
            return .codeRequired(SignInCodeRequiredState(context: context, continuationToken: code.continuationToken),
                                 sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
        } catch {
            let failure = AuthError(error)
            return .error(failure,
                          newState: failure.keepsFlow ? SignInCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}

/// The sign-in waits for the account's password.
public final class SignInPasswordRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address signing in.
    public var username: String { context.username }

    /// Sends the password (`/oauth2/v2.0/token`, `grant_type=password`).
    public func submitPassword(_ password: String) async -> SignInPasswordResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            return .completed(try await context.client.token(grant: "password", continuationToken: continuationToken,
                                                             extra: [("password", password)], context: context))
        } catch {
            let failure = AuthError(error)
            if let next = failure.mfaRequired(context) { return .mfaRequired(next) }
            return .error(failure,
                          newState: failure.keepsFlow ? SignInPasswordRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}
