import Foundation
import SQLKit
import TesseraCore

/// Where a signing key is in its life: published first as `next`, then signing as
/// `current`, then `retired` (still published for a grace period so tokens verify).
public enum KeyState: String, Sendable {
    case next, current, retired
}

/// A signing key as stored: the private key is sealed when a master key is configured.
public struct StoredSigningKey: Sendable, Equatable {
    public var kid: String
    public var algorithm: JWSAlgorithm
    public var state: KeyState
    /// Base64 of the private key, or `enc:v1:` + base64 of an AES-GCM box.
    public var privateKey: String
    public var createdAt: Int64
    public var activatedAt: Int64?
    public var retiredAt: Int64?
}

/// Signing keys and server-wide settings.
public protocol KeyStore: Sendable {
    func signingKeys() async throws -> [StoredSigningKey]
    /// Adds keys so that one `current` and one `next` key exist; no-op when they do.
    func ensureKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws
    /// Retires the current key, promotes `next`, adds a new `next`. Returns the new current kid.
    func rotateKeys(now: Int64, generate: @Sendable () throws -> StoredSigningKey) async throws -> String
    /// Replaces a key's stored material (`old`, as read) with `new`, the same key sealed;
    /// false when another node changed it first.
    func replacePrivateKey(kid: String, old: String, new: String) async throws -> Bool
    /// Reads a setting, creating it with `make()` the first time.
    func setting(_ name: String, orCreate make: @Sendable () -> String) async throws -> String
}

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

    static func insert(_ key: StoredSigningKey, on db: any SQLDatabase) async throws {
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
        try await database.transaction { db in
            if let value = try await db.raw("SELECT value FROM settings WHERE name = \(bind: name)").first()?.string("value") {
                return value
            }
            let value = make()
            try await db.raw("INSERT INTO settings (name, value) VALUES (\(bind: name), \(bind: value))").run()
            return value
        }
    }
}
