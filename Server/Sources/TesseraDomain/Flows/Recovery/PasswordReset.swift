import Foundation
import Logging
import TesseraCore

/// Resetting a forgotten password: a one-time code proves the address, then the new
/// password is set at once and every session and refresh token of the user ends
/// (``AccountRules/passwordReset(_:passwordHash:now:clientID:in:)``), in the write that completes the flow.
package struct PasswordReset: Sendable {
    let settings: NativeAuthSettings
    let enumerationProtection: Bool
    let store: any NativeFlowStore & UserStore & GrantStore & StoreTransactions
    let steps: FlowSteps
    let codes: EmailCodes
    let passwords: NewPasswords
    let mail: FlowMail
    let clock: WallClock
    let logger: Logger

    package init(settings: NativeAuthSettings, enumerationProtection: Bool,
                 store: any NativeFlowStore & UserStore & GrantStore & StoreTransactions, steps: FlowSteps, codes: EmailCodes,
                 passwords: NewPasswords, mail: FlowMail, clock: WallClock, logger: Logger) {
        self.settings = settings
        self.enumerationProtection = enumerationProtection
        self.store = store
        self.steps = steps
        self.codes = codes
        self.passwords = passwords
        self.mail = mail
        self.clock = clock
        self.logger = logger
    }

    /// Starts a reset for the account of `username`.
    package func start(username: String, challenges: [Challenge], caller: FlowCaller) async throws -> FlowStep {
        let email = try FlowSteps.address(username)
        let user = try await store.user(email: email)
        if user == nil && !enumerationProtection { throw FlowFailure.accountNotFound }
        guard challenges.contains(.oob) else { return .browserRequired }
        var flow = try await steps.newFlow(.passwordReset, email: email, challenges: challenges, caller: caller)
        flow.userID = user?.id
        return try await steps.begin(flow)
    }

    /// Sends the code (again).
    package func challenge(token: String, challenges sent: [Challenge]?, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .passwordReset, caller: caller, steps: [.started, .codeSent])
        guard FlowSteps.challenges(sent, flow: flow).contains(.oob) else { return .browserRequired }
        return try await codes.send(flow, from: token, caller: caller, email: Email.passwordResetCode, deliver: flow.userID != nil)
    }

    /// The code; the new password is next.
    package func submitCode(token: String, code: String, caller: FlowCaller) async throws -> FlowStep {
        var flow = try await steps.current(token, .passwordReset, caller: caller, steps: [.codeSent])
        try await codes.check(code, flow: &flow, token: token)
        guard flow.userID != nil else { throw FlowFailure.wrongCode(attemptsLeft: nil) }
        flow.step = .verified
        return .verified(token: try await steps.advance(flow, from: token), expiresIn: settings.continuationTokenLifetime)
    }

    /// The new password: set at once, every session and refresh token of the user ended.
    package func submitPassword(token: String, password: String, caller: FlowCaller) async throws -> FlowStep {
        var flow = try await steps.current(token, .passwordReset, caller: caller, steps: [.verified])
        try passwords.check(password, email: flow.email)
        guard let userID = flow.userID else { throw FlowFailure.unknownFlow }
        let hash = try await passwords.hash(password, caller: caller, priority: .underWay)
        let now = clock.now()
        flow.step = .completed
        flow.amr = ["pwd", "otp"]
        flow.expiresAt = now + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        let completed = try await store.transaction { [flow] tx in
            guard try await tx.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)),
                  let user = try await tx.user(id: userID) else { return false }
            try await AccountRules.passwordReset(user, passwordHash: hash, now: now, clientID: flow.clientID, in: tx)
            return true
        }
        guard completed else { throw FlowFailure.unknownFlow }
        logger.info("password reset by native API", metadata: ["user": "\(userID)", "client": "\(flow.clientID)"])
        try? await mail.send(.passwordChanged, to: flow.email, language: caller.language, flow: flow.kind.rawValue, expiresAt: nil)
        return .resetSubmitted(token: next, pollInterval: 1)
    }

    /// The reset is done when the password is submitted: says so, with the token that signs the user in.
    package func pollCompletion(token: String, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .passwordReset, caller: caller, steps: [.completed])
        return .resetSucceeded(token: try await steps.advance(flow, from: token))
    }
}
