import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: KeyStore {
    public func signingKeys() async throws -> [StoredSigningKey] {
        try await database.withDatabase { db in try await Self.signingKeys(on: db) }
    }

    static func signingKeys(on db: any SQLDatabase) async throws -> [StoredSigningKey] {
        try await db.raw("SELECT * FROM signing_keys ORDER BY created_at, kid").all().map { row in
            guard let algorithm = JWSAlgorithm(rawValue: try row.string("algorithm")),
                  let state = KeyState(rawValue: try row.string("state")) else {
                throw StoreError.notFound("a known algorithm or state for key \(try row.string("kid"))")
            }
            return StoredSigningKey(kid: try row.string("kid"), algorithm: algorithm, state: state,
                                    privateKey: try row.string("private_key"), createdAt: try row.int("created_at"),
                                    activatedAt: try row.optionalInt("activated_at"), retiredAt: try row.optionalInt("retired_at"))
        }
    }

    package static func insert(_ key: StoredSigningKey, on db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO signing_keys (kid, algorithm, state, private_key, created_at, activated_at, retired_at)
            VALUES (\(bind: key.kid), \(bind: key.algorithm.rawValue), \(bind: key.state.rawValue), \(bind: key.privateKey),
                \(bind: key.createdAt), \(bind: key.activatedAt), \(bind: key.retiredAt))
            """).run()
    }

    public func ensureKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws {
        try await database.transaction { db in
            let keys = try await Self.signingKeys(on: db)
            if !keys.contains(where: { $0.state == .current }) {
                var key = try generate()
                key.state = .current
                key.activatedAt = now
                try await Self.insert(key, on: db)
            }
            if !keys.contains(where: { $0.state == .next }) {
                var key = try generate()
                key.state = .next
                try await Self.insert(key, on: db)
            }
        }
    }

    public func rotateKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws -> String {
        try await database.transaction { db in
            let keys = try await Self.signingKeys(on: db)
            guard let next = keys.last(where: { $0.state == .next }) else {
                throw StoreError.notFound("a next signing key (start the server once first)")
            }
            try await db.raw("UPDATE signing_keys SET state = 'retired', retired_at = \(bind: now) WHERE state = 'current'").run()
            try await db.raw("UPDATE signing_keys SET state = 'current', activated_at = \(bind: now) WHERE kid = \(bind: next.kid)").run()
            var fresh = try generate()
            fresh.state = .next
            try await Self.insert(fresh, on: db)
            return next.kid
        }
    }

    public func replacePrivateKey(kid: String, old: String, new: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE signing_keys SET private_key = \(bind: new) WHERE kid = \(bind: kid) AND private_key = \(bind: old) RETURNING kid
                """).first() != nil
        }
    }

    public func setting(_ name: String, orCreate make: @Sendable () -> String) async throws -> String {
        try await database.withDatabase { db in
            if let value = try await db.raw("SELECT value FROM settings WHERE name = \(bind: name)").first()?.string("value") {
                return value
            }
            // Nodes starting together each propose a value; the first written is everyone's.
            try await db.raw("INSERT INTO settings (name, value) VALUES (\(bind: name), \(bind: make())) ON CONFLICT (name) DO NOTHING").run()
            guard let value = try await db.raw("SELECT value FROM settings WHERE name = \(bind: name)").first()?.string("value") else {
                throw StoreError.notFound("the setting \(name)")
            }
            return value
        }
    }

    public func replaceSetting(_ name: String, old: String, new: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE settings SET value = \(bind: new) WHERE name = \(bind: name) AND value = \(bind: old) RETURNING name
                """).first() != nil
        }
    }
}
