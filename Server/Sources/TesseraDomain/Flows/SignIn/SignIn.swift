import Foundation
import Logging
import TesseraCore

/// Who a finished sign-in proved, and how (`amr`): what the native API issues tokens for,
/// and the hosted pages start a browser session for.
package struct SignedIn: Sendable, Equatable {
    package var userID: String
    package var amr: [String]

    package init(userID: String, amr: [String]) {
        self.userID = userID
        self.amr = amr
    }
}

/// Signing in with an email address, by password or by a one-time code, and the sign-in
/// that ends a completed sign-up or reset. Each way of finishing ends the flow in one
/// conditional write, so a continuation token signs in once; the caller then issues tokens
/// (the native API) or starts a browser session (the hosted login).
package struct SignIn: Sendable {
    let enumerationProtection: Bool
    let store: any NativeFlowStore & UserStore & StoreTransactions
    let steps: FlowSteps
    let codes: EmailCodes
    let passwordSignIn: PasswordSignIn
    /// The second step after the first factor, when the person or the app wants one.
    let secondFactors: SecondFactors
    let audit: AuditTrail
    let clock: WallClock
    let logger: Logger

    /// Starts a sign-in to the account of `username`.
    package func initiate(username: String, challenges: [Challenge], caller: FlowCaller) async throws -> FlowStep {
        let email = try FlowSteps.address(username)
        let user = try await store.user(email: email)
        if user == nil && !enumerationProtection { throw FlowFailure.accountNotFound }
        guard challenges.contains(.oob) || challenges.contains(.password) else { return .browserRequired }
        var flow = try await steps.newFlow(.signIn, email: email, challenges: challenges, caller: caller)
        flow.userID = user?.id
        return try await steps.begin(flow)
    }

    /// Asks for the password when the account has one and the app can, or sends a code.
    package func challenge(token: String, challenges sent: [Challenge]?, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .signIn, caller: caller, steps: [.started, .codeSent, .passwordRequested])
        let challenges = FlowSteps.challenges(sent, flow: flow)
        let user = try await flow.userID.asyncMap { try await store.user(id: $0) } ?? nil
        // With enumeration protection the challenge depends only on what the app can do: a
        // password when it listed one (an account without one, like an unknown address, then
        // fails with the one invalid_grant), so the answer tells nothing about the account. An
        // app that wants a code for such users asks for it with challenge_type=oob redirect.
        let hasPassword = enumerationProtection || user?.passwordHash != nil
        // Once a code was sent, asking again means "send another code".
        if challenges.contains(.password) && hasPassword && flow.step != .codeSent {
            var next = flow
            next.step = .passwordRequested
            return .passwordRequested(token: try await steps.advance(next, from: token))
        }
        guard challenges.contains(.oob) else { return .browserRequired }
        return try await codes.send(flow, from: token, caller: caller, email: Email.signInCode, deliver: user != nil)
    }

    /// Finishes with the password the flow asked for.
    package func password(token: String, password: String, caller: FlowCaller) async throws -> SignedIn {
        let flow = try await steps.current(token, .signIn, caller: caller, steps: [.passwordRequested])
        switch try await passwordSignIn.signIn(email: flow.email, password: password, from: .init(address: caller.address, clientID: caller.client.id)) {
        case .success(let user):
            return try await finish(flow, userID: user.id, amr: ["pwd"], from: token)
        case .failure(.badCredentials):
            throw flow.userID != nil || enumerationProtection ? FlowFailure.invalidCredentials : FlowFailure.accountNotFound
        case .failure(.throttled):
            throw FlowFailure.locked
        case .failure(.busy):
            throw FlowFailure.busy
        case .failure(.disabled):
            throw FlowFailure.accountDisabled
        }
    }

    /// Finishes with the one-time code the flow sent; it proves the address.
    package func code(token: String, code: String, caller: FlowCaller) async throws -> SignedIn {
        var flow = try await steps.current(token, .signIn, caller: caller, steps: [.codeSent])
        do {
            try await codes.check(code, flow: &flow, token: token)
        } catch {
            await audit.record(.signInFailed, userID: flow.userID, clientID: caller.client.id, email: flow.email, ip: caller.address,
                               detail: "email_code")
            throw error
        }
        guard let userID = flow.userID else { throw FlowFailure.wrongCode(attemptsLeft: nil) }
        await audit.record(.signIn, userID: userID, clientID: caller.client.id, email: flow.email, ip: caller.address, detail: "email_code")
        return try await finish(flow, userID: userID, amr: ["otp"], from: token, provesAddress: true)
    }

    /// Signs in at the end of a completed sign-up or reset; `username`, when the app sends
    /// it, must be the flow's address.
    package func afterCompletedFlow(token: String, username: String?, caller: FlowCaller) async throws -> SignedIn {
        let flow = try await steps.current(token, nil, caller: caller, steps: [.completed])
        guard flow.kind != .signIn, let userID = flow.userID else { throw FlowFailure.unknownFlow }
        if let username, MailAddress.normalise(username) != flow.email { throw FlowFailure.usernameMismatch }
        return try await finish(flow, userID: userID, amr: flow.amr, from: token)
    }

    // MARK: The second factor (the native API)

    /// After a first factor made without a browser: nothing when no second factor is needed;
    /// else a new flow waiting for it, whose token the app continues with
    /// (``FlowFailure/secondFactorRequired(token:)``), or the failure that says it must be set up
    /// or given in the browser.
    package func requireSecondFactor(_ signedIn: SignedIn, caller: FlowCaller) async throws {
        guard let user = try await store.user(id: signedIn.userID),
              let requirement = try await secondFactors.policy.requirement(user: user, amr: signedIn.amr, client: caller.client) else {
            return
        }
        guard !requirement.mustEnrol else { throw FlowFailure.secondFactorSetupRequired }
        guard requirement.authenticatorApp else { throw FlowFailure.secondFactorInBrowser }
        var flow = try await steps.newFlow(.signIn, email: user.email, challenges: [.oob, .redirect], caller: caller)
        flow.userID = user.id
        flow.amr = signedIn.amr
        flow.step = .secondFactorRequired
        let token = SecureRandom.token()
        try await store.insertFlow(flow, tokenHash: tokenHash(token))
        throw FlowFailure.secondFactorRequired(token: token)
    }

    /// The second factors the person can give here (Entra's `/oauth2/v2.0/introspect`).
    package func secondFactorMethods(token: String, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .signIn, caller: caller, steps: [.secondFactorRequired])
        return .secondFactorMethods(token: try await steps.advance(flow, from: token), SecondFactorMethod.allCases)
    }

    /// The app chose a second factor (`id`): its code is next. Nothing is sent: the code is
    /// in the person's authenticator app, or on their list of recovery codes.
    package func secondFactorChallenge(token: String, method id: String, caller: FlowCaller) async throws -> FlowStep {
        let flow = try await steps.current(token, .signIn, caller: caller, steps: [.secondFactorRequired])
        guard let method = SecondFactorMethod(rawValue: id) else { throw FlowFailure.unknownSecondFactor(id) }
        return .secondFactorChallenge(token: try await steps.advance(flow, from: token), method)
    }

    /// The second factor's code (the `mfa_oob` grant): the sign-in ends with both factors.
    package func secondFactor(token: String, code: String, caller: FlowCaller) async throws -> SignedIn {
        let flow = try await steps.current(token, .signIn, caller: caller, steps: [.secondFactorRequired])
        guard let userID = flow.userID, let user = try await store.user(id: userID) else { throw FlowFailure.unknownFlow }
        guard !user.isDisabled else { throw FlowFailure.accountDisabled }
        let methods: [String]
        do {
            methods = try await secondFactors.verify(user, code: code, from: .init(signIn: flow.id))
        } catch .throttled {
            throw FlowFailure.secondFactorThrottled
        } catch .unavailable(let error) {
            throw error
        } catch {
            await audit.record(.signInFailed, userID: userID, clientID: caller.client.id, email: user.email, ip: caller.address,
                               detail: "second factor")
            throw FlowFailure.wrongCode(attemptsLeft: nil)
        }
        await audit.record(.signIn, userID: userID, clientID: caller.client.id, email: user.email, ip: caller.address,
                           detail: "second factor")
        return try await finish(flow, userID: userID, amr: SecondFactorPolicy.combined(flow.amr, methods), from: token)
    }

    /// Ends the flow. A code sign-in (`provesAddress`) proved the address in the same step:
    /// ``AccountRules/addressProven(_:now:in:)`` runs in the transaction that ends the flow.
    func finish(_ flow: NativeFlow, userID: String, amr: [String], from token: String, provesAddress: Bool = false) async throws -> SignedIn {
        let now = clock.now()
        let ended = try await store.transaction { tx in
            guard try await tx.advanceFlow(flow, from: tokenHash(token), to: nil) else { return false }
            if provesAddress, let user = try await tx.user(id: userID) {
                if try await AccountRules.addressProven(user, now: now, in: tx).secured {
                    logger.notice("a code sign-in secured an unverified account: its password, unproven identities, sessions and tokens are gone",
                                  metadata: ["user": "\(userID)"])
                }
            }
            return true
        }
        guard ended else { throw FlowFailure.unknownFlow }
        return SignedIn(userID: userID, amr: amr)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        switch self {
        case .some(let value): try await transform(value)
        case .none: nil
        }
    }
}
