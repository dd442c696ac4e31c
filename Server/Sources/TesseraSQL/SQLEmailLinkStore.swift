import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: EmailLinkStore {
    public func insertEmailLink(codeHash: String, _ link: EmailLinkRecord) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO email_links (code_hash, client_id, email, continue_url, handle_in_app, interaction, device_hash, language,
                    wrong_attempts, created_at, expires_at)
                VALUES (\(bind: codeHash), \(bind: link.clientID == EmailLinks.accountClientID ? nil : link.clientID), \(bind: link.email), \(bind: link.continueURL), \(bind: link.handleInApp),
                    \(bind: link.interaction), \(bind: link.deviceHash), \(bind: link.language), \(bind: link.wrongAttempts),
                    \(bind: link.createdAt), \(bind: link.expiresAt))
                """).run()
        }
    }

    public func emailLink(codeHash: String) async throws -> EmailLinkRecord? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("SELECT * FROM email_links WHERE code_hash = \(bind: codeHash)").first() else { return nil }
            return EmailLinkRecord(
                clientID: try row.optionalString("client_id") ?? EmailLinks.accountClientID, email: try row.string("email"), continueURL: try row.optionalString("continue_url"),
                handleInApp: try row.bool("handle_in_app"), interaction: try row.optionalString("interaction"),
                deviceHash: try row.optionalString("device_hash"), language: try row.string("language"),
                wrongAttempts: Int(try row.int("wrong_attempts")), createdAt: try row.int("created_at"),
                expiresAt: try row.int("expires_at"), usedAt: try row.optionalInt("used_at"))
        }
    }

    public func reserveEmailAttempt(codeHash: String, limit: Int) async throws -> Int? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE email_links SET wrong_attempts = wrong_attempts + 1
                WHERE code_hash = \(bind: codeHash) AND wrong_attempts < \(bind: limit) RETURNING wrong_attempts
                """).first().map { Int(try $0.int("wrong_attempts")) }
        }
    }

    public func markEmailLinkUsed(codeHash: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE email_links SET used_at = \(bind: now)
                WHERE code_hash = \(bind: codeHash) AND used_at IS NULL AND expires_at > \(bind: now) RETURNING code_hash
                """).first() != nil
        }
    }
}
