import Foundation
import TesseraCore

// The sign-up flow (reference API §1): start → challenge (code) → continue with the code,
// then a password and attributes when the server still needs them → sign-in with the
// continuation token. Every state value takes one call; its result carries the next state.

/// What ``NativeAuthClient/signUp(username:password:attributes:)`` led to.
public enum SignUpStartResult: Sendable {
    /// A code was sent to verify the address: `sentTo` is the masked address, `codeLength` its digits.
    case codeRequired(SignUpCodeRequiredState, sentTo: String, channel: NativeAuthChannelType, codeLength: Int)
    /// The server needs these attributes before it creates the account.
    case attributesRequired(SignUpAttributesRequiredState, attributes: [AttributeRequirement])
    /// The server needs a password before it creates the account.
    case passwordRequired(SignUpPasswordRequiredState)
    /// The account exists; sign the user in with the state.
    case completed(SignInAfterSignUpState)
    /// The sign-up could not start.
    case error(AuthError)

    init(_ next: SignUpNext) {
        switch next {
        case .codeRequired(let state, let code): self = .codeRequired(state, sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
        case .attributesRequired(let state, let attributes): self = .attributesRequired(state, attributes: attributes)
        case .passwordRequired(let state): self = .passwordRequired(state)
        case .completed(let state): self = .completed(state)
        }
    }
}

/// What ``SignUpCodeRequiredState/submitCode(_:)`` led to.
public enum SignUpVerifyCodeResult: Sendable {
    /// The account exists; sign the user in with the state.
    case completed(SignInAfterSignUpState)
    /// The address is verified; the server needs these attributes next.
    case attributesRequired(SignUpAttributesRequiredState, attributes: [AttributeRequirement])
    /// The address is verified; the server needs a password next.
    case passwordRequired(SignUpPasswordRequiredState)
    /// The code was not accepted; with a wrong code (``AuthError/Code/invalidCode``)
    /// `newState` takes another code or a resend.
    case error(AuthError, newState: SignUpCodeRequiredState?)
}

/// What ``SignUpPasswordRequiredState/submitPassword(_:)`` led to.
public enum SignUpPasswordResult: Sendable {
    /// The account exists; sign the user in with the state.
    case completed(SignInAfterSignUpState)
    /// The server needs these attributes next.
    case attributesRequired(SignUpAttributesRequiredState, attributes: [AttributeRequirement])
    /// The password was not accepted; with a policy error `newState` takes another one.
    case error(AuthError, newState: SignUpPasswordRequiredState?)
}

/// What ``SignUpAttributesRequiredState/submitAttributes(_:)`` led to.
public enum SignUpAttributesResult: Sendable {
    /// The account exists; sign the user in with the state.
    case completed(SignInAfterSignUpState)
    /// The server needs these attributes too (the next page of them).
    case attributesRequired(SignUpAttributesRequiredState, attributes: [AttributeRequirement])
    /// Values of these attributes were refused; `newState` takes corrected ones.
    case attributesInvalid(SignUpAttributesRequiredState, attributeNames: [String])
    /// The attributes could not be sent.
    case error(AuthError, newState: SignUpAttributesRequiredState?)
}

/// What a `resendCode()` led to.
public enum ResendCodeResult<State: Sendable>: Sendable {
    /// A new code was sent; the previous one no longer works.
    case codeRequired(State, sentTo: String, channel: NativeAuthChannelType, codeLength: Int)
    /// No code was sent; after `slow_down` (``AuthError/retryAfter``) `newState` can ask again.
    case error(AuthError, newState: State?)
}

/// The sign-up waits for the code sent to the address.
public final class SignUpCodeRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address being signed up.
    public var username: String { context.username }

