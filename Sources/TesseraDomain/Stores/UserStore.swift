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
}
