import Foundation
import TesseraCore

/// What every sign-up, sign-in and reset step does with its flow: start one within the
/// caller's share of work, find it by its continuation token, and move it on to a new token.
///
/// A step that succeeds replaces the token, so each token works for one step; the write is
/// conditional on the token still being current, so two requests racing with one token
/// cannot both move the flow on.
package struct FlowSteps: Sendable {
    let settings: NativeAuthSettings
    let store: any NativeFlowStore
    let limits: WorkLimits
    let clock: WallClock

    package init(settings: NativeAuthSettings, store: any NativeFlowStore, limits: WorkLimits, clock: WallClock) {
        self.settings = settings
        self.store = store
        self.limits = limits
        self.clock = clock
    }

    /// A new flow, once the caller's address and client may start one.
    func newFlow(_ kind: NativeFlow.Kind, email: String, challenges: [Challenge], caller: FlowCaller) async throws -> NativeFlow {
        try await admit(.flow, caller: caller)
        let now = clock.now()
        return NativeFlow(id: SecureRandom.token(bytes: 16), kind: kind, clientID: caller.client.id, email: email, step: .started,
                          challengeTypes: challenges.map(\.rawValue), language: caller.language.rawValue, createdAt: now,
                          expiresAt: now + settings.continuationTokenLifetime)
    }

    /// Counts `work` for the caller's address and client (``WorkLimits``).
    func admit(_ work: WorkLimits.Work, caller: FlowCaller) async throws {
        do {
            try await limits.admit(work, address: caller.address, client: caller.client.id, now: clock.now())
        } catch let error as WorkLimits.Exceeded {
            throw FlowFailure.tooMuchWork(work, retryAfter: error.retryAfter)
        }
    }

    /// Stores a new flow; answers its first continuation token.
    func begin(_ flow: NativeFlow) async throws -> FlowStep {
        let token = SecureRandom.token()
        try await store.insertFlow(flow, tokenHash: tokenHash(token))
        return .started(token: token)
    }

    /// Saves the flow under a new continuation token, which it returns.
    func advance(_ flow: NativeFlow, from token: String) async throws -> String {
        var flow = flow
        flow.expiresAt = clock.now() + settings.continuationTokenLifetime
        let next = SecureRandom.token()
        guard try await store.advanceFlow(flow, from: tokenHash(token), to: tokenHash(next)) else { throw FlowFailure.unknownFlow }
        return next
    }

    /// The flow of `token`, if it is the caller's client's, of this kind (any with nil),
    /// unexpired and at one of `steps`.
    func current(_ token: String, _ kind: NativeFlow.Kind?, caller: FlowCaller, steps: Set<NativeFlow.Step>) async throws -> NativeFlow {
        guard token.count <= 512, let flow = try await store.flow(tokenHash: tokenHash(token)), flow.clientID == caller.client.id else {
            throw FlowFailure.unknownFlow
        }
        guard flow.expiresAt > clock.now() else { throw FlowFailure.expiredFlow }
        guard kind == nil || flow.kind == kind else { throw FlowFailure.wrongFlow(flow.kind) }
        guard steps.contains(flow.step) else { throw FlowFailure.outOfOrder(flow.step) }
        return flow
    }

    /// What the app can show at a challenge step: what it sends now, else what it said at the start.
    static func challenges(_ sent: [Challenge]?, flow: NativeFlow) -> [Challenge] {
        sent ?? flow.challengeTypes.compactMap(Challenge.init)
    }

    /// The address a flow is about: trimmed, lower-cased, and plausibly an email address.
    static func address(_ username: String) throws -> String {
        let email = MailAddress.normalise(username)
        guard MailAddress.isPlausible(email) else { throw FlowFailure.invalidAddress }
        return email
    }
}
