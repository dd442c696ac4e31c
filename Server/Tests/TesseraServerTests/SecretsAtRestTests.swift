import Foundation
import Logging
import Testing
import TesseraCore
import TesseraServer
import TesseraNode
import TesseraDomain
import TesseraSQL

@Suite("Security: secrets at rest")
struct SecretsAtRestTests {
    /// A database file in a fresh folder, removed afterwards.
    static func withDatabase(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-secrets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("tessera.sqlite").path)
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("without a master key one is generated beside the database (mode 0600) and seals the signing keys")
    func generatedKeyFile() async throws {
        try await Self.withDatabase { path in
            let keyFile = path.replacingOccurrences(of: ".sqlite", with: ".master-key")
            var kid = ""
            try await withProvider(configure: { $0.database = .sqliteFile(path) }) { provider async throws in
                #expect(try await provider.store.signingKeys().allSatisfy { $0.privateKey.hasPrefix("enc:v1:") })
                kid = try JWT(parsing: try provider.keys.sign([:])).kid ?? ""
            }
            #expect(try Self.mode(keyFile) == 0o600)
            let text = try String(contentsOfFile: keyFile, encoding: .utf8)
            #expect(Data(base64Encoded: text.trimmingCharacters(in: .newlines))?.count == 32)
            try await withProvider(configure: { $0.database = .sqliteFile(path) }) { provider async throws in
                #expect(try JWT(parsing: try provider.keys.sign([:])).kid == kid, "the next start opens the same keys")
            }
        }
    }

    @Test("a key file other users may read, or one that holds another key, stops the start with what to do")
    func badKeyFiles() async throws {
        try await Self.withDatabase { path in
            let keyFile = path.replacingOccurrences(of: ".sqlite", with: ".master-key")
            try await withProvider(configure: { $0.database = .sqliteFile(path) }) { _ in }
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
            await #expect { try await withProvider(configure: { $0.database = .sqliteFile(path) }) { _ in } } throws: { error in
                "\(error)".contains("chmod 600 \(keyFile)")
            }
            try Data(SecureRandom.bytes(32)).base64EncodedString().write(toFile: keyFile, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
            await #expect { try await withProvider(configure: { $0.database = .sqliteFile(path) }) { _ in } } throws: { error in
                "\(error)".contains("does not open with the master key from \(keyFile)")
            }
        }
    }

    @Test("TESSERA_MASTER_KEY, when set, is the key, and no file is written")
    func keyFromSetting() async throws {
        try await Self.withDatabase { path in
            let master = Data(SecureRandom.bytes(32)).base64EncodedString()
            try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { _ in }
            #expect(!FileManager.default.fileExists(atPath: path.replacingOccurrences(of: ".sqlite", with: ".master-key")))
            let configured = try ConfigurationLoader(flags: [:], environment: ["TESSERA_MASTER_KEY_FILE": "/etc/tessera/key"]).configuration()
            #expect(configured.masterKeyFile == "/etc/tessera/key")
        }
    }

    @Test("signing keys and upstream refresh tokens a database kept in clear are sealed at the next start")
    func clearSecretsAreSealed() async throws {
        try await Self.withDatabase { path in
            let master = Data(SecureRandom.bytes(32)).base64EncodedString()
            // A database as an older server left it: a clear signing key and a clear upstream token.
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let database = try await SQLiteDatabase.open(.sqliteFile(path), logger: logger)
            let store = SQLStore(database: database)
            try await store.migrate()
            let legacy = try JWSSigningKey.generate(.es256, kid: "legacy")
            try await database.withDatabase { db in
                try await SQLStore.insert(StoredSigningKey(kid: "legacy", algorithm: .es256, state: .current,
                                                           privateKey: legacy.privateKeyData.base64EncodedString(), createdAt: 1, activatedAt: 1), on: db)
            }
            let user = User(id: "u1", email: "alice@example.com", emailVerified: true, passwordHash: nil, profile: [:], createdAt: 1, updatedAt: 1)
            try await store.insert(user)
            _ = try await store.link(UpstreamIdentity(providerID: "corp", subject: "s1", userID: "u1", email: "alice@example.com",
                                                      proven: true, refreshToken: "upstream-refresh-token-in-clear", clientID: "tessera",
                                                      createdAt: 1, lastUsedAt: 1))
            try await database.close()

            try await withProvider(configure: { $0.database = .sqliteFile(path); $0.masterKey = master }) { provider async throws in
                let keys = try await provider.store.signingKeys()
                #expect(keys.allSatisfy { $0.privateKey.hasPrefix("enc:v1:") }, "\(keys.map { $0.privateKey.prefix(7) })")
                #expect(try JWT(parsing: try provider.keys.sign([:])).kid == "legacy", "the same key signs, now sealed")
                let stored = try #require(try await provider.store.identity(providerID: "corp", subject: "s1")?.refreshToken)
                #expect(stored.hasPrefix("enc:v1:") && !stored.contains("in-clear"))
                #expect(try provider.federation.open(stored) == "upstream-refresh-token-in-clear")
                #expect(try await provider.store.identitiesWithClearRefreshTokens().isEmpty)
            }
        }
    }
}
