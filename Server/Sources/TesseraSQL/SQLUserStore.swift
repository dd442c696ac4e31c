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
                    INSERT INTO users (id, email, email_verified, password_hash, profile, created_at, updated_at, roles, disabled_at)
                    VALUES (\(bind: user.id), \(bind: user.email.lowercased()), \(bind: user.emailVerified), \(bind: user.passwordHash),
                        \(bind: profile), \(bind: user.createdAt), \(bind: user.updatedAt), \(bind: user.roles.sorted().joined(separator: " ")),
                        \(bind: user.disabledAt))
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email")
        }
    }

    public func updatePasswordHash(userID: String, hash: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET password_hash = \(bind: hash), version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func updateProfile(userID: String, profile: [String: JSONValue], now: Int64) async throws {
        let text = try jsonText(profile)
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET profile = \(bind: text), version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func markEmailVerified(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET email_verified = \(bind: true), version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func removePassword(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE users SET password_hash = NULL, version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: userID)").run()
        }
    }

    public func changeEmail(userID: String, to email: String, now: Int64) async throws {
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    UPDATE users SET email = \(bind: email.lowercased()), email_verified = \(bind: true), version = version + 1, updated_at = \(bind: now)
                    WHERE id = \(bind: userID)
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email")
        }
    }

    public func updateAccount(userID: String, profile: [String: JSONValue], roles: Set<String>, now: Int64,
                              ifVersion version: Int64) async throws -> Bool {
        let text = try jsonText(profile), roles = roles.sorted().joined(separator: " ")
        return try await database.withDatabase { db in
            try await db.raw("""
                UPDATE users SET profile = \(bind: text), roles = \(bind: roles), version = version + 1, updated_at = \(bind: now)
                WHERE id = \(bind: userID) AND version = \(bind: version) RETURNING id
                """).first() != nil
        }
    }

    public func saveImported(_ user: User, now: Int64) async throws {
        let profile = try jsonText(user.profile)
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    UPDATE users SET email = \(bind: user.email.lowercased()), email_verified = \(bind: user.emailVerified),
                        password_hash = \(bind: user.passwordHash), profile = \(bind: profile), disabled_at = \(bind: user.disabledAt),
                        version = version + 1, updated_at = \(bind: now)
                    WHERE id = \(bind: user.id)
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email")
        }
    }

    public func setDisabled(userID: String, at disabledAt: Int64?, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE users SET disabled_at = \(bind: disabledAt), version = version + 1, updated_at = \(bind: now) WHERE id = \(bind: userID)
                """).run()
        }
    }

    public func users(matching query: String?, after cursor: String?, limit: Int) async throws -> [User] {
        // Email addresses are stored lower-cased; the profile is searched without regard to case.
        let pattern = query.map { "%" + Self.likeEscaped($0.lowercased()) + "%" }
        let after = cursor ?? ""
        return try await database.withDatabase { db in
            let rows = if let pattern, let query {
                try await db.raw("""
                    SELECT * FROM users WHERE email > \(bind: after)
                        AND (id = \(bind: query) OR email LIKE \(bind: pattern) ESCAPE '!' OR LOWER(profile) LIKE \(bind: pattern) ESCAPE '!')
                    ORDER BY email LIMIT \(bind: limit)
                    """).all()
            } else {
                try await db.raw("SELECT * FROM users WHERE email > \(bind: after) ORDER BY email LIMIT \(bind: limit)").all()
            }
            return try rows.map(Self.user)
        }
    }

    /// `text` for a LIKE pattern with `!` as the escape character.
    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "!", with: "!!").replacingOccurrences(of: "%", with: "!%").replacingOccurrences(of: "_", with: "!_")
    }

    static func user(_ row: any SQLRow) throws -> User {
        try user(columns: SQLColumns(row: row))
    }

    static func user(columns row: some StoreColumns) throws -> User {
        var user = User(id: try row.string("id"), email: try row.string("email"), emailVerified: try row.bool("email_verified"),
                        passwordHash: try row.optionalString("password_hash"),
                        profile: try row.jsonObject("profile"),
                        createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
        user.version = try row.int("version")
        user.disabledAt = try row.optionalInt("disabled_at")
        user.roles = Set(try row.string("roles").split(separator: " ").map(String.init))
        return user
    }
}
