/// A password someone chooses (at sign-up or in a reset): checked against the policy, then
/// hashed within the caller's share of hashing work.
package struct NewPasswords: Sendable {
    let policy: PasswordPolicy
    let hasher: PasswordHasher
    let steps: FlowSteps

    package init(policy: PasswordPolicy, hasher: PasswordHasher, steps: FlowSteps) {
        self.policy = policy
        self.hasher = hasher
        self.steps = steps
    }

    /// Throws ``FlowFailure/weakPassword(_:reason:)`` with the policy's reason.
    func check(_ password: String, email: String) throws {
        if let violation = policy.check(password, email: email) {
            throw FlowFailure.weakPassword(violation, reason: PasswordPolicy.explanation(violation, policy: policy))
        }
    }

    /// The hash to store; ``FlowFailure/busy`` when the hashing queue is full.
    func hash(_ password: String, caller: FlowCaller, priority: PasswordHasher.Priority) async throws -> String {
        try await steps.admit(.hashing, caller: caller)
        do {
            return try await hasher.hash(password, priority: priority)
        } catch is PasswordHasher.Busy {
            throw FlowFailure.busy
        }
    }
}
