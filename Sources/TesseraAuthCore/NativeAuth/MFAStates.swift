import Foundation
import TesseraCore

// A second factor after the first (the server's `mfa_required`, docs/native-auth.md): the
// person has two-step verification, or the app requires it. As MSAL's native auth names it:
// an `MFARequiredState` lists the methods (`getAuthMethods`), chooses one
// (`requestChallenge`) and takes its code (`submitChallenge`); an `AwaitingMFAState` takes
// the code of the method chosen.

/// A second factor the person can give (MSAL's `MSALAuthMethod`): the authenticator app's
/// code, or a recovery code.
public struct AuthMethod: Sendable, Equatable, Hashable {
    /// What ``MFARequiredState/requestChallenge(authMethod:)`` sends (`authenticator_app`, `recovery_code`).
    public let id: String
    /// `oob`: the person types a code.
    public let challengeType: String
    /// What the app may show for it ("Authenticator app").
    public let loginHint: String
    /// Where the code is: ``NativeAuthChannelType/authenticatorApp`` or ``NativeAuthChannelType/recoveryCode``.
    public let channelTargetType: NativeAuthChannelType

    /// A method as `/oauth2/v2.0/introspect` lists it (tests and previews make their own).
    public init(id: String, challengeType: String = "oob", loginHint: String, channelTargetType: NativeAuthChannelType) {
        self.id = id
        self.challengeType = challengeType
        self.loginHint = loginHint
        self.channelTargetType = channelTargetType
    }

    /// The authenticator app's 6-digit code.
    public static let authenticatorApp = AuthMethod(id: "authenticator_app", loginHint: "Authenticator app", channelTargetType: .authenticatorApp)
    /// One of the person's recovery codes.
    public static let recoveryCode = AuthMethod(id: "recovery_code", loginHint: "Recovery code", channelTargetType: .recoveryCode)
}

extension NativeAuthChannelType {
    /// The code is in the person's authenticator app.
    public static let authenticatorApp = NativeAuthChannelType(rawValue: "authenticator_app")
    /// The code is one of the person's recovery codes.
    public static let recoveryCode = NativeAuthChannelType(rawValue: "recovery_code")
}

/// What ``MFARequiredState/getAuthMethods()`` led to.
public enum MFAGetAuthMethodsResult: Sendable {
    /// The methods to choose from, and the state that chooses (or takes a code right away).
    case selectionRequired([AuthMethod], newState: MFARequiredState)
    /// The server refused or could not be reached; `newState`, when there is one, tries again.
    case error(AuthError, newState: MFARequiredState?)
}

/// What ``MFARequiredState/requestChallenge(authMethod:)`` led to.
public enum MFARequestChallengeResult: Sendable {
    /// The chosen method's code is next: `codeLength` characters, from `channel`.
    case verificationRequired(AwaitingMFAState, channel: NativeAuthChannelType, codeLength: Int)
    /// The server refused or could not be reached; `newState`, when there is one, tries again.
    case error(AuthError, newState: MFARequiredState?)
}

/// What `submitChallenge` led to.
public enum MFASubmitChallengeResult: Sendable {
    /// Signed in with both factors (the ID token's `amr` has `mfa`).
    case completed(AuthorizationResult)
    /// The code was not accepted; with a wrong code `newState` takes another one.
    case error(AuthError, newState: AwaitingMFAState?)
}

/// The first factor was right and a second is needed (the server's `mfa_required`).
public final class MFARequiredState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address signing in.
    public var username: String { context.username }

    /// The second factors the person can give (`/oauth2/v2.0/introspect`).
    public func getAuthMethods() async -> MFAGetAuthMethodsResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            let answer = try await context.client.post(.signInIntrospect, [("continuation_token", continuationToken)])
            let methods = (answer.answer.methods ?? []).map {
                AuthMethod(id: $0.id, challengeType: $0.challengeType, loginHint: $0.loginHint,
                           channelTargetType: NativeAuthChannelType(rawValue: $0.challengeChannel))
            }
            guard !methods.isEmpty else { throw AuthError.invalidResponse("introspect listed no second factor") }
            return .selectionRequired(methods, newState: MFARequiredState(context: context, continuationToken: try answer.continuationToken()))
        } catch {
            return .error(AuthError(error), newState: nil)
        }
    }

    /// Chooses `authMethod` (`/oauth2/v2.0/challenge` with its `id`): its code is next.
    public func requestChallenge(authMethod: AuthMethod) async -> MFARequestChallengeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        do {
            let answer = try await context.client.post(.signInChallenge, [("continuation_token", continuationToken), ("id", authMethod.id)])
            guard answer.challengeType == "oob" else {
                throw AuthError.invalidResponse("the second factor's challenge answered challenge_type '\(answer.challengeType ?? "")'")
            }
            return .verificationRequired(AwaitingMFAState(context: context, continuationToken: try answer.continuationToken()),
                                         channel: NativeAuthChannelType(rawValue: answer.answer.challengeChannel ?? authMethod.id),
                                         codeLength: answer.answer.codeLength ?? -1)
        } catch {
            return .error(AuthError(error), newState: nil)
        }
    }

    /// Sends a code without choosing first: the app's code or a recovery code (`grant_type=mfa_oob`).
    public func submitChallenge(_ code: String) async -> MFASubmitChallengeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        return await submitSecondFactor(code, context: context, continuationToken: continuationToken)
    }
}

/// The second factor's code is next.
public final class AwaitingMFAState: Sendable {
    let context: FlowContext
    let continuationToken: String
    let step = SingleUse()

    init(context: FlowContext, continuationToken: String) {
        self.context = context
        self.continuationToken = continuationToken
    }

    /// The address signing in.
    public var username: String { context.username }

    /// Sends the code the person typed (`/oauth2/v2.0/token`, `grant_type=mfa_oob`).
    public func submitChallenge(_ code: String) async -> MFASubmitChallengeResult {
        guard step.take() else { return .error(.alreadyUsed, newState: nil) }
        return await submitSecondFactor(code, context: context, continuationToken: continuationToken)
    }
}

func submitSecondFactor(_ code: String, context: FlowContext, continuationToken: String) async -> MFASubmitChallengeResult {
    do {
        return .completed(try await context.client.token(grant: "mfa_oob", continuationToken: continuationToken,
                                                         extra: [("oob", code)], context: context))
    } catch {
        let failure = AuthError(error)
        return .error(failure,
                      newState: failure.keepsFlow ? AwaitingMFAState(context: context, continuationToken: continuationToken) : nil)
    }
}

extension AuthError {
    /// The first factor was right and a second is needed: the state that goes on, else nil.
    func mfaRequired(_ context: FlowContext) -> MFARequiredState? {
        guard serverError == "invalid_grant", suberror == "mfa_required", let token = continuationToken else { return nil }
        return MFARequiredState(context: context, continuationToken: token)
    }
}

extension NativeAuthClient {
    /// The second factor a refused sign-in asks for — `mfa_required` after
    /// ``signInWithApple(_:provider:scopes:linkingTo:)`` for a person with two-step
    /// verification — as the state that gives it; nil for another error.
    public func mfaRequired(by error: any Error, username: String = "", scopes: [String]? = nil) -> MFARequiredState? {
        AuthError(error).mfaRequired(FlowContext(client: self, username: username, scopes: scopes ?? configuration.scopes))
    }
}
