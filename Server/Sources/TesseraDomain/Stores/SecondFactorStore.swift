import TesseraCore

/// A person's authenticator app (TOTP, RFC 6238): its secret, sealed with the master key, and
/// the last time step a code was accepted for (a code works once).
public struct TOTPFactor: Sendable, Equatable {
    public var userID: String
    /// The shared secret, sealed (``SecretBox``): the database alone can't make codes.
    public var sealedSecret: String
    public var createdAt: Int64
    /// Set by the first right code: until then the app is being set up and asks nothing.
    public var confirmedAt: Int64?
    public var lastStep: Int64?

    public var isConfirmed: Bool { confirmedAt != nil }

    package init(userID: String, sealedSecret: String, createdAt: Int64, confirmedAt: Int64? = nil, lastStep: Int64? = nil) {
        self.userID = userID
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.confirmedAt = confirmedAt
        self.lastStep = lastStep
    }
}

/// Second factors: the authenticator app and the recovery codes.
public protocol SecondFactorStore: Sendable {
    /// Stores an authenticator app being set up, replacing one not yet confirmed; false when the
    /// user has a confirmed one (remove it first).
    func insertPendingTOTP(_ factor: TOTPFactor) async throws -> Bool
    func totpFactor(userID: String) async throws -> TOTPFactor?
    /// Confirms the pending app with the step its first code was for; false when there is none pending.
    func confirmTOTP(userID: String, step: Int64, now: Int64) async throws -> Bool
    /// Records an accepted code's step; false when that step or a later one was used already (a replay).
    func recordTOTPStep(userID: String, step: Int64) async throws -> Bool
    func deleteTOTP(userID: String) async throws

    /// Replaces the user's recovery codes by these (hashes).
    func replaceRecoveryCodes(userID: String, hashes: [String], now: Int64) async throws
    /// Uses up the code of this hash; false when it isn't one of the user's, or was used.
    func useRecoveryCode(userID: String, hash: String, now: Int64) async throws -> Bool
    /// How many of the user's recovery codes are left.
    func recoveryCodesLeft(userID: String) async throws -> Int
}
