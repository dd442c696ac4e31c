import SQLKit
import TesseraDomain

extension SQLStore: EmailChangeStore {
    public func insertEmailChange(_ change: PendingEmailChange) async throws {
        try await database.transaction { db in
            try await db.raw("DELETE FROM email_changes WHERE user_id = \(bind: change.userID)").run()
            try await db.raw("""
                INSERT INTO email_changes (id, user_id, new_email, code_hash, attempts, created_at, expires_at)
                VALUES (\(bind: change.id), \(bind: change.userID), \(bind: change.newEmail), \(bind: change.codeHash), 0,
                    \(bind: change.createdAt), \(bind: change.expiresAt))
                """).run()
        }
    }

    public func emailChange(id: String, userID: String, now: Int64) async throws -> PendingEmailChange? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                SELECT * FROM email_changes WHERE id = \(bind: id) AND user_id = \(bind: userID) AND expires_at > \(bind: now)
                """).first() else { return nil }
            return PendingEmailChange(id: try row.string("id"), userID: try row.string("user_id"), newEmail: try row.string("new_email"),
                                      codeHash: try row.string("code_hash"), createdAt: try row.int("created_at"),
                                      expiresAt: try row.int("expires_at"))
        }
    }

    public func reserveEmailChangeAttempt(id: String, limit: Int) async throws -> Int? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE email_changes SET attempts = attempts + 1 WHERE id = \(bind: id) AND attempts < \(bind: limit) RETURNING attempts
                """).first().map { Int(try $0.int("attempts")) }
        }
    }

    public func deleteEmailChange(id: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM email_changes WHERE id = \(bind: id)").run()
        }
    }
}
