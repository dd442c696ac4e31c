import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: NativeFlowStore {
    public func insertFlow(_ flow: NativeFlow, tokenHash: String) async throws {
        let state = try jsonText(flow)
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO native_flows (id, token_hash, kind, client_id, state, created_at, expires_at)
                VALUES (\(bind: flow.id), \(bind: tokenHash), \(bind: flow.kind.rawValue), \(bind: flow.clientID), \(bind: state),
                    \(bind: flow.createdAt), \(bind: flow.expiresAt))
                """).run()
        }
    }

    public func flow(tokenHash: String) async throws -> NativeFlow? {
        try await database.withDatabase { db in
            try await db.raw("SELECT state FROM native_flows WHERE token_hash = \(bind: tokenHash)").first()
                .map { try $0.json("state", as: NativeFlow.self) }
        }
    }

    public func advanceFlow(_ flow: NativeFlow, from: String, to: String?) async throws -> Bool {
        let state = try jsonText(flow)
        return try await database.withDatabase { db in
            try await Self.advance(flow, state: state, from: from, to: to, on: db)
        }
    }

    static func advance(_ flow: NativeFlow, state: String, from: String, to: String?, on db: any SQLDatabase) async throws -> Bool {
        if let to {
            return try await db.raw("""
                UPDATE native_flows SET token_hash = \(bind: to), state = \(bind: state), expires_at = \(bind: flow.expiresAt)
                WHERE id = \(bind: flow.id) AND token_hash = \(bind: from) RETURNING id
                """).first() != nil
        }
        return try await db.raw("DELETE FROM native_flows WHERE id = \(bind: flow.id) AND token_hash = \(bind: from) RETURNING id")
            .first() != nil
    }

    public func reserveCodeAttempt(flowID: String, tokenHash: String, limit: Int) async throws -> Int? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE native_flows SET code_attempts = code_attempts + 1
                WHERE id = \(bind: flowID) AND token_hash = \(bind: tokenHash) AND code_attempts < \(bind: limit) RETURNING code_attempts
                """).first().map { Int(try $0.int("code_attempts")) }
        }
    }

    public func resetCodeAttempts(flowID: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE native_flows SET code_attempts = 0 WHERE id = \(bind: flowID)").run()
        }
    }

    public func recordCodeSent(email: String, clientAddress: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO code_sends (id, email, client_address, sent_at)
                VALUES (\(bind: SecureRandom.token(bytes: 12)), \(bind: email), \(bind: clientAddress), \(bind: now))
                """).run()
        }
    }

    public func codesSent(email: String, clientAddress: String, since: Int64) async throws -> (toEmail: Int, fromAddress: Int) {
        try await database.withDatabase { db in
            let row = try await db.raw("""
                SELECT
                    (SELECT COUNT(*) FROM code_sends WHERE email = \(bind: email) AND sent_at >= \(bind: since)) AS to_email,
                    (SELECT COUNT(*) FROM code_sends WHERE client_address = \(bind: clientAddress) AND sent_at >= \(bind: since)) AS from_address
                """).first()
            return (Int(try row?.int("to_email") ?? 0), Int(try row?.int("from_address") ?? 0))
        }
    }
}
