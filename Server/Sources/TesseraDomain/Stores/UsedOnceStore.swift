/// Values the provider accepts once (a nonce, a notification), recorded by their hash until
/// they would be refused anyway (expired): a second use is a replay.
public protocol UsedOnceStore: Sendable {
    /// Records the first use of `idHash` of `kind`; false when it was used before.
    func recordFirstUse(kind: String, idHash: String, expiresAt: Int64, now: Int64) async throws -> Bool
}
