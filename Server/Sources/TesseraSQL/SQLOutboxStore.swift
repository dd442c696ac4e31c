import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: OutboxStore {
    public func enqueue(_ message: OutboxMessage) async throws {
        let metadata = try jsonText(message.metadata)
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO outbox (id, sender, recipient, subject, text_body, html_body, language, metadata, mime, status,
                    attempts, next_attempt_at, created_at, expires_at)
                VALUES (\(bind: message.id), \(bind: message.sender), \(bind: message.recipient), \(bind: message.subject),
                    \(bind: message.text), \(bind: message.html), \(bind: message.language), \(bind: metadata), \(bind: message.mime),
                    \(bind: message.status.rawValue), \(bind: message.attempts), \(bind: message.nextAttemptAt),
                    \(bind: message.createdAt), \(bind: message.expiresAt))
                """).run()
        }
    }

    public func outboxDepth() async throws -> Int {
        try await database.withDatabase { db in
            Int(try await db.raw("SELECT COUNT(*) AS depth FROM outbox WHERE status IN ('pending', 'sending')").first()?.int("depth") ?? 0)
        }
    }

    public func claimDueMessage(now: Int64, leaseUntil: Int64) async throws -> OutboxMessage? {
        let token = SecureRandom.token(bytes: 16)
        // On PostgreSQL the subquery skips rows another node is claiming (FOR UPDATE SKIP
        // LOCKED), so nodes delivering together take different messages. The condition is
        // repeated outside it all the same: a claim that raced anyway re-checks it after the
        // first commits, and finds nothing to take.
        return try await database.transaction { db in
            let skipLocked: SQLQueryString = db.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
            return try await db.raw("""
                UPDATE outbox SET status = 'sending', lease_token = \(bind: token), lease_until = \(bind: leaseUntil),
                    attempts = attempts + 1
                WHERE id = (SELECT id FROM outbox
                        WHERE (status = 'pending' AND next_attempt_at <= \(bind: now)) OR (status = 'sending' AND lease_until <= \(bind: now))
                        ORDER BY next_attempt_at, id LIMIT 1\(skipLocked))
                    AND ((status = 'pending' AND next_attempt_at <= \(bind: now)) OR (status = 'sending' AND lease_until <= \(bind: now)))
                RETURNING *
                """).first().map(Self.outboxMessage)
        }
    }

    public func markDelivered(_ message: OutboxMessage, now: Int64) async throws -> Bool {
        try await finishClaim(message, """
            status = 'delivered', finished_at = \(bind: now), last_error = NULL, lease_token = NULL, lease_until = NULL
            """)
    }

    public func scheduleRetry(_ message: OutboxMessage, at: Int64, error: String) async throws -> Bool {
        try await finishClaim(message, """
            status = 'pending', next_attempt_at = \(bind: at), last_error = \(bind: error), lease_token = NULL, lease_until = NULL
            """)
    }

    public func markFailed(_ message: OutboxMessage, now: Int64, error: String) async throws -> Bool {
        try await finishClaim(message, """
            status = 'failed', finished_at = \(bind: now), last_error = \(bind: error), lease_token = NULL, lease_until = NULL
            """)
    }

    public func releaseClaim(_ message: OutboxMessage) async throws {
        _ = try await finishClaim(message, """
            status = 'pending', attempts = attempts - 1, lease_token = NULL, lease_until = NULL
            """)
    }

    private func finishClaim(_ message: OutboxMessage, _ assignments: SQLQueryString) async throws -> Bool {
        guard let token = message.leaseToken else { return false }
        return try await database.transaction { db in
            let query: SQLQueryString = "UPDATE outbox SET " + assignments
                + " WHERE id = \(bind: message.id) AND status = 'sending' AND lease_token = \(bind: token) RETURNING id"
            return try await db.raw(query).first() != nil
        }
    }

    public func outboxMessage(id: String) async throws -> OutboxMessage? {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM outbox WHERE id = \(bind: id)").first().map(Self.outboxMessage)
        }
    }

    public func outboxMessages(recipient: String?, limit: Int) async throws -> [OutboxMessage] {
        try await database.withDatabase { db in
            let filter: SQLQueryString = recipient.map { "WHERE LOWER(recipient) = \(bind: $0.lowercased())" } ?? ""
            return try await db.raw("SELECT * FROM outbox " + filter + " ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)")
                .all().map(Self.outboxMessage)
        }
    }

    public func purgeOutbox(deliveredBefore: Int64, failedBefore: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                DELETE FROM outbox WHERE (status = 'delivered' AND finished_at < \(bind: deliveredBefore))
                    OR (status = 'failed' AND finished_at < \(bind: failedBefore))
                """).run()
        }
    }

    static func outboxMessage(_ row: any SQLRow) throws -> OutboxMessage {
        var message = OutboxMessage(
            id: try row.string("id"), sender: try row.string("sender"),
            message: MailMessage(to: try row.string("recipient"), subject: try row.string("subject"), text: try row.string("text_body"),
                                 html: try row.optionalString("html_body"), language: try row.string("language"),
                                 metadata: try row.json("metadata", as: [String: String].self),
                                 expiresAt: try row.optionalInt("expires_at")),
            mime: try row.string("mime"), createdAt: try row.int("created_at"))
        message.status = OutboxStatus(rawValue: try row.string("status")) ?? .failed
        message.attempts = Int(try row.int("attempts"))
        message.nextAttemptAt = try row.int("next_attempt_at")
        message.lastError = try row.optionalString("last_error")
        message.finishedAt = try row.optionalInt("finished_at")
        message.leaseToken = try row.optionalString("lease_token")
        return message
    }
}