    /// Sends the code the user typed (`/signup/v1.0/continue`, `grant_type=oob`).
    public func submitCode(_ code: String) async -> SignUpVerifyCodeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            switch try await context.client.signUpContinue(continuationToken, [("grant_type", "oob"), ("oob", code)], context: context) {
            case .completed(let state): return .completed(state)
            case .attributesRequired(let state, let attributes): return .attributesRequired(state, attributes: attributes)
            case .passwordRequired(let state): return .passwordRequired(state)
            case .codeRequired: throw AuthError.invalidResponse("the server asked for another code after a correct one")
            }
        } catch {
            let failure = AuthError(error)
            return .error(failure, newState: failure.keepsFlow ? SignUpCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }

    /// Asks for a new code (`/signup/v1.0/challenge` again).
    public func resendCode() async -> ResendCodeResult<SignUpCodeRequiredState> {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            guard case .codeRequired(let state, let code) = try await context.client.signUpChallenge(continuationToken, context: context) else {
                throw AuthError.invalidResponse("the server answered a resend without a code")
            }
            return .codeRequired(state, sentTo: code.sentTo, channel: code.channel, codeLength: code.codeLength)
        } catch {
            let failure = AuthError(error)
            return .error(failure, newState: failure.keepsFlow ? SignUpCodeRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}

/// The sign-up waits for the account's password.
public final class SignUpPasswordRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address being signed up.
    public var username: String { context.username }

    /// Sends the password (`/signup/v1.0/continue`, `grant_type=password`).
    public func submitPassword(_ password: String) async -> SignUpPasswordResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            switch try await context.client.signUpContinue(continuationToken, [("grant_type", "password"), ("password", password)],
                                                           context: context) {
            case .completed(let state): return .completed(state)
            case .attributesRequired(let state, let attributes): return .attributesRequired(state, attributes: attributes)
            case .passwordRequired, .codeRequired: throw AuthError.invalidResponse("the server asked for the password again")
            }
        } catch {
            let failure = AuthError(error)
            return .error(failure,
                          newState: failure.keepsFlow ? SignUpPasswordRequiredState(context: context, continuationToken: continuationToken) : nil)
        }
    }
}

/// The sign-up waits for profile attributes.
public final class SignUpAttributesRequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address being signed up.
    public var username: String { context.username }

    /// Sends attributes by name (`/signup/v1.0/continue`, `grant_type=attributes`).
    public func submitAttributes(_ attributes: [String: JSONValue]) async -> SignUpAttributesResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            switch try await context.client.signUpContinue(continuationToken, [("grant_type", "attributes"),
                                                                               ("attributes", NativeAuthClient.encode(attributes))],
                                                           context: context) {
            case .completed(let state): return .completed(state)
            case .attributesRequired(let state, let attributes): return .attributesRequired(state, attributes: attributes)
            case .passwordRequired, .codeRequired: throw AuthError.invalidResponse("the server asked for a code or password after attributes")
            }
        } catch {
            let failure = AuthError(error)
            let retry = SignUpAttributesRequiredState(context: context, continuationToken: continuationToken)
            if failure.code == .invalidAttributes { return .attributesInvalid(retry, attributeNames: failure.invalidAttributes) }
            return .error(failure, newState: failure.keepsFlow ? retry : nil)
        }
    }
}

/// What signing in after a sign-up or password reset led to.
public enum SignInAfterFlowResult: Sendable {
    /// Signed in: validated tokens and the user.
    case completed(AuthorizationResult)
    /// A second factor is needed first (the person has two-step verification; docs/two-step.md).
    case mfaRequired(MFARequiredState)
    /// No tokens.
    case error(AuthError)
}

/// The account was created: the continuation token signs the user in without asking again.
public final class SignInAfterSignUpState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address signed up.
    public var username: String { context.username }

    /// Gets tokens for the new account (`/oauth2/v2.0/token`, `grant_type=continuation_token`)
    /// and validates the ID token.
    ///
    /// - Parameter scopes: what to ask for; the sign-up's scopes when nil. `openid` is always asked for.
    public func signIn(scopes: [String]? = nil) async -> SignInAfterFlowResult {
        await signInAfterFlow(context: context, token: continuationToken, step: step, scopes: scopes)
    }
}

/// `grant_type=continuation_token` after a sign-up or reset.
func signInAfterFlow(context: FlowContext, token: String, step: SingleUse, scopes: [String]?) async -> SignInAfterFlowResult {
    guard step.take() else { return .error(.alreadyUsed) }
    let context = FlowContext(client: context.client, username: context.username, scopes: scopes ?? context.scopes)
    do {
        return .completed(try await context.client.token(grant: "continuation_token", continuationToken: token,
                                                         extra: [("username", context.username)], context: context))
    } catch {
        let failure = AuthError(error)
        if let next = failure.mfaRequired(context) { return .mfaRequired(next) }
        return .error(failure)
    }
}
