import TesseraCore

/// A sign-up, sign-in or password reset between two of its steps.
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
        /// Sign-in: the first factor was right, and a second is needed (`amr` has the first's methods).
        case secondFactorRequired = "second_factor"
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
    /// What the app can show, as it said when the flow started (``Challenge`` raw values).
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

/// What the app (or page) running a flow can ask the user for: a one-time code, a password,
/// or neither, so the flow must go on in the browser (the native API's `challenge_type`).
package enum Challenge: String, Sendable, CaseIterable {
    case oob, password, redirect
}

/// Who runs a step: the client, from which address, in which language (for mail).
package struct FlowCaller: Sendable {
    package var client: Client
    package var address: String
    package var language: PageLanguage

    package init(client: Client, address: String, language: PageLanguage) {
        self.client = client
        self.address = address
        self.language = language
    }
}

/// Where a step left the flow: what the app shows next, with the continuation token that
/// goes with it. The native API and the pages each present these in their own way.
package enum FlowStep: Sendable, Equatable {
    /// The flow started; its first challenge is next.
    case started(token: String)
    /// Nothing the app said it can show will do: the flow goes on in the browser.
    case browserRequired
    /// A code went to the address (or, to tell nothing about the account, seemed to).
    case codeSent(token: String, CodeSent)
    /// The user's password is next.
    case passwordRequested(token: String)
    /// Sign-up: the address is proven, and a password must be chosen.
    case passwordRequired(token: String)
    /// Sign-up: these attributes (one page of them) are still required.
    case attributesRequired(token: String, [SignUpAttribute])
    /// The code was right; the flow's next step (a reset's new password) has `expiresIn` seconds.
    case verified(token: String, expiresIn: Int64)
    /// The account exists (sign-up) or the password is reset: `token` signs the user in.
    case completed(token: String, expiresIn: Int64)
    /// Sign-in: the second factors the person can give here, for the app to choose from.
    case secondFactorMethods(token: String, [SecondFactorMethod])
    /// Sign-in: the code of this second factor is next.
    case secondFactorChallenge(token: String, SecondFactorMethod)
    /// A reset submitted: ask whether it is done every `pollInterval` seconds.
    case resetSubmitted(token: String, pollInterval: Int64)
    /// The reset is done: `token` signs the user in.
    case resetSucceeded(token: String)
}

/// A second factor an app can ask for without a browser: the authenticator app's code, or a
/// recovery code (Entra's strong-authentication methods, `/oauth2/v2.0/introspect`).
package enum SecondFactorMethod: String, Sendable, CaseIterable {
    case authenticatorApp = "authenticator_app"
    case recoveryCode = "recovery_code"

    /// The code's length as the person types it.
    package var codeLength: Int { self == .authenticatorApp ? 6 : 11 }
}

/// Where a one-time code went, as the user may be shown it.
package struct CodeSent: Sendable, Equatable {
    /// The address, masked (`a***e@e*****e.com`).
    package var target: String
    package var codeLength: Int
    /// Seconds before another code may be sent.
    package var resendInterval: Int64
}

/// Why a step of a sign-up, sign-in or password reset did not go on. The flows throw these,
/// never a wire error: the native API words them as Microsoft Entra does, the pages in the
/// user's language. A failed step changes nothing, except the count of wrong codes.
package enum FlowFailure: Error, Sendable, Equatable {
    /// A parameter the step needs is missing (the grants read them from the request).
    case missingParameter(String)
    /// The given address is not an email address.
    case invalidAddress
    /// Sign-up: the address has an account (said only without enumeration protection).
    case accountExists
    /// Sign-in or reset: no account has the address (said only without enumeration protection).
    case accountNotFound
    /// The continuation token is unknown, used up, another client's, or of a flow that
    /// cannot end here.
    case unknownFlow
    /// The flow's time is up: start over.
    case expiredFlow
    /// The token belongs to a flow of another kind (a sign-up's token at a reset step).
    case wrongFlow(NativeFlow.Kind)
    /// This step does not follow the flow's last one.
    case outOfOrder(NativeFlow.Step)
    /// Sign-up: the address is proven already, so no code is needed.
    case addressAlreadyVerified
    /// Sign-up: a password or attributes before the address was proven.
    case addressNotVerified
    /// A code was entered, but none was sent yet.
    case codeNotSent
    /// A wrong code; `attemptsLeft` when it is worth saying (0: ask for a new code).
    case wrongCode(attemptsLeft: Int?)
    case codeExpired
    case tooManyWrongCodes
    /// A new password the policy refuses, and the policy's reason, in words.
    case weakPassword(PasswordPolicy.Violation, reason: String)
    /// Attributes the sign-up collects, with values it refuses (every problem at once).
    case invalidAttributes([AttributeProblem])
    /// A wrong password, or (with enumeration protection) an address without an account.
    case invalidCredentials
    /// Too many wrong passwords: the password sign-in is locked for a while.
    case locked
    /// The password-hashing queue is full: try again in a few seconds.
    case busy
    /// An administrator disabled the account (said only after the right password or code).
    case accountDisabled
    /// Too much work of one kind from one network or app.
    case tooMuchWork(WorkLimits.Work, retryAfter: Int64)
    /// A code was sent `ago` seconds ago; another may be sent in `wait`.
    case resendTooSoon(ago: Int64, wait: Int64)
    /// Too many codes or links were sent to the address or from the network in the last hour.
    case tooManyCodes
    /// Scopes a first-party app may not ask for without the consent page.
    case scopeRefused(String)
    /// The username given at the end is not the address the flow was about.
    case usernameMismatch
    /// The first factor was right; a second is needed before tokens are issued (Entra's
    /// `mfa_required`): `token` continues at introspect, challenge and the `mfa_oob` grant.
    case secondFactorRequired(token: String)
    /// A second factor is needed and the person has none: they set one up in the browser first.
    case secondFactorSetupRequired
    /// A second factor is needed that only the browser can ask for (a passkey).
    case secondFactorInBrowser
    /// Too many wrong second-factor codes lately.
    case secondFactorThrottled
    /// A second factor (`id`) that isn't one of ``SecondFactorMethod``.
    case unknownSecondFactor(String)
}
