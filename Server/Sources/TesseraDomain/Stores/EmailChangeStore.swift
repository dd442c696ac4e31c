import TesseraCore

/// A change of a user's address waiting for the code mailed to the new one.
public struct PendingEmailChange: Sendable, Equatable {
    public var id: String
    public var userID: String
    /// The new address, normalised.
    public var newEmail: String
    /// The code's hash; a pending change to an address another account has holds one no code matches.
    public var codeHash: String
    public var createdAt: Int64
    public var expiresAt: Int64

    package init(id: String, userID: String, newEmail: String, codeHash: String, createdAt: Int64, expiresAt: Int64) {
        self.id = id
        self.userID = userID
        self.newEmail = newEmail
        self.codeHash = codeHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// Pending address changes (the account page's and the account API's), one live per user.
public protocol EmailChangeStore: Sendable {
    /// Stores a pending change, replacing the user's earlier one.
    func insertEmailChange(_ change: PendingEmailChange) async throws
    /// The user's live pending change of this id.
    func emailChange(id: String, userID: String, now: Int64) async throws -> PendingEmailChange?
    /// Counts an entry of the code, before it is compared; nil once `limit` entries were made.
    func reserveEmailChangeAttempt(id: String, limit: Int) async throws -> Int?
    /// Removes the pending change (used, or given up).
    func deleteEmailChange(id: String) async throws
}
