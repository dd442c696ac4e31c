import Foundation
import Logging
import TesseraCore

/// Signing up with an email address: the address is proven by a one-time code; a password
/// (required or optional, by setting) and the configured attributes are collected before or
/// after. The account is created in the write that completes the flow, or not at all.
///
/// With enumeration protection an address that has an account goes through the same steps
/// and answers, but its code is never mailed (an "account exists" notice is) and none matches.
package struct SignUp: Sendable {
    let settings: NativeAuthSettings
    let enumerationProtection: Bool
    let store: any NativeFlowStore & UserStore & StoreTransactions
    let steps: FlowSteps
    let codes: EmailCodes
    let passwords: NewPasswords
    let clock: WallClock
    let logger: Logger

    package init(settings: NativeAuthSettings, enumerationProtection: Bool,
                 store: any NativeFlowStore & UserStore & StoreTransactions, steps: FlowSteps, codes: EmailCodes,
                 passwords: NewPasswords, clock: WallClock, logger: Logger) {
        self.settings = settings
        self.enumerationProtection = enumerationProtection
        self.store = store
        self.steps = steps
        self.codes = codes
        self.passwords = passwords
        self.clock = clock
        self.logger = logger
    }

    /// Starts a sign-up for `username`, with the password and attributes the app has already.
    package func start(username: String, challenges: [Challenge], password: String?, attributes: [String: JSONValue]?,
                       caller: FlowCaller) async throws -> FlowStep {
        let email = try FlowSteps.address(username)
        guard challenges.contains(.oob) else { return .browserRequired }
        var flow = try await steps.newFlow(.signUp, email: email, challenges: challenges, caller: caller)
        if try await store.user(email: email) != nil {
            guard enumerationProtection else { throw FlowFailure.accountExists }
            flow.accountExists = true
        }
        if let password {
            try passwords.check(password, email: email)
            flow.passwordHash = try await passwords.hash(password, caller: caller, priority: .new)
        }
        if let attributes {
            flow.attributes = try settings.signUpAttributes.parse(attributes).get()
        }
        return try await steps.begin(flow)
    }

    /// Sends the code (again); once the address is proven, asks for the password instead.
    package func challenge(token: String, challenges sent: [Challenge]?, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .signUp, caller: caller, steps: [.started, .codeSent, .verified])
        let challenges = FlowSteps.challenges(sent, flow: flow)
        if flow.step == .verified {
            guard flow.passwordHash == nil, challenges.contains(.password) else { throw FlowFailure.addressAlreadyVerified }
            return .passwordRequested(token: try await steps.advance(flow, from: token))
        }
        guard challenges.contains(.oob) else { return .browserRequired }
        return try await codes.send(flow, from: token, caller: caller,
                                    email: flow.accountExists ? { _, _ in Email.accountExists } : Email.signUpCode, deliver: true)
    }

    /// The code that proves the address.
    package func submitCode(token: String, code: String, caller: FlowCaller) async throws -> FlowStep {
        var flow = try await steps.current(token, .signUp, caller: caller, steps: [.started, .codeSent, .verified])
        guard flow.step == .codeSent else {
            throw flow.step == .verified ? FlowFailure.addressAlreadyVerified : FlowFailure.codeNotSent
        }
        try await codes.check(code, flow: &flow, token: token)
        flow.amr = ["otp"]
        return try await finishIfReady(flow, from: token)
    }

    /// The password, once the address is proven.
    package func submitPassword(token: String, password: String, caller: FlowCaller) async throws -> FlowStep {
        var flow = try await verifiedFlow(token, caller: caller)
        try passwords.check(password, email: flow.email)
        flow.passwordHash = try await passwords.hash(password, caller: caller, priority: .underWay)
        return try await finishIfReady(flow, from: token)
    }

    /// More attributes, once the address is proven.
    package func submitAttributes(token: String, attributes: [String: JSONValue], caller: FlowCaller) async throws -> FlowStep {
        var flow = try await verifiedFlow(token, caller: caller)
        let sent = try settings.signUpAttributes.parse(attributes).get()
        flow.attributes.merge(sent) { _, new in new }
        return try await finishIfReady(flow, from: token)
    }

    func verifiedFlow(_ token: String, caller: FlowCaller) async throws -> NativeFlow {
        let flow = try await steps.current(token, .signUp, caller: caller, steps: [.started, .codeSent, .verified])
        guard flow.emailVerified else { throw FlowFailure.addressNotVerified }
        return flow
    }

    /// What the sign-up still needs once the address is proven, or the account.
    func finishIfReady(_ flow: NativeFlow, from token: String) async throws -> FlowStep {
        var flow = flow
        if flow.passwordHash == nil && settings.signUpPasswordRequired {
            // The app can't take a password: the hosted pages finish the sign-up.
            guard flow.challengeTypes.contains(Challenge.password.rawValue) else { return .browserRequired }
            return .passwordRequired(token: try await steps.advance(flow, from: token))
        }
        let missing = settings.signUpAttributes.missing(from: flow.attributes)
        if !missing.isEmpty {
            return .attributesRequired(token: try await steps.advance(flow, from: token), missing)
        }
        let now = clock.now()
        var profile = settings.signUpAttributes.profile(from: flow.attributes)
        profile["locale"] = profile["locale"] ?? .string(flow.language)
        try ScopeCatalogue.validate(profile: profile)
        let user = User(id: UUID().uuidString.lowercased(), email: flow.email, emailVerified: true, passwordHash: flow.passwordHash,
                        profile: profile, createdAt: now, updatedAt: now)
        flow.step = .completed
        flow.userID = user.id
        flow.passwordHash = nil
        flow.attributes = [:]
        if flow.amr.isEmpty { flow.amr = ["otp"] }
        flow.expiresAt = now + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        do {
            // A sign-up by code proves the address: the account starts verified, with nothing
            // set up by anybody else (an address with an account never gets here).
            let completed = try await store.transaction { [flow] tx in
                guard try await tx.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)) else { return false }
                try await tx.insert(user)
                try await tx.recordAudit(AuditEvent(.accountCreated, at: now, userID: user.id, clientID: flow.clientID, email: user.email,
                                                    detail: user.passwordHash != nil ? "native sign-up, password" : "native sign-up, code"))
                return true
            }
            guard completed else { throw FlowFailure.unknownFlow }
        } catch StoreError.duplicate {
            throw FlowFailure.accountExists
        }
        logger.info("account created by native sign-up", metadata: ["user": "\(user.id)", "client": "\(flow.clientID)"])
        return .completed(token: next, expiresIn: settings.continuationTokenLifetime)
    }
}
