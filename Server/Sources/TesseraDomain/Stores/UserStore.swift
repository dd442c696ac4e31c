import Foundation
import TesseraCore

/// People who can sign in.
public protocol UserStore: Sendable {
    func user(id: String) async throws -> User?
    func user(email: String) async throws -> User?
    func insert(_ user: User) async throws
    func updatePasswordHash(userID: String, hash: String, now: Int64) async throws
    /// Replaces the user's profile (already validated).
    func updateProfile(userID: String, profile: [String: JSONValue], now: Int64) async throws
    func markEmailVerified(userID: String, now: Int64) async throws
    func removePassword(userID: String, now: Int64) async throws
    /// Gives the user another address, verified; throws ``StoreError/duplicate(_:)`` when it is another account's.
    func changeEmail(userID: String, to email: String, now: Int64) async throws
    /// Writes the profile (already validated) and roles when the user's version is still
    /// `version`; false when someone changed the user since, or it is gone. Every write to a
    /// user counts a version.
    func updateAccount(userID: String, profile: [String: JSONValue], roles: Set<String>, now: Int64, ifVersion version: Int64) async throws -> Bool
    /// Writes what an import brings (address, verification, password hash, profile, disabled
    /// time) over a user, counting a version; throws ``StoreError/duplicate(_:)`` for an
    /// address another account has.
    func saveImported(_ user: User, now: Int64) async throws
    /// Disables the account (`at`: when) or enables it again (nil).
    func setDisabled(userID: String, at disabledAt: Int64?, now: Int64) async throws
    /// Users by email address, after `cursor` (an address); `query` matches an id exactly, or
    /// part of an address or of any profile value (a name, a phone number).
    func users(matching query: String?, after cursor: String?, limit: Int) async throws -> [User]
}
