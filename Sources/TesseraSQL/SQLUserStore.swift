import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: UserStore {
    public func user(id: String) async throws -> User? {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM users WHERE id = \(bind: id)").first().map(Self.user)
        }
    }

    public func user(email: String) async throws -> User? {
        let email = email.lowercased()
        return try await database.withDatabase { db in
            try await db.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(Self.user)
        }
    }

    public func insert(_ user: User) async throws {
        let profile = try jsonText(user.profile)
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    INSERT INTO users (id, email, email_verified, password_hash, profile, created_at, updated_at)
                    VALUES (\(bind: user.id), \(bind: user.email.lowercased()), \(bind: user.emailVerified), \(bind: user.passwordHash), \(bind: profile), \(bind: user.createdAt), \(bind: user.updatedAt))
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email")
        }
    }

    public func updatePasswordHash(userID: String, hash: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET password_hash = \(bind: hash), updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func updateProfile(userID: String, profile: [String: JSONValue], now: Int64) async throws {
        let text = try jsonText(profile)
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET profile = \(bind: text), updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func markEmailVerified(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET email_verified = \(bind: true), updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func removePassword(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET password_hash = NULL, updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func changeEmail(userID: String, to email: String, now: Int64) async throws {
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    UPDATE users SET email = \(bind: email.lowercased()), email_verified = \(bind: true), updated_at = \(bind: now)
                    WHERE id = \(bind: userID)
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email")
        }
    }

    static func user(_ row: any SQLRow) throws -> User {
        User(id: try row.string("id"), email: try row.string("email"), emailVerified: try row.bool("email_verified"),
             passwordHash: try row.optionalString("password_hash"),
             profile: try row.json("profile", as: [String: JSONValue].self),
             createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }
}
