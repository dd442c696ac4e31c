import SQLKit
import TesseraDomain

extension SQLStore: UsedOnceStore {
    public func recordFirstUse(kind: String, idHash: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO used_once (kind, id_hash, expires_at) VALUES (\(bind: kind), \(bind: idHash), \(bind: expiresAt))
                ON CONFLICT (kind, id_hash) DO NOTHING RETURNING id_hash
                """).first() != nil
        }
    }
}
