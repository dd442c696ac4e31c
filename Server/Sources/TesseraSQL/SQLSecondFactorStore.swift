import SQLKit
import TesseraDomain

extension SQLStore: SecondFactorStore {
    public func insertPendingTOTP(_ factor: TOTPFactor) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("DELETE FROM totp_factors WHERE user_id = \(bind: factor.userID) AND confirmed_at IS NULL").run()
            return try await db.raw("""
                INSERT INTO totp_factors (user_id, sealed_secret, created_at) VALUES (\(bind: factor.userID), \(bind: factor.sealedSecret),
                    \(bind: factor.createdAt))
                ON CONFLICT (user_id) DO NOTHING RETURNING user_id
                """).first() != nil
        }
    }

    public func totpFactor(userID: String) async throws -> TOTPFactor? {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM totp_factors WHERE user_id = \(bind: userID)").first().map { row in
                TOTPFactor(userID: try row.string("user_id"), sealedSecret: try row.string("sealed_secret"), createdAt: try row.int("created_at"),
                           confirmedAt: try row.optionalInt("confirmed_at"), lastStep: try row.optionalInt("last_step"))
            }
        }
    }

    public func confirmTOTP(userID: String, step: Int64, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE totp_factors SET confirmed_at = \(bind: now), last_step = \(bind: step)
                WHERE user_id = \(bind: userID) AND confirmed_at IS NULL RETURNING user_id
                """).first() != nil
        }
    }

    public func recordTOTPStep(userID: String, step: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE totp_factors SET last_step = \(bind: step)
                WHERE user_id = \(bind: userID) AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < \(bind: step))
                RETURNING user_id
                """).first() != nil
        }
    }

    public func deleteTOTP(userID: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM totp_factors WHERE user_id = \(bind: userID)").run()
        }
    }

    public func replaceRecoveryCodes(userID: String, hashes: [String], now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)").run()
            for hash in hashes {
                try await db.raw("""
                    INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (\(bind: userID), \(bind: hash), \(bind: now))
                    """).run()
            }
        }
    }

    public func useRecoveryCode(userID: String, hash: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE recovery_codes SET used_at = \(bind: now)
                WHERE user_id = \(bind: userID) AND code_hash = \(bind: hash) AND used_at IS NULL RETURNING user_id
                """).first() != nil
        }
    }

    public func recoveryCodesLeft(userID: String) async throws -> Int {
        try await database.withDatabase { db in
            let row = try await db.raw("SELECT COUNT(*) AS left_count FROM recovery_codes WHERE user_id = \(bind: userID) AND used_at IS NULL").first()
            return Int(try row?.int("left_count") ?? 0)
        }
    }
}
