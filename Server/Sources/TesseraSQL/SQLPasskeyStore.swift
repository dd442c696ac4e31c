import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: PasskeyStore {
    public func insertPasskey(_ passkey: Passkey) async throws {
        do {
            try await database.withDatabase { db in
                try await db.raw("""
                    INSERT INTO passkeys (id, user_id, public_key, algorithm, sign_count, transports, backup_eligible, backed_up, aaguid,
                        attestation_format, name, created_at, last_used_at, suspended_at)
                    VALUES (\(bind: passkey.id), \(bind: passkey.userID), \(bind: Base64URL.encode(passkey.publicKey)),
                        \(bind: passkey.algorithm), \(bind: passkey.signCount), \(bind: passkey.transports.joined(separator: " ")),
                        \(bind: passkey.backupEligible), \(bind: passkey.backedUp), \(bind: passkey.aaguid), \(bind: passkey.attestationFormat),
                        \(bind: passkey.name), \(bind: passkey.createdAt), \(bind: passkey.lastUsedAt), \(bind: passkey.suspendedAt))
                    """).run()
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a passkey with this credential id")
        }
    }

    public func passkey(id: String) async throws -> Passkey? {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM passkeys WHERE id = \(bind: id)").first().map(Self.passkey)
        }
    }

    public func passkeys(userID: String) async throws -> [Passkey] {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM passkeys WHERE user_id = \(bind: userID) ORDER BY created_at, id").all().map(Self.passkey)
        }
    }

    public func recordPasskeyUse(id: String, expectedSignCount: Int64, signCount: Int64, backedUp: Bool, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE passkeys SET sign_count = \(bind: signCount), backed_up = \(bind: backedUp), last_used_at = \(bind: now)
                WHERE id = \(bind: id) AND sign_count = \(bind: expectedSignCount) AND suspended_at IS NULL RETURNING id
                """).first() != nil
        }
    }

    public func suspendPasskey(id: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE passkeys SET suspended_at = \(bind: now) WHERE id = \(bind: id) AND suspended_at IS NULL").run()
        }
    }

    public func renamePasskey(id: String, userID: String, name: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE passkeys SET name = \(bind: name) WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id
                """).first() != nil
        }
    }

    public func deletePasskey(id: String, userID: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM passkeys WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id").first() != nil
        }
    }

    public func insertPasskeyChallenge(_ challenge: PasskeyChallenge) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO passkey_challenges (hash, purpose, user_id, binding, expires_at)
                VALUES (\(bind: challenge.hash), \(bind: challenge.purpose.rawValue), \(bind: challenge.userID), \(bind: challenge.binding),
                    \(bind: challenge.expiresAt))
                """).run()
        }
    }

    public func takePasskeyChallenge(hash: String, now: Int64) async throws -> PasskeyChallenge? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("DELETE FROM passkey_challenges WHERE hash = \(bind: hash) RETURNING *").first(),
                  let purpose = PasskeyChallenge.Purpose(rawValue: try row.string("purpose")) else { return nil }
            let challenge = PasskeyChallenge(hash: try row.string("hash"), purpose: purpose, userID: try row.optionalString("user_id"),
                                             binding: try row.optionalString("binding"), expiresAt: try row.int("expires_at"))
            return challenge.expiresAt > now ? challenge : nil
        }
    }

    static func passkey(_ row: any SQLRow) throws -> Passkey {
        Passkey(id: try row.string("id"), userID: try row.string("user_id"),
                publicKey: Base64URL.decode(try row.string("public_key")) ?? Data(), algorithm: Int(try row.int("algorithm")),
                signCount: try row.int("sign_count"),
                transports: try row.string("transports").split(separator: " ").map(String.init),
                backupEligible: try row.bool("backup_eligible"), backedUp: try row.bool("backed_up"), aaguid: try row.string("aaguid"),
                attestationFormat: try row.string("attestation_format"), name: try row.string("name"), createdAt: try row.int("created_at"),
                lastUsedAt: try row.optionalInt("last_used_at"), suspendedAt: try row.optionalInt("suspended_at"))
    }
}
